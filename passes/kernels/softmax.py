"""The softmax of 8-bit codes along their last axis, requantized (`SoftmaxKernel`): ONNX's

    y = QuantizeLinear(Softmax(DequantizeLinear(x, sx, zx), axis=-1), sy, zy)

per tensor, for a dequant.QdqSoftmax node python/qdq_softmax.py wrote (torch-onnx-dq-softmax-iree-cpu).
Per row of L codes x (rows split into contiguous ranges across workgroups):

    e[i] = t[max(x) - x[i]]             t[d] = exp(-d sx) rounded once to f32 (`exponentials`)
    s    = sum of e                      f32: 8 lanes over the row, then the lanes by halves, then the tail
    y[i] = saturate(roundeven((e[i] / s) / sy) + zy)       two f32 divisions, as ONNX rounds

The exponent is the exact difference of the dequantized values, (x[i] - max x) sx: a function of
d = max(x) - x[i], 0 to 255, whatever zx, so t has 256 entries (docs/semantics.md#softmax-of-codes).
Vector code of no particular instruction set (`vector.gather` for t).

`FloatSoftmaxKernel`: ONNX's Softmax of f32 along the last axis (docs/semantics.md#softmax-of-f32),
per row of L values x:

    e[i] = exp(x[i] - max x)             `exp_f32`: within 0.6 ulp (f32 FMAs and a table of 8)
    s    = sum of e                      f32: `lanes` lanes over the row, then the lanes by halves, then the tail
    y[i] = e[i] / s                      one f32 division
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .lookup import CODES
from .loops import WORKGROUPS, Hoisted, fenced, finite_clamp, permute, x86_max

LANES = 8  # f32 lanes a step: one ymm register
MOST_LENGTH = 4096  # the longest row: its exponentials on the stack, 16 KB, half IREE's default limit


def exponentials(sx: float) -> np.ndarray:
    """t [256] f32: t[d] = exp(-d sx), d sx exact in float64 (sx f32, d below 2^8) and exp
    rounded to f32 (numpy's float64 exp, then the nearest f32)."""
    d = np.arange(CODES, dtype=np.float64)
    return np.exp(-d * np.float64(np.float32(sx))).astype(np.float32)


@dataclass(frozen=True)
class SoftmaxKernel:
    """Rows of `length` codes (int8 where `signed_x`, else uint8) to rows of codes (int8 where
    `signed_y`), the table t [256] f32 and r = [sy, zy] f32 operands; at most `workgroups`."""

    length: int
    signed_x: bool
    signed_y: bool
    workgroups: int = WORKGROUPS
    results = ("y",)

    def why_not(self) -> str | None:
        if not 1 <= self.length <= MOST_LENGTH:
            return f"its rows are {self.length} codes long (dq's softmax kernel takes 1 to {MOST_LENGTH})"
        return None

    def name(self) -> str:
        kinds = "".join("i8" if s else "u8" for s in (self.signed_x, self.signed_y))
        return f"dq_softmax_{kinds[:2]}_{kinds[2:]}_l{self.length}_w{self.workgroups}"

    def types(self) -> dict:
        dyn, f32, i8 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([dyn, self.length], i8), "t": ir.MemRefType.get([CODES], f32), "r": ir.MemRefType.get([2], f32),
                "y": ir.MemRefType.get([dyn, self.length], i8)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        f32, i8, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        vf, vi, vb = (ir.VectorType.get([LANES], e) for e in (f32, i32, i8))
        h = Hoisted()
        const = h.const
        whole = self.length - self.length % LANES  # codes in whole steps; the tail's scalar
        widen = arith.extsi if self.signed_x else arith.extui
        zero_f = h.splat(vf, ir.FloatAttr.get_f32(0.0), "zero_f")
        true = h.splat(ir.VectorType.get([LANES], ir.IntegerType.get_signless(1)), ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 1), "true")
        with h.top:  # the row's exponentials
            e = memref.alloca(ir.MemRefType.get([self.length], f32), [], [])
        sy = memref.load(v["r"], [const(0)])
        zy = memref.load(v["r"], [const(1)])
        low, high = (-128.0, 127.0) if self.signed_y else (0.0, 255.0)
        lo, hi = (arith.subf(arith.constant(f32, b), zy) for b in (low, high))  # the clamp before the rounding
        vsy, vzy, vlo, vhi = (vector.broadcast(vf, s) for s in (sy, zy, lo, hi))
        r0, r1 = h.workgroup_rows(m, workgroup, self.workgroups)
        rows = scf.ForOp(r0, r1, const(1))
        with ir.InsertionPoint(rows.body):
            r = rows.induction_variable

            def code(i):
                return widen(i32, memref.load(v["x"], [r, i]))

            # the row's largest code, as i32: 8 lanes over the whole steps, then the tail
            top = scf.ForOp(const(0), const(whole), const(LANES), [h.splat_int(vi, -128 if self.signed_x else 0)])
            with ir.InsertionPoint(top.body):
                scf.YieldOp([arith.maxsi(top.inner_iter_args[0], widen(vi, vector.load(vb, v["x"], [r, top.induction_variable])))])
            most = vector.reduction(i32, vector.CombiningKind.MAXSI, top.results[0])
            if whole < self.length:
                top = scf.ForOp(const(whole), const(self.length), const(1), [most])
                with ir.InsertionPoint(top.body):
                    scf.YieldOp([arith.maxsi(top.inner_iter_args[0], code(top.induction_variable))])
                most = top.results[0]
            vmost = vector.broadcast(vi, most)
            # e = t[most - x], summed in 8 lanes over the whole steps
            steps = scf.ForOp(const(0), const(whole), const(LANES), [zero_f])
            with ir.InsertionPoint(steps.body):
                k = steps.induction_variable
                d = arith.subi(vmost, widen(vi, vector.load(vb, v["x"], [r, k])))
                ek = vector.gather(vf, v["t"], [const(0)], d, true, zero_f)
                vector.store(ek, e, [k])
                scf.YieldOp([arith.addf(steps.inner_iter_args[0], ek)])
            total = vector.reduction(f32, vector.CombiningKind.ADD, steps.results[0])
            if whole < self.length:
                tail = scf.ForOp(const(whole), const(self.length), const(1), [total])
                with ir.InsertionPoint(tail.body):
                    i = tail.induction_variable
                    at = arith.index_cast(ir.IndexType.get(), arith.subi(most, code(i)))
                    ei = memref.load(v["t"], [at])
                    memref.store(ei, e, [i])
                    scf.YieldOp([arith.addf(tail.inner_iter_args[0], ei)])
                total = tail.results[0]
            vtotal = vector.broadcast(vf, total)
            # y = saturate(roundeven((e / s) / sy) + zy) = roundeven(clamp((e / s) / sy, -zy,
            # 255 - zy)) + zy (or -128 - zy, 127 - zy): zy an integer, the bounds integers; the
            # quotients finite (loops.FINITE): e is finite and s at least 1 (e = 1 at the row's
            # largest code)
            out = scf.ForOp(const(0), const(whole), const(LANES))
            with ir.InsertionPoint(out.body):
                k = out.induction_variable
                q = arith.divf(arith.divf(vector.load(vf, e, [k]), vtotal), vsy)
                q = arith.addf(h.roundeven(finite_clamp(q, vlo, vhi)), vzy)
                vector.store(arith.trunci(vb, arith.fptosi(vi, q)), v["y"], [r, k])
                scf.YieldOp([])
            if whole < self.length:
                tail = scf.ForOp(const(whole), const(self.length), const(1))
                with ir.InsertionPoint(tail.body):
                    i = tail.induction_variable
                    q = arith.divf(arith.divf(memref.load(e, [i]), total), sy)
                    q = arith.addf(h.roundeven(finite_clamp(q, lo, hi)), zy)
                    memref.store(arith.trunci(i8, arith.fptosi(i32, q)), v["y"], [r, i])
                    scf.YieldOp([])
            scf.YieldOp([])


# exp_f32 (docs/semantics.md#softmax-of-f32): exp(d) = 2^m 2^(j/8) e^r, k = 8m + j = round(d 8 / ln 2)
# (by EXP_ROUND, f32's spacing 1 there) and r = d - k ln(2) / 8, |r| <= ln(2) / 16 and a little;
# below EXP_LEAST exp rounds to 0 in f32 (exp(-104) < 2^-150, half the least subnormal), so
# |k| <= 1201. EXP_LN2_8 is ln(2) / 8 in two parts, the first of 12 bits (k times it exact, d less
# it exact), the second the rest rounded to f32; EXP_TABLE the f32 nearest 2^(j/8) and the f32
# nearest what that leaves, j = 0 ... 7; EXP_TERMS 1 / n! for e^r - 1 = r + r^2 (1/2 + r (1/6 + ...)),
# to degree 5 (the rest below 2^-36 of e^r).
EXP_LEAST = -104.0
EXP_ROUND = 1.5 * 2**23
EXP_8_LN2 = 11.541560327111707
EXP_LN2_8 = (0.086639404296875, 3.993272912339307e-06)
EXP_TABLE = tuple(np.float32(v) for v in 2.0 ** (np.arange(8) / 8)), tuple(np.float32(v - np.float32(v)) for v in 2.0 ** (np.arange(8) / 8))
EXP_TERMS = (1 / 2, 1 / 6, 1 / 24, 1 / 120)
EXP_SCALE = 64  # 2^m as 2^(m + 64) 2^-64: both normal f32 for m >= -151, one rounding at most
def lanes_max(h: Hoisted, v: ir.Value) -> ir.Value:
    """Every lane of the f32 vector v (no lane NaN) as the largest of its lanes: x86_max of v and
    v rotated by half its lanes, then by a quarter, and so on."""
    width = ir.VectorType(v.type).shape[0]
    while width > 1:
        width //= 2
        n = ir.VectorType(v.type).shape[0]
        v = x86_max(h, vector.shuffle(v, v, [(i + width) % n for i in range(n)]), v)
    return v


def exp_f32(h: Hoisted, d: ir.Value) -> ir.Value:
    """exp(d) of an f32 vector d (8 or 16 lanes, x86 AVX2 or AVX-512), d <= 0 or NaN, within 0.6
    ulp of exp where the result is a normal f32 (the constants above): k from one FMA, r from two
    (exact but for the last rounding), e^r - 1 = p by Horner's FMAs, 2^(j/8) e^r = t_hi + (t_hi p
    + t_lo) from the table by a permute, then 2^m by two exact products (the second rounding
    where the result is subnormal). d below EXP_LEAST gives 0, NaN gives NaN. Every operation's
    rounding is fixed (FMAs written as such, no product beside an addition), so the result is one
    function of d on every target, which the tests model in numpy; IREE's expansion of
    `math.exp` (an f32 polynomial) measured 1.0 ulp where this measured 0.59 (d in [-87, -25])."""
    vf = ir.VectorType(d.type)
    lanes, f32, i32 = vf.shape[0], ir.F32Type.get(), ir.IntegerType.get_signless(32)
    vi = ir.VectorType.get([lanes], i32)

    def c(v):
        return h.splat(vf, ir.FloatAttr.get_f32(float(v)), ("exp", str(vf), float(v)))

    x = arith.maxnumf(d, c(EXP_LEAST))  # a NaN d is selected back below
    t = math.fma(x, c(EXP_8_LN2), c(EXP_ROUND))  # k + EXP_ROUND
    kf = arith.subf(t, c(EXP_ROUND))
    k = arith.subi(arith.bitcast(vi, t), h.splat_int(vi, int(np.float32(EXP_ROUND).view(np.int32))))
    r = math.fma(kf, c(-EXP_LN2_8[1]), math.fma(kf, c(-EXP_LN2_8[0]), x))
    q = c(EXP_TERMS[-1])
    for term in EXP_TERMS[-2::-1]:
        q = math.fma(q, r, c(term))
    p = math.fma(arith.mulf(r, r), q, r)
    j = arith.andi(k, h.splat_int(vi, 7))
    hi, lo = (permute(h, v, j) for v in EXP_TABLE)
    e = arith.addf(hi, math.fma(hi, p, lo))
    scale = arith.bitcast(vf, arith.shli(arith.addi(arith.shrsi(k, h.splat_int(vi, 3)), h.splat_int(vi, 127 + EXP_SCALE)), h.splat_int(vi, 23)))
    e = arith.mulf(arith.mulf(e, scale), c(2.0**-EXP_SCALE))
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, d, d), d, e)


@dataclass(frozen=True)
class FloatSoftmaxKernel:
    """Rows of `length` f32 values to the rows of their softmax, `lanes` (8 or 16) a step; at most
    `workgroups`. A NaN in a row, or +inf, or a row of -inf makes the row NaN, as in ONNX's
    reference: e of the NaN (or of inf - inf) is NaN, and so then is s (the max ignores a NaN)."""

    length: int
    lanes: int = LANES
    workgroups: int = WORKGROUPS
    results = ("y",)

    def why_not(self) -> str | None:
        if not 1 <= self.length <= MOST_LENGTH:
            return f"its rows are {self.length} values long (dq's softmax kernel takes 1 to {MOST_LENGTH})"
        return None

    def name(self) -> str:
        return f"dq_softmax_f32_l{self.length}_v{self.lanes}_w{self.workgroups}"

    def types(self) -> dict:
        rows = ir.MemRefType.get([ir.ShapedType.get_dynamic_size(), self.length], ir.F32Type.get())
        return {"x": rows, "y": rows}

    def emit_views(self, v: dict, m, workgroup) -> None:
        f32 = ir.F32Type.get()
        vf = ir.VectorType.get([self.lanes], f32)
        h = Hoisted()
        const = h.const
        whole = self.length - self.length % self.lanes  # values in whole steps; the tail's scalar
        least = h.splat(vf, ir.FloatAttr.get_f32(float("-inf")), "least")
        zero = h.splat(vf, ir.FloatAttr.get_f32(0.0), "zero")
        x, y = v["x"], v["y"]
        r0, r1 = h.workgroup_rows(m, workgroup, self.workgroups)
        rows = scf.ForOp(r0, r1, const(1))
        with ir.InsertionPoint(rows.body):
            r = rows.induction_variable

            def tail(init, body):
                """body(i, acc) over the values past the whole steps, in order, acc carried from
                init (None: nothing carried); the last acc."""
                if whole == self.length:
                    return init
                carried = [] if init is None else [init]
                loop = scf.ForOp(const(whole), const(self.length), const(1), carried)
                with ir.InsertionPoint(loop.body):
                    acc = body(loop.induction_variable, *loop.inner_iter_args)
                    scf.YieldOp([] if init is None else [acc])
                return None if init is None else loop.results[0]

            # the row's largest value: x86's max (a NaN passed over; it makes the sum NaN below)
            top = scf.ForOp(const(0), const(whole), const(self.lanes), [least])
            with ir.InsertionPoint(top.body):
                scf.YieldOp([x86_max(h, vector.load(vf, x, [r, top.induction_variable]), top.inner_iter_args[0])])
            vmost, most = lanes_max(h, top.results[0]), None
            if whole < self.length:  # and the tail's, one by one
                most = tail(vector.extract(vmost, [], [0]), lambda i, acc: arith.maxnumf(acc, memref.load(x, [r, i])))
                vmost = vector.broadcast(vf, most)
            # e = exp(x - max) into y, summed in lanes over the whole steps, then the lanes by
            # halves (IREE lowers the reduction so), then the tail in order
            steps = scf.ForOp(const(0), const(whole), const(self.lanes), [zero])
            with ir.InsertionPoint(steps.body):
                k = steps.induction_variable
                ek = fenced(exp_f32(h, arith.subf(vector.load(vf, x, [r, k]), vmost)))  # stored as summed
                vector.store(ek, y, [r, k])
                scf.YieldOp([arith.addf(steps.inner_iter_args[0], ek)])

            def exp_tail(i, acc):
                ei = vector.extract(fenced(exp_f32(h, vector.broadcast(vf, arith.subf(memref.load(x, [r, i]), most)))), [], [0])
                memref.store(ei, y, [r, i])
                return arith.addf(acc, ei)

            total = tail(vector.reduction(f32, vector.CombiningKind.ADD, steps.results[0]), exp_tail)
            vtotal = vector.broadcast(vf, total)
            out = scf.ForOp(const(0), const(whole), const(self.lanes))
            with ir.InsertionPoint(out.body):
                k = out.induction_variable
                vector.store(arith.divf(vector.load(vf, y, [r, k]), vtotal), y, [r, k])
                scf.YieldOp([])

            tail(None, lambda i: memref.store(arith.divf(memref.load(y, [r, i]), total), y, [r, i]))
            scf.YieldOp([])
