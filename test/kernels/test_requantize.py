"""The QDQ kernels' requantize (passes/kernels/qdq.py, `Requantize.quantized`) at the codes'
rounding boundaries: saturate(roundeven(y / sy) + zy) with y / sy a true f32 division, as ONNX's
QuantizeLinear computes it (docs/semantics.md#the-integer-route-of-qdq-matmuls). Each case is one
QDQ MatMul whose x is all zero (xq = zx, so d = 0 and y = b exactly) followed by its bias Add and
a QuantizeLinear, the epilogue the kernel fuses: the codes of b chosen at every half-integer
boundary of b / sy, within a few ulps of it, and on it (ties), held to onnx.reference's
QuantizeLinear. Among them are values where y * f32(1 / sy) rounds to another code (asserted): a
kernel multiplying by the reciprocal fails here; and a scale whose reciprocal is subnormal.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness
from .harness import needs_iree, save

from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the harness: skipped without onnx)

pytestmark = needs_iree

ROWS, K = 128, 16  # 128 x 16 x N multiply-adds: the stage takes a QDQ MatMul from 2^19
ZY = np.uint8(20)  # codes of b / sy from -20 to 235 unsaturated
# sy: an ordinary scale, and one whose reciprocal (about 2^-126.6) is subnormal;
# each with the codes n of b whose boundaries n + 0.5 are tried (the large scale's products of
# larger codes would overflow), b within so many ulps of each boundary (N of 2^19 / (ROWS * K) or more)
SCALES = {"ordinary": np.float32(0.0371), "large": np.float32(1.5 * 2.0**126)}
CODES = {"ordinary": range(-25, 240), "large": range(-2, 2)}
ULPS = {"ordinary": 6, "large": 40}


def boundaries(scale: str) -> np.ndarray:
    """f32 values b near (n + 0.5) * sy for every n of CODES, each within ULPS ulps."""
    centres = np.float32((np.array(CODES[scale]) + 0.5) * np.float64(SCALES[scale]))
    return np.unique(np.concatenate([_step(centres, s) for s in range(-ULPS[scale], ULPS[scale] + 1)]))


def _step(v: np.ndarray, ulps: int) -> np.ndarray:
    """v moved by `ulps` ulps (f32)."""
    to = np.float32(np.inf) if ulps > 0 else np.float32(-np.inf)
    for _ in range(abs(ulps)):
        v = np.nextafter(v, to, dtype=np.float32)
    return v


def model(path) -> list:
    """One QDQ MatMul per scale on x<i> [ROWS, K], then Add b<i> and QuantizeLinear(sy, ZY)."""
    nodes, inits, inputs, outputs, bs = [], [], [], [], []
    for i, (scale, sy) in enumerate(SCALES.items()):
        b = boundaries(scale)
        n = b.size
        w = np.random.default_rng(i).integers(-128, 128, (K, n)).astype(np.int8)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(np.array(0.01, np.float32), f"sw{i}"),
                  numpy_helper.from_array(np.array(0.5, np.float32), f"sx{i}"), numpy_helper.from_array(np.array(3, np.uint8), f"zx{i}"),
                  numpy_helper.from_array(b, f"b{i}"), numpy_helper.from_array(np.array(sy), f"sy{i}"),
                  numpy_helper.from_array(np.array(ZY), f"zy{i}")]  # fmt: skip
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"sx{i}", f"zx{i}"], [f"xq{i}"]),
                  helper.make_node("DequantizeLinear", [f"xq{i}", f"sx{i}", f"zx{i}"], [f"xf{i}"]),
                  helper.make_node("DequantizeLinear", [f"w{i}", f"sw{i}"], [f"wf{i}"]),
                  helper.make_node("MatMul", [f"xf{i}", f"wf{i}"], [f"y0{i}"]),
                  helper.make_node("Add", [f"y0{i}", f"b{i}"], [f"yb{i}"]),
                  helper.make_node("QuantizeLinear", [f"yb{i}", f"sy{i}", f"zy{i}"], [f"y{i}"])]  # fmt: skip
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [ROWS, K]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.UINT8, [ROWS, n]))
        bs.append(b)
    save(path, nodes, inits, inputs, outputs)
    return bs


@pytest.fixture(scope="module", params=["cascadelake", "haswell"])
def built(request, tmp_path_factory):
    cpu = request.param
    avx2 = cpu == "haswell"
    names = [f"dq_matmul_qdq{'_avx2' if avx2 else ''}_u8_i8_k{K}_n{b.size}_qu8_b" for b in map(boundaries, SCALES)]
    bs, run = harness.built(tmp_path_factory, f"requantize-{cpu}", cpu, model, harness.dispatches(len(SCALES), names),
                            tags=("dq.avx2",) if avx2 else ())  # fmt: skip
    xs = [np.zeros((ROWS, K), np.float32) for _ in bs]  # xq = zx: d = 0, y = b
    return bs, run(*xs)


def reference(b: np.ndarray, sy: np.float32) -> np.ndarray:
    """onnx.reference's QuantizeLinear of b (uint8, zero point ZY)."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("QuantizeLinear", ["b", "sy", "zy"], ["y"])
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, list(b.shape))],
                              [numpy_helper.from_array(np.array(sy), "sy"), numpy_helper.from_array(np.array(ZY), "zy")])  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return ReferenceEvaluator(onnx.ModelProto.FromString(m.SerializeToString())).run(None, {"b": b})[0]


@pytest.mark.parametrize("scale", list(SCALES))
def test_requantize_at_rounding_boundaries(built, scale):
    bs, got = built
    i = list(SCALES).index(scale)
    b, sy, got = bs[i], SCALES[scale], got[i]
    want = np.broadcast_to(reference(b, sy), got.shape)
    np.testing.assert_array_equal(got.view(np.uint8), want)
    # the cases the product alone gets wrong, and exact ties, are among them
    q = b / sy  # f32 division, correctly rounded
    product = np.clip(np.rint(b * (np.float32(1) / sy)) + ZY, 0, 255)
    assert (product != np.clip(np.rint(q) + ZY, 0, 255)).any()
    if scale == "ordinary":
        assert (q == np.floor(q) + np.float32(0.5)).sum() > 10  # ties, rounded to even
