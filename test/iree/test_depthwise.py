"""Depthwise convolutions as sums of shifted slices (python/depthwise.py): the rewritten model
against a float64 direct convolution written from ONNX's Conv (pads, strides, group); QDQ models
bit for bit against onnxruntime running the QDQ graph as written; the Convs it leaves; the
model as dequant-iree hands it to IREE.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import iree_models  # noqa: E402

from dequant import depthwise, qdq_convs  # noqa: E402



def conv_model(x_shape, c: int, k, stride: int, pads, bias: bool = True, seed: int = 0, dims=None, **attrs) -> onnx.ModelProto:
    """One Conv of `group` = c with constant f32 weights [c, 1, kh, kw] (and bias); `dims`: the
    input's dims as declared (names for unknown ones), x_shape's by default."""
    rng = np.random.default_rng(seed)
    kh, kw = (k, k) if isinstance(k, int) else k
    w = rng.standard_normal((c, 1, kh, kw)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "b")] if bias else [])
    node = helper.make_node("Conv", ["x", "w", *(["b"] if bias else [])], ["y"], group=c, kernel_shape=[kh, kw], pads=list(pads),
                            strides=[stride, stride], **attrs)  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims or x_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def direct(x: np.ndarray, w: np.ndarray, b, stride: int, pads) -> np.ndarray:
    """ONNX's Conv with group = channels, in float64, and the sum of |x * w| per output (the f32
    sum's error bound)."""
    t, l, bot, r = pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (t, bot), (l, r)))
    n, c, hp, wp = xp.shape
    kh, kw = w.shape[2:]
    ho, wo = (hp - kh) // stride + 1, (wp - kw) // stride + 1
    y, mag = np.zeros((n, c, ho, wo)), np.zeros((n, c, ho, wo))
    for i in range(kh):
        for j in range(kw):
            term = xp[:, :, i : i + stride * (ho - 1) + 1 : stride, j : j + stride * (wo - 1) + 1 : stride] * w[:, 0, i, j].astype(np.float64)[:, None, None]
            y, mag = y + term, mag + np.abs(term)
    if b is not None:
        y, mag = y + b.astype(np.float64)[:, None, None], mag + np.abs(b.astype(np.float64))[:, None, None]
    return y, mag


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return onnxruntime_reference.session(model).run(None, {"x": x})[0]


def rewritten(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return depthwise.rewrite(copy)


# (input [N, C, H, W], kernel, stride, pads [t, l, b, r], bias)
CASES = {
    "3x3-stride-1": ((1, 8, 9, 11), 3, 1, (1, 1, 1, 1), True),
    "5x5-stride-1-no-pads": ((2, 4, 7, 6), 5, 1, (0, 0, 0, 0), False),
    "3x3-stride-2-even": ((1, 16, 12, 12), 3, 2, (1, 1, 1, 1), True),
    "5x5-stride-2-odd": ((1, 6, 13, 15), 5, 2, (2, 2, 2, 2), True),
    "3x5-stride-2-uneven-pads": ((1, 5, 10, 9), (3, 5), 2, (0, 2, 1, 1), False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_terms_compute_the_convolution(name):
    """The rewritten model (no Conv left) against the convolution in float64: within the f32
    sum's rounding, k * k + 1 steps of 2^-24 of the sum of the terms' magnitudes."""
    shape, k, stride, pads, bias = CASES[name]
    model = conv_model(shape, shape[1], k, stride, pads, bias)
    out, count = rewritten(model)
    assert count == 1 and not any(n.op_type == "Conv" for n in out.graph.node)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    want, mag = direct(x, inits["w"], inits.get("b"), stride, pads)
    got = run(out, x)
    assert got.shape == want.shape
    kh, kw = (k, k) if isinstance(k, int) else k
    assert (np.abs(got - want) <= (kh * kw + 1) * 2.0**-24 * mag).all()


@pytest.mark.parametrize(
    "change",
    ["dilations 2", "stride 3", "unequal strides", "two channels a group", "weights an input", "auto_pad", "stride 2, dims unknown", "channels mismatched"],
)
def test_convolutions_it_leaves(change):
    """Only what the slices compute exactly as written is taken; the rest stays a Conv."""
    kwargs = {}
    shape, c, stride = (1, 8, 10, 10), 8, 1
    if change == "dilations 2":
        kwargs["dilations"] = [2, 2]
    elif change == "stride 3":
        stride = 3
    elif change == "stride 2, dims unknown":
        stride, kwargs["dims"] = 2, (1, 8, "h", "w")
    elif change == "channels mismatched":
        kwargs["dims"] = (1, 4, 10, 10)
    model = conv_model(shape, c, 3, stride, (1, 1, 1, 1), **kwargs)
    conv = model.graph.node[0]
    if change == "unequal strides":
        next(a for a in conv.attribute if a.name == "strides").ints[:] = [1, 2]
    elif change == "two channels a group":
        next(a for a in conv.attribute if a.name == "group").i = 4
        w = next(t for t in model.graph.initializer if t.name == "w")
        w.CopyFrom(numpy_helper.from_array(np.ones((8, 2, 3, 3), np.float32), "w"))
    elif change == "weights an input":
        model.graph.input.append(helper.make_tensor_value_info("w2", TensorProto.FLOAT, [8, 1, 3, 3]))
        conv.input[1] = "w2"
    elif change == "auto_pad":
        del conv.attribute[[a.name for a in conv.attribute].index("pads")]
        conv.attribute.append(helper.make_attribute("auto_pad", "SAME_UPPER"))
    out, count = rewritten(model)
    assert count == 0 and [n.op_type for n in out.graph.node] == ["Conv"]


def test_stride_1_needs_no_dims():
    """Stride 1 slices end where the padded input ends, counted from its end: an input of unknown
    height and width is taken, and the model still runs at any size."""
    model = conv_model((1, 8, 10, 10), 8, 3, 1, (1, 1, 1, 1), dims=(1, 8, "h", "w"))
    out, count = rewritten(model)
    assert count == 1
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for shape in ((1, 8, 5, 7), (1, 8, 12, 3)):
        x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
        want, mag = direct(x, inits["w"], inits["b"], 1, (1, 1, 1, 1))
        assert (np.abs(run(out, x) - want) <= 10 * 2.0**-24 * mag).all()


def qdq_mobilenet_v3(tmp_path) -> str:
    logging.disable(logging.WARNING)
    return iree_models.quantize_static_file(iree_models.mobilenet_v3(tmp_path / "f.onnx", 64, 0.5, 10), tmp_path / "m.onnx", (1, 3, 64, 64))


def test_qdq_model_bit_for_bit(tmp_path):
    """A MobileNetV3-Small-style QDQ model (3 x 3 and 5 x 5, strides 1 and 2) after
    dequant.qdq_convs and this rewrite: onnxruntime on it equals onnxruntime on the QDQ graph as
    written, bit for bit, on ordinary, saturating and half-way inputs."""
    model = onnx.load(qdq_mobilenet_v3(tmp_path))
    out = onnx.ModelProto()
    out.CopyFrom(model)
    qdq_convs.rewrite(out)
    depthwise_convs = sum(n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute) for n in out.graph.node)
    _, count = depthwise.rewrite(out)
    assert count == depthwise_convs == 8
    rng = np.random.default_rng(3)
    for x in (rng.standard_normal((1, 3, 64, 64)), rng.standard_normal((1, 3, 64, 64)) * 1e3, (rng.integers(-60, 60, (1, 3, 64, 64)) + 0.5) / 16):
        x = x.astype(np.float32)
        np.testing.assert_array_equal(run(out, x), run(model, x))


@needs_iree
def test_staged_for_iree(tmp_path):
    """The QDQ MobileNetV3-style model as dequant-iree hands it to IREE: for a CPU of no known x86
    features (x86-64) its 8 depthwise Convs reach IREE as slices (9 or 25 terms each); for one
    with AVX2 (haswell) as 8 dispatches of dq's depthwise kernel (test_qdq_depthwise.py). IREE
    compiles and runs the same model, in QOperator form, in test_formats_qoperator.py's per-layer
    test: bit for bit onnxruntime's at each requantized tensor."""
    from dequant import iree as stage

    path = qdq_mobilenet_v3(tmp_path)
    text = stage.prepare(stage.import_onnx(path, "llvm-cpu", "x86-64"))
    assert text.count('<{name = "onnx.Slice"}>') >= 8 * 9 and '"onnx.Transpose"' in text
    text = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    convs = text.count('<{name = "onnx.Conv"}>')  # the others (the stem's, group 1) stay float
    assert text.count("entry_points = [@dq_depthwise") == 8 and convs == text.count('<{name = "onnx.Conv"}> {torch.onnx.group = 1 :')
