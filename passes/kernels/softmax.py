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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from .lookup import CODES
from .loops import WORKGROUPS, Hoisted, finite_clamp

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
