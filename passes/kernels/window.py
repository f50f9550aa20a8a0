"""What the kernels over windows of NHWC codes share (depthwise.py, im2col.py, maxpool.py): the
output's geometry (`Windows`: the kernel dataclasses' first fields, n, h, w, c, kh, kw, sh and
sv, and their pads, top, left, bottom, right) and, in a body, the loop over its workgroup's
output image rows (`image_rows`) and the bounds test of a run of rows or columns (`within`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

WORKGROUPS = 8  # at most, along the output image rows (as the QDQ kernels' WORKGROUP_TARGET)


@dataclass(frozen=True)
class Windows:
    """The output geometry of a kernel over kh x kw windows with strides (sh, sv) of x [n, h,
    w, c] padded by `pads` (a field of the kernel's own): workgroups split its n * ho output
    image rows."""

    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int
    sh: int
    sv: int

    @property
    def ho(self) -> int:
        return (self.h + self.pads[0] + self.pads[2] - self.kh) // self.sh + 1

    @property
    def wo(self) -> int:
        return (self.w + self.pads[1] + self.pads[3] - self.kw) // self.sv + 1

    @property
    def rows(self) -> int:
        """Output image rows, n * ho: the dispatch's workload."""
        return self.n * self.ho

    @property
    def workgroups(self) -> int:
        return max(1, min(WORKGROUPS, self.rows))


def image_rows(body, row) -> None:
    """`row(r, b, i)` for each output image row r = b * ho + i of the workgroup's share (a body
    Hoisted with `k` (Windows), `m` (the rows) and `wg` (its workgroup id)), in order."""
    k, const = body.k, body.const
    loop = scf.ForOp(*body.workgroup_rows(body.m, body.wg, k.workgroups), const(1))
    with ir.InsertionPoint(loop.body):
        r = loop.induction_variable
        row(r, arith.divui(r, const(k.ho)), arith.remui(r, const(k.ho)))
        scf.YieldOp([])


def within(const, first, size: int, count: int) -> ir.Value:
    """Whether first ... first + count - 1 all lie in [0, size) (first an index that may be
    'negative': compared signed)."""
    sge, sle = arith.CmpIPredicate.sge, arith.CmpIPredicate.sle
    return arith.andi(arith.cmpi(sge, first, const(0)), arith.cmpi(sle, arith.addi(first, const(count)), const(size)))
