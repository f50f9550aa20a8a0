"""The max pooling of 8-bit NHWC codes (`MaxPoolKernel`): a QDQ model's MaxPool between rewritten
convolutions, whose codes stay NHWC through it (python/qdq_conv_matmuls.py).

x [n, h, w, c] codes, kh x kw windows with strides (sh, sv) and pads (top, left, bottom, right):
y[b, i, j, :] is the largest code of the window's taps that lie in x (ONNX's MaxPool, whose
padding is no value; every window holds one tap of x at least, the pads being less than the
taps). Integers compared as the codes' type (signed or not), C at a time in vectors of up to
VECTOR bytes; a window wholly in x is read without checks, one across the padding tap by tap,
every address checked against x first.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, vector

from .loops import Hoisted
from .window import Windows, image_rows, within

VECTOR = 64  # bytes compared at once: a wider C is a loop of these and the rest


@dataclass(frozen=True)
class MaxPoolKernel(Windows):
    """The max pooling of NHWC codes [n, h, w, c] (the module docstring)."""

    pads: tuple  # top, left, bottom, right
    signed: bool

    def why_not(self) -> str | None:
        """Why the kernel does not take these dims, or None."""
        if min(self.n, self.h, self.w, self.c, self.kh, self.kw, self.sh, self.sv) < 1 or min(self.pads) < 0:
            return "its dims, window and strides must be positive and its pads non-negative"
        if max(self.pads[0], self.pads[2]) >= self.kh or max(self.pads[1], self.pads[3]) >= self.kw:
            return f"its pads {list(self.pads)} must be less than its {self.kh} x {self.kw} window (a window of padding alone has no value)"
        if self.ho < 1 or self.wo < 1:
            return f"its {self.kh} x {self.kw} window does not fit its padded input"
        return None

    def name(self) -> str:
        pads = "_p" + "x".join(map(str, self.pads)) if any(self.pads) else ""
        kind = "i8" if self.signed else "u8"
        return f"dq_maxpool_{kind}_n{self.n}_h{self.h}_w{self.w}_c{self.c}_k{self.kh}x{self.kw}_s{self.sh}x{self.sv}{pads}"

    def types(self) -> dict:
        i8 = ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([self.n * self.h * self.w, self.c], i8), "y": ir.MemRefType.get([self.n * self.ho * self.wo, self.c], i8)}

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Hoisted):
    """The ops of one max pooling body: this workgroup's output image rows, each output pixel's
    channels a vector at a time."""

    def __init__(self, kernel: MaxPoolKernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        self.i8 = ir.IntegerType.get_signless(8)

    def emit(self) -> None:
        image_rows(self, self.image_row)

    def image_row(self, r, b, i) -> None:
        """Output image row (b, i) (y's rows from r * wo): each pixel's window, without checks
        where it lies wholly in x."""
        k = self.k
        top = arith.subi(arith.muli(i, self.const(k.sh)), self.const(k.pads[0]))
        cols = scf.ForOp(self.const(0), self.const(k.wo), self.const(1))
        with ir.InsertionPoint(cols.body):
            j = cols.induction_variable
            left = arith.subi(arith.muli(j, self.const(k.sv)), self.const(k.pads[1]))
            out = arith.addi(arith.muli(r, self.const(k.wo)), j)
            base = arith.muli(b, self.const(k.h))  # x's row (b, 0)
            whole = scf.IfOp(arith.andi(within(self.const, top, k.h, k.kh), within(self.const, left, k.w, k.kw)), has_else=True)
            for block, checked in ((whole.then_block, False), (whole.else_block, True)):
                with ir.InsertionPoint(block):
                    self.channels(lambda at, size: self.window(base, top, left, at, size, checked), out)
                    scf.YieldOp([])
            scf.YieldOp([])

    def channels(self, largest, out) -> None:
        """y's row `out`: `largest(at, size)` of each VECTOR channels from `at` (a loop where
        there are two such vectors or more), then of the rest."""
        k, y = self.k, self.v["y"]
        full = k.c // VECTOR
        if full > 1:
            loop = scf.ForOp(self.const(0), self.const(full * VECTOR), self.const(VECTOR))
            with ir.InsertionPoint(loop.body):
                vector.store(largest(loop.induction_variable, VECTOR), y, [out, loop.induction_variable])
                scf.YieldOp([])
        elif full == 1:
            vector.store(largest(self.const(0), VECTOR), y, [out, self.const(0)])
        if k.c % VECTOR:
            at = self.const(full * VECTOR)
            vector.store(largest(at, k.c % VECTOR), y, [out, at])

    def window(self, base, top, left, at, size: int, checked: bool) -> ir.Value:
        """The largest of the window's codes at channels at ... at + size - 1: every tap's
        (`checked`: only the taps in x, each address checked first; the others no value)."""
        k, x = self.k, self.v["x"]
        t = ir.VectorType.get([size], self.i8)
        larger = arith.maxsi if k.signed else arith.maxui
        lowest = -128 if k.signed else 0
        acc = arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(self.i8, lowest)))
        for p in range(k.kh):
            row = arith.addi(top, self.const(p)) if p else top
            for q in range(k.kw):
                col = arith.addi(left, self.const(q)) if q else left
                pixel = arith.addi(arith.muli(arith.addi(base, row), self.const(k.w)), col)
                if not checked:
                    acc = larger(acc, vector.load(t, x, [pixel, at]))
                    continue
                inside = scf.IfOp(arith.andi(within(self.const, row, k.h, 1), within(self.const, col, k.w, 1)), [t], has_else=True)
                with ir.InsertionPoint(inside.then_block):
                    scf.YieldOp([larger(acc, vector.load(t, x, [pixel, at]))])
                with ir.InsertionPoint(inside.else_block):
                    scf.YieldOp([acc])
                acc = inside.results[0]
        return acc
