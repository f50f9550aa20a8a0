"""The exact integer kernel of QDQ MatMuls on AVX-VNNI (`QdqAvxVnniKernel`): QdqKernel's
arithmetic (passes/kernels/qdq.py; docs/semantics.md#the-integer-route-of-qdq-matmuls) on CPUs
with AVX2 and AVX-VNNI but no AVX-512 (Intel's client cores from Alder Lake and its E-core Xeons,
Sierra Forest and later), whose `vpdpbusd` works on 256-bit vectors (VEX-encoded: LLVM picks
that encoding where the target has AVX-VNNI and not AVX-512 VL).

The VNNI kernel's sums at 8 lanes, the same operands and constants: per (row, column), exactly in
i32,

    d = sum_k v * u - (zw + bias) * sum_k v + c[n]     (`direct`: d = sum_k xq * wq + c[n])

one `vpdpbusd` per 4 rows of K and 8 columns, four products a lane added without saturating (the
reason the AVX2 kernel, qdq_avx2.py, widens to i16 for `vpmaddwd` instead of `vpmaddubsw`): no
widening, half the AVX2 kernel's multiply instructions, and x read as it is, with no stack
buffer. The AVX2 kernel's tiles at 6 rows (by 2 groups of 8 columns a pass: 12 accumulators of
AVX2's 16 registers, where the AVX2 kernel's 4 rows leave vpdpbusd's latency exposed) and its
epilogue (`requantize`, `bias_add`, `mid`, `residual`, `table`, `reciprocal`; a row's codes packed
at once), so the same results bit for bit.

Layout (W = 32 columns per workgroup, 4 groups of 8): weights `[N / W, K / 4, 4 * W]` bytes, the
VNNI kernel's at 8 lanes (rows 4i ... 4i + 3 of K, column j of a group: bytes 4j ... 4j + 3 of the
group's 32); scales, zero points and c as QdqKernel lays them with 8 lanes. K a multiple of 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, scf, vector

from .f32 import GROUPS
from .qdq import QdqKernel, XBytes
from .qdq_avx2 import LANES, _Body

# A register tile: 6 rows by 2 column groups a pass, 12 accumulators of AVX2's 16 registers (2
# for the weights, 1 for x): vpdpbusd's latency (5 cycles) over 2 a cycle needs 10 chains in
# flight, the AVX2 kernel's 4 x 2 tile has 8 (docs/iree.md#qdq-matmuls-on-avx-vnni-hosts).
ROWS, ACCUMULATORS = 6, 12
# Steps of 4 rows of K per iteration of a pass's loop (a tail of single steps after), where K
# makes at least 4 such iterations (K >= 64); a shorter loop LLVM flattens into the other pass's
# and spills: docs/iree.md#qdq-matmuls-on-avx-vnni-hosts.
UNROLL = 4


@dataclass(frozen=True)
class QdqAvxVnniKernel(QdqKernel):
    """The exact integer kernel of a QDQ MatMul on AVX-VNNI (8 lanes, `vpdpbusd` on ymm):
    QdqKernel's contract (operands, constants, epilogues, results) at 8 lanes."""

    lanes: int = LANES

    COLUMNS: ClassVar[int] = LANES * GROUPS

    def name(self) -> str:
        return super().name().replace("dq_matmul_qdq_", "dq_matmul_qdq_avxvnni_", 1)

    def emit_views(self, v: dict, m, workgroup) -> None:
        _VnniBody(self, v, m, workgroup).emit()


class _VnniBody(XBytes, _Body):
    """The AVX2 body (its epilogue; its tiles at ROWS rows) with VNNI's sums (`sums`) and row
    sums."""

    rows = ROWS

    def tail_groups(self, rows: int) -> int:
        return max(1, min(len(self.groups), ACCUMULATORS // rows))

    def __init__(self, kernel: QdqAvxVnniKernel, v: dict, m, workgroup):
        super().__init__(kernel, v, m, workgroup)
        self.bytes = ir.VectorType.get([4 * LANES], self.t8)  # a step's weights of one group, or x's word broadcast

    def sums(self, gs: list, rs: list, passes: list) -> list:
        """d of each (row of rs, group of gs), row-major, from `starts`: per pass (indices into
        gs), per 4 rows of K each group's 32 weight bytes loaded once and each row's 4 values of
        x broadcast (one word), a `vpdpbusd` per (row, group)."""
        d = list(self.starts(rs, gs))
        steps = self.k.k // 4
        unrolled = UNROLL if steps >= 4 * UNROLL else 1
        whole = steps // unrolled * unrolled
        for gis in passes:
            at = [ri * len(gs) + gi for ri in range(len(rs)) for gi in gis]  # d's indices this pass adds to
            group = [gs[gi] for gi in gis]
            for lo, hi, unroll in ((0, whole, unrolled), (whole, steps, 1)):
                if lo == hi:
                    continue
                loop = scf.ForOp(self.const(lo), self.const(hi), self.const(unroll), [d[i] for i in at])
                with ir.InsertionPoint(loop.body):
                    acc = list(loop.inner_iter_args)
                    for u in range(unroll):
                        step = arith.addi(loop.induction_variable, self.const(u)) if u else loop.induction_variable
                        acc = self.step(acc, step, rs, group)
                    scf.YieldOp(acc)
                for i, total in zip(at, loop.results):
                    d[i] = total
        return d

    def step(self, acc: list, step, rs: list, gs: list) -> list:
        """acc (row-major over rs x gs) plus the products of rows 4 step ... 4 step + 3 of K."""
        w = [vector.load(self.bytes, self.v["w"], [self.wg, step, self.const(g * 4 * LANES)]) for g in gs]
        out = list(acc)
        for ri, r in enumerate(rs):
            x = vector.bitcast(self.bytes, vector.broadcast(self.i32, self.x_word(r, step)))
            for gi in range(len(gs)):
                i = ri * len(gs) + gi
                out[i] = self.dot(out[i], w[gi], x)
        return out
