"""Writes one com.microsoft MatMulNBits model (onnx.helper, from the spec) for the lit tests:
python matmul_nbits.py OUT.onnx [bits] [zero points: none | packed | float] [opset]."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

path, bits = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 4
zp, opset = (sys.argv[3] if len(sys.argv) > 3 else "none"), int(sys.argv[4]) if len(sys.argv) > 4 else 21
k, n, block = 64, 32, 32
rng = np.random.default_rng(0)
b = rng.integers(0, 256, size=(n, k // block, block * bits // 8)).astype(np.uint8)
inits = [numpy_helper.from_array(b, "B"), numpy_helper.from_array((rng.random(n * k // block) * 0.1).astype(np.float32), "scales")]
inputs = ["x", "B", "scales"]
if zp == "packed":
    inits.append(numpy_helper.from_array(rng.integers(0, 256, size=n * -(-(k // block) * bits // 8)).astype(np.uint8), "zp"))
    inputs.append("zp")
elif zp == "float":
    inits.append(numpy_helper.from_array((rng.random(n * k // block) * 15).astype(np.float32), "zp"))
    inputs.append("zp")
node = helper.make_node("MatMulNBits", inputs, ["y"], name="proj", domain="com.microsoft", K=k, N=n, bits=bits, block_size=block)
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", n])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 10
onnx.save(model, path)
