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

    xp = Pad(Transpose(xq, NHWC), the code zx)     cancelled where xq is an NCHW view of NHWC codes
    yq = dequant.QLinearDepthwiseConv(xp, sx, zx, W, sw, zw, sy, zy[, b]) strides=[sh, sv]
    Transpose(yq, NCHW)                            cancelled where the next im2col reads NHWC

with W [kh, kw, C] the codes tap-major, sw and zw [C], b [C] f32: y [N, Ho, Wo, C] the codes of
saturate(roundeven((f32(sx * sw[c]) * d + b[c]) / sy) + zy), d the exact integer sum of (xp -
zx) * (W - zw) over the taps (docs/semantics.md#the-depthwise-kernel). The node is the stage's
own: only that pass reads it, and this rewrite writes it only where the kernel takes it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from dequant.passes.kernels.depthwise import DepthwiseKernel

from .formats import Graph
from .formats.emit import Emit
from .qdq_convs import _8BIT, _pair_parameters, _weights

DOMAIN, OP = "dequant", "QLinearDepthwiseConv"
NHWC, NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
_CONV_ATTRIBUTES = {"group", "kernel_shape", "pads", "strides", "dilations", "auto_pad"}


def form(graph: Graph, node, producers: dict, readers: dict, types: dict, weight_parameters):
    """What the rewrite needs of a depthwise Conv it takes (a dict), or None (the Conv stays).
    `weight_parameters(graph, w_dq, wq)`: (sw [C], zw [C]) per tensor or per channel, or Nones."""
    if node.op_type != "Conv" or node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    if set(a) - _CONV_ATTRIBUTES or a.get("auto_pad", b"NOTSET") != b"NOTSET":
        return None
    x_dq, w_dq = producers.get(node.input[0]), producers.get(node.input[1])
    if x_dq is None or w_dq is None or x_dq.op_type != "DequantizeLinear" or w_dq.op_type != "DequantizeLinear":
        return None
    xq = x_dq.input[0]
    if xq not in types or types[xq][1] not in _8BIT or len(types[xq][0]) != 4:
        return None
    n, c, h, w = types[xq][0]
    wq = graph.value(w_dq.input[0])
    pair = _pair_parameters(graph, x_dq)
    if pair is None or wq is None or wq.dtype not in _8BIT or wq.shape[:2] != (c, 1) or wq.ndim != 4 or a.get("group", 1) != c or c < 2:
        return None
    sx, zx = pair
    if zx.dtype != types[xq][1] and len(x_dq.input) > 2 and x_dq.input[2]:
        return None
    kh, kw = wq.shape[2:]
    pads, strides = list(a.get("pads", [0] * 4)), list(a.get("strides", [1, 1]))
    if list(a.get("kernel_shape", [kh, kw])) != [kh, kw] or list(a.get("dilations", [1, 1])) != [1, 1]:
        return None
    if len(pads) != 4 or min(pads) < 0 or len(strides) != 2 or min(strides) < 1:
        return None
    hp, wp = h + pads[0] + pads[2], w + pads[1] + pads[3]
    if hp < kh or wp < kw:
        return None
    sw, zw = weight_parameters(graph, w_dq, wq)
    if sw is None:
        return None
    b = None
    if len(node.input) > 2 and node.input[2]:
        b_dq = producers.get(node.input[2])
        b = graph.value(node.input[2]) if b_dq is None or b_dq.op_type != "DequantizeLinear" else _weights(graph, b_dq)
        if b is None or b.dtype != np.float32 or b.size != c:
            return None
    q = readers.get(node.output[0], [])
    if len(q) != 1 or q[0] is None or q[0].op_type != "QuantizeLinear" or q[0].domain not in ("", "ai.onnx"):
        return None
    out = _pair_parameters(graph, q[0])
    if out is None:
        return None
    with np.errstate(over="ignore", under="ignore"):
        scales = (sx * sw).astype(np.float32)
    if not np.all(np.isfinite(scales) & ((scales == 0) | (np.abs(scales) >= np.finfo(np.float32).tiny))):
        return None  # as the QDQ MatMul kernel (docs/semantics.md#the-integer-route-of-qdq-matmuls)
    taps = np.abs(wq.astype(np.int64) - zw.reshape(-1, 1, 1, 1).astype(np.int64)).reshape(c, -1).sum(axis=1).max()
    unsigned = types[xq][1] == np.uint8
    if DepthwiseKernel.why_not(c, DepthwiseKernel.bound(int(zx), unsigned, int(taps))) is not None:
        return None
    return dict(xq=xq, sx=sx, zx=zx.astype(types[xq][1]), wq=wq, sw=sw, zw=zw, b=b, q=q[0], sy=out[0], zy=out[1],
                dims=(n, c, h, w), pads=pads, strides=strides)  # fmt: skip


def nodes(graph: Graph, node, f: dict) -> list:
    """The nodes computing the Conv's QuantizeLinear's output as the module docstring says."""
    hint = node.output[0]
    n, c, h, w = f["dims"]
    pads, (sh, sv) = f["pads"], f["strides"]
    kh, kw = f["wq"].shape[2:]
    e = Emit(node, graph)
    zx = graph.constant(f"{hint}_zx", f["zx"].reshape(()))
    x = e.op("Transpose", f["xq"], perm=NHWC)
    if any(pads):
        x = e.op("Pad", x, e.ints(0, pads[0], pads[1], 0, 0, pads[2], pads[3], 0), zx)
    inputs = [x, graph.constant(f"{hint}_sx", np.float32(f["sx"]).reshape(())), zx,
              graph.constant(f"{hint}_w", np.ascontiguousarray(f["wq"][:, 0].transpose(1, 2, 0))),
              graph.constant(f"{hint}_sw", f["sw"]), graph.constant(f"{hint}_zw", np.ascontiguousarray(f["zw"])),
              graph.constant(f"{hint}_sy", np.float32(f["sy"]).reshape(())), graph.constant(f"{hint}_zy", f["zy"].reshape(()))]  # fmt: skip
    if f["b"] is not None:
        inputs.append(graph.constant(f"{hint}_b", f["b"].reshape(c).astype(np.float32)))
    y = graph.fresh(f"{hint}_nhwc")
    e.nodes.append(helper.make_node(OP, inputs, [y], name=graph.fresh(f"{e.hint}/{OP}"), domain=DOMAIN, strides=[sh, sv]))
    ho, wo = (h + pads[0] + pads[2] - kh) // sh + 1, (w + pads[1] + pads[3] - kw) // sv + 1
    elem = helper.np_dtype_to_tensor_dtype(f["zy"].dtype)
    graph.model.graph.value_info.append(helper.make_tensor_value_info(y, elem, [n, ho, wo, c]))
    e.op("Transpose", y, out=f["q"].output[0], perm=NCHW)
    return e.nodes


def declare(model: onnx.ModelProto) -> None:
    """The dequant domain in the model's opset imports (onnx's checker asks for it)."""
    if not any(o.domain == DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
