"""What every format module of dequant.formats shares: `REWRITES` (the one table, (domain, op
type) -> the function that rewrites one such node) and `MIN_OPSET`, which each module fills when
imported; the `Graph` a rewrite reads and adds to; `FormatError`. Kept apart from the package's
`__init__`, which imports every format module, so that no module imports its own importer."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS = "com.microsoft"


class FormatError(ValueError):
    """A node of a format the stage cannot take: one line, naming the node and the rule."""

    def __init__(self, node: onnx.NodeProto, rule: str):
        super().__init__(f"{node.op_type} node '{node.name or node.output[0]}': {rule}")


@dataclass
class Graph:
    """A model's top-level graph while it is rewritten: its constants by name, fresh names, the
    initializers the rewrites add, and the default domain's opset."""

    model: onnx.ModelProto
    constants: dict = field(default_factory=dict)  # name -> TensorProto (initializers, Constant nodes)
    added: list = field(default_factory=list)  # TensorProto initializers the rewrites made
    _names: set = field(default_factory=set)
    _count: itertools.count = field(default_factory=itertools.count)

    def __post_init__(self):
        g = self.model.graph
        self.constants = {t.name: t for t in g.initializer}
        for n in g.node:
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
                value = next((a.t for a in n.attribute if a.name == "value"), None)
                if value is not None:
                    self.constants[n.output[0]] = value
        self._names = {v for n in g.node for v in (*n.input, *n.output)} | set(self.constants)
        self._names |= {v.name for v in (*g.input, *g.output)}
        self._producers = {v: n for n in g.node for v in n.output}
        self.folded = []  # the shape ops `value` read through (a rewrite may leave them unread)

    @property
    def opset(self) -> int:
        return next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")), 1)

    def value(self, name: str) -> np.ndarray | None:
        """The values of a constant input (an initializer or a Constant node's, or a `Reshape` or
        `Identity` of one: the genai builder's tied embedding reads lm_head's weights through a
        Reshape), or None."""
        t = self.constants.get(name)
        if t is not None:
            try:
                return numpy_helper.to_array(t, base_dir="")
            except (TypeError, ValueError, KeyError):  # an element type onnx does not know, bytes of the wrong size
                return None  # not a constant the rewrites read: the importer names what is wrong
        node = self._producers.get(name)
        if node is None or node.domain not in ("", "ai.onnx") or node.op_type not in _FOLDED:
            return None
        inputs = [self.value(v) if v else None for v in node.input]
        if any(v is None for v in inputs):
            return None
        data = inputs[0]
        if node.op_type == "Reshape":
            zero_is_zero = any(a.name == "allowzero" and a.i for a in node.attribute)
            dims = [int(d) if d != 0 or zero_is_zero else data.shape[i] for i, d in enumerate(inputs[1].reshape(-1))]
            try:
                data = data.reshape(dims)
            except ValueError:
                return None  # the Reshape is wrong: the model fails where ONNX says it does
        self.folded.append(node)
        return data

    def fresh(self, hint: str) -> str:
        """A value or node name not yet used in the graph."""
        while (name := f"{hint}_dq{next(self._count)}") in self._names:
            pass
        self._names.add(name)
        return name

    def replace_nodes(self, nodes: list) -> None:
        """The graph's nodes become `nodes`; its initializers those they read, the rewrites'
        (`added`) included, and no other."""
        g = self.model.graph
        read = {v for n in nodes for v in n.input}
        kept = [t for t in g.initializer if t.name in read]
        del g.node[:]
        g.node.extend(nodes)
        del g.initializer[:]
        g.initializer.extend(kept + [t for t in self.added if t.name in read])

    def constant(self, hint: str, array: np.ndarray) -> str:
        """A new initializer holding `array` (ml_dtypes sub-byte arrays are packed as ONNX
        stores them): its name."""
        name = self.fresh(hint)
        t = numpy_helper.from_array(array, name)
        self.added.append(t)
        self.constants[name] = t
        return name


def value_readers(nodes) -> dict[str, list]:
    """Each value's readers among `nodes`, in their order (a node reading a value twice is listed
    twice; "" collects the optional inputs left out)."""
    out: dict[str, list] = {}
    for n in nodes:
        for v in n.input:
            out.setdefault(v, []).append(n)
    return out


def default_domain(node: onnx.NodeProto) -> bool:
    """Whether `node` is of ONNX's default domain ("" or its name "ai.onnx")."""
    return node.domain in ("", "ai.onnx")


def inferred_types(model: onnx.ModelProto) -> dict:
    """Each value's (dims, numpy dtype or None) as far as ONNX's shape inference knows them (a dim
    an int, a name or None); {} for a model shape inference cannot take (its rewrites then keep
    what needs a shape)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - onnx raises several kinds for a model it cannot infer
        return {}
    out = {}
    for v in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output):
        t = v.type.tensor_type
        if t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
            out[v.name] = (dims, _np_dtype(t.elem_type))
    return out


def _np_dtype(elem_type: int):
    """numpy's dtype of an ONNX element type, or None (undefined, or a number onnx does not know)."""
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type) if elem_type else None
    except KeyError:
        return None


_FOLDED = ("Reshape", "Identity")  # shape ops `Graph.value` reads constants through

Rewrite = Callable[[onnx.NodeProto, Graph], list]

# (domain, op type) -> rewrite. The default domain is "" (onnxruntime also registers some contrib
# ops there, e.g. SimplifiedLayerNormalization, and exporters write them so).
REWRITES: dict[tuple[str, str], Rewrite] = {}

# (domain, op type) -> the default-domain opset its rewrite's nodes need (a blocked int4
# DequantizeLinear is opset 21): a model below it is converted first (onnx.version_converter).
MIN_OPSET: dict[tuple[str, str], int] = {}
