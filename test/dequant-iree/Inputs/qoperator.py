"""Writes one QOperator or dynamic int8 node as a model (onnx.helper, from the specs) for the lit
tests of its rewrite (python/formats/qoperator.py): python qoperator.py OUT.onnx OP, OP one of
QLinearConv, QLinearMatMul, QGemm, QLinearAdd, QLinearConcat, QLinearGlobalAveragePool,
DynamicQuantizeMatMul, MatMulIntegerToFloat, MatMulInteger, ConvInteger. uint8 activations,
int8 weights per output channel where the op takes them, as quantize_static writes them."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

path, op = sys.argv[1], sys.argv[2]
U8, I8 = np.uint8, np.int8
rng = np.random.default_rng(0)
w_conv = rng.integers(-127, 128, (8, 4, 3, 3)).astype(I8)
w_mm = rng.integers(-127, 128, (16, 8)).astype(I8)
scales8 = np.linspace(0.01, 0.02, 8, dtype=np.float32)
# op -> (its inputs (name -> constant array, or None for a graph input), x's shape, y's shape and
# element type, domain, attributes)
NODES = {
    "QLinearConv": ({"x": None, "sx": np.float32(0.02), "zx": np.array(128, U8), "w": w_conv, "sw": scales8, "zw": np.zeros(8, I8),
                     "sy": np.float32(0.3), "zy": np.array(120, U8), "b": np.arange(8, dtype=np.int32)},
                    [1, 4, 8, 8], [1, 8, 8, 8], TensorProto.UINT8, "", {"pads": [1, 1, 1, 1]}),
    "QLinearMatMul": ({"x": None, "sx": np.float32(0.02), "zx": np.array(128, U8), "w": w_mm, "sw": scales8, "zw": np.zeros(8, I8),
                       "sy": np.float32(0.3), "zy": np.array(120, U8)}, [2, 16], [2, 8], TensorProto.UINT8, "", {}),
    "QGemm": ({"x": None, "sx": np.float32(0.02), "zx": np.array(128, U8), "w": w_mm.T.copy(), "sw": scales8, "zw": np.zeros(8, I8),
               "c": np.arange(8, dtype=np.int32), "sy": np.float32(0.3), "zy": np.array(120, U8)},
              [2, 16], [2, 8], TensorProto.UINT8, "com.microsoft", {"transB": 1}),
    "QLinearAdd": ({"x": None, "sx": np.float32(0.02), "zx": np.array(128, U8), "x2": None, "sx2": np.float32(0.05),
                    "zx2": np.array(100, U8), "sy": np.float32(0.3), "zy": np.array(120, U8)}, [1, 4, 8, 8], [1, 4, 8, 8], TensorProto.UINT8, "com.microsoft", {}),
    "QLinearConcat": ({"sy": np.float32(0.3), "zy": np.array(120, U8), "x": None, "sx": np.float32(0.02), "zx": np.array(128, U8),
                       "x2": None, "sx2": np.float32(0.05), "zx2": np.array(100, U8)}, [1, 4, 8, 8], [1, 8, 8, 8], TensorProto.UINT8, "com.microsoft", {"axis": 1}),
    "QLinearGlobalAveragePool": ({"x": None, "sx": np.float32(0.02), "zx": np.array(128, U8), "sy": np.float32(0.3), "zy": np.array(120, U8)},
                                 [1, 4, 8, 8], [1, 4, 1, 1], TensorProto.UINT8, "com.microsoft", {"channels_last": 0}),
    "DynamicQuantizeMatMul": ({"x": None, "w": w_mm, "sw": scales8, "zw": np.zeros(8, I8), "bias": np.ones(8, np.float32)},
                              [2, 16], [2, 8], TensorProto.FLOAT, "com.microsoft", {}),
    "MatMulIntegerToFloat": ({"x": None, "w": w_mm, "sx": np.float32(0.02), "sw": scales8, "zx": np.array(128, U8), "zw": np.zeros(8, I8)},
                             [2, 16], [2, 8], TensorProto.FLOAT, "com.microsoft", {}),
    "MatMulInteger": ({"x": None, "w": w_mm, "zx": np.array(128, U8), "zw": np.zeros(8, I8)}, [2, 16], [2, 8], TensorProto.INT32, "", {}),
    "ConvInteger": ({"x": None, "w": w_conv, "zx": np.array(128, U8)}, [1, 4, 8, 8], [1, 8, 6, 6], TensorProto.INT32, "", {}),
}  # fmt: skip
inputs, x_shape, y_shape, y_type, domain, attrs = NODES[op]
x_type = TensorProto.FLOAT if op in ("DynamicQuantizeMatMul",) else TensorProto.UINT8
node = helper.make_node(op, list(inputs), ["y"], name="node", domain=domain, **attrs)
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(k, x_type, x_shape) for k, v in inputs.items() if v is None],
                          [helper.make_tensor_value_info("y", y_type, y_shape)],
                          [numpy_helper.from_array(v, k) for k, v in inputs.items() if v is not None])  # fmt: skip
opsets = [helper.make_opsetid("", 21)] + ([helper.make_opsetid(domain, 1)] if domain else [])
model = helper.make_model(graph, opset_imports=opsets)
model.ir_version = 10
onnx.save(model, path)
