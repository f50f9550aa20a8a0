"""ONNX DynamicQuantizeLinear as two dispatches of dq's own, the pre-pass of the QDQ kernel's
dynamic form: x [M, K] f32 -> xq [M, K] uint8, sx [1] f32, zx [1] uint8, by the spec's formula
(docs/semantics.md#dynamic-int8-matmuls):

    max = max(0, max x),  min = min(0, min x)
    sx = (max - min) / 255   (1 where max = min: x all zero, as onnxruntime takes it)
    zx = roundeven(clamp(0 - min / sx, 0, 255))
    xq = clamp(roundeven(x / sx) + zx, 0, 255)          true f32 divisions

The range of the whole of x is needed before any row is quantized, so: `DynamicRange` (each
workgroup the range of its rows: partial [W, 2]), then `DynamicQuantize` (each workgroup the
range of the W partials, the same sx and zx in every one, then the codes of its rows). Max and
min are exact in any order, so the split changes no bit (docs/iree.md#dynamic-int8-matmuls).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .loops import FINITE, WORKGROUPS, Hoisted, finite_clamp

# The range's max and min and the codes' clamp take x as FINITE: an x with a NaN or an infinity
# has codes of no meaning in any case, its scale NaN or infinite
# (docs/semantics.md#dynamic-int8-matmuls). The two dispatches' workgroups: loops.row_workgroups.


def _widest(k: int, most: int) -> int:
    return next(w for w in (64, 32, 16, 8, 4, 2, 1) if w <= most and k % w == 0)


@dataclass(frozen=True)
class DynamicRange:
    """The first dispatch: each workgroup's max(0, max x) and min(0, min x) over its rows of x
    [M, K], as partial[workgroup] = [max, min]."""

    k: int
    workgroups: int = WORKGROUPS
    results = ("partial",)

    @property
    def width(self) -> int:
        """Values of x per vector: the widest of 64, 32, ..., 1 dividing K (64: four 16-lane
        max/min chains at once)."""
        return _widest(self.k, 64)

    def name(self) -> str:
        return f"dq_dynamic_range_k{self.k}_w{self.workgroups}"

    def types(self) -> dict:
        dyn, f32 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get()
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "partial": ir.MemRefType.get([self.workgroups, 2], f32)}

    def emit_views(self, v: dict, m, workgroup) -> None:
        f32 = ir.F32Type.get()
        vf = ir.VectorType.get([self.width], f32)
        h = Hoisted()
        const = h.const
        zero = h.splat(vf, ir.FloatAttr.get_f32(0.0), 0.0)
        r0, r1 = h.workgroup_rows(m, workgroup, self.workgroups)
        rows = scf.ForOp(r0, r1, const(1), [zero, zero])  # the range includes 0
        with ir.InsertionPoint(rows.body):
            cols = scf.ForOp(const(0), const(self.k), const(self.width), list(rows.inner_iter_args))
            with ir.InsertionPoint(cols.body):
                x = vector.load(vf, v["x"], [rows.induction_variable, cols.induction_variable])
                top, low = cols.inner_iter_args
                fast = ir.Attribute.parse(FINITE)
                scf.YieldOp([arith.maximumf(top, x, fastmath=fast), arith.minimumf(low, x, fastmath=fast)])
            scf.YieldOp(list(cols.results))
        top, low = rows.results
        memref.store(vector.reduction(f32, vector.CombiningKind.MAXIMUMF, top), v["partial"], [workgroup, const(0)])
        memref.store(vector.reduction(f32, vector.CombiningKind.MINIMUMF, low), v["partial"], [workgroup, const(1)])


@dataclass(frozen=True)
class DynamicQuantize:
    """The second dispatch: sx and zx from DynamicRange's partial [W, 2] (workgroup 0 stores
    them), then each workgroup's rows of x [M, K] quantized to xq."""

    k: int
    workgroups: int = WORKGROUPS
    results = ("xq", "sx", "zx")

    @property
    def width(self) -> int:
        """Values of x per vector: the widest of 16, 8, 4, 2, 1 dividing K."""
        return _widest(self.k, 16)

    def name(self) -> str:
        return f"dq_dynamic_quantize_k{self.k}_w{self.workgroups}"

    def types(self) -> dict:
        dyn, f32, i8 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "partial": ir.MemRefType.get([self.workgroups, 2], f32),
                "xq": ir.MemRefType.get([dyn, self.k], i8), "sx": ir.MemRefType.get([1], f32), "zx": ir.MemRefType.get([1], i8)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
        vf, vb = ir.VectorType.get([self.width], f32), ir.VectorType.get([self.width], i8)
        h = Hoisted()
        const = h.const
        zero, one, most = (arith.constant(f32, c) for c in (0.0, 1.0, 255.0))
        parts = scf.ForOp(const(0), const(self.workgroups), const(1), [zero, zero])
        with ir.InsertionPoint(parts.body):
            w = parts.induction_variable
            top, low = parts.inner_iter_args
            scf.YieldOp([arith.maximumf(top, memref.load(v["partial"], [w, const(0)])),
                         arith.minimumf(low, memref.load(v["partial"], [w, const(1)]))])  # fmt: skip
        top, low = parts.results
        same = arith.cmpf(arith.CmpFPredicate.OEQ, top, low)
        sx = arith.select(same, one, arith.divf(arith.subf(top, low), most))
        zx = math.roundeven(arith.minimumf(arith.maximumf(arith.subf(zero, arith.divf(low, sx)), zero), most))
        first = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, workgroup, const(0)))
        with ir.InsertionPoint(first.then_block):
            memref.store(sx, v["sx"], [const(0)])
            memref.store(arith.fptoui(i8, zx), v["zx"], [const(0)])
            scf.YieldOp([])
        sxv, zxv = vector.broadcast(vf, sx), vector.broadcast(vf, zx)
        # clamp(roundeven(q) + zx, 0, 255) = roundeven(clamp(q, -zx, 255 - zx)) + zx: zx is an
        # integer of [0, 255], the bounds integers (h.roundeven takes the clamped values)
        lo, hi = vector.broadcast(vf, arith.subf(zero, zx)), vector.broadcast(vf, arith.subf(most, zx))
        r0, r1 = h.workgroup_rows(m, workgroup, self.workgroups)
        rows = scf.ForOp(r0, r1, const(1))
        with ir.InsertionPoint(rows.body):
            cols = scf.ForOp(const(0), const(self.k), const(self.width))
            with ir.InsertionPoint(cols.body):
                r, k = rows.induction_variable, cols.induction_variable
                q = finite_clamp(arith.divf(vector.load(vf, v["x"], [r, k]), sxv), lo, hi)
                vector.store(arith.fptoui(vb, arith.addf(h.roundeven(q), zxv)), v["xq"], [r, k])
                scf.YieldOp([])
            scf.YieldOp([])
