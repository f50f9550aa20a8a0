"""Elementwise float activations between a DequantizeLinear and a QuantizeLinear as 256-entry tables
of codes, placed where dq's kernels compute them in their epilogue.

quantize_static leaves the activations its registry does not quantize (HardSwish, Sigmoid, Gelu,
GELU written with Erf, ...) in float between a per-tensor DequantizeLinear and QuantizeLinear:

    yq = Q(f(DQ(xq, sx, zx)), sy, zy)

IREE computes each such region as a dispatch of its own, f32 arithmetic (Erf, Exp and Tanh by
its polynomials) and the QuantizeLinear's division on every element. Where every node from the
DequantizeLinear to the QuantizeLinear is one of ELEMENTWISE and reads, besides values of the
region, only constants of one element (of a rank no higher than xq's), yq is a function of the
code xq alone, 256 values: the rewrite evaluates the region once on every code with
onnx.reference (the ONNX specification's evaluator: the table is what the graph computes, where
IREE's polynomials are approximations) and writes

    yq = Gather(T, Cast<int32>(xq))               uint8 xq
    yq = Gather(T, Cast<int32>(xq) + 128)         int8 xq

T the 256 codes of yq's type, in the order of xq's codes. For the llvm-cpu target on a CPU whose
tags take dq's QDQ MatMul kernel, where xq is made by a kernel of dq's that computes the table
in its epilogue (torch-onnx-dq-matmul-iree-cpu, torch-onnx-dq-depthwise-iree-cpu): the
QuantizeLinear of a MatMul of constant weights (after a bias Add, or the bias's own QDQ pair, as quantize_static
writes it) or a dequant.QLinearDepthwiseConv; or by the QuantizeLinear of IREE's own op where
xq has at most FEW_CODES elements (a squeeze-and-excitation gate: IREE would fuse the region
into the Mul that broadcasts the gate, and compute it once per element of the block), which
dq's lookup kernel then looks up (torch-onnx-dq-lookup-iree-cpu); either through Reshapes and
Transposes that nothing else reads (the table goes before them: a lookup commutes with moving
codes). The region's nodes must have no reader outside it; the DequantizeLinear and the region
go (docs/iree.md#activations-as-tables).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper

from dequant.passes.kernels.lookup import CODES, PER_WORKGROUP

from .formats import Graph
from .formats.rewrites import default_domain, value_readers
from .qdq_convs import _8BIT, _pair_parameters, of_matmul, static_types
from .qdq_depthwise import DOMAIN, OP

# Default-domain ops computed element by element (numpy's broadcasting of one-element constants),
# which onnx.reference evaluates: a region of these between the pair is a table.
ELEMENTWISE = frozenset(
    {
        "Abs", "Add", "Ceil", "Celu", "Clip", "Cos", "Div", "Elu", "Erf", "Exp", "Floor", "Gelu",
        "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Log", "Max", "Min", "Mish", "Mul",
        "Neg", "Pow", "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
        "Softplus", "Softsign", "Sqrt", "Sub", "Tanh", "ThresholdedRelu",
    }
)  # fmt: skip
LAYOUT = frozenset({"Reshape", "Transpose"})  # ops that move codes: the table goes before them
# At most this many codes made by IREE's own op take a table too: dq's lookup kernel looks them
# up in one workgroup, where IREE fuses the region into its readers and computes it once per
# element they read (a squeeze-and-excitation gate: once per element of the block;
# docs/iree.md#squeeze-and-excitation-blocks).
FEW_CODES = PER_WORKGROUP


class _Tables:
    """One model's rewrite: its graph, values' producers and readers, inferred types."""

    def __init__(self, model: onnx.ModelProto):
        self.graph = Graph(model)
        self.types = static_types(model)
        g = model.graph
        self.producers = {o: n for n in g.node for o in n.output}
        self.readers = value_readers(g.node)
        self.outputs = {v.name for v in g.output}

    def only_reader(self, value: str):
        """The one node reading `value` (not a graph output), or None."""
        r = self.readers.get(value, [])
        return r[0] if len(r) == 1 and value not in self.outputs else None

    def region(self, q: onnx.NodeProto):
        """(the DequantizeLinear, the region's elementwise nodes in graph order, its layout ops
        first first) that QuantizeLinear `q`'s input is a function of, element by element, or
        None. The region is closed (its values read only inside it, the last by `q`); layout
        ops (LAYOUT: ONNX's broadcasting would not commute with them) only in a chain, each
        node reading one value of the region."""
        source, region, todo, seen, ndim = None, {}, [q.input[0]], set(), 0
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            node = self.producers.get(v)
            if node is None or not default_domain(node) or v in self.outputs:
                return None
            if node.op_type == "DequantizeLinear":
                if source not in (None, node) or _pair_parameters(self.graph, node) is None:
                    return None
                source = node
                continue
            if node.op_type not in ELEMENTWISE | LAYOUT or len(node.output) != 1:
                return None
            region[id(node)] = node
            for i in node.input[1:] if node.op_type in LAYOUT else node.input:
                if not i:
                    continue  # an optional input left out (Clip's bounds)
                c = self.graph.value(i) if i in self.graph.constants else None
                if node.op_type in LAYOUT:
                    if c is None:
                        return None  # a Reshape's shape made at run time
                elif c is None:
                    todo.append(i)
                elif c.size != 1:
                    return None  # a constant of more than one element
                else:
                    ndim = max(ndim, c.ndim)
            if node.op_type in LAYOUT:
                todo.append(node.input[0])
        nodes = [n for n in self.graph.model.graph.node if id(n) in region]
        layout = [n for n in nodes if n.op_type in LAYOUT]
        if source is None or len(layout) == len(nodes):
            return None
        values = [source.input[0], *(n.output[0] for n in nodes)]
        if any(v not in self.types for v in values) or ndim > min(len(self.types[v][0]) for v in values):
            return None  # a value of unknown shape, or a constant that may raise the rank
        if layout and any(sum(v not in self.graph.constants for v in n.input if v) != 1 for n in nodes):
            return None
        inside = set(region) | {id(q)}
        if any(id(r) not in inside for n in (source, *nodes) for r in self.readers.get(n.output[0], [])):
            return None
        return source, [n for n in nodes if n.op_type not in LAYOUT], layout

    def table_site(self, xq: str) -> tuple | None:
        """(the value whose codes the lookup reads, the layout ops from it to `xq`, first first)
        where `xq` is a dq kernel's output codes or few codes of IREE's op (the module
        docstring), or None."""
        chain = []
        while (node := self.producers.get(xq)) is not None and default_domain(node) and node.op_type in LAYOUT:
            if self.only_reader(node.input[0]) is not node:
                return None
            chain.insert(0, node)
            xq = node.input[0]
        node = self.producers.get(xq)
        if node is None or xq in self.outputs:
            return None
        if node.domain == DOMAIN and node.op_type == OP:
            return xq, chain
        if node.op_type != "QuantizeLinear" or not default_domain(node):
            return None
        kernels = of_matmul(self.graph, self.producers, node.input[0])
        few = xq in self.types and math.prod(self.types[xq][0]) <= FEW_CODES
        return (xq, chain) if kernels or few else None

    def table(self, source: onnx.NodeProto, region: list, layout: list, q: onnx.NodeProto, codes) -> np.ndarray | None:
        """yq for each code of xq's type `codes`, lowest first, as onnx.reference computes the
        nodes `source`, `region`, `q` on a vector (None where it cannot): the `layout` ops,
        which only move values, left out."""
        from onnx.reference import ReferenceEvaluator

        moved = {n.output[0]: n.input[0] for n in layout}
        nodes = []
        for n in (source, *region, q):
            n2 = onnx.NodeProto()
            n2.CopyFrom(n)
            for i, v in enumerate(n2.input):
                while v in moved:
                    v = moved[v]
                n2.input[i] = v
            nodes.append(n2)
        made = {v for n in nodes for v in n.output}
        read = sorted({v for n in nodes for v in n.input if v} - made - {source.input[0]})
        inits = [onnx.numpy_helper.from_array(self.graph.value(v), v) for v in read]
        xq = helper.make_tensor_value_info(source.input[0], helper.np_dtype_to_tensor_dtype(np.dtype(codes)), [CODES])
        yq = helper.make_tensor_value_info(q.output[0], onnx.TensorProto.UNDEFINED, None)
        opsets = [o for o in self.graph.model.opset_import if o.domain in ("", "ai.onnx")]
        model = helper.make_model(helper.make_graph(nodes, "table", [xq], [yq], inits), opset_imports=opsets)
        info = np.iinfo(codes)
        try:  # (the reference's Sigmoid computes both of np.where's branches: exp overflows in the one not taken)
            with np.errstate(all="ignore"):
                (y,) = ReferenceEvaluator(model).run(None, {source.input[0]: np.arange(info.min, info.max + 1).astype(codes)})
        except Exception:  # noqa: BLE001 - an op or attribute the reference does not take: the region stays
            return None
        y = np.asarray(y)
        return y.reshape(CODES) if y.size == CODES and y.dtype in _8BIT else None


def rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """The model (in place) with each region the module docstring says as its table's Gather
    after the kernel's codes; and how many."""
    g = model.graph
    if not any(n.op_type == "QuantizeLinear" for n in g.node):
        return model, 0
    s = _Tables(model)
    graph = s.graph
    after: dict[str, list] = {}  # a kernel's codes -> the lookup's nodes, placed after its producer
    gone, renamed, stale = set(), {}, set()
    for q in g.node:
        if q.op_type != "QuantizeLinear" or not default_domain(q) or len(q.output) != 1 or _pair_parameters(graph, q) is None:
            continue
        found = s.region(q)
        made = s.table_site(found[0].input[0]) if found else None
        codes = s.types.get(found[0].input[0], (None, None))[1] if found else None
        if made is None or codes not in _8BIT or s.only_reader(found[0].input[0]) is not found[0]:
            continue
        t = s.table(*found, q, codes)
        if t is None:
            continue
        (source, region, layout), (xq, chain) = found, made
        hint = q.output[0]
        index = graph.fresh(f"{hint}_index")
        nodes = [helper.make_node("Cast", [xq], [index], to=onnx.TensorProto.INT32, name=graph.fresh(f"{hint}_Cast"))]
        if codes == np.int8:
            shifted = graph.fresh(f"{hint}_index")
            nodes.append(helper.make_node("Add", [index, graph.constant(f"{hint}_offset", np.int32(CODES // 2))], [shifted], name=graph.fresh(f"{hint}_Add")))
            index = shifted
        moves = chain + layout  # the layout ops from the kernel's codes to yq, first first
        looked = hint if not moves else graph.fresh(f"{hint}_codes")
        nodes.append(helper.make_node("Gather", [graph.constant(f"{hint}_table", t), index], [looked], axis=0, name=graph.fresh(f"{hint}_Gather")))
        after[xq] = nodes
        for before, n in zip([looked] + [m.output[0] for m in moves], moves):  # they move the table's codes now
            n.input[0] = before
        stale |= {n.output[0] for n in moves}  # their values' types: the table's now
        if moves:
            renamed[id(moves[-1])] = hint
        gone |= {id(n) for n in (source, *region, q)}
    if not after:
        return model, 0
    nodes = []
    for n in g.node:
        if id(n) in gone:
            continue
        if id(n) in renamed:
            n.output[0] = renamed[id(n)]
        nodes.append(n)
        for v in n.output:
            nodes.extend(after.get(v, []))
    graph.replace_nodes(nodes)
    kept = [v for v in g.value_info if v.name not in stale]
    del g.value_info[:]
    g.value_info.extend(kept)
    return model, len(after)
