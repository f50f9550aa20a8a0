"""QDQ convolutions in float for IREE's CPU backend (python/qdq_convs.py): the rewritten model
computes what the QDQ graph computes, bit for bit, against onnxruntime running the original QDQ
graph as written (graph optimizations off: dequantize, float Conv, quantize); which nodes it
takes and which it leaves; the model through dequant-iree against the same reference.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import iree_models  # noqa: E402

from dequant import qdq_convs  # noqa: E402



def exact(model, x: np.ndarray) -> np.ndarray:
    """onnxruntime on the graph as written (no QDQ fusion into integer kernels)."""
    return onnxruntime_reference.session(model).run(None, {"x": x})[0]


def rewritten(path):
    model = onnx.load(str(path))
    assert qdq_convs.applies(model)
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    out, folded, pairs = qdq_convs.rewrite(copy)
    return model, out, folded, pairs


def inputs(x_scale: float, shape) -> list:
    """x drawn normal, large (most codes saturate), and on the half-way points of x's scale
    (round half to even decides them)."""
    rng = np.random.default_rng(3)
    half = ((rng.integers(-140, 140, shape) + 0.5) * np.float32(x_scale)).astype(np.float32)
    return [rng.standard_normal(shape).astype(np.float32), (rng.standard_normal(shape) * 1e3).astype(np.float32), half]


def x_scale(model) -> float:
    q = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "x")
    return float(next(onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.name == q.input[1]))


CNNS = {
    "block-uint8-per-channel": lambda d: iree_models.qdq_conv_model(d / "m.onnx", d),
    "mobilenetv3-uint8-per-channel": lambda d: iree_models.quantize_static_file(iree_models.mobilenet_v3(d / "f.onnx", 64, 0.5, 10), d / "m.onnx", (1, 3, 64, 64)),
    "resnet-int8-per-tensor": lambda d: iree_models.quantize_static_file(iree_models.resnet(d / "f.onnx", 64, 10), d / "m.onnx", (1, 3, 64, 64),
                                                                           per_channel=False, activations="int8"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CNNS))
def test_rewrite_computes_the_qdq_graph(tmp_path, name):
    """Every Conv's weights and bias f32 constants, every QDQ pair between convolutions f32
    arithmetic; onnxruntime on the rewritten model equals it on the QDQ graph, bit for bit, on
    ordinary, saturating and half-way inputs (the Convs are the same f32 Convs on the same values)."""
    logging.disable(logging.WARNING)
    model, out, folded, pairs = rewritten(CNNS[name](tmp_path))
    convs = [n for n in out.graph.node if n.op_type == "Conv"]
    assert folded >= len(convs) and pairs >= len(convs)
    dq_outputs = {o for n in out.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    assert not any(v in dq_outputs for c in convs for v in c.input), "a Conv still reads a DequantizeLinear"
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    for x in inputs(x_scale(model), shape):
        np.testing.assert_array_equal(exact(out, x), exact(model, x))


def test_models_without_qdq_convolutions_are_left_alone(tmp_path):
    """A QDQ MatMul model (dq's integer kernel takes it): no convolution, but pairs not read by a
    MatMul (after the first MatMul's bias Add, the output's); a float CNN: nothing to rewrite."""
    logging.disable(logging.WARNING)
    model = onnx.load(iree_models.quantize_static_model(tmp_path / "mm.onnx", tmp_path, 32, 16))
    assert not qdq_convs.applies(model) and qdq_convs.has_pairs(model)
    model = onnx.load(iree_models.resnet(tmp_path / "f.onnx", 64, 10))
    assert not qdq_convs.applies(model) and not qdq_convs.has_pairs(model)


def test_transformer_pairs_compute_the_qdq_graph(tmp_path):
    """quantize_static's transformer block (no convolution): its pairs not read by a MatMul are
    f32 arithmetic (the softmax's input, the residual Adds', the GELU's, those after each
    MatMul), its quantized scalar constants read by arithmetic alone (the attention's scale)
    their f32 values, every MatMul still reads DequantizeLinears (dq's kernel or IREE's integer
    route), and onnxruntime on the rewritten model equals it on the QDQ graph, bit for bit, on
    ordinary, saturating and half-way inputs."""
    logging.disable(logging.WARNING)
    float_path = iree_models.transformer_block(tmp_path / "f.onnx", 32, 64, 2, 128)
    model = onnx.load(iree_models.quantize_static_file(float_path, tmp_path / "m.onnx", (1, 32, 64)))
    assert not qdq_convs.applies(model) and qdq_convs.has_pairs(model)
    sizes = {t.name: int(np.prod(t.dims)) for t in model.graph.initializer}
    readers = {}
    for n in model.graph.node:
        for v in n.input:
            readers.setdefault(v, []).append(n.op_type)
    scalars = [n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear" and sizes.get(n.input[0]) == 1
               and set(readers[n.output[0]]) <= {"Mul", "Div", "Add", "Sub", "Pow"}]  # fmt: skip
    out, folded, pairs = rewritten_model(model)[1:]
    producers = {o: n for n in out.graph.node for o in n.output}
    matmuls = [n for n in out.graph.node if n.op_type == "MatMul"]
    assert folded == len(scalars) >= 1 and pairs >= len(matmuls) == 8
    assert not any(v in scalars for n in out.graph.node for v in n.input), "a scalar constant still dequantized at run time"
    # each folded value is onnx.reference's DequantizeLinear of the constant, bit for bit
    values = {t.name: onnx.numpy_helper.to_array(t) for t in out.graph.initializer}
    original = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for dq in (n for n in model.graph.node if n.output[0] in scalars):
        (want,) = ReferenceEvaluator(onnx.helper.make_node("DequantizeLinear", list(dq.input), ["y"])).run(None, {v: original[v] for v in dq.input})
        (name,) = [v for v in values if v.startswith(f"{dq.output[0]}_f32")]
        assert values[name].tobytes() == np.asarray(want, np.float32).tobytes()
    assert all(producers[v].op_type == "DequantizeLinear" for n in matmuls for v in n.input)
    assert "Softmax" in {n.op_type for n in out.graph.node if any(producers.get(v) is not None and producers[v].op_type == "Mul" for v in n.input)}
    for x in inputs(x_scale(model), [1, 32, 64]):
        np.testing.assert_array_equal(exact(out, x), exact(model, x))
    # a scalar read by something else too (here a Reshape) stays a DequantizeLinear
    model.graph.node.append(onnx.helper.make_node("Reshape", [scalars[0], "to_one"], ["scalar_too"]))
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "to_one"))
    out = rewritten_model(model)[1]
    assert any(n.op_type == "DequantizeLinear" and n.output[0] == scalars[0] for n in out.graph.node)


def test_pairs_feeding_a_matmul_and_other_quantizers_are_kept(tmp_path):
    """The classifier's Gemm keeps its DequantizeLinear inputs (IREE's integer route or dq's
    kernel), and a pair whose scales differ, or a QuantizeLinear with output_dtype, is not taken."""
    logging.disable(logging.WARNING)
    model, out, _, _ = rewritten(CNNS["mobilenetv3-uint8-per-channel"](tmp_path))
    gemm = next(n for n in out.graph.node if n.op_type == "Gemm")
    producers = {o: n for n in out.graph.node for o in n.output}
    assert [producers[v].op_type for v in gemm.input[:2]] == ["DequantizeLinear", "DequantizeLinear"]
    # the first pair's DequantizeLinear given another scale: left as it is
    q = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "x")
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] == q.output[0])
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.float32(0.5), "other_scale"))
    dq.input[1] = "other_scale"
    _, out, _, _ = rewritten_model(model)
    assert any(n is not None and n.op_type == "DequantizeLinear" and n.input[0] == q.output[0] for n in out.graph.node)


def rewritten_model(model):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return (model, *qdq_convs.rewrite(copy))


@needs_iree
def test_qdq_convolutions_through_dequant_iree(tmp_path):
    """The QDQ CNN block through dequant-iree (float convolutions, im2col): each output within one
    quantization step of the QDQ graph as written, and equal to it but for a few elements (IREE
    sums each f32 convolution in another order, which can move a requantization across a
    rounding boundary)."""
    import iree.runtime as rt

    from dequant import iree as stage

    logging.disable(logging.WARNING)
    path = iree_models.qdq_conv_model(tmp_path / "m.onnx", tmp_path)
    text = stage.prepare(stage.import_onnx(path, "llvm-cpu"))
    no_propagation = "--iree-global-opt-propagate-transposes=false"
    assert "onnx.Clip" in text and "--iree-global-opt-use-im2col-for-convs" in stage.compile_flags(text) and no_propagation not in stage.compile_flags(text)
    mm = stage.compile_flags(stage.prepare(stage.import_onnx(iree_models.quantize_static_model(tmp_path / "mm.onnx", tmp_path, 32, 16))))
    assert "--iree-global-opt-use-im2col-for-convs" not in mm and no_propagation in mm  # no convolution: docs/iree.md#transpose-propagation
    model = onnx.load(path)
    y_scale = float(onnx.numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == model.graph.node[-1].input[1])))
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, stage.compile_onnx(path)))
    for x in inputs(x_scale(model), (1, 3, 16, 16)):
        got, want = np.asarray(ctx.modules.module["g"](x)), exact(model, x)
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= y_scale * 1.0001
        assert np.mean(got != want) <= 0.01


@pytest.mark.parametrize("change", ["axis out of range", "scale of another length", "no inputs"])
def test_broken_dequantize_is_left_for_the_importer(tmp_path, change):
    """A weight DequantizeLinear that breaks its spec's rules is not folded (and raises nothing
    here): it reaches IREE's importer as it is, whose error the stage reports."""
    logging.disable(logging.WARNING)
    model = onnx.load(iree_models.qdq_conv_model(tmp_path / "m.onnx", tmp_path))
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    dq = next(n for n in model.graph.node if n.output and n.output[0] == conv.input[1])
    if change == "axis out of range":
        next(a for a in dq.attribute if a.name == "axis").i = 7
    elif change == "scale of another length":
        model.graph.initializer.append(onnx.numpy_helper.from_array(np.full(5, 0.01, np.float32), "short_scale"))
        dq.input[1] = "short_scale"
    else:
        del dq.input[:]
    _, out, _, _ = rewritten_model(model)
    assert any(n.op_type == "DequantizeLinear" and list(n.output) == list(dq.output) for n in out.graph.node)
