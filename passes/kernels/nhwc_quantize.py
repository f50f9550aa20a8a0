"""QuantizeLinear of an NCHW f32 image into NHWC codes (`NhwcQuantizeKernel`): a CNN's input,
quantized per tensor, for the first rewritten convolution's im2col (python/qdq_conv_matmuls.py).

x [n, c, h, w] f32, y [n, h, w, c] codes of `kind` ("u8" or "i8"), r = [sy, zy] (then sy's split
reciprocal zh, zl where kernels/reciprocal.py finds it gives the division's codes: `reciprocal`):

    y[b, i, j, ch] = saturate(roundeven(x[b, ch, i, j] / sy) + zy)

as the QDQ kernels' epilogue computes a code (qdq.Requantize.code_bytes: clamped, rounded by
adding 1.5 * 2^23, the low byte plus zy's). The workgroups split the n * h image rows; each row
is LANES pixels at a time: a vector of each channel's plane, then the channels' bytes
interleaved pixel by pixel in one shuffle and stored at once (C * LANES bytes); a row's last W
mod LANES pixels the same, the loads and the store masked. Every finite x gets its code; a NaN,
or an infinite x through the split reciprocal, has none (its byte is arbitrary, as the QDQ
kernels' requantize gives it: docs/semantics.md#qdq-convolutions-as-int8-matmuls).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, vector

from .loops import Hoisted
from .qdq import Requantize

LANES = 8  # pixels a step: one AVX2 vector of f32 per channel
# at most this many channels (C * LANES bytes interleaved in one shuffle): an image's, not a
# feature map's (docs/iree.md#the-input-quantizelinear)
MOST_CHANNELS = 8
WORKGROUPS = 8  # at most, along the image rows (as the window kernels': kernels/window.py)


@dataclass(frozen=True)
class NhwcQuantizeKernel:
    """QuantizeLinear of x [n, c, h, w] f32 into codes [n, h, w, c] (the module docstring)."""

    n: int
    c: int
    h: int
    w: int
    kind: str  # the codes' type, "u8" or "i8"
    reciprocal: bool = False  # r ends with sy's split reciprocal (zh, zl): no division
    results = ("y",)

    # (position of sy in r, the codes' kind): reciprocal.reciprocals' `divisors`
    @property
    def divisors(self) -> list:
        return [(0, self.kind)]

    @property
    def r_size(self) -> int:
        return 4 if self.reciprocal else 2

    @property
    def rows(self) -> int:
        """Image rows, n * h: the dispatch's workload."""
        return self.n * self.h

    @property
    def workgroups(self) -> int:
        return max(1, min(WORKGROUPS, self.rows))

    def why_not(self) -> str | None:
        """Why the kernel does not take these dims, or None."""
        if min(self.n, self.c, self.h, self.w) < 1:
            return "its dims must be positive"
        if self.c > MOST_CHANNELS:
            return f"C = {self.c} channels: the kernel interleaves at most {MOST_CHANNELS} (an image's)"
        return None

    def name(self) -> str:
        return f"dq_quantize_nhwc_{self.kind}_n{self.n}_c{self.c}_h{self.h}_w{self.w}" + ("_rcp" if self.reciprocal else "")

    def types(self) -> dict:
        f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([self.n * self.c * self.h, self.w], f32), "r": ir.MemRefType.get([self.r_size], f32),
                "y": ir.MemRefType.get([self.n * self.h, self.w * self.c], i8)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Hoisted, Requantize):
    """The ops of one body: this workgroup's image rows, LANES pixels at a time, the last W mod
    LANES masked."""

    def __init__(self, kernel: NhwcQuantizeKernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        self.f32, self.i32, self.small = (ir.VectorType.get([LANES], t) for t in (f32, i32, i8))  # as Requantize reads them

    def emit(self) -> None:
        self.load_r()
        rows = scf.ForOp(*self.workgroup_rows(self.m, self.wg, self.k.workgroups), self.const(1))
        with ir.InsertionPoint(rows.body):
            self.image_row(rows.induction_variable)
            scf.YieldOp([])

    def image_row(self, r) -> None:
        """Image row r = b * h + i: x's rows (b * c + ch) * h + i, y's row r."""
        k = self.k
        b, i = arith.divui(r, self.const(k.h)), arith.remui(r, self.const(k.h))
        planes = [arith.addi(arith.muli(arith.addi(arith.muli(b, self.const(k.c)), self.const(ch)), self.const(k.h)), i) for ch in range(k.c)]
        full = k.w // LANES * LANES
        if full:
            loop = scf.ForOp(self.const(0), self.const(full), self.const(LANES))
            with ir.InsertionPoint(loop.body):
                self.pixels(planes, r, loop.induction_variable, LANES)
                scf.YieldOp([])
        if k.w % LANES:
            self.pixels(planes, r, self.const(full), k.w % LANES)

    def pixels(self, planes: list, r, j, live: int) -> None:
        """Pixels j ... j + live - 1 of the row (live <= LANES; fewer: the loads and the store
        masked to them): each channel's codes, interleaved, stored."""
        k = self.k
        split = (self.r[2], self.r[3]) if k.reciprocal else None
        codes = [self.code_bytes(self.load(p, j, live), self.r[0], self.r[1], k.kind, split) for p in planes]
        joined = codes[0]
        for c in codes[1:]:  # the channels' vectors end to end, then pixel by pixel
            size = ir.VectorType(joined.type).shape[0]
            joined = vector.shuffle(joined, c, list(range(size + LANES)))
        if k.c > 1:
            joined = vector.shuffle(joined, joined, [ch * LANES + p for p in range(LANES) for ch in range(k.c)])
        at = [r, arith.muli(j, self.const(k.c))]
        if live == LANES:
            vector.store(joined, self.v["y"], at)
            return
        mask = ir.VectorType.get([LANES * k.c], ir.IntegerType.get_signless(1))
        vector.maskedstore(self.v["y"], at, vector.constant_mask(mask, [live * k.c]), joined)

    def load(self, plane, j, live: int) -> ir.Value:
        """x's LANES values of row `plane` from column j (the first `live`; zeros after them)."""
        if live == LANES:
            return vector.load(self.f32, self.v["x"], [plane, j])
        mask = ir.VectorType.get([LANES], ir.IntegerType.get_signless(1))
        zero = self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero_f")
        return vector.maskedload(self.f32, self.v["x"], [plane, j], vector.constant_mask(mask, [live]), zero)
