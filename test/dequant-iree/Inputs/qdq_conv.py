"""Writes one QDQ convolution as quantize_static writes it (onnx.helper) for the lit tests of
dequant.qdq_convs: y = DQ(Q(Conv(DQ(Q(x)), DQ(w), DQ(b)))), x f32 [1, 4, 8, 8], uint8 activations,
int8 weights per output channel, an int32 bias. python qdq_conv.py OUT.onnx"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
consts = {"sx": np.float32(0.02), "zx": np.array(128, np.uint8), "w": rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8),
          "sw": np.linspace(0.01, 0.02, 8, dtype=np.float32), "zw": np.zeros(8, np.int8), "b": np.arange(8, dtype=np.int32),
          "sb": (np.float32(0.02) * np.linspace(0.01, 0.02, 8, dtype=np.float32)).astype(np.float32), "zb": np.zeros(8, np.int32),
          "sy": np.float32(0.3), "zy": np.array(120, np.uint8)}  # fmt: skip
nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"]),
         helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wf"], axis=0), helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["bf"], axis=0),
         helper.make_node("Conv", ["xf", "wf", "bf"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("QuantizeLinear", ["c", "sy", "zy"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]  # fmt: skip
graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], [numpy_helper.from_array(v, k) for k, v in consts.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
model.ir_version = 10
onnx.save(model, sys.argv[1])
