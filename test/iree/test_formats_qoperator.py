"""The QOperator and dynamic formats (python/formats/qoperator.py): each op's QDQ rewrite against
onnxruntime's kernel for the op (and onnx.reference where it implements it), bad input refused
with one line, and quantize_static / quantize_dynamic models through `dequant-iree` against
onnxruntime, per requantized tensor (docs/semantics.md#qoperator-and-dynamic-formats).

The rewritten models run under onnxruntime with graph optimizations off, so the QDQ graph is
computed as written (dequantize, float op, quantize), never by dequant itself.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402

from onnx import helper, numpy_helper  # noqa: E402

from dequant import formats  # noqa: E402

MS = "com.microsoft"
U8, I8 = np.uint8, np.int8


# --- single nodes -------------------------------------------------------------------------------


def _info(name, array):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))


def node_model(op_type, inputs: dict, consts: dict, out_dtype, domain="", model_opset=21, **attrs):
    """One node reading graph inputs `inputs` (name -> example array) and initializers `consts`
    (name -> array; a name "" is an input left out), output "y" of `out_dtype`."""
    names = list(inputs) + list(consts)
    order = attrs.pop("order", names)
    node = helper.make_node(op_type, order, ["y"], domain=domain, **attrs)
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items() if k]
    g = helper.make_graph([node], "g", [_info(k, v) for k, v in inputs.items()],
                          [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), None)], inits)  # fmt: skip
    opsets = [helper.make_opsetid("", model_opset)] + ([helper.make_opsetid(MS, 1)] if domain == MS else [])
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 10
    return m


def session(model, optimized=True):
    return onnxruntime_reference.session(model, optimized)


def rewritten(model):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    out, counts = formats.normalise(copy)
    assert counts, "no node rewritten"
    assert not any(n.domain == MS for n in out.graph.node)
    return out


def agree(got, want, *, within_one: float = 0.0, rtol=1e-5):
    """Quantized outputs: every element within one step of `want`, and at most a fraction
    `within_one` off by one step; float outputs: within rtol of the output's magnitude."""
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind in "iu":
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert d.max(initial=0) <= 1, f"{d.max()} steps apart"
        assert np.mean(d == 1) <= within_one, f"{np.mean(d == 1):.4f} of the elements one step apart"
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=rtol * float(np.abs(want).max()))


def check_op(model, feeds, *, within_one=0.0, rtol=1e-5, reference=False):
    """The rewritten model (onnxruntime, optimizations off) against onnxruntime's kernel of the
    op; `reference`: also against onnx.reference on the original model."""
    want = session(model).run(None, feeds)[0]
    got = session(rewritten(model), optimized=False).run(None, feeds)[0]
    agree(got, want, within_one=within_one, rtol=rtol)
    if reference:
        from onnx.reference import ReferenceEvaluator

        agree(got, ReferenceEvaluator(model).run(None, feeds)[0], within_one=within_one, rtol=rtol)
    return got


def q(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def zp(rng, dtype, n=None):
    lo, hi = (100, 156) if dtype == U8 else (-28, 28)
    return rng.integers(lo, hi, n).astype(dtype) if n else np.array(rng.integers(lo, hi), dtype)


@pytest.mark.parametrize("x_dtype", [U8, I8])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("group, stride, bias", [(1, 1, True), (1, 2, False), (8, 1, True), (2, 2, True)])
def test_qlinear_conv(x_dtype, per_channel, group, stride, bias):
    rng = np.random.default_rng(group * 10 + stride)
    c, m = 8, 16 if group != 8 else 8
    x = q(rng, (1, c, 9, 9), x_dtype)
    w = rng.integers(-127, 128, (m, c // group, 3, 3)).astype(I8)
    n = m if per_channel else None
    sw = (rng.uniform(0.5, 2, n) * 1e-2).astype(np.float32) if n else np.float32(0.011)
    sx, sy = np.float32(0.02), np.float32(0.3)
    consts = {"sx": sx, "zx": zp(rng, x_dtype), "w": w, "sw": sw, "zw": np.zeros(n, I8) if n else np.array(0, I8),
              "sy": sy, "zy": zp(rng, x_dtype)}  # fmt: skip
    if bias:
        consts["b"] = rng.integers(-5000, 5000, m).astype(np.int32)
    model = node_model("QLinearConv", {"x": x}, consts, x_dtype, group=group, strides=[stride] * 2, pads=[1] * 4, kernel_shape=[3, 3])
    # onnxruntime requantizes with one f32 multiplier sx*sw/sy, the QDQ graph divides the f32
    # conv result by sy: the two may round a near-tie apart (measured: never, on these cases).
    check_op(model, {"x": x}, within_one=0.01, reference=True)


@pytest.mark.parametrize("x_dtype", [U8, I8])
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul(x_dtype, per_column):
    rng = np.random.default_rng(3)
    a, b = q(rng, (2, 5, 32), x_dtype), rng.integers(-127, 128, (32, 24)).astype(I8)
    n = 24 if per_column else None
    sb = (rng.uniform(0.5, 2, n) * 1e-2).astype(np.float32) if n else np.float32(0.013)
    consts = {"sa": np.float32(0.03), "za": zp(rng, x_dtype), "b": b, "sb": sb, "zb": np.zeros(n, I8) if n else np.array(0, I8),
              "sy": np.float32(0.2), "zy": zp(rng, x_dtype)}  # fmt: skip
    model = node_model("QLinearMatMul", {"a": a}, consts, x_dtype)
    check_op(model, {"a": a}, within_one=0.01, reference=True)


@pytest.mark.parametrize("op, x_dtype, per_column, rewritten", [("QLinearMatMul", U8, True, 1), ("QLinearMatMul", I8, False, 0),
                                                                ("MatMulInteger", U8, False, 1), ("MatMulInteger", I8, True, 0)])  # fmt: skip
def test_onnxruntime_reference_is_exact_on_any_x86(op, x_dtype, per_column, rewritten):
    """The exact onnxruntime session (dequant.check.onnxruntime_session) on full-range weights,
    whose uint8 x int8 sums saturate in onnxruntime's default kernels on a CPU without VNNI
    (docs/semantics.md#onnxruntime-on-avx2-hosts): its weight rewrite takes uint8 activations
    only, keeps onnx.reference's result bit for bit, and the session gives it on this host."""
    from onnx.reference import ReferenceEvaluator

    from dequant.check import exact_integer_weights

    rng = np.random.default_rng(11)
    a, b = q(rng, (3, 64), x_dtype), rng.integers(-128, 128, (64, 16)).astype(I8)
    zb = rng.integers(-3, 4, 16 if per_column else None).astype(I8)
    if op == "QLinearMatMul":
        consts = {"sa": np.float32(0.03), "za": zp(rng, x_dtype), "b": b, "sb": np.float32(0.013), "zb": zb, "sy": np.float32(2.0), "zy": zp(rng, x_dtype)}
        model = node_model(op, {"a": a}, consts, x_dtype)
    else:  # MatMulInteger with a zero point for A only: the rewrite adds B's
        model = node_model(op, {"a": a}, {"b": b, "za": zp(rng, x_dtype)}, np.int32, order=["a", "b", "za"])
    want = ReferenceEvaluator(model).run(None, {"a": a})[0]
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    assert exact_integer_weights(copy) == rewritten
    weights = {t.name: t.data_type for t in copy.graph.initializer}
    assert weights[copy.graph.node[0].input[3 if op == "QLinearMatMul" else 1]] == (onnx.TensorProto.UINT8 if rewritten else onnx.TensorProto.INT8)
    np.testing.assert_array_equal(ReferenceEvaluator(copy).run(None, {"a": a})[0], want)
    for optimized in (False, True):
        np.testing.assert_array_equal(session(model, optimized).run(None, {"a": a})[0], want)


@pytest.mark.parametrize("x_dtype", [U8, I8])
@pytest.mark.parametrize("per_column, trans_b, alpha, bias, float_out",
                         [(False, 0, 1.0, True, False), (True, 1, 1.0, True, False), (True, 1, 0.5, True, True),
                          (False, 0, 2.0, False, True), (True, 0, 1.0, False, False)])  # fmt: skip
def test_qgemm(x_dtype, per_column, trans_b, alpha, bias, float_out):
    rng = np.random.default_rng(5)
    k, n_cols = 32, 24
    a = q(rng, (6, k), x_dtype)
    b = rng.integers(-127, 128, (n_cols, k) if trans_b else (k, n_cols)).astype(I8)
    n = n_cols if per_column else None
    sb = (rng.uniform(0.5, 2, n) * 1e-2).astype(np.float32) if n else np.float32(0.013)
    consts = {"sa": np.float32(0.03), "za": zp(rng, x_dtype), "b": b, "sb": sb, "zb": np.zeros(n, I8) if n else np.array(0, I8),
              "c": rng.integers(-3000, 3000, n_cols).astype(np.int32) if bias else np.zeros(0, np.int32)}  # fmt: skip
    order = ["a", "sa", "za", "b", "sb", "zb", "c" if bias else ""]
    if not bias:
        del consts["c"]
    if not float_out:
        consts |= {"sy": np.float32(0.25), "zy": zp(rng, x_dtype)}
        order += ["sy", "zy"]
    model = node_model("QGemm", {"a": a}, consts, np.float32 if float_out else x_dtype, domain=MS, order=order, alpha=alpha, transB=trans_b)
    check_op(model, {"a": a}, within_one=0.01)


@pytest.mark.parametrize("x_dtype", [U8, I8])
@pytest.mark.parametrize("op, shapes, attrs",
                         [("QLinearAdd", [(2, 8, 5, 5), (1, 8, 1, 1)], {}), ("QLinearMul", [(2, 8, 5, 5), (2, 8, 5, 5)], {}),
                          ("QLinearSigmoid", [(2, 8, 5, 5)], {}), ("QLinearLeakyRelu", [(2, 8, 5, 5)], {"alpha": 0.1}),
                          ("QLinearAveragePool", [(1, 8, 9, 9)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4}),
                          ("QLinearAveragePool", [(1, 8, 9, 9)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4, "count_include_pad": 1, "ceil_mode": 1}),
                          ("QLinearGlobalAveragePool", [(2, 8, 5, 7)], {}), ("QLinearSoftmax", [(2, 4, 16)], {"axis": -1, "opset": 13})])  # fmt: skip
def test_qlinear_elementwise(x_dtype, op, shapes, attrs):
    rng = np.random.default_rng(len(op))
    inputs, consts, order = {}, {}, []
    for i, shape in enumerate(shapes):
        inputs[f"x{i}"] = q(rng, shape, x_dtype)
        consts |= {f"s{i}": np.float32(0.02 + 0.01 * i), f"z{i}": zp(rng, x_dtype)}
        order += [f"x{i}", f"s{i}", f"z{i}"]
    consts |= {"sy": np.float32(1 / 256 if op == "QLinearSoftmax" else 0.03), "zy": np.array(-128 if x_dtype == I8 else 0, x_dtype) if op == "QLinearSoftmax" else zp(rng, x_dtype)}
    model = node_model(op, inputs, consts, x_dtype, domain=MS, order=order + ["sy", "zy"], **attrs)
    # measured one step apart: QLinearMul 0.25%, QLinearAveragePool 1% (onnxruntime's kernels
    # compute in a fixed-point or fused float form), the others none
    check_op(model, inputs, within_one=0.02)


@pytest.mark.parametrize("x_dtype", [U8, I8])
def test_qlinear_concat(x_dtype):
    rng = np.random.default_rng(11)
    inputs = {"a": q(rng, (1, 4, 5, 5), x_dtype), "b": q(rng, (1, 6, 5, 5), x_dtype)}
    consts = {"sy": np.float32(0.05), "zy": zp(rng, x_dtype), "sa": np.float32(0.03), "za": zp(rng, x_dtype), "sb": np.float32(0.07), "zb": zp(rng, x_dtype)}
    model = node_model("QLinearConcat", inputs, consts, x_dtype, domain=MS, order=["sy", "zy", "a", "sa", "za", "b", "sb", "zb"], axis=1)
    check_op(model, inputs, within_one=0.01)


def test_missing_zero_points_keep_int8():
    """A contrib op without zero points: 0 of its input's type (int8 here), not QuantizeLinear's
    default uint8. onnxruntime's kernel reads past the inputs of such a node (it asserts), so the
    reference is the same node with the zero points written out."""
    rng = np.random.default_rng(12)
    x = q(rng, (2, 8), I8)
    consts = {"sx": np.float32(0.05), "zx": np.array(0, I8), "sy": np.float32(1 / 128), "zy": np.array(0, I8)}
    full = node_model("QLinearLeakyRelu", {"x": x}, consts, I8, domain=MS, alpha=0.2)
    bare = node_model("QLinearLeakyRelu", {"x": x}, {"sx": consts["sx"], "sy": consts["sy"]}, I8, domain=MS, order=["x", "sx", "", "sy"], alpha=0.2)
    got = session(rewritten(bare), optimized=False).run(None, {"x": x})[0]
    agree(got, session(full).run(None, {"x": x})[0], within_one=0.01)


@pytest.mark.parametrize("b_dtype", [U8, I8])
@pytest.mark.parametrize("per_column, b_zero_point, bias", [(False, False, False), (True, True, True), (False, True, True), (True, False, False)])
def test_dynamic_quantize_matmul(b_dtype, per_column, b_zero_point, bias):
    rng = np.random.default_rng(13)
    k, n_cols = 48, 20
    a = rng.standard_normal((3, 7, k)).astype(np.float32)
    n = n_cols if per_column else None
    consts = {"b": q(rng, (k, n_cols), b_dtype), "sb": (rng.uniform(0.5, 2, n) * 1e-2).astype(np.float32) if n else np.float32(0.01)}
    order = ["a", "b", "sb"]
    if b_zero_point:
        consts["zb"] = zp(rng, b_dtype, n) if n else zp(rng, b_dtype)
        order.append("zb")
    if bias:
        consts["bias"] = rng.standard_normal(n_cols).astype(np.float32)
        order += [""] * (not b_zero_point) + ["bias"]
    model = node_model("DynamicQuantizeMatMul", {"a": a}, consts, np.float32, domain=MS, order=order)
    check_op(model, {"a": a}, rtol=1e-5)


def test_matmul_integer_to_float():
    rng = np.random.default_rng(14)
    a = q(rng, (4, 32), U8)
    consts = {"b": q(rng, (32, 16), I8), "sa": np.float32(0.02), "sb": np.full(16, 0.01, np.float32), "za": np.array(120, U8),
              "zb": np.zeros(16, I8), "bias": rng.standard_normal(16).astype(np.float32)}  # fmt: skip
    model = node_model("MatMulIntegerToFloat", {"a": a}, consts, np.float32, domain=MS)
    check_op(model, {"a": a})


@pytest.mark.parametrize("op_type", ["QuantizeLinear", "DequantizeLinear"])
def test_microsoft_qdq_to_standard(op_type):
    rng = np.random.default_rng(15)
    x = rng.standard_normal((4, 8)).astype(np.float32) if op_type == "QuantizeLinear" else q(rng, (4, 8), I8)
    consts = {"s": np.linspace(0.01, 0.02, 8, dtype=np.float32), "z": np.arange(8, dtype=I8)}
    model = node_model(op_type, {"x": x}, consts, I8 if op_type == "QuantizeLinear" else np.float32, domain=MS, axis=1)
    check_op(model, {"x": x})


def _route(model) -> list:
    """The rewritten model's nodes as "Op" or "Op(axis=a)"."""
    out = []
    for n in rewritten(model).graph.node:
        axis = [a.i for a in n.attribute if a.name == "axis"]
        out.append(f"{n.op_type}(axis={axis[0]})" if axis and n.op_type in ("DequantizeLinear", "QuantizeLinear") else n.op_type)
    return out


def test_routes():
    """What each op becomes (docs/iree.md, "Model formats"): the QDQ graph quantize_static writes
    for the float op; per-channel weights dequantized along the output channel."""
    rng = np.random.default_rng(0)
    x = q(rng, (1, 4, 6, 6), U8)
    conv = {"sx": np.float32(0.02), "zx": np.array(128, U8), "w": rng.integers(-127, 128, (8, 4, 3, 3)).astype(I8),
            "sw": np.full(8, 0.01, np.float32), "zw": np.zeros(8, I8), "sy": np.float32(0.3), "zy": np.array(128, U8),
            "b": np.arange(8, dtype=np.int32)}  # fmt: skip
    assert _route(node_model("QLinearConv", {"x": x}, conv, U8, kernel_shape=[3, 3])) == [
        "DequantizeLinear", "DequantizeLinear(axis=0)", "DequantizeLinear(axis=0)", "Conv", "QuantizeLinear"]  # fmt: skip
    per_tensor = conv | {"sw": np.float32(0.01), "zw": np.array(0, I8)}
    assert _route(node_model("QLinearConv", {"x": x}, per_tensor, U8, kernel_shape=[3, 3])) == [
        "DequantizeLinear", "DequantizeLinear", "DequantizeLinear", "Conv", "QuantizeLinear"]  # fmt: skip
    gemm = {"sa": np.float32(0.02), "za": np.array(128, U8), "b": rng.integers(-127, 128, (8, 16)).astype(I8),
            "sb": np.full(8, 0.01, np.float32), "zb": np.zeros(8, I8), "c": np.arange(8, dtype=np.int32)}  # fmt: skip
    a = q(rng, (2, 16), U8)
    assert _route(node_model("QGemm", {"a": a}, gemm, np.float32, domain=MS, transB=1)) == [
        "DequantizeLinear", "DequantizeLinear(axis=0)", "Cast", "Mul", "Gemm"]  # fmt: skip
    add = {"sa": np.float32(0.02), "za": np.array(128, U8), "sy": np.float32(0.03), "zy": np.array(100, U8)}
    assert _route(node_model("QLinearAdd", {"a": a, "b": a}, add, U8, domain=MS, order=["a", "sa", "za", "b", "sa", "za", "sy", "zy"])) == [
        "DequantizeLinear", "DequantizeLinear", "Add", "QuantizeLinear"]  # fmt: skip
    dyn = {"b": rng.integers(-127, 128, (16, 8)).astype(I8), "sb": np.float32(0.01)}
    assert _route(node_model("DynamicQuantizeMatMul", {"a": a.astype(np.float32)}, dyn, np.float32, domain=MS)) == [
        "DynamicQuantizeLinear", "MatMulInteger", "Cast", "Mul", "Mul"]  # fmt: skip


# --- bad input ----------------------------------------------------------------------------------


def conv_model(**change):
    """A QLinearConv of 4 -> 8 channels, per-channel weights; `change` replaces initializers."""
    rng = np.random.default_rng(0)
    consts = {"sx": np.float32(0.02), "zx": np.array(128, U8), "w": rng.integers(-127, 128, (8, 4, 3, 3)).astype(I8),
              "sw": np.full(8, 0.01, np.float32), "zw": np.zeros(8, I8), "sy": np.float32(0.3), "zy": np.array(128, U8)} | change  # fmt: skip
    return node_model("QLinearConv", {"x": q(rng, (1, 4, 8, 8), U8)}, consts, U8, kernel_shape=[3, 3], pads=[1] * 4)


BAD = {
    "zero scale": (dict(sx=np.float32(0)), "x_scale holds 0.0; a scale must be finite and nonzero"),
    "zero weight scale": (dict(sw=np.array([0.01] * 7 + [0], np.float32)), "w_scale holds 0.0; a scale must be finite and nonzero"),
    "zero point out of range": (dict(zy=np.array(300, np.int32)), "y_zero_point is int32; the QOperator ops take int8 or uint8 zero points"),
    "x zero point out of range": (dict(zx=np.array(300, np.int32)), "x_zero_point 300 is outside uint8's range [0, 255]"),
    "zero point of another type": (dict(zx=np.array(3, I8)), "x_zero_point is int8; it must be uint8, the type of 'x'"),
    "per-channel scale length": (dict(sw=np.full(5, 0.01, np.float32)), "w_scale has shape [5]; it must have 1 or 8 elements (one per channel)"),
    "per-channel zero point length": (dict(zw=np.zeros(3, I8)), "w_zero_point has shape [3]; it must have 1 or 8 elements (one per channel)"),
    "non-finite scale": (dict(sy=np.float32(np.inf)), "y_scale holds inf; a scale must be finite and nonzero"),
    "negative x zero point": (dict(zx=np.array(-1, np.int32)), "x_zero_point -1 is outside uint8's range [0, 255]"),
    "weight zero point out of range": (dict(zw=np.full(8, 200, np.int32)), "w_zero_point 200 is outside int8's range [-128, 127]"),
    "bias length": (dict(b=np.zeros(5, np.int32)), "its bias has shape [5]; it must have 8 elements (one per output channel)"),
    "float bias": (dict(b=np.zeros(8, np.float32)), "its bias (input 8) must be an int32 constant"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_refused(case):
    change, message = BAD[case]
    with pytest.raises(formats.FormatError) as e:
        formats.normalise(conv_model(**change))
    assert str(e.value) == f"QLinearConv node 'y': {message}"


def test_attribute_of_another_type_refused():
    """A QGemm whose transB is a string, not an integer: the node's error (not a TypeError)."""
    rng = np.random.default_rng(0)
    gemm = {"sa": np.float32(0.02), "za": np.array(128, U8), "b": rng.integers(-127, 128, (8, 16)).astype(I8),
            "sb": np.full(8, 0.01, np.float32), "zb": np.zeros(8, I8)}  # fmt: skip
    model = node_model("QGemm", {"a": q(rng, (2, 16), U8)}, gemm, np.float32, domain=MS, transB="yes")
    with pytest.raises(formats.FormatError) as e:
        formats.normalise(model)
    assert str(e.value).endswith("its attribute 'transB' must be an integer")


@pytest.mark.parametrize("case", ["zero scale", "x zero point out of range", "weight zero point out of range", "per-channel scale length", "bias length"])
def test_bad_input_one_error_line(tmp_path, case):
    change, message = BAD[case]
    path = tmp_path / "m.onnx"
    onnx.save(conv_model(**change), str(path))
    run = subprocess.run([sys.executable, "-m", "dequant.iree", str(path), "-o", str(tmp_path / "m.vmfb")], capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.splitlines() == [f"dequant-iree: error: QLinearConv node 'y': {message}"]


# --- whole models through dequant-iree -----------------------------------------------------------

REQUANTIZING = {"QuantizeLinear", "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul", "QLinearConcat", "QLinearSigmoid",
                "QLinearLeakyRelu", "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearSoftmax"}  # fmt: skip


def with_layer_outputs(path, out) -> list:
    """The model at `path` with every requantized tensor (each QuantizeLinear's or QLinear op's
    output) also a graph output, saved to `out`; their names."""
    model = onnx.load(str(path))
    have = {o.name for o in model.graph.output}
    names = [n.output[0] for n in model.graph.node if n.op_type in REQUANTIZING and n.output[0] not in have]
    inferred, _ = formats.normalise(onnx.load(str(path)))  # standard ops only: shape inference sees every type
    info = {v.name: v for v in onnx.shape_inference.infer_shapes(inferred).graph.value_info}
    model.graph.output.extend(info[n] for n in names)
    onnx.save(model, str(out))
    return [o.name for o in model.graph.output]


def run_iree(vmfb: bytes, function: str, x: np.ndarray) -> list:
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    out = ctx.modules.module[function](x)
    return [np.asarray(v) for v in (out if isinstance(out, (list, tuple)) else [out])]


def quantized_cnn(tmp_path, kind: str, fmt: str, per_channel: bool, activations: str) -> tuple:
    """A small float CNN of iree_models (64 x 64 input: at 32 a stride-2 convolution of a 2 x 2
    input is left, which IREE 3.13's quantized convolution cannot compile, docs/iree.md) and
    quantize_static's model of it."""
    import iree_models

    logging.disable(logging.WARNING)
    float_path = tmp_path / f"{kind}.float.onnx"
    build = {"mobilenet": lambda p: iree_models.mobilenet(p, 64, 0.25, 10), "resnet": lambda p: iree_models.resnet(p, 64, 10, blocks=1),
             "mobilenetv3": lambda p: iree_models.mobilenet_v3(p, 64, 0.5, 10),
             "mobilenet-160": lambda p: iree_models.mobilenet(p, 160, 0.75, 10)}[kind]  # fmt: skip
    build(float_path)
    size = SIZES.get(kind, 64)
    path = iree_models.quantize_static_file(float_path, tmp_path / f"{kind}.onnx", (1, 3, size, size), per_channel=per_channel,
                                            activations=activations, quant_format=fmt)  # fmt: skip
    return float_path, path


def layer_steps(got: list, want: list, names: list) -> dict:
    """Per requantized tensor: (fraction of elements one step off, fraction more than one off)."""
    out = {}
    for name, g, w in zip(names, got, want):
        if w.dtype.kind in "iu":
            g = g.view(w.dtype)  # IREE's runtime returns a ui8 result as int8
            assert g.shape == w.shape, name
            d = np.abs(g.astype(np.int64) - w.astype(np.int64))
            out[name] = (float(np.mean(d == 1)), float(np.mean(d > 1)))
    return out


# (model, format, per channel, activations) -> the largest fraction of a requantized tensor's
# elements one step off / more than one step off onnxruntime's, measured (docs/semantics.md).
# MobileNetV2 in QOperator form (per channel, uint8) is not repeated here: MobileNetV3's covers
# its ops and more, and bench/models.py compiles and runs it (mobilenet-qop, full mode).
# Measured: 0 and 0 in every case (every requantized tensor bit for bit onnxruntime's); the bounds
# leave room for f32 sums taken in another order on another CPU.
CNN_CASES = {
    ("resnet", "QOperator", False, "int8"): (0.01, 0.001),
    ("mobilenet", "QDQ", True, "uint8"): (0.01, 0.001),
    ("mobilenetv3", "QOperator", True, "uint8"): (0.01, 0.001),  # QLinearSigmoid, QLinearMul; HardSwish in float
}
SIZES = {"mobilenet-160": 160}  # input height and width (else 64)


@needs_iree
@pytest.mark.parametrize("case", list(CNN_CASES), ids=lambda c: "-".join(map(str, c)))
def test_cnn_per_layer(tmp_path, case):
    """quantize_static's CNN through dequant-iree: each requantized tensor against onnxruntime's
    (its integer kernels: QLinearConv, or the QDQ graph fused into them), and the output no
    further from the float model than onnxruntime's. In QDQ form also test_iree.py's whole-model
    checks (its QDQ MobileNet is this one): each QDQ Conv dq.qdq_conv_matmuls rewrites for this
    host is one dispatch of dq's int8 kernel (a depthwise one, of its depthwise kernel), and the
    output no further from the QDQ graph as written than onnxruntime's fused kernels'."""
    from dequant import iree as stage
    from dequant import qdq_conv_matmuls
    from dequant.passes.target_features import cpu_tags

    kind, fmt, per_channel, activations = case
    float_path, path = quantized_cnn(tmp_path, kind, fmt, per_channel, activations)
    if fmt == "QDQ":
        convs = qdq_conv_matmuls.rewrite(onnx.load(str(path)), cpu_tags("host")[0])[1]
        staged = stage.prepare(stage.import_onnx(str(path), "llvm-cpu"))
        assert staged.count("entry_points = [@dq_matmul") + staged.count("entry_points = [@dq_depthwise") == convs
    layers = tmp_path / "layers.onnx"
    names = with_layer_outputs(path, layers)
    x = np.random.default_rng(1).standard_normal((1, 3, SIZES.get(kind, 64), SIZES.get(kind, 64))).astype(np.float32)
    got = run_iree(stage.compile_onnx(layers), onnx.load(str(layers)).graph.name, x)
    want = session(onnx.load(str(layers))).run(names, {"x": x})
    steps = layer_steps(got, want, names)
    one, more = CNN_CASES[case]
    worst = max(v[0] for v in steps.values()), max(v[1] for v in steps.values())
    print(f"{case}: {len(steps)} requantized tensors, worst one step {worst[0]:.4f}, more {worst[1]:.4f}")  # -s shows it
    assert worst[0] <= one and worst[1] <= more, f"per layer (one step, more): worst {worst}; {steps}"
    refs = [("the float model", session(onnx.load(str(float_path))).run(None, {"x": x})[0], 1.05)]
    if fmt == "QDQ":
        refs.append(("the QDQ graph as written", session(onnx.load(str(path)), optimized=False).run(None, {"x": x})[0], 1.0))
    for what, ref, slack in refs:
        err = lambda y: float(np.abs(y - ref).max() / np.abs(ref).max())  # noqa: E731
        assert err(got[0]) <= err(want[0]) * slack + 1e-6, f"iree+dq {err(got[0]):.3e}, onnxruntime {err(want[0]):.3e} from {what}"


@needs_iree
def test_residual_adds_in_the_epilogue(tmp_path):
    """quantize_static's MobileNetV2-style CNN at 160 x 160 (each 1 x 1 projection dq's integer
    MatMul): each of its 10 residual Adds, Q(DQ(codes) + DQ(other codes)), is computed in the
    projection's kernel epilogue (passes/qdq_matmul.py's `residual`), for the host (VNNI or AMX)
    and for haswell (the AVX2 body), the output of both bit for bit the same model's for the host
    with every requantized tensor a graph output too (which keeps each Add apart: the kernel's own
    codes have another reader; that route is held to onnxruntime per layer above). (Against the
    float model this random-weight net at this size lands further than onnxruntime's either way:
    the two routes' rare one-step differences, there before any Add, compound.)"""
    from dequant import iree as stage
    from dequant.passes.target_features import host_has_avx2

    _, path = quantized_cnn(tmp_path, "mobilenet-160", "QDQ", True, "uint8")
    model = onnx.load(str(path))
    made = {o: n.op_type for n in model.graph.node for o in n.output}
    adds = sum(n.op_type == "Add" and [made.get(v) for v in n.input] == ["DequantizeLinear"] * 2 for n in model.graph.node)
    layers = tmp_path / "layers.onnx"
    with_layer_outputs(path, layers)
    assert "_ru8u8" not in stage.prepare(stage.import_onnx(str(layers), "llvm-cpu"))
    x = np.random.default_rng(1).standard_normal((1, 3, 160, 160)).astype(np.float32)
    apart = run_iree(stage.compile_onnx(layers), onnx.load(str(layers)).graph.name, x)[0]
    for cpu in ["host", *(["haswell"] if host_has_avx2() else [])]:
        staged = stage.run_stage(stage.import_onnx(str(path), "llvm-cpu", cpu), cpu=cpu)[0]
        body = "avx2s_" if cpu == "haswell" else ""  # AVX2: the sign-split form (per-channel int8 weights); the host's: VNNI or AMX
        assert adds == 10 == len(re.findall(rf"entry_points = \[@dq_matmul_qdq_{body}\w*_ru8u8\w*::", staged)), cpu
        flags = () if cpu == "host" else ("--iree-llvmcpu-target-cpu=haswell",)
        got = run_iree(stage.compile_onnx(str(path), extra_args=flags), model.graph.name, x)[0]
        np.testing.assert_array_equal(got, apart, err_msg=cpu)


@needs_iree
@pytest.mark.parametrize("fmt", ["dynamic", "QOperator"])
def test_transformer_block(tmp_path, fmt):
    """A BERT-style block by quantize_dynamic (DynamicQuantizeLinear + MatMulInteger: dq's integer
    kernel on an AVX2 or AVX-512 VNNI host, docs/semantics.md#dynamic-int8-matmuls)
    or quantize_static in QOperator format (QLinearMatMul, QLinearSoftmax, ...) through
    dequant-iree, against onnxruntime on the same model."""
    import iree_models

    from dequant import iree as stage

    logging.disable(logging.WARNING)
    float_path = iree_models.transformer_block(tmp_path / "f.onnx", 16, 64, 4, 128)
    if fmt == "dynamic":
        path = iree_models.quantize_dynamic_file(float_path, tmp_path / "q.onnx")
    else:
        path = iree_models.quantize_static_file(float_path, tmp_path / "q.onnx", (1, 16, 64), quant_format="QOperator")
    x = np.random.default_rng(2).standard_normal((1, 16, 64)).astype(np.float32)
    got = run_iree(stage.compile_onnx(path), onnx.load(str(path)).graph.name, x)[0]
    want = session(onnx.load(str(path))).run(None, {"x": x})[0]
    ref = session(onnx.load(str(float_path))).run(None, {"x": x})[0]
    err = lambda y: float(np.abs(y - ref).max() / np.abs(ref).max())  # noqa: E731
    assert float(np.abs(got - want).max() / np.abs(want).max()) <= TRANSFORMER_AGREEMENT[fmt]
    assert err(got) <= err(want) * 1.05 + 1e-6


# measured: 2.1e-7 and 1.5e-7 (f32 sums in another order)
TRANSFORMER_AGREEMENT = {"dynamic": 1e-5, "QOperator": 1e-5}
