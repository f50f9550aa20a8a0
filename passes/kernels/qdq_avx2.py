"""The exact integer kernel of QDQ MatMuls on AVX2 (`QdqAvx2Kernel`): QdqKernel's arithmetic
(passes/kernels/qdq.py; docs/semantics.md#the-integer-route-of-qdq-matmuls) without AVX-512 VNNI.

Each product of an activation byte v (int8: xq, or xq ^ 0x80 = xq - 128 for uint8) and a weight
byte u is taken in 16 bits, as MLAS's AVX2 U8U8 kernel takes them: both widened to i16, then
`vpmaddwd` multiplies 16 pairs and adds each two neighbours into an i32 lane. |v * u| <= 128 *
255, so a lane's two products sum to at most 65,280 in magnitude: no saturation (`vpmaddubsw`
would add two products in i16 and saturate, e.g. 255 * 127 twice). Then the same

    d = sum_k v * u - (zw + bias) * sum_k v + c[n],   y = s[n] * float(d)

in i32 as the VNNI kernel, with its epilogues (requantize, bias, mid): bit for bit its results;
u = wq + bias (0..255), zero-extended (`vpmovzxbw`), with the row sums, as the VNNI kernel's
(docs/iree.md#qdq-matmuls-on-avx2-hosts-vpmaddwd). int8 weights without a zero point
(quantize_static's and quantize_dynamic's default) never reach this body: `routes.for_weights`
gives them a `vpmaddubsw` form of qdq_avxvnni.py (QdqAvx2BytesKernel where their pairs cannot
saturate, else QdqAvx2SignKernel), so this kernel computes weights with a zero point and uint8
ones.

Layout (W = 32 columns per workgroup, 4 groups of 8): weights `[N / W, K / 2, 2 * W]` bytes,
for rows 2i and 2i + 1 of K and column j of a group, bytes 2j and 2j + 1 of the group's 16 (the
pairs `vpmaddwd` adds); scales, zero points and c as QdqKernel lays them with 8 lanes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from ..lazy import llvm
from .f32 import GROUPS, Packed, codes
from .loops import Hoisted
from .qdq import QdqKernel, Requantize, RunTimeX
from .tail import ColumnTail

VPMADDWD = "llvm.x86.avx2.pmadd.wd"  # 8 lanes: acc_i32 = a[2i] * b[2i] + a[2i+1] * b[2i+1] (i16)
# i32 to i16 and i16 to 8 bits with saturation, within each 128-bit half: a, b -> a0-3 b0-3 a4-7 b4-7
PACK_WORDS = "llvm.x86.avx2.packssdw"
PACK_BYTES = {"u8": "llvm.x86.avx2.packuswb", "i8": "llvm.x86.avx2.packsswb"}
ADD_WORDS = "llvm.sadd.sat.v16i16"  # i16 lanes added with saturation (`vpaddsw`)
LANES = 8
PAIRS = 8  # pairs of K rows (16 bytes of x) widened at a time
# Rows of x per register tile by column groups per pass over the weights: ROWS x HALF i32
# accumulators and HALF widened weight vectors in AVX2's 16 registers.
ROWS, HALF = 4, 2
# Values of K per chunk of the tile's rows of x widened to i16 in a stack buffer (ROWS x CHUNK x 2
# bytes), from which each pair is broadcast by a load (docs/iree.md#qdq-matmuls-on-avx2-hosts-vpmaddwd).
CHUNK = 1024


@dataclass(frozen=True)
class QdqAvx2Kernel(QdqKernel):
    """The exact integer kernel of a QDQ MatMul on AVX2 (8 lanes, `vpmaddwd`): QdqKernel's
    contract (operands, constants but the weights' layout, epilogues, results)."""

    lanes: int = LANES

    K_STEP: ClassVar[int] = 2 * PAIRS  # K in steps of one vpmaddwd pair of x's widened words
    CAPS: ClassVar[bool] = True  # `Requantize.rounded_words`
    COLUMNS: ClassVar[int] = LANES * GROUPS

    @property
    def direct(self) -> bool:
        return False  # vpmaddwd on widened words: the module docstring

    def name(self) -> str:
        return super().name().replace("dq_matmul_qdq_", "dq_matmul_qdq_avx2_", 1)

    def layout(self, codes8: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> Packed:
        """(weights, scales, zero points or None), the weights in the layout of the module
        docstring, of N whole workgroups."""
        u = codes(codes8, 8, self.k, self.n)
        u = u ^ np.uint8(self.bias) if self.bias else u
        pairs = u.reshape(self.k // 2, 2, self.workgroups, self.width)  # [K / 2, 2, wg, W]
        w = np.ascontiguousarray(pairs.transpose(2, 0, 3, 1)).reshape(self.workgroups, self.k // 2, 2 * self.width)
        return Packed(w, *self.repack_blocks(scale, zero_point))

    def types(self, m: int | None = None) -> dict:
        table = super().types(m)
        table["w"] = ir.MemRefType.get([self.workgroups, self.k // 2, 2 * self.width], ir.IntegerType.get_signless(8))
        return table

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


def zy_words(r: ir.Value, at) -> ir.Value:
    """zy (r[at], an f32 integer) as 16 i16 lanes, as `packed_codes` adds it."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    zy = arith.trunci(i16, arith.fptosi(i32, memref.load(r, [at])))
    return vector.broadcast(ir.VectorType.get([2 * LANES], i16), zy)


def packed_codes(words: list, zy: ir.Value, kind: str) -> ir.Value:
    """The codes of up to four vectors of 8 (`words`: roundeven(y / sy) as i32 lanes by
    `Requantize.rounded_words`) as their bytes in order, 8 a vector, in 32 bytes (past them, the
    last one's again): saturate(roundeven(y / sy) + zy) by a pack to i16 with saturation
    (`vpackssdw`), zy (`zy_words`) added with saturation (`vpaddsw`), a pack to bytes with
    saturation (`vpackuswb` or `vpacksswb`: kind's range), then the dwords put in order (the
    packs work within each 128-bit half): docs/iree.md#qdq-matmuls-on-avx2-hosts-vpmaddwd."""
    i8, i16, i32 = (ir.IntegerType.get_signless(b) for b in (8, 16, 32))
    half, dwords, wide = ir.VectorType.get([2 * LANES], i16), ir.VectorType.get([LANES], i32), ir.VectorType.get([GROUPS * LANES], i8)
    four = words + [words[-1]] * (GROUPS - len(words))
    halves = [llvm.call_intrinsic(half, PACK_WORDS, [a, b], [], []) for a, b in (four[:2], four[2:])]
    halves = [llvm.call_intrinsic(half, ADD_WORDS, [h, zy], [], []) for h in halves]
    packs = vector.bitcast(dwords, llvm.call_intrinsic(wide, PACK_BYTES[kind], halves, [], []))
    return vector.bitcast(wide, vector.shuffle(packs, packs, [0, 4, 1, 5, 2, 6, 3, 7]))


class _Body(RunTimeX, Requantize, ColumnTail, Hoisted):
    """The ops of one AVX2 QDQ kernel body."""

    wide_codes = True  # a row's codes packed at once (`packed`)
    rows, half = ROWS, HALF  # a register tile's rows, and its column groups per pass

    def __init__(self, kernel: QdqAvx2Kernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        self.t8, self.t16, self.t32 = (ir.IntegerType.get_signless(b) for b in (8, 16, 32))
        self.f32 = ir.VectorType.get([LANES], ir.F32Type.get())
        self.i32 = ir.VectorType.get([LANES], self.t32)
        self.words = ir.VectorType.get([2 * LANES], self.t16)
        self.bytes = ir.VectorType.get([2 * LANES], self.t8)
        self.small = ir.VectorType.get([LANES], self.t8)
        self.col0 = arith.muli(workgroup, self.const(kernel.width))
        if kernel.requantize:
            self.load_r()
            self.zy_words = zy_words(v["r"], self.const(1))
        self.run_time_x()

    def madd(self, acc: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.addi(acc, llvm.call_intrinsic(self.i32, VPMADDWD, [a, b], [], []))

    def emit_groups(self) -> None:
        """Tiles of `rows` rows, each pass over the weights taking `half` column groups of
        `self.groups`, then the last m mod `rows` rows by `tail_groups` a pass (as the VNNI
        kernel)."""
        groups = self.groups
        full = self.whole_tiles(self.m, self.rows)
        self.full_tiles(full, self.rows, lambda r0, rows: self.tile(groups, r0, rows, self.half))
        self.tail_rows(full, self.m, self.rows, lambda r0, rows: self.tile(groups, r0, rows, self.tail_groups(rows)))

    def tail_groups(self, rows: int) -> int:
        """Column groups a pass of a tail tile of `rows` rows takes: all (at most 3 rows)."""
        return len(self.groups)

    def x_chunk(self, r, k0) -> ir.Value:
        """2 * PAIRS values of v = xq as int8 (uint8: xq ^ 0x80) of row r from k0, as i16."""
        x = vector.load(self.bytes, self.v["xq"], [r, k0])
        if self.k.unsigned_x:
            x = arith.xori(x, self.splat(self.bytes, ir.IntegerAttr.get(self.t8, -128), "flip"))
        return arith.extsi(self.words, x)

    def row_sums(self, rs: list) -> list:
        """sum_k v of each row (i32): vpmaddwd of v against ones."""
        ones = self.splat(self.words, ir.IntegerAttr.get(self.t16, 1), "ones")
        zero = self.splat(self.i32, ir.IntegerAttr.get(self.t32, 0), "zero_i")
        out = []
        for r in rs:
            loop = scf.ForOp(self.const(0), self.const(self.k.k), self.const(2 * PAIRS), [zero])
            with ir.InsertionPoint(loop.body):
                scf.YieldOp([self.madd(loop.inner_iter_args[0], self.x_chunk(r, loop.induction_variable), ones)])
            out.append(vector.reduction(self.t32, vector.CombiningKind.ADD, loop.results[0]))
        return out

    def starts(self, rs: list, gs: list) -> list:
        """d's start for each (row, group): c[n] - (zw + bias) * sum_k v."""
        v, pairs = self.v, [(r, g) for r in range(len(rs)) for g in range(len(gs))]
        c = [self.x_corrected(vector.load(self.i32, v["c"], [self.wg, self.const(0), self.const(g * LANES)])) for g in gs]
        if "z" not in v and not self.k.bias:
            return [c[g] for _, g in pairs]
        minus = [arith.subi(self.scalar(self.t32, 0), s) for s in self.row_sums(rs)]
        if "z" in v:
            zb = [arith.extui(self.i32, vector.load(self.small, v["z"], [self.wg, self.const(0), self.const(g * LANES)])) for g in gs]
            return [arith.addi(c[g], arith.muli(zb[g], vector.broadcast(self.i32, minus[r]))) for r, g in pairs]
        first = [vector.broadcast(self.i32, arith.muli(s, self.scalar(self.t32, self.k.bias))) for s in minus]
        return [arith.addi(c[g], first[r]) for r, g in pairs]

    def tile(self, gs: list, r0, rows: int, per_pass: int) -> None:
        """y[r0 : r0 + rows, columns of gs] = s * float(d), d by `sums`, in passes of `per_pass`
        groups; then the epilogue, a row's codes packed at once (`packed`)."""
        v = self.v
        rs = [arith.addi(r0, self.const(i)) if i else r0 for i in range(rows)]
        pairs = [(r, g) for r in range(rows) for g in range(len(gs))]
        passes = [range(g0, min(g0 + per_pass, len(gs))) for g0 in range(0, len(gs), per_pass)]
        d = self.sums(gs, rs, passes)
        scales = [self.x_scaled(vector.load(self.f32, v["s"], [self.wg, self.const(0), self.const(g * LANES)])) for g in gs]
        out = [self.output(arith.mulf(scales[g], arith.sitofp(self.f32, d[i])), rs[r], gs[g]) for i, (r, g) in enumerate(pairs)]
        if not self.k.requantize:
            for (r, g), y in zip(pairs, out):
                self.store(y, rs[r], gs[g])
            return
        for first in range(0, len(gs), GROUPS):  # a row's codes packed GROUPS groups at once
            part = gs[first : first + GROUPS]
            codes = self.looked_up([self.packed(out[ri * len(gs) + first : ri * len(gs) + first + len(part)]) for ri in range(rows)])
            live = LANES * len(part)
            for r, y in zip(rs, codes):
                self.store_groups(y if live == GROUPS * LANES else vector.shuffle(y, y, list(range(live))), r, part)

    def sums(self, gs: list, rs: list, passes: list) -> list:
        """d of each (row of rs, group of gs), row-major, from `starts`: per CHUNK values of K, the
        rows' x widened to i16 pairs into a stack buffer once; then per pass (indices into gs),
        per pair of rows of K each group's weights widened once and each row's pair broadcast
        from the buffer (a load, not a shuffle beside the weights' widening; the x chunks no
        longer hold 4 of the 16 registers)."""
        kern, rows = self.k, len(rs)
        buf = self._constant("x_pairs", lambda: memref.alloca(ir.MemRefType.get([ROWS, CHUNK // 2], self.t32), [], []))
        step = self.const(2 * PAIRS)
        chunks = scf.ForOp(self.const(0), self.const(kern.k), self.const(CHUNK), self.starts(rs, gs))
        with ir.InsertionPoint(chunks.body):
            kc = chunks.induction_variable
            if kern.k % CHUNK == 0 or kern.k < CHUNK:
                size = self.const(min(CHUNK, kern.k))
            else:  # the last chunk partial
                size = arith.minui(self.const(CHUNK), arith.subi(self.const(kern.k), kc))
            widen = scf.ForOp(self.const(0), size, step)
            with ir.InsertionPoint(widen.body):
                kk = widen.induction_variable
                for ri, r in enumerate(rs):
                    x = vector.bitcast(self.i32, self.x_chunk(r, arith.addi(kc, kk)))
                    vector.store(x, buf, [self.const(ri), arith.divui(kk, self.const(2))])
                scf.YieldOp([])
            d = list(chunks.inner_iter_args)
            for gis in passes:
                at = [ri * len(gs) + gi for ri in range(rows) for gi in gis]  # d's indices this pass adds to
                loop = scf.ForOp(self.const(0), size, step, [d[i] for i in at])
                with ir.InsertionPoint(loop.body):
                    self.pass_body(loop, kc, buf, rows, [gs[gi] for gi in gis])
                for i, total in zip(at, loop.results):
                    d[i] = total
            scf.YieldOp(d)
        return list(chunks.results)

    def packed(self, words: list) -> ir.Value:
        """The codes of a row's groups (`words`, up to four) in 32 bytes: `packed_codes`."""
        return packed_codes(words, self.zy_words, self.k.requantize)

    def pass_body(self, loop, kc, buf, rows: int, gs: list) -> None:
        """The body of a pass over 2 * PAIRS values of K from kc + the loop's index: d of each
        (row, group of gs), in the loop's iter_args, += each pair of v times each of u (the
        weights zero-extended: the module docstring)."""
        v, kk, d = self.v, loop.induction_variable, list(loop.inner_iter_args)
        at0 = arith.divui(kk, self.const(2))
        row0 = arith.addi(arith.divui(kc, self.const(2)), at0)
        for p in range(PAIRS):
            row, at = (arith.addi(row0, self.const(p)), arith.addi(at0, self.const(p))) if p else (row0, at0)
            wv = [arith.extui(self.words, vector.load(self.bytes, v["w"], [self.wg, row, self.const(g * 2 * LANES)])) for g in gs]
            for ri in range(rows):
                xb = vector.bitcast(self.words, vector.broadcast(self.i32, memref.load(buf, [self.const(ri), at])))
                for gi in range(len(gs)):
                    i = ri * len(gs) + gi
                    d[i] = self.madd(d[i], wv[gi], xb)
        scf.YieldOp(d)
