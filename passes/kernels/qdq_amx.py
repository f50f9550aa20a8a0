"""The exact integer kernel of QDQ MatMuls with AMX (`QdqAmxKernel`): QdqKernel's direct form
(passes/kernels/qdq.py: uint8 xq, int8 weights without a zero point, d = sum_k xq * wq + c[n];
docs/semantics.md#the-integer-route-of-qdq-matmuls) with the sums of whole tiles of TILE_ROWS
rows taken by AMX's `tdpbusd`, the rest of the rows by QdqKernel's VNNI body; its epilogues and
results, bit for bit (the same exact i32 sums).

`tdpbusd` multiplies a tile of 16 rows by KC bytes of unsigned xq, read from xq itself (row
stride K), by a tile of KC / 4 rows by 64 bytes of signed weights: QdqKernel's layout as it is
(per workgroup and 4 rows of K, the 4 bytes of each of 16 columns, 64 bytes per column group;
row stride 4 x 64), and adds the i32 sums to a 16 x 16 accumulator tile. Per 32 rows and two
column groups: 4 accumulator tiles (0-3), 2 of xq (4, 5), 2 of weights (6, 7), AMX's 8. The
accumulators go through a stack buffer to the epilogue's vectors (`Requantize`).

What AMX needs of the process and the CPU (docs/iree.md#the-amx-kernel):
- Linux gives a process AMX's tile data only on request (`arch_prctl(ARCH_REQ_XCOMP_PERM,
  XFEATURE_XTILEDATA)`; without it the first tile instruction raises SIGILL), and IREE's runtime
  makes no such request. The body makes it itself (a `syscall`: idempotent, process-wide) before
  its tiles, and takes the VNNI body for every row if it is refused (an older kernel, a guest
  without the state): a module is tagged `dq.amxint8` only on a Linux host.
- `ldtilecfg` loads the tiles' shapes (`tile_config`) and `tilerelease` frees the state after.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from ..lazy import llvm
from .f32 import GROUPS
from .int8 import LANES
from .problem import Problem
from .qdq import QdqKernel, _QdqBody

TILE_ROWS = 32  # rows of x per AMX tile step: two tiles of 16 (QdqKernel.ROW_STEP is a multiple)
BYTES = 64  # a tile row's bytes: 16 i32 sums, or 64 bytes of xq, or 4 rows x 16 columns of weights
# rows of the sums per step of the epilogue: a table's lookups take 32 bytes (two rows of one
# group) at once, and the divisions of four rows overlap (docs/iree.md#the-amx-kernel)
EPILOGUE_ROWS = 4
MIN_KC = 16  # fewer bytes of K per tdpbusd and the VNNI body is faster: `kc`
# Linux's arch_prctl syscall, its request for a dynamically enabled state component, and the
# component AMX's tile data is (arch/x86/include/uapi/asm/prctl.h, asm/fpu/types.h)
SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 158, 0x1023, 18


def kc(k: int) -> int:
    """Bytes of K per tdpbusd: the largest multiple of 4 up to 64 dividing K (the tile shapes are
    set once, so every step takes the same)."""
    return next(c for c in range(BYTES, 0, -4) if k % c == 0)


@dataclass(frozen=True)
class QdqAmxKernel(QdqKernel):
    """QdqKernel's direct form with AMX for the row tiles (the module docstring)."""

    @classmethod
    def why_not(cls, p: Problem) -> str | None:
        why = super().why_not(p)
        if why:
            return why
        if not QdqKernel(p).direct:
            return "AMX takes uint8 activations and int8 weights without a zero point (the direct form)"
        if kc(p.k) < MIN_KC:
            return f"K = {p.k} has no multiple of 4 from {MIN_KC} to {BYTES} dividing it"
        return None

    def name(self) -> str:
        return super().name().replace("dq_matmul_qdq_", "dq_matmul_qdq_amx_", 1)

    def emit_views(self, v: dict, m, workgroup) -> None:
        _AmxBody(self, v, m, workgroup).emit()


def tile_config(k: int) -> np.ndarray:
    """ldtilecfg's 64 bytes: palette 1, then per tile its bytes per row (u16, bytes 16-47) and
    rows (u8, bytes 48-63): accumulators 0-3 16 x 64, xq 4-5 16 x kc, weights 6-7 kc / 4 x 64."""
    c = kc(k)
    shapes = [(16, BYTES)] * 4 + [(16, c)] * 2 + [(c // 4, BYTES)] * 2
    config = np.zeros(64, np.uint8)
    config[0] = 1
    config[16:32].view(np.uint16)[:8] = [cols for _, cols in shapes]
    config[48:56] = [rows for rows, _ in shapes]
    return config


def _amx(name: str, *args) -> None:
    llvm.call_intrinsic(None, f"llvm.x86.{name}", list(args), [], [])


class _AmxBody(_QdqBody):
    """QdqKernel's VNNI body with the rows' whole TILE_ROWS tiles taken by AMX first."""

    def emit_groups(self, at=None) -> None:
        """Every row of `self.groups`: the whole TILE_ROWS tiles with AMX where Linux grants its
        state, then the rest (all of them if refused) with the VNNI body."""
        assert at is None  # ColumnTail's call: all the rows
        index, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)
        full = self.whole_tiles(self.m, TILE_ROWS)
        some = arith.cmpi(arith.CmpIPredicate.ugt, full, self.const(0))
        ask = scf.IfOp(some, [i64], has_else=True)
        with ir.InsertionPoint(ask.then_block):
            scf.YieldOp([self.permission()])
        with ir.InsertionPoint(ask.else_block):
            scf.YieldOp([arith.constant(i64, -1)])
        granted = arith.cmpi(arith.CmpIPredicate.eq, ask.results[0], arith.constant(i64, 0))
        branch = scf.IfOp(granted, [index], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            self.amx_rows(full)
            scf.YieldOp([full])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([self.const(0)])
        super().emit_groups(branch.results[0])

    def permission(self) -> ir.Value:
        """arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): 0 if granted (the docstring)."""
        i64 = ir.IntegerType.get_signless(64)
        args = [arith.constant(i64, v) for v in (SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)]
        return llvm.inline_asm(i64, args, "syscall", "={rax},{rax},{rdi},{rsi},~{rcx},~{r11},~{memory}", has_side_effects=True)

    def pointer(self, mem: ir.Value, indices: list) -> ir.Value:
        """The address of mem[indices] (an identity-layout memref: its offset is in its pointer)."""
        t = ir.MemRefType(mem.type)
        strides = [int(np.prod(t.shape[d + 1 :], dtype=np.int64)) for d in range(t.rank)]
        at = memref.extract_aligned_pointer_as_index(mem)
        for i, s in zip(indices, strides):
            at = arith.addi(at, arith.muli(i, self.const(s * t.element_type.width // 8)))
        return llvm.inttoptr(ir.Type.parse("!llvm.ptr"), arith.index_cast(ir.IntegerType.get_signless(64), at))

    def amx_rows(self, full) -> None:
        """Rows 0 to `full` (whole TILE_ROWS tiles) of the groups `self.groups`, two at a time."""
        i8 = ir.IntegerType.get_signless(8)
        config_t = ir.VectorType.get([64], i8)
        config = memref.alloca(ir.MemRefType.get([64], i8), [], [])
        vector.store(arith.constant(config_t, ir.DenseElementsAttr.get(tile_config(self.k.k).view(np.int8), type=config_t)), config, [self.const(0)])
        sums = memref.alloca(ir.MemRefType.get([TILE_ROWS, 2 * LANES], ir.IntegerType.get_signless(32)), [], [])
        _amx("ldtilecfg", self.pointer(config, [self.const(0)]))
        pairs = [self.groups[i : i + 2] for i in range(0, len(self.groups), 2)]
        loop = scf.ForOp(self.const(0), full, self.const(TILE_ROWS))
        with ir.InsertionPoint(loop.body):
            for gs in pairs:
                self.amx_tile(loop.induction_variable, gs, sums)
            scf.YieldOp([])
        _amx("tilerelease")

    @staticmethod
    def reg(r: int) -> ir.Value:
        """Tile register r: an immediate operand."""
        return arith.constant(ir.IntegerType.get_signless(8), r)

    @staticmethod
    def stride(s: int) -> ir.Value:
        """A tile load's or store's row stride in bytes."""
        return arith.constant(ir.IntegerType.get_signless(64), s)

    def amx_tile(self, r0, gs: list, sums) -> None:
        """y[r0 : r0 + 32, columns of gs] (one or two groups): accumulator tile 2 * half + g of
        row half `half` and group g, their sums through `sums` to the epilogue."""
        k, c, reg = self.k.k, kc(self.k.k), self.reg
        accumulators = [(h, g) for h in range(2) for g in range(len(gs))]
        for h, g in accumulators:
            _amx("tilezero", reg(2 * h + g))
        steps = scf.ForOp(self.const(0), self.const(k), self.const(c))
        with ir.InsertionPoint(steps.body):
            k0 = steps.induction_variable
            for h in range(2):
                _amx("tileloadd64", reg(4 + h), self.pointer(self.v["xq"], [arith.addi(r0, self.const(16 * h)), k0]), self.stride(k))
            quad = arith.divui(k0, self.const(4))
            for g, group in enumerate(gs):
                w = self.pointer(self.v["w"], [self.wg, quad, self.const(group * BYTES)])
                _amx("tileloadd64", reg(6 + g), w, self.stride(GROUPS * BYTES))
            for h, g in accumulators:
                _amx("tdpbusd", reg(2 * h + g), reg(4 + h), reg(6 + g))
            scf.YieldOp([])
        for h, g in accumulators:
            _amx("tilestored64", reg(2 * h + g), self.pointer(sums, [self.const(16 * h), self.const(LANES * g)]), self.stride(2 * BYTES))
        zero = self.const(0)
        start = [self.x_corrected(vector.load(self.i32, self.v["c"], [self.wg, zero, self.const(g * LANES)])) for g in gs]
        scales = [vector.load(self.f32, self.v["s"], [self.wg, zero, self.const(g * LANES)]) for g in gs]
        rows = scf.ForOp(zero, self.const(TILE_ROWS), self.const(EPILOGUE_ROWS))
        with ir.InsertionPoint(rows.body):
            rs = [arith.addi(rows.induction_variable, self.const(h)) if h else rows.induction_variable for h in range(EPILOGUE_ROWS)]
            pairs = [(h, g) for h in range(EPILOGUE_ROWS) for g in range(len(gs))]
            d = [arith.addi(vector.load(self.i32, sums, [rs[h], self.const(LANES * g)]), start[g]) for h, g in pairs]
            out = [self.output(y, arith.addi(r0, rs[h]), gs[g]) for (h, g), y in zip(pairs, self.scaled(scales, rs, zero, pairs, d, None))]
            for (h, g), y in zip(pairs, self.looked_up(out)):
                self.store(y, arith.addi(r0, rs[h]), gs[g])
            scf.YieldOp([])
