"""A rewrite's nodes, built one standard ONNX op at a time (used by attention.py and
normalization.py).

`Emit(node, graph)` collects the nodes that stand for `node`: each method adds one op and returns
the name of its result, a fresh name unless `out` names one of the node's own outputs. The ops
whose operands moved from attributes to inputs across opsets (ReduceMean, Split, Unsqueeze,
Squeeze, Slice) are written in the form the model's default-domain opset takes. Constants of the
computation's float type `like` (epsilon, scale, -inf stand-ins) are made by `scalar`, cast like a
value of that type (CastLike, opset 15) where the type is not known.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .rewrites import Graph

I64 = np.int64


def elem_type(graph: Graph, name: str) -> int | None:
    """The ONNX element type of a value of the graph, where the model states it, or None."""
    t = graph.constants.get(name)
    if t is not None:
        return t.data_type
    g = graph.model.graph
    for v in (*g.input, *g.value_info, *g.output):
        if v.name == name and v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
            return v.type.tensor_type.elem_type
    return None


# Ops whose result has the largest rank of their inputs (broadcasting, or a rank-keeping op of one
# input), and the input positions that count; what `rank` follows back through unstated values.
_RANK_OF_INPUTS = {op: None for op in ("Add", "Sub", "Mul", "Div", "Pow", "Where", "MatMul")}
_RANK_OF_INPUTS |= {op: (0,) for op in ("Cast", "Identity", "Relu", "Sigmoid", "Tanh", "Softmax", "Neg", "Erf", "Gelu",
                                        "FastGelu", "QuickGelu", "BiasGelu", "MatMulNBits", "LayerNormalization",
                                        "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization",
                                        "SkipLayerNormalization", "RotaryEmbedding", "DequantizeLinear")}  # fmt: skip


def rank(graph: Graph, name: str, _depth: int = 0) -> int | None:
    """The rank of a value of the graph: where the model states it, else followed back through its
    producer (rank-keeping and broadcasting ops, Reshape by a constant shape, Transpose), or None."""
    t = graph.constants.get(name)
    if t is not None:
        return len(t.dims)
    g = graph.model.graph
    for v in (*g.input, *g.value_info, *g.output):
        if v.name == name and v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape"):
            return len(v.type.tensor_type.shape.dim)
    producers = graph.__dict__.setdefault("_producers", {o: n for n in g.node for o in n.output})
    node = producers.get(name)
    if node is None or _depth > 64:
        return None
    if node.op_type == "Reshape" and len(node.input) > 1 and graph.value(node.input[1]) is not None:
        return int(graph.value(node.input[1]).size)
    if node.op_type == "Transpose" and attr(node, "perm") is not None:
        return len(attr(node, "perm"))
    if node.op_type in _RANK_OF_INPUTS and node.output[0] == name:
        positions = _RANK_OF_INPUTS[node.op_type] or range(len(node.input))
        ranks = [rank(graph, node.input[i], _depth + 1) for i in positions if i < len(node.input) and node.input[i]]
        return max(ranks) if ranks and None not in ranks else None
    return None


def attr(node: onnx.NodeProto, name: str, default=None):
    a = next((a for a in node.attribute if a.name == name), None)
    return default if a is None else helper.get_attribute_value(a)


class Emit:
    def __init__(self, node: onnx.NodeProto, graph: Graph):
        self.node, self.graph, self.nodes = node, graph, []
        self.hint = (node.name or node.output[0]).replace("/", "_")

    @property
    def opset(self) -> int:
        return self.graph.opset

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs) -> str:
        name = out or self.graph.fresh(f"{self.hint}_{op_type}")
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], name=self.graph.fresh(f"{self.hint}/{op_type}"), **attrs))
        return name

    def const(self, array, hint: str = "c") -> str:
        return self.graph.constant(f"{self.hint}_{hint}", np.asarray(array))

    def ints(self, *values: int) -> str:
        return self.const(np.array(values, I64), "i")

    def scalar(self, value: float, like: str) -> str:
        """`value` as a scalar of the element type of `like`."""
        t = elem_type(self.graph, like)
        if t is not None:
            return self.const(np.array(value, helper.tensor_dtype_to_np_dtype(t)), "f")
        if self.opset < 15:
            return self.const(np.array(value, np.float32), "f")
        return self.op("CastLike", self.const(np.array(value, np.float32), "f"), like)

    # The ops whose operands changed form across opsets.

    def reduce_mean(self, x: str, axes: list[int], out: str | None = None) -> str:
        if self.opset >= 18:
            return self.op("ReduceMean", x, self.ints(*axes), out=out, keepdims=1)
        return self.op("ReduceMean", x, out=out, axes=axes, keepdims=1)

    def unsqueeze(self, x: str, axes: list[int]) -> str:
        if self.opset >= 13:
            return self.op("Unsqueeze", x, self.ints(*axes))
        return self.op("Unsqueeze", x, axes=axes)

    def squeeze(self, x: str, axes: list[int]) -> str:
        if self.opset >= 13:
            return self.op("Squeeze", x, self.ints(*axes))
        return self.op("Squeeze", x, axes=axes)

    def split(self, x: str, sizes: list[int], axis: int) -> list[str]:
        outs = [self.graph.fresh(f"{self.hint}_Split") for _ in sizes]
        name = self.graph.fresh(f"{self.hint}/Split")
        if self.opset >= 13:
            self.nodes.append(helper.make_node("Split", [x, self.ints(*sizes)], outs, name=name, axis=axis))
        else:
            self.nodes.append(helper.make_node("Split", [x], outs, name=name, axis=axis, split=sizes))
        return outs

    def slice(self, x: str, start, end, axis: int) -> str:
        """x[start:end] along `axis`; start and end are ints or names of 1-element int64 tensors."""
        starts = self.ints(start) if isinstance(start, int) else start
        ends = self.ints(end) if isinstance(end, int) else end
        return self.op("Slice", x, starts, ends, self.ints(axis))

    def dim(self, x: str, axis: int) -> str:
        """The size of `x` along `axis`: a 1-element int64 tensor."""
        if self.opset >= 15:
            return self.op("Shape", x, start=axis, end=axis + 1) if axis != -1 else self.op("Shape", x, start=-1)
        return self.op("Gather", self.op("Shape", x), self.ints(axis))

    def cast(self, x: str, to: int) -> str:
        return self.op("Cast", x, to=to)


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
