"""`dequant.import_onnx` and `dequant-import-onnx` on models quantized by onnxruntime and on
hand-made ones.

Every imported function is compiled (`dequant.jit`), run on random arguments and compared bit for
bit (f32) with onnxruntime running the same node alone: a one-node model with the node's opset,
its initializers, and its other inputs as graph inputs. The reference is onnxruntime, never the
code under test.

Models: a float Conv -> Reshape -> Gemm -> MatMul -> Add network, quantized by
`onnxruntime.quantization.quantize_static` (QDQ: per-tensor, per-channel, 16-bit activations,
block-wise through `extra_options={"BlockSize": ...}` with int8, int4 and uint4 weights) and by
`quantize_dynamic` (which writes DynamicQuantizeLinear/MatMulInteger/ConvInteger and no
DequantizeLinear: the import then has no function and lists every node).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zlib

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from mlir import ir
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

import dequant
import onnxruntime_reference
from dequant.dialect.elements import ELEMENTS as ELEMS

FOUR_BIT = ("i4", "ui4", "f4E2M1FN")
@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# ---------------------------------------------------------------------------------------------
# References and helpers


def reference_run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """onnxruntime; ONNX's reference evaluator where onnxruntime has no kernel (float4e2m1)."""
    try:
        return onnxruntime_reference.run(model, feeds)
    except ort.capi.onnxruntime_pybind11_state.NotImplemented:
        return ReferenceEvaluator(model).run(None, feeds)


def one_node_model(model: onnx.ModelProto, node: onnx.NodeProto) -> onnx.ModelProto:
    """The node alone: same opsets and IR version, its initializers and Constant nodes, its other
    inputs as graph inputs."""
    graph = onnx.shape_inference.infer_shapes(model).graph
    infos = {v.name: v for v in [*graph.input, *graph.value_info, *graph.output]}
    inits = {t.name: t for t in graph.initializer}
    constants = {n.output[0]: n for n in graph.node if n.op_type == "Constant"}
    names = [n for n in node.input if n]
    inputs = [infos[n] for n in names if n not in inits and n not in constants]
    initializers = [inits[n] for n in names if n in inits]
    out = infos.get(node.output[0]) or helper.make_empty_tensor_value_info(node.output[0])
    nodes = [constants[n] for n in names if n in constants] + [node]
    one = helper.make_graph(nodes, "one_node", inputs, [out], initializer=initializers)
    return helper.make_model(one, opset_imports=model.opset_import, ir_version=model.ir_version)


def random_array(rng, elem: str, shape) -> np.ndarray:
    """Values over the whole range of an integer type; positive finite values for a float one."""
    dtype = np.dtype(ELEMS[elem].dtype)
    if ELEMS[elem].kind == "int":
        info = ml_dtypes.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max), size=shape, endpoint=True).astype(dtype)
    return rng.uniform(0.01, 2.0, size=shape).astype(dtype)


def functions(module: ir.Module) -> dict:
    """Imported functions by name: (argument types, the dq op)."""
    out = {}
    for op in module.body.operations:
        if op.operation.name == "func.func":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            dq = [o for o in op.regions[0].blocks[0].operations if o.operation.name == "dq.onnx_dequantize_linear"]
            assert len(dq) == 1, f"{op.attributes['sym_name']}: expected one dq.onnx_dequantize_linear"
            out[ir.StringAttr(op.attributes["sym_name"]).value] = (list(ftype.inputs), dq[0].operation)
    return out


def skipped(module: ir.Module) -> list[str]:
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(module.operation.attributes["dq.skipped_nodes"])]


def node_name(op) -> str:
    """The ONNX node name the importer put in the op's location."""
    loc = op.location
    assert loc.is_a_name(), f"expected a name location, got {loc}"
    return loc.name_str


def function_text(module_text: str, name: str) -> str:
    """The module with only function `name` (so that one function's failure does not hide others)."""
    with dequant.context(), ir.Location.unknown():
        module = ir.Module.parse(module_text)
        for op in list(module.body.operations):
            if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value != name:
                op.operation.erase()
        return str(module)


def check_against_onnxruntime(model: onnx.ModelProto, rng, dyn: int = 5) -> dict:
    """Import `model`, run each function and its node alone in onnxruntime, compare bit for bit.
    Any mismatch or failure is an AssertionError naming the function; returns {} (no failures)."""
    module = dequant.import_onnx(model)
    text = str(module)
    graph_nodes = enumerate(model.graph.node)
    nodes = {n.name or f"DequantizeLinear_{i}": n for i, n in graph_nodes if n.op_type == "DequantizeLinear"}
    initializers = {t.name for t in model.graph.initializer}
    funcs = functions(module)
    assert len(funcs) == len(nodes)
    failures = {}
    for name, (arg_types, op) in funcs.items():
        node = nodes[node_name(op)]
        constants = [
            (str(ir.ShapedType(v.type).element_type), int(np.prod(ir.ShapedType(v.type).shape)))
            for v in op.operands
            if not isinstance(v, ir.BlockArgument)
        ]
        args = []
        for t in arg_types:
            shaped = ir.RankedTensorType(t)
            shape = [dyn if shaped.is_dynamic_dim(i) else shaped.shape[i] for i in range(shaped.rank)]
            args.append(random_array(rng, str(shaped.element_type), shape))
        constant = initializers | {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
        feeds = dict(zip([n for n in node.input if n and n not in constant], args))
        (want,) = reference_run(one_node_model(model, node), feeds)
        try:
            got = dequant.jit(function_text(text, name), name)(*args)
            assert (got.dtype, got.shape) == (want.dtype, want.shape), f"got {got.dtype}{got.shape}"
            unsigned = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
            nan = np.isnan(got.astype(np.float32))
            assert np.array_equal(nan, np.isnan(want.astype(np.float32))), "NaN in one result only"
            bad = (got.view(unsigned) != want.view(unsigned)) & ~nan  # a NaN matches any NaN
            assert not bad.any(), f"{int(bad.sum())} of {bad.size} differ, first at {np.argwhere(bad)[0]}"
        except Exception as e:
            raise AssertionError(f"function {name} (node {node.name}, constants {constants}): {e}") from e
    return failures


def expect_ok(failures: dict) -> None:
    """Every function matched onnxruntime."""
    assert not failures


# ---------------------------------------------------------------------------------------------
# Models quantized by onnxruntime


def float_model(rng) -> onnx.ModelProto:
    """x[1,3,8,8] -> Conv(8 filters, 3x3) -> Reshape [1,512] -> Gemm(64, transB) -> MatMul(32) -> Add."""
    init = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.5, "conv.w"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "conv.b"),
        numpy_helper.from_array(np.array([1, 512], np.int64), "shape"),
        numpy_helper.from_array(rng.standard_normal((64, 512)).astype(np.float32) * 0.05, "gemm.w"),
        numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "gemm.b"),
        numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32) * 0.1, "fc.w"),
        numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "fc.b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c", "shape"], ["r"], name="flatten"),
        helper.make_node("Gemm", ["r", "gemm.w", "gemm.b"], ["g"], name="gemm", transB=1),
        helper.make_node("MatMul", ["g", "fc.w"], ["m"], name="fc/matmul"),
        helper.make_node("Add", ["m", "fc.b"], ["y"], name="fc/add"),
    ]
    graph = helper.make_graph(
        nodes,
        "float_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])],
        initializer=init,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


class Calibration(CalibrationDataReader):
    def __init__(self, rng, n: int = 4):
        self.batches = iter([{"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.batches, None)


STATIC = {
    "per-tensor": dict(per_channel=False),
    "per-channel": dict(per_channel=True),
    "per-channel-uint8-activations": dict(per_channel=True, activation_type=QuantType.QUInt8),
    "int16-activations": dict(per_channel=True, activation_type=QuantType.QInt16, weight_type=QuantType.QInt8),
    "blocked-int8": dict(per_channel=True, op_types_to_quantize=["MatMul"], extra_options={"BlockSize": 32}),
    "blocked-int4": dict(
        per_channel=True, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt4, extra_options={"BlockSize": 32}
    ),
    "blocked-uint4": dict(
        per_channel=True, op_types_to_quantize=["MatMul"], weight_type=QuantType.QUInt4, extra_options={"BlockSize": 16}
    ),
}


@pytest.fixture(scope="module")
def float_path(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("float") / "float_net.onnx")
    onnx.save(float_model(np.random.default_rng(1)), path)
    return path


def quantized(float_path: str, tmp_path, options: dict) -> onnx.ModelProto:
    """quantize_static (QDQ) of the float model (a path each time: quantize_static changes a ModelProto
    it is given), calibrated on four random inputs."""
    out = str(tmp_path / "quantized.onnx")
    try:
        quantize_static(float_path, out, Calibration(np.random.default_rng(2)), quant_format=QuantFormat.QDQ, **options)
    except (ValueError, NotImplementedError, TypeError) as e:  # an older onnxruntime without this option
        pytest.skip(f"onnxruntime {ort.__version__} cannot quantize with {options}: {e}")
    return onnx.load(out)


@pytest.mark.parametrize("variant", list(STATIC))
def test_quantize_static(variant, float_path, tmp_path, rng):
    model = quantized(float_path, tmp_path, STATIC[variant])
    dq_nodes = [n for n in model.graph.node if n.op_type == "DequantizeLinear"]
    assert dq_nodes, "quantize_static wrote no DequantizeLinear"
    module = dequant.import_onnx(model)
    funcs = functions(module)
    assert sorted(funcs) == sorted(re.sub(r"[^A-Za-z0-9_]", "_", n.name) for n in dq_nodes)
    assert skipped(module) == [f"{n.op_type}:{n.name}" for n in model.graph.node if n.op_type != "DequantizeLinear"]
    weights = {k: v for k, v in funcs.items() if not v[0]}  # weights: every input an initializer
    activations = {k: v for k, v in funcs.items() if v[0]}
    assert weights and activations
    granularity = {
        "per-tensor": lambda ops: all("axis" not in op.attributes for op in ops),
        "per-channel": lambda ops: any("axis" in op.attributes for op in ops),
        "blocked": lambda ops: any("block_size" in op.attributes for op in ops),
        "int16": lambda ops: any(str(ir.ShapedType(op.operands[0].type).element_type) == "i16" for op in ops),
    }
    key = next(k for k in granularity if variant.startswith(k))
    assert granularity[key]([op for _, op in funcs.values()]), f"{variant}: the imported ops do not show it"
    if "4" not in variant:  # this model's 4-bit weights pack into fewer than 1024 bytes: dense<...>
        assert "dense_resource<" in str(module), "large weights should be dense_resource blobs"
    expect_ok(check_against_onnxruntime(model, rng))


@pytest.mark.parametrize("variant", ["blocked-int4", "blocked-uint4"])
def test_blocked_4bit_weights_imported_values(variant, float_path, tmp_path):
    """Each constant operand is the node's initializer; a 4-bit one stays packed: `dq.unpack` of an
    i8 constant holding the bytes onnx's own packing gives (two values per byte, never unpacked)."""
    model = quantized(float_path, tmp_path, STATIC[variant])
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes = {n.name: n for n in model.graph.node}
    module = dequant.import_onnx(model)
    seen = set()
    for _, op in functions(module).values():
        for value, name in zip(op.operands, nodes[node_name(op)].input):
            if isinstance(value, ir.BlockArgument):
                assert name not in inits
                continue
            a = inits[name]
            elem = _elem_of(a.dtype)
            seen.add(elem)
            if elem in FOUR_BIT:
                assert value.owner.name == "dq.unpack" and str(value.type).endswith(f"x{elem}>")
                value = value.owner.operands[0]
                packed = np.frombuffer(numpy_helper.from_array(a).raw_data, np.int8)  # onnx's packing
                assert ir.RankedTensorType(value.type).shape == [packed.size] == [-(-a.size // 2)]
                a = packed
            attr = value.owner.attributes["value"]
            with module.context:
                expected = ir.DenseElementsAttr.get(np.asarray(a).copy(order="C"), type=ir.RankedTensorType(value.type).element_type)
            if a.size <= 1024:
                assert attr == expected, f"{name}: {str(attr)[:80]} is not {str(expected)[:80]}"
            else:
                assert str(attr) == f"dense_resource<{re.sub(r'[^A-Za-z0-9_]', '_', name)}> : {value.type}"
    assert {"i4", "ui4"} & seen


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_dynamic(per_channel, float_path, tmp_path, rng):
    out = str(tmp_path / "dynamic.onnx")
    quantize_dynamic(float_path, out, per_channel=per_channel, weight_type=QuantType.QInt8)
    model = onnx.load(out)
    module = dequant.import_onnx(model)
    dq_nodes = [n for n in model.graph.node if n.op_type == "DequantizeLinear"]
    assert len(functions(module)) == len(dq_nodes)
    assert len(skipped(module)) == len(model.graph.node) - len(dq_nodes)
    if not dq_nodes:  # this onnxruntime writes MatMulInteger/ConvInteger: nothing to import
        names = [f"{n.op_type}:{n.name or f'{n.op_type}_{i}'}" for i, n in enumerate(model.graph.node)]
        assert skipped(module) == names
        assert any(s.startswith("DynamicQuantizeLinear:") for s in skipped(module))
    else:
        expect_ok(check_against_onnxruntime(model, rng))


# ---------------------------------------------------------------------------------------------
# Hand-made models: types, opsets, attributes, names


def dq_model(inputs, initializers, nodes, opset: int, outputs=None, ir_version: int | None = None) -> onnx.ModelProto:
    dq_outputs = [n.output[0] for n in nodes if n.op_type == "DequantizeLinear"]
    outputs = outputs or [helper.make_empty_tensor_value_info(o) for o in dq_outputs]
    graph = helper.make_graph(nodes, "dq", inputs, outputs, initializer=initializers)
    kwargs = {"ir_version": ir_version} if ir_version else {"ir_version": 10 if opset < 23 else 11}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kwargs)


# x (initializer) of every T1 type: (numpy dtype, opset where onnxruntime runs it)
STORAGE = {
    "int8": (np.int8, 21),
    "uint8": (np.uint8, 21),
    "int16": (np.int16, 21),
    "uint16": (np.uint16, 21),
    "int32": (np.int32, 21),
    "int4": (ml_dtypes.int4, 21),
    "uint4": (ml_dtypes.uint4, 21),
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 21),
    "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 21),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 21),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 21),
    "float4_e2m1fn": (ml_dtypes.float4_e2m1fn, 23),
}


def random_storage(rng, dtype, shape) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" or dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        info = ml_dtypes.iinfo(dtype)
        low, high = (-(2**24), 2**24) if dtype == np.int32 else (int(info.min), int(info.max))
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    bits = 4 if dtype == np.dtype(ml_dtypes.float4_e2m1fn) else 8
    codes = rng.integers(0, 2**bits, size=shape).astype(np.uint8)
    if bits == 4:
        return codes.view(ml_dtypes.float4_e2m1fn)
    return codes.view(dtype)


@pytest.mark.parametrize("size", [6, 1500], ids=["dense", "dense_resource"])
@pytest.mark.parametrize("storage", list(STORAGE))
def test_initializer_types(storage, size, rng):
    """x of each T1 type as an initializer, small (dense) and large (dense_resource, 4-bit: dense),
    per-axis scale and zero point, compared with onnxruntime."""
    dtype, opset = STORAGE[storage]
    shape = (3, size // 3)
    x = random_storage(rng, dtype, shape)
    minifloat = ELEMS[_elem_of(dtype)].kind == "float"
    inits = [numpy_helper.from_array(x, "x"), numpy_helper.from_array(rng.uniform(0.1, 2, 3).astype(np.float32), "s")]
    inputs = ["x", "s"]
    if not minifloat and np.dtype(dtype) != np.int32:
        inits.append(numpy_helper.from_array(random_storage(rng, dtype, (3,)), "z"))
        inputs.append("z")
    node = helper.make_node("DequantizeLinear", inputs, ["y"], name=f"dq_{storage}", axis=0)
    model = dq_model([], inits, [node], opset)
    module = dequant.import_onnx(model)
    elem = ir.RankedTensorType(functions(module)[f"dq_{storage}"][1].operands[0].type).element_type
    assert str(elem) == _elem_of(dtype)
    large = "dense_resource<x>" in str(module)
    assert large == (size > 1024 and _elem_of(dtype) not in FOUR_BIT)
    expect_ok(check_against_onnxruntime(model, rng))


def _elem_of(dtype) -> str:
    return next(k for k, e in ELEMS.items() if np.dtype(e.dtype) == np.dtype(dtype))


def test_opset10_per_tensor(rng):
    """Opset 10: no axis; int8 x as a graph input with a dynamic dim, scalar scale and zero point."""
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq10")
    inits = [numpy_helper.from_array(np.float32(0.37), "s"), numpy_helper.from_array(np.int8(-31), "z")]
    x = helper.make_tensor_value_info("x", TensorProto.INT8, ["N", 7])
    model = dq_model([x], inits, [node], 10, ir_version=7)
    module = dequant.import_onnx(model)
    (arg_types, op) = functions(module)["dq10"]
    assert [str(t) for t in arg_types] == ["tensor<?x7xi8>"]
    assert "axis" not in op.attributes and "block_size" not in op.attributes
    expect_ok(check_against_onnxruntime(model, rng, dyn=5))


def test_opset13_default_axis_and_argument_scale(rng):
    """Opset 13 per-axis without an axis attribute (default 1); the scale is a graph input."""
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq13")
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.INT8, [2, 4, 3]),
        helper.make_tensor_value_info("s", TensorProto.FLOAT, [4]),
    ]
    inits = [numpy_helper.from_array(np.array([-3, 0, 5, 127], np.int8), "z")]
    model = dq_model(inputs, inits, [node], 13)
    module = dequant.import_onnx(model)
    (arg_types, op) = functions(module)["dq13"]
    assert [str(t) for t in arg_types] == ["tensor<2x4x3xi8>", "tensor<4xf32>"]
    assert "axis" not in op.attributes  # the dq default is ONNX's: 1
    expect_ok(check_against_onnxruntime(model, rng))


def test_opset23_output_dtype(rng):
    """output_dtype (opset 23) becomes a type attribute; f16 output of an f32 scale."""
    x = numpy_helper.from_array(rng.integers(-128, 128, (4, 64)).astype(np.int8), "x")
    s = numpy_helper.from_array(rng.uniform(0.01, 1, (4, 2)).astype(np.float32), "s")
    node = helper.make_node(
        "DequantizeLinear", ["x", "s"], ["y"], name="dq23", axis=1, block_size=32, output_dtype=TensorProto.FLOAT16
    )
    model = dq_model([], [x, s], [node], 23)
    module = dequant.import_onnx(model)
    (_, op) = functions(module)["dq23"]
    assert str(op.attributes["output_dtype"]) == "f16" and str(op.results[0].type) == "tensor<4x64xf16>"
    assert ir.IntegerAttr(op.attributes["block_size"]).value == 32
    got = dequant.jit(str(module), "dq23")()
    (want,) = onnxruntime_reference.run(model, {})
    # one rounding of the exact product to f16 (docs/semantics.md#arithmetic); onnxruntime rounds its f32 product again
    product = numpy_helper.to_array(x).astype(np.float64) * np.repeat(numpy_helper.to_array(s), 32, axis=1)
    exact = product.astype(np.float16)
    assert np.array_equal(got.view(np.uint16), exact.view(np.uint16))
    assert np.max(np.abs(got.astype(np.float32) - want.astype(np.float32))) <= np.max(np.abs(want)) * 2**-10


def test_constant_node_inputs(rng):
    """Outputs of Constant nodes are constants too; the Constant nodes are listed as skipped."""
    nodes = [
        helper.make_node("Constant", [], ["s"], name="scale", value_float=0.25),
        helper.make_node("Constant", [], ["z"], name="zp", value=numpy_helper.from_array(np.int8(7), "z")),
        helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.INT8, [3, 5])
    model = dq_model([x], [], nodes, 19)
    module = dequant.import_onnx(model)
    (arg_types, _) = functions(module)["dq"]
    assert [str(t) for t in arg_types] == ["tensor<3x5xi8>"]
    assert skipped(module) == ["Constant:scale", "Constant:zp"]
    expect_ok(check_against_onnxruntime(model, rng))


def test_names_sanitized_and_unique():
    s = numpy_helper.from_array(np.float32(0.5), "s")
    x = numpy_helper.from_array(np.arange(4, dtype=np.int8), "x")
    names = ["fc/w.dq", "fc_w_dq", "fc/w:dq", "", "0dq", "fc/w.dq"]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s"], [f"y{i}"], name=n) for i, n in enumerate(names)]
    nodes.insert(3, helper.make_node("Relu", ["y0"], ["r"]))
    nodes.append(helper.make_node("DequantizeLinear", ["x", "s"], ["y9"], name="ms", domain="com.microsoft"))
    model = dq_model([], [x, s], nodes, 19)
    context = dequant.context()
    module = dequant.import_onnx(model, context)
    assert module.context is context
    symbols = list(functions(module))
    assert symbols == ["fc_w_dq", "fc_w_dq_1", "fc_w_dq_2", "DequantizeLinear_4", "_0dq", "fc_w_dq_3"]
    originals = [node_name(op) for _, op in functions(module).values()]
    assert originals == ["fc/w.dq", "fc_w_dq", "fc/w:dq", "DequantizeLinear_4", "0dq", "fc/w.dq"]
    assert skipped(module) == ["Relu:Relu_3", "com.microsoft.DequantizeLinear:ms"]
    for name in symbols:  # every symbol is a C-interface function the JIT finds
        np.testing.assert_array_equal(dequant.jit(str(module), name)(), np.arange(4, dtype=np.float32) * 0.5)


def test_shared_large_initializer_is_one_blob():
    """An initializer read by two nodes is one dense_resource blob."""
    x = numpy_helper.from_array(np.arange(2048, dtype=np.int32).reshape(32, 64) % 251, "w")
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "s1"], ["a"], name="a"),
        helper.make_node("DequantizeLinear", ["w", "s2"], ["b"], name="b"),
    ]
    inits = [x, numpy_helper.from_array(np.float32(2), "s1"), numpy_helper.from_array(np.float32(0.5), "s2")]
    module = dequant.import_onnx(dq_model([], inits, nodes, 21))
    text = str(module)
    assert text.count("dense_resource<w>") == 2 and "dialect_resources" in text
    assert re.search(r"\bw: \"0x", text) and len(re.findall(r": \"0x", text)) == 1
    want = np.arange(2048).reshape(32, 64) % 251
    np.testing.assert_array_equal(dequant.jit(text, "b")(), (want * 0.5).astype(np.float32))


def bad_models():
    """(model, node name, words the error must hold) for models the importer must refuse."""
    inits = {
        "x": numpy_helper.from_array(np.arange(8, dtype=np.int8).reshape(2, 4), "x"),
        "xd": numpy_helper.from_array(np.ones((2, 4)), "xd"),  # float64
        "s": numpy_helper.from_array(np.float32(0.5), "s"),
        "s4": numpy_helper.from_array(np.ones(4, np.float32), "s4"),
    }

    def one(inputs, name, opset, **attrs):
        node = helper.make_node("DequantizeLinear", inputs, ["y"], name=name, **attrs)
        used = [inits[i] for i in inputs if i in inits]
        return dq_model([], used, [node], opset, ir_version=7 if opset < 13 else None)

    negative = dq_model([helper.make_tensor_value_info("xin", TensorProto.INT8, [2, -4])], [inits["s"]],
                        [helper.make_node("DequantizeLinear", ["xin", "s"], ["y"], name="neg")], 21)  # fmt: skip
    huge = dq_model([helper.make_tensor_value_info("xin", TensorProto.INT8, [2**62, 4])], [inits["s"]],
                    [helper.make_node("DequantizeLinear", ["xin", "s"], ["y"], name="huge")], 21)  # fmt: skip
    return {
        "element-type": (one(["xd", "s"], "bad_type", 21), "bad_type", "tensor(double)"),
        "missing-input": (one(["nowhere", "s"], "orphan", 21), "orphan", "'nowhere'"),
        "unknown-attribute": (one(["x", "s"], "attr", 21, scale=2), "attr", "attribute 'scale'"),
        "attribute-type": (one(["x", "s"], "ftype", 21, axis=1.0), "ftype", "INT"),
        "block-size-before-21": (one(["x", "s4"], "b19", 19, block_size=2), "b19", "block_size"),
        "opset10-per-axis": (one(["x", "s4"], "pa10", 10), "pa10", "per-tensor only"),
        "output-dtype": (one(["x", "s"], "od", 23, output_dtype=TensorProto.INT8), "od", "output_dtype INT8"),
        "verifier-axis": (one(["x", "s4"], "axis5", 21, axis=5), "axis5", "axis 5 is out of the accepted range"),
        "verifier-scale-length": (one(["x", "s4"], "len", 21, axis=0), "len", "dim(axis) = 2 elements"),
        "negative-dim": (negative, "neg", "negative dim"),  # found by fuzzing: an MLIR traceback
        "huge-dim": (huge, "huge", "more than 2^60"),  # found by fuzzing: an MLIR assertion killed the process
    }


@pytest.mark.parametrize("case", list(bad_models()))
def test_errors_name_the_node(case):
    model, name, words = bad_models()[case]
    with pytest.raises(ValueError) as e:
        dequant.import_onnx(model)
    message = str(e.value)
    assert message.startswith(f"node '{name}' (DequantizeLinear): "), message
    assert words in message, message


# ---------------------------------------------------------------------------------------------
# The command-line tool


def tool(name: str) -> list[str]:
    """A console script, or `python -m` of its module when the package was installed before it existed."""
    found = shutil.which(name)
    modules = {"dequant-import-onnx": "dequant.onnx_importer", "dequant-opt": "dequant.cli"}
    return [found] if found else [sys.executable, "-m", modules[name]]


def test_cli(float_path, tmp_path):
    model_path = str(tmp_path / "q.onnx")
    onnx.save(quantized(float_path, tmp_path, STATIC["per-channel"]), model_path)
    out = str(tmp_path / "q.mlir")
    r = subprocess.run(tool("dequant-import-onnx") + [model_path, "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^skipped \d+ nodes: QuantizeLinear:", r.stderr, re.M), r.stderr
    text = open(out).read()
    assert text.count("dq.onnx_dequantize_linear") == sum(
        n.op_type == "DequantizeLinear" for n in onnx.load(model_path).graph.node
    )
    r = subprocess.run(tool("dequant-opt") + [out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "dense_resource" in r.stdout
    r = subprocess.run(tool("dequant-import-onnx") + [model_path], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == text


def test_cli_errors(tmp_path):
    model, name, words = bad_models()["verifier-axis"]
    path = str(tmp_path / "bad.onnx")
    onnx.save(model, path)
    r = subprocess.run(tool("dequant-import-onnx") + [path], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"dequant-import-onnx: error: node '{name}' (DequantizeLinear): "), r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr
    for broken in [str(tmp_path / "absent.onnx"), __file__]:  # no file; not a model
        r = subprocess.run(tool("dequant-import-onnx") + [broken], capture_output=True, text=True)
        assert r.returncode == 1 and r.stderr.startswith("dequant-import-onnx: error: "), r.stderr
        assert "Traceback" not in r.stderr


def test_package_without_onnx(tmp_path):
    """The package imports without onnx; import_onnx then says what to install."""
    code = (
        "import sys; sys.modules['onnx'] = None\n"
        "import dequant; dequant.context()\n"
        "try:\n    dequant.import_onnx('m.onnx')\nexcept ImportError as e:\n    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pip install 'dequant[onnx]'" in r.stdout


def test_importer_module_and_function_do_not_clash(tmp_path):
    """The importer module (dequant.onnx_importer) and the function (dequant.import_onnx) have
    different names: importing the module leaves the function in place."""
    path = str(tmp_path / "m.onnx")
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq")
    inits = [numpy_helper.from_array(np.int8([1, 2]), "x"), numpy_helper.from_array(np.float32(0.5), "s")]
    onnx.save(dq_model([], inits, [node], 19), path)
    code = f"import dequant.onnx_importer, dequant\nprint(dequant.import_onnx({path!r}).operation.name)\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "builtin.module", r.stderr
