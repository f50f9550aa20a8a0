"""dq's matmul kernel with int8 activations (opt-in, approximate): the semantics of ONNX Runtime's
MatMulNBits at `accuracy_level` 4 (MLAS's SQNBitGemm CompInt8), with AVX-512 VNNI's `vpdpbusd`;
and its exact form for QDQ MatMuls, reading the model's own quantized activation (`QdqKernel`).

Two dispatches per MatMul (docs/semantics.md#int8-activations states the arithmetic):
- `Quantize` (one workgroup, once per call): per row r of x and block kb of K (the weights'
  block along K), `amax = max |x|`, `xs[r, kb] = amax / 127`, `xq = roundeven(x * (127 / amax))`
  (0 where amax is 0) as int8 in [-127, 127], and `xsum[r, kb] = sum xq` (i32). xq is stored
  four values to an i32 (little endian: x[4i] in the low byte), the layout `vpdpbusd` broadcasts.
- `Int8Kernel` (one workgroup per 64 columns): per (row, block, column) the integer sum
  `d = sum_k u[k] * xq[k] - (z + bias) * xsum = sum_k (q - z) * xq`, exact in i32, then
  `y += (s * xs) * float(d)` in f32, blocks in order.

Weights `[N / W, K / L, W * 4]` bytes (W = 64 columns per workgroup, L = 8 rows of K per 32-bit
lane for 4 bits, 4 for 8 bits): the 4 bytes of column j in row group i hold, in byte b, the
biased value u = q + bias of row L*i + b (8 bits), or of rows 8i + b (low nibble) and 8i + 4 + b
(high nibble) for 4 bits. One 64-byte load is 16 columns x L rows: a mask (and a shift) give the
u8 operands of one (two) `vpdpbusd`, each against 4 values of xq broadcast to every lane. Scales
and zero points are laid out as for the exact kernel (passes/matmul_kernel.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from .lazy import llvm
from .matmul_kernel import GROUPS, Hoisted, Kernel, codes
from .matmul_kernel import _Body as _F32Body

VPDPBUSD = "llvm.x86.avx512.vpdpbusd.512"  # 16 lanes: acc += sum of 4 (u8 x s8) products
LANES = 16
# Rows of x per register tile and column groups per pass over the weights: ROWS x HALF i32
# accumulators (one block's sums) and as many f32 ones (y), 2 x HALF unpacked weight vectors.
# K = 2048, N = 5632 int4 blocked 32, one thread, CPU time (iree-benchmark-module, local-sync,
# medians of 7, a loaded machine): M = 16 took 1.16-1.20 ms for ROWS x HALF of 4 x 2, 4 x 4, 8 x 1
# and 8 x 2, about the vpdpbusd count at one per cycle; 4 x 2 keeps every accumulator in a
# register. The last rows (and M = 1) take all GROUPS at once: M = 1 took 0.10 ms where tiles of
# 1 row by 2 groups took 0.15 (x's blocks and the scales read once, not per pass).
ROWS, HALF = 4, 2


def each_block(x, m, k: int, block: int, width: int, const, body) -> None:
    """For each row r < m of x [M, K] and block kb of `block` values: `body(r, kb, k0, amax)` in
    the block's loop, k0 = kb * block and amax = max |x| over the block (in vectors of `width`)."""
    f32 = ir.F32Type.get()
    vf = ir.VectorType.get([width], f32)
    zero = arith.constant(vf, ir.DenseElementsAttr.get_splat(vf, ir.FloatAttr.get_f32(0.0)))
    rows = scf.ForOp(const(0), m, const(1))
    with ir.InsertionPoint(rows.body):
        r = rows.induction_variable
        blocks = scf.ForOp(const(0), const(k // block), const(1))
        with ir.InsertionPoint(blocks.body):
            kb = blocks.induction_variable
            k0 = arith.muli(kb, const(block))
            most = scf.ForOp(const(0), const(block), const(width), [zero])
            with ir.InsertionPoint(most.body):
                part = vector.load(vf, x, [r, arith.addi(k0, most.induction_variable)])
                scf.YieldOp([arith.maximumf(most.inner_iter_args[0], math.absf(part))])
            body(r, kb, k0, vector.reduction(f32, vector.CombiningKind.MAXIMUMF, most.results[0]))
            scf.YieldOp([])
        scf.YieldOp([])


@dataclass(frozen=True)
class Quantize:
    """The dispatch quantizing x [M, K] per row and block of K (MLAS's QuantizeARow_CompInt8):
    xq [M, K / 4] i32 (4 int8 each), xs [M, K / block] f32, xsum [M, K / block] i32."""

    k: int
    block: int
    workgroups = 1
    results = ("xq", "xs", "xsum")

    def name(self) -> str:
        return f"dq_quantize_rows_k{self.k}_b{self.block}"

    def types(self) -> dict:
        dyn, f32, i32 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(32)
        blocks = self.k // self.block
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "xq": ir.MemRefType.get([dyn, self.k // 4], i32),
                "xs": ir.MemRefType.get([dyn, blocks], f32), "xsum": ir.MemRefType.get([dyn, blocks], i32)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        """Every row and block of x, at the current insertion point (one workgroup)."""
        width = 16 if self.block % 16 == 0 else 8
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        vf, vi, vb = (ir.VectorType.get([width], t) for t in (f32, i32, i8))
        words = ir.VectorType.get([width // 4], i32)
        zero_i = arith.constant(vi, ir.DenseElementsAttr.get_splat(vi, ir.IntegerAttr.get(i32, 0)))
        const = Hoisted().const
        limit = arith.constant(f32, 127.0)
        zero = arith.constant(f32, 0.0)

        def block(r, kb, k0, amax):
            memref.store(arith.divf(amax, limit), v["xs"], [r, kb])
            nonzero = arith.cmpf(arith.CmpFPredicate.ONE, amax, zero)
            inverse = vector.broadcast(vf, arith.select(nonzero, arith.divf(limit, amax), zero))
            fill = scf.ForOp(const(0), const(self.block), const(width), [zero_i])
            with ir.InsertionPoint(fill.body):
                k = arith.addi(k0, fill.induction_variable)
                q = arith.fptosi(vi, math.roundeven(arith.mulf(vector.load(vf, v["x"], [r, k]), inverse)))
                vector.store(vector.bitcast(words, arith.trunci(vb, q)), v["xq"], [r, arith.divui(k, const(4))])
                scf.YieldOp([arith.addi(fill.inner_iter_args[0], q)])
            memref.store(vector.reduction(i32, vector.CombiningKind.ADD, fill.results[0]), v["xsum"], [r, kb])

        each_block(v["x"], m, self.k, self.block, width, const, block)


@dataclass(frozen=True)
class Int8Kernel(Kernel):
    """The kernel of a weight shape with int8 activations (16 lanes: AVX-512 VNNI)."""

    lanes: int = LANES

    @property
    def rows_per_lane(self) -> int:
        """K rows of one column in a 32-bit lane of the weights."""
        return 32 // self.bits

    @staticmethod
    def why_not(k: int, n: int, block: int, bits: int) -> str | None:
        """Why a weight shape does not fit the int8-activation kernel, or None."""
        if bits not in (4, 8):
            return f"{bits}-bit weights (the kernel reads 4 and 8 bits)"
        step = 32 // bits
        if k % block or block % step:
            return f"block {block} must be a multiple of {step} dividing K = {k}"
        if n % (LANES * GROUPS):
            return f"N = {n} is not a multiple of {LANES * GROUPS} columns"
        if 2 * ((1 << bits) - 1) * 127 * block >= 1 << 31:
            return f"block {block} is too long for an exact i32 sum of int8 products"
        return None

    def name(self) -> str:
        return super().name().replace("dq_matmul_", "dq_matmul_x8_", 1)

    def quantize(self) -> Quantize:
        """The dispatch writing what the kernel reads of x."""
        return Quantize(self.k, self.block)

    def repack(self, stored: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> tuple:
        """(weights, scales, zero points or None) in the layout of the module docstring, from
        the weights as `Kernel.repack` takes them."""
        wgs, width, step = self.workgroups, self.width, self.rows_per_lane
        u = codes(stored, self.bits, self.k, self.n)
        u = u ^ np.uint8(self.bias) if self.bias else u
        rows = u.reshape(self.k // step, step, wgs, width)  # [K / L, L, wg, W]
        packed = rows[:, :4] | (rows[:, 4:] << 4) if self.bits == 4 else rows  # [K / L, 4, wg, W]
        w = np.ascontiguousarray(packed.transpose(2, 0, 3, 1)).reshape(wgs, self.k // step, width * 4)
        return (w, *self.repack_blocks(scale, zero_point))

    def types(self, m: int | None = None) -> dict:
        dyn = ir.ShapedType.get_dynamic_size() if m is None else m
        exact = super().types(m)
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        table = {"xq": ir.MemRefType.get([dyn, self.k // 4], i32), "xs": ir.MemRefType.get([dyn, self.blocks], f32),
                 "xsum": ir.MemRefType.get([dyn, self.blocks], i32),
                 "w": ir.MemRefType.get([self.workgroups, self.k // self.rows_per_lane, self.width * 4], i8)}  # fmt: skip
        table.update({role: exact[role] for role in ("s", "z", "y") if role in exact})
        return table

    def emit_views(self, v: dict, m, workgroup) -> None:
        _Body(self, v, m, workgroup).emit()


class _Body(Hoisted):
    """The ops of one int8-activation kernel body."""

    def __init__(self, kernel: Int8Kernel, v: dict, m, workgroup):
        super().__init__()
        self.k, self.v, self.m, self.wg = kernel, v, m, workgroup
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        self.f32, self.i32 = ir.VectorType.get([LANES], f32), ir.VectorType.get([LANES], i32)
        self.bytes, self.small = ir.VectorType.get([4 * LANES], i8), ir.VectorType.get([LANES], i8)
        self.col0 = arith.muli(workgroup, self.const(kernel.width))

    def emit(self) -> None:
        """Tiles of ROWS rows by HALF column groups (a pass over the workgroup's weights per
        HALF groups), then the last m mod ROWS rows by tiles of the powers of two below ROWS (at
        most one each) over all GROUPS groups at once."""
        m = self.m
        full = arith.muli(arith.divui(m, self.const(ROWS)), self.const(ROWS))
        for half in range(GROUPS // HALF):
            loop = scf.ForOp(self.const(0), full, self.const(ROWS))
            with ir.InsertionPoint(loop.body):
                self.tile(list(range(half * HALF, (half + 1) * HALF)), loop.induction_variable, ROWS)
                scf.YieldOp([])
        self.tail_rows(full, m, ROWS, lambda r0, rows: self.tile(list(range(GROUPS)), r0, rows))

    def tile(self, gs: list, r0, rows: int) -> None:
        """y[r0 : r0 + rows, columns of gs] = sum over blocks of (s * xs) * float(d)."""
        kern, v = self.k, self.v
        rs = [arith.addi(r0, self.const(i)) if i else r0 for i in range(rows)]
        zero_f = self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero_f")
        pairs = [(r, g) for r in range(rows) for g in range(len(gs))]
        blocks = scf.ForOp(self.const(0), self.const(kern.blocks), self.const(1), [zero_f] * len(pairs))
        with ir.InsertionPoint(blocks.body):
            kb, acc = blocks.induction_variable, list(blocks.inner_iter_args)
            start = self.corrected(self.starts(self.row_sums(rs, kb), kb, pairs, gs), pairs, gs, kb)
            steps = kern.block // kern.rows_per_lane
            inner = scf.ForOp(self.const(0), self.const(steps), self.const(1), start)
            with ir.InsertionPoint(inner.body):
                row = arith.addi(arith.muli(kb, self.const(steps)), inner.induction_variable)
                words = kern.rows_per_lane // 4  # i32 words of xq per step
                word0 = arith.muli(row, self.const(words)) if words > 1 else row
                xb = [[vector.bitcast(self.bytes, vector.broadcast(self.i32, self.x_word(r, arith.addi(word0, self.const(h)) if h else word0)))
                       for h in range(words)] for r in rs]  # fmt: skip
                d = list(inner.inner_iter_args)
                for gi, g in enumerate(gs):
                    wv = vector.load(self.bytes, v["w"], [self.wg, row, self.const(g * LANES * 4)])
                    if kern.bits == 4:
                        parts = [arith.andi(wv, self.splat(self.bytes, ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 15), "mask")),
                                 arith.shrui(wv, self.splat(self.bytes, ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 4), "four"))]  # fmt: skip
                    else:
                        parts = [wv]
                    for ri in range(rows):
                        i = ri * len(gs) + gi
                        for h, part in enumerate(parts):
                            d[i] = llvm.call_intrinsic(self.i32, VPDPBUSD, [d[i], part, xb[ri][h]], [], [])
                scf.YieldOp(d)
            scales = [vector.load(self.f32, v["s"], [self.wg, kb, self.const(g * LANES)]) for g in gs]
            scf.YieldOp(self.scaled(scales, rs, kb, pairs, list(inner.results), acc))
        for i, (r, g) in enumerate(pairs):
            vector.store(self.output(blocks.results[i], gs[g]), v["y"], [rs[r], arith.addi(self.col0, self.const(gs[g] * LANES))])

    def starts(self, sums: list, kb, pairs: list, gs: list) -> list:
        """The i32 sums' start for each (i, g) pair of `pairs`, for column group gs[g] in block kb:
        -(z + bias) * sums[i], the zero point's share of sum_k u * v over the block when v sums to
        sums[i] there, so that the loop only adds dots."""
        i32 = ir.IntegerType.get_signless(32)
        if "z" not in self.v and not self.k.bias:
            return [self.splat(self.i32, ir.IntegerAttr.get(i32, 0), "zero_i")] * len(pairs)
        minus = [arith.subi(arith.constant(i32, 0), s) for s in sums]
        if "z" in self.v:
            zb = [arith.extui(self.i32, vector.load(self.small, self.v["z"], [self.wg, kb, self.const(g * LANES)])) for g in gs]
            return [arith.muli(zb[g], vector.broadcast(self.i32, minus[i])) for i, g in pairs]
        first = [vector.broadcast(self.i32, arith.muli(m, arith.constant(i32, self.k.bias))) for m in minus]
        return [first[i] for i, _ in pairs]

    # What the QDQ kernel (_QdqBody) reads differently: where x's sums, x's words and the
    # per-column correction come from, and how a block's d is scaled.
    def row_sums(self, rs: list, kb) -> list:
        """sum of xq over block kb of each row in `rs` (i32): the Quantize dispatch's xsum."""
        return [memref.load(self.v["xsum"], [r, kb]) for r in rs]

    def x_word(self, r, word) -> ir.Value:
        """Four values of xq of row r as one i32 (x[4 * word] in the low byte)."""
        return memref.load(self.v["xq"], [r, word])

    def corrected(self, start: list, pairs: list, gs: list, kb) -> list:
        return start

    def scaled(self, scales: list, rs: list, kb, pairs: list, d: list, acc: list) -> list:
        """acc + (s * xs) * float(d) for each (row, group) pair."""
        xs = [vector.broadcast(self.f32, memref.load(self.v["xs"], [r, kb])) for r in rs]
        return [vector.fma(arith.mulf(scales[g], xs[r]), arith.sitofp(self.f32, d[i]), acc[i]) for i, (r, g) in enumerate(pairs)]

    def output(self, y: ir.Value, group: int) -> ir.Value:
        """What is stored of 16 columns of y (f32; column group `group`): y itself."""
        return y


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
    (saturate(roundeven(y / sy') + zy') - z'') * s''), as quantize_static writes a MatMul's bias."""

    unsigned_x: bool = False
    requantize: str | None = None
    bias_add: bool = False
    mid: str | None = None

    @staticmethod
    def why_not(k: int, n: int, bits: int, largest: int) -> str | None:
        """Why a QDQ MatMul does not fit the kernel, or None (`largest`: a bound on |d|)."""
        if bits != 8:
            return f"{bits}-bit weights (the kernel reads 8 bits)"
        if k % 4:
            return f"K = {k} is not a multiple of 4"
        if n % (LANES * GROUPS):
            return f"N = {n} is not a multiple of {LANES * GROUPS} columns"
        if largest >= 1 << 31:
            return f"K = {k} is too long for an exact i32 sum (|d| up to {largest})"
        return None

    def name(self) -> str:
        kind = ("i" if self.signed else "u") + "8"
        out = (f"_q{self.requantize}" if self.requantize else "") + (f"_m{self.mid}" if self.mid else "") + ("_b" if self.bias_add else "")
        return f"dq_matmul_qdq_{'u8' if self.unsigned_x else 'i8'}_{kind}_k{self.k}_n{self.n}{'_z' if self.zero_point else ''}{out}"

    def repack(self, codes: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, correction: np.ndarray) -> tuple:
        """(weights, scales, zero points or None, corrections) from the weights' codes [K, N],
        s [1, N] f32, zw [1, N] (or None) and c [1, N] (int64 within i32)."""
        w, s, z = super().repack(codes, scale, zero_point)
        return w, s, z, self.per_column(correction.astype(np.int32))

    def per_column(self, values: np.ndarray) -> np.ndarray:
        """Values [1, N] (or [N]) laid out [workgroups, 1, width], as c and b are read."""
        return np.ascontiguousarray(values.reshape(1, self.workgroups, self.width).transpose(1, 0, 2))

    def types(self, m: int | None = None) -> dict:
        dyn = ir.ShapedType.get_dynamic_size() if m is None else m
        table = super().types(m)
        i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        out = {"xq": ir.MemRefType.get([dyn, self.k], i8)}
        out.update({role: table[role] for role in ("w", "s", "z") if role in table})
        out["c"] = ir.MemRefType.get([self.workgroups, 1, self.width], i32)
        if self.bias_add:
            out["b"] = ir.MemRefType.get([self.workgroups, 1, self.width], ir.F32Type.get())
        if self.requantize:
            out["r"] = ir.MemRefType.get([6 if self.mid else 2], ir.F32Type.get())
            out["y"] = ir.MemRefType.get([dyn, self.n], i8)
        else:
            out["y"] = table["y"]
        return out

    def emit_views(self, v: dict, m, workgroup) -> None:
        _QdqBody(self, v, m, workgroup).emit()


class _QdqBody(_Body):
    """The int8-activation body reading xq's bytes: x's words and row sums from xq, c[n] added
    to d's start, one block scaled by s alone (and requantized)."""

    def __init__(self, kernel: QdqKernel, v: dict, m, workgroup):
        super().__init__(kernel, v, m, workgroup)
        if kernel.requantize:  # r's scales and zero points, loaded once (r is not defined at self.top)
            self.r = [vector.broadcast(self.f32, memref.load(v["r"], [self.const(i)])) for i in range(6 if kernel.mid else 2)]

    def flip(self, v: ir.Value) -> ir.Value:
        """v's bytes as int8 (uint8 xq: xq ^ 0x80 = xq - 128, in each byte of a vector or word)."""
        if not self.k.unsigned_x:
            return v
        if isinstance(v.type, ir.VectorType):
            t = ir.VectorType(v.type)
            top = self.splat(t, ir.IntegerAttr.get(t.element_type, -128), ("flip", t.shape[0]))
        else:
            top = self._constant("flip_word", lambda: arith.constant(v.type, ir.IntegerAttr.get(v.type, -0x7F7F7F80)))
        return arith.xori(v, top)

    def row_sums(self, rs: list, kb) -> list:
        """sum_k v of each row: 64 bytes at a time by vpdpbusd against ones, the rest (K mod 64)
        widened and added."""
        k, i8, i32 = self.k.k, ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        ones = self.splat(self.bytes, ir.IntegerAttr.get(i8, 1), "ones")
        zero = self.splat(self.i32, ir.IntegerAttr.get(i32, 0), "zero_i")
        full, rest = k // (4 * LANES) * 4 * LANES, k % (4 * LANES)
        out = []
        for r in rs:
            loop = scf.ForOp(self.const(0), self.const(full), self.const(4 * LANES), [zero])
            with ir.InsertionPoint(loop.body):
                v = self.flip(vector.load(self.bytes, self.v["xq"], [r, loop.induction_variable]))
                scf.YieldOp([llvm.call_intrinsic(self.i32, VPDPBUSD, [loop.inner_iter_args[0], ones, v], [], [])])
            total = vector.reduction(i32, vector.CombiningKind.ADD, loop.results[0])
            if rest:
                tail = self.flip(vector.load(ir.VectorType.get([rest], i8), self.v["xq"], [r, self.const(full)]))
                total = arith.addi(total, vector.reduction(i32, vector.CombiningKind.ADD, arith.extsi(ir.VectorType.get([rest], i32), tail)))
            out.append(total)
        return out

    def x_word(self, r, word) -> ir.Value:
        i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        four = vector.load(ir.VectorType.get([4], i8), self.v["xq"], [r, arith.muli(word, self.const(4))])
        return self.flip(vector.extract(vector.bitcast(ir.VectorType.get([1], i32), four), [], [0]))

    def corrected(self, start: list, pairs: list, gs: list, kb) -> list:
        c = [vector.load(self.i32, self.v["c"], [self.wg, kb, self.const(g * LANES)]) for g in gs]
        return [arith.addi(start[i], c[g]) for i, (_, g) in enumerate(pairs)]

    def scaled(self, scales: list, rs: list, kb, pairs: list, d: list, acc: list) -> list:
        """s * float(d): one block (acc is zero)."""
        return [arith.mulf(scales[g], arith.sitofp(self.f32, d[i])) for i, (_, g) in enumerate(pairs)]

    def output(self, y: ir.Value, group: int) -> ir.Value:
        """y, or its requantized bytes (after the mid requantization and the bias, if any)."""
        if not self.k.requantize:
            return y
        r = self.r
        if self.k.mid:  # (q' - z'') * s'': q' - z'' is exact in f32, the product rounded once
            y = arith.mulf(arith.subf(self.quantized(y, r[2], r[3], self.k.mid), r[5]), r[4])
        if self.k.bias_add:
            y = arith.addf(y, vector.load(self.f32, self.v["b"], [self.wg, self.const(0), self.const(group * LANES)]))
        return arith.trunci(self.small, arith.fptosi(self.i32, self.quantized(y, r[0], r[1], self.k.requantize)))

    def quantized(self, y: ir.Value, sy: ir.Value, zy: ir.Value, kind: str) -> ir.Value:
        """saturate(roundeven(y / sy) + zy) in f32, kind's range ("u8" or "i8"). The f32 addition
        of zy is exact below 2^24, and any larger |roundeven(y / sy)| saturates either way."""
        low, high = (0, 255) if kind == "u8" else (-128, 127)
        f32 = ir.FloatAttr.get_f32
        q = arith.addf(math.roundeven(arith.divf(y, sy)), zy)
        return arith.minimumf(arith.maximumf(q, self.splat(self.f32, f32(low), ("low", low))), self.splat(self.f32, f32(high), ("high", high)))


# --- The exact one-row route: x as four base-256 digits per block --------------------------------
#
# At one row (a token) the exact kernel is bound by its two conversions and two FMAs per 32
# weights; summing integers instead takes half the time (K = 2048, N = 5632 int4, one thread,
# weights in L3: 0.28 ms where the f32 body took 0.54, in a C model of the two inner loops). Per
# block of x (XBLOCK values, within a block of the weights), x is the integer X = roundeven(x *
# 2^(30 - e)), 2^e the power of two just above the block's largest |x| (every |x| of at least
# 2^-6 of that largest exactly, the rest within 2^-30 of it), X = sum_p c_p 256^p with balanced
# digits c_p in [-128, 127], and each digit's sum against the weights is exact in i32
# (docs/semantics.md#the-exact-one-row-route).

XBLOCK = 32  # x's block: the longest multiple of 8 up to this that divides the weights' block
DIGITS = 4


def x_block(block: int) -> int | None:
    """x's block within a weights' block `block`, or None (no multiple of 8 divides it)."""
    return next((d for d in range(XBLOCK, 7, -8) if block % d == 0), None)


@dataclass(frozen=True)
class Digits(Quantize):
    """The dispatch writing x [M, K] as base-256 digits per block of `block` values: xq [M, K]
    i32 (word 4 * (k / 4) + p holds digit p of x[4 * (k / 4)] ... x[4 * (k / 4) + 3], the first
    in the low byte), xs [M, 2 * K / block] f32 (two powers of two per block whose product is
    2^(e - 30), x = X * 2^(e - 30); NaN where the block holds a NaN or an infinity), xsum [M, 4 *
    K / block] i32 (each digit's sum over the block)."""

    def name(self) -> str:
        return f"dq_digits_rows_k{self.k}_b{self.block}"

    def types(self) -> dict:
        dyn, f32, i32 = ir.ShapedType.get_dynamic_size(), ir.F32Type.get(), ir.IntegerType.get_signless(32)
        blocks = self.k // self.block
        return {"x": ir.MemRefType.get([dyn, self.k], f32), "xq": ir.MemRefType.get([dyn, self.k], i32),
                "xs": ir.MemRefType.get([dyn, 2 * blocks], f32), "xsum": ir.MemRefType.get([dyn, DIGITS * blocks], i32)}  # fmt: skip

    def emit_views(self, v: dict, m, workgroup) -> None:
        """Every row and block of x, at the current insertion point (one workgroup)."""
        width = 16 if self.block % 16 == 0 else 8
        f32, i32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
        vf, vi, vb = (ir.VectorType.get([width], t) for t in (f32, i32, i8))
        top = Hoisted()
        const, splat, scalar = top.const, top.splat, top.scalar

        def power(exponent):  # 2^exponent as f32, exponent in [-126, 127] (an i32)
            return arith.bitcast(f32, arith.shli(arith.addi(exponent, scalar(i32, 127)), scalar(i32, 23)))

        zero_f = splat(vf, ir.FloatAttr.get_f32(0.0), "zero_f")
        zero_i = splat(vi, ir.IntegerAttr.get(i32, 0), "zero_i")
        c128, c255, c8 = (splat(vi, ir.IntegerAttr.get(i32, c), c) for c in (128, 255, 8))
        # Digit-major [p][k] bytes to the layout's [k / 4][p][k % 4].
        order = [p * width + 4 * g + j for g in range(width // 4) for p in range(DIGITS) for j in range(4)]

        def block(r, b, k0, amax):
            # amax < 2^e with e = E - 126, E its biased exponent (E = 0: below 2^-126); E = 255:
            # NaN or infinity. x * 2^(30 - e) in two exact steps of at most 2^78 each.
            big = arith.shrui(arith.bitcast(i32, amax), scalar(i32, 23))
            finite = arith.cmpi(arith.CmpIPredicate.ult, big, scalar(i32, 255))
            up = arith.subi(scalar(i32, 156), big)
            half = arith.shrsi(up, scalar(i32, 1))
            f1, f2 = (vector.broadcast(vf, power(a)) for a in (half, arith.subi(up, half)))
            # x = X * 2^t, t = e - 30 in [-156, 98], as 2^t1 * 2^t2 with t1 = t clamped to
            # [-126, 88] (|Y| < 2^39: Y * 2^t1 stays normal) and t2 = t - t1 in [-30, 10].
            t = arith.subi(big, scalar(i32, 156))
            t1 = arith.minsi(arith.maxsi(t, scalar(i32, -126)), scalar(i32, 88))
            nan = scalar(f32, float("nan"))
            for i, part in enumerate((t1, arith.subi(t, t1))):
                at = arith.addi(arith.muli(b, const(2)), const(i)) if i else arith.muli(b, const(2))
                memref.store(arith.select(finite, power(part), nan), v["xs"], [r, at])
            fill = scf.ForOp(const(0), const(self.block), const(width), [zero_i] * DIGITS)
            with ir.InsertionPoint(fill.body):
                k = arith.addi(k0, fill.induction_variable)
                x = arith.select(finite, vector.load(vf, v["x"], [r, k]), zero_f)
                rest = arith.fptosi(vi, math.roundeven(arith.mulf(arith.mulf(x, f1), f2)))  # |X| <= 2^30
                digits = []
                for p in range(DIGITS):
                    if p + 1 < DIGITS:
                        biased = arith.addi(rest, c128)
                        digits.append(arith.subi(arith.andi(biased, c255), c128))
                        rest = arith.shrsi(biased, c8)
                    else:
                        digits.append(rest)  # |X / 2^24| <= 65 after the carries
                sums = [arith.addi(s, c) for s, c in zip(fill.inner_iter_args, digits)]
                low8 = [arith.trunci(vb, c) for c in digits]
                pairs = [vector.shuffle(low8[i], low8[i + 1], list(range(2 * width))) for i in (0, 2)]
                words = vector.shuffle(pairs[0], pairs[1], order)
                vector.store(vector.bitcast(ir.VectorType.get([width], i32), words), v["xq"], [r, k])
                scf.YieldOp(sums)
            for p in range(DIGITS):
                total = vector.reduction(i32, vector.CombiningKind.ADD, fill.results[p])
                memref.store(total, v["xsum"], [r, arith.addi(arith.muli(b, const(DIGITS)), const(p))])

        each_block(v["x"], m, self.k, self.block, width, const, block)


@dataclass(frozen=True)
class DigitKernel(Int8Kernel):
    """The exact one-row kernel of 4-bit weights (16 lanes: AVX-512 VNNI), reading x as `Digits`
    writes it and the weights in Int8Kernel's layout. With `any_rows` (a MatMul whose row count
    is known only at run time) it reads x too, and takes more than one row by the f32 kernel's
    several-rows body on the same weights (`_Panel`); without, the stage gives it MatMuls of one
    row, and more rows would each take the one-row body. Per (row, block of x, column):
    D_p = sum_k c_p[k] * u[k] - (z + bias) * sum_k c_p[k] = sum_k c_p[k] * (q - z) (i32, |D_p| <
    2^16), Y = float(256 D_3 + D_2) * 2^16 + float(256 D_1 + D_0) (both exact below 2^24: Y is
    the integer sum_k X[k] * (q - z) rounded once to f32), then y += (s * 2^t2) * (Y * 2^t1), one
    fused multiply-add (both factors exact: powers of two), blocks in order."""

    any_rows: bool = False

    @staticmethod
    def why_not(k: int, n: int, block: int, bits: int, any_rows: bool = False) -> str | None:
        """Why a weight shape does not fit the one-row integer kernel, or None."""
        if bits != 4:
            return f"{bits}-bit weights (the one-row integer kernel reads 4 bits)"
        if k % block or x_block(block) is None:
            return f"block {block} must be a multiple of 8 dividing K = {k}"
        if n % (LANES * GROUPS):
            return f"N = {n} is not a multiple of {LANES * GROUPS} columns"
        if any_rows and Kernel(k, n, block, bits, True, False, LANES).chunk % 8:
            return f"block {block} has no K chunk of the several-rows body that is a multiple of 8"
        return None

    @property
    def xblock(self) -> int:
        return x_block(self.block)

    def quantize(self) -> Digits:
        return Digits(self.k, self.xblock)

    def name(self) -> str:
        return super().name().replace("dq_matmul_x8_", "dq_matmul_digits_", 1) + ("_anyrows" if self.any_rows else "")

    def types(self, m: int | None = None) -> dict:
        table = dict(self.quantize().types())
        if not self.any_rows:
            del table["x"]
        table.update({role: t for role, t in super().types(m).items() if role not in table})
        return table

    def emit_views(self, v: dict, m, workgroup) -> None:
        one = _DigitBody(self, v, m, workgroup)
        if not self.any_rows:
            one.emit()
            return
        many = _Panel(self, v["x"], v["w"], v["s"], v.get("z"), v["y"], m, workgroup)
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ule, m, one.const(1)), has_else=True)
        with ir.InsertionPoint(branch.then_block):
            one.emit()
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            many.zero, many.mask, many.four = many.zeros(), many.splat_i32(15), many.splat_i32(4)
            many.rows()
            scf.YieldOp([])


class _Panel(_F32Body):
    """The f32 kernel's several-rows body (exact dequantize into a stack panel, f32 register
    tiles) on Int8Kernel's layout of 4-bit weights: one 64-byte load holds 8 rows of K of 16
    columns, row 8i + b in the low nibble of byte b of each column's 32-bit lane, row 8i + 4 + b
    in its high nibble."""

    per_load = 8

    def fields(self, g: int, row) -> list:
        b8 = ir.VectorType.get([4 * LANES], ir.IntegerType.get_signless(8))
        data = vector.load(b8, self.w, [self.wg, row, self.const(g * LANES * 4)])
        zero = self.splat(b8, ir.IntegerAttr.get(b8.element_type, 0), "zero_bytes")
        lows, highs = [], []
        for b in range(4):  # byte b of each lane, zero-extended (one vpshufb): rows 8i + b, 8i + 4 + b
            byte = vector.bitcast(self.i32, vector.shuffle(data, zero, [4 * j + b if i == 0 else 4 * LANES for j in range(LANES) for i in range(4)]))
            lows.append(arith.andi(byte, self.mask))
            highs.append(arith.shrui(byte, self.four))
        return lows + highs


class _DigitBody(_Body):
    """The ops of one DigitKernel body: each row by itself, every column group at once."""

    def emit(self) -> None:
        kern, v, i32 = self.k, self.v, ir.IntegerType.get_signless(32)
        gs = range(GROUPS)
        zero_f = self.splat(self.f32, ir.FloatAttr.get_f32(0.0), "zero_f")
        mask = self.splat(self.bytes, ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 15), "mask")
        four = self.splat(self.bytes, ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 4), "four")
        i256 = self.splat(self.i32, ir.IntegerAttr.get(i32, 256), 256)
        f65536 = self.splat(self.f32, ir.FloatAttr.get_f32(65536.0), "f65536")
        steps = kern.xblock // kern.rows_per_lane  # 8 rows of K (two words of each digit) a step
        rows = scf.ForOp(self.const(0), self.m, self.const(1))
        with ir.InsertionPoint(rows.body):
            r = rows.induction_variable
            blocks = scf.ForOp(self.const(0), self.const(kern.k // kern.xblock), self.const(1), [zero_f] * GROUPS)
            with ir.InsertionPoint(blocks.body):
                b, acc = blocks.induction_variable, list(blocks.inner_iter_args)
                kb = arith.divui(arith.muli(b, self.const(kern.xblock)), self.const(kern.block))
                # D_p starts at -(z + bias) * sum c_p: the zero point's share.
                sums = [memref.load(v["xsum"], [r, arith.addi(arith.muli(b, self.const(DIGITS)), self.const(p))]) for p in range(DIGITS)]
                start = self.starts(sums, kb, [(p, g) for g in gs for p in range(DIGITS)], list(gs))
                inner = scf.ForOp(self.const(0), self.const(steps), self.const(1), start)
                with ir.InsertionPoint(inner.body):
                    row = arith.addi(arith.muli(b, self.const(steps)), inner.induction_variable)
                    # Word of digit p of rows 8 row + 4 h ... + 3: xq[r, 4 (2 row + h) + p].
                    base = arith.muli(row, self.const(2 * DIGITS))
                    words = [[vector.bitcast(self.bytes, vector.broadcast(self.i32, memref.load(v["xq"], [r, arith.addi(base, self.const(h * DIGITS + p))])))
                              for h in range(2)] for p in range(DIGITS)]  # fmt: skip
                    d = list(inner.inner_iter_args)
                    for g in gs:
                        wv = vector.load(self.bytes, v["w"], [self.wg, row, self.const(g * LANES * 4)])
                        parts = [arith.andi(wv, mask), arith.shrui(wv, four)]
                        for p in range(DIGITS):
                            i = g * DIGITS + p
                            for h, part in enumerate(parts):
                                d[i] = llvm.call_intrinsic(self.i32, VPDPBUSD, [d[i], part, words[p][h]], [], [])
                    scf.YieldOp(d)
                xs1, xs2 = (vector.broadcast(self.f32, memref.load(v["xs"], [r, arith.addi(arith.muli(b, self.const(2)), self.const(i))])) for i in range(2))
                out = []
                for g in gs:
                    dg = list(inner.results[g * DIGITS : (g + 1) * DIGITS])
                    high = arith.sitofp(self.f32, arith.addi(arith.muli(dg[3], i256), dg[2]))
                    low = arith.sitofp(self.f32, arith.addi(arith.muli(dg[1], i256), dg[0]))
                    y = vector.fma(high, f65536, low)
                    scale = vector.load(self.f32, v["s"], [self.wg, kb, self.const(g * LANES)])
                    out.append(vector.fma(arith.mulf(scale, xs2), arith.mulf(y, xs1), acc[g]))
                scf.YieldOp(out)
            for g in gs:
                vector.store(blocks.results[g], v["y"], [r, arith.addi(self.col0, self.const(g * LANES))])
            scf.YieldOp([])
