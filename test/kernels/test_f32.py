"""The exact f32 kernel (passes/kernels/f32.py, `Kernel`), alone: one module per vector width
(8 lanes for haswell, 16 for skylake-avx512, each module tagged as for that CPU), one MatMul per
weight form, each one dispatch of the kernel built for it, against its model
(docs/semantics.md#matmul-of-dequantized-weights): each weight dequantized exactly as ONNX's
DequantizeLinear, `(q - z) * s` rounded once to f32, then summed against x in f32 in order of k,
so within K roundings of a running sum of x @ those weights in float64.

The forms take the body's edges: one row and several (full 2-row tiles and a row tail), rows
static or known at run time, blocks from 2 to longer than the panel's K chunk (128), a scale per
column and one scale, 4- and 8-bit weights signed and unsigned with and without zero points, N
of one workgroup and of two.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness
from .harness import Form, dispatches, f32_sum_bound, kernel_name, needs_iree, weight_only_model

pytestmark = needs_iree

LANES = {"haswell": 8, "skylake-avx512": 16}


def forms(lanes: int) -> list:
    w = 4 * lanes  # columns per workgroup
    return [
        Form(4, True, 32, True, 256, w),
        Form(4, False, 16, False, 256, 2 * w),
        Form(4, True, 2, False, 64, w),  # the smallest block: one byte row a block
        Form(4, False, 6, True, 384, w),  # 3 byte rows a block; 16 blocks a K chunk of 96
        Form(4, True, 256, True, 512, w),  # a block longer than the panel's chunk: two chunks a block
        Form(8, True, 48, True, 384, w),
        Form(8, False, 0, True, 256, 2 * w),  # a scale (and zero point) per column
        Form(8, True, -1, False, 128, w),  # one scale
        Form(4, True, 32, False, 128, w, rows=3),  # rows static
    ]


@pytest.fixture(scope="module", params=list(LANES))
def built(request, tmp_path_factory):
    """(cpu, forms, their Weights, the compiled module's g) for one vector width."""
    cpu = request.param
    fs = forms(LANES[cpu])

    check = dispatches(len(fs), [kernel_name("f32", f, LANES[cpu]) for f in fs])  # one each
    weights, run = harness.built(tmp_path_factory, f"f32-{cpu}", cpu, lambda path: weight_only_model(path, fs), check)
    return cpu, fs, weights, run


def inputs(fs: list, m: int, offset: float, seed: int) -> list:
    """x [rows, K] per form (its static rows, else m): normal, plus `offset`."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((f.rows or m, f.k)) + offset).astype(np.float32) for f in fs]


@pytest.mark.parametrize("m", [1, 2, 3, 5])
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_f32_kernel_against_its_model(built, m, offset):
    """Every form at m rows (1: the one-row body; 2: one full tile; 3 and 5: tiles and a row
    tail), x normal and x over a large common offset (where a zero point taken off after the
    sums, in f32, would cancel: issue 45)."""
    cpu, fs, weights, run = built
    xs = inputs(fs, m, offset, seed=m)
    for f, w, x, got in zip(fs, weights, xs, run(*xs)):
        dq = w.onnx()
        want = x.astype(np.float64) @ dq.astype(np.float64)
        err = np.abs(got.astype(np.float64) - want)
        bound = f32_sum_bound(x, dq, f.k)
        assert got.shape == want.shape and (err <= bound).all(), (cpu, str(f), float((err / bound).max()))
