"""The column tail of the QDQ kernels (qdq.py, qdq_avx2.py, qdq_avxvnni.py): any N >= 1 in
workgroups of `width` columns, ceil(N / width) of them (docs/iree.md#the-matmul-kernel-cpu).

The constants are padded to whole workgroups when the stage repacks them (`pad`: the padding's
values are never stored); y stays [M, N]. A body computes the column groups `groups` and stores
each through `store` (or a row's consecutive groups at once, `store_groups`): a group wholly
below N with a plain store; the group across N with a mask (`vector.maskedstore`), made once
when the kernel is built (its live columns are static); a group past N not at all. With one
workgroup only its live groups are computed (N = 16 costs one group of 16 lanes, not four). With
several, a partial last workgroup runs the body of its own live groups (`scf.if` on the
workgroup id, both bodies built), the others the body of all groups, plain stores only.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf, vector


def pad(values: np.ndarray, columns: int) -> np.ndarray:
    """values [..., N] with zero columns after N up to `columns`."""
    extra = columns - values.shape[-1]
    return values if extra == 0 else np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, extra)])


class ColumnTail:
    """A QDQ body's column groups and stores, for a body with `k` (the kernel: n, width, lanes,
    workgroups), `v`, `wg`, `col0`, `const`, and `emit_groups()` (every row of the groups in
    `self.groups`, each stored by `store`)."""

    def emit(self) -> None:
        k = self.k
        last = k.n - (k.workgroups - 1) * k.width  # columns of the last workgroup, 1 ... width
        every = list(range(k.width // k.lanes))  # a workgroup's column groups
        if last == k.width:
            self.emit_for(every, None)
        elif k.workgroups == 1:
            self.emit_for(*self.live(last))
        else:
            branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, self.wg, self.const(k.workgroups - 1)), has_else=True)
            with ir.InsertionPoint(branch.then_block):
                self.emit_for(*self.live(last))
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                self.emit_for(every, None)
                scf.YieldOp([])

    def live(self, columns: int) -> tuple:
        """(the groups holding `columns` columns, the live lanes of the last one or None: whole)."""
        lanes = self.k.lanes
        return list(range(-(-columns // lanes))), (columns % lanes) or None

    def emit_for(self, groups: list, edge: int | None) -> None:
        self.groups, self.edge = groups, edge
        self.emit_groups()

    def load_row(self, memref: ir.Value, row, group: int) -> ir.Value:
        """A group's `lanes` bytes of row `row` of memref [M, N] (as y's columns): masked to the
        live lanes in the group across N (zeros past it, never read)."""
        col, t = arith.addi(self.col0, self.const(group * self.k.lanes)), self.small
        if self.edge is None or group != self.groups[-1]:
            return vector.load(t, memref, [row, col])
        mask = ir.VectorType.get(t.shape, ir.IntegerType.get_signless(1))
        zero = arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(t.element_type, 0)))
        return vector.maskedload(t, memref, [row, col], vector.constant_mask(mask, [self.edge]), zero)

    def store(self, value: ir.Value, row, group: int) -> None:
        """value (a group's `lanes` columns of y) into y's row `row`: masked to the live lanes in
        the group across N."""
        self.store_groups(value, row, [group])

    def store_groups(self, value: ir.Value, row, groups: list) -> None:
        """value (the `lanes` columns of each of `groups`, consecutive, in order) into y's row
        `row`: one store, masked to the live lanes where the last group is the one across N."""
        y, col = self.v["y"], arith.addi(self.col0, self.const(groups[0] * self.k.lanes))
        if self.edge is None or groups[-1] != self.groups[-1]:
            vector.store(value, y, [row, col])
            return
        mask = ir.VectorType.get(ir.VectorType(value.type).shape, ir.IntegerType.get_signless(1))
        vector.maskedstore(y, [row, col], vector.constant_mask(mask, [(len(groups) - 1) * self.k.lanes + self.edge]), value)
