"""The QDQ kernels' row groups against IREE's hand-out of workgroups (passes/kernels/qdq.py,
`busiest_share`, `QdqKernel.row_groups`, `apart_groups`; docs/iree.md#workgroups-in-eights):
IREE's local-task runtime gives a worker the next 8 workgroups of a grid of 16 or more (2
workers), the next one below. The shares are worked by hand from that rule: 24 workgroups are
8 + 8 for the first worker and 8 for the second; 18 are 8 + 2 and 8; 5 are 1 + 1 + 1 and 1 + 1.
"""

from __future__ import annotations

import pytest

from dequant.passes.kernels.problem import Problem
from dequant.passes.kernels.qdq import QdqKernel, balanced, busiest_share
from dequant.passes.kernels.qdq_avxvnni import QdqAvx2SignKernel


@pytest.mark.parametrize("tiles, share", [(1, 1.0), (5, 3 / 5), (8, 1 / 2), (15, 8 / 15), (16, 1 / 2), (18, 10 / 18), (24, 16 / 24),
                                          (40, 24 / 40), (48, 1 / 2), (96, 1 / 2)])  # fmt: skip
def test_busiest_share(tiles, share):
    assert busiest_share(tiles) == pytest.approx(share)


def test_balanced_takes_the_fewest_groups_of_the_evenest_split():
    assert balanced(24, [1, 2, 4]) == 2  # 24: 16 and 8; 48: 24 and 24
    assert balanced(20, [1, 2, 4]) == 4  # 20 and 40 split 12 / 8 and 24 / 16; 80 evenly
    assert balanced(18, [1, 2, 4]) == 1  # 18, 36, 72: 10 / 8, 20 / 16, 40 / 32 alike
    assert balanced(96, [1, 2, 4]) == 1
    assert balanced(12, [2, 4]) == 4


def _kernel(n: int, rows: int | None) -> QdqKernel:
    """The AVX2 sign-split kernel (32 columns a workgroup) of a QDQ MatMul K = 64 x N."""
    return QdqAvx2SignKernel.like(QdqKernel(Problem(64, n, 64, 8, True, False, rows, "u8", bound=1 << 20)))


@pytest.mark.parametrize("n, rows, groups, apart", [
    (256, 128, 1, 2),  # 8 workgroups: WORKGROUP_TARGET's; two from APART_ROWS rows
    (384, None, 1, 4),  # 12: 24 would split 16 / 8
    (768, 128, 2, 2),  # 24
    (768, None, 2, 2),
    (768, 100, 1, 2),  # too few rows for two groups of 2 * ROW_STEP
    (1024, 128, 1, 2),  # 32
    (1280, 256, 2, 2),  # 40: 80 splits evenly
])  # fmt: skip
def test_row_groups(n, rows, groups, apart):
    k = _kernel(n, rows)
    assert (k.row_groups, k.apart_groups) == (groups, apart)
