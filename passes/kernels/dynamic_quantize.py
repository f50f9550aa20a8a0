"""ONNX DynamicQuantizeLinear as one dispatch of its own (`DynamicQuantize`, one workgroup), the
pre-pass of the QDQ kernel's dynamic form: x [M, K] f32 -> xq [M, K] uint8, sx [1] f32, zx [1]
uint8, by the spec's formula (docs/semantics.md#dynamic-int8-matmuls):

    max = max(0, max x),  min = min(0, min x)
    sx = (max - min) / 255   (1 where max = min: x all zero, as onnxruntime takes it)
    zx = roundeven(clamp(0 - min / sx, 0, 255))
    xq = clamp(roundeven(x / sx) + zx, 0, 255)          true f32 divisions

Two passes over x: the range, then the codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .loops import Hoisted


@dataclass(frozen=True)
class DynamicQuantize:
    """The dispatch quantizing x [M, K] per tensor at run time (DynamicQuantizeLinear)."""

    k: int
    workgroups = 1
    results = ("xq", "sx", "zx")

    @property
    def width(self) -> int:
        """Values of x per vector: the widest of 16, 8, 4, 2, 1 dividing K."""
        return next(w for w in (16, 8, 4, 2, 1) if self.k % w == 0)

    def name(self) -> str:
        return f"dq_dynamic_quantize_k{self.k}"

    def types(self) -> dict:
        dyn, f32, i8 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "xq": ir.MemRefType.get([dyn, self.k], i8),
                "sx": ir.MemRefType.get([1], f32), "zx": ir.MemRefType.get([1], i8)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
        vf, vb = ir.VectorType.get([self.width], f32), ir.VectorType.get([self.width], i8)
        h = Hoisted()
        const = h.const

        def splat(value: float) -> ir.Value:
            return h.splat(vf, ir.FloatAttr.get_f32(value), value)

        def each(init: list, body) -> list:
            """body(r, k, carried) over every row and vector of x, carrying `init`."""
            rows = scf.ForOp(const(0), m, const(1), init)
            with ir.InsertionPoint(rows.body):
                cols = scf.ForOp(const(0), const(self.k), const(self.width), list(rows.inner_iter_args))
                with ir.InsertionPoint(cols.body):
                    scf.YieldOp(body(rows.induction_variable, cols.induction_variable, list(cols.inner_iter_args)))
                scf.YieldOp(list(cols.results))
            return list(rows.results)

        def bounds(r, k, acc):
            x = vector.load(vf, v["x"], [r, k])
            return [arith.maximumf(acc[0], x), arith.minimumf(acc[1], x)]

        top, low = each([splat(0.0), splat(0.0)], bounds)  # the range includes 0
        top = vector.reduction(f32, vector.CombiningKind.MAXIMUMF, top)
        low = vector.reduction(f32, vector.CombiningKind.MINIMUMF, low)
        zero, one, most = (arith.constant(f32, c) for c in (0.0, 1.0, 255.0))
        same = arith.cmpf(arith.CmpFPredicate.OEQ, top, low)
        sx = arith.select(same, one, arith.divf(arith.subf(top, low), most))
        zx = math.roundeven(arith.minimumf(arith.maximumf(arith.subf(zero, arith.divf(low, sx)), zero), most))
        memref.store(sx, v["sx"], [const(0)])
        memref.store(arith.fptoui(i8, zx), v["zx"], [const(0)])
        sxv, zxv = vector.broadcast(vf, sx), vector.broadcast(vf, zx)

        def codes(r, k, acc):
            q = arith.addf(math.roundeven(arith.divf(vector.load(vf, v["x"], [r, k]), sxv)), zxv)
            q = arith.minimumf(arith.maximumf(q, splat(0.0)), splat(255.0))
            vector.store(arith.fptoui(vb, q), v["xq"], [r, k])
            return []

        each([], codes)
