"""The exact one-row kernel of 4-bit weights (passes/kernels/digits.py: `Digits`, then
`DigitKernel`; AVX-512 VNNI), alone: one module tagged for cascadelake, one MatMul per weight
form, each two dispatches (x's digits, then the kernel), against the model
docs/semantics.md#the-exact-one-row-route states. Per block of x of B' values (32, or the
longest multiple of 8 dividing the weights' block), with 2^e just above the block's largest |x|
(e >= -126): X = roundeven(x * 2^(30 - e)), within 2^(e - 31) <= 2^-30 max |x| of x * 2^(30 - e)
(in units of 2^(e - 30)); Y = sum X (q - z) exact, rounded once to f32; y += s Y 2^(e - 30), one
rounding a block. So against x @ ((q - z) s) in float64, exact:

    |y - exact| <= 2^-30 sum_b max|x_b| sum_{k in b} |(q - z) s|  +  (K / B' + 3) U sum_k |x (q - z) s|

(x's rounding; the blocks' running sum, each Y's rounding, and what x's rounding adds to both).
A row count known only at run time takes the same kernel reading x too, whose rows above one take
the f32 kernel's several-rows body on this layout: held to the f32 kernel's model (test_f32).

The forms take the body's edges: x blocks of 32, 24, 16 and 8 (weights' blocks 8 to 64, 40, a
scale per column, one scale), one row static, rows at run time (1, and 2, 3, 5: the panel's full
tiles and tail), signed and unsigned weights with and without zero points, N of one workgroup (64
columns) and of two.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness
from .harness import U, Form, dispatches, f32_sum_bound, kernel_name, needs_iree, weight_only_model, x_dispatch_name

pytestmark = needs_iree

CPU = "cascadelake"
FORMS = [
    Form(4, True, 32, True, 256, 64, rows=1),
    Form(4, False, 8, False, 128, 128, rows=1),  # x blocks of 8
    Form(4, True, 24, True, 192, 64, rows=1),  # x blocks of 24
    Form(4, False, 16, True, 128, 64, rows=1),  # x blocks of 16
    Form(4, True, 64, False, 256, 64, rows=1),  # two x blocks a weights' block
    Form(4, False, 40, True, 320, 64, rows=1),  # x blocks of 8 in a block of 40
    Form(4, True, 0, True, 256, 64, rows=1),  # a scale and zero point per column
    Form(4, False, -1, False, 128, 64, rows=1),  # one scale
    Form(4, True, 32, True, 256, 64),  # rows at run time
    Form(4, False, 8, False, 128, 128),
    Form(4, True, 24, False, 192, 64),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    check = dispatches(len(FORMS), [kernel_name("digits", f) for f in FORMS] + [x_dispatch_name("digits", f) for f in FORMS])  # two each
    weights, run = harness.built(tmp_path_factory, "digits", CPU, lambda path: weight_only_model(path, FORMS), check)
    run.cache = {}  # (m, x): (x per form, y per form), one call for every form's checks
    return weights, run


def x_block(block: int) -> int:
    return next(d for d in (32, 24, 16, 8) if block % d == 0)


def one_row_bound(x: np.ndarray, w: np.ndarray, xblock: int) -> np.ndarray:
    """The bound of the module docstring for x [1, K] and the exact weights w [K, N]."""
    k = x.shape[1]
    a = np.abs(x[0].astype(np.float64)).reshape(k // xblock, xblock)
    largest = np.maximum(a.max(axis=1), 2.0**-127)  # e >= -126: 2^(e - 31) <= 2^-30 max(max |x|, 2^-127)
    per_block = np.abs(w).reshape(k // xblock, xblock, -1).sum(axis=1)  # [K / B', N]
    return 2.0**-30 * (largest @ per_block)[None, :] + (k // xblock + 3) * U * (a.reshape(1, k) @ np.abs(w))


def inputs(m: int, kind: str) -> list:
    """x per form at m rows (its static rows, else m): normal, or `wide`: a block of zeros, a
    block spanning 2^50 (its small values rounded), subnormals and values near 1e30."""
    rng = np.random.default_rng(m)
    xs = []
    for f in FORMS:
        x = rng.standard_normal((f.rows or m, f.k))
        if kind == "wide":
            x[:, :8] = 0
            x[:, 32:64] *= np.logspace(0, -15, 32)
            x[:, 64:96] *= 1e-40
            x[:, 96:128] *= 1e30
        xs.append(x.astype(np.float32))
    return xs


@pytest.mark.parametrize("kind", ["normal", "wide"])
@pytest.mark.parametrize("i, m", [pytest.param(i, m, id=f"{f}@{m}") for i, f in enumerate(FORMS) for m in ([1] if f.rows else [1, 2, 3, 5])])
def test_digit_kernel_against_its_model(built, i, m, kind):
    """Form i at m rows against the model."""
    weights, run = built
    f = FORMS[i]
    if (m, kind) not in run.cache:
        xs = inputs(m, kind)
        run.cache[m, kind] = xs, run(*xs)
    xs, got = run.cache[m, kind]
    x, got = xs[i], got[i]
    if x.shape[0] == 1:
        w = weights[i].exact()
        bound = one_row_bound(x, w, x_block(f.kblock))
    else:
        w = weights[i].onnx()
        bound = f32_sum_bound(x, w, f.k)
    want = x.astype(np.float64) @ w.astype(np.float64)
    err = np.abs(got.astype(np.float64) - want)
    assert got.shape == want.shape and (err <= bound).all(), (str(f), m, kind, float((err / bound).max()))
