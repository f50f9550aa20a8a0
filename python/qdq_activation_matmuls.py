"""QDQ MatMuls of two activations (an attention's Q K^T and P V) as f32 MatMuls of their codes.

quantize_static writes an attention's MatMuls as MatMuls of two dequantized activations:

    y = MatMul(DQ(aq, sa, za), DQ(bq, sb, zb))           per tensor, 8-bit codes, neither constant

IREE 3.13 (torch-mlir's QDQ fusion) computes y as an i8 x i8 -> i32 contraction, row and column
sums of the codes for the zero points, then (f32(d) * sa) * sb. Its CPU code for that generic
integer contraction is several times slower than its f32 contraction of the same shape
(docs/iree.md#qdq-matmuls-of-two-activations). For the llvm-cpu target on an AVX2 CPU (AVX-512
VNNI ones included: measured on both), this rewrite writes

    y = Mul(Mul(MatMul(Cast<f32>(aq) - za, Cast<f32>(bq) - zb), sa), sb)

where K * max|aq - za| * max|bq - zb| <= 2^24 (the zero points' own ranges; K static): every
product and every partial sum of the f32 MatMul is then an integer of at most 2^24 in
magnitude, which f32 holds exactly, so in any order of summation the MatMul's result is
IREE's integer d, and the two Muls are IREE's scaling in IREE's order: y is IREE's, bit for bit
(docs/semantics.md#qdq-matmuls-of-two-activations). Longer K keeps IREE's integer route. A
dequantize other ops read too stays for them.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from dequant.passes.target_features import AVX2

from .formats import Graph
from .formats.rewrites import default_domain
from .qdq_convs import _8BIT, _pair_parameters, static_types

EXACT = 1 << 24  # f32 holds every integer up to this magnitude: the bound on |d|'s partial sums


def wanted(tags) -> bool:
    """Whether the rewrite runs for a CPU of dq-target-features `tags`: any with AVX2 (an AVX-512
    VNNI CPU is tagged AVX2 too), where IREE's integer contraction was measured slower."""
    return AVX2 in tags


def _widest(z: np.ndarray) -> int:
    """The largest |q - z| over the codes q of z's 8-bit type."""
    info = np.iinfo(z.dtype)
    return max(int(z) - info.min, info.max - int(z))


def rewrite(model: onnx.ModelProto) -> int:
    """The model's QDQ MatMuls of two activations rewritten in place (the module docstring); how
    many."""
    graph, g = Graph(model), model.graph
    producers = {o: n for n in g.node for o in n.output}
    readers: dict[str, int] = {}
    for n in g.node:
        for v in n.input:
            readers[v] = readers.get(v, 0) + 1
    for v in g.output:
        readers[v.name] = readers.get(v.name, 0) + 1

    def dequantized(name: str):
        """The DequantizeLinear making `name` from codes that are not a constant, or None."""
        dq = producers.get(name)
        ok = dq is not None and default_domain(dq) and dq.op_type == "DequantizeLinear" and len(dq.input) >= 2 and dq.input[0] not in graph.constants
        return dq if ok else None

    matmuls = {id(n) for n in g.node if default_domain(n) and n.op_type == "MatMul" and len(n.input) == 2 and len(n.output) == 1
               and dequantized(n.input[0]) is not None and dequantized(n.input[1]) is not None}  # fmt: skip
    if not matmuls:  # no candidate: no shape inference, a pass over the whole model
        return 0
    types = static_types(model)

    def operand(name: str):
        """(the node, (s, z)) of a per-tensor 8-bit DequantizeLinear of codes that are not a
        constant, or None."""
        dq = dequantized(name)
        pair, codes = (_pair_parameters(graph, dq), types.get(dq.input[0])) if dq is not None else (None, None)
        if pair is None or codes is None or codes[1] not in _8BIT or pair[1].dtype != codes[1]:
            return None
        return dq, pair

    nodes, count, dropped = [], 0, set()
    for node in g.node:
        if id(node) not in matmuls:
            nodes.append(node)
            continue
        a, b = operand(node.input[0]), operand(node.input[1])
        k = types.get(node.input[0], ((), None))[0][-1:]
        if a is None or b is None or not k or k[0] * _widest(a[1][1]) * _widest(b[1][1]) > EXACT:
            nodes.append(node)
            continue
        centred = []
        for dq, (_, z) in (a, b):
            codes, hint = dq.input[0], node.output[0]
            f32, out = graph.fresh(f"{hint}_codes"), graph.fresh(f"{hint}_centred")
            nodes += [helper.make_node("Cast", [codes], [f32], name=graph.fresh(f"{hint}_Cast"), to=TensorProto.FLOAT),
                      helper.make_node("Sub", [f32, graph.constant(f"{hint}_zero_point", np.array(z, np.float32))], [out], name=graph.fresh(f"{hint}_Sub"))]  # fmt: skip
            centred.append(out)
            readers[dq.output[0]] -= 1
            if not readers[dq.output[0]]:
                dropped.add(id(dq))
        d, scaled = graph.fresh(f"{node.output[0]}_d"), graph.fresh(f"{node.output[0]}_sa")
        nodes += [helper.make_node("MatMul", centred, [d], name=node.name or graph.fresh("MatMul")),
                  helper.make_node("Mul", [d, graph.constant(f"{node.output[0]}_sa", a[1][0])], [scaled], name=graph.fresh(f"{node.output[0]}_Mul")),
                  helper.make_node("Mul", [scaled, graph.constant(f"{node.output[0]}_sb", b[1][0])], [node.output[0]], name=graph.fresh(f"{node.output[0]}_Mul"))]  # fmt: skip
        count += 1
    if count:
        graph.replace_nodes([n for n in nodes if id(n) not in dropped])
    return count
