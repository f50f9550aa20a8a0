"""Depthwise convolutions handed to IREE's CPU backend as k * k shifted slices times weights, summed.

IREE 3.13 compiles ONNX's depthwise Conv (NCHW, `group` = channels) as a generic reduction whose
loops it neither vectorizes along the channels nor decomposes: on the MobileNetV3-Small-style
model it took half the time (docs/iree.md#depthwise-convolutions). Written as what it computes,
y = b + sum over (i, j) of x_padded[:, :, i + s*h, j + s*w] * w[:, 0, i, j], each term a Slice of
the padded input times a per-channel constant, IREE fuses the terms into elementwise dispatches
vectorized along the output's rows. A stride of 2 reads every other element, which IREE does not
vectorize, so the padded input is first split into its four phases (even and odd rows and
columns, one Transpose): each term is then a unit-stride Slice of one phase.

Taken, for the llvm-cpu target after dequant.qdq_convs (whose folded weights are constants): a
2-D Conv of `group` = input channels = output channels, constant f32 weights [C, 1, kh, kw] and
bias, explicit `pads` (auto_pad NOTSET), dilations 1, strides 1 or 2 (2 only where the input's
spatial dims are known). The products and sums are f32, as the Conv's: the float convolution
of the dequantized values (docs/semantics.md#qdq-convolutions-through-iree), summed in another
order.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from .formats import Graph
from .formats.emit import Emit
from .formats.rewrites import inferred_types

# Terms summed apart before their sums are added: IREE caps the operands of the elementwise op it
# fuses, so a 5 x 5's 25 terms take several dispatches whatever the order; groups of 6 took the
# fewest and the least time (docs/iree.md#depthwise-convolutions).
GROUP = 6


def _form(graph: Graph, node: onnx.NodeProto, shapes: dict):
    """(weights [C, 1, kh, kw], bias or None, pads [t, l, b, r], stride, input dims [H, W] or None)
    of a depthwise Conv this rewrite takes, or None (the Conv stays)."""
    if node.op_type != "Conv" or node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    w = graph.value(node.input[1])
    has_bias = len(node.input) > 2 and bool(node.input[2])
    b = graph.value(node.input[2]) if has_bias else None
    if w is None or w.dtype != np.float32 or w.ndim != 4 or w.shape[1] != 1 or w.shape[0] < 2 or (has_bias and b is None):
        return None
    c, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    if b is not None and (b.dtype != np.float32 or b.shape != (c,)):
        return None
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    if set(a) - {"group", "kernel_shape", "pads", "strides", "dilations", "auto_pad"} or a.get("group", 1) != c:
        return None
    if a.get("auto_pad", b"NOTSET") != b"NOTSET" or list(a.get("kernel_shape", [kh, kw])) != [kh, kw]:
        return None
    pads, strides = list(a.get("pads", [0] * 4)), list(a.get("strides", [1, 1]))
    if len(pads) != 4 or min(pads) < 0 or list(a.get("dilations", [1, 1])) != [1, 1] or strides not in ([1, 1], [2, 2]):
        return None
    dims = shapes.get(node.input[0])
    if dims is not None and (len(dims) != 4 or isinstance(dims[1], int) and dims[1] != c):
        return None  # not what a depthwise Conv reads: IREE's importer says so
    hw = dims[2:] if dims is not None and all(isinstance(d, int) and d > 0 for d in dims[2:]) else None
    if hw is not None and (hw[0] + pads[0] + pads[2] < kh or hw[1] + pads[1] + pads[3] < kw):
        return None
    if strides[0] == 2 and hw is None:
        return None
    return w, b, pads, strides[0], hw


def rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """The model (in place) with its depthwise Convs as the module docstring says; and how many.
    Models below opset 13 are left as they are (dequant.qdq_convs takes none either)."""
    g = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    if opset < 13 or not any(n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute) for n in g.node):
        return model, 0  # (Pad and Slice read their pads and bounds as inputs from opset 11 and 10)
    graph = Graph(model)
    shapes = {name: dims for name, (dims, _) in inferred_types(model).items()}
    nodes, count = [], 0
    for node in g.node:
        form = _form(graph, node, shapes)
        if form is None:
            nodes.append(node)
            continue
        nodes.extend(_terms(graph, node, *form))
        count += 1
    if count:
        graph.replace_nodes(nodes)
    return model, count


def _terms(graph: Graph, node: onnx.NodeProto, w: np.ndarray, b, pads: list, stride: int, hw) -> list:
    """The nodes computing `node`'s output as the sum of its k * k terms."""
    hint = node.output[0]
    c, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    e = Emit(node, graph)  # the nodes, named after the Conv

    x = node.input[0]
    t, l, bot, r = pads
    if stride == 1:
        if any(pads):
            x = e.op("Pad", x, e.ints(0, 0, t, l, 0, 0, bot, r))
        axes = e.ints(2, 3)
        # term (i, j) reads rows i .. i + ho - 1 of the padded input, ho = hp - kh + 1: its end
        # counted from the last row, so no dim need be known
        taps = {(i, j): e.op("Slice", x, e.ints(i, j), e.ints(i - kh + 1 or np.iinfo(np.int64).max, j - kw + 1 or np.iinfo(np.int64).max), axes)
                for i in range(kh) for j in range(kw)}  # fmt: skip
    else:
        h, wd = hw
        hp, wp = h + t + bot, wd + l + r
        ho, wo = (hp - kh) // 2 + 1, (wp - kw) // 2 + 1
        # the four phases need even padded dims: one more row or column of zeros, never read
        x = e.op("Pad", x, e.ints(0, 0, t, l, 0, 0, bot + hp % 2, r + wp % 2))
        hp, wp = hp + hp % 2, wp + wp % 2
        x = e.op("Reshape", x, e.ints(0, c, hp // 2, 2, wp // 2, 2))
        x = e.op("Transpose", x, perm=[0, 3, 5, 1, 2, 4])  # [N, row phase, column phase, C, hp / 2, wp / 2]
        axes, flat = e.ints(1, 2, 4, 5), e.ints(0, c, ho, wo)
        taps = {}
        for i in range(kh):
            for j in range(kw):
                s = e.op("Slice", x, e.ints(i % 2, j % 2, i // 2, j // 2), e.ints(i % 2 + 1, j % 2 + 1, i // 2 + ho, j // 2 + wo), axes)
                taps[i, j] = e.op("Reshape", s, flat)
    terms = [e.op("Mul", tap, graph.constant(f"{hint}_w{i}{j}", np.ascontiguousarray(w[:, 0, i, j]).reshape(c, 1, 1))) for (i, j), tap in taps.items()]
    acc = _sum(e, [_sum(e, terms[g : g + GROUP]) for g in range(0, len(terms), GROUP)])
    if b is not None:
        acc = e.op("Add", acc, graph.constant(f"{hint}_bias", b.reshape(c, 1, 1)))
    e.nodes[-1].output[0] = node.output[0]
    return e.nodes


def _sum(e: Emit, values: list) -> str:
    """values[0] + values[1] + ..., in order."""
    acc = values[0]
    for v in values[1:]:
        acc = e.op("Add", acc, v)
    return acc
