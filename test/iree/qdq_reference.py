"""What the tests of dq's integer QDQ routes (test_qdq_conv_matmuls.py, test_qdq_depthwise.py,
test_qdq_gemms.py) share: their one-op QDQ models saved as onnx.helper writes them, ONNX's
QuantizeLinear in numpy, from which each writes its op's integer arithmetic, and the model
through dequant-iree run by IREE's runtime.
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


def compiled(path, *flags, report=None):
    """The model's function "g" compiled by dequant.iree.compile_onnx (iree-compile's `flags`;
    `report`: called with the stage's Summary), run by IREE's runtime on one input."""
    import iree.runtime as rt

    from dequant import iree as stage

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, stage.compile_onnx(path, extra_args=flags, report=report)))
    return lambda x: np.asarray(ctx.modules.module["g"](x))
