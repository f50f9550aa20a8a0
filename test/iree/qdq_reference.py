"""What the tests of dq's integer QDQ routes (test_qdq_conv_matmuls.py, test_qdq_depthwise.py,
test_qdq_gemms.py) share: their one-op QDQ models saved as onnx.helper writes them, and ONNX's
QuantizeLinear in numpy, from which each writes its op's integer arithmetic.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes: list, x_shape: list, y_shape: list, init: dict) -> str:
    """A model "g" of `nodes`, input x and output y (f32 of the given shapes), the initializers
    `init` (name -> array), opset 21, saved to `path`."""
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              [numpy_helper.from_array(np.asarray(v), name) for name, v in init.items()])  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    return str(path)


def quantize(x, s, z):
    """QuantizeLinear (ONNX): saturate(roundeven(x / s) + z), in int64."""
    info = np.iinfo(z.dtype)
    return np.clip(np.rint(x / s).astype(np.int64) + int(z), info.min, info.max)
