"""The exact integer kernel of QDQ MatMuls (`QdqKernel`, AVX-512 VNNI): the int8-activation
kernel's body (passes/kernels/int8.py) reading the model's own quantized activation xq instead
of a Quantize dispatch's (docs/semantics.md#the-integer-route-of-qdq-matmuls).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from ..lazy import llvm
from .f32 import GROUPS, Packed
from .int8 import LANES, QDQ_HALF, Int8Kernel, _Body
from .lookup import CODES
from .loops import FINITE, ROUND, fenced, finite_clamp, vpdpbusd
from .problem import FLOAT_ZERO_POINT, Problem
from .reciprocal import RANGES
from .tail import ColumnTail, pad

# The workgroups a QDQ dispatch aims at, columns times rows: docs/iree.md#rows-across-workgroups.
WORKGROUP_TARGET = 8
# IREE's local-task runtime hands a worker 8 of a dispatch's workgroups at a time once the grid
# has 8 a worker, one at a time below (its IREE_TASK_DISPATCH_MAX_TILES_PER_SHARD_RESERVATION):
# two workers run a grid of 24 as 16 and 8. The row groups are chosen to split evenly in eights
# (`busiest_share`; docs/iree.md#workgroups-in-eights).
RESERVATION = 8
CHUNK = 32  # bytes a table lookup takes at once: one ymm register
VPSHUFB = "llvm.x86.avx2.pshuf.b"  # 32 bytes: a[i] = t[idx[i] & 15] within each 16-byte half
CVTPS2DQ = "llvm.x86.avx.cvt.ps2dq.256"  # 8 lanes f32 -> i32, rounded as MXCSR says; INT_MIN out of range
# `rounded_words` converts min(y / sy, PACK_BOUND): above the i16 range the packs saturate (zy,
# at most 255 in magnitude, added between them), below 2^31 where the conversion overflows.
PACK_BOUND = 65536.0
# |y / sy| below this for every x (`quotient_bound`): the AVX2 bodies convert without the cap above
# (`bounded`); below 2^31 with room for the bound's own roundings.
QUOTIENT_BOUND = 2.0**30


def busiest_share(tiles: int) -> float:
    """The share of a grid of `tiles` workgroups the busier of two IREE workers runs, each
    taking the next RESERVATION of them (one below 2 * RESERVATION) when free, all alike."""
    step = 1 if tiles < 2 * RESERVATION else RESERVATION
    return sum(min(step, tiles - t) for t in range(0, tiles, 2 * step)) / tiles


def balanced(columns: int, groups: list) -> int:
    """Of `groups` (row group counts, fewest first), the one whose grid with `columns` column
    workgroups two workers split the most evenly (the fewest where even)."""
    return min(groups, key=lambda r: busiest_share(columns * r))


@dataclass(frozen=True)
class QdqKernel(Int8Kernel):
    """The exact integer kernel of a QDQ MatMul (16 lanes: AVX-512 VNNI): x is the quantized
    activation itself, xq [M, K] int8 or uint8 with a constant per-tensor scale sx and zero point
    zx (IREE's QuantizeLinear computes it), the weights 8-bit per tensor or per column (one block
    of K). Per (row, column), exactly in i32 (docs/semantics.md#the-integer-route-of-qdq-matmuls):

        d = sum_k (xq - zx) * (wq - zw) = sum_k v * u - (zw + bias) * sum_k v + c[n]

    with v = xq as int8 (uint8 xq: xq ^ 0x80 = xq - 128), u = wq + bias the weights' unsigned
    bytes (the layout above, one vpdpbusd per 4 rows of K and 16 columns), sum_k v per row by
    vpdpbusd against ones, and c[n] = -(zx - 128 [uint8 xq]) * sum_k (wq - zw) made when the stage
    runs. Then y = s[n] * float(d), s[n] = sx * sw[n] rounded to f32 when the stage runs.

    With `requantize` ("i8" or "u8"), the QuantizeLinear reading y (per tensor, constant sy and
    zy: r = [sy, zy] f32) is the epilogue, and y is stored as that QuantizeLinear's bytes:
    saturate(roundeven(y / sy) + zy), a true f32 division, as ONNX computes it. With `bias_add`, a
    constant b[n] (f32, laid out as c) is added to y first; with `mid` ("i8" or "u8") too, y is
    first quantized and dequantized per tensor (r = [sy, zy, sy', zy', s'', z'']: y becomes
    (saturate(roundeven(y / sy') + zy') - z'') * s''), as quantize_static writes a MatMul's bias.
    With `residual` (the first QuantizeLinear's kind, the other codes' kind), a residual Add
    follows that QuantizeLinear, Q3(DQ1(q) + DQ2(a)), a [M, N] another tensor's codes (an operand
    read as y is written): r's values go on with [sq, zq, s1, z1, s2, z2] (q's scale and zero
    point, DQ1's, DQ2's) and r[0], r[1] are Q3's; each product (q - z1) * s1 and (a - z2) * s2 is
    rounded, then their sum, as the nodes compute them. With `table` too, each code's byte b is
    stored as t[b] (t [256] bytes: the activation the last QuantizeLinear's reader computes, as a
    table of codes; python/qdq_tables.py). With `reciprocal`, r ends with the split reciprocal
    (zh, zl) of each quantization's sy (in `divisors`' order), and y / sy is computed as fma(y,
    zh, y * zl), which the stage found gives every code the division gives
    (passes/kernels/reciprocal.py). With `bounded`, the stage found |y / sy| below
    QUOTIENT_BOUND for every x (`quotient_bound`), so a body that caps the quotient before its
    conversion (`CAPS`: the AVX2 bodies' `rounded_words`) leaves the cap out.

    `direct` (uint8 xq, int8 weights without a zero point: what quantize_static writes): v = xq
    itself as vpdpbusd's unsigned bytes and u = wq as its signed ones, so that

        d = sum_k xq * wq + c[n],   c[n] = -zx * sum_k wq

    needs no row sums and no flips (the constant form's c is made from the one above in `repack`).

    `dynamic` (the problem has no x scale or zero point: DynamicQuantizeLinear makes them at run
    time): sx and zx are operands [1] (f32, and zx's byte), s[n] holds sw[n] and c[n] holds
    sum_k (wq - zw); the body makes f32(sx * sw[n]) and -(zx - 128 [uint8 xq, not direct]) * c[n]
    once per workgroup, the same s and c the constant form holds
    (docs/semantics.md#dynamic-int8-matmuls)."""

    requantize: str | None = None
    bias_add: bool = False
    mid: str | None = None
    table: bool = False
    reciprocal: bool = False
    residual: tuple | None = None  # (the first QuantizeLinear's kind, the other codes' kind)
    bounded: bool = False

    @property
    def divisors(self) -> tuple:
        """(position in r of sy, kind) of each QuantizeLinear the epilogue computes: the output's,
        the mid one, the residual's first; their split reciprocals follow r's values in this
        order."""
        out = [(0, self.requantize), *([(2, self.mid)] if self.mid else [])]
        return tuple(out + ([(6 if self.mid else 2, self.residual[0])] if self.residual else []))

    @property
    def r_size(self) -> int:
        """r's values: sy and zy of the output, the mid requantization and its dequantization, the
        residual's (the first QuantizeLinear's sy and zy, DQ1's and DQ2's scales and zero
        points), then the split reciprocals."""
        values = (6 if self.mid else 2) + (6 if self.residual else 0)
        return values + (2 * len(self.divisors) if self.reciprocal else 0)

    @property
    def unsigned_x(self) -> bool:
        return self.problem.activation == "u8"

    @property
    def direct(self) -> bool:
        """Whether vpdpbusd reads xq as it is and the weights' codes unbiased (the docstring)."""
        return self.unsigned_x and self.signed and not self.zero_point

    @property
    def flips_x(self) -> bool:
        """Whether the body reads xq ^ 0x80 (its x operand of the other signedness: vpdpbusd's
        signed one for uint8 xq, unless `direct`)."""
        return self.unsigned_x and not self.direct

    @property
    def bias(self) -> int:
        return 0 if self.direct else super().bias

    @property
    def dynamic(self) -> bool:
        """Whether x's scale and zero point are run-time operands (DynamicQuantizeLinear's)."""
        return self.problem.x_zero_point is None

    # K in steps of K_STEP rows (one vpdpbusd: 4), any N in workgroups of COLUMNS columns, the
    # last one partial (passes/kernels/tail.py)
    K_STEP: ClassVar[int] = 4
    CAPS: ClassVar[bool] = False  # whether the body caps y / sy before converting it (`bounded`)
    COLUMNS: ClassVar[int] = LANES * GROUPS
    # a row group's rows: a multiple of this, a multiple of the bodies' row tiles (iree_dispatch.py)
    ROW_STEP: ClassVar[int] = 32
    # From this many rows at least two row groups, whatever `row_groups`: the workgroups running at
    # once then write different rows, not pieces of the same rows' cache lines
    # (docs/iree.md#rows-across-workgroups).
    APART_ROWS: ClassVar[int] = 256

    @property
    def workgroups(self) -> int:
        return -(-self.n // self.width)

    @property
    def columns(self) -> int:
        """N padded to whole workgroups: the constants' columns."""
        return self.workgroups * self.width

    @property
    def row_groups(self) -> int:
        """At most this many workgroups along the rows (passes/iree_dispatch.py splits xq and y
        there, ROW_STEP rows or more each; `apart_groups` from APART_ROWS rows where that is
        more): with few column workgroups (N <= 64 is one) the dispatch would keep all but one
        core idle (docs/iree.md#rows-across-workgroups); with 2 * RESERVATION or more, 1, 2 or
        4, whichever two workers split the most evenly (`balanced`), where the rows, if known,
        give each group 2 * ROW_STEP (docs/iree.md#workgroups-in-eights)."""
        c = self.workgroups
        if c < 2 * RESERVATION:
            return max(1, WORKGROUP_TARGET // c)
        rows = self.problem.rows
        return balanced(c, [1] + [r for r in (2, 4) if rows is None or rows >= r * 2 * self.ROW_STEP])

    @property
    def apart_groups(self) -> int:
        """The row groups from APART_ROWS rows: 2 or 4, whichever two workers split the most
        evenly (`balanced`)."""
        return balanced(self.workgroups, [2, 4])

    @classmethod
    def why_not(cls, p: Problem) -> str | None:
        """Why a QDQ MatMul's problem does not fit the kernel, or None (`p.bound`: a bound on |d|)."""
        if p.float_zero_point:
            return FLOAT_ZERO_POINT
        k, n, largest = p.k, p.n, p.bound
        if p.bits != 8 or p.block != k:
            return f"its weights are {p.weights} blocked by {p.block} (the kernel reads 8-bit weights per tensor or per column)"
        if k % cls.K_STEP:
            return f"K = {k} is not a multiple of {cls.K_STEP}"
        if n < 1:
            return f"N = {n} columns"
        if largest >= 1 << 31:
            return f"K = {k} is too long for an exact i32 sum (|d| up to {largest})"
        return None

    def name(self) -> str:
        kind = ("i" if self.signed else "u") + "8"
        out = (f"_q{self.requantize}" if self.requantize else "") + (f"_m{self.mid}" if self.mid else "") + ("_b" if self.bias_add else "")
        out += (f"_r{''.join(self.residual)}" if self.residual else "") + ("_t" if self.table else "") + ("_rcp" if self.reciprocal else "")
        out += "_bd" if self.bounded else ""
        dyn = "_dyn" if self.dynamic else ""
        return f"dq_matmul_qdq_{'u8' if self.unsigned_x else 'i8'}_{kind}_k{self.k}_n{self.n}{'_z' if self.zero_point else ''}{dyn}{out}"

    def repack(self, codes: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, correction: np.ndarray) -> Packed:
        """(weights, scales, zero points or None, corrections) from the weights' codes [K, N],
        s [1, N] f32, zw [1, N] (or None) and c [1, N] (int64 within i32), each padded with
        zeros to whole workgroups (`columns`)."""
        n, columns = self.n, self.columns
        codes = np.reshape(codes, (self.k, n))
        if self.direct and not self.dynamic:  # -zx * sum_k wq = -(zx - 128) * sum_k wq - 128 * sum_k wq
            correction = correction - 128 * codes.view(np.int8).astype(np.int64).sum(axis=0, keepdims=True)
            # may pass 2^31 where |d| does not: i32 sums wrap, so d = sum_k xq wq + c is exact mod 2^32
            correction = (correction + (1 << 31)) % (1 << 32) - (1 << 31)
        wide = dataclasses.replace(self, problem=dataclasses.replace(self.problem, n=columns))
        z = None if zero_point is None else pad(np.reshape(zero_point, (-1, n)), columns)
        packed = wide.layout(pad(codes, columns), pad(np.reshape(scale, (-1, n)), columns), z)
        return packed._replace(c=self.per_column(correction.astype(np.int32)))

    def layout(self, codes: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> Packed:
        """(weights, scales, zero points or None) in the kernel's layout, of N whole workgroups."""
        return Int8Kernel.repack(self, codes, scale, zero_point)

    def per_column(self, values: np.ndarray) -> np.ndarray:
        """Values [1, N] (or [N]) laid out [workgroups, 1, width] (zeros past N), as c and b are read."""
        return np.ascontiguousarray(pad(np.reshape(values, (1, self.n)), self.columns).reshape(1, self.workgroups, self.width).transpose(1, 0, 2))

    def types(self, m: int | None = None) -> dict:
        dyn = ir.ShapedType.get_dynamic_size() if m is None else m
        table = super().types(m)
        i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        out = {"xq": ir.MemRefType.get([dyn, self.k], i8)}
        if self.residual:
            out["a"] = ir.MemRefType.get([dyn, self.n], i8)  # the residual Add's other codes
        if self.dynamic:
            out.update(sx=ir.MemRefType.get([1], ir.F32Type.get()), zx=ir.MemRefType.get([1], i8))
        out.update({role: table[role] for role in ("w", "s", "z") if role in table})
        out["c"] = ir.MemRefType.get([self.workgroups, 1, self.width], i32)
        if self.bias_add:
            out["b"] = ir.MemRefType.get([self.workgroups, 1, self.width], ir.F32Type.get())
        if self.requantize:
            out["r"] = ir.MemRefType.get([self.r_size], ir.F32Type.get())
            if self.table:
                out["t"] = ir.MemRefType.get([CODES], i8)
            out["y"] = ir.MemRefType.get([dyn, self.n], i8)
        else:
            out["y"] = table["y"]
        return out

    def emit_views(self, v: dict, m, workgroup) -> None:
        _QdqBody(self, v, m, workgroup).emit()


def quotient_bound(largest: int, s: np.ndarray, r: np.ndarray, b: np.ndarray | None, mid: str | None = None, residual: tuple | None = None) -> float:
    """A bound on |y / sy| at a kernel's requantize (a static one: s = sx * sw known) for every x:
    |d| <= largest (the problem's `bound`), so |y| <= max |s| * largest; after a `mid`
    requantization y is (q' - z'') * s'', and after a `residual` Add (q - z1) * s1 + (a - z2) *
    s2, each code less a zero point of its range at most 255 in magnitude; then + max |b|, and /
    |sy| (r as QdqKernel lays it out). Each f32 operation rounds by at most 2^-24 of its value:
    the bound allows 2^-16. inf where a value is not finite."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        y = float(np.max(np.abs(s))) * largest
        if mid:
            y = 255 * abs(float(r[4]))
        if b is not None:
            y += float(np.max(np.abs(b)))
        if residual:
            at = 6 if mid else 2
            y = 255 * (abs(float(r[at + 2])) + abs(float(r[at + 4])))
        q = y / abs(float(r[0])) * (1 + 2.0**-16)
    return q if np.isfinite(q) else float("inf")


class RunTimeX:
    """A dynamic QdqKernel's run-time x terms, shared by its bodies: `run_time_x` loads sx and zx
    (call it where the views are defined); `x_scaled(s)` is f32(sx * s) and `x_corrected(c)` is
    -zx' * c (zx' = zx - 128 for uint8 xq, zx for int8), vectors of the body's lanes: s and c as
    the constant form holds them."""

    def run_time_x(self) -> None:
        if not self.k.dynamic:
            return
        i32 = ir.IntegerType.get_signless(32)
        sx = memref.load(self.v["sx"], [self.const(0)])
        zx = memref.load(self.v["zx"], [self.const(0)])
        zx = arith.extui(i32, zx) if self.k.unsigned_x else arith.extsi(i32, zx)
        shift = arith.subi(zx, arith.constant(i32, 128)) if self.k.unsigned_x and not self.k.direct else zx
        self.sx = vector.broadcast(self.f32, sx)
        self.minus_zx = vector.broadcast(self.i32, arith.subi(arith.constant(i32, 0), shift))

    def x_scaled(self, s: ir.Value) -> ir.Value:
        return arith.mulf(self.sx, s) if self.k.dynamic else s

    def x_corrected(self, c: ir.Value) -> ir.Value:
        return arith.muli(self.minus_zx, c) if self.k.dynamic else c


class Requantize:
    """QdqKernel's epilogue, shared by its bodies (vpdpbusd here and in qdq_avxvnni.py, vpmaddwd in
    qdq_avx2.py) and the depthwise kernel: what y becomes after the integer sum (`output`), and
    the table of codes its bytes go through (`looked_up`, a tile's outputs at once), with the
    body's `k` (the kernel: `divisors`, `r_size`, `reciprocal`, `residual`), `v`, `wg`, `const`,
    `splat`, `load_row` (ColumnTail's) and vector types; `load_r` defines `r`."""

    # Whether `output` gives y / sy rounded as an i32 lane (`rounded_words`) rather than its code's
    # byte (`code_bytes`): the AVX2 body packs a row's words into bytes at once, adding zy and
    # saturating as it packs (qdq_avx2.py's `packed`).
    wide_codes = False

    def load_r(self) -> None:
        """r's values, each broadcast to a vector once (r is not defined at the body's top)."""
        self.r = [vector.broadcast(self.f32, memref.load(self.v["r"], [self.const(i)])) for i in range(self.k.r_size)]

    def split(self, at: int) -> tuple | None:
        """The split reciprocal (zh, zl) of the sy at r[at] (one of the kernel's `divisors`), r's
        last pairs in their order; None where the kernel divides."""
        if not self.k.reciprocal:
            return None
        divisors = [p for p, _ in self.k.divisors]
        i = self.k.r_size - 2 * (len(divisors) - divisors.index(at))
        return self.r[i], self.r[i + 1]

    def output(self, y: ir.Value, row, group: int) -> ir.Value:
        """y, or its requantized bytes (after the mid requantization, the bias and the residual
        Add, if any) of row `row`."""
        if not self.k.requantize:
            return y
        r = self.r
        if self.k.mid:  # (q' - z'') * s'': q' - z'' is exact in f32, the product rounded once
            y = arith.mulf(arith.subf(self.quantized(y, r[2], r[3], self.k.mid, self.split(2)), r[5]), r[4])
        if self.k.bias_add:  # the product rounded before the bias is added (no FMA: `fenced`)
            y = arith.addf(fenced(y), vector.load(self.f32, self.v["b"], [self.wg, self.const(0), self.const(group * self.k.lanes)]))
        if self.k.residual:  # DQ1(Q(y)) + DQ2(a): each product rounded once, then the sum
            at = 6 if self.k.mid else 2
            first, kind = self.k.residual
            sq, zq, s1, z1, s2, z2 = r[at : at + 6]
            own = fenced(arith.mulf(arith.subf(self.quantized(y, sq, zq, first, self.split(at)), z1), s1))
            wide = (arith.extsi if kind == "i8" else arith.extui)(self.i32, self.load_row(self.v["a"], row, group))
            other = fenced(arith.mulf(arith.subf(arith.sitofp(self.f32, wide), z2), s2))
            y = arith.addf(other, own)
        if self.wide_codes:
            return self.rounded_words(y, r[0], self.split(0))
        return self.code_bytes(y, r[0], r[1], self.k.requantize, self.split(0))

    def rounding_bits(self, y: ir.Value, sy: ir.Value, zy: ir.Value, kind: str, split: tuple | None) -> ir.Value:
        """The bits (i32 lanes) of q = `clamped`'s value plus 1.5 * 2^23: q lies in [2^23, 2^24),
        where f32's ulp is 1, so it is rounded to 1.5 * 2^23 + roundeven(q) (ties to even: 1.5 *
        2^23 is even), whose bits are 0x4B400000 + roundeven(q)."""
        q = arith.addf(self.clamped(y, sy, zy, kind, split), self.splat(self.f32, ir.FloatAttr.get_f32(ROUND), ("round", str(self.f32))))
        return vector.bitcast(self.i32, q)

    def rounded_words(self, y: ir.Value, sy: ir.Value, split: tuple | None) -> ir.Value:
        """roundeven(y / sy) as i32 lanes where |y / sy| < PACK_BOUND, else a value beyond the
        i16 range on y / sy's side, for packs that saturate (zy added between them): `vcvtps2dq`
        of min(y / sy, PACK_BOUND). The conversion rounds as MXCSR says, ties to even by default
        (as ROUND's addition in `rounding_bits` assumes), and gives INT_MIN for every value below
        -2^31, saturated as y / sy is; the min keeps a value above 2^31 from INT_MIN too (nnan:
        a NaN y has no code either way, as in `clamped`). A `bounded` kernel's quotients never
        reach 2^31: no min."""
        q = self.divided(y, sy, split)
        if not self.k.bounded:
            q = arith.minimumf(q, self.splat(self.f32, ir.FloatAttr.get_f32(PACK_BOUND), ("pack_bound", PACK_BOUND)), fastmath=ir.Attribute.parse(FINITE))
        return llvm.call_intrinsic(self.i32, CVTPS2DQ, [q], [], [])

    def code_bytes(self, y: ir.Value, sy: ir.Value, zy: ir.Value, kind: str, split: tuple | None = None) -> ir.Value:
        """The bytes of `quantized`'s codes, without converting them: the low byte of
        `rounding_bits` is roundeven(q) mod 256; zy added to that byte (mod 256) is the code,
        which the clamp keeps in the byte's range."""
        low = arith.trunci(self.small, self.rounding_bits(y, sy, zy, kind, split))
        return arith.addi(low, arith.trunci(self.small, arith.fptosi(self.i32, zy)))

    def looked_up(self, codes: list) -> list:
        """Byte vectors `codes` (of 8 or 16 bytes each) through the epilogue's table t (with
        `k.table`; else as they are), CHUNK bytes at a time (`lookup`)."""
        if not self.k.table or not codes:
            return codes
        size = ir.VectorType(codes[0].type).shape[0]
        per = CHUNK // size
        rows = self.table_rows()
        out = []
        for c0 in range(0, len(codes), per):
            part = codes[c0 : c0 + per]
            parts = part + [part[-1]] * (per - len(part))
            while len(parts) > 1:  # concatenated pairwise, in order
                parts = [vector.shuffle(a, b, list(range(2 * ir.VectorType(a.type).shape[0]))) for a, b in zip(parts[::2], parts[1::2])]
            y = self.lookup(parts[0], rows)
            out += [vector.shuffle(y, y, list(range(i * size, (i + 1) * size))) for i in range(len(part))]
        return out

    def table_rows(self) -> list:
        """t's 16 rows of 16 bytes, each in both halves of a CHUNK-byte vector (vpshufb looks up
        within each half)."""
        row = ir.VectorType.get([16], ir.IntegerType.get_signless(8))
        rows = [vector.load(row, self.v["t"], [self.const(16 * j)]) for j in range(CODES // 16)]
        return [vector.shuffle(r, r, list(range(16)) * 2) for r in rows]

    def lookup(self, x: ir.Value, rows: list) -> ir.Value:
        """t[b] for each byte b of x (CHUNK bytes): the vpshufb of each of t's 16 rows by b's low
        nibble, then the row chosen by the high nibble's bits, one level of byte blends a bit
        (vpblendvb reads each byte's top bit: b shifted left by 3, 2, 1, 0; words shifted, as x86
        shifts no bytes, which moves no other bit of b to a byte's top). No code is an address:
        every byte is an entry of t, whatever the code."""
        i8, i16 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(16)
        wide, words = ir.VectorType.get([CHUNK], i8), ir.VectorType.get([CHUNK // 2], i16)
        low = arith.andi(x, self.splat_int(wide, 15))
        pick = [llvm.call_intrinsic(wide, VPSHUFB, [r, low], [], []) for r in rows]
        for bit in range(4, 8):
            top = x if bit == 7 else vector.bitcast(wide, arith.shli(vector.bitcast(words, x), self.splat_int(words, 7 - bit)))
            chosen = arith.cmpi(arith.CmpIPredicate.slt, top, self.splat_int(wide, 0))
            pick = [arith.select(chosen, b, a) for a, b in zip(pick[::2], pick[1::2])]
        return pick[0]

    def quantized(self, y: ir.Value, sy: ir.Value, zy: ir.Value, kind: str, split: tuple | None = None) -> ir.Value:
        """saturate(roundeven(y / sy) + zy) in f32, kind's range ("u8" or "i8"), computed as
        roundeven(clamp(y / sy, low - zy, high - zy)) + zy (`clamped`): zy is an integer of the
        range, so clamping to integer bounds before rounding is clamping after, the clamped value
        is small enough for `roundeven`'s two additions, and the addition of zy is exact."""
        return arith.addf(self.roundeven(self.clamped(y, sy, zy, kind, split)), zy)

    def divided(self, y: ir.Value, sy: ir.Value, split: tuple | None) -> ir.Value:
        """y / sy; with `split`, sy's split reciprocal (zh, zl), fma(y, zh, y * zl), the product
        fenced as reciprocal.py computes it (the same quotient: passes/kernels/reciprocal.py)."""
        return arith.divf(y, sy) if split is None else math.fma(y, split[0], fenced(arith.mulf(y, split[1])))

    def clamped(self, y: ir.Value, sy: ir.Value, zy: ir.Value, kind: str, split: tuple | None) -> ir.Value:
        """clamp(y / sy, low - zy, high - zy) for kind's range ("u8" or "i8"), y / sy as
        `divided` computes it. The clamps assume no NaN (`nnan`): every finite or infinite y /
        sy is clamped exactly as without."""
        low, high = RANGES[kind]
        f32 = ir.FloatAttr.get_f32
        q = self.divided(y, sy, split)
        lo = arith.subf(self.splat(self.f32, f32(low), ("low", low)), zy)
        hi = arith.subf(self.splat(self.f32, f32(high), ("high", high)), zy)
        # FINITE: a NaN y has no code either way (its byte is arbitrary, as fptosi of NaN was;
        # docs/semantics.md#the-integer-route-of-qdq-matmuls); the clamped value is only added to
        # ROUND or zy
        return finite_clamp(q, lo, hi)


class XBytes:
    """xq's bytes as a vpdpbusd body reads them (the VNNI bodies: 16 lanes here, 8 in
    qdq_avxvnni.py): flipped to int8 where the kernel reads v = xq ^ 0x80, four at a time as one
    i32 (`x_word`), each row's sum (`row_sums`), and `dot`, vpdpbusd of weights and x; for a
    body with `k` (the kernel), `v`, `bytes` (4 * lanes i8), `i32`, `const`, `splat`,
    `_constant`."""

    def flip(self, v: ir.Value) -> ir.Value:
        """v's bytes as the body reads them: xq ^ 0x80 in each byte of a vector or word where the
        kernel `flips_x` (uint8 xq as int8, xq - 128; int8 as uint8, xq + 128), else as they are."""
        if not self.k.flips_x:
            return v
        if isinstance(v.type, ir.VectorType):
            t = ir.VectorType(v.type)
            top = self.splat(t, ir.IntegerAttr.get(t.element_type, -128), ("flip", t.shape[0]))
        else:
            top = self._constant("flip_word", lambda: arith.constant(v.type, ir.IntegerAttr.get(v.type, -0x7F7F7F80)))
        return arith.xori(v, top)

    def row_sums(self, rs: list, kb=None) -> list:
        """sum_k v of each row (one block: kb is not read): 4 * lanes bytes at a time by vpdpbusd
        against ones, the rest (K mod 4 * lanes) widened and added (`direct`: none, `starts`
        reads none)."""
        k, i8, i32 = self.k.k, ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        if self.k.direct:
            return [None] * len(rs)
        ones = self.splat(self.bytes, ir.IntegerAttr.get(i8, 1), "ones")
        zero = self.splat(self.i32, ir.IntegerAttr.get(i32, 0), "zero_i")
        step = 4 * self.k.lanes
        full, rest = k // step * step, k % step
        out = []
        for r in rs:
            loop = scf.ForOp(self.const(0), self.const(full), self.const(step), [zero])
            with ir.InsertionPoint(loop.body):
                v = self.flip(vector.load(self.bytes, self.v["xq"], [r, loop.induction_variable]))
                scf.YieldOp([vpdpbusd(loop.inner_iter_args[0], ones, v)])
            total = vector.reduction(i32, vector.CombiningKind.ADD, loop.results[0])
            if rest:
                tail = self.flip(vector.load(ir.VectorType.get([rest], i8), self.v["xq"], [r, self.const(full)]))
                total = arith.addi(total, vector.reduction(i32, vector.CombiningKind.ADD, arith.extsi(ir.VectorType.get([rest], i32), tail)))
            out.append(total)
        return out

    def dot(self, acc: ir.Value, w: ir.Value, x: ir.Value) -> ir.Value:
        """acc plus the 4-byte dots of weights w and x (`direct`: x the unsigned bytes)."""
        return vpdpbusd(acc, x, w) if self.k.direct else vpdpbusd(acc, w, x)

    def x_word(self, r, word) -> ir.Value:
        """Four values of v of row r as one i32 (xq[r, 4 * word] in the low byte)."""
        i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        four = vector.load(ir.VectorType.get([4], i8), self.v["xq"], [r, arith.muli(word, self.const(4))])
        return self.flip(vector.extract(vector.bitcast(ir.VectorType.get([1], i32), four), [], [0]))


class _QdqBody(XBytes, RunTimeX, Requantize, ColumnTail, _Body):
    """The int8-activation body reading xq's bytes: x's words and row sums from xq, c[n] added
    to d's start, one block scaled by s alone (and requantized); tiles of ROWS rows by all four
    column groups (16 i32 accumulators of AVX-512's 32 registers)."""

    half = QDQ_HALF

    def __init__(self, kernel: QdqKernel, v: dict, m, workgroup):
        super().__init__(kernel, v, m, workgroup)
        if kernel.requantize:
            self.load_r()
        self.run_time_x()

    def corrected(self, start: list, pairs: list, gs: list, kb) -> list:
        c = [self.x_corrected(vector.load(self.i32, self.v["c"], [self.wg, kb, self.const(g * LANES)])) for g in gs]
        return [arith.addi(start[i], c[g]) for i, (_, g) in enumerate(pairs)]

    def scaled(self, scales: list, rs: list, kb, pairs: list, d: list, acc: list) -> list:
        """s * float(d): one block (acc is zero)."""
        scales = [self.x_scaled(s) for s in scales]
        return [arith.mulf(scales[g], arith.sitofp(self.f32, d[i])) for i, (_, g) in enumerate(pairs)]
