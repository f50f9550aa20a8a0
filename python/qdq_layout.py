"""QDQ pairs around layout ops dropped: the Reshape or Transpose moves the codes themselves, the
MaxPool picks among them.

quantize_static quantizes every op's output, the ops that only move values too:

    yq = Q(Reshape(DQ(xq, s, z)), s, z)          (or Transpose), the same s and z

DQ then Q with one scale and zero point gives back each code: v = f32((q - z) * s) is within
half an ulp of (q - z) * s, v / s within about 255 * 2^-23 of q - z, which rounds to q - z
(s finite, not 0, and at most f32's largest / 256, so that (q - z) * s is finite; no
saturation: q is of the type). So yq = Reshape(xq) exactly, as
onnxruntime's QDQ transformer drops such pairs (DropQDQNodesRules). IREE computes each pair on
every element instead (two f32 divisions among them) and, for an attention's Q, K and V,
fuses them into its transposes (docs/iree.md#qdq-matmuls-of-two-activations).

A MaxPool too, where s > 0: DQ is then nondecreasing in the code, so the largest of a window's DQ
values is the DQ of its largest code, and Q gives that code back (its padding is no value in
either form; ONNX's MaxPool takes 8-bit integers from opset 12). IREE pooled the f32 values
through a padded copy of them (docs/iree.md#qdq-convolutions-as-int8-matmuls).

For the llvm-cpu target on the CPUs where dequant.qdq_activation_matmuls runs, this rewrite
writes yq = Reshape(xq) (or the Transpose, or the MaxPool) where the QuantizeLinear is the op's
only reader; the DequantizeLinear stays where something else reads it.
"""

from __future__ import annotations

import numpy as np
import onnx

from .formats import Graph
from .formats.rewrites import default_domain, value_readers
from .qdq_convs import _pair_parameters, static_types
from .qdq_tables import LAYOUT  # default-domain ops that only move values

LARGEST = float(np.finfo(np.float32).max) / 256  # the largest scale whose (q - z) * s stays finite
SELECTIONS = frozenset({"MaxPool"})  # ops whose result is one of their inputs' values: monotone for s > 0


def rewrite(model: onnx.ModelProto, ops: frozenset = LAYOUT | SELECTIONS) -> int:
    """The model's QDQ pairs around layout ops of `ops` dropped in place (the module docstring);
    how many."""
    graph, g = Graph(model), model.graph
    producers = {o: n for n in g.node for o in n.output}
    readers = value_readers(g.node)
    outputs = {v.name for v in g.output}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)

    def pair(node):
        """(the DequantizeLinear the layout op `node` reads, the QuantizeLinear that is its only
        reader), or None."""
        if not (default_domain(node) and node.op_type in ops and node.input and len(node.output) == 1) or node.output[0] in outputs:
            return None
        if node.op_type in SELECTIONS and opset < 12:  # MaxPool of 8-bit integers: opset 12
            return None
        dq, after = producers.get(node.input[0]), readers.get(node.output[0], [])
        if dq is None or not default_domain(dq) or dq.op_type != "DequantizeLinear" or len(dq.input) < 2 or dq.output[0] in outputs:
            return None
        q = after[0] if len(after) == 1 else None
        if q is None or not default_domain(q) or q.op_type != "QuantizeLinear" or len(q.output) != 1:
            return None
        return dq, q

    found = [(node, *got) for node in g.node if (got := pair(node)) is not None]
    if not found:  # no candidate: no shape inference, a pass over the whole model
        return 0
    types = static_types(model)
    gone, stale, count = set(), set(), 0
    for node, dq, q in found:
        back, forth, codes = _pair_parameters(graph, dq), _pair_parameters(graph, q), types.get(dq.input[0])
        if back is None or forth is None or codes is None or not (back[0] == forth[0] and back[1] == forth[1] and back[1].dtype == forth[1].dtype == codes[1]):
            continue
        if abs(float(back[0])) > LARGEST:  # (q - z) * s could overflow to infinity
            continue
        if node.op_type in SELECTIONS and not float(back[0]) > 0:  # DQ nondecreasing: the largest code's value is the largest
            continue
        readers[dq.output[0]].remove(node)
        stale.add(node.output[0])
        node.input[0] = dq.input[0]
        readers.setdefault(dq.input[0], []).append(node)
        node.output[0] = q.output[0]
        gone.add(id(q))
        if not readers[dq.output[0]]:
            gone.add(id(dq))
        count += 1
    if count:
        graph.replace_nodes([n for n in g.node if id(n) not in gone])
        kept = [v for v in g.value_info if v.name not in stale]  # the layout ops' f32 results are gone
        del g.value_info[:]
        g.value_info.extend(kept)
    return count
