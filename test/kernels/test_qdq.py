"""The exact integer kernel of QDQ MatMuls (passes/kernels/qdq.py, `QdqKernel`; AVX-512 VNNI),
alone: one module tagged for cascadelake, one QDQ MatMul per form, y = DQ(Q(x, sx, zx)) @ DQ(wq,
sw[, zw]) as quantize_static writes one, each one dispatch of the kernel reading xq (IREE's
QuantizeLinear writes it), against the model docs/semantics.md#the-integer-route-of-qdq-matmuls
states:

    d = sum_k (xq - zx) (wq - zw)   exact;   y = f32(sx * sw) * float(d)   in f32

bit for bit (xq by QuantizeLinear's rule: x / sx rounded half to even, + zx, saturated; sx =
2^-4, so x / sx is exact however it is computed), and within three roundings of the exact
product sx sw d in float64: |y - sx sw d| <= ((1 + U)^3 - 1) |sx sw d| (sx * sw, float(d) from
2^24, the product). The epilogues (bias, requantize) are test/iree's.

The forms take the body's edges: 4 rows a tile and the tails of 2 and 1 (M = 1, 2, 4, 7, 9),
K a multiple of 64 (x's row sums 64 bytes at a time) and not (a tail of 4 to 60), int8 and
uint8 activations (uint8 read as int8 by flipping its top bit), int8 and uint8 weights per column
and per tensor with and without zero points, N of one workgroup (64 columns) and of two. The
stage takes a QDQ MatMul from 2^19 multiply-adds, hence K's length.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness
from .harness import U, Form, dispatches, kernel_name, needs_iree, save

from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the harness: skipped without onnx)

pytestmark = needs_iree

CPU = "cascadelake"
SX = np.float32(2.0**-4)
ZX = {True: np.uint8(131), False: np.int8(-5)}  # by whether x is uint8
# (weights: 8-bit, signed or not, 0 per column / -1 per tensor, zero point or not, K, N, rows; x uint8)
FORMS = [
    (Form(8, True, 0, False, 1220, 64, rows=7), True),
    (Form(8, True, 0, True, 612, 128, rows=7), False),
    (Form(8, False, -1, True, 1024, 64, rows=9), True),
    (Form(8, False, 0, False, 4100, 64, rows=2), False),
    (Form(8, True, -1, True, 2048, 64, rows=4), True),
    (Form(8, True, 0, True, 8192, 64, rows=1), False),
]


def qdq_model(path, seed: int = 0) -> list:
    """One model, graph `g`, one QDQ MatMul per form on its own input x<i> [rows, K]: (wq, sw,
    zw) of each as int64 [K, N], f32 [1, N] and int64 [1, N] (0 without a zero point)."""
    rng = np.random.default_rng(seed)
    nodes, inits, inputs, outputs, weights = [], [], [], [], []
    for i, (f, unsigned_x) in enumerate(FORMS):
        dtype = np.int8 if f.signed else np.uint8
        info = np.iinfo(dtype)
        wq = rng.integers(info.min, info.max, (f.k, f.n), endpoint=True)
        shape = (f.n,) if f.block == 0 else ()
        sw = (rng.random(shape) * 0.01 + 0.001).astype(np.float32)
        zw = rng.integers(info.min // 8 + 16, info.max // 8, shape) if f.zero_point else np.zeros(shape, np.int64)
        inits += [numpy_helper.from_array(wq.astype(dtype), f"w{i}"), numpy_helper.from_array(sw, f"sw{i}"),
                  numpy_helper.from_array(np.array(SX), f"sx{i}"), numpy_helper.from_array(np.array(ZX[unsigned_x]), f"zx{i}")]  # fmt: skip
        if f.zero_point:
            inits.append(numpy_helper.from_array(zw.astype(dtype), f"zw{i}"))
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"sx{i}", f"zx{i}"], [f"xq{i}"]),
                  helper.make_node("DequantizeLinear", [f"xq{i}", f"sx{i}", f"zx{i}"], [f"xf{i}"]),
                  helper.make_node("DequantizeLinear", [f"w{i}", f"sw{i}"] + ([f"zw{i}"] if f.zero_point else []), [f"wf{i}"],
                                   **({"axis": 1} if f.block == 0 else {})),
                  helper.make_node("MatMul", [f"xf{i}", f"wf{i}"], [f"y{i}"])]  # fmt: skip
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [f.rows, f.k]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [f.rows, f.n]))
        weights.append((wq, np.broadcast_to(sw, (1, f.n)), np.broadcast_to(zw, (1, f.n)).astype(np.int64)))
    save(path, nodes, inits, inputs, outputs)
    return weights


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    check = dispatches(len(FORMS), [kernel_name("qdq", f, unsigned_x=u) for f, u in FORMS])  # one each, no dequantize of x left
    weights, run = harness.built(tmp_path_factory, "qdq", CPU, qdq_model, check)
    rng = np.random.default_rng(1)
    xs = [(rng.standard_normal((f.rows, f.k)) * 3).astype(np.float32) for f, _ in FORMS]  # some codes saturate
    return weights, xs, run(*xs)


@pytest.mark.parametrize("i", [pytest.param(i, id=f"{'u8' if u else 'i8'}x-{f}") for i, (f, u) in enumerate(FORMS)])
def test_qdq_kernel_against_its_model(built, i):
    weights, xs, got = built
    (f, unsigned_x), (wq, sw, zw), x, got = FORMS[i], weights[i], xs[i], got[i]
    zx = int(ZX[unsigned_x])
    info = np.iinfo(ZX[unsigned_x].dtype)
    xq = np.clip(np.rint(x / SX).astype(np.int64) + zx, info.min, info.max)
    saturated = (xq == info.min) | (xq == info.max)
    assert saturated.any() and not saturated.all()
    d = (xq - zx) @ (wq - zw)  # exact, int64
    s = SX * sw  # f32 x f32, rounded once
    want = s * d.astype(np.float32)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want, err_msg=str(f))
    exact = np.float64(SX) * sw.astype(np.float64) * d
    assert (np.abs(got - exact) <= ((1 + U) ** 3 - 1) * np.abs(exact)).all(), str(f)
