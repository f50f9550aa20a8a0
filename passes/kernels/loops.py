"""What the kernels' bodies share, so that each kernel supplies its inner tile only (as IREE's
mmt4d shares its outer loops among tile functions): `Hoisted`, a body's constants made once at
the top of its block, with the row loop by full tiles (`full_tiles`) then the last rows by tiles
of the powers of two below a full tile (`tail_rows`), and the unpacking of two 4-bit fields
(`nibbles`) and the rounding of small values half to even (`roundeven`); `fenced`, a float value
kept apart from the arithmetic after it (no FMA); `finite_clamp`, a clamp of a value taken as
finite (`FINITE`); `row_workgroups`, the workgroups of a row-by-row dispatch; `rows_blocks`, the
rows x blocks nest; `each_block`, that nest over x's blocks with their largest |x| (the
dispatches that quantize x); `vpdpbusd`, VNNI's dot product; `x86_max`, `x86_min` and `permute`,
x86's vmaxps, vminps and vpermps on f32 vectors.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, scf, vector

from ..lazy import llvm

# by i32 lanes: acc += sum of 4 (u8 x s8) products in each; 16 lanes AVX-512 VNNI's, 8 lanes
# AVX-VNNI's (VEX-encoded on a CPU without AVX-512 VL: LLVM picks the encoding from the target)
VPDPBUSD = {16: "llvm.x86.avx512.vpdpbusd.512", 8: "llvm.x86.avx512.vpdpbusd.256"}
FENCE = "llvm.arithmetic.fence"  # its operand's value as computed: no float op is fused across it
# v + 1.5 * 2^23 lies in [2^23, 2^24), where f32's spacing is 1, for |v| < 2^22: the addition
# rounds v half to even (1.5 * 2^23 is even), the subtraction is exact; +-inf and NaN stay.
ROUND = 1.5 * 2**23
# The float ops of a value that is finite, or whose code means nothing when it is not (nnan: one
# vmaxps or vminps, no NaN compare and blend), and only added to ROUND or a zero point after, which
# give -0 and +0 one sum (nsz: no fix-up of -0 against +0: two vpternlogd, or four and/or on AVX2).
FINITE = "#arith.fastmath<nnan,nsz>"
# x86's f32 vector ops by lanes (AVX2's 8, AVX-512's 16): `permute`, a vector's elements by index
# (vpermps); `x86_max` and `x86_min`, b in a lane where either operand is NaN (one vmaxps or
# vminps, where maxnum and minnum add a NaN test and a blend); AVX-512's take a rounding (4: MXCSR's)
PERMUTE = {8: "llvm.x86.avx2.permps", 16: "llvm.x86.avx512.permvar.sf.512"}
MAX = {8: ("llvm.x86.avx.max.ps.256", ()), 16: ("llvm.x86.avx512.max.ps.512", (4,))}
MIN = {8: ("llvm.x86.avx.min.ps.256", ()), 16: ("llvm.x86.avx512.min.ps.512", (4,))}
# Rows of a row-by-row dispatch (x's range and codes, a softmax's rows): at most this many
# workgroups, one a row where there are fewer (docs/iree.md#dynamic-int8-matmuls).
WORKGROUPS = 8


def row_workgroups(rows: int | None) -> int:
    """The workgroups of a row-by-row dispatch over `rows` rows (None: known at run time)."""
    return WORKGROUPS if rows is None else max(1, min(WORKGROUPS, rows))


def _x86(h: Hoisted, table: dict, a: ir.Value, b: ir.Value) -> ir.Value:
    name, extra = table[ir.VectorType(a.type).shape[0]]
    return llvm.call_intrinsic(a.type, name, [a, b, *(h.scalar(ir.IntegerType.get_signless(32), v) for v in extra)], [], [])


def x86_max(h: Hoisted, a: ir.Value, b: ir.Value) -> ir.Value:
    """x86's max of f32 vectors a and b (8 or 16 lanes): b in a lane where either is NaN."""
    return _x86(h, MAX, a, b)


def x86_min(h: Hoisted, a: ir.Value, b: ir.Value) -> ir.Value:
    """x86's min of f32 vectors a and b (8 or 16 lanes): b in a lane where either is NaN."""
    return _x86(h, MIN, a, b)


def permute(h: Hoisted, table, index: ir.Value) -> ir.Value:
    """table[index] in each lane of an i32 vector `index` (8 or 16 lanes, each below 8), `table`
    8 f32 values (a constant made once)."""
    vf = ir.VectorType.get(ir.VectorType(index.type).shape, ir.F32Type.get())
    lanes = vf.shape[0]
    values = h.dense(vf, np.array(list(table) * (lanes // 8), np.float32), ("table", str(vf), tuple(float(v) for v in table)))
    return llvm.call_intrinsic(vf, PERMUTE[lanes], [values, index], [], [])


def finite_clamp(q: ir.Value, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """min(max(q, lo), hi) of a q as FINITE says: one vmaxps and one vminps."""
    fast = ir.Attribute.parse(FINITE)
    return arith.minimumf(arith.maximumf(q, lo, fastmath=fast), hi, fastmath=fast)


def fenced(v: ir.Value) -> ir.Value:
    """The float value v, rounded as computed: IREE marks every fmul, fadd and fsub of its LLVM
    code `contract` (iree-codegen-add-fast-math-flags), which lets LLVM fuse a product and the
    addition reading it into one FMA, one rounding where the kernels' arithmetic rounds twice
    (s * float(d), then + b: docs/semantics.md#the-integer-route-of-qdq-matmuls). A product read
    by an addition goes through this fence."""
    return llvm.call_intrinsic(v.type, FENCE, [v], [], [])


def _index(v: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), v)


class Hoisted:
    """A kernel body's constants, made once each at the top of the block being built (they are
    used in several regions)."""

    def __init__(self):
        self.top = ir.InsertionPoint.at_block_begin(ir.InsertionPoint.current.block)
        self.c = {}

    def _constant(self, key, make) -> ir.Value:
        if key not in self.c:
            with self.top:
                self.c[key] = make()
        return self.c[key]

    def const(self, v: int) -> ir.Value:
        return self._constant(v, lambda: _index(v))

    def splat(self, t: ir.VectorType, attr: ir.Attribute, key) -> ir.Value:
        """A vector constant of type t, every element `attr` (made once per `key`)."""
        return self._constant(("splat", key), lambda: arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr)))

    def dense(self, t: ir.VectorType, values, key) -> ir.Value:
        """A vector constant of type t holding `values` (made once per `key`)."""
        return self._constant(("dense", key), lambda: arith.constant(t, ir.DenseElementsAttr.get(np.asarray(values), type=t)))

    def splat_int(self, t: ir.VectorType, v: int) -> ir.Value:
        """An integer vector constant of type t, every element v."""
        return self.splat(t, ir.IntegerAttr.get(t.element_type, v), (str(t), v))

    def nibbles(self, v: ir.Value) -> list:
        """The two 4-bit fields of each element of the integer vector v (values below 256):
        [v & 15, v >> 4], the low field first (the earlier row of K in every layout here)."""
        t = ir.VectorType(v.type)
        return [arith.andi(v, self.splat_int(t, 15)), arith.shrui(v, self.splat_int(t, 4))]

    def roundeven(self, v: ir.Value) -> ir.Value:
        """roundeven(v) of an f32 vector or scalar v whose finite elements are below 2^22 in
        magnitude (the caller clamps first), in two additions (`ROUND`): IREE expands
        `math.roundeven` into about 25 instructions a vector (docs/iree.md#rounding-in-the-kernels)."""
        t = v.type
        if isinstance(t, ir.VectorType):
            magic = self.splat(ir.VectorType(t), ir.FloatAttr.get_f32(ROUND), ("round", str(t)))
        else:
            magic = self._constant(("round", str(t)), lambda: arith.constant(t, ROUND))
        return arith.subf(arith.addf(v, magic), magic)

    def workgroup_rows(self, m, workgroup, count: int) -> tuple:
        """The rows [r0, r1) of `workgroup` of `count` splitting m rows: ceil(m / count) each, the
        last ones fewer or none."""
        each = arith.divui(arith.addi(m, self.const(count - 1)), self.const(count))
        r0 = arith.minui(arith.muli(workgroup, each), m)
        return r0, arith.minui(arith.addi(r0, each), m)

    def value(self, n) -> ir.Value:
        """An index known here (an int) or at run time, as a value."""
        return self.const(n) if isinstance(n, int) else n

    def whole_tiles(self, m, most: int):
        """The rows of m in full tiles of `most` rows: m - m mod most (an int where m is one)."""
        if isinstance(m, int):
            return m // most * most
        return arith.muli(arith.divui(m, self.const(most)), self.const(most))

    def full_tiles(self, full, most: int, tile, at=None) -> None:
        """`tile(r0, most)` for r0 = at (0 if None), at + most, ... below `full` (`whole_tiles`)."""
        loop = scf.ForOp(self.const(0) if at is None else at, full, self.const(most))
        with ir.InsertionPoint(loop.body):
            tile(loop.induction_variable, most)
            scf.YieldOp([])

    def scalar(self, t: ir.Type, value) -> ir.Value:
        """A scalar constant of type t (an integer or float type)."""
        return self._constant(("scalar", str(t), value), lambda: arith.constant(t, value))

    def tail_rows(self, at, m, most: int, tile) -> None:
        """`tile(r0, rows)` over the rows from `at` to `m` (fewer than `most`): by tiles of the
        powers of two below `most`, largest first, at most one each."""
        for rows in [1 << i for i in range(most.bit_length()) if 1 << i < most][::-1]:
            fits = arith.cmpi(arith.CmpIPredicate.ule, arith.addi(at, self.const(rows)), m)
            branch = scf.IfOp(fits, [ir.IndexType.get()], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                tile(at, rows)
                scf.YieldOp([arith.addi(at, self.const(rows))])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([at])
            at = branch.results[0]


def vpdpbusd(acc: ir.Value, u8: ir.Value, s8: ir.Value) -> ir.Value:
    """acc (16 or 8 x i32) plus, in each lane, the 4 products of the lane's u8 bytes by its s8
    bytes (4 bytes a lane each): `vpdpbusd` (AVX-512 VNNI; 8 lanes AVX-VNNI too), exact while the
    sums stay in i32."""
    return llvm.call_intrinsic(acc.type, VPDPBUSD[ir.VectorType(acc.type).shape[0]], [acc, u8, s8], [], [])


def rows_blocks(const, m, blocks: int, init: list, body, after=None) -> None:
    """For each row r < m and block kb < blocks, in order: `body(r, kb, acc)` returns the block
    loop's next carried values (from `init`); then `after(r, results)`, if given, with its last."""
    rows = scf.ForOp(const(0), m, const(1))
    with ir.InsertionPoint(rows.body):
        r = rows.induction_variable
        loop = scf.ForOp(const(0), const(blocks), const(1), init)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(body(r, loop.induction_variable, list(loop.inner_iter_args)))
        if after is not None:
            after(r, list(loop.results))
        scf.YieldOp([])


def each_block(x, m, k: int, block: int, width: int, const, body) -> None:
    """For each row r < m of x [M, K] and block kb of `block` values: `body(r, kb, k0, amax)` in
    the block's loop, k0 = kb * block and amax = max |x| over the block (in vectors of `width`)."""
    f32 = ir.F32Type.get()
    vf = ir.VectorType.get([width], f32)
    zero = arith.constant(vf, ir.DenseElementsAttr.get_splat(vf, ir.FloatAttr.get_f32(0.0)))

    def one(r, kb, acc):
        k0 = arith.muli(kb, const(block))
        most = scf.ForOp(const(0), const(block), const(width), [zero])
        with ir.InsertionPoint(most.body):
            part = vector.load(vf, x, [r, arith.addi(k0, most.induction_variable)])
            scf.YieldOp([arith.maximumf(most.inner_iter_args[0], math.absf(part))])
        body(r, kb, k0, vector.reduction(f32, vector.CombiningKind.MAXIMUMF, most.results[0]))
        return []

    rows_blocks(const, m, k // block, [], one)
