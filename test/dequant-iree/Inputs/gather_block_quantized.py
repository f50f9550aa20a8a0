"""Writes one com.microsoft GatherBlockQuantized model (onnx.helper, from the spec) for the lit
tests: a 4-bit uint8 table [1000, 64] packed [1000, 32], block 32, packed zero points; y = the
rows of int64 indices x [?, ?]. python gather_block_quantized.py OUT.onnx"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
inits = [numpy_helper.from_array(rng.integers(0, 256, size=(1000, 32)).astype(np.uint8), "data"),
         numpy_helper.from_array((rng.random((1000, 2)) * 0.1).astype(np.float32), "scales"),
         numpy_helper.from_array(rng.integers(0, 256, size=(1000, 1)).astype(np.uint8), "zp")]  # fmt: skip
node = helper.make_node("GatherBlockQuantized", ["data", "x", "scales", "zp"], ["y"], name="embed", domain="com.microsoft",
                        gather_axis=0, quantize_axis=1, block_size=32, bits=4)  # fmt: skip
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, ["B", "S"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", 64])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 10
onnx.save(model, sys.argv[1])
