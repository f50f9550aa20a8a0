"""A Softmax between a DequantizeLinear and a QuantizeLinear as one node of dq's softmax kernel.

quantize_static writes an attention's softmax (and dequant.formats a com.microsoft
QLinearSoftmax) as

    yq = Q(Softmax(DQ(xq, sx, zx), axis=-1), sy, zy)       per tensor, 8-bit codes

IREE computes it as one dispatch that evaluates the DequantizeLinear, and the ops IREE fused
before it, in each of its softmax's passes over a row, with its polynomial exp
(docs/iree.md#softmax-of-codes). Softmax(x)[i] = exp(x[i] - max x) / sum exp(x[j] - max x), and
for dequantized codes x[i] - max x = (xq[i] - max xq) sx exactly: a function of the difference
of two codes, 0 to 255, whatever zx. For the llvm-cpu target on the CPUs where
dequant.qdq_activation_matmuls runs, this rewrite writes

    yq = dequant.QdqSoftmax(xq) {x_scale = sx, y_scale = sy, y_zero_point = zy}

where the Softmax is over the last axis (opset 13's default, or the last axis in any opset) of
codes of static shape, rows of at most MOST_LENGTH codes, and is read by the QuantizeLinear
alone; torch-onnx-dq-softmax-iree-cpu makes it a dispatch of passes/kernels/softmax.py, which
reads each exponential from a table of 256, each rounded once
(docs/semantics.md#softmax-of-codes). The DequantizeLinear stays where something else reads it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from dequant.passes.kernels.softmax import MOST_LENGTH

from . import qdq_depthwise
from .formats import Graph
from .formats.rewrites import default_domain, value_readers
from .qdq_convs import _8BIT, _pair_parameters, static_types

OP = "QdqSoftmax"  # the stage's own node (in qdq_depthwise.DOMAIN), torch-onnx-dq-softmax-iree-cpu's


def rewrite(model: onnx.ModelProto) -> int:
    """The model's Softmaxes of codes rewritten in place (the module docstring); how many."""
    graph, g = Graph(model), model.graph
    producers = {o: n for n in g.node for o in n.output}
    readers = value_readers(g.node)
    outputs = {v.name for v in g.output}

    def quantized(node):
        """(the DequantizeLinear the Softmax `node` reads, the QuantizeLinear that is its only
        reader), or None."""
        if not (default_domain(node) and node.op_type == "Softmax" and len(node.input) == 1 and len(node.output) == 1) or node.output[0] in outputs:
            return None
        dq, after = producers.get(node.input[0]), readers.get(node.output[0], [])
        if dq is None or not default_domain(dq) or dq.op_type != "DequantizeLinear" or dq.input[0] in graph.constants:
            return None
        if len(after) != 1 or not default_domain(after[0]) or after[0].op_type != "QuantizeLinear":
            return None
        return dq, after[0]

    found = [(n, got) for n in g.node if (got := quantized(n)) is not None]
    if not found:  # no candidate: no shape inference, a pass over the whole model
        return 0
    types = static_types(model)
    swapped, dropped = {}, set()
    for node, (dq, q) in found:
        codes, out = types.get(dq.input[0]), types.get(q.output[0])
        x_pair, y_pair = _pair_parameters(graph, dq), _pair_parameters(graph, q)
        if codes is None or out is None or x_pair is None or y_pair is None or codes[1] not in _8BIT or out[1] not in _8BIT:
            continue
        if y_pair[1].dtype != out[1] or x_pair[0] <= 0 or y_pair[0] <= 0:  # zx: no part of the differences
            continue
        rank = len(codes[0])
        axis = next((helper.get_attribute_value(a) for a in node.attribute if a.name == "axis"), -1 if graph.opset >= 13 else 1)
        if rank == 0 or axis not in (-1, rank - 1) or codes[0][-1] > MOST_LENGTH:
            continue
        swapped[id(node)] = helper.make_node(OP, [dq.input[0]], [q.output[0]], name=node.name or graph.fresh(OP), domain=qdq_depthwise.DOMAIN,
                                             x_scale=float(x_pair[0]), y_scale=float(y_pair[0]), y_zero_point=int(y_pair[1]))  # fmt: skip
        dropped.add(id(q))
        if not any(v.name == q.output[0] for v in g.value_info):  # the importer types a dequant node's result by it
            g.value_info.append(helper.make_tensor_value_info(q.output[0], helper.np_dtype_to_tensor_dtype(np.dtype(out[1])), list(out[0])))
        if len(readers[dq.output[0]]) == 1 and dq.output[0] not in outputs:
            dropped.add(id(dq))
    if swapped:
        graph.replace_nodes([swapped.get(id(n), n) for n in g.node if id(n) not in dropped])
        qdq_depthwise.declare(model)
    return len(swapped)
