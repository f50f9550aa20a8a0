"""dq's matmul kernel with int8 activations (opt-in, approximate): the semantics of ONNX Runtime's
MatMulNBits at `accuracy_level` 4 (MLAS's SQNBitGemm CompInt8), with AVX-512 VNNI's `vpdpbusd`.

Two dispatches per MatMul (docs/semantics.md#int8-activations states the arithmetic):
- `Quantize` (one workgroup, once per call): per row r of x and block kb of K (the weights'
  block along K), `amax = max |x|`, `xs[r, kb] = amax / 127`, `xq = roundeven(x * (127 / amax))`
  (0 where amax is 0) as int8 in [-127, 127], and `xsum[r, kb] = sum xq` (i32). xq is stored
  four values to an i32 (little endian: x[4i] in the low byte), the layout `vpdpbusd` broadcasts.
- `Int8Kernel` (one workgroup per 64 columns): per (row, block, column) the integer sum
  `d = sum_k u[k] * xq[k] - (z + bias) * xsum = sum_k (q - z) * xq`, exact in i32, then
  `y += (s * xs) * float(d)` in f32, blocks in order.

Weights `[N / W, K / L, W * 4]` bytes (W = 64 columns per workgroup, L = 8 rows of K per 32-bit
lane for 4 bits, 4 for 8 bits): the 4 bytes of column j in row group i hold, in byte b, the
biased value u = q + bias of row L*i + b (8 bits), or of rows 8i + b (low nibble) and 8i + 4 + b
(high nibble) for 4 bits. One 64-byte load is 16 columns x L rows: a mask (and a shift) give the
u8 operands of one (two) `vpdpbusd`, each against 4 values of xq broadcast to every lane. Scales
and zero points are laid out as for the exact kernel (passes/kernels/f32.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .f32 import GROUPS, Kernel, Packed, codes
from .loops import Hoisted, each_block, vpdpbusd
from .problem import FLOAT_ZERO_POINT, Problem

LANES = 16
# Rows of x per register tile and column groups per pass over the weights: ROWS x HALF i32
# accumulators (one block's sums) and as many f32 ones (y), 2 x HALF unpacked weight vectors, all
# in registers; the last rows (and M = 1) take all GROUPS at once, x's blocks and the scales read
# once, not per pass (docs/iree.md#the-kernels-tile-shapes). The QDQ kernel (one block: no f32
# sums across blocks) takes all GROUPS a pass, QDQ_HALF (docs/iree.md#the-qdq-kernels-tile).
ROWS, HALF = 4, 2
QDQ_HALF = 4


@dataclass(frozen=True)
class Quantize:
    """The dispatch quantizing x [M, K] per row and block of K (MLAS's QuantizeARow_CompInt8):
    xq [M, K / 4] i32 (4 int8 each), xs [M, K / block] f32, xsum [M, K / block] i32."""

    k: int
    block: int
    workgroups = 1
    results = ("xq", "xs", "xsum")

    def name(self) -> str:
        return f"dq_quantize_rows_k{self.k}_b{self.block}"

    def types(self) -> dict:
        dyn, f32, i32 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(32)
        blocks = self.k // self.block
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "xq": ir.MemRefType.get([dyn, self.k // 4], i32),
                "xs": ir.MemRefType.get([dyn, blocks], f32), "xsum": ir.MemRefType.get([dyn, blocks], i32)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        """Every row and block of x, at the current insertion point (one workgroup)."""
        # The widest step dividing the block (a block of 8-bit weights is a multiple of 4 only), so
        # a step never reads the next block's values, nor past the row after the last block.
        width = next(w for w in (16, 8, 4) if self.block % w == 0)
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        vf, vi, vb = (ir.VectorType.get([width], t) for t in (f32, i32, i8))
        words = ir.VectorType.get([width // 4], i32)
        zero_i = arith.constant(vi, ir.DenseElementsAttr.get_splat(vi, ir.IntegerAttr.get(i32, 0)))
        const = Hoisted().const
        limit = arith.constant(f32, 127.0)
        zero = arith.constant(f32, 0.0)

        def block(r, kb, k0, amax):
            memref.store(arith.divf(amax, limit), v["xs"], [r, kb])
            nonzero = arith.cmpf(arith.CmpFPredicate.ONE, amax, zero)
            inverse = vector.broadcast(vf, arith.select(nonzero, arith.divf(limit, amax), zero))
            fill = scf.ForOp(const(0), const(self.block), const(width), [zero_i])
            with ir.InsertionPoint(fill.body):
                k = arith.addi(k0, fill.induction_variable)
                q = arith.fptosi(vi, math.roundeven(arith.mulf(vector.load(vf, v["x"], [r, k]), inverse)))
                vector.store(vector.bitcast(words, arith.trunci(vb, q)), v["xq"], [r, arith.divui(k, const(4))])
                scf.YieldOp([arith.addi(fill.inner_iter_args[0], q)])
            memref.store(vector.reduction(i32, vector.CombiningKind.ADD, fill.results[0]), v["xsum"], [r, kb])

        each_block(v["x"], m, self.k, self.block, width, const, block)


@dataclass(frozen=True)
class Int8Kernel(Kernel):
    """The kernel of a weight shape with int8 activations (16 lanes: AVX-512 VNNI)."""

    lanes: int = LANES

    @property
    def rows_per_lane(self) -> int:
        """K rows of one column in a 32-bit lane of the weights."""
        return 32 // self.bits

    @staticmethod
    def why_not(p: Problem) -> str | None:
        """Why a problem's weights do not fit the int8-activation kernel, or None."""
        if p.float_zero_point:
            return FLOAT_ZERO_POINT
        k, n, block, bits = p.k, p.n, p.block, p.bits
        if bits not in (4, 8):
            return f"{bits}-bit weights (the kernel reads 4 and 8 bits)"
        step = 32 // bits
        if k % block or block % step:
            return f"block {block} must be a multiple of {step} dividing K = {k}"
        if n % (LANES * GROUPS):
            return f"N = {n} is not a multiple of {LANES * GROUPS} columns"
        if 2 * ((1 << bits) - 1) * 127 * block >= 1 << 31:
            return f"block {block} is too long for an exact i32 sum of int8 products"
        return None

    def name(self) -> str:
        return super().name().replace("dq_matmul_", "dq_matmul_x8_", 1)

    def quantize(self) -> Quantize:
        """The dispatch writing what the kernel reads of x."""
        return Quantize(self.k, self.block)

    def repack(self, stored: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> Packed:
        """(weights, scales, zero points or None) in the layout of the module docstring, from
        the weights as `Kernel.repack` takes them."""
        wgs, width, step = self.workgroups, self.width, self.rows_per_lane
        u = codes(stored, self.bits, self.k, self.n)
        u = u ^ np.uint8(self.bias) if self.bias else u
        rows = u.reshape(self.k // step, step, wgs, width)  # [K / L, L, wg, W]
        packed = rows[:, :4] | (rows[:, 4:] << 4) if self.bits == 4 else rows  # [K / L, 4, wg, W]
        w = np.ascontiguousarray(packed.transpose(2, 0, 3, 1)).reshape(wgs, self.k // step, width * 4)
        return Packed(w, *self.repack_blocks(scale, zero_point))

    def types(self, m: int | None = None) -> dict:
        dyn = ir.ShapedType.get_dynamic_size() if m is None else m
        exact = super().types(m)
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        table = {"xq": ir.MemRefType.get([dyn, self.k // 4], i32), "xs": ir.MemRefType.get([dyn, self.blocks], f32),
                 "xsum": ir.MemRefType.get([dyn, self.blocks], i32),
                 "w": ir.MemRefType.get([self.workgroups, self.k // self.rows_per_lane, self.width * 4], i8)}  # fmt: skip
        table.update({role: exact[role] for role in ("s", "z", "y") if role in exact})
        return table

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Hoisted):
    """The ops of one int8-activation kernel body (`half`: the column groups a pass)."""

    half = HALF

    def __init__(self, kernel: Int8Kernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        self.f32, self.i32 = ir.VectorType.get([LANES], f32), ir.VectorType.get([LANES], i32)
        self.bytes, self.small = ir.VectorType.get([4 * LANES], i8), ir.VectorType.get([LANES], i8)
        self.col0 = arith.muli(workgroup, self.const(kernel.width))

    def emit(self) -> None:
        self.groups = list(range(GROUPS))
        self.emit_groups()

    def emit_groups(self, at=None) -> None:
        """Tiles of ROWS rows by `half` column groups of `self.groups` (a pass over the workgroup's
        weights per `half` groups), then the last (m - at) mod ROWS rows by tiles of the powers
        of two below ROWS (at most one each) over all those groups at once; rows from `at` (0 if
        None) to m."""
        m, groups = self.m, self.groups
        full = self.whole_tiles(m, ROWS) if at is None else arith.addi(at, self.whole_tiles(arith.subi(m, at), ROWS))
        for first in range(0, len(groups), self.half):
            self.full_tiles(full, ROWS, lambda r0, rows, gs=groups[first : first + self.half]: self.tile(gs, r0, rows), at)
        self.tail_rows(full, m, ROWS, lambda r0, rows: self.tile(groups, r0, rows))

    def store(self, value: ir.Value, row, group: int) -> None:
        """value (16 columns of y, column group `group`) into y's row `row`."""
        vector.store(value, self.v["y"], [row, arith.addi(self.col0, self.const(group * LANES))])

    def tile(self, gs: list, r0, rows: int) -> None:
        """y[r0 : r0 + rows, columns of gs] = sum over blocks of (s * xs) * float(d)."""
        kern, v = self.k, self.v
        rs = [arith.addi(r0, self.const(i)) if i else r0 for i in range(rows)]
        zero_f = self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero_f")
        pairs = [(r, g) for r in range(rows) for g in range(len(gs))]
        blocks = scf.ForOp(self.const(0), self.const(kern.blocks), self.const(1), [zero_f] * len(pairs))
        with ir.InsertionPoint(blocks.body):
            kb, acc = blocks.induction_variable, list(blocks.inner_iter_args)
            start = self.corrected(self.starts(self.row_sums(rs, kb), kb, pairs, gs), pairs, gs, kb)
            steps = kern.block // kern.rows_per_lane
            inner = scf.ForOp(self.const(0), self.const(steps), self.const(1), start)
            with ir.InsertionPoint(inner.body):
                row = arith.addi(arith.muli(kb, self.const(steps)), inner.induction_variable)
                words = kern.rows_per_lane // 4  # i32 words of xq per step
                word0 = arith.muli(row, self.const(words)) if words > 1 else row
                xb = [[vector.bitcast(self.bytes, vector.broadcast(self.i32, self.x_word(r, arith.addi(word0, self.const(h)) if h else word0)))
                       for h in range(words)] for r in rs]  # fmt: skip
                d = list(inner.inner_iter_args)
                for gi, g in enumerate(gs):
                    wv = vector.load(self.bytes, v["w"], [self.wg, row, self.const(g * LANES * 4)])
                    parts = self.nibbles(wv) if kern.bits == 4 else [wv]
                    for ri in range(rows):
                        i = ri * len(gs) + gi
                        for h, part in enumerate(parts):
                            d[i] = self.dot(d[i], part, xb[ri][h])
                scf.YieldOp(d)
            scales = [vector.load(self.f32, v["s"], [self.wg, kb, self.const(g * LANES)]) for g in gs]
            scf.YieldOp(self.scaled(scales, rs, kb, pairs, list(inner.results), acc))
        out = [self.output(blocks.results[i], rs[r], gs[g]) for i, (r, g) in enumerate(pairs)]
        for (r, g), y in zip(pairs, self.looked_up(out)):
            self.store(y, rs[r], gs[g])

    def starts(self, sums: list, kb, pairs: list, gs: list) -> list:
        """The i32 sums' start for each (i, g) pair of `pairs`, for column group gs[g] in block kb:
        -(z + bias) * sums[i], the zero point's share of sum_k u * v over the block when v sums to
        sums[i] there, so that the loop only adds dots."""
        i32 = ir.IntegerType.get_signless(32)
        if "z" not in self.v and not self.k.bias:
            return [self.splat(self.i32, ir.IntegerAttr.get(i32, 0), "zero_i")] * len(pairs)
        minus = [arith.subi(arith.constant(i32, 0), s) for s in sums]
        if "z" in self.v:
            zb = [arith.extui(self.i32, vector.load(self.small, self.v["z"], [self.wg, kb, self.const(g * LANES)])) for g in gs]
            return [arith.muli(zb[g], vector.broadcast(self.i32, minus[i])) for i, g in pairs]
        first = [vector.broadcast(self.i32, arith.muli(m, arith.constant(i32, self.k.bias))) for m in minus]
        return [first[i] for i, _ in pairs]

    # What the QDQ kernel (_QdqBody) reads differently: where x's sums, x's words and the
    # per-column correction come from, which bytes vpdpbusd takes unsigned, and how a block's d
    # is scaled.
    def dot(self, acc: ir.Value, w: ir.Value, x: ir.Value) -> ir.Value:
        """acc plus the 4-byte dots of weights w (unsigned) and x (signed)."""
        return vpdpbusd(acc, w, x)

    def row_sums(self, rs: list, kb) -> list:
        """sum of xq over block kb of each row in `rs` (i32): the Quantize dispatch's xsum."""
        return [memref.load(self.v["xsum"], [r, kb]) for r in rs]

    def x_word(self, r, word) -> ir.Value:
        """Four values of xq of row r as one i32 (x[4 * word] in the low byte)."""
        return memref.load(self.v["xq"], [r, word])

    def corrected(self, start: list, pairs: list, gs: list, kb) -> list:
        return start

    def scaled(self, scales: list, rs: list, kb, pairs: list, d: list, acc: list) -> list:
        """acc + (s * xs) * float(d) for each (row, group) pair."""
        xs = [vector.broadcast(self.f32, memref.load(self.v["xs"], [r, kb])) for r in rs]
        return [vector.fma(arith.mulf(scales[g], xs[r]), arith.sitofp(self.f32, d[i]), acc[i]) for i, (r, g) in enumerate(pairs)]

    def output(self, y: ir.Value, row, group: int) -> ir.Value:
        """What is stored of 16 columns of y (f32; row `row`, column group `group`): y itself."""
        return y

    def looked_up(self, values: list) -> list:
        """The stored vectors after the epilogue's table, if any (the QDQ bodies'): as they are."""
        return values
