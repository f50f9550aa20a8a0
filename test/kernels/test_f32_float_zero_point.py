"""The exact f32 kernel (passes/kernels/f32.py) with a fractional float zero point, alone: the
form python/formats/matmul_nbits.py writes for MatMulNBits' zero points of the scales' type,
y = x @ (DequantizeLinear(w, s) - DequantizeLinear(ConstantOfShape(1), zs)), zs = z * s per
block, one dispatch of the kernel per MatMul, against the kernel's model
(docs/semantics.md#onnxruntimes-weight-formats): each weight `q * s` rounded once to f32, then
`zs` taken off it, rounded once more (onnxruntime's arithmetic), then summed against x in f32,
so within K roundings of a running sum of x @ those weights in float64. One module per vector
width (8 lanes for haswell, 16 for skylake-avx512).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from . import harness
from .harness import Form, dispatches, f32_sum_bound, needs_iree, save

pytestmark = needs_iree

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

LANES = {"haswell": 8, "skylake-avx512": 16}


def forms(lanes: int) -> list:
    w = 4 * lanes  # columns per workgroup
    return [
        Form(4, False, 32, False, 256, w),  # what MatMulNBits' rewrite writes: uint4 codes
        Form(8, False, 16, False, 128, 2 * w),  # 8 bits, two workgroups
        Form(4, True, 256, False, 512, w),  # signed codes (u - 8), a block longer than the panel's chunk
    ]


def float_zero_point_model(path, fs: list, seed: int = 0) -> list:
    """The model, graph `g`, with one MatMul per form (x<i> its own input, rows at run time):
    (q [K, N], s f32 [KB, N], zs f32 [KB, N]) of each, zs = z * s rounded once, z fractional."""
    rng = np.random.default_rng(seed)
    nodes, inits, inputs, outputs, made = [], [], [], [], []
    for i, f in enumerate(fs):
        info = ml_dtypes.iinfo(f.dtype)
        q = rng.integers(info.min, info.max, (f.k, f.n), endpoint=True)
        kb = f.k // f.block
        s = (rng.random((kb, f.n)) * 0.1 + 0.01).astype(np.float32)
        z = (info.min + rng.random((kb, f.n)) * (info.max - info.min)).astype(np.float32)
        zs = (z.astype(np.float64) * s).astype(np.float32)
        inits += [numpy_helper.from_array(q.astype(f.dtype), f"w{i}"), numpy_helper.from_array(s, f"s{i}"),
                  numpy_helper.from_array(zs, f"zs{i}"), numpy_helper.from_array(np.array([f.k, f.n], np.int64), f"shape{i}")]  # fmt: skip
        ones = helper.make_tensor("value", TensorProto.INT8, [1], [1])
        nodes += [helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}"], [f"wq{i}"], axis=0, block_size=f.block),
                  helper.make_node("ConstantOfShape", [f"shape{i}"], [f"ones{i}"], value=ones),
                  helper.make_node("DequantizeLinear", [f"ones{i}", f"zs{i}"], [f"zf{i}"], axis=0, block_size=f.block),
                  helper.make_node("Sub", [f"wq{i}", f"zf{i}"], [f"wz{i}"]),
                  helper.make_node("MatMul", [f"x{i}", f"wz{i}"], [f"y{i}"])]  # fmt: skip
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [f"M{i}", f.k]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [f"M{i}", f.n]))
        made.append((q, s, zs))
    save(path, nodes, inits, inputs, outputs)
    return made


def model_weights(q: np.ndarray, s: np.ndarray, zs: np.ndarray, block: int) -> np.ndarray:
    """The kernel's weights [K, N] f32: q * s rounded once, minus zs rounded once (numpy f32)."""
    qs = q.astype(np.float32) * np.repeat(s, block, axis=0)
    return qs - np.repeat(zs, block, axis=0)


@pytest.fixture(scope="module", params=list(LANES))
def built(request, tmp_path_factory):
    cpu = request.param
    lanes = LANES[cpu]
    fs = forms(lanes)
    names = [f"dq_matmul_{'i' if f.signed else 'u'}{f.bits}_k{f.k}_n{f.n}_b{f.block}_zf_l{lanes}" for f in fs]
    made, run = harness.built(tmp_path_factory, f"f32-zf-{cpu}", cpu, lambda path: float_zero_point_model(path, fs), dispatches(len(fs), names))
    return cpu, fs, made, run


@pytest.mark.parametrize("m", [1, 3])
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_f32_kernel_float_zero_point_against_its_model(built, m, offset):
    """Every form at m rows (1: the one-row body; 3: a tile and a row tail), x normal and over a
    large common offset (where z * s taken off a sum over K would cancel: issue 42)."""
    cpu, fs, made, run = built
    rng = np.random.default_rng(m)
    xs = [(rng.standard_normal((m, f.k)) + offset).astype(np.float32) for f in fs]
    for f, (q, s, zs), x, got in zip(fs, made, xs, run(*xs)):
        w = model_weights(q, s, zs, f.block)
        want = x.astype(np.float64) @ w.astype(np.float64)
        err = np.abs(got.astype(np.float64) - want)
        bound = f32_sum_bound(x, w, f.k)
        assert got.shape == want.shape and (err <= bound).all(), (cpu, str(f), float((err / bound).max()))
