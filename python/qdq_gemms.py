"""QDQ Gemms as QDQ MatMuls, for dq's exact int8 kernel (the classifiers of quantize_static's CNNs).

The stage's QDQ MatMul route (passes/torch_onnx_dq_matmul_iree_cpu.py) takes `Q(DQ(xq) @ DQ(wq)
+ b)`; quantize_static writes a CNN's classifier as a Gemm, which IREE 3.13 lowers as its own i8
matvec (docs/iree.md#qdq-gemms). So, for the llvm-cpu target on a CPU whose tags take that kernel
(dequant.qdq_conv_matmuls.kernel), a Gemm

    Gemm(DQ(xq, sx, zx), DQ(wq, sw, zw), c)       alpha = beta = 1, transA = 0

with xq per tensor 8-bit [M, K], constant 8-bit weights per tensor or per output column (axis 0
of wq [N, K] under transB = 1, axis 1 of wq [K, N] without), and c absent, an f32 constant or a
DequantizeLinear of a constant, of N values (or one), and at least MIN_INTEGER_MACS multiply-adds
(below them the kernel leaves a QDQ MatMul to IREE), becomes

    MatMul(DQ(xq, sx, zx), DQ(W, sw, zw, axis=1)) + b        W = wq as [K, N], b [N] f32

with b the DequantizeLinear's f32 values (`f32(cq - zc) * sc`, as it computes them): the same
products and the same bias, so the QDQ MatMul route's arithmetic
(docs/semantics.md#qdq-gemms). A Gemm of another form stays IREE's.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from dequant.passes.torch_onnx_to_dq_iree import MIN_INTEGER_MACS

from .formats import Graph
from .formats.emit import Emit
from .qdq_convs import _8BIT, activation_parameters, f32_values, static_types, weight_parameters


def _form(graph: Graph, node, producers: dict, types: dict):
    """(xq's DequantizeLinear output, W [K, N], sw [N], zw [N], b [N] f32 or None) of a Gemm the
    rewrite takes, or None."""
    if node.op_type != "Gemm" or node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    if set(a) - {"alpha", "beta", "transA", "transB"} or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0 or a.get("transA", 0):
        return None
    x_dq, w_dq = producers.get(node.input[0]), producers.get(node.input[1])
    if x_dq is None or w_dq is None or x_dq.op_type != "DequantizeLinear" or w_dq.op_type != "DequantizeLinear":
        return None
    x = activation_parameters(graph, x_dq, types, 2)
    if x is None:
        return None
    xq = x[0]
    wq = graph.value(w_dq.input[0])
    if wq is None or wq.dtype not in _8BIT or wq.ndim != 2:
        return None
    trans = bool(a.get("transB", 0))
    w = wq.T if trans else wq  # [K, N]
    k, n = w.shape
    if types[xq][0][1] != k or types[xq][0][0] * k * n < MIN_INTEGER_MACS:
        return None  # (the kernel takes a QDQ MatMul from MIN_INTEGER_MACS multiply-adds)
    sw, zw = weight_parameters(graph, w_dq, wq, 0 if trans else 1)  # per tensor or per output column
    if sw is None:
        return None
    b = None
    if len(node.input) > 2 and node.input[2]:
        b = f32_values(graph, producers, node.input[2])
        if b is None or b.dtype != np.float32 or b.size not in (1, n) or b.ndim > 1:
            return None
        b = np.broadcast_to(b.reshape(-1), (n,)).astype(np.float32)
    return node.input[0], np.ascontiguousarray(w), sw, zw, b


def rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """The model (in place) with the QDQ Gemms the module docstring says as QDQ MatMuls (and the
    bias Add); and how many. The caller checks the CPU's tags."""
    if not any(n.op_type == "Gemm" for n in model.graph.node):
        return model, 0
    graph = Graph(model)
    types = static_types(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    nodes, count = [], 0
    for node in model.graph.node:
        form = _form(graph, node, producers, types)
        if form is None:
            nodes.append(node)
            continue
        a, w, sw, zw, b = form
        hint = node.output[0]
        e = Emit(node, graph)
        wd = e.op("DequantizeLinear", graph.constant(f"{hint}_w", w), graph.constant(f"{hint}_sw", sw), graph.constant(f"{hint}_zw", zw), axis=1)
        if b is None:
            e.op("MatMul", a, wd, out=node.output[0])
        else:
            e.op("Add", e.op("MatMul", a, wd), graph.constant(f"{hint}_b", b), out=node.output[0])
        nodes.extend(e.nodes)
        count += 1
    if count:
        read = {v for n in nodes for v in n.input} | {v.name for v in model.graph.output}
        nodes = [n for n in nodes if n.op_type != "DequantizeLinear" or any(o in read for o in n.output)]  # the weights' and bias's
        graph.replace_nodes(nodes)
    return model, count
