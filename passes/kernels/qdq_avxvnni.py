"""The exact integer kernel of QDQ MatMuls on AVX-VNNI (`QdqAvxVnniKernel`): QdqKernel's
arithmetic (passes/kernels/qdq.py; docs/semantics.md#the-integer-route-of-qdq-matmuls) on CPUs
with AVX2 and AVX-VNNI but no AVX-512 (Intel's client cores from Alder Lake and its E-core Xeons,
Sierra Forest and later), whose `vpdpbusd` works on 256-bit vectors (VEX-encoded: LLVM picks
that encoding where the target has AVX-VNNI and not AVX-512 VL).

The VNNI kernel's sums at 8 lanes, the same operands and constants: per (row, column), exactly in
i32,

    d = sum_k v * u - (zw + bias) * sum_k v + c[n]     (`direct`: d = sum_k xq * wq + c[n])

one `vpdpbusd` per 4 rows of K and 8 columns, four products a lane added without saturating (the
reason the AVX2 kernel, qdq_avx2.py, widens to i16 for `vpmaddwd` instead of `vpmaddubsw`): no
widening, half the AVX2 kernel's multiply instructions, and x read as it is, with no stack
buffer. The AVX2 kernel's tiles at 6 rows (by 2 groups of 8 columns a pass: 12 accumulators of
AVX2's 16 registers, where the AVX2 kernel's 4 rows leave vpdpbusd's latency exposed) and its
epilogue (`requantize`, `bias_add`, `mid`, `residual`, `table`, `reciprocal`; a row's codes packed
at once), so the same results bit for bit.

Layout (W = 32 columns per workgroup, 4 groups of 8): weights `[N / W, K / 4, 4 * W]` bytes, the
VNNI kernel's at 8 lanes (rows 4i ... 4i + 3 of K, column j of a group: bytes 4j ... 4j + 3 of the
group's 32); scales, zero points and c as QdqKernel lays them with 8 lanes. K a multiple of 4.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from ..lazy import llvm
from .f32 import GROUPS, Packed
from .qdq import QdqKernel, XBytes
from .qdq_avx2 import LANES, VPMADDWD, _Body
from .tail import pad

# A register tile: 6 rows by 2 column groups a pass, 12 accumulators of AVX2's 16 registers (2
# for the weights, 1 for x): vpdpbusd's latency (5 cycles) over 2 a cycle needs 10 chains in
# flight, the AVX2 kernel's 4 x 2 tile has 8 (docs/iree.md#qdq-matmuls-on-avx-vnni-hosts).
ROWS, ACCUMULATORS = 6, 12
# Steps of 4 rows of K per iteration of a pass's loop (a tail of single steps after), where K
# makes at least 4 such iterations (K >= 64); a shorter loop LLVM flattens into the other pass's
# and spills: docs/iree.md#qdq-matmuls-on-avx-vnni-hosts.
UNROLL = 4


@dataclass(frozen=True)
class QdqAvxVnniKernel(QdqKernel):
    """The exact integer kernel of a QDQ MatMul on AVX-VNNI (8 lanes, `vpdpbusd` on ymm):
    QdqKernel's contract (operands, constants, epilogues, results) at 8 lanes."""

    lanes: int = LANES

    COLUMNS: ClassVar[int] = LANES * GROUPS
    CAPS: ClassVar[bool] = True  # qdq_avx2.py's body: `Requantize.rounded_words`

    @classmethod
    def like(cls, kernel: QdqKernel, **fields) -> QdqAvxVnniKernel:
        """This class's kernel for `kernel`'s problem and epilogues, with `fields` (an AVX2 form
        taking the place of the kernel `routes.for_weights` was given)."""
        return cls(**fields, **{f.name: getattr(kernel, f.name) for f in dataclasses.fields(kernel) if f.name != "lanes"})

    def name(self) -> str:
        return super().name().replace("dq_matmul_qdq_", "dq_matmul_qdq_avxvnni_", 1)

    def emit_views(self, v: dict, m, workgroup) -> None:
        _VnniBody(self, v, m, workgroup).emit()


class _VnniBody(XBytes, _Body):
    """The AVX2 body (its epilogue; its tiles at ROWS rows) with VNNI's sums (`sums`) and row
    sums."""

    rows = ROWS

    def tail_groups(self, rows: int) -> int:
        return max(1, min(len(self.groups), ACCUMULATORS // rows))

    def __init__(self, kernel: QdqAvxVnniKernel, v: dict, m, workgroup):
        super().__init__(kernel, v, m, workgroup)
        self.bytes = ir.VectorType.get([4 * LANES], self.t8)  # a step's weights of one group, or x's word broadcast

    def sums(self, gs: list, rs: list, passes: list) -> list:
        """d of each (row of rs, group of gs), row-major, from `starts`: per pass (indices into
        gs), per 4 rows of K each group's 32 weight bytes loaded once and each row's 4 values of
        x broadcast (one word), a `vpdpbusd` per (row, group)."""
        d = list(self.starts(rs, gs))
        steps = self.k.k // 4
        unrolled = UNROLL if steps >= 4 * UNROLL else 1
        self.run_passes(d, rs, gs, passes, (steps // unrolled * unrolled, steps, unrolled), lambda acc, q, group: self.step(acc, q, rs, group))
        return d

    def run_passes(self, d: list, rs: list, gs: list, passes: list, bounds: tuple, step) -> None:
        """d (row-major over rs x gs) plus each pass's steps (`passes`: indices into gs), in place:
        bounds (whole, steps, unrolled), steps [0, whole) `unrolled` an iteration then [whole,
        steps) one at a time (ints, or index values known at run time); `step(acc, q, group)`
        adds step q's products of the pass's groups to acc."""
        whole, steps, unrolled = bounds
        for gis in passes:
            at = [ri * len(gs) + gi for ri in range(len(rs)) for gi in gis]  # d's indices this pass adds to
            group = [gs[gi] for gi in gis]
            for lo, hi, unroll in ((0, whole, unrolled), (whole, steps, 1)):
                if isinstance(lo, int) and isinstance(hi, int) and lo == hi:
                    continue
                loop = scf.ForOp(self.value(lo), self.value(hi), self.const(unroll), [d[i] for i in at])
                with ir.InsertionPoint(loop.body):
                    acc = list(loop.inner_iter_args)
                    for u in range(unroll):
                        q = arith.addi(loop.induction_variable, self.const(u)) if u else loop.induction_variable
                        acc = step(acc, q, group)
                    scf.YieldOp(acc)
                for i, total in zip(at, loop.results):
                    d[i] = total

    def step(self, acc: list, step, rs: list, gs: list, x_step=None) -> list:
        """acc (row-major over rs x gs) plus the products of rows 4 step ... 4 step + 3 of K (of
        the weights' row `step` and x's values 4 x_step ..., x_step being step unless given)."""
        w = [vector.load(self.bytes, self.v["w"], [self.wg, step, self.const(g * 4 * LANES)]) for g in gs]
        out = list(acc)
        for ri, r in enumerate(rs):
            x = vector.bitcast(self.bytes, vector.broadcast(self.i32, self.x_word(r, step if x_step is None else x_step)))
            for gi in range(len(gs)):
                i = ri * len(gs) + gi
                out[i] = self.dot(out[i], w[gi], x)
        return out


# vpmaddubsw (AVX2): uint8 x by int8 w, each two neighbouring products added in i16 with
# saturation: exact for every x where |w[2i]| + |w[2i + 1]| <= SAFE (255 * 128 < 2^15 - 1).
VPMADDUBSW = "llvm.x86.avx2.pmadd.ub.sw"
SAFE = 128
# Fix steps a workgroup may add to its K / 4 steps (`QdqAvx2BytesKernel.fixes`), else the
# sign-split form (QdqAvx2SignKernel): a fix step costs a main step and the sign-split form about
# 1.3 of them, so a quarter keeps a gain (a bound, not a tuned value):
# docs/iree.md#qdq-matmuls-on-avx2-hosts-vpmaddubsw.
MAX_FIX_SHARE = 0.25


def split_safe(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ws, wf) with w = ws + wf (int64 [K, N], K even), every pair of rows (2i, 2i + 1) of each
    column of both within SAFE: a pair of w beyond it is clamped to [-64, 64] in ws, the rest
    (in [-64, 63]) is wf; wf is zero elsewhere."""
    a, b = w[0::2], w[1::2]
    bad = np.repeat(np.abs(a) + np.abs(b) > SAFE, 2, axis=0)
    ws = np.where(bad, np.clip(w, -64, 64), w)
    return ws, w - ws


def fix_steps(wf: np.ndarray, workgroups: int, width: int) -> list:
    """Per workgroup (its `width` columns of wf [K, workgroups * width]), the steps (4 rows of K)
    where its wf is not zero."""
    k = wf.shape[0]
    nonzero = (wf.reshape(k // 4, 4, workgroups, width) != 0).any(axis=(1, 3))  # [K / 4, wg]
    return [np.flatnonzero(nonzero[:, g]) for g in range(workgroups)]


@dataclass(frozen=True)
class QdqAvx2BytesKernel(QdqAvxVnniKernel):
    """A QDQ MatMul of int8 weights without a zero point on AVX2 whose weights `vpmaddubsw` takes
    exactly, in the direct form for uint8 and int8 xq alike (int8 xq read as xq ^ 0x80 = xq + 128,
    its c made for zx + 128: `direct`): the AVX-VNNI kernel's layout and tiles at 4 rows,
    each `vpdpbusd` done by `vpmaddubsw` (i16 pair sums, exact: `split_safe`) and `vpmaddwd`
    against ones, then `vpaddd`. The weights are ws + wf (`split_safe`); ws is the main loop's,
    and each workgroup adds wf's few nonzero steps (`fixes` of them, padded with zero steps)
    after it, reading x at the step's index: results bit for bit the VNNI kernel's
    (docs/iree.md#qdq-matmuls-on-avx2-hosts-vpmaddubsw). Weights [N / W, K / 4 + fixes +
    ceil(fixes / 32), 4 * W] bytes: ws's K / 4 rows, the fix steps' wf rows, then their step
    indices as i32, 32 a row."""

    fixes: int = 0

    @property
    def direct(self) -> bool:
        """xq (uint8; int8 flipped to xq + 128) and the weights' codes as they are, d = sum_k u wq
        + c[n] with c[n] = -(zx [+ 128 for int8 xq]) * sum_k wq: QdqKernel.repack's correction of
        the direct form holds for both (int8's c starts from -zx; `of` takes no run-time int8 xq)."""
        return self.signed and not self.zero_point

    @property
    def flips_x(self) -> bool:
        """vpmaddubsw's operand is unsigned: int8 xq read as xq ^ 0x80 = xq + 128."""
        return not self.unsigned_x

    @classmethod
    def of(cls, kernel: QdqKernel, codes: np.ndarray) -> QdqKernel:
        """This kernel for `kernel`'s problem and these weights' codes [K, N], or `kernel`
        where it does not apply (weights unsigned or with a zero point; int8 xq quantized at run
        time, whose zx the body would need as zx + 128; too many fix steps: `routes.for_weights`
        then takes the sign-split form)."""
        if not (kernel.signed and not kernel.zero_point) or (kernel.dynamic and not kernel.unsigned_x):
            return kernel
        w = pad(np.reshape(codes, (kernel.k, kernel.n)).view(np.int8).astype(np.int64), kernel.columns)  # the same 32-column workgroups
        fixes = max(len(f) for f in fix_steps(split_safe(w)[1], kernel.workgroups, kernel.width))
        if fixes > MAX_FIX_SHARE * kernel.k / 4:
            return kernel
        return cls.like(kernel, fixes=fixes)

    @property
    def index_rows(self) -> int:
        return -(-self.fixes // 32)

    def name(self) -> str:
        return QdqKernel.name(self).replace("dq_matmul_qdq_", "dq_matmul_qdq_avx2b_", 1) + f"_f{self.fixes}"

    def layout(self, codes: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> Packed:
        w = np.reshape(codes, (self.k, self.n)).view(np.int8).astype(np.int64)
        ws, wf = split_safe(w)
        packed = super().layout(ws.astype(np.int8).view(np.uint8), scale, zero_point)
        fixes = fix_steps(wf, self.workgroups, self.width)
        rows = np.zeros((self.workgroups, self.fixes, 4 * self.width), np.uint8)
        index = np.zeros((self.workgroups, self.index_rows * 32), np.int32)
        if self.fixes:
            laid = super().layout(wf.astype(np.int8).view(np.uint8), scale, zero_point).w  # [wg, K / 4, 4 W]
            for g, steps in enumerate(fixes):
                rows[g, : len(steps)] = laid[g, steps]
                index[g, : len(steps)] = steps
        extra = index.view(np.uint8).reshape(self.workgroups, self.index_rows, 4 * self.width)
        return packed._replace(w=np.ascontiguousarray(np.concatenate([packed.w, rows, extra], axis=1)))

    def types(self, m: int | None = None) -> dict:
        table = super().types(m)
        table["w"] = ir.MemRefType.get([self.workgroups, self.k // 4 + self.fixes + self.index_rows, 4 * self.width], ir.IntegerType.get_signless(8))
        return table

    def emit_views(self, v: dict, m, workgroup) -> None:
        _BytesBody(self, v, m, workgroup).emit()


class _PairsBody(_VnniBody):
    """The AVX-VNNI body's tiles at 4 rows (each product needs a register more than vpdpbusd's)
    for the `vpmaddubsw` forms, and their product of 4 bytes (`pairs_dot`)."""

    rows = 4

    def tail_groups(self, rows: int) -> int:
        return max(1, min(len(self.groups), 8 // rows))

    def pairs_dot(self, acc: ir.Value, u: ir.Value, s: ir.Value) -> ir.Value:
        """acc plus each lane's 4-byte dot of unsigned bytes u and signed bytes s: `vpmaddubsw`'s
        i16 pair sums (the caller rules out their saturation), then `vpmaddwd` against ones."""
        ones = self.splat(self.words, ir.IntegerAttr.get(self.t16, 1), "ones")
        pairs = llvm.call_intrinsic(self.words, VPMADDUBSW, [u, s], [], [])
        return arith.addi(acc, llvm.call_intrinsic(self.i32, VPMADDWD, [pairs, ones], [], []))


class _BytesBody(_PairsBody):
    """The AVX-VNNI body with `vpmaddubsw` + `vpmaddwd` for `vpdpbusd`, and the fix steps after
    each pass."""

    def dot(self, acc: ir.Value, w: ir.Value, x: ir.Value) -> ir.Value:
        return self.pairs_dot(acc, x, w)

    def sums(self, gs: list, rs: list, passes: list) -> list:
        d = super().sums(gs, rs, passes)
        fixes = self.k.fixes
        if not fixes:
            return d
        first, index0 = self.k.k // 4, self.k.k // 4 + fixes
        i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        for gis in passes:
            at = [ri * len(gs) + gi for ri in range(len(rs)) for gi in gis]
            loop = scf.ForOp(self.const(0), self.const(fixes), self.const(1), [d[i] for i in at])
            with ir.InsertionPoint(loop.body):
                e = loop.induction_variable
                row = arith.addi(self.const(index0), arith.divui(e, self.const(32)))
                col = arith.muli(arith.remui(e, self.const(32)), self.const(4))
                four = vector.load(ir.VectorType.get([4], i8), self.v["w"], [self.wg, row, col])
                word = vector.extract(vector.bitcast(ir.VectorType.get([1], i32), four), [], [0])
                step = arith.index_cast(ir.IndexType.get(), word)
                acc = self.step(list(loop.inner_iter_args), arith.addi(self.const(first), e), rs, [gs[gi] for gi in gis], step)
                scf.YieldOp(acc)
            for i, total in zip(at, loop.results):
                d[i] = total
        return d


# Values of K per chunk of a tile's rows staged as |v| and v's sign mask (two [4, CHUNK / 4] i32
# stack buffers, 4 KB each), as the vpmaddwd kernel stages its widened x (qdq_avx2.py).
SIGN_CHUNK = 1024
# A sign-split MatMul of at most WIDE_COLUMNS columns, K of at most WIDE_K and at least WIDE_ROWS
# rows is one column workgroup (`column_blocks`): a tile's rows staged once for all the columns,
# each row of y written by one workgroup, the rows over QdqKernel.row_groups of them
# (docs/iree.md#one-column-workgroup-on-avx2).
WIDE_COLUMNS, WIDE_K, WIDE_ROWS = 192, 256, 128


@dataclass(frozen=True)
class QdqAvx2SignKernel(QdqAvxVnniKernel):
    """A QDQ MatMul of int8 weights without a zero point on AVX2, any codes (per column too) and
    either kind of xq: the arithmetic of the vpmaddwd kernel (qdq_avx2.py: v = xq as int8, uint8
    flipped, xq ^ 0x80 = xq - 128; u = wq; d = sum_k v * u + c[n], c[n] = -(zx [- 128]) * sum_k wq),
    the products by `vpmaddubsw` on the VNNI layout. v is split into its magnitude a = |v| (0 ...
    128, vpmaddubsw's unsigned operand) and its sign mask m (-1 where v < 0), and each weight byte
    is u ^ m: where v < 0, a * ~u = (-v) * (-u - 1) = v * u + v. Every product lies in [-128 *
    128, 128 * 127], so a pair's i16 sum cannot saturate, and

        sum_k v * u = sum_k a * (u ^ m) + sum_{k: v < 0} a

    the last term one per row. The rows' a and m are staged per chunk of K on the stack once per
    tile (`_SignBody.stage`); then one `vpxor`, `vpmaddubsw` and `vpmaddwd` against ones a
    product of 4 rows of K and 8 columns: results bit for bit the vpmaddwd kernel's, its MatMuls
    1.1-1.15x as fast (docs/iree.md#qdq-matmuls-on-avx2-hosts-the-sign-split-form)."""

    # K in steps of 16, the AVX2 kernel's (`of` takes its problems): `_SignBody.stage` stages a
    # chunk's K mod 32 in one 16-byte step
    K_STEP: ClassVar[int] = 16

    column_blocks: int = 1  # COLUMNS-column blocks a workgroup takes (`of`)

    @property
    def width(self) -> int:
        return self.COLUMNS * self.column_blocks

    @property
    def direct(self) -> bool:
        return False  # v = xq ^ 0x80 for uint8: the magnitudes need v signed

    @property
    def bias(self) -> int:
        return 0  # u = wq as it is

    @classmethod
    def of(cls, kernel: QdqKernel) -> QdqKernel:
        """This kernel for `kernel`'s problem where its weights are int8 without a zero point, else
        `kernel`: one column workgroup where N <= WIDE_COLUMNS, K <= WIDE_K and M >= WIDE_ROWS."""
        if not (kernel.signed and not kernel.zero_point):
            return kernel
        rows = kernel.problem.rows
        wide = kernel.n <= WIDE_COLUMNS and kernel.k <= WIDE_K and rows is not None and rows >= WIDE_ROWS
        return cls.like(kernel, column_blocks=-(-kernel.n // cls.COLUMNS) if wide else 1)

    def name(self) -> str:
        wide = f"_w{self.width}" if self.column_blocks > 1 else ""
        return QdqKernel.name(self).replace("dq_matmul_qdq_", "dq_matmul_qdq_avx2s_", 1) + wide

    def emit_views(self, v: dict, m, workgroup) -> None:
        _SignBody(self, v, m, workgroup).emit()


class _SignBody(_PairsBody):
    """The 4-row tiles with QdqAvx2SignKernel's products: per chunk of K, the rows' a and m staged
    (`stage`), then per pass the steps (`sign_step`)."""

    def sums(self, gs: list, rs: list, passes: list) -> list:
        kern, i32 = self.k, self.t32
        words = ir.MemRefType.get([self.rows, SIGN_CHUNK // 4], i32)
        mags = self._constant("x_magnitudes", lambda: memref.alloca(words, [], []))
        signs = self._constant("x_signs", lambda: memref.alloca(words, [], []))
        # a chunk's values of K: known here unless the last chunk is partial
        static = min(SIGN_CHUNK, kern.k) if kern.k % SIGN_CHUNK == 0 or kern.k < SIGN_CHUNK else None
        unrolled = UNROLL if min(SIGN_CHUNK, kern.k) // 4 >= 4 * UNROLL else 1
        chunks = scf.ForOp(self.const(0), self.const(kern.k), self.const(SIGN_CHUNK), self.starts(rs, gs))
        with ir.InsertionPoint(chunks.body):
            kc = chunks.induction_variable
            size = static if static is not None else arith.minui(self.const(SIGN_CHUNK), arith.subi(self.const(kern.k), kc))
            negative = self.stage(rs, kc, size, mags, signs)
            d = [arith.addi(t, vector.broadcast(self.i32, negative[i // len(gs)])) for i, t in enumerate(chunks.inner_iter_args)]
            steps = size // 4 if isinstance(size, int) else arith.divui(size, self.const(4))
            whole = self.whole_tiles(steps, unrolled)
            row0 = arith.divui(kc, self.const(4))
            self.run_passes(d, rs, gs, passes, (whole, steps, unrolled),
                            lambda acc, q, group: self.sign_step(acc, q, arith.addi(row0, q), rs, group, mags, signs))
            scf.YieldOp(d)
        return list(chunks.results)

    def sign_step(self, acc: list, q, row, rs: list, gs: list, mags, signs) -> list:
        """acc (row-major over rs x gs) plus the products of the chunk's step q (4 rows of K; the
        weights' row `row`): each row's a and m broadcast from the stage, each group's weights
        loaded once."""
        w = [vector.load(self.bytes, self.v["w"], [self.wg, row, self.const(g * 4 * LANES)]) for g in gs]
        out = list(acc)
        for ri in range(len(rs)):
            a, m = (vector.bitcast(self.bytes, vector.broadcast(self.i32, memref.load(b, [self.const(ri), q]))) for b in (mags, signs))
            for gi in range(len(gs)):
                i = ri * len(gs) + gi
                out[i] = self.pairs_dot(out[i], a, arith.xori(w[gi], m))
        return out

    def stage(self, rs: list, kc, size, mags, signs) -> list:
        """Each row's a = |v| and sign mask m of the chunk's `size` values of K from kc into the
        buffers, and sum_{k: v < 0} a of the chunk (i32 per row): 32 bytes a step, then the last
        chunk's K mod 32 values (0 or 16: K_STEP; every other chunk has none) in one step."""
        i8, i32 = self.t8, self.t32
        ones8 = self.splat(self.bytes, ir.IntegerAttr.get(i8, 1), "ones8")
        zero = self.splat(self.i32, ir.IntegerAttr.get(i32, 0), "zero_i")
        full = self.whole_tiles(size, 32)

        def wide(acc, negative):  # a <= 128: vpmaddubsw's i16 sums exact
            return self.pairs_dot(acc, negative, ones8)

        def half(acc, negative):
            words = ir.VectorType.get([16], i32)
            return arith.addi(acc, vector.reduction(i32, vector.CombiningKind.ADD, arith.extui(words, negative)))

        loop = scf.ForOp(self.const(0), self.value(full), self.const(32), [zero] * len(rs))
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(self.stage_step(rs, kc, loop.induction_variable, 32, list(loop.inner_iter_args), (mags, signs), wide))
        sums = [vector.reduction(i32, vector.CombiningKind.ADD, v) for v in loop.results]
        if self.k.k % 32 == 0:
            return sums
        if isinstance(size, int):
            return self.stage_step(rs, kc, self.value(full), 16, sums, (mags, signs), half)
        last = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ne, full, size), [i32] * len(rs), has_else=True)
        with ir.InsertionPoint(last.then_block):
            scf.YieldOp(self.stage_step(rs, kc, full, 16, sums, (mags, signs), half))
        with ir.InsertionPoint(last.else_block):
            scf.YieldOp(sums)
        return list(last.results)

    def stage_step(self, rs: list, kc, kk, width: int, acc: list, buffers: tuple, add) -> list:
        """`stage`'s step of `width` bytes of each row at kc + kk: a and m stored into `buffers`
        (i32 words from kk / 4), each row's value of acc `add`(it, a & m)."""
        bytes_, stored = ir.VectorType.get([width], self.t8), ir.VectorType.get([width // 4], self.t32)
        out = []
        for ri, r in enumerate(rs):
            a, m = self.magnitude_sign(vector.load(bytes_, self.v["xq"], [r, arith.addi(kc, kk)]))
            for b, part in zip(buffers, (a, m)):
                vector.store(vector.bitcast(stored, part), b, [self.const(ri), arith.divui(kk, self.const(4))])
            out.append(add(acc[ri], arith.andi(a, m)))
        return out

    def magnitude_sign(self, x: ir.Value) -> tuple:
        """(a, m) of xq's bytes x: v = `flip`(x), a = |v| (-128's magnitude 128 as the unsigned
        byte 0x80), m = -1 where v < 0, else 0."""
        v = self.flip(x)
        t = ir.VectorType(v.type)
        zero = self.splat(t, ir.IntegerAttr.get(self.t8, 0), ("zero8", t.shape[0]))
        below = arith.cmpi(arith.CmpIPredicate.slt, v, zero)
        return math.absi(v), arith.extsi(t, below)  # vpabsb: |-128| wraps to 0x80, 128 unsigned
