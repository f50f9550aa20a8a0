"""A Softmax of codes as one node of dq's softmax kernel (python/qdq_softmax.py,
passes/torch_onnx_dq_softmax_iree_cpu.py, passes/kernels/softmax.py): Q(Softmax(DQ(xq, sx, zx),
axis=-1), sy, zy) as quantize_static writes an attention's softmax.

The rewrite's node is checked against its arithmetic as docs/semantics.md#softmax-of-codes
states it, written here in numpy: per row, e[i] = f32(exp(-(max xq - xq[i]) sx)) (float64 exp),
s the f32 sum of e over 8 lanes (lane j the elements j, j + 8, ... in order), the lanes added by
halves (lanes 0-3 plus 4-7, then 0-1 plus 2-3, then 0 plus 1), then the elements past the last
whole 8 in order; y = saturate(roundeven(f32(f32(e / s) / sy)) + zy). Through dequant-iree for an AVX2 CPU (haswell) the output is that, bit for bit, and
onnxruntime's float Softmax of the model as written (its own exp) is within one code of it in
all but a few elements.
"""

from __future__ import annotations

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from onnx import helper  # noqa: E402
from qdq_reference import compiled, quantize, save  # noqa: E402

from dequant import qdq_softmax  # noqa: E402
from dequant.passes.kernels.softmax import MOST_LENGTH  # noqa: E402

F32 = np.float32
HASWELL = ("--iree-llvmcpu-target-cpu=haswell",)
INIT = {"sx": F32(0.09), "zx": np.uint8(120), "sy": F32(1 / 255), "zy": np.uint8(0)}


def softmax_model(path, shape=(2, 3, 128), *, axis=None, edit=None, init=None) -> str:
    """x f32 -> Q(sx, zx) -> DQ -> Softmax (`axis`, or the default) -> Q(sy, zy) -> DQ -> y;
    `edit(nodes, init)` changes the graph before it is saved."""
    init = dict(INIT, **(init or {}))
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("Softmax", ["xd"], ["p"], **({} if axis is None else {"axis": axis})),
             helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]  # fmt: skip
    if edit is not None:
        edit(nodes, init)
    return save(path, nodes, list(shape), list(shape), init)


def reference(x: np.ndarray, init: dict = INIT) -> np.ndarray:
    """y of the model by docs/semantics.md#softmax-of-codes (the module docstring), dequantized."""
    init = dict(INIT, **init)
    xq = quantize(x, init["sx"], init["zx"])
    rows = xq.reshape(-1, xq.shape[-1])
    e = np.exp(-(rows.max(axis=1, keepdims=True) - rows) * np.float64(init["sx"])).astype(F32)
    length = e.shape[1]
    whole = length - length % 8
    lanes = np.zeros((e.shape[0], 8), F32)
    for k in range(0, whole, 8):
        lanes = lanes + e[:, k : k + 8]
    while lanes.shape[1] > 1:  # by halves
        lanes = lanes[:, : lanes.shape[1] // 2] + lanes[:, lanes.shape[1] // 2 :]
    s = lanes[:, 0]
    for i in range(whole, length):
        s = s + e[:, i]
    q = quantize((e / s[:, None]).astype(F32), init["sy"], init["zy"]).reshape(x.shape)
    return ((q - int(init["zy"])) * F32(init["sy"])).astype(F32)


def test_rewrite_writes_the_node(tmp_path):
    """The Softmax and its QuantizeLinear become one dequant.QdqSoftmax of the codes, its
    attributes the two scales and the output's zero point; the DequantizeLinear goes."""
    model = onnx.load(softmax_model(tmp_path / "m.onnx"))
    assert qdq_softmax.rewrite(model) == 1
    onnx.checker.check_model(model)
    node = next(n for n in model.graph.node if n.op_type == qdq_softmax.OP)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert list(node.input) == ["xq"] and list(node.output) == ["yq"] and node.domain == "dequant"
    assert attrs == {"x_scale": pytest.approx(0.09), "y_scale": pytest.approx(1 / 255), "y_zero_point": 0}
    assert F32(attrs["x_scale"]) == INIT["sx"] and F32(attrs["y_scale"]) == INIT["sy"]  # the f32 scales themselves
    assert [n.op_type for n in model.graph.node] == ["QuantizeLinear", qdq_softmax.OP, "DequantizeLinear"]


def test_rewrite_takes_any_input_zero_point(tmp_path):
    """The input's zero point is no part of the exponents (differences of codes): a
    DequantizeLinear without one (zero of the codes' type) is taken too."""
    def no_zero_point(nodes, init):
        del next(n for n in nodes if n.output == ["xd"]).input[2]

    model = onnx.load(softmax_model(tmp_path / "m.onnx", edit=no_zero_point))
    assert qdq_softmax.rewrite(model) == 1 and qdq_softmax.OP in [n.op_type for n in model.graph.node]


def _also_read(nodes, init):  # the softmax's values read by another node too
    nodes.append(helper.make_node("Relu", ["p"], ["also"]))


def _per_axis(nodes, init):  # the output quantized with a scale per row
    init["sy"] = np.full(128, 1 / 255, F32)
    next(n for n in nodes if n.output == ["yq"]).attribute.append(helper.make_attribute("axis", 2))


def _negative(nodes, init):  # a negative scale: the largest code is the smallest value
    init["sx"] = F32(-0.09)


@pytest.mark.parametrize("edit, axis", [(_also_read, None), (_per_axis, None), (_negative, None), (None, 1)], ids=["also-read", "per-axis", "negative-scale", "axis-1"])
def test_softmaxes_the_rewrite_leaves(tmp_path, edit, axis):
    """A Softmax read by more than its QuantizeLinear, quantized per axis, of a negative scale, or
    over another axis than the last."""
    assert qdq_softmax.rewrite(onnx.load(softmax_model(tmp_path / "m.onnx", axis=axis, edit=edit))) == 0


def test_rows_the_kernel_takes(tmp_path):
    """Rows of up to MOST_LENGTH codes (the kernel's exponentials on the stack); longer ones keep
    IREE's softmax."""
    assert qdq_softmax.rewrite(onnx.load(softmax_model(tmp_path / "m.onnx", (1, MOST_LENGTH)))) == 1
    assert qdq_softmax.rewrite(onnx.load(softmax_model(tmp_path / "n.onnx", (1, MOST_LENGTH + 1)))) == 0


@needs_iree
@pytest.mark.parametrize("shape, init", [
    ((2, 3, 128), {}),  # whole steps of 8
    ((5, 77), {"zx": np.uint8(3), "sy": F32(0.002), "zy": np.uint8(7)}),  # a tail of 5; codes past 255 saturate
    ((2, 4, 19), {"zx": np.int8(-10), "sx": F32(0.3), "zy": np.int8(-128)}),  # int8 in and out
    ((3, 5), {"sx": F32(2.0)}),  # a tail alone; most exponentials 0 in f32
    ((40,), {}),  # one row
])  # fmt: skip
def test_through_dequant_iree_is_its_arithmetic(tmp_path, shape, init):
    """The model through dequant-iree for haswell: one dispatch of dq's softmax kernel, no Softmax
    left to IREE, its output the numpy arithmetic bit for bit; onnxruntime's float Softmax of the
    model as written within one code of it in all but 0.1% of the elements."""
    from dequant import iree as stage

    path = softmax_model(tmp_path / "m.onnx", shape, init=init)
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    assert "dq_softmax_" in staged and "onnx.Softmax" not in staged
    f = compiled(path, *HASWELL)
    step = F32(dict(INIT, **init)["sy"])
    for seed, spread in ((0, 4.0), (1, 40.0)):
        x = (np.random.default_rng(seed).standard_normal(shape) * spread).astype(F32)
        want = reference(x, init)
        np.testing.assert_array_equal(f(x), want)
        theirs = onnxruntime_reference.run(path, {"x": x})[0]
        off = np.abs(theirs - want) / step
        assert off.max() <= 1.001 and (off > 0.5).mean() <= 1e-3
