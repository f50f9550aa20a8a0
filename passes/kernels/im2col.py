"""The im2col of 8-bit NHWC codes for the QDQ MatMul kernels (`Im2colKernel`): the rows a QDQ
convolution's MatMul reads (python/qdq_conv_matmuls.py), written by one dispatch.

x [n, h, w, c] codes padded by `pads` (top, left, bottom, right) with the code zx, kh x kw taps
with strides (sh, sv): row (b * ho + i) * wo + j of y [n * ho * wo, kp] holds, tap-major, the c
codes under each tap (t = p * kw + q at x[b, i * sh + p - top, j * sv + q - left]), zx for a tap
in the padding, then zx up to kp (the MatMul kernels' K step). A row's kw taps of one kernel row
are kw * c contiguous bytes of x where the window lies inside x: one copy (`span`); a window
across the padding copies or fills each tap by itself. Only bytes of x are read (every address
checked against x's rows and columns first); each byte of y is written once.

IREE's own im2col of the same graph (a Slice per tap into a Concat, then a Transpose and a Pad)
was a dispatch per tap and two more per convolution: docs/iree.md#the-im2col-dispatch.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from .loops import Hoisted
from .window import Windows, image_rows, within

PIECE = 64  # bytes a copy moves at once: a longer span is a loop of these and the rest


@dataclass(frozen=True)
class Im2colKernel(Windows):
    """The im2col rows of NHWC codes [n, h, w, c] (the module docstring)."""

    pads: tuple  # top, left, bottom, right
    kp: int  # the row's length: kh * kw * c, padded with zx

    @property
    def k(self) -> int:
        return self.kh * self.kw * self.c

    def why_not(self) -> str | None:
        """Why the kernel does not take these dims, or None."""
        if min(self.n, self.h, self.w, self.c, self.kh, self.kw, self.sh, self.sv) < 1 or min(self.pads) < 0:
            return "its dims, taps and strides must be positive and its pads non-negative"
        if self.ho < 1 or self.wo < 1:
            return f"its {self.kh} x {self.kw} taps do not fit its padded input"
        if self.kp < self.k:
            return f"its rows of {self.kp} codes are shorter than its {self.kh} x {self.kw} x {self.c} taps"
        return None

    def name(self) -> str:
        pads = "_p" + "x".join(map(str, self.pads)) if any(self.pads) else ""
        return f"dq_im2col_n{self.n}_h{self.h}_w{self.w}_c{self.c}_k{self.kh}x{self.kw}_s{self.sh}x{self.sv}{pads}_r{self.kp}"

    def types(self) -> dict:
        i8 = ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([self.n * self.h * self.w * self.c], i8),  # flat: a span crosses x's columns
                "z": ir.MemRefType.get([1], i8), "y": ir.MemRefType.get([self.n * self.ho * self.wo, self.kp], i8)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Hoisted):
    """The ops of one im2col body: this workgroup's output image rows, each column's row of y."""

    def __init__(self, kernel: Im2colKernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        self.i8 = ir.IntegerType.get_signless(8)
        self.zx = memref.load(v["z"], [self.const(0)])

    def bytes(self, size: int) -> ir.VectorType:
        return ir.VectorType.get([size], self.i8)

    def emit(self) -> None:
        def image_row(r, b, i):
            cols = scf.ForOp(self.const(0), self.const(self.k.wo), self.const(1))
            with ir.InsertionPoint(cols.body):
                self.row(b, i, cols.induction_variable, arith.addi(arith.muli(r, self.const(self.k.wo)), cols.induction_variable))
                scf.YieldOp([])

        image_rows(self, image_row)

    def row(self, b, i, j, out) -> None:
        """Row `out` of y: output (b, i, j)'s taps, kernel row by kernel row, then zx up to kp."""
        k = self.k
        left = arith.subi(arith.muli(j, self.const(k.sv)), self.const(k.pads[1]))
        inside = within(self.const, left, k.w, k.kw)  # every column of the window in x
        for p in range(k.kh):
            top = arith.subi(arith.addi(arith.muli(i, self.const(k.sh)), self.const(p)), self.const(k.pads[0]))
            across = within(self.const, top, k.h, 1)
            base = arith.muli(arith.addi(arith.muli(b, self.const(k.h)), top), self.const(k.w))  # x's pixel (b, top, 0)
            at = p * k.kw * k.c
            whole = scf.IfOp(arith.andi(across, inside), has_else=True)
            with ir.InsertionPoint(whole.then_block):
                self.copy(arith.muli(arith.addi(base, left), self.const(k.c)), out, at, k.kw * k.c)
                scf.YieldOp([])
            with ir.InsertionPoint(whole.else_block):
                for q in range(k.kw):  # each tap by itself: copied where it lies in x, else zx
                    col = arith.addi(left, self.const(q)) if q else left
                    tap = scf.IfOp(arith.andi(across, within(self.const, col, k.w, 1)), has_else=True)
                    with ir.InsertionPoint(tap.then_block):
                        self.copy(arith.muli(arith.addi(base, col), self.const(k.c)), out, at + q * k.c, k.c)
                        scf.YieldOp([])
                    with ir.InsertionPoint(tap.else_block):
                        self.fill(out, at + q * k.c, k.c)
                        scf.YieldOp([])
                scf.YieldOp([])
        if k.kp > k.k:
            self.fill(out, k.k, k.kp - k.k)

    def copy(self, src, out, at: int, size: int) -> None:
        """`size` bytes of x from flat index src into row `out` of y from column `at`: PIECE
        bytes at a time (a loop where there are two or more), then the rest."""
        x, y = self.v["x"], self.v["y"]
        pieces = size // PIECE
        if pieces > 1:
            loop = scf.ForOp(self.const(0), self.const(pieces * PIECE), self.const(PIECE))
            with ir.InsertionPoint(loop.body):
                o = loop.induction_variable
                vector.store(vector.load(self.bytes(PIECE), x, [arith.addi(src, o)]), y, [out, arith.addi(self.const(at), o)])
                scf.YieldOp([])
        elif pieces == 1:
            vector.store(vector.load(self.bytes(PIECE), x, [src]), y, [out, self.const(at)])
        rest = size - pieces * PIECE
        if rest:
            done = pieces * PIECE
            vector.store(vector.load(self.bytes(rest), x, [arith.addi(src, self.const(done)) if done else src]), y, [out, self.const(at + done)])

    def fill(self, out, at: int, size: int) -> None:
        """zx into `size` bytes of row `out` of y from column `at`."""
        for lo in range(0, size, PIECE):
            n = min(PIECE, size - lo)
            vector.store(vector.broadcast(self.bytes(n), self.zx), self.v["y"], [out, self.const(at + lo)])
