"""ONNX's Gelu of f32 (approximate "none"), after an optional bias Add along the last axis
(`GeluKernel`), for x86 CPUs with AVX2 or AVX-512 (docs/semantics.md#gelu-of-f32). Per row of N
values x (rows split into contiguous ranges across workgroups), and the bias b [N] where given:

    v = x + b                            f32, as the graph's Add
    y = v ((erf_f32(v / sqrt(2)) + 1) 0.5)    one f32 division by sqrt(2) (f32's), as the graph's

`erf_f32` evaluates erf on 8 intervals of [0, 4) by polynomials of degree 7 whose coefficients
(`ERF_COEFFICIENTS`) a permute reads by the interval's index: within 1.55 ulp of erf, where
IREE's expansion of `math.erf` (a rational function on 3 intervals, its coefficients chosen by
blends, one division) is within 4.54.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .loops import WORKGROUPS, Hoisted, permute, x86_min

LANES = 8  # f32 lanes a step on AVX2; 16 with AVX-512
SQRT2 = 1.4142135381698608  # sqrt(2) rounded to f32, as the graph's x / sqrt(2)
ERF_WIDTH = 0.5  # each interval's width: [0, 0.5), [0.5, 1), ..., [3.5, 4)
ERF_MOST = 4.0  # |u| is taken at most this: erf(4) rounds to 1 in f32, as erf of any larger
# ERF_COEFFICIENTS[j]: c0 ... c7 of interval j, in t = |u| - (0.5 j + 0.25); q = c0 + t (c1 + t
# (c2 + ...)) approximates erf(|u|) / |u| on interval 0 (for small u's relative error) and
# erf(|u|) on the others. Made by least squares on 4000 Chebyshev nodes of each interval in
# float64 (scipy's erf), each rounded to f32 (docs/semantics.md#gelu-of-f32).
ERF_COEFFICIENTS = tuple(tuple(float.fromhex(c) for c in row) for row in (
    ("0x1.1af54ep+0", "-0x1.730704p-3", "-0x1.576644p-2", "0x1.acf086p-4", "0x1.6ca216p-4", "-0x1.26451ap-5", "-0x1.274a8p-6", "0x1.1cd94ap-7"),
    ("0x1.6c1c98p-1", "0x1.492e42p-1", "-0x1.edc55ap-2", "0x1.b6e67cp-6", "0x1.34956cp-3", "-0x1.b3f454p-5", "-0x1.b38878p-6", "0x1.250934p-6"),
    ("0x1.d8865ep-1", "0x1.e4653p-3", "-0x1.2ebf54p-2", "0x1.571d0ep-3", "-0x1.91de7ap-8", "-0x1.828d6p-5", "0x1.51792cp-6", "0x1.eae10ep-9"),
    ("0x1.f92d08p-1", "0x1.b0553p-5", "-0x1.7a4a8p-4", "0x1.7148ep-4", "-0x1.8a1498p-5", "0x1.b1bf8ep-8", "0x1.2888aap-7", "-0x1.84d4e4p-8"),
    ("0x1.ff4048p-1", "0x1.d4143cp-8", "-0x1.074b2p-6", "0x1.63ef36p-6", "-0x1.38bdf4p-6", "0x1.5d4f1p-7", "-0x1.6c52bcp-9", "-0x1.7a49b6p-11"),
    ("0x1.fff2dp-1", "0x1.3360cep-11", "-0x1.a6a57p-10", "0x1.69cefep-9", "-0x1.aafeap-9", "0x1.6945c8p-9", "-0x1.b5378ep-10", "0x1.4d59b2p-11"),
    ("0x1.ffff7p-1", "0x1.e9b5dap-16", "-0x1.8de92cp-14", "0x1.9aa61ap-13", "-0x1.2c1206p-12", "0x1.48dd1ap-12", "-0x1.1f0e7ap-12", "0x1.6c0ee8p-13"),
    ("0x1.fffffcp-1", "0x1.d936a8p-21", "-0x1.bbbbbcp-19", "0x1.0b7098p-17", "-0x1.ce8fc2p-17", "0x1.338704p-16", "-0x1.5b294ap-16", "0x1.1fa3f2p-16"),
))  # fmt: skip


def erf_f32(h: Hoisted, u: ir.Value) -> ir.Value:
    """erf(u) of an f32 vector u (8 or 16 lanes, x86 AVX2 or AVX-512): a = min(|u|, ERF_MOST),
    j = min(trunc(2 a), 7), t = a - (0.5 j + 0.25) (exact but on interval 0), q by Horner's FMAs
    from the coefficients `permute` reads at j, then a q on interval 0 and q on the others, at most
    1, with u's sign. NaN gives NaN. Every rounding is fixed (FMAs written as such)."""
    vf = ir.VectorType(u.type)
    lanes, f32, i32 = vf.shape[0], ir.F32Type.get(), ir.IntegerType.get_signless(32)
    vi = ir.VectorType.get([lanes], i32)

    def c(v):
        return h.splat(vf, ir.FloatAttr.get_f32(float(v)), ("erf", str(vf), float(v)))

    a = x86_min(h, math.absf(u), c(ERF_MOST))  # NaN: ERF_MOST, selected back below
    j = arith.minsi(arith.fptosi(vi, arith.mulf(a, c(1 / ERF_WIDTH))), h.splat_int(vi, len(ERF_COEFFICIENTS) - 1))
    t = arith.subf(a, math.fma(arith.sitofp(vf, j), c(ERF_WIDTH), c(ERF_WIDTH / 2)))
    q = permute(h, [row[-1] for row in ERF_COEFFICIENTS], j)
    for i in range(len(ERF_COEFFICIENTS[0]) - 2, -1, -1):
        q = math.fma(q, t, permute(h, [row[i] for row in ERF_COEFFICIENTS], j))
    first = arith.cmpf(arith.CmpFPredicate.OLT, a, c(ERF_WIDTH))
    e = x86_min(h, arith.select(first, arith.mulf(a, q), q), c(1.0))
    sign = arith.andi(arith.bitcast(vi, u), h.splat_int(vi, -(2**31)))
    e = arith.bitcast(vf, arith.ori(arith.bitcast(vi, e), sign))
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, u, u), u, e)


@dataclass(frozen=True)
class GeluKernel:
    """Rows of `length` f32 values (and, where `bias`, a bias [length] added first) to their Gelu,
    `lanes` (8 or 16) a step; at most `workgroups`."""

    length: int
    bias: bool
    lanes: int = LANES
    workgroups: int = WORKGROUPS
    results = ("y",)

    def name(self) -> str:
        return f"dq_gelu_f32{'_bias' if self.bias else ''}_n{self.length}_v{self.lanes}_w{self.workgroups}"

    def types(self) -> dict:
        f32 = ir.F32Type.get()
        rows = ir.MemRefType.get([ir.ShapedType.get_dynamic_size(), self.length], f32)
        return {"x": rows, **({"b": ir.MemRefType.get([self.length], f32)} if self.bias else {}), "y": rows}

    def emit_views(self, v: dict, m, workgroup) -> None:
        f32 = ir.F32Type.get()
        vf = ir.VectorType.get([self.lanes], f32)
        h = Hoisted()
        const = h.const
        whole = self.length - self.length % self.lanes  # values in whole steps; the tail's one by one
        root2, one, half = (h.splat(vf, ir.FloatAttr.get_f32(c), ("gelu", c)) for c in (SQRT2, 1.0, 0.5))

        def gelu(value: ir.Value) -> ir.Value:
            return arith.mulf(value, arith.mulf(arith.addf(erf_f32(h, arith.divf(value, root2)), one), half))

        r0, r1 = h.workgroup_rows(m, workgroup, self.workgroups)
        rows = scf.ForOp(r0, r1, const(1))
        with ir.InsertionPoint(rows.body):
            r = rows.induction_variable
            steps = scf.ForOp(const(0), const(whole), const(self.lanes))
            with ir.InsertionPoint(steps.body):
                k = steps.induction_variable
                x = vector.load(vf, v["x"], [r, k])
                if self.bias:
                    x = arith.addf(x, vector.load(vf, v["b"], [k]))
                vector.store(gelu(x), v["y"], [r, k])
                scf.YieldOp([])
            if whole < self.length:  # one by one, each through the vector code's lane 0
                tail = scf.ForOp(const(whole), const(self.length), const(1))
                with ir.InsertionPoint(tail.body):
                    i = tail.induction_variable
                    x = memref.load(v["x"], [r, i])
                    if self.bias:
                        x = arith.addf(x, memref.load(v["b"], [i]))
                    memref.store(vector.extract(gelu(vector.broadcast(vf, x)), [], [0]), v["y"], [r, i])
                    scf.YieldOp([])
            scf.YieldOp([])
