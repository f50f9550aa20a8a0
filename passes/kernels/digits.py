"""The exact one-row route of 4-bit weights (AVX-512 VNNI): x written as base-256 digits per
block (`Digits`), then the kernel summing them exactly in integers (`DigitKernel`;
docs/semantics.md#the-exact-one-row-route).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .f32 import GROUPS, Kernel
from .f32 import _Body as _F32Body
from .int8 import LANES, Int8Kernel, Quantize, _Body
from .loops import Hoisted, each_block, rows_blocks, vpdpbusd
from .problem import FLOAT_ZERO_POINT, Problem


# --- The exact one-row route: x as four base-256 digits per block --------------------------------
#
# At one row (a token) the exact kernel is bound by its two conversions and two FMAs per 32
# weights; summing integers instead takes about half the time
# (docs/iree.md#the-kernels-tile-shapes). Per block of x (XBLOCK values, within a block of the
# weights), x is the integer X = roundeven(x * 2^(30 - e)), 2^e the power of two just above the
# block's largest |x| (every |x| of at least 2^-6 of that largest exactly, the rest within 2^-30
# of it), X = sum_p c_p 256^p with balanced digits c_p in [-128, 127], and each digit's sum
# against the weights is exact in i32 (docs/semantics.md#the-exact-one-row-route).

XBLOCK = 32  # x's block: the longest multiple of 8 up to this that divides the weights' block
DIGITS = 4


def x_block(block: int) -> int | None:
    """x's block within a weights' block `block`, or None (no multiple of 8 divides it)."""
    return next((d for d in range(XBLOCK, 7, -8) if block % d == 0), None)


@dataclass(frozen=True)
class Digits(Quantize):
    """The dispatch writing x [M, K] as base-256 digits per block of `block` values: xq [M, K]
    i32 (word 4 * (k / 4) + p holds digit p of x[4 * (k / 4)] ... x[4 * (k / 4) + 3], the first
    in the low byte), xs [M, 2 * K / block] f32 (two powers of two per block whose product is
    2^(e - 30), x = X * 2^(e - 30); (inf, 1) where the block holds infinities, X their signs; NaN
    where it holds a NaN), xsum [M, 4 *
    K / block] i32 (each digit's sum over the block)."""

    def name(self) -> str:
        return f"dq_digits_rows_k{self.k}_b{self.block}"

    def types(self) -> dict:
        dyn, f32, i32 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(32)
        blocks = self.k // self.block
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "xq": ir.MemRefType.get([dyn, self.k], i32),
                "xs": ir.MemRefType.get([dyn, 2 * blocks], f32), "xsum": ir.MemRefType.get([dyn, DIGITS * blocks], i32)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        """Every row and block of x, at the current insertion point (one workgroup)."""
        width = 16 if self.block % 16 == 0 else 8
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        vf, vi, vb = (ir.VectorType.get([width], t) for t in (f32, i32, i8))
        top = Hoisted()
        const, splat, scalar = top.const, top.splat, top.scalar

        def power(exponent):  # 2^exponent as f32, exponent in [-126, 127] (an i32)
            return arith.bitcast(f32, arith.shli(arith.addi(exponent, scalar(i32, 127)), scalar(i32, 23)))

        zero_f = splat(vf, ir.FloatAttr.get_f32(0.0), "zero_f")
        zero_i = splat(vi, ir.IntegerAttr.get(i32, 0), "zero_i")
        c128, c255, c8 = (splat(vi, ir.IntegerAttr.get(i32, c), c) for c in (128, 255, 8))
        # Digit-major [p][k] bytes to the layout's [k / 4][p][k % 4].
        order = [p * width + 4 * g + j for g in range(width // 4) for p in range(DIGITS) for j in range(4)]

        def block(r, b, k0, amax):
            # amax < 2^e with e = E - 126, E its biased exponent (E = 0: below 2^-126); E = 255:
            # NaN or infinity. x * 2^(30 - e) in two exact steps of at most 2^78 each.
            big = arith.shrui(arith.bitcast(i32, amax), scalar(i32, 23))
            finite = arith.cmpi(arith.CmpIPredicate.ult, big, scalar(i32, 255))
            up = arith.subi(scalar(i32, 156), big)
            half = arith.shrsi(up, scalar(i32, 1))
            f1, f2 = (vector.broadcast(vf, power(a)) for a in (half, arith.subi(up, half)))
            # x = X * 2^t, t = e - 30 in [-156, 98], as 2^t1 * 2^t2 with t1 = t clamped to
            # [-126, 88] (|Y| < 2^39: Y * 2^t1 stays normal) and t2 = t - t1 in [-30, 10].
            t = arith.subi(big, scalar(i32, 156))
            t1 = arith.minsi(arith.maxsi(t, scalar(i32, -126)), scalar(i32, 88))
            # A block holding infinities and no NaN: X = +-1 where x = +-inf, 0 elsewhere, and the
            # scales (inf, 1), so the block adds inf * s * sum +-(w - z): +-inf, or NaN where the
            # weight equals its zero point, as f32 arithmetic gives (docs/semantics.md).
            inf = scalar(f32, float("inf"))
            infinite = arith.cmpf(arith.CmpFPredicate.OEQ, amax, inf)
            nan = scalar(f32, float("nan"))
            for i, (part, other) in enumerate(((t1, inf), (arith.subi(t, t1), scalar(f32, 1.0)))):
                at = arith.addi(arith.muli(b, const(2)), const(i)) if i else arith.muli(b, const(2))
                memref.store(arith.select(finite, power(part), arith.select(infinite, other, nan)), v["xs"], [r, at])
            fill = scf.ForOp(const(0), const(self.block), const(width), [zero_i] * DIGITS)
            with ir.InsertionPoint(fill.body):
                k = arith.addi(k0, fill.induction_variable)
                loaded = vector.load(vf, v["x"], [r, k])
                x = arith.select(finite, loaded, zero_f)
                rest = arith.fptosi(vi, math.roundeven(arith.mulf(arith.mulf(x, f1), f2)))  # |X| <= 2^30
                signs = arith.subi(*(arith.extui(vi, arith.cmpf(arith.CmpFPredicate.OEQ, loaded, splat(vf, ir.FloatAttr.get_f32(v_), v_))) for v_ in (float("inf"), float("-inf"))))
                rest = arith.select(infinite, signs, rest)
                digits = []
                for p in range(DIGITS):
                    if p + 1 < DIGITS:
                        biased = arith.addi(rest, c128)
                        digits.append(arith.subi(arith.andi(biased, c255), c128))
                        rest = arith.shrsi(biased, c8)
                    else:
                        digits.append(rest)  # |X / 2^24| <= 65 after the carries
                sums = [arith.addi(s, c) for s, c in zip(fill.inner_iter_args, digits)]
                low8 = [arith.trunci(vb, c) for c in digits]
                pairs = [vector.shuffle(low8[i], low8[i + 1], list(range(2 * width))) for i in (0, 2)]
                words = vector.shuffle(pairs[0], pairs[1], order)
                vector.store(vector.bitcast(ir.VectorType.get([width], i32), words), v["xq"], [r, k])
                scf.YieldOp(sums)
            for p in range(DIGITS):
                total = vector.reduction(i32, vector.CombiningKind.ADD, fill.results[p])
                memref.store(total, v["xsum"], [r, arith.addi(arith.muli(b, const(DIGITS)), const(p))])

        each_block(v["x"], m, self.k, self.block, width, const, block)


@dataclass(frozen=True)
class DigitKernel(Int8Kernel):
    """The exact one-row kernel of 4-bit weights (16 lanes: AVX-512 VNNI), reading x as `Digits`
    writes it and the weights in Int8Kernel's layout. With `any_rows` (a problem whose row count
    is known only at run time) it reads x too, and takes more than one row by the f32 kernel's
    several-rows body on the same weights (`_Panel`); without, the stage gives it MatMuls of one
    row, and more rows would each take the one-row body. Per (row, block of x, column):
    D_p = sum_k c_p[k] * u[k] - (z + bias) * sum_k c_p[k] = sum_k c_p[k] * (q - z) (i32, |D_p| <
    2^16), Y = float(256 D_3 + D_2) * 2^16 + float(256 D_1 + D_0) (both exact below 2^24: Y is
    the integer sum_k X[k] * (q - z) rounded once to f32), then y += (s * 2^t2) * (Y * 2^t1), one
    fused multiply-add (both factors exact: powers of two), blocks in order."""

    @property
    def any_rows(self) -> bool:
        return self.problem.rows is None

    COLUMNS: ClassVar[int] = LANES * GROUPS  # N in workgroups of this many columns

    @classmethod
    def why_not(cls, p: Problem) -> str | None:
        """Why a problem's weights do not fit the one-row integer kernel, or None."""
        if p.float_zero_point:
            return FLOAT_ZERO_POINT
        k, n, block, bits, any_rows = p.k, p.n, p.block, p.bits, p.rows is None
        if bits != 4:
            return f"{bits}-bit weights (the one-row integer kernel reads 4 bits)"
        if k % block or x_block(block) is None:
            return f"block {block} must be a multiple of 8 dividing K = {k}"
        if n % cls.COLUMNS:
            return f"N = {n} is not a multiple of {cls.COLUMNS} columns"
        if any_rows and Kernel(p, LANES).chunk % 8:
            return f"block {block} has no K chunk of the several-rows body that is a multiple of 8"
        return None

    @property
    def xblock(self) -> int:
        return x_block(self.block)

    def quantize(self) -> Digits:
        return Digits(self.k, self.xblock)

    def name(self) -> str:
        return super().name().replace("dq_matmul_x8_", "dq_matmul_digits_", 1) + ("_anyrows" if self.any_rows else "")

    def types(self, m: int | None = None) -> dict:
        table = dict(self.quantize().types())
        if not self.any_rows:
            del table["x"]
        table.update({role: t for role, t in super().types(m).items() if role not in table})
        return table

    def emit_views(self, v: dict, m, workgroup) -> None:
        one = _DigitBody(self, v, m, workgroup)
        if not self.any_rows:
            one.emit()
            return
        many = _Panel(self, v["x"], v["w"], v["s"], v.get("z"), v["y"], m, workgroup)
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ule, m, one.const(1)), has_else=True)
        with ir.InsertionPoint(branch.then_block):
            one.emit()
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            many.hoist()
            many.rows()
            scf.YieldOp([])


class _Panel(_F32Body):
    """The f32 kernel's several-rows body (exact dequantize into a stack panel, f32 register
    tiles) on Int8Kernel's layout of 4-bit weights: one 64-byte load holds 8 rows of K of 16
    columns, row 8i + b in the low nibble of byte b of each column's 32-bit lane, row 8i + 4 + b
    in its high nibble."""

    per_load = 8

    def fields(self, g: int, row) -> list:
        b8 = ir.VectorType.get([4 * LANES], ir.IntegerType.get_signless(8))
        data = vector.load(b8, self.w, [self.wg, row, self.const(g * LANES * 4)])
        zero = self.splat(b8, ir.IntegerAttr.get(b8.element_type, 0), "zero_bytes")
        lows, highs = [], []
        for b in range(4):  # byte b of each lane, zero-extended (one vpshufb): rows 8i + b, 8i + 4 + b
            byte = vector.bitcast(self.i32, vector.shuffle(data, zero, [4 * j + b if i == 0 else 4 * LANES for j in range(LANES) for i in range(4)]))
            low, high = self.nibbles(byte)
            lows.append(low)
            highs.append(high)
        return lows + highs


class _DigitBody(_Body):
    """The ops of one DigitKernel body: each row by itself, every column group at once."""

    def emit(self) -> None:
        kern, v, i32 = self.k, self.v, ir.IntegerType.get_signless(32)
        gs = range(GROUPS)
        zero_f = self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero_f")
        self.splat_int(self.bytes, 15), self.splat_int(self.bytes, 4)  # `nibbles`' masks, made here: the hoisted constants' order
        i256 = self.splat(self.i32, ir.IntegerAttr.get(i32, 256), 256)
        f65536 = self.splat(self.f32, ir.FloatAttr.get_f32(65536.0), "f65536")
        steps = kern.xblock // kern.rows_per_lane  # 8 rows of K (two words of each digit) a step

        def block(r, b, acc):
            kb = arith.divui(arith.muli(b, self.const(kern.xblock)), self.const(kern.block))
            # D_p starts at -(z + bias) * sum c_p: the zero point's share.
            sums = [memref.load(v["xsum"], [r, arith.addi(arith.muli(b, self.const(DIGITS)), self.const(p))]) for p in range(DIGITS)]
            start = self.starts(sums, kb, [(p, g) for g in gs for p in range(DIGITS)], list(gs))
            inner = scf.ForOp(self.const(0), self.const(steps), self.const(1), start)
            with ir.InsertionPoint(inner.body):
                row = arith.addi(arith.muli(b, self.const(steps)), inner.induction_variable)
                # Word of digit p of rows 8 row + 4 h ... + 3: xq[r, 4 (2 row + h) + p].
                base = arith.muli(row, self.const(2 * DIGITS))
                words = [[vector.bitcast(self.bytes, vector.broadcast(self.i32, memref.load(v["xq"], [r, arith.addi(base, self.const(h * DIGITS + p))])))
                          for h in range(2)] for p in range(DIGITS)]  # fmt: skip
                d = list(inner.inner_iter_args)
                for g in gs:
                    wv = vector.load(self.bytes, v["w"], [self.wg, row, self.const(g * LANES * 4)])
                    parts = self.nibbles(wv)
                    for p in range(DIGITS):
                        i = g * DIGITS + p
                        for h, part in enumerate(parts):
                            d[i] = vpdpbusd(d[i], part, words[p][h])
                scf.YieldOp(d)
            xs1, xs2 = (vector.broadcast(self.f32, memref.load(v["xs"], [r, arith.addi(arith.muli(b, self.const(2)), self.const(i))])) for i in range(2))
            out = []
            for g in gs:
                dg = list(inner.results[g * DIGITS : (g + 1) * DIGITS])
                high = arith.sitofp(self.f32, arith.addi(arith.muli(dg[3], i256), dg[2]))
                low = arith.sitofp(self.f32, arith.addi(arith.muli(dg[1], i256), dg[0]))
                y = vector.fma(high, f65536, low)
                scale = vector.load(self.f32, v["s"], [self.wg, kb, self.const(g * LANES)])
                out.append(vector.fma(arith.mulf(scale, xs2), arith.mulf(y, xs1), acc[g]))
            return out

        def store(r, totals):
            for g in gs:
                vector.store(totals[g], v["y"], [r, arith.addi(self.col0, self.const(g * LANES))])

        rows_blocks(self.const, self.m, kern.k // kern.xblock, [zero_f] * GROUPS, block, store)
