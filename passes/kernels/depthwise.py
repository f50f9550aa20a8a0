"""The exact kernel of QDQ depthwise convolutions (`DepthwiseKernel`): NHWC int8 or uint8 codes in,
the QuantizeLinear's codes out, one dispatch per convolution (docs/iree.md#the-depthwise-kernel;
the arithmetic: docs/semantics.md#the-depthwise-kernel).

For output (n, h, w) and channel c, with x the input's codes padded by (pt, pl, pb, pr) rows
and columns of the code zx (read as zx, never stored: `pads`):

    d = sum_(i, j) (x[n, h * sh + i, w * sw + j, c] - zx) * (wq[i, j, c] - zw[c])

exactly, then y = s[c] * float(d) (+ b[c]), s[c] = sx * sw[c] rounded to f32 when the stage
runs, and the codes saturate(roundeven(y / sy) + zy): the QDQ MatMul kernel's epilogue
(qdq.py's `Requantize`), so a depthwise convolution agrees with a pointwise one taken by that
kernel as its QDQ graph says. The sum is taken in f32 FMAs on integers: each code widened and
converted exactly, times wc = wq - zw (exact), onto c[c] = -zx * sum_(i, j) wc. Every product and
partial sum is an integer below 2^24 in magnitude (checked by `why_not`), where f32 is
exact, so d is the integer sum. `lanes` f32 lanes, 8 (AVX2's vectors, as the MobileNets'
channel counts are multiples of 8) or, on a module tagged `dq.avx512bw` with C a multiple of 16,
16 (AVX-512's); the stage writes the node only for a module tagged `dq.avx2` or `dq.avx512vnni`
(python/qdq_depthwise.py), the CPUs it was measured on. At 8 lanes a tile's codes leave as the
AVX2 QDQ kernel's do (`Requantize.rounded_words`, then qdq_avx2.py's `packed_codes`: AVX2's
saturating packs, 4 columns' vectors at once; without the cap where the stage bounds y / sy,
`bounded`); at 16, each vector's bytes by `Requantize.code_bytes` (no x86 intrinsic).

Layout: xq [N, H, W, C] bytes, wc [kh * kw, C] f32 (tap-major), c, s and b [C] f32, r = [sy,
zy] f32 (and zx with pads, then sy's split reciprocal zh, zl with `reciprocal`), (with `table`:
t [256] bytes, each code's byte b stored as t[b], as the QDQ kernels' epilogue), y [N, Ho, Wo,
C] bytes. Workgroups split the N * Ho output rows; per row, TILE output columns at a time (then
the rest one at a time), each group of `lanes` channels with its taps' weights: each input
column the tile reads in a kernel row is widened and converted once, and the TILE sums are
independent chains of FMAs. A tile whose inputs all lie in x reads them as they are; one
reading the padding (the borders) reads each input at its row and column clamped into x and
takes zx's value where they were outside.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .f32 import GROUPS
from .lookup import CODES, entry
from .loops import Hoisted, fenced
from .qdq import Requantize
from .qdq_avx2 import packed_codes, zy_words
from .window import Windows, image_rows

LANES = 8  # f32 lanes of the kernel's vectors on AVX2; WIDE on AVX-512 where C allows
WIDE = 16
EXACT = 1 << 24  # f32 holds every integer below this in magnitude
TILE = 8  # output columns summed at once, sharing their inputs' conversions (docs/iree.md#the-depthwise-kernel)


@dataclass(frozen=True)
class DepthwiseKernel(Windows):
    """A QDQ depthwise convolution of NHWC codes [n, h, w, c] padded by `pads` (top, left,
    bottom, right) by kh x kw taps per channel with strides (sh, sv): output [n, ho, wo, c]
    codes of `out` ("u8" or "i8")."""

    unsigned_x: bool
    out: str
    bias: bool
    table: bool = False
    lanes: int = LANES
    pads: tuple = (0, 0, 0, 0)
    reciprocal: bool = False  # r ends with sy's split reciprocal (qdq.py's QdqKernel)
    bounded: bool = False  # as qdq.py's QdqKernel's: the 8-lane epilogue (`rounded_words`) leaves out its cap

    @property
    def divisors(self) -> tuple:
        """(position in r of sy, kind) of the QuantizeLinear the epilogue computes (qdq.py's
        Requantize)."""
        return ((0, self.out),)

    @property
    def r_size(self) -> int:
        """r's values: sy, zy, zx where x is padded, and the split reciprocal."""
        return (3 if any(self.pads) else 2) + (2 if self.reciprocal else 0)

    @staticmethod
    def sums_bound(zx: int, unsigned_x: bool, centred: np.ndarray) -> int:
        """A bound on |c + any partial sum| of one output (so on |d|), for weights minus their
        zero points `centred` [taps, C] and x's zero point zx: (|zx| + the largest |code|) times
        the largest sum over taps of |wq - zw|."""
        return (abs(zx) + (255 if unsigned_x else 128)) * int(np.abs(centred).sum(axis=0).max())

    @staticmethod
    def why_not(zx: int, unsigned_x: bool, centred: np.ndarray) -> str | None:
        """Why a depthwise convolution of weights minus their zero points `centred` [taps, C]
        (integers) and x's zero point zx does not fit the kernel, or None: C a multiple of LANES,
        `sums_bound` within f32's exact integers."""
        c = centred.shape[1]
        if c % LANES:
            return f"{c} channels (the kernel takes multiples of {LANES})"
        bound = DepthwiseKernel.sums_bound(zx, unsigned_x, centred)
        if bound >= EXACT:
            return f"its sums could reach {bound}, past f32's exact integers (2^24)"
        return None

    def name(self) -> str:
        x = "u8" if self.unsigned_x else "i8"
        pads = "_p" + "x".join(map(str, self.pads)) if any(self.pads) else ""
        return (f"dq_depthwise_{x}_q{self.out}_n{self.n}_h{self.h}_w{self.w}_c{self.c}_k{self.kh}x{self.kw}"
                f"_s{self.sh}x{self.sv}{pads}{'_b' if self.bias else ''}{'_t' if self.table else ''}{'_l16' if self.lanes == WIDE else ''}"
                f"{'_rcp' if self.reciprocal else ''}{'_bd' if self.bounded else ''}")  # fmt: skip

    def types(self) -> dict:
        i8, f32 = ir.IntegerType.get_signless(8), ir.F32Type.get()
        out = {"xq": ir.MemRefType.get([self.n, self.h, self.w, self.c], i8),
               "w": ir.MemRefType.get([self.kh * self.kw, self.c], f32),
               "c": ir.MemRefType.get([self.c], f32), "s": ir.MemRefType.get([self.c], f32)}  # fmt: skip
        if self.bias:
            out["b"] = ir.MemRefType.get([self.c], f32)
        out["r"] = ir.MemRefType.get([self.r_size], f32)
        if self.table:
            out["t"] = ir.MemRefType.get([CODES], i8)
        out["y"] = ir.MemRefType.get([self.n, self.ho, self.wo, self.c], i8)
        return out

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Requantize, Hoisted):
    """The ops of one depthwise kernel body."""

    def __init__(self, kernel: DepthwiseKernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        lanes = kernel.lanes
        self.f32 = ir.VectorType.get([lanes], ir.F32Type.get())
        self.i32 = ir.VectorType.get([lanes], ir.IntegerType.get_signless(32))
        self.small = ir.VectorType.get([lanes], ir.IntegerType.get_signless(8))
        self.load_r()
        if lanes == LANES:
            self.zy_words = zy_words(v["r"], self.const(1))

    def emit(self) -> None:
        k = self.k

        def row(r, n, h):
            top = arith.muli(h, self.const(k.sh))
            top = arith.subi(top, self.const(k.pads[0])) if k.pads[0] else top  # the padding's rows: above x
            self.row(n, h, top)

        image_rows(self, row)

    def row(self, n, h, top) -> None:
        """The outputs of row (n, h): TILE columns at a time (their sums independent chains),
        then the last wo mod TILE one at a time; in each, every group of `lanes` channels with its
        taps' weights."""
        k, v = self.k, self.v
        full = k.wo // TILE * TILE
        for lo, hi, step in ((0, full, TILE), (full, k.wo, 1)):
            if hi <= lo:
                continue
            cols = scf.ForOp(self.const(lo), self.const(hi), self.const(step))
            with ir.InsertionPoint(cols.body):
                groups = scf.ForOp(self.const(0), self.const(k.c), self.const(k.lanes))
                with ir.InsertionPoint(groups.body):
                    c0 = groups.induction_variable
                    per_channel = {role: vector.load(self.f32, v[role], [c0]) for role in ("c", "s", "b") if role in v}
                    taps = [vector.load(self.f32, v["w"], [self.const(t), c0]) for t in range(k.kh * k.kw)]
                    self.columns(n, h, top, c0, cols.induction_variable, step, taps, per_channel)
                    scf.YieldOp([])
                scf.YieldOp([])
        if k.table:
            self.table_row(n, h)

    def table_row(self, n, h) -> None:
        """Row (n, h)'s bytes through the table t, one at a time after the row is written: the
        row's sums keep every vector register (a lookup by vpshufb, as the QDQ kernels' epilogue
        takes it, holds 16 of t's vectors)."""
        k, v = self.k, self.v
        cols = scf.ForOp(self.const(0), self.const(k.wo), self.const(1))
        with ir.InsertionPoint(cols.body):
            channels = scf.ForOp(self.const(0), self.const(k.c), self.const(1))
            with ir.InsertionPoint(channels.body):
                at = [n, h, cols.induction_variable, channels.induction_variable]
                memref.store(entry(v["t"], memref.load(v["y"], at)), v["y"], at)
                scf.YieldOp([])
            scf.YieldOp([])

    def columns(self, n, h, top, c0, col0, count: int, taps: list, per_channel: dict) -> None:
        """Outputs (n, h, col0 ... col0 + count - 1) of channels [c0, c0 + lanes), from their
        taps' weights and their c, s (and b) vectors: the tile's inputs read as they are where
        they all lie in x, else through `padded` (the borders)."""
        k = self.k
        left = arith.subi(arith.muli(col0, self.const(k.sv)), self.const(k.pads[1])) if k.pads[1] else arith.muli(col0, self.const(k.sv))
        if not any(k.pads):
            self.tile(n, h, top, left, c0, col0, count, taps, per_channel, self.inside)
            return
        span = (count - 1) * k.sv + k.kw
        sge, sle = arith.CmpIPredicate.sge, arith.CmpIPredicate.sle
        inside = [arith.cmpi(sge, top, self.const(0)), arith.cmpi(sle, arith.addi(top, self.const(k.kh)), self.const(k.h)),
                  arith.cmpi(sge, left, self.const(0)), arith.cmpi(sle, arith.addi(left, self.const(span)), self.const(k.w))]  # fmt: skip
        branch = scf.IfOp(arith.andi(arith.andi(inside[0], inside[1]), arith.andi(inside[2], inside[3])), has_else=True)
        with ir.InsertionPoint(branch.then_block):
            self.tile(n, h, top, left, c0, col0, count, taps, per_channel, self.inside)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            self.tile(n, h, top, left, c0, col0, count, taps, per_channel, self.padded)
            scf.YieldOp([])

    def inside(self, n, row, col, c0) -> ir.Value:
        """x[n, row, col, c0 ...] (in x), widened and converted to f32."""
        widen = arith.extui if self.k.unsigned_x else arith.extsi
        return arith.sitofp(self.f32, widen(self.i32, vector.load(self.small, self.v["xq"], [n, row, col, c0])))

    def padded(self, n, row, col, c0) -> ir.Value:
        """x[n, row, col, c0 ...] of the padded input: at row and column clamped into x, and zx
        (r[2]) where either was outside; no address outside x is read."""
        k = self.k
        ok = []
        at = []
        for i, size in ((row, k.h), (col, k.w)):
            ok.append(arith.andi(arith.cmpi(arith.CmpIPredicate.sge, i, self.const(0)), arith.cmpi(arith.CmpIPredicate.slt, i, self.const(size))))
            at.append(arith.minsi(arith.maxsi(i, self.const(0)), self.const(size - 1)))
        return arith.select(arith.andi(ok[0], ok[1]), self.inside(n, at[0], at[1], c0), self.r[2])

    def tile(self, n, h, top, left, c0, col0, count: int, taps: list, per_channel: dict, read) -> None:
        """The outputs `columns` says, each input column read by `read(n, row, col, c0)`."""
        k, v = self.k, self.v
        cols = [arith.addi(col0, self.const(u)) if u else col0 for u in range(count)]
        acc = [per_channel["c"]] * count
        for i in range(k.kh):
            row = arith.addi(top, self.const(i)) if i else top
            xs = {}  # each input column the tile reads in this kernel row, widened and converted once
            for o in sorted({u * k.sv + j for u in range(count) for j in range(k.kw)}):
                xs[o] = read(n, row, arith.addi(left, self.const(o)) if o else left, c0)
            for j in range(k.kw):
                for u in range(count):
                    acc[u] = math.fma(xs[u * k.sv + j], taps[i * k.kw + j], acc[u])
        ys = []
        for u in range(count):
            y = arith.mulf(per_channel["s"], acc[u])
            if "b" in per_channel:  # the product rounded before the bias is added (no FMA)
                y = arith.addf(fenced(y), per_channel["b"])
            ys.append(y)
        if k.lanes == WIDE:
            for u, y in enumerate(ys):
                vector.store(self.code_bytes(y, self.r[0], self.r[1], k.out, self.split(0)), v["y"], [n, h, cols[u], c0])
            return
        words = [self.rounded_words(y, self.r[0], self.split(0)) for y in ys]
        for first in range(0, count, GROUPS):  # GROUPS columns' codes packed at once, 8 bytes each
            codes = packed_codes(words[first : first + GROUPS], self.zy_words, k.out)
            for j in range(min(GROUPS, count - first)):
                vector.store(vector.shuffle(codes, codes, list(range(j * LANES, (j + 1) * LANES))), v["y"], [n, h, cols[first + j], c0])
