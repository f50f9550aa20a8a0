"""QDQ depthwise convolutions as one node of dq's own, `dequant.QLinearDepthwiseConv` on NHWC codes,
which the stage's torch-onnx-dq-depthwise-iree-cpu pass makes one dispatch of dq's exact kernel
(passes/kernels/depthwise.py).

For the llvm-cpu target on a CPU whose tags take dq's QDQ MatMul kernel (dequant.qdq_conv_matmuls
calls this beside its own rewrite, so the codes stay NHWC between both), a Conv

    Q(Conv(DQ(xq, sx, zx), DQ(wq, sw, zw), b), sy, zy)

with `group` = input channels = output channels (a multiple of 8), weights [C, 1, kh, kw]
constant 8-bit codes per tensor or per channel, x per tensor 8-bit of static shape, dilations 1,
explicit pads, any strides, a bias absent, f32 or a DequantizeLinear of a constant, and the
Conv read only by a per-tensor 8-bit QuantizeLinear, becomes

    xt = Transpose(xq, NHWC)                       cancelled where xq is an NCHW view of NHWC codes
    yq = dequant.QLinearDepthwiseConv(xt, sx, zx, W, sw, zw, sy, zy[, b]) strides=[sh, sv], pads
    Transpose(yq, NCHW)                            cancelled where the next im2col reads NHWC

with pads the Conv's [top, left, bottom, right], W [kh, kw, C] the codes tap-major, sw and zw
[C], b [C] f32: y [N, Ho, Wo, C] the codes of saturate(roundeven((f32(sx * sw[c]) * d + b[c]) /
sy) + zy), d the exact integer sum of (xp - zx) * (W - zw) over the taps, xp being xt padded
with the code zx, which the kernel reads in place of the padding (no padded copy;
docs/semantics.md#the-depthwise-kernel). The node is the stage's own: only that pass reads it,
and this rewrite writes it only where the kernel takes it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from dequant.passes.kernels.depthwise import DepthwiseKernel

from .formats import Graph
from .formats.emit import Emit
from .qdq_convs import _pair_parameters, qdq_conv

DOMAIN, OP = "dequant", "QLinearDepthwiseConv"
NHWC, NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def form(graph: Graph, node, producers: dict, readers: dict, types: dict):
    """What the rewrite needs of a depthwise Conv it takes (a dict), or None (the Conv stays)."""
    f = qdq_conv(graph, node, producers, readers, types)
    if f is None:
        return None
    c = f["dims"][1]
    if f["group"] != c or f["wq"].shape[:2] != (c, 1) or c < 2:
        return None
    centred = (f["wq"].astype(np.int64) - f["zw"].reshape(-1, 1, 1, 1).astype(np.int64)).reshape(c, -1).T  # [taps, C]
    if DepthwiseKernel.why_not(int(f["zx"]), types[f["xq"]][1] == np.uint8, centred) is not None:
        return None
    sy, zy = _pair_parameters(graph, f["q"])
    return dict(f, sy=sy, zy=zy)


def nodes(graph: Graph, node, f: dict) -> list:
    """The nodes computing the Conv's QuantizeLinear's output as the module docstring says."""
    hint = node.output[0]
    n, c = f["dims"][:2]
    pads, (sh, sv) = f["pads"], f["strides"]
    e = Emit(node, graph)
    zx = graph.constant(f"{hint}_zx", f["zx"].reshape(()))
    x = e.op("Transpose", f["xq"], perm=NHWC)
    inputs = [x, graph.constant(f"{hint}_sx", np.float32(f["sx"]).reshape(())), zx,
              graph.constant(f"{hint}_w", np.ascontiguousarray(f["wq"][:, 0].transpose(1, 2, 0))),
              graph.constant(f"{hint}_sw", f["sw"]), graph.constant(f"{hint}_zw", np.ascontiguousarray(f["zw"])),
              graph.constant(f"{hint}_sy", np.float32(f["sy"]).reshape(())), graph.constant(f"{hint}_zy", f["zy"].reshape(()))]  # fmt: skip
    if f["b"] is not None:
        inputs.append(graph.constant(f"{hint}_b", f["b"].reshape(c).astype(np.float32)))
    y = graph.fresh(f"{hint}_nhwc")
    e.nodes.append(helper.make_node(OP, inputs, [y], name=graph.fresh(f"{e.hint}/{OP}"), domain=DOMAIN, strides=[sh, sv], pads=list(pads)))
    ho, wo = f["out"]
    elem = helper.np_dtype_to_tensor_dtype(f["zy"].dtype)
    graph.model.graph.value_info.append(helper.make_tensor_value_info(y, elem, [n, ho, wo, c]))
    e.op("Transpose", y, out=f["q"].output[0], perm=NCHW)
    return e.nodes


def declare(model: onnx.ModelProto) -> None:
    """The dequant domain in the model's opset imports (onnx's checker asks for it)."""
    if not any(o.domain == DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
