"""A matmul kernel reading quantized weights: y[m, n] = sum_k x[m, k] * dequantize(w)[k, n].

The weights are constants, quantized along K in blocks of `block` (a per-column scale is one block
of K), 4-bit (two per byte) or 8-bit, with an optional integer zero point and an optional
fractional float one (`Problem.float_zero_point`: MatMulNBits' zero points of the scales' type).
`Kernel.repack` lays them out once, when the stage runs, for the kernel's loads; `Kernel.emit`
writes the kernel body as `scf`/`vector`/`arith`/`memref` ops on memrefs (no target dialect):
whoever calls it supplies the buffers and which column groups the body computes (an IREE
workgroup: passes/torch_onnx_dq_matmul_iree_cpu.py).

Layout (W = GROUPS * lanes columns per workgroup, KB = K / block blocks): each workgroup's
weights are one contiguous stream, row after row of K.
- weights `[N / W, K / 2, W]` bytes for 4 bits: byte (w, r, j) holds row 2r of column w*W + j in
  bits 0-3 and row 2r + 1 in bits 4-7; `[N / W, K, W]` for 8 bits. Each value is stored biased
  to unsigned, `u = q + bias` (bias 8 for int4, 128 for int8, 0 unsigned), so one mask and one
  shift unpack it;
- scales `[N / W, KB, W]` f32 (f16/bf16 scales widened exactly);
- zero points `[N / W, KB, W]` bytes holding `z + bias`; without a zero point the bias alone.
Then `u - (z + bias) = q - z`, exactly;
- float zero points `[N / W, KB, W]` f32 holding `zs = z * s` rounded once (`zf`), with a float
  zero point only.

Two bodies, chosen by the row count at run time (docs/iree.md, "The matmul kernel (CPU)"), with
one arithmetic: each weight dequantized exactly as dq's dequantize computes it, `(u - z') * s`
with the zero point taken off in i32 before the conversion (`_Body.dequantized`), and a float
zero point as `(u - z') * s - zs`, per weight, the arithmetic of onnxruntime's kernel
(docs/semantics.md#onnxruntimes-weight-formats); then summed against x in f32 by fused
multiply-adds:
- one row (a token, M = 1; memory and unpacking bound): straight from the unpacked weights into
  one accumulator per column group (docs/semantics.md#matmul-of-dequantized-weights);
- several rows: per chunk of K, the group's weights are dequantized into a stack panel of f32,
  then an f32 register-blocked product of `ROWS` rows by `PANEL_GROUPS * lanes` columns reads it
  (each weight unpacked once per workgroup, not per row).
Sums run in f32 in order of k within each (block, column); no integer accumulation, no
quantization of x, no term the sum cancels: the error against a float64 product of the
dequantized weights is f32 rounding of the sums, for any x (an infinity times a zero weight is
NaN, as in the product ONNX states).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from dequant.dialect import unpack

from .loops import Hoisted, fenced, rows_blocks
from .problem import Problem

# Columns per workgroup: this many column groups of `lanes` (one-row body: one accumulator each).
GROUPS = 4
# Several-rows body: ROWS x PANEL_GROUPS column groups of accumulators (8 of 16 AVX2 registers,
# 4 more for the panel's row, one for x), K chunk of the stack panel (CHUNK x 32 f32: 16 KiB at 8
# lanes); few rows per tile, as each row of a tile is a stream of x of its own
# (docs/iree.md#the-kernels-tile-shapes).
ROWS, PANEL_GROUPS, CHUNK = 2, 4, 128
# `Kernel.repack` lays out this many bytes of weights at a time: its temporaries stay in cache
# (docs/iree.md#the-kernels-tile-shapes).
REPACK_BYTES = 1 << 18


def codes(stored: np.ndarray, bits: int, k: int, n: int) -> np.ndarray:
    """The codes [K, N] of weights stored as `Kernel.repack` takes them, one uint8 each (a 4-bit
    code in the low bits)."""
    return stored.reshape(k, n) if bits == 8 else unpack.unpack_codes(stored.reshape(-1), bits, k * n).reshape(k, n)


class Packed(NamedTuple):
    """A kernel's constants in its layout (`repack`): weights, scales, zero points (None: the
    bias alone), for the QDQ kernel the per-column corrections c, and float zero points zs."""

    w: np.ndarray
    s: np.ndarray
    z: np.ndarray | None
    c: np.ndarray | None = None
    zf: np.ndarray | None = None


@dataclass(frozen=True)
class Kernel:
    """The kernel of a Problem (its weights: K, N, the block along K, 4 or 8 bits, signedness,
    whether a zero point buffer is read) at a vector width of `lanes` f32 lanes."""

    problem: Problem
    lanes: int = 8
    results = ("y",)  # the dispatch's results among the roles of `types`, in order

    k = property(lambda self: self.problem.k)
    n = property(lambda self: self.problem.n)
    block = property(lambda self: self.problem.block)
    bits = property(lambda self: self.problem.bits)
    signed = property(lambda self: self.problem.signed)
    zero_point = property(lambda self: self.problem.zero_point)
    float_zero_point = property(lambda self: self.problem.float_zero_point)

    @property
    def width(self) -> int:
        """Columns per workgroup."""
        return GROUPS * self.lanes

    @property
    def blocks(self) -> int:
        return self.k // self.block

    @property
    def per_byte(self) -> int:
        return 8 // self.bits

    @property
    def bias(self) -> int:
        return 1 << (self.bits - 1) if self.signed else 0

    @property
    def workgroups(self) -> int:
        return self.n // self.width

    @property
    def chunk(self) -> int:
        """The panel's K chunk: whole blocks up to CHUNK rows, or a part of one longer block."""
        if self.block <= CHUNK:
            d = max(d for d in range(1, self.blocks + 1) if self.blocks % d == 0 and d * self.block <= CHUNK)
            return d * self.block
        return max(c for c in range(2, CHUNK + 1, 2) if self.block % c == 0)

    @staticmethod
    def why_not(p: Problem, lanes: int = 8) -> str | None:
        """Why a problem's weights do not fit the kernel at `lanes`, or None."""
        k, n, block, bits = p.k, p.n, p.block, p.bits
        if bits not in (4, 8):
            return f"{bits}-bit weights (the kernel reads 4 and 8 bits)"
        if k % block or block % 2:
            return f"block {block} must be even and divide K = {k}"
        if n % (lanes * GROUPS):
            return f"N = {n} is not a multiple of {lanes * GROUPS} columns"
        if block > CHUNK and not any(block % c == 0 for c in range(2, CHUNK + 1, 2)):
            return f"block {block} has no even divisor up to {CHUNK}"
        return None

    def name(self) -> str:
        kind = ("i" if self.signed else "u") + str(self.bits)
        zs = ("_z" if self.zero_point else "") + ("_zf" if self.float_zero_point else "")
        return f"dq_matmul_{kind}_k{self.k}_n{self.n}_b{self.block}{zs}_l{self.lanes}"

    # --- the constants' layout --------------------------------------------------------------

    def repack(self, stored: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, float_zero_point: np.ndarray | None = None) -> Packed:
        """The kernel's (weights, scales, zero points or None) from the weights as the model
        stores them, `stored` (uint8: for 8 bits a code per weight, [K, N]; for 4 bits K * N / 2
        bytes in ONNX order, weight (k, n) in bits 4 * (n mod 2) of byte (k * N + n) / 2), the
        scale [KB, N] and the zero point [KB, N] (integers, or None), as numpy arrays in the
        layout above, and the float zero points zs [KB, N] (f32: z * s, with `float_zero_point`
        problems only). A signed code c holds q = c - 2^bits * (c >= 2^(bits - 1)), so q + bias =
        c ^ bias (the bias flips the code's top bit, of each code in a byte at once). The weights
        are laid out REPACK_BYTES at a time, never unpacked to a byte each first."""
        wgs, width = self.workgroups, self.width
        rows = self.k // self.per_byte  # byte rows
        w = np.empty((wgs, rows, width), np.uint8)
        step = max(1, REPACK_BYTES // self.n)
        if self.bits == 4:
            # Byte (r, n) holds column n of rows 2r (bits 0-3) and 2r + 1 (bits 4-7): in 16 bits,
            # the two stored bytes a (row 2r) and b (row 2r + 1) holding columns n = 2c and 2c + 1
            # give spread(a) | spread(b) << 4, spread(x) = (x | x << 4) & 0x0F0F moving x's high
            # nibble to the next byte: little-endian, bytes (r, 2c) and (r, 2c + 1).
            pairs = stored.reshape(rows, 2, self.n // 2)
            a, b = np.empty((step, self.n // 2), np.uint16), np.empty((step, self.n // 2), np.uint16)
            for r0 in range(0, rows, step):
                r = min(step, rows - r0)
                a16, b16 = a[:r], b[:r]
                a16[...], b16[...] = pairs[r0 : r0 + r, 0], pairs[r0 : r0 + r, 1]
                for x in (a16, b16):
                    x |= x << 4
                    x &= 0x0F0F
                b16 <<= 4
                a16 |= b16
                if self.bias:
                    a16 ^= 0x8888
                w[:, r0 : r0 + r] = a16.view(np.uint8).reshape(r, wgs, width).transpose(1, 0, 2)
        else:
            codes8 = stored.reshape(rows, self.n)
            for r0 in range(0, rows, step):
                part = codes8[r0 : r0 + step] ^ np.uint8(self.bias) if self.bias else codes8[r0 : r0 + step]
                w[:, r0 : r0 + step] = part.reshape(-1, wgs, width).transpose(1, 0, 2)
        zf = None if float_zero_point is None else self.repack_blocks(float_zero_point, None)[0]
        return Packed(w, *self.repack_blocks(scale, zero_point), zf=zf)

    def repack_blocks(self, scale: np.ndarray, zero_point: np.ndarray | None) -> tuple:
        """(scales, zero points or None) [N / W, KB, W] from [KB, N]: f32, and `z + bias` bytes."""
        wgs, width = self.workgroups, self.width

        def by_group(a):
            return np.ascontiguousarray(a.reshape(self.blocks, wgs, width).transpose(1, 0, 2))

        s = by_group(np.asarray(scale, np.float32))
        z = by_group((zero_point.astype(np.int32) + self.bias).astype(np.uint8)) if zero_point is not None else None
        return s, z

    def types(self, m: int | None = None) -> dict:
        """The memref types of the kernel's buffers in binding order, x, w, s[, z][, zf], y (m: x's and
        y's row count, None dynamic)."""
        dyn = ir.ShapedType.get_dynamic_size() if m is None else m
        f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
        table = {
            "x": ir.MemRefType.get([dyn, self.k], f32),
            "w": ir.MemRefType.get([self.workgroups, self.k // self.per_byte, self.width], i8),
            "s": ir.MemRefType.get([self.workgroups, self.blocks, self.width], f32),
        }
        if self.zero_point:
            table["z"] = ir.MemRefType.get([self.workgroups, self.blocks, self.width], i8)
        if self.float_zero_point:
            table["zf"] = ir.MemRefType.get([self.workgroups, self.blocks, self.width], f32)
        table["y"] = ir.MemRefType.get([dyn, self.n], f32)
        return table

    # --- the body -----------------------------------------------------------------------------

    def emit(self, x, w, s, z, y, m, workgroup, zf=None) -> None:
        """The body computing y's columns of workgroup `workgroup` (an index: `width` columns)
        for all m rows, at the current insertion point."""
        _Body(self, x, w, s, z, y, m, workgroup, zf).emit()

    def emit_views(self, views: dict, m, workgroup) -> None:
        """`emit` on the buffers named by their roles in `types`."""
        self.emit(views["x"], views["w"], views["s"], views.get("z"), views["y"], m, workgroup, views.get("zf"))


class _Body(Hoisted):
    """The ops of one kernel body (state shared by its loops)."""

    def __init__(self, kernel: Kernel, x, w, s, z, y, m, workgroup, zf=None):
        super().__init__()
        self.k, self.x, self.w, self.s, self.z, self.y, self.m = kernel, x, w, s, z, y, m
        self.zf = zf
        lanes = kernel.lanes
        self.f32 = ir.VectorType.get([lanes], ir.F32Type.get())
        self.i32 = ir.VectorType.get([lanes], ir.IntegerType.get_signless(32))
        self.bytes = ir.VectorType.get([lanes], ir.IntegerType.get_signless(8))
        self.wg = workgroup
        self.col0 = arith.muli(workgroup, self.const(kernel.width))

    def splat_i32(self, v: int) -> ir.Value:
        return self.splat_int(self.i32, v)

    def zeros(self) -> ir.Value:
        return self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero")

    def hoist(self) -> None:
        """The constants every path of the body reads, first at the block's top: f32 zeros, then
        `nibbles`' masks."""
        self.zero = self.zeros()
        self.splat_i32(15), self.splat_i32(4)

    def emit(self) -> None:
        self.hoist()
        one = arith.cmpi(arith.CmpIPredicate.ule, self.m, self.const(1))
        branch = scf.IfOp(one, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            self.one_row()
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            self.rows()
            scf.YieldOp([])

    @property
    def per_load(self) -> int:
        """Rows of K one `fields` call unpacks."""
        return self.k.per_byte

    # The weights of one byte row of group g (lanes g*lanes...), unpacked to i32 vectors (one per
    # value in a byte, in order of K).
    def fields(self, g: int, row) -> list:
        b = vector.load(self.bytes, self.w, [self.wg, row, self.const(g * self.k.lanes)])
        v = arith.extui(self.i32, b)
        if self.k.bits == 8:
            return [v]
        return self.nibbles(v)

    # The zero point z' of group g, block kb as an i32 vector (the bias alone without a buffer).
    def zero_point(self, g: int, kb) -> ir.Value:
        if self.z is None:
            return self.splat_i32(self.k.bias)
        return arith.extui(self.i32, vector.load(self.bytes, self.z, [self.wg, kb, self.const(g * self.k.lanes)]))

    def scale(self, g: int, kb) -> ir.Value:
        return vector.load(self.f32, self.s, [self.wg, kb, self.const(g * self.k.lanes)])

    # The float zero point zs of group g, block kb (an f32 vector), or None without one.
    def float_zero_point(self, g: int, kb) -> ir.Value | None:
        if self.zf is None:
            return None
        return vector.load(self.f32, self.zf, [self.wg, kb, self.const(g * self.k.lanes)])

    def column(self, g: int) -> ir.Value:
        return arith.addi(self.col0, self.const(g * self.k.lanes))

    def dequantized(self, field, zero_point, scale, zs=None) -> ir.Value:
        """`(u - z') * s` as dq's dequantize computes it: the zero point taken off in i32 (exact),
        converted exactly, then rounded once by the scale; with a float zero point, `zs` (z * s)
        then taken off, rounded once more (onnxruntime's arithmetic; no FMA: `q * s` is rounded
        as its kernel rounds it). Both bodies read every weight so."""
        w = arith.mulf(arith.sitofp(self.f32, arith.subi(field, zero_point)), scale)
        return w if zs is None else arith.subf(fenced(w), zs)

    def one_row(self) -> None:
        """y[r, cols] = sum_k x[r, k] * ((u - z') * s) for r < m (m <= 1), in order of k: each
        weight dequantized exactly (`dequantized`), then one FMA, the several-rows body's
        arithmetic without its panel (each weight is read once at one row). One accumulator per
        column group: GROUPS chains of FMAs, few enough registers for AVX2's 16 (one per value of
        a byte spilled)."""
        kern, f32 = self.k, self.f32
        gs, fields = range(GROUPS), kern.per_byte

        def block(r, kb, sums):
            zs = [self.zero_point(g, kb) for g in gs]
            scales = [self.scale(g, kb) for g in gs]
            floats = [self.float_zero_point(g, kb) for g in gs]
            per_block = kern.block // fields
            first_row = arith.muli(kb, self.const(per_block))
            inner = scf.ForOp(self.const(0), self.const(per_block), self.const(1), sums)
            with ir.InsertionPoint(inner.body):
                j, acc = inner.induction_variable, list(inner.inner_iter_args)
                row = arith.addi(first_row, j)
                k0 = arith.muli(row, self.const(fields))
                xs = [vector.broadcast(f32, memref.load(self.x, [r, arith.addi(k0, self.const(i)) if i else k0])) for i in range(fields)]
                for g in gs:
                    for xv, field in zip(xs, self.fields(g, row)):
                        acc[g] = vector.fma(xv, self.dequantized(field, zs[g], scales[g], floats[g]), acc[g])
                scf.YieldOp(acc)
            return list(inner.results)

        def store(r, totals):
            for g, total in zip(gs, totals):
                vector.store(total, self.y, [r, self.column(g)])

        rows_blocks(self.const, self.m, kern.blocks, [self.zero] * GROUPS, block, store)

    def rows(self) -> None:
        """Several rows: per half of the workgroup's columns, per K chunk, the exact dequantized
        weights into a stack panel, then register tiles over the rows: ROWS at a time, the last
        m mod ROWS rows by tiles of the powers of two below ROWS (at most one each)."""
        kern = self.k
        # Elements of vector type: the stack slot gets the vector's alignment, so no access splits
        # a cache line (docs/iree.md#the-kernels-tile-shapes).
        panel_type = ir.MemRefType.get([kern.chunk, PANEL_GROUPS], self.f32)
        self.panel = memref.alloca(panel_type, [], [])
        full = self.whole_tiles(self.m, ROWS)
        for half in range(GROUPS // PANEL_GROUPS):
            gs = range(half * PANEL_GROUPS, (half + 1) * PANEL_GROUPS)
            chunks = scf.ForOp(self.const(0), self.const(kern.k), self.const(kern.chunk))
            with ir.InsertionPoint(chunks.body):
                kc = chunks.induction_variable
                self.fill_panel(gs, kc)
                first = arith.cmpi(arith.CmpIPredicate.eq, kc, self.const(0))
                tile = functools.partial(self.tile, gs, kc, first)  # tile(r0, rows)
                self.full_tiles(full, ROWS, tile)
                self.tail_rows(full, self.m, ROWS, tile)
                scf.YieldOp([])

    def fill_panel(self, gs: list, kc) -> None:
        """panel[k - kc, i * lanes + j] = (u - z') * s for k in the chunk, group gs[i], lane j."""
        kern = self.k
        rows_per_block = min(kern.block, kern.chunk) // self.per_load
        blocks_here = max(kern.chunk // kern.block, 1)
        loop = scf.ForOp(self.const(0), self.const(blocks_here), self.const(1))
        with ir.InsertionPoint(loop.body):
            b = loop.induction_variable
            k_first = arith.addi(kc, arith.muli(b, self.const(min(kern.block, kern.chunk))))
            kb = arith.divui(k_first, self.const(kern.block))
            zs = [self.zero_point(g, kb) for g in gs]
            scales = [self.scale(g, kb) for g in gs]
            floats = [self.float_zero_point(g, kb) for g in gs]
            inner = scf.ForOp(self.const(0), self.const(rows_per_block), self.const(1))
            with ir.InsertionPoint(inner.body):
                j = inner.induction_variable
                k0 = arith.addi(k_first, arith.muli(j, self.const(self.per_load)))
                row = arith.divui(k0, self.const(self.per_load))
                at = arith.subi(k0, kc)
                for i, (g, zp, scale, zf) in enumerate(zip(gs, zs, scales, floats)):
                    for f, field in enumerate(self.fields(g, row)):
                        memref.store(self.dequantized(field, zp, scale, zf), self.panel, [arith.addi(at, self.const(f)) if f else at, self.const(i)])
                scf.YieldOp([])
            scf.YieldOp([])

    def tile(self, gs, kc, first, r0, rows: int) -> None:
        """y[r0 : r0 + rows, gs' columns] += x[rows, chunk] @ panel (zero before the first chunk)."""
        kern, f32 = self.k, self.f32
        rs = [arith.addi(r0, self.const(i)) if i else r0 for i in range(rows)]
        cols = [self.column(g) for g in gs]
        start = scf.IfOp(first, [f32] * (rows * len(gs)), has_else=True)
        with ir.InsertionPoint(start.then_block):
            scf.YieldOp([self.zero] * (rows * len(gs)))
        with ir.InsertionPoint(start.else_block):
            scf.YieldOp([vector.load(f32, self.y, [r, c]) for r in rs for c in cols])
        loop = scf.ForOp(self.const(0), self.const(kern.chunk), self.const(1), list(start.results))
        with ir.InsertionPoint(loop.body):
            k, acc = loop.induction_variable, list(loop.inner_iter_args)
            kk = arith.addi(kc, k)
            ws = [memref.load(self.panel, [k, self.const(i)]) for i in range(len(gs))]
            out = []
            for ri, r in enumerate(rs):
                xv = vector.broadcast(f32, memref.load(self.x, [r, kk]))
                out += [vector.fma(xv, wv, acc[ri * len(gs) + ci]) for ci, wv in enumerate(ws)]
            scf.YieldOp(out)
        for ri, r in enumerate(rs):
            for ci, c in enumerate(cols):
                vector.store(loop.results[ri * len(gs) + ci], self.y, [r, c])
