"""The exact one-row route of 4-bit weights on AVX2 (`DigitAvx2Kernel`): x's base-256 digits
(`Digits`, passes/kernels/digits.py) summed against the weights with `vpmaddubsw`, for MatMuls of
one row on a module tagged `dq.avx2` without AVX-512 (docs/semantics.md#the-exact-one-row-route).

`vpmaddubsw` multiplies unsigned bytes by signed bytes and adds each two neighbouring products in
i16 with saturation. Here the unsigned bytes are 4-bit weights u = q + bias in [0, 15] and the
signed ones digits in [-128, 127], so a pair sums to at most 2 * 15 * 128 = 3,840 in magnitude,
and the 8 pairs a block of 32 values of x adds per i16 lane to at most 30,720: nothing saturates.
One `vpmaddwd` against ones then adds the two i16 lanes of each column into its i32 lane, and the
block's digit sums D_p are DigitKernel's, exactly; the rest (one f32 per block, one FMA) is its.
Weights, scales and zero points in Int8Kernel's layout with 8 lanes (32 columns a workgroup).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from ..lazy import llvm
from .digits import DIGITS, DigitKernel
from .f32 import GROUPS
from .loops import Hoisted
from .problem import Problem

VPMADDUBSW = "llvm.x86.avx2.pmadd.ub.sw"  # 16 i16 lanes: a[2i] * b[2i] + a[2i+1] * b[2i+1] (u8 x s8)
VPMADDWD = "llvm.x86.avx2.pmadd.wd"  # 8 i32 lanes: the same for i16 pairs
LANES = 8


@dataclass(frozen=True)
class DigitAvx2Kernel(DigitKernel):
    """DigitKernel's one-row body on AVX2 (8 lanes), for MatMuls of one row (a static row count:
    DigitKernel's several-rows path is 16 lanes)."""

    lanes: int = LANES

    COLUMNS: ClassVar[int] = LANES * GROUPS

    @classmethod
    def why_not(cls, p: Problem) -> str | None:
        if p.rows is None:
            return "a row count known only at run time (the AVX2 one-row route takes 1 row)"
        return super().why_not(p)  # DigitKernel's rules, at this kernel's columns

    def name(self) -> str:
        return super().name().replace("dq_matmul_digits_", "dq_matmul_digits_avx2_", 1)

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Hoisted):
    """The ops of one DigitAvx2Kernel body: each row, block of x and column group by itself (16
    i16 accumulators would fill AVX2's 16 registers)."""

    def __init__(self, kernel: DigitAvx2Kernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        self.t8, self.t16, self.t32 = (ir.IntegerType.get_signless(b) for b in (8, 16, 32))
        self.f32, self.i32 = ir.VectorType.get([LANES], ir.F32Type.get()), ir.VectorType.get([LANES], self.t32)
        self.bytes, self.words = ir.VectorType.get([4 * LANES], self.t8), ir.VectorType.get([2 * LANES], self.t16)
        self.small = ir.VectorType.get([LANES], self.t8)
        self.col0 = arith.muli(workgroup, self.const(kernel.width))

    def emit(self) -> None:
        kern, v = self.k, self.v
        zero_f = self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero_f")
        rows = scf.ForOp(self.const(0), self.m, self.const(1))
        with ir.InsertionPoint(rows.body):
            r = rows.induction_variable
            blocks = scf.ForOp(self.const(0), self.const(kern.k // kern.xblock), self.const(1), [zero_f] * GROUPS)
            with ir.InsertionPoint(blocks.body):
                b, acc = blocks.induction_variable, list(blocks.inner_iter_args)
                kb = arith.divui(arith.muli(b, self.const(kern.xblock)), self.const(kern.block))
                at = arith.muli(b, self.const(DIGITS))
                minus = [arith.subi(self.scalar(self.t32, 0), memref.load(v["xsum"], [r, arith.addi(at, self.const(p))])) for p in range(DIGITS)]
                xs = [vector.broadcast(self.f32, memref.load(v["xs"], [r, arith.addi(arith.muli(b, self.const(2)), self.const(i))])) for i in range(2)]
                scf.YieldOp([self.group(r, b, kb, g, minus, xs, acc[g]) for g in range(GROUPS)])
            for g in range(GROUPS):
                vector.store(blocks.results[g], v["y"], [r, arith.addi(self.col0, self.const(g * LANES))])
            scf.YieldOp([])

    def group(self, r, b, kb, g: int, minus: list, xs: list, acc: ir.Value) -> ir.Value:
        """acc + y of block b of x for column group g: the digit sums D_p in i16, widened."""
        kern, v = self.k, self.v
        mask = self.splat(self.bytes, ir.IntegerAttr.get(self.t8, 15), "mask")
        four = self.splat(self.bytes, ir.IntegerAttr.get(self.t8, 4), "four")
        ones = self.splat(self.words, ir.IntegerAttr.get(self.t16, 1), "ones")
        sums = [self.splat(self.words, ir.IntegerAttr.get(self.t16, 0), "zero16")] * DIGITS
        steps = kern.xblock // kern.rows_per_lane  # 8 rows of K (two words of each digit) a step
        for step in range(steps):
            row = arith.addi(arith.muli(b, self.const(steps)), self.const(step))
            base = arith.muli(row, self.const(2 * DIGITS))
            wv = vector.load(self.bytes, v["w"], [self.wg, row, self.const(g * LANES * 4)])
            parts = [arith.andi(wv, mask), arith.shrui(wv, four)]  # rows 8i + b, 8i + 4 + b
            for p in range(DIGITS):
                for h, part in enumerate(parts):  # word of digit p of rows 8 row + 4 h ... + 3
                    word = memref.load(v["xq"], [r, arith.addi(base, self.const(h * DIGITS + p))])
                    digits = vector.bitcast(self.bytes, vector.broadcast(self.i32, word))
                    sums[p] = arith.addi(sums[p], llvm.call_intrinsic(self.words, VPMADDUBSW, [part, digits], [], []))
        # D_p = sum_k c_p u - (z + bias) * sum_k c_p
        if "z" in v:
            zb = arith.extui(self.i32, vector.load(self.small, v["z"], [self.wg, kb, self.const(g * LANES)]))
            starts = [arith.muli(zb, vector.broadcast(self.i32, m)) for m in minus]
        else:
            starts = [vector.broadcast(self.i32, arith.muli(m, self.scalar(self.t32, kern.bias))) for m in minus]
        d = [arith.addi(starts[p], llvm.call_intrinsic(self.i32, VPMADDWD, [sums[p], ones], [], [])) for p in range(DIGITS)]
        i256 = self.splat(self.i32, ir.IntegerAttr.get(self.t32, 256), 256)
        high = arith.sitofp(self.f32, arith.addi(arith.muli(d[3], i256), d[2]))
        low = arith.sitofp(self.f32, arith.addi(arith.muli(d[1], i256), d[0]))
        y = vector.fma(high, self.splat(self.f32, ir.FloatAttr.get_f32(65536.0), "f65536"), low)
        scale = vector.load(self.f32, v["s"], [self.wg, kb, self.const(g * LANES)])
        return vector.fma(arith.mulf(scale, xs[1]), arith.mulf(y, xs[0]), acc)
