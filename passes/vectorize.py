"""dq-vectorize: the kernels' loops vectorized by upstream's transform dialect, with non-temporal
stores in the `dq.nontemporal` entry points (dq-nontemporal-entries).

Runs on the bufferized kernels, on each `linalg.generic` writing a result (see `results`) that it
can vectorize (see `plan`): in a function tagged `dq.nontemporal`, every such generic, its stores
non-temporal; elsewhere those LLVM's loop vectorizer handles badly (bf16 and f16 outputs, whose
rounding it scalarizes; packed sub-byte data read in place, whose innermost loop is the 2 or 4
fields of a byte; blocks along the columns: see `_wanted_plain`), and those with an operand every
row reads at the same index (a per-axis scale along the columns), in tiles of ROWS rows that load
and convert it once (`_row_tile`, which says why LLVM cannot do this). A generic writing a temporary
(a packed zero point unpacked) is vectorized when it reads packed data, with cached stores. Other
generics are left to convert-linalg-to-loops, dq-strip-mine-blocks and LLVM.

The schedule (typed builders, applied with `transform.interpreter.apply_named_sequence`; the
schedule lives in its own module, never in the payload):

    [tiles of R = ROWS rows (`_row_tile`): split along the columns at the last whole tile, then
     tile_using_for [.., R, 0] and loop.peel: the partial columns and the partial rows stay one
     generic each (left to LLVM)]
    tile_using_for [1, ..., 1, T(, 0)]        rows one by one (or by R, above), columns by T (a
                                              packed byte's fields whole)
    loop.peel (column loop)                   whole tiles, then one partial tile (left to LLVM)
    apply_patterns {for-loop, tiling canonicalization, canonicalization}   static 1 x .. x T tiles
    [python] block maps                       `d floordiv B` over a tile inside one block -> 0
    structured.vectorize (whole tiles)
    apply_patterns {rank-reducing subviews, cast away leading unit dims, drop unit dims, transfer
                    permutations, canonicalization}
    [python] rows unrolled                    a tile of R rows as R rows of 1-D vectors (`unroll_rows`)
    [python] flatten                          a tile of bytes x fields: vector<T x k> computed as
                                              vector<T*k> in the elements' order, stored contiguous
    [python] x86 rewrites (vectorize_x86.py, `X86.of(module)`: dq-target-features' tags):
      tables (dq.avx512bw)                    a 4-bit code's 16 values once per tile, then a permute
      bf16 rounding (dq.avx512bw)             one word permute; vcvtne2ps2bf16 (dq.avx512bf16)
                                              for tiles without NaN or subnormal values
    [python] lookups                          a 4-bit float's decode -> a table lookup
    apply_patterns {transfers unrolled to rank 1 (a tile of rows `unroll_rows` left whole), lower
                    transfers to rank 1, canonicalization}
    [python] fields cut from bytes            a packed tile's fields from its bytes, interleaved and
                                              widened once; on dq.avx512vbmi one vpmultishiftqb and
                                              one shift per 16 i32 lanes (`fields_in_bytes`)
    [python] sign extension in bytes          a 4-bit field sign-extended in its byte, then widened
                                              (`sign_extend_in_bytes`)
    annotate vector.store "nontemporal" = true [, "alignment" = 16]
    convert_to_loops (partial tiles, and      loops annotated LEAN_ANNOTATION: LLVM vectorizes them
      generics tagged LEAN_LOOPS)             without interleaving or run-time unrolling

T is 64 bytes of output (one cache line), or, when scales are blocked along the columns, a divisor
of the block (the block's scale is then loaded once per tile), at most 512 bytes of output; for
packed data 256 bytes of output (PACKED_TILE_BYTES: its fields cut from 32-64 bytes at once, and a
4-bit float's table built once per 4 vectors), or a divisor of the block up to that. With
non-temporal stores every tile is at most one line (NT_MAX_TILE_BYTES), but 4 lines for f16
values taken from a per-tile table (NT_TABLE_TILE_BYTES, `_nt_table_tile`); a block that no
tile of MIN_TILE_BYTES up to that divides (a prime block of 37 values) is left to LLVM. In a
`dq.nontemporal` function a generic is versioned first:

    scf.if (out % 16 == 0 and row bytes % 16 == 0) { generic (stores declared 16-byte aligned) }
    else { generic (stores with the element's alignment) }

and, for a bf16 output (`_line_eligible`), the 16-byte-aligned generic once more (`_lines`):

    scf.if (row bytes % 64 == 0) { generic on the columns before the first line boundary (LLVM);
                                   generic on the rest (stores declared 64-byte aligned) }
    else { generic (16-byte aligned) }

An x86 CPU without AVX-512 stores a 16-byte-aligned non-temporal vector as `vmovntps xmm`, an
element-aligned one in 8-byte pieces (SSE4A `movntsd`, or `movnti`); both write around the cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from mlir import ir
from mlir.dialects import arith, memref, scf, transform, vector
from mlir.dialects.transform import interpreter, loop, structured
from mlir.dialects.transform import vector as tvector

from dequant.dialect.semantics import CODE, FIELD_CODE, LOOKUP
from dequant.dialect.walking import walk

from . import Pass
from .fold_nibbles import fields_in_bytes, sign_extend_in_bytes
from .nontemporal_entries import NONTEMPORAL
from .queries import MEMREF_VIEWS, constant_int, element_bits, enclosing, indexing_maps, made_by, ops_named, splat_int, tagged_source, terminator
from .target_features import TAGS
from .vectorize_x86 import TABLE_MIN_CHUNKS, X86

TARGET = "dq.vector_target"
MODE = "dq.vector_mode"
TILE = "dq.vector_tile"
SPLIT = "dq.vector_split"  # the payload op computing a row-tiled generic's split point (`_tile`)
WHOLE_COLUMNS = "dq.vector_whole_columns"  # the first part of that split, and the tiles cut from it
# A generic that runs only on the edges of a shape, or not at all when a hint holds: a partial
# tile this pass leaves, or dq-to-linalg's element-by-element read of a packed operand hinted
# "whole". This pass converts it to loops annotated LEAN_ANNOTATION: LLVM's loop vectorizer
# still vectorizes them, without interleaving or unrolling a remainder by a run-time trip count:
# such code is compiled at every kernel's first call (docs/performance.md, "Compile time")
LEAN_LOOPS = "dq.lean_loops"
LEAN_ANNOTATION = "#llvm.loop_annotation<interleave = <count = 1>, unroll = <runtimeDisable = true>>"
LINE = 64  # bytes of output per tile without blocks: one cache line
MAX_TILE_BYTES = 512  # a blocked tile's output at most (vector<128xf32>), with cached stores
# with non-temporal stores at most one line: a 512-byte tile's 16-byte stores, interleaved over 8
# lines by LLVM's scheduler, were intermittently much slower (docs/performance.md#non-temporal-tiles-of-one-line)
NT_MAX_TILE_BYTES = LINE
# a packed tile's output at most, with cached stores: faster than one line in every packed case
# (docs/performance.md#longer-packed-tiles)
PACKED_TILE_BYTES = 256
MIN_TILE_BYTES = 16  # smaller tiles are left to LLVM
INNER_BYTES = LINE  # a short static last dim the body indexes (a byte's fields) stays whole in a tile

PLAIN, NT, NT16, NT64 = "plain", "nt", "nt16", "nt64"
# A bf16 generic versioned on its scales (`_on_plain_scales`): this copy runs only when every scale
# is zero or a normal finite value, so its products are never NaN or subnormal and its tiles round
# by vcvtne2ps2bf16 untested (vectorize_x86.bf16_rounding)
PLAIN_SCALES = "dq.plain_scales"
ROWS = 4  # rows per tile when an operand is shared by the rows (`_row_tile`)
LLVM_BLOCKS_FROM = 64  # blocks along the columns this long or longer: LLVM's on the cached-store path
NT_TABLE_TILE_BYTES = TABLE_MIN_CHUNKS * LINE  # non-temporal tiles of f16 values from a per-tile table (`_nt_table_tile`)


@dataclass
class Plan:
    generic: object
    loops: int
    vdim: int  # the loop dim tiled by `tile`
    inner: int  # static size of the last dim kept whole (1: none)
    tile: int
    elem_bytes: int
    columns: int | None = None  # the static size of the tiled dim (None: dynamic)
    block: int = 0  # the block (a multiple of it) operands are read in along the tiled dim; 0: none
    rows: int = 1  # the loop before vdim tiled by this many (operands shared by the rows)

    @property
    def split(self) -> bool:
        """Whether `_tile` splits the generic along the columns first: tiles of rows, and columns
        not known to be a multiple of the tile."""
        return self.rows > 1 and (self.columns is None or self.columns % self.tile != 0)

    @property
    def tile_bytes(self) -> int:
        return self.tile * self.inner * self.elem_bytes

    def sizes(self) -> list:
        s = [1] * self.loops
        s[self.vdim] = self.tile
        if self.inner > 1:
            s[-1] = 0
        return s


def _output(g) -> ir.Value:
    """The buffer a bufferized generic `g` writes: its one output, its last operand."""
    return g.operands[len(g.operands) - 1]


def _identity_layout(t: ir.MemRefType) -> bool:
    layout = t.layout
    if not isinstance(layout, ir.AffineMapAttr):
        return False
    m = layout.value
    return m == ir.AffineMap.get_identity(m.n_dims)


def _linear(e) -> dict | None:
    """{dim: coefficient} of Σ c·d (c > 0), or None for any other expression."""
    if isinstance(e, ir.AffineDimExpr):
        return {ir.AffineDimExpr(e).position: 1}
    if isinstance(e, ir.AffineAddExpr):
        a, b = _linear(e.lhs), _linear(e.rhs)
        if a is None or b is None:
            return None
        return {d: a.get(d, 0) + b.get(d, 0) for d in set(a) | set(b)}
    if isinstance(e, ir.AffineMulExpr):
        for x, c in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(c, ir.AffineConstantExpr) and ir.AffineConstantExpr(c).value > 0:
                inner = _linear(x)
                return None if inner is None else {d: k * ir.AffineConstantExpr(c).value for d, k in inner.items()}
    return None


def _block_constraint(e, vdim: int, last: int, inner: int):
    """What a map result asks of the column tile T: None (nothing: a dim, a constant, or an index
    only the dims tiled by 1 move), a number T must divide (`Σ c·d floordiv B` along the columns:
    a tile then never crosses a block), or False (not one point or one block per tile)."""
    if isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)):
        return None
    wide = {vdim} | ({last} if inner > 1 else set())
    lin = _linear(e)
    if lin is not None:  # Σ c·d: one point per tile if only dims tiled by 1 take part
        return None if not wide & set(lin) else False
    if not isinstance(e, ir.AffineFloorDivExpr) or not isinstance(e.rhs, ir.AffineConstantExpr):
        return False
    b = ir.AffineConstantExpr(e.rhs).value
    lin = _linear(e.lhs)
    if lin is None or b <= 0:
        return False
    if not wide & set(lin):
        return None  # dims tiled by 1 only: one point per tile
    if set(lin) - wide:
        return False  # a row's offset could move a tile across a block boundary
    c_v, c_i = lin.get(vdim, 0), lin.get(last, 0) if inner > 1 else 0
    if not c_v:  # the fields of one byte: in one block if they span less than it
        return None if c_i * (inner - 1) < b else False
    if c_i and c_v != c_i * inner:
        return False
    return b // c_v if b % c_v == 0 else False  # the block index moves by c_v / b per column


def plan(g) -> Plan | None:
    """How to tile and vectorize generic `g`, or None when it is left to LLVM."""
    maps = indexing_maps(g)
    loops = maps[0].n_dims if maps else 0
    if loops == 0 or len(g.regions[0].blocks) != 1:
        return None
    out = _output(g)
    if not isinstance(out.type, ir.MemRefType) or len(list(g.results)):
        return None
    ot = ir.MemRefType(out.type)
    if maps[-1] != ir.AffineMap.get_identity(loops) or not _identity_layout(ot):
        return None
    bits = element_bits(ot.element_type)
    if bits is None or bits % 8:
        return None
    e = bits // 8
    indexed = set()
    for op in g.regions[0].blocks[0].operations:
        name = op.operation.name
        if not (name.startswith("arith.") or name in ("linalg.index", "linalg.yield")):
            return None  # loads at computed indices (gathers), calls, regions
        if name == "linalg.index":
            indexed.add(ir.IntegerAttr(op.attributes["dim"]).value)
    for v in g.operands:
        if not isinstance(v.type, ir.MemRefType):
            return None
    inner = 1
    last = loops - 1
    if loops >= 2 and last in indexed and not ot.is_dynamic_dim(last) and ot.shape[last] * e < INNER_BYTES:
        inner = ot.shape[last]  # the fields of a packed byte (dq-to-linalg's Split): whole in a tile
    vdim = last - 1 if inner > 1 else last
    if any(len(m.results) > loops for m in maps):
        return None  # e.g. a rank-3 scale read at (0, 0, 0) by 2 loops: not a projected permutation, which the vectorizer needs
    divide = 0
    for m in maps[:-1]:
        for r in m.results:
            c = _block_constraint(r, vdim, last, inner)
            if c is False:
                return None
            if c is not None:
                divide = math.gcd(divide, c)
    row = inner * e
    columns = None if ot.is_dynamic_dim(vdim) else ot.shape[vdim]
    longest = (PACKED_TILE_BYTES if inner > 1 else MAX_TILE_BYTES if divide else LINE) // row
    while inner > 1 and columns is not None and columns < longest and longest * row > LINE:
        longest //= 2  # a packed row shorter than the long tile: a shorter one (at least a line)
    tile = _divisor_at_most(longest, divide) if divide else max(1, longest)
    if tile * row < MIN_TILE_BYTES:
        return None
    if columns is not None and columns < tile:
        return None  # no whole tile
    return Plan(g, loops, vdim, inner, tile, e, columns, divide)


# --- python steps -------------------------------------------------------------------------------


def _version(p: Plan) -> tuple:
    """scf.if (16-byte aligned output rows) { generic } else { generic' }: (then, else) generics."""
    g = p.generic
    out = _output(g)
    index = ir.IndexType.get()
    with ir.InsertionPoint(g), g.location:
        c = lambda v: arith.constant(index, v)  # noqa: E731
        pointer = memref.extract_aligned_pointer_as_index(out)
        ok = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(pointer, c(16)), c(0))
        if p.loops > 1:
            row = c(p.elem_bytes)
            for d in range(p.vdim, p.loops):
                row = arith.muli(row, memref.dim(out, c(d)))
            ok = arith.andi(ok, arith.cmpi(arith.CmpIPredicate.eq, arith.remui(row, c(16)), c(0)))
    return _branches(g, ok)


def _branches(g, ok: ir.Value) -> tuple:
    """scf.if (ok) { g } else { a clone of g }, built where g was: (then, else) generics."""
    with ir.InsertionPoint(g), g.location:
        branch = scf.IfOp(ok, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            then_end = scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            else_end = scf.YieldOp([])
    other = g.clone(ir.InsertionPoint(else_end))
    g.move_before(then_end)
    return g, other


def _line_eligible(p: Plan) -> bool:
    """Whether generic `p` is split at a column into a prefix and whole lines (`_lines`): a bf16
    output (its compute-bound kernel runs faster with one 64-byte store per line, where f32 and f16
    outputs do not: docs/performance.md#bf16-outputs, "Whole-line stores"), element reads
    along the columns (no blocks, no packed fields), every operand a plain buffer, tiles of whole
    lines."""
    out = ir.MemRefType(_output(p.generic).type).element_type
    if not isinstance(out, ir.BF16Type) or p.inner > 1 or p.block or p.tile_bytes % LINE:
        return False
    if not all(_identity_layout(ir.MemRefType(v.type)) for v in p.generic.operands):
        return False
    return all(isinstance(e, ir.AffineDimExpr) for m in indexing_maps(p.generic) for e in m.results)


def _lines(p: Plan):
    """Inside the 16-byte-aligned version of `p`'s generic g (numpy's large arrays start 16 bytes
    past a cache line): scf.if (row bytes % 64 == 0) { g on the columns before the first line
    boundary; g on the rest } else { g }. The rest's rows all start on a line, so its tiles
    (whole lines) store with one 64-byte non-temporal store each, where 16-byte alignment took
    four 16-byte stores and three extracts per line. The prefix (fewer than one line of columns)
    is left to LLVM. Returns the generic on the rest."""
    g = p.generic
    out = _output(g)
    index = ir.IndexType.get()
    with ir.InsertionPoint(g), g.location:
        c = lambda v: arith.constant(index, v)  # noqa: E731
        n = memref.dim(out, c(p.vdim))
        whole = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(arith.muli(n, c(p.elem_bytes)), c(LINE)), c(0))
        pointer = memref.extract_aligned_pointer_as_index(out)
        skip = arith.divui(arith.remui(arith.subi(c(LINE), arith.remui(pointer, c(LINE))), c(LINE)), c(p.elem_bytes))
        skip = arith.minui(skip, n)
        branch = scf.IfOp(whole, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            end = scf.YieldOp([])
            with ir.InsertionPoint(end):
                for start, size in ((c(0), skip), (skip, arith.subi(n, skip))):
                    views = _columns(g, p.vdim, start, size)
                    part = g.clone(ir.InsertionPoint(end))
                    for k, v in enumerate(views):
                        part.operands[k] = v
        with ir.InsertionPoint(branch.else_block):
            else_end = scf.YieldOp([])
    g.move_before(else_end)
    return part


def _columns(g, vdim: int, start, size) -> list:
    """`g`'s operands viewed on loop dim `vdim`'s [start, start + size) (memref.subview of each
    operand read along it; the others as they are)."""
    index, dynamic = ir.IndexType.get(), ir.ShapedType.get_dynamic_size()
    views = []
    for v, m in zip(g.operands, indexing_maps(g)):
        at = [r for r, e in enumerate(m.results) if ir.AffineDimExpr(e).position == vdim]
        if not at:
            views.append(v)
            continue
        t = ir.MemRefType(v.type)
        offsets = [0] * t.rank
        sizes = [memref.dim(v, arith.constant(index, d)) for d in range(t.rank)]
        offsets[at[0]], sizes[at[0]] = start, size
        strides, _ = t.get_strides_and_offset()
        layout = ir.StridedLayoutAttr.get(dynamic, strides)
        view_type = ir.MemRefType.get([dynamic] * t.rank, t.element_type, layout)
        views.append(memref.subview(v, offsets, sizes, [1] * t.rank, result_type=view_type))
    return views


def _ranges(g) -> list:
    """Static loop ranges of a generic, from its operands' static dims (None where unknown)."""
    maps = indexing_maps(g)
    ranges = [None] * maps[0].n_dims
    for v, m in zip(g.operands, maps):
        t = ir.ShapedType(v.type)
        for p, r in enumerate(m.results):
            if isinstance(r, ir.AffineDimExpr) and not t.is_dynamic_dim(p):
                ranges[ir.AffineDimExpr(r).position] = t.shape[p]
    return ranges


def _bounds(e, ranges) -> tuple | None:
    lin = _linear(e)
    if lin is None or any(ranges[d] is None for d in lin):
        return None
    return 0, sum(k * (ranges[d] - 1) for d, k in lin.items())


def simplify_block_maps(g) -> None:
    """In a generic of static ranges (a whole tile), an index that is constant over the tile is
    its value at the tile's origin, 0: `Σ c·d` over dims of range 1, and `Σ c·d floordiv B` with
    Σ c·d < B (`plan` chose tiles that never cross a block boundary). The maps are then projected
    permutations with zeros, which the vectorizer takes (the block's scale: one load, broadcast)."""
    ranges = _ranges(g)
    new = []
    for m in indexing_maps(g):
        results = []
        for r in m.results:
            if not isinstance(r, (ir.AffineDimExpr, ir.AffineConstantExpr)):
                if isinstance(r, ir.AffineFloorDivExpr) and isinstance(r.rhs, ir.AffineConstantExpr):
                    b = _bounds(r.lhs, ranges)
                    if b is not None and b[1] < ir.AffineConstantExpr(r.rhs).value:
                        r = ir.AffineConstantExpr.get(0)
                elif _bounds(r, ranges) == (0, 0):
                    r = ir.AffineConstantExpr.get(0)
            results.append(r)
        new.append(ir.AffineMap.get(m.n_dims, m.n_symbols, results))
    g.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new])


class _Flat:
    """The 2-D vector values of a tile of bytes x fields as 1-D vectors in row-major order (the
    logical order of the elements): `of(v)` is v flattened. Each arith op is repeated on the
    flat operands; a byte broadcast to its fields becomes a shuffle repeating it; a scale or zero
    point read as a [bytes, fields] view is its flat load. The tile is then computed and stored
    in logical order: no interleave of results computed field by field."""

    def __init__(self):
        self.done: dict = {}

    def of(self, v: ir.Value) -> ir.Value | None:
        if v not in self.done:
            self.done[v] = self._make(v)
        return self.done[v]

    def _make(self, v: ir.Value):
        t = ir.VectorType(v.type)
        if t.rank != 2:
            return None
        flat = ir.VectorType.get([math.prod(t.shape)], t.element_type)
        op = v.owner
        if not isinstance(op, (ir.Operation, ir.OpView)):
            return None
        name = op.operation.name
        operands = list(op.operands)
        with ir.InsertionPoint(op), op.location:
            if name == "arith.constant":
                attr = op.attributes["value"]
                if isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
                    return arith.constant(flat, ir.DenseElementsAttr.get_splat(flat, ir.DenseElementsAttr(attr).get_splat_value()))
                return None
            if name.startswith("arith.") and all(isinstance(o.type, ir.VectorType) and ir.VectorType(o.type).shape == t.shape for o in operands):
                pieces = [self.of(o) for o in operands]
                if any(p is None for p in pieces):
                    return None
                attrs = {n: op.attributes[n] for n in op.attributes}
                return ir.Operation.create(name, results=[flat], operands=pieces, attributes=attrs).result
            if name == "vector.shape_cast" and ir.VectorType(operands[0].type).rank == 1:  # a flat 2-D tile (flatten_loads)
                return operands[0]
            rows, cols = t.shape
            if name == "vector.transpose" and _permutation(op) == [1, 0]:
                base = self.of(operands[0])  # [cols, rows]: element (i, j) is operand[j, i]
                return None if base is None else _shuffled(base, [j * rows + i for i in range(rows) for j in range(cols)])
            if name == "vector.broadcast":
                src = operands[0]
                if not isinstance(src.type, ir.VectorType):
                    return vector.broadcast(flat, src)
                st = ir.VectorType(src.type)
                shape = [1] * (2 - st.rank) + list(st.shape)  # aligned to the trailing dims
                base = src if st.rank == 1 else self.of(src)
                if base is None:
                    return None
                mask = [(i if shape[0] > 1 else 0) * shape[1] + (j if shape[1] > 1 else 0) for i in range(rows) for j in range(cols)]
                return _shuffled(base, mask)
        return None


def _shuffled(v: ir.Value, mask: list) -> ir.Value:
    """v's elements at `mask` (one vector.shuffle; a shuffle of a shuffle is composed)."""
    n = ir.VectorType(v.type).shape[0]
    if mask == list(range(n)):
        return v
    op = made_by(v, "vector.shuffle")
    if op is not None:
        inner = list(ir.DenseI64ArrayAttr(op.attributes["mask"]))
        return vector.shuffle(op.operands[0], op.operands[1], [inner[m] for m in mask])
    return vector.shuffle(v, v, mask)


def _permutation(op) -> list:
    return list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))


def _transfers_2d(loop_op, name: str) -> list:
    """The `name` ops (vector.transfer_read or _write) in `loop_op` moving a 2-D vector."""
    found = []

    def visit(o):
        if o.name == name:
            v = o.results[0] if name == "vector.transfer_read" else o.operands[0]
            if ir.VectorType(v.type).rank == 2:
                found.append(o)
        return ir.WalkResult.ADVANCE

    walk(loop_op, visit)
    return found


def flatten_stores(loop_op) -> None:
    """Each 2-D vector.transfer_write of a whole contiguous tile of bytes x fields in `loop_op`
    becomes one 1-D vector.store on the collapsed memref of the value computed flat, in the
    elements' order (see _Flat), or of the value shape_cast to 1-D where it cannot be."""
    writes = _transfers_2d(loop_op, "vector.transfer_write")
    flats = _Flat()
    for w in writes:
        value, base = w.operands[0], w.operands[1]
        bt = ir.MemRefType(base.type)
        vt = ir.VectorType(value.type)
        k = vt.shape[1]
        if list(bt.shape) != list(vt.shape) or len(list(w.operands)) != 2 + bt.rank or k & (k - 1):
            continue  # not a whole-tile write, or fields that do not interleave in halves
        strides, _ = bt.get_strides_and_offset()
        if strides != [k, 1]:
            continue
        flat = flats.of(value)
        with ir.InsertionPoint(w), w.location:
            if flat is None:  # a value computed as a whole: its row-major order
                flat = vector.shape_cast(ir.VectorType.get([math.prod(vt.shape)], vt.element_type), value)
            collapsed = memref.collapse_shape(_collapsed_type(bt), base, [[0, 1]])
            vector.store(flat, collapsed, [arith.constant(ir.IndexType.get(), 0)])
        w.erase()


def flatten_loads(loop_op) -> None:
    """Each 2-D vector.transfer_read of a whole contiguous tile in `loop_op` (a scale or zero
    point viewed as [columns / k, k] along packed columns, dq-to-linalg's split_operand) becomes
    one 1-D vector.load of the collapsed memref, shape_cast back: LLVM lowering takes 1-D
    transfers only."""
    for r in _transfers_2d(loop_op, "vector.transfer_read"):
        base = r.operands[0]
        if not isinstance(base.type, ir.MemRefType):
            continue
        bt, vt = ir.MemRefType(base.type), ir.VectorType(r.results[0].type)
        indices = list(r.operands)[1:-1]
        if list(bt.shape) != list(vt.shape) or len(indices) != 2 or any(constant_int(i) != 0 for i in indices):
            continue  # not a whole-tile read (or a masked one)
        strides, _ = bt.get_strides_and_offset()
        if strides != [vt.shape[1], 1]:
            continue
        with ir.InsertionPoint(r), r.location:
            collapsed = memref.collapse_shape(_collapsed_type(bt), base, [[0, 1]])
            flat = vector.load(ir.VectorType.get([math.prod(vt.shape)], vt.element_type), collapsed, [arith.constant(ir.IndexType.get(), 0)])
            value = vector.shape_cast(vt, flat)
        r.results[0].replace_all_uses_with(value)
        r.erase()


def _plain_scale(g):
    """The input a bf16 generic `g` multiplies its integers by, when it alone decides whether
    a product is NaN or subnormal: `g` yields truncf(mulf(a, b)) where one factor is an integer
    converted (sitofp, uitofp: 0 or at least 1 in magnitude) and the other an input read as f32
    (its block argument, or that extended by extf), broadcast along some loop (its map has fewer
    results than `g` has loops, so the input is no larger than the output's rows or columns).
    With every element of that input zero or a normal finite value, a product is 0, normal or
    infinite: never NaN, never subnormal. None for any other body."""
    block = g.regions[0].blocks[0]
    y = terminator(block)
    trunc = made_by(y.operands[0], "arith.truncf") if len(y.operands) == 1 else None
    mul = made_by(trunc.operands[0], "arith.mulf") if trunc is not None else None
    if mul is None or not isinstance(mul.operands[0].type, ir.F32Type):
        return None
    a, b = mul.operands
    for converted, read in ((a, b), (b, a)):
        if made_by(converted, "arith.sitofp") is None and made_by(converted, "arith.uitofp") is None:
            continue
        extended = made_by(read, "arith.extf")
        arg = extended.operands[0] if extended is not None else read
        if not isinstance(arg, ir.BlockArgument) or ir.BlockArgument(arg).owner != block:
            return None
        k = ir.BlockArgument(arg).arg_number
        maps = indexing_maps(g)
        if k >= len(maps) - 1 or len(maps[k].results) >= maps[k].n_dims:
            return None
        return g.operands[k]
    return None


def _on_plain_scales(g, scale: ir.Value) -> tuple:
    """scf.if (every element of `scale` is zero or normal and finite, as f32) { g tagged
    PLAIN_SCALES } else { g' }: (then, else) generics. The scan is a loop nest over the scale
    buffer before g (its size is a row's or a column's: `_plain_scale`)."""
    with ir.InsertionPoint(g), g.location:
        ok = _all_plain(scale)
    g, other = _branches(g, ok)
    g.attributes[PLAIN_SCALES] = ir.UnitAttr.get()
    return g, other


def _all_plain(buffer: ir.Value) -> ir.Value:
    """i1: every element of memref `buffer` (f32, f16 or bf16), extended to f32, is zero or a
    normal finite value: its exponent field is not all ones, and not zero unless its mantissa is."""
    t = ir.MemRefType(buffer.type)
    index, i1, i32, f32 = ir.IndexType.get(), ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(32), ir.F32Type.get()
    c = lambda v: arith.constant(index, v)  # noqa: E731
    word = lambda v: arith.constant(i32, v)  # noqa: E731

    def plain(ivs: list, acc: ir.Value) -> ir.Value:
        v = memref.load(buffer, ivs)
        if not isinstance(v.type, ir.F32Type):
            v = arith.extf(f32, v)
        bits = arith.bitcast(i32, v)
        exponent = arith.andi(arith.shrui(bits, word(23)), word(0xFF))
        finite = arith.cmpi(arith.CmpIPredicate.ne, exponent, word(0xFF))
        normal = arith.cmpi(arith.CmpIPredicate.ne, exponent, word(0))
        zero = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(bits, word(0x7FFFFFFF)), word(0))
        return arith.andi(acc, arith.andi(finite, arith.ori(normal, zero)))

    def nest(d: int, ivs: list, acc: ir.Value) -> ir.Value:
        if d == t.rank:
            return plain(ivs, acc)
        loop = scf.ForOp(c(0), memref.dim(buffer, c(d)), c(1), [acc])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([nest(d + 1, ivs + [loop.induction_variable], loop.inner_iter_args[0])])
        return loop.results[0]

    return nest(0, [], arith.constant(i1, 1))



def lookups(tile) -> None:
    """Each 1-D vector of decoded 4-bit floats in `tile` (its op tagged semantics.LOOKUP with the
    8 magnitudes, its code's op semantics.CODE) becomes a table lookup: lane i is the table's
    element at code[i] & 7 (vector.extract at a dynamic position), with the sign bit 3 of the code
    moved to bit 31. LLVM turns extracts of one constant vector at another vector's lanes into a
    variable permute (vpermps on AVX2 and AVX-512): a few instructions per vector instead of the
    decode's select chain. Exact: the table holds the decoded values."""
    found = []

    def visit(o):
        if LOOKUP in o.attributes and isinstance(o.results[0].type, ir.VectorType) and ir.VectorType(o.results[0].type).rank == 1:
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(tile, visit)
    index, i32, f32 = ir.IndexType.get(), ir.IntegerType.get_signless(32), ir.F32Type.get()
    for op in found:
        code = tagged_source(op, CODE)
        t = ir.VectorType(op.results[0].type)
        if code is None or ir.VectorType(code.type).shape != t.shape or code.type != ir.VectorType.get(t.shape, i32):
            continue
        n = t.shape[0]
        ints = ir.VectorType.get([n], i32)
        with ir.InsertionPoint(op), op.location:
            table = arith.constant(ir.VectorType.get([8], f32), op.attributes[LOOKUP])
            lanes = arith.andi(code, splat_int(ints, 7))
            magnitude = vector.from_elements(t, [
                vector.extract(table, [arith.index_cast(index, vector.extract(lanes, [], [k]))], [ir.ShapedType.get_dynamic_size()])
                for k in range(n)
            ])  # fmt: skip
            sign = arith.shli(arith.andi(code, splat_int(ints, 8)), splat_int(ints, 28))
            value = arith.bitcast(t, arith.ori(arith.bitcast(ints, magnitude), sign))
        op.results[0].replace_all_uses_with(value)


def _collapsed_type(t: ir.MemRefType) -> ir.MemRefType:
    """memref.collapse_shape's result type for a contiguous 2-D `t` collapsed to 1-D: the identity
    layout from an identity layout (a static tile of a buffer of its own size: strided<[1]> was
    rejected there, found through a packed zero point of static shape), else strided at `t`'s
    offset."""
    n = math.prod(t.shape)
    if _identity_layout(t):
        return ir.MemRefType.get([n], t.element_type)
    _, offset = t.get_strides_and_offset()
    return ir.MemRefType.get([n], t.element_type, ir.StridedLayoutAttr.get(offset, [1]))


# --- the schedule -------------------------------------------------------------------------------


def _any():
    return transform.AnyOpType.get()


def _run(root, build) -> None:
    """Apply a sequence built by `build(root handle)` to `root`."""
    m = ir.Module.create()
    m.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
    with ir.InsertionPoint(m.body):
        seq = transform.NamedSequenceOp("__transform_main", [_any()], [], arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}])
        with ir.InsertionPoint(seq.body):
            build(seq.bodyTarget)
            transform.YieldOp([])
    interpreter.apply_named_sequence(root, seq, m)


def _match(root, name: str, attrs: dict):
    return structured.MatchOp(_any(), root, ops=ir.ArrayAttr.get([ir.StringAttr.get(name)]), op_attrs=ir.DictAttr.get(attrs)).result


def _i64(v: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def _tile(root, plans: list) -> None:
    """Tile each planned generic (tagged TARGET = its index) and peel its column loop into whole
    tiles and a partial one (no peel where a static size is a multiple of the tile). Only the
    loops' bounds are simplified (general canonicalization would fold single-trip loops away):
    the whole tiles' shapes become static, the partial tiles' stay dynamic.

    A plan with tiles of rows (`_row_tile`) is first split along the columns at the last whole
    tile (`structured.split` at (n / T) * T, computed in the payload): the partial columns of
    every row stay one generic, for LLVM. The first part is tiled by rows, its row loop peeled
    (the partial rows: one generic), then by columns; the column loop's peeled remainder is then
    empty and erased (`_erase_empty_remainders`). Left in place, that R x (n mod T) generic was
    unrolled R times by LLVM, whose loop strength reduction then multiplied the first call's
    compile time (docs/performance.md#per-axis-rows-tiles-of-4-rows)."""
    index = ir.IndexType.get()
    for i, p in enumerate(plans):
        out = _output(p.generic)
        if p.split:
            with ir.InsertionPoint(p.generic), p.generic.location:
                t = arith.constant(index, p.tile)
                whole = arith.muli(arith.divui(memref.dim(out, arith.constant(index, p.vdim)), t), t)
            whole.owner.attributes[SPLIT] = _i64(i)

    def build(r):
        for i, p in enumerate(plans):
            g = _match(r, "linalg.generic", {TARGET: _i64(i)})
            sizes = p.sizes()
            if p.rows > 1:
                if p.split:
                    parts = structured.SplitOp(g, p.vdim, _match(r, "arith.muli", {SPLIT: _i64(i)}))
                    g = transform.SplitHandleOp([_any(), _any()], parts.split_list).results[0]
                    transform.AnnotateOp(g, WHOLE_COLUMNS)  # kept by the tiles cut from it
                sizes[p.vdim - 1], sizes[p.vdim] = p.rows, 0
                n = sum(1 for s in sizes if s)
                tiled = structured.TileUsingForOp([_any()] * (n - 1) + [transform.OperationType.get("scf.for")], g, sizes=sizes)
                whole = tiled.loops[n - 1]
                out = ir.MemRefType(_output(p.generic).type)
                if out.is_dynamic_dim(p.vdim - 1) or out.shape[p.vdim - 1] % p.rows:
                    whole = loop.LoopPeelOp(_any(), _any(), whole).peeled_loop
                g = structured.MatchOp(_any(), whole, ops=ir.ArrayAttr.get([ir.StringAttr.get("linalg.generic")]),
                                       op_attrs=ir.DictAttr.get({TARGET: _i64(i)})).result  # fmt: skip
                sizes = [0] * p.loops
                sizes[p.vdim] = p.tile
            n = sum(1 for s in sizes if s)
            tiled = structured.TileUsingForOp([_any()] * (n - 1) + [transform.OperationType.get("scf.for")], g, sizes=sizes)
            if p.columns is None or (p.columns % p.tile and not p.split):  # static and split: whole tiles only
                loop.LoopPeelOp(_any(), _any(), tiled.loops[n - 1])
        funcs = structured.MatchOp.match_op_names(r, ["func.func"])
        patterns = transform.ApplyPatternsOp(funcs)
        with ir.InsertionPoint(patterns.patterns):
            loop.ApplyForLoopCanonicalizationPatternsOp()
            structured.ApplyTilingCanonicalizationPatternsOp()

    _run(root, build)
    _erase_empty_remainders(root, plans)


def _erase_empty_remainders(root, plans: list) -> None:
    """Erase the column remainders of whole row tiles (R rows, dynamic columns) cut from the first
    part of a split (tagged WHOLE_COLUMNS) with dynamic columns: that part's columns end at a
    multiple of the tile, so the remainder `_tile` peeled from it never runs."""
    for g in ops_named(root, "linalg.generic"):
        if TARGET not in g.attributes or WHOLE_COLUMNS not in g.attributes:
            continue
        p = plans[ir.IntegerAttr(g.attributes[TARGET]).value]
        t = ir.MemRefType(_output(g).type)
        if p.columns is None and t.shape[p.vdim - 1] == p.rows and t.is_dynamic_dim(p.vdim):
            g.erase()


def _enclose(g, mode: str, tile: bool = True):
    """Move whole-tile generic `g` into an scf.execute_region tagged MODE: the anchor of the
    later steps (patterns run inside it; it outlives the loops canonicalization may fold).
    A partial tile (`tile` false) is enclosed the same way, not tagged TILE."""
    with ir.InsertionPoint(g), g.location:
        region = scf.ExecuteRegionOp([])
        region.attributes[MODE] = ir.StringAttr.get(mode)
        block = region.region.blocks.append()
        with ir.InsertionPoint(block):
            end = scf.YieldOp([])
    g.move_before(end)
    if tile:
        g.attributes[TILE] = ir.UnitAttr.get()
    return region


def _in_tiles(r, build_patterns) -> None:
    """Apply patterns inside each whole tile (the anchors stay)."""
    tiles = _match(r, "scf.execute_region", {MODE: ir.StringAttr.get(PLAIN)})
    for mode in (NT, NT16, NT64):
        tiles = transform.MergeHandlesOp([tiles, _match(r, "scf.execute_region", {MODE: ir.StringAttr.get(mode)})]).result
    patterns = transform.ApplyPatternsOp(tiles)
    with ir.InsertionPoint(patterns.patterns):
        build_patterns()


def _vectorize(root) -> None:
    """Vectorize the whole tiles' generics (tagged TILE) and fold the vectors' unit dims."""

    def patterns():
        tvector.ApplyRankReducingSubviewPatternsOp()
        tvector.ApplyCastAwayVectorLeadingOneDimPatternsOp()
        tvector.ApplyDropUnitDimWithShapeCastPatternsOp()
        tvector.ApplyTransferPermutationPatternsOp()
        transform.ApplyCanonicalizationPatternsOp()

    def build(r):
        structured.VectorizeOp(_match(r, "linalg.generic", {TILE: ir.UnitAttr.get()}))
        _in_tiles(r, patterns)

    _run(root, build)


def unroll_rows(tile) -> bool:
    """A tile of R rows (`_row_tile`) as R rows of 1-D vectors, before the transfers are lowered:
    the x read and the output write become R row loads and stores, every elementwise op on
    vector<R x T> becomes R ops on vector<T>, made once when its operands are the same in every
    row (a broadcast scale or zero point and its conversions). Left 2-D, the tile became
    `to_elements`/`from_elements` of R x T scalars, which LLVM compiled slowly. False
    (nothing changed) when the tile holds an op this does not know."""
    block = tile.regions[0].blocks[0]
    ops = list(block.operations)[:-1]

    def rank2(t) -> bool:
        return isinstance(t, ir.VectorType) and ir.VectorType(t).rank == 2

    def touches(o) -> bool:
        return any(rank2(v.type) for v in list(o.operands) + list(o.results))

    def known(o) -> bool:
        if o.name in ("vector.transfer_read", "vector.transfer_write"):  # unmasked, in bounds, rows of the tile
            m = ir.AffineMapAttr(o.attributes["permutation_map"]).value
            memref_at = 0 if o.name == "vector.transfer_read" else 1
            unmasked = len(o.operands) == memref_at + 1 + ir.MemRefType(o.operands[memref_at].type).rank + (o.name == "vector.transfer_read")
            in_bounds = all(ir.BoolAttr(b).value for b in ir.ArrayAttr(o.attributes["in_bounds"]))
            return unmasked and in_bounds and m == ir.AffineMap.get_minor_identity(m.n_dims, 2)
        if o.name == "vector.broadcast":
            return not rank2(o.operands[0].type)
        if o.name == "arith.constant":
            return isinstance(o.attributes["value"], ir.DenseElementsAttr) and ir.DenseElementsAttr(o.attributes["value"]).is_splat
        return o.name.startswith("arith.") and len(o.results) == 1

    if not any(touches(o) for o in ops) or not all(known(o) for o in ops if touches(o)):
        return False
    rows: dict = {}

    def row_type(t: ir.Type) -> ir.Type:
        v = ir.VectorType(t)
        return ir.VectorType.get(v.shape[1:], v.element_type)

    def row_of(v, r):
        return rows[v][r] if v in rows else v

    index = ir.IndexType.get()
    for o in ops:
        if not touches(o):
            continue
        with ir.InsertionPoint(o), o.location:
            if o.name == "vector.transfer_read":
                n = ir.VectorType(o.result.type).shape[0]
                base, *idx = list(o.operands)[: 1 + ir.MemRefType(o.operands[0].type).rank]
                rows[o.result] = [vector.load(row_type(o.result.type), base, idx[:-2] + [arith.addi(idx[-2], arith.constant(index, r)), idx[-1]])
                                  for r in range(n)]  # fmt: skip
            elif o.name == "vector.transfer_write":
                value, base, *idx = list(o.operands)[: 2 + ir.MemRefType(o.operands[1].type).rank]
                for r, v in enumerate(rows[value]):
                    vector.store(v, base, idx[:-2] + [arith.addi(idx[-2], arith.constant(index, r)), idx[-1]])
            elif o.name == "vector.broadcast":
                n = ir.VectorType(o.result.type).shape[0]
                src = o.operands[0]
                one = src if src.type == row_type(o.result.type) else vector.broadcast(row_type(o.result.type), src)
                rows[o.result] = [one] * n
            else:
                n = ir.VectorType(o.result.type).shape[0]
                uniform = all(v not in rows or len(set(rows[v])) == 1 for v in o.operands)
                made = []
                for r in range(1 if uniform else n):
                    attrs = {k: o.attributes[k] for k in o.attributes}
                    if o.name == "arith.constant":
                        attrs["value"] = ir.DenseElementsAttr.get_splat(row_type(o.result.type), ir.DenseElementsAttr(attrs["value"]).get_splat_value())
                    made.append(ir.Operation.create(o.name, results=[row_type(o.result.type)], operands=[row_of(v, r) for v in o.operands], attributes=attrs).result)
                rows[o.result] = made * n if uniform else made
    for o in reversed(ops):
        if touches(o):
            o.erase()
    return True


def _lower(root) -> None:
    """Transfers to vector.load/store (rank 1)."""

    def patterns():
        tvector.ApplyTransferToScfPatternsOp(max_transfer_rank=1, full_unroll=True)  # a tile of rows unroll_rows left whole
        tvector.ApplyLowerTransferPatternsOp(max_transfer_rank=1)
        transform.ApplyCanonicalizationPatternsOp()

    _run(root, lambda r: _in_tiles(r, patterns))


def annotate(tile) -> None:
    """The vector stores of a whole tile: non-temporal (mode NT, NT16, NT64), declared 16-byte
    aligned (NT16) or 64-byte aligned (NT64: `_lines`)."""
    mode = ir.StringAttr(tile.attributes[MODE]).value
    if mode == PLAIN:
        return

    def visit(o):
        if o.name == "vector.store":
            o.attributes["nontemporal"] = ir.BoolAttr.get(True)
            if mode in (NT16, NT64):
                o.attributes["alignment"] = _i64(16 if mode == NT16 else LINE)
        return ir.WalkResult.ADVANCE

    walk(tile, visit)


def _whole_tile(g, p: Plan) -> bool:
    """Whether tiled generic `g` (of plan `p`) covers a whole tile: a static output of the
    tile's shape (a partial tile's is dynamic or smaller)."""
    t = ir.MemRefType(_output(g).type)
    want = [1] * p.loops
    want[p.vdim] = p.tile
    if p.rows > 1:
        want[p.vdim - 1] = p.rows
    if p.inner > 1:
        want[-1] = p.inner
    static = all(ir.MemRefType(v.type).has_static_shape for v in g.operands)  # a dynamic input: not a tile
    return static and list(t.shape) == want


# --- the pass -------------------------------------------------------------------------------------


def _wanted_plain(p: Plan) -> bool:
    """On the cached-store path, the generics LLVM's loop vectorizer handles worse (measured,
    docs/performance.md): 16-bit float outputs (bf16: it scalarizes the rounding), packed data
    (its innermost loop is the 2 or 4 fields of a byte), and blocks of fewer than
    `LLVM_BLOCKS_FROM` elements along the columns (after dq-strip-mine-blocks, LLVM unrolled a
    block of 16 or 32 whole and vectorized across blocks with gathers and scatters, many times
    slower; from blocks of 64 it vectorizes them well, and blocks of 128 ran faster there than
    here)."""
    out = ir.MemRefType(_output(p.generic).type).element_type
    return isinstance(out, (ir.BF16Type, ir.F16Type)) or p.inner > 1 or 0 < p.block < LLVM_BLOCKS_FROM


def _row_tile(p: Plan) -> int:
    """Rows per tile on the cached-store path: ROWS when an input is read along the tiled dim
    only, at the same index for every row (a per-axis scale and zero point along the columns), so
    a tile loads and converts it once for ROWS rows; else 1. Only where every input map is a
    projected permutation, an input read along the tiled dim reads it contiguously (its last
    index), and the output is not bf16 (its per-tile rounding steps work on one row's vector;
    4-row tiles measured slower there).

    Faster for uint8 per-axis and oneDNN's s32 zero points (their exact split is made once per 4
    rows). Unrolling and jamming the scalar loops for LLVM instead does not work: its loop
    vectorizer hoists the runtime alias checks out of the row loop, where the 4 rows' output
    ranges (one buffer, a dynamic stride) overlap, and runs the scalar loop. With non-temporal
    stores 4-row tiles gained nothing (4 write-combining streams), so `_nt` entries keep rows of 1.
    Measurements: docs/performance.md#per-axis-rows-tiles-of-4-rows."""
    g = p.generic
    out = ir.MemRefType(_output(g).type)
    if ROWS <= 1 or p.vdim < 1 or p.inner > 1 or p.block or isinstance(out.element_type, ir.BF16Type):
        return 1
    if not out.is_dynamic_dim(p.vdim - 1) and out.shape[p.vdim - 1] < ROWS:
        return 1
    if any(o.operation.name == "linalg.index" for o in g.regions[0].blocks[0].operations):
        return 1  # rows computed differently (OpenPPL's 4 fields of an int16 along one dim)
    shared = False
    for m in indexing_maps(g)[:-1]:
        results = list(m.results)
        if not all(isinstance(r, (ir.AffineDimExpr, ir.AffineConstantExpr)) for r in results):
            return 1
        dims = [ir.AffineDimExpr(r).position for r in results if isinstance(r, ir.AffineDimExpr)]
        if p.vdim in dims and dims[-1] != p.vdim:
            return 1
        shared |= p.vdim in dims and p.vdim - 1 not in dims
    return ROWS if shared else 1


def root(v: ir.Value) -> ir.Value:
    """The buffer a memref value views (through reshapes, casts and subviews, and an scf.if
    choosing how to fill it, as dq-to-linalg's `by_rows` does for a packed zero point: its then
    branch's value)."""
    while isinstance(v.owner, (ir.Operation, ir.OpView)):
        owner = v.owner
        if owner.name in MEMREF_VIEWS:
            v = owner.operands[0]
        elif owner.name == "scf.if":
            v = terminator(owner.regions[0].blocks[0]).operands[v.result_number]
        else:
            break
    return v


def results(op) -> tuple:
    """(the linalg.generics of `op` that write a result, those that write a temporary another
    generic reads: a packed zero point unpacked, or a scale widened by dq-widen-scales-once,
    before the dequantize's generic reads it)."""
    found = ops_named(op, "linalg.generic")
    read = set()
    for g in found:
        outs = len(list(g.results)) or 1
        for v in list(g.operands)[: len(list(g.operands)) - outs]:
            if isinstance(v.type, ir.MemRefType):
                read.add(root(v))
    written = [g for g in found if root(_output(g)) not in read]
    return written, [g for g in found if root(_output(g)) in read]


def run(op) -> bool:
    plans, modes = [], []
    module = enclosing(op, "builtin.module")
    x86 = X86.of(module)  # the x86 rewrites that apply (passes/vectorize_x86.py)
    written, temporaries = results(op)
    for g in written:
        p = plan(g)
        f = enclosing(g, "func.func")
        if p is None or f is None:
            continue
        if NONTEMPORAL in f.attributes:
            p = _at_most(p, NT_TABLE_TILE_BYTES if x86.tables and _nt_table_tile(p) else NT_MAX_TILE_BYTES)
            if p is None:
                continue
            if p.tile_bytes % 16 == 0:
                _, other = _version(p)
                if _line_eligible(p):
                    rest = _lines(p)
                    scale = _plain_scale(rest) if x86.bf16_convert else None
                    if scale is not None:
                        plain, rest = _on_plain_scales(rest, scale)
                        plans.append(replace(p, generic=plain, columns=None))
                        modes.append(NT64)
                    plans.append(replace(p, generic=rest, columns=None))  # the rest's columns: dynamic
                    modes.append(NT64)
                plans += [p, replace(p, generic=other)]
                modes += [NT16, NT]
            else:
                plans.append(p)
                modes.append(NT)
        else:
            rows = _row_tile(p)
            if _wanted_plain(p) or rows > 1:
                plans.append(replace(p, rows=rows))
                modes.append(PLAIN)
    for g in temporaries:  # read back at once: cached stores in every entry point
        p = plan(g)
        p = _at_most(p, LINE) if p is not None and p.inner > 1 else None  # rows of a few blocks' zero points: a long tile would not fill
        if p is not None:
            plans.append(p)
            modes.append(PLAIN)
    tiles = []
    if plans:
        for i, p in enumerate(plans):
            p.generic.attributes[TARGET] = _i64(i)
        _tile(op, plans)
        for g in ops_named(op, "linalg.generic"):
            if TARGET in g.attributes:
                i = ir.IntegerAttr(g.attributes[TARGET]).value
                if _whole_tile(g, plans[i]):
                    simplify_block_maps(g)
                    tiles.append(_enclose(g, modes[i]))
                    if PLAIN_SCALES in g.attributes:
                        tiles[-1].attributes[PLAIN_SCALES] = ir.UnitAttr.get()
                else:
                    g.attributes[LEAN_LOOPS] = ir.UnitAttr.get()
        _vectorize(op)
        for t in tiles:
            unroll_rows(t)
            flatten_loads(t)
            flatten_stores(t)
            x86.rewrite(t, tested=PLAIN_SCALES not in t.attributes, nontemporal=ir.StringAttr(t.attributes[MODE]).value != PLAIN)
            lookups(t)
        _lower(op)
    fields_in_bytes(op, multishift=x86.multishift)
    sign_extend_in_bytes(op)
    for t in tiles:
        annotate(t)
        _inline(t)
    _lean_loops(op)
    _clean(op)
    return True


def _lean_loops(root) -> None:
    """Convert the generics tagged LEAN_LOOPS (this pass's partial tiles, dq-to-linalg's
    fallbacks) to loops annotated LEAN_ANNOTATION: LLVM's vectorizer still serves them (a shape
    of fewer rows than a row tile runs in them whole), but one vector per iteration with no
    run-time unrolled remainder. With LLVM's defaults (four interleaved vectors, a vectorized
    epilogue, a remainder unrolled 4-8 times), the partial tiles took a large part of a kernel's
    first call (docs/performance.md#compile-time, "Partial tiles compiled lean"). Each generic is first moved into
    an scf.execute_region, the anchor that finds its loops."""
    regions = []
    for g in ops_named(root, "linalg.generic"):
        if LEAN_LOOPS in g.attributes:
            regions.append(_enclose(g, LEAN_LOOPS, tile=False))
    if not regions:
        return
    _run(root, lambda r: structured.ConvertToLoopsOp(_any(), _match(r, "linalg.generic", {LEAN_LOOPS: ir.UnitAttr.get()})))
    annotation = ir.Attribute.parse(LEAN_ANNOTATION)  # the LLVM dialect's Python bindings have no builder for it

    def visit(o):
        if o.name == "scf.for":
            o.attributes["loop_annotation"] = annotation
        return ir.WalkResult.ADVANCE

    for region in regions:
        walk(region, visit)
        _inline(region)


def _nt_table_tile(p: Plan) -> bool:
    """Whether `p`'s non-temporal tiles may be NT_TABLE_TILE_BYTES: an f16 output computed from a
    packed 4-bit code (an op tagged dq.field_code) and otherwise from values the same across a
    tile (no input but one reads the tiled dim itself: per-tensor, blocked or grouped scales), so
    that vectorize_x86.tables replaces the tile's arithmetic by a per-tile table, which needs TABLE_MIN_CHUNKS
    vectors. Faster on OpenPPL's int4x4 (f16, groups of 128); f32 outputs, memory bound, gain
    nothing from it, so their non-temporal tiles stay one line
    (docs/performance.md#per-tile-tables-avx-512bw-hosts)."""
    g = p.generic
    out = ir.MemRefType(_output(g).type).element_type
    if not isinstance(out, ir.F16Type):
        return False
    if not any(FIELD_CODE in o.attributes for o in g.regions[0].blocks[0].operations):
        return False
    plain = [m for m in indexing_maps(g)[:-1] if any(isinstance(r, ir.AffineDimExpr) and ir.AffineDimExpr(r).position == p.vdim for r in m.results)]
    return len(plain) <= 1


def _at_most(p: Plan, nbytes: int) -> Plan | None:
    """`p` with tiles of at most `nbytes` of output (still a divisor of its block), or None when
    those are under MIN_TILE_BYTES, as `plan` leaves such tiles to LLVM: a prime block longer
    than the tile (37 f32 values in one line) is tiles of 1 element, whose loop `_tile` could not
    peel ("failed to peel the last iteration": the `_nt` entry did not compile)."""
    if p.tile_bytes <= nbytes:
        return p
    longest = max(1, nbytes // (p.inner * p.elem_bytes))
    q = replace(p, tile=_divisor_at_most(longest, p.block) if p.block else longest)
    return q if q.tile_bytes >= MIN_TILE_BYTES else None


def _divisor_at_most(n: int, block: int) -> int:
    """The largest divisor of `block` up to `n` (0 when n < 1); `block` may be ~2^63."""
    return max((t for t in range(1, min(block, n) + 1) if block % t == 0), default=0)


def _inline(region) -> None:
    """Replace a whole tile's scf.execute_region by its ops (its anchor role is over)."""
    block = region.regions[0].blocks[0]
    for o in list(block.operations)[:-1]:  # the scf.yield last
        o.move_before(region)
    region.erase()


def _clean(op) -> None:
    """Drop the schedule's tags, and dq-nontemporal-entries' and dq-target-features' (this pass
    consumed them)."""
    for tag in TAGS:
        if op.name == "builtin.module" and tag in op.attributes:  # run on a module (dq-to-llvm): consumed
            del op.attributes[tag]

    def visit(o):
        for name in (TARGET, MODE, TILE, SPLIT, WHOLE_COLUMNS, NONTEMPORAL):
            if name in o.attributes:
                del o.attributes[name]
        return ir.WalkResult.ADVANCE

    walk(op, visit)


PASS = Pass("dq-vectorize", "Vectorize dq kernels with transform-dialect schedules; non-temporal stores in dq.nontemporal functions", run)
