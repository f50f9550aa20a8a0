"""The int8-activation kernel (passes/kernels/int8.py: `Quantize`, then `Int8Kernel`; opt-in,
approximate; AVX-512 VNNI), alone: one module tagged for cascadelake, the kernel pass asked for
int8 activations, one MatMul per weight form, each two dispatches (x quantized, then the
kernel), against the model docs/semantics.md#int8-activations states: per row and block of K,
amax = max |x|, xs = amax / 127 and i = 127 / amax (f32; i = 0 where amax is 0), xq =
roundeven(x * i); d = sum xq * (q - z) exact in integers; y = sum over blocks of (s * xs) *
float(d) in f32, blocks in order. Everything but the last sum is exact, so the kernel is within
f32 rounding of those terms' float64 sum: one rounding of float(d) and one per block's fused
multiply-add, (blocks + 1) U sum |(s * xs) d|.

The forms take the body's edges: 4 rows a tile and the tails of 2 and 1 (M = 1, 3, 7, and 4),
rows static or known at run time, blocks the kernel takes (multiples of 8 for 4-bit weights, of
4 for 8-bit ones; x's quantize reads 16 values a step where the block allows, else 8), a scale per
column and one scale, 4- and 8-bit weights signed and unsigned with and without zero points, N
of one workgroup (64 columns) and of two.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness
from .harness import U, Form, dispatches, kernel_name, needs_iree, weight_only_model, x_dispatch_name

pytestmark = needs_iree

CPU = "cascadelake"
FORMS = [
    Form(4, True, 32, True, 256, 64),
    Form(4, False, 8, False, 128, 128),  # the smallest 4-bit block; x quantized 8 values a step
    Form(4, True, 24, True, 192, 64),
    Form(4, False, 0, True, 256, 64),  # a scale and zero point per column
    Form(8, True, 16, True, 128, 64),
    Form(8, False, 4, False, 64, 64),  # the smallest 8-bit block: shorter than x's quantize step
    Form(8, True, 12, True, 96, 128),
    Form(8, False, -1, True, 128, 64),  # one scale
    Form(4, True, 32, False, 128, 64, rows=3),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    check = dispatches(len(FORMS), [kernel_name("int8", f) for f in FORMS] + [x_dispatch_name("int8", f) for f in FORMS])  # two each
    weights, run = harness.built(tmp_path_factory, "int8", CPU, lambda path: weight_only_model(path, FORMS), check, int8_activations=True)
    run.cache = {}  # m: (x per form, y per form), one call for every form's checks
    return weights, run


def model(x: np.ndarray, w, block: int) -> tuple:
    """(y as float64 of the exact terms, sum of their magnitudes): x [M, K] f32, w Weights."""
    m, k = x.shape
    f32 = np.float32
    xb = x.reshape(m, k // block, block)
    amax = np.abs(xb).max(axis=2)
    xs = amax / f32(127)
    with np.errstate(divide="ignore"):
        inverse = np.where(amax != 0, f32(127) / amax, f32(0)).astype(f32)
    xq = np.rint(xb * inverse[:, :, None]).astype(np.int64)  # ties to even
    assert xq.dtype == np.int64 and np.abs(xq).max() <= 127
    qz = (w.q - np.repeat(w.z, block, axis=0)).reshape(k // block, block, -1)
    d = np.einsum("mbk,bkn->mbn", xq, qz)  # exact integers
    scale = (w.s[None, :, :] * xs[:, :, None]).astype(f32)  # s * xs, rounded once to f32
    terms = scale.astype(np.float64) * d
    return terms.sum(axis=1), np.abs(terms).sum(axis=1)


def inputs(m: int) -> list:
    """x per form at m rows (its static rows, else m): normal, with a block of zeros (amax 0:
    every xq 0) and a block whose x * (127 / amax) holds ties (amax 127: x itself, rounded to
    even)."""
    rng = np.random.default_rng(m)
    xs = []
    for f in FORMS:
        x = rng.standard_normal((f.rows or m, f.k)).astype(np.float32)
        x[0, : f.kblock] = 0
        if f.k >= 2 * f.kblock:
            x[-1, f.kblock : 2 * f.kblock] = np.resize(np.float32([127.0, -2.5, 0.5, 1.5]), f.kblock)
        xs.append(x)
    return xs


@pytest.mark.parametrize("m", [1, 3, 4, 7])
@pytest.mark.parametrize("i", [pytest.param(i, id=str(f)) for i, f in enumerate(FORMS)])
def test_int8_kernel_against_its_model(built, i, m):
    """Form i at m rows against the model, within (blocks + 1) U sum |(s * xs) d|."""
    weights, run = built
    if m not in run.cache:
        xs = inputs(m)
        run.cache[m] = xs, run(*xs)
    xs, got = run.cache[m]
    f, x, got = FORMS[i], xs[i], got[i]
    want, size = model(x, weights[i], f.kblock)
    err = np.abs(got.astype(np.float64) - want)
    bound = (f.k // f.kblock + 1) * U * size
    assert got.shape == want.shape and (err <= bound).all(), (str(f), float(err.max()), float((err / bound).max()))
