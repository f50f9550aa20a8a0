"""dq-vectorize's hand-written x86 rewrites: whole tiles' arithmetic rewritten around AVX-512
instructions, called as `llvm.x86.*` intrinsics, where LLVM's own lowering of the vector IR is
slower (each rewrite says by how much). Which apply is read from the module's target attributes
(`X86.of`: the tags dq-target-features sets from the host CPU, or a test by hand); the schedule
itself (tiling, vectorization, the target-independent steps) is passes/vectorize.py, which
calls `X86.rewrite` on each whole tile after vectorization, before the transfers are lowered.

- `tables` (AVX-512BW): a 4-bit (or 2-bit) packed code's 16 (4) values computed once per tile,
  each lane taken from them with one variable permute per 512 bits (`vpermd`, `vpermw`);
- `bf16_rounding` (AVX-512BW): f32 -> bf16 rounding narrowed by one word permute (`vpermt2w`),
  and with AVX512_BF16 `vcvtne2ps2bf16` for tiles without NaN or subnormal values (`vfpclassps`
  tests them; a tile of a generic that runs on plain scales only is not tested);
- `f16_words` (AVX-512BW, non-temporal tiles): an f32 -> f16 conversion's result stored as its
  i16 words, which keep the store's non-temporal hint on AVX512-FP16 CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf, vector

from dequant.dialect.semantics import FIELD_CODE
from dequant.dialect.walking import walk

from .lazy import llvm
from .queries import concatenated, element_bits, integer_value, made_by, ops_named, producer, splat_int, tagged_source
from .kernels.target import Target

TABLE_MIN_CHUNKS = 4  # a per-tile table only for tiles of 4 or more 512-bit vectors (docs/performance.md)


@dataclass(frozen=True)
class X86:
    """The x86 features a module's kernels may use (dq-target-features' tags on the module), and
    so which rewrites apply: `tables` and `bf16_rounding` with AVX-512BW, `vcvtne2ps2bf16` in the
    latter with AVX512_BF16 (`bf16_convert`), and fold_nibbles' `vpmultishiftqb` with AVX-512
    VBMI (`multishift`). A module without tags (another target, or a host without AVX-512BW)
    gets none of them."""

    avx512bw: bool = False
    avx512bf16: bool = False
    avx512vbmi: bool = False

    @classmethod
    def of(cls, module) -> X86:
        """The features tagged on `module` (a builtin.module operation, or None: none), as
        `Target.of` reads them for the kernels too."""
        target = Target.of(module)
        return cls(target.avx512bw, target.avx512bf16, target.avx512vbmi)

    @property
    def tables(self) -> bool:
        return self.avx512bw

    @property
    def bf16_convert(self) -> bool:
        return self.avx512bf16

    @property
    def multishift(self) -> bool:
        return self.avx512vbmi

    def rewrite(self, tile, tested: bool = True, nontemporal: bool = False) -> None:
        """The rewrites that apply, on whole tile `tile` (an scf.execute_region of 1-D vector IR);
        `tested` false: the tile's generic runs only on plain scales (`bf16_rounding`);
        `nontemporal`: the tile's stores are non-temporal (`f16_words`)."""
        if self.avx512bw:
            tables(tile)
            bf16_rounding(tile, convert=self.avx512bf16, tested=tested)
            if nontemporal:
                f16_words(tile)


DATA, PATTERN, UNIFORM = "data", "pattern", "uniform"
_SHIFTS = ("arith.shli", "arith.shrui", "arith.shrsi")


def _uniform_dag(y: ir.Value, container: ir.Value) -> dict | None:
    """The ops computing vector `y` from `container` (DATA) and from values that do not change
    the table, or None. Those values are UNIFORM, the same in every lane (scalars broadcast,
    splat constants), or a lane PATTERN (non-splat constants, vector.step: a packed byte's
    field shifts), which may only be a shift's amount applied to DATA: every field of a
    table's container holds the same code, so a field's shift does not change the code it
    reads, but any other lane-varying value would. Any other vector (a load: a scale or zero
    point varying along the tile) gives None."""
    kinds: dict = {}
    ops: dict = {}

    def kind(v):
        if v == container:
            return DATA
        if not isinstance(v.type, ir.VectorType):
            return UNIFORM
        if v in kinds:
            return kinds[v]
        op = v.owner
        if not isinstance(op, (ir.Operation, ir.OpView)):
            return None
        name = op.operation.name
        vectors = [o for o in op.operands if isinstance(o.type, ir.VectorType)]
        if name == "arith.constant":
            value = op.attributes["value"]
            if not isinstance(value, ir.DenseElementsAttr):
                return None
            k = UNIFORM if value.is_splat else PATTERN
        elif name == "vector.step":
            k = PATTERN
        elif name.startswith("arith.") or name in ("vector.broadcast", "vector.shuffle"):
            found = [kind(o) for o in vectors]
            if None in found:
                return None
            k = DATA if DATA in found else PATTERN if PATTERN in found else UNIFORM
            if k == DATA and PATTERN in found:  # a pattern meets data: only as a shift's amount
                if name not in _SHIFTS or kind(op.operands[0]) != DATA or kind(op.operands[1]) != PATTERN:
                    return None
        else:
            return None
        kinds[v] = k
        ops[op.operation] = True
        return k

    return ops if kind(y) == DATA else None


def _container(code_op) -> ir.Value | None:
    """The vector of packed containers (i8 bytes, OpenPPL's i16) a field code is extracted from:
    the operand of the nearest arith.extui from i8 or i16 above `code_op`."""
    containers = (ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(16))

    def widens(o) -> bool:
        src = o.operands[0].type if o.name == "arith.extui" else None
        return isinstance(src, ir.VectorType) and ir.VectorType(src).element_type in containers

    p = producer(code_op, widens, 8)
    return None if p is None else p.operands[0]


def tables(tile) -> None:
    """Per-tile tables of 4-bit (or 2-bit) packed data (module tagged AVX512BW, see
    passes/target_features.py): where every input of a tile's stored vector other than the
    packed field is the same in every lane (per-tensor scales, a block's scale and zero point,
    an OpenPPL group's), the stored value is a function of the field's code alone, so its 16 (4)
    values are computed once per tile, by the tile's own ops on containers holding code i in
    every field of lane i, and each lane takes its value from that table at its code (a variable
    permute). The values are those the ops compute: exact by construction."""
    for store in ops_named(tile, "vector.store") + ops_named(tile, "vector.transfer_write"):
        y = store.operands[0]
        t = ir.VectorType(y.type)
        if len(t.shape) != 1 or element_bits(t.element_type) not in (16, 32) or isinstance(t.element_type, ir.BF16Type):
            continue
        code = tagged_source(store, FIELD_CODE, depth=24)
        if code is None or not isinstance(code.type, ir.VectorType) or ir.VectorType(code.type).shape != t.shape:
            continue
        n = 1 << ir.IntegerAttr(code.owner.attributes[FIELD_CODE]).value
        container = _container(code.owner)
        chunk = 512 // element_bits(t.element_type)  # lanes of one 512-bit permute
        if n > chunk or t.shape[0] % chunk or t.shape[0] < TABLE_MIN_CHUNKS * chunk:
            continue  # a table must serve a few permutes to pay for itself
        if container is None or ir.VectorType(container.type).shape != t.shape:
            continue
        dag = _uniform_dag(y, container)
        if dag is None:
            continue
        ct = ir.VectorType(container.type)
        bits, width = element_bits(ct.element_type), n.bit_length() - 1
        every_field = sum(1 << (width * j) for j in range(bits // width))
        codes = np.array([(i % n) * every_field for i in range(t.shape[0])], dtype=np.uint8 if bits == 8 else np.uint16)
        lane_type = ir.VectorType(code.type)
        with ir.InsertionPoint(store), store.location:
            mapping = {container: arith.constant(ct, ir.DenseElementsAttr.get(codes.view(np.int8 if bits == 8 else np.int16), type=ct))}
            for op in _block_order(tile, dag):
                new = op.clone(ir.InsertionPoint(store))
                for k, v in enumerate(op.operands):
                    if v in mapping:
                        new.operands[k] = mapping[v]
                for old, r in zip(op.results, new.results):
                    mapping[old] = r
            looked_up = _looked_up(mapping[y], arith.andi(code, splat_int(lane_type, n - 1)), n)
        store.operands[0] = looked_up


_PERMUTES = {32: "llvm.x86.avx512.permvar.si.512", 16: "llvm.x86.avx512.permvar.hi.512"}  # vpermd, vpermw


def _looked_up(values: ir.Value, codes: ir.Value, n: int) -> ir.Value:
    """Lane i of the result: `values` at lane codes[i] (< n; lanes 0..n-1 of `values` hold the
    table), one AVX-512 variable permute (`vpermd`, `vpermw`: the module is tagged
    AVX512BW) per 512 bits. The intrinsic, not extracts LLVM could recognize as a permute:
    a non-temporal store declared 16-byte aligned is split into 16-byte stores, and LLVM then
    splits the extracts too and loses the permute (scalar loads from a copy of the table on the
    stack; measured slower: docs/performance.md#per-tile-tables-avx-512bw-hosts)."""
    t = ir.VectorType(values.type)
    bits = element_bits(t.element_type)
    chunk, it = 512 // bits, ir.IntegerType.get_signless(bits)
    part = ir.VectorType.get([chunk], it)
    ints = arith.bitcast(ir.VectorType.get(t.shape, it), values)
    table = vector.shuffle(ints, ints, [k % n for k in range(chunk)])
    if bits != 32:
        codes = _narrow_code(codes, it) or arith.trunci(ir.VectorType.get(t.shape, it), codes)
    pieces = [
        llvm.call_intrinsic(part, _PERMUTES[bits], [table, vector.extract_strided_slice(part, codes, [c], [chunk], [1])], [], [])
        for c in range(0, t.shape[0], chunk)
    ]
    return arith.bitcast(t, concatenated(pieces))


def _narrow_code(codes: ir.Value, it: ir.IntegerType) -> ir.Value | None:
    """`codes` = (ext(c) >>u s) & m (masks ANDed, one of them the op tagged FIELD_CODE), c a
    container no wider than `it`, computed in `it` instead of i32 and then truncated: the tagged
    field lies within c (shift + width <= c's bits, dialect/semantics.py), so the bits it takes
    are c's whatever the extension. For OpenPPL's int16 containers this is one word shift and
    one mask per 32 codes, where the i32 form took two widenings, two shifts, two narrowings and
    an insert. None for any other form."""
    mask, tagged, v = -1, False, codes
    while (o := made_by(v, "arith.andi")) is not None:
        tagged = tagged or FIELD_CODE in o.attributes
        m = integer_value(o.operands[1])
        if m is None:
            return None
        mask, v = mask & m, o.operands[0]
    if not tagged or made_by(v, "arith.shrui") is None:
        return None
    wide, shift = v.owner.operands
    if made_by(wide, "arith.extui") is None and made_by(wide, "arith.extsi") is None:
        return None
    c = wide.owner.operands[0]
    if not isinstance(c.type, ir.VectorType) or element_bits(ir.VectorType(c.type).element_type) > it.width or mask >= 1 << it.width:
        return None
    t = ir.VectorType.get(ir.VectorType(codes.type).shape, it)
    c = c if element_bits(ir.VectorType(c.type).element_type) == it.width else arith.extui(t, c)
    return arith.andi(arith.shrui(c, arith.trunci(t, shift)), splat_int(t, mask))


def _block_order(tile, ops: dict) -> list:
    """The ops of `ops` in the order the tile's walk meets them (definitions before uses)."""
    ordered = []

    def visit(o):
        if o.operation in ops:
            ordered.append(o.operation)
        return ir.WalkResult.ADVANCE

    walk(tile, visit)
    return ordered


def bf16_rounding(tile, convert: bool = False, tested: bool = True) -> None:
    """Each f32 -> bf16 `arith.truncf` of a 1-D vector in `tile` (module tagged AVX512BW:
    AVX-512BW) becomes the same rounding written so that the narrowing is one word shuffle:
    to nearest even on the bits (bits + 0x7FFF + bit 16, exact for every finite value and for
    infinities), the high halves of the 32-bit lanes taken as the odd 16-bit lanes of the sum
    (one `vpermt2w` per 32 outputs, where arith-expand's `>> 16` then truncation took two shifts,
    two `vpmovdw` and an insert), NaN as 0x7FC0 like arith-expand's.

    With `convert` (module tagged AVX512BF16) a tile of a multiple of 16 lanes is first tested
    with `vfpclassps` (NaN or subnormal, per 16 lanes): if no lane is, `vcvtne2ps2bf16` rounds it
    (to nearest even, the same result there: it only flushes subnormals and quiets NaNs); else
    the rounding above. A dequantized value is a NaN or a subnormal only where a scale is, so
    tiles take the one instruction (docs/performance.md). Untested (`tested` false: a tile of a
    generic that runs only on plain scales, `_on_plain_scales`), every such tile takes it."""
    for op in ops_named(tile, "arith.truncf"):
        v = op.operands[0]
        src = ir.VectorType(v.type) if isinstance(v.type, ir.VectorType) else None
        if src is None or src.rank != 1 or not isinstance(src.element_type, ir.F32Type) or not isinstance(ir.VectorType(op.results[0].type).element_type, ir.BF16Type):
            continue
        n = src.shape[0]
        with ir.InsertionPoint(op), op.location:
            if convert and n % 16 == 0:  # i16 lanes stored: a bf16 vector lost the stores' non-temporal hint
                words = ir.VectorType.get([n], ir.IntegerType.get_signless(16))
                if tested:  # the branches' bf16 vector merged at the join went through the stack
                    branch = scf.IfOp(_nan_or_subnormal(v), [words], has_else=True)
                    with ir.InsertionPoint(branch.then_block):
                        scf.YieldOp([arith.bitcast(words, _rounded(v, op.results[0].type))])
                    with ir.InsertionPoint(branch.else_block):
                        scf.YieldOp([arith.bitcast(words, _converted(v))])
                    lanes = branch.results[0]
                else:
                    lanes = _opaque(arith.bitcast(words, _converted(v)))
                value = arith.bitcast(op.results[0].type, lanes)
            else:
                value = _rounded(v, op.results[0].type)
        op.results[0].replace_all_uses_with(value)
        op.erase()


def _rounded(v: ir.Value, result: ir.Type) -> ir.Value:
    """bf16_rounding's bit rounding of f32 vector `v` (n lanes), as `result` (vector<n x bf16>)."""
    n = ir.VectorType(v.type).shape[0]
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    words, halves = ir.VectorType.get([n], i32), ir.VectorType.get([n], i16)
    bits = arith.bitcast(words, v)
    odd = arith.andi(arith.shrui(bits, splat_int(words, 16)), splat_int(words, 1))
    rounded = arith.addi(arith.addi(bits, splat_int(words, 0x7FFF)), odd)
    pairs = vector.bitcast(ir.VectorType.get([2 * n], i16), rounded)
    high = vector.shuffle(pairs, pairs, [2 * k + 1 for k in range(n)])
    nan = arith.cmpf(arith.CmpFPredicate.UNO, v, v)
    return arith.bitcast(result, arith.select(nan, splat_int(halves, 0x7FC0), high))


FPCLASS_NAN_OR_SUBNORMAL = 0x01 | 0x20 | 0x80  # vfpclassps classes: quiet NaN, denormal, signaling NaN


def f16_words(tile) -> None:
    """Each f32 -> f16 `arith.truncf` of a 1-D vector in non-temporal tile `tile`: its result
    passed on as its i16 words through `_opaque`. With AVX512-FP16 (f16 a legal vector element),
    LLVM 22's x86 backend selects no non-temporal store of an f16 vector: an aligned one became
    `vmovaps`, an element-aligned one `movnti` pieces (test/numeric/test_vectorized.py), and a
    bitcast to i16 before the store is folded away. Without AVX512-FP16 the words are what LLVM
    stores anyway; the inline asm emits no instruction."""
    for op in ops_named(tile, "arith.truncf"):
        src, result = op.operands[0].type, op.results[0].type
        if not isinstance(src, ir.VectorType) or ir.VectorType(src).rank != 1 or not isinstance(ir.VectorType(result).element_type, ir.F16Type):
            continue
        n = ir.VectorType(result).shape[0]
        size = next((k for k in (32, 16, 8) if n % k == 0), None)  # an asm operand is one whole register
        if size is None:
            continue
        words = ir.VectorType.get([n], ir.IntegerType.get_signless(16))
        with ir.InsertionPoint(op), op.location:
            bits = arith.bitcast(words, arith.truncf(result, op.operands[0]))
            value = arith.bitcast(result, concatenated([_opaque(p) for p in _pieces(bits, size)]))
        op.results[0].replace_all_uses_with(value)
        op.erase()


def _opaque(v: ir.Value) -> ir.Value:
    """`v` (a vector of i16 words) through an empty inline asm (no instruction): LLVM's
    instruction selector otherwise folds the bitcast of a bf16 or f16 conversion's result into
    the store after it, and a bf16 or f16 vector store loses its non-temporal hint (`vmovaps`
    where `vmovntdq` was asked for); the branch of a tested bf16 tile hides it the same way."""
    return llvm.inline_asm(v.type, [v], "", "=v,0")


def _pieces(v: ir.Value, size: int) -> list:
    t = ir.VectorType.get([size], ir.VectorType(v.type).element_type)
    return [vector.extract_strided_slice(t, v, [c], [size], [1]) for c in range(0, ir.VectorType(v.type).shape[0], size)]


def _nan_or_subnormal(v: ir.Value) -> ir.Value:
    """i1: some lane of f32 vector `v` (16k lanes) is a NaN or a subnormal (one `vfpclassps` per
    16 lanes, or-reduced)."""
    mask = ir.VectorType.get([16], ir.IntegerType.get_signless(1))
    classes = arith.constant(ir.IntegerType.get_signless(32), FPCLASS_NAN_OR_SUBNORMAL)
    found = [llvm.call_intrinsic(mask, "llvm.x86.avx512.fpclass.ps.512", [p, classes], [], []) for p in _pieces(v, 16)]
    any_ = found[0]
    for f in found[1:]:
        any_ = arith.ori(any_, f)
    return vector.reduction(ir.IntegerType.get_signless(1), vector.CombiningKind.OR, any_)


def _converted(v: ir.Value) -> ir.Value:
    """f32 vector `v` (16k lanes) rounded to bf16 by `vcvtne2ps2bf16` (32 lanes per instruction;
    its second operand gives the low half) and `vcvtneps2bf16` for a last 16."""
    bf16 = ir.BF16Type.get()
    pieces = _pieces(v, 16)
    out = []
    for k in range(0, len(pieces) - 1, 2):
        out.append(llvm.call_intrinsic(ir.VectorType.get([32], bf16), "llvm.x86.avx512bf16.cvtne2ps2bf16.512", [pieces[k + 1], pieces[k]], [], []))
    if len(pieces) % 2:
        out.append(llvm.call_intrinsic(ir.VectorType.get([16], bf16), "llvm.x86.avx512bf16.cvtneps2bf16.512", [pieces[-1]], [], []))
    return concatenated(out)
