"""dq-widen-scales-once: widen a 16-bit float scale shared by the rows to f32 once per call, not
once per row.

A per-axis scale along the last dim (ONNX `DequantizeLinear` with an f16 or bf16 scale and the
axis last, read at (d1) by a generic over (d0, d1)) is widened (`arith.extf` to f32) for every
element of the output, so each row converts the same scales again. For each all-parallel
`linalg.generic` on buffers with one output and an identity output map, each input of element
type f16 (bf16 too, outside `dq.nontemporal` functions) that is

- read through a projected permutation holding the innermost loop dim and missing another (the
  rows), and
- used in the body only by `arith.extf` to f32,

is widened by a generic of its own into an f32 temporary, which the generic then reads in its
place (same position, same map):

    %w = memref.alloc(%n) : memref<?xf32>
    linalg.generic ins(%s : memref<?xf16>) outs(%w : memref<?xf32>) { arith.extf }
    linalg.generic ins(%x, %w, %z) outs(%y) { ... }      (the body without the extf)
    memref.dealloc %w

The widening is exact, so the results are bit for bit the same. The temporary costs an
allocation and one pass over the scales, which a few rows do not pay back: a generic whose rows
(the loop dims the scale's map misses) are static and fewer than MIN_ROWS is left alone. Dynamic
rows are not versioned: a second copy of the dequantize's loop nearly doubled the first call's
compile time (docs/performance.md). Blocked maps (`d1 floordiv B`: each scale read by one block
of one row) and rank-0 scales are left alone, and so are zero points: their widened i32
temporary, with the f32 one, no longer fits L1 beside a row of x. A bf16 scale is widened by a
shift, and in the non-temporal entry (dq-nontemporal-entries; this pass runs after it) its
kernel measured slower with the temporary, so there it is left alone. Measurements:
docs/performance.md#per-axis-scales-widened-once-dq-widen-scales-once.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from . import Pass
from .lazy import linalg
from .nontemporal_entries import NONTEMPORAL
from .queries import enclosing, indexing_maps, ops_named
from .vectorize import LINE  # the temporary's alignment: one cache line, as bufferization's

MIN_ROWS = 16  # below this the temporary does not pay (docs/performance.md#per-axis-scales-widened-once-dq-widen-scales-once)
PARALLEL = "#linalg.iterator_type<parallel>"


def _dims(m: ir.AffineMap) -> list[int] | None:
    """The loop dims of a projected permutation `m`, else None."""
    dims = []
    for e in m.results:
        if not isinstance(e, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(e).position)
    return dims if len(set(dims)) == len(dims) and m.n_symbols == 0 else None


def _shared_by_rows(m: ir.AffineMap) -> bool:
    """A projected permutation reading the innermost loop dim and missing another."""
    dims = _dims(m)
    return dims is not None and m.n_dims - 1 in dims and len(dims) < m.n_dims


def _widenings(arg: ir.BlockArgument) -> list:
    """The `arith.extf` to f32 ops that are all of `arg`'s uses, else []."""
    uses = [u.owner for u in arg.uses]
    if all(o.name == "arith.extf" and isinstance(o.results[0].type, ir.F32Type) for o in uses):
        return uses
    return []


def _narrow(g) -> tuple:
    """The scale element types widened in `g`'s function: f16, and bf16 outside `_nt` entries."""
    f = enclosing(g, "func.func")
    return (ir.F16Type,) if f is not None and NONTEMPORAL in f.attributes else (ir.F16Type, ir.BF16Type)


def candidates(g) -> list[int]:
    """The inputs of generic `g` to widen once (see the module docstring), all sharing one map."""
    if len(g.results) or len(g.outputs) != 1 or len(g.regions[0].blocks) != 1:
        return []
    maps = indexing_maps(g)
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims) or not isinstance(g.outputs[0].type, ir.MemRefType):
        return []
    if not all(str(a) == PARALLEL for a in ir.ArrayAttr(g.attributes["iterator_types"])):
        return []
    body = g.regions[0].blocks[0]
    narrow = _narrow(g)
    found = []
    for i, v in enumerate(g.inputs):
        if not isinstance(v.type, ir.MemRefType) or not isinstance(ir.MemRefType(v.type).element_type, narrow):
            continue
        if _shared_by_rows(maps[i]) and _widenings(body.arguments[i]) and (not found or maps[found[0]] == maps[i]):
            found.append(i)
    return found


def _index(v: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), v)


def _widened(scales: list[ir.Value]) -> list[ir.Value]:
    """Each of `scales` (same shape) widened to an f32 temporary by one generic."""
    t = ir.MemRefType(scales[0].type)
    f32 = ir.F32Type.get()
    dynamic = [memref.dim(scales[0], _index(d)) for d in range(t.rank) if t.is_dynamic_dim(d)]
    temps = [memref.alloc(ir.MemRefType.get(t.shape, f32), dynamic, [], alignment=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), LINE)) for _ in scales]
    identity = ir.AffineMap.get_identity(t.rank)

    @linalg.generic(scales, temps, [identity] * (2 * len(scales)), [linalg.IteratorType.parallel] * t.rank)
    def widen(*args):
        return [arith.extf(f32, a) for a in args[: len(scales)]]

    return temps


def _reading(g, members: list[int], widened: list[ir.Value]) -> None:
    """A copy of generic `g` (its attributes too) reading `widened` in place of its inputs
    `members` (same positions, same maps), each member's widening replaced by the f32 value
    read."""
    inputs = list(g.inputs)
    for i, w in zip(members, widened):
        inputs[i] = w
    maps = indexing_maps(g)
    body = g.regions[0].blocks[0]
    widenings = [w for i in members for w in _widenings(body.arguments[i])]

    @linalg.generic(inputs, list(g.outputs), maps, [linalg.IteratorType.parallel] * maps[0].n_dims)
    def y(*args):
        mapping = dict(zip(body.arguments, args))
        for o in body.operations:
            o = o.operation
            if any(w.operation == o for w in widenings):
                mapping[o.results[0]] = mapping[o.operands[0]]  # the f32 value read
            elif o.name == "linalg.yield":
                return mapping.get(o.operands[0], o.operands[0])
            else:
                c = o.clone(ir.InsertionPoint.current)
                for k, v in enumerate(o.operands):
                    if v in mapping:
                        c.operands[k] = mapping[v]
                for a, b in zip(o.results, c.results):
                    mapping[a] = b
        raise AssertionError("a linalg.generic body ends with linalg.yield")

    for name in g.operation.attributes:  # any tag the generic carries
        if name not in y.attributes:
            y.attributes[name] = g.operation.attributes[name]


def _few_rows(g, read: set[int]) -> bool:
    """Whether generic `g`'s rows (the loop dims a shared scale's map misses) are static and
    fewer than MIN_ROWS."""
    t = ir.MemRefType(g.outputs[0].type)
    rows = 1
    for d in range(t.rank):
        if d not in read:
            if t.is_dynamic_dim(d):
                return False
            rows *= t.shape[d]
    return rows < MIN_ROWS


def widen_once(g) -> bool:
    """Rewrite generic `g` as the module docstring says; False when it has no such input."""
    members = candidates(g)
    if not members or _few_rows(g, set(_dims(indexing_maps(g)[members[0]]))):
        return False
    with ir.InsertionPoint(g), g.location:
        temps = _widened([g.inputs[i] for i in members])
        _reading(g, members, temps)
        for t in temps:
            memref.dealloc(t)
    g.operation.erase()
    return True


def run(op) -> bool:
    for g in ops_named(op, "linalg.generic"):
        widen_once(g.opview)
    return True


PASS = Pass("dq-widen-scales-once", "Widen a 16-bit float scale every row reads alike to f32 once per call, not once per row", run)
