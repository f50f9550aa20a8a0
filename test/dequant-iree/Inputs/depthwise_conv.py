"""Writes two QDQ depthwise convolutions as quantize_static writes them (onnx.helper) for the lit
test of dequant.depthwise: a 3 x 3 of stride 1, then a 5 x 5 of stride 2, 8 channels, x f32
[1, 8, 9, 9], uint8 activations, int8 weights per channel, int32 biases.
python depthwise_conv.py OUT.onnx"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
sw = np.linspace(0.01, 0.02, 8, dtype=np.float32)
consts = {"s": np.float32(0.02), "z": np.array(128, np.uint8), "sw": sw, "zw": np.zeros(8, np.int8), "zb": np.zeros(8, np.int32),
          "sb": (np.float32(0.02) * sw).astype(np.float32), "w1": rng.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8),
          "w2": rng.integers(-127, 128, (8, 1, 5, 5)).astype(np.int8), "b1": np.arange(8, dtype=np.int32), "b2": np.arange(8, dtype=np.int32)}  # fmt: skip
nodes = []
h = "x"
for i, (k, s) in enumerate(((3, 1), (5, 2)), 1):
    nodes += [helper.make_node("QuantizeLinear", [h, "s", "z"], [f"q{i}"]), helper.make_node("DequantizeLinear", [f"q{i}", "s", "z"], [f"d{i}"]),
              helper.make_node("DequantizeLinear", [f"w{i}", "sw", "zw"], [f"wf{i}"], axis=0),
              helper.make_node("DequantizeLinear", [f"b{i}", "sb", "zb"], [f"bf{i}"], axis=0),
              helper.make_node("Conv", [f"d{i}", f"wf{i}", f"bf{i}"], [f"c{i}"], group=8, kernel_shape=[k, k], pads=[k // 2] * 4, strides=[s, s])]  # fmt: skip
    h = f"c{i}"
nodes += [helper.make_node("QuantizeLinear", [h, "s", "z"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "s", "z"], ["y"])]
graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 9, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 5, 5])], [numpy_helper.from_array(v, k) for k, v in consts.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
model.ir_version = 10
onnx.save(model, sys.argv[1])
