"""The quantized formats a model arrives in, normalised at the ONNX level before IREE's importer.

One front door per format: onnxruntime's contrib ops (com.microsoft `MatMulNBits`,
`GatherBlockQuantized`, the QOperator ops, ...) and the companions its exporters write beside
them become standard ONNX (`DequantizeLinear`, `MatMul`, ...) of the forms the dq stage already
takes, so every format reaches the one canonical form (`dq.dequantize`) and the one lowering.

`REWRITES` is the one table: (domain, op type) -> the function that rewrites one such node.
Each function lives in a module of this package named after its format, takes the node and the
`Graph` it is in, and returns the nodes that stand for it (the node's outputs keep their names);
a node it cannot take raises `FormatError` naming the node and the rule. `normalise` applies the
table to a model's top-level graph. Scope and decisions: docs/iree.md#model-formats.
"""

from __future__ import annotations

import onnx
from onnx import numpy_helper

from .rewrites import MIN_OPSET, MS, REWRITES, FormatError, Graph  # noqa: F401 (the package's names)


def _key(node: onnx.NodeProto) -> tuple[str, str]:
    return ("" if node.domain == "ai.onnx" else node.domain, node.op_type)


# Element types IREE's importer (3.13) reads only from `raw_data`: stored in the typed fields
# (`int32_data`, as onnx.helper.make_tensor writes them by default) it stops with "Unhandled ONNX
# TensorProto data" (docs/iree.md#model-formats).
_RAW_ONLY = frozenset(
    getattr(onnx.TensorProto, name) for name in ("FLOAT16", "BFLOAT16", "INT4", "UINT4", "FLOAT4E2M1", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                                 "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "INT2", "UINT2") if hasattr(onnx.TensorProto, name)
)  # fmt: skip


def _typed_fields(model: onnx.ModelProto) -> list:
    """The top-level initializers and Constant values of a type IREE's importer reads only from
    `raw_data`, stored in the typed fields."""
    tensors = [*model.graph.initializer, *(a.t for n in model.graph.node if n.op_type == "Constant" for a in n.attribute if a.name == "value")]
    return [t for t in tensors if t.data_type in _RAW_ONLY and not t.HasField("raw_data") and t.data_location != onnx.TensorProto.EXTERNAL]


def needs_rewrite(model: onnx.ModelProto) -> bool:
    """Whether any node of the model's top-level graph is one the table rewrites, or a tensor is
    stored where IREE's importer does not read it."""
    return any(_key(n) in REWRITES for n in model.graph.node) or bool(_typed_fields(model))


def normalise(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict]:
    """The model with every top-level node the table knows rewritten (in place), and its tensors
    in `raw_data`; and how many nodes of each (domain, op type) were. Raises FormatError for a
    node no rewrite takes."""
    for t in _typed_fields(model):
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
    _raise_opset(model)
    graph = Graph(model)
    nodes, counts, replaced = [], {}, set()
    for node in model.graph.node:
        rewrite = REWRITES.get(_key(node))
        if rewrite is None:
            nodes.append(node)
            continue
        nodes.extend(rewrite(node, graph))
        counts[_key(node)] = counts.get(_key(node), 0) + 1
        replaced.update(node.input)
    # A shape op a rewrite read its constant through, now unread: dropped, with its inputs.
    outputs = {v.name for v in model.graph.output}
    for node in reversed(graph.folded):
        if node in nodes and not set(node.output) & (outputs | {v for n in nodes for v in n.input}):
            nodes = [n for n in nodes if n is not node]
            replaced.update(node.input)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    # The rewritten nodes' initializers no node reads any more (a MatMulNBits' packed B, re-laid):
    # dropped, so the model holds its weights once.
    dead = replaced - _read(model.graph) - {v.name for v in (*model.graph.input, *model.graph.output)}
    kept = [t for t in model.graph.initializer if t.name not in dead]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + graph.added)
    return model, counts


def _raise_opset(model: onnx.ModelProto) -> None:
    """Convert the model (in place) to the default-domain opset its rewrites need, if it is lower.
    The converter sees the initializers as external-data stubs (their values are not its business,
    and a model of 2 GB would not pass through its serialization); they are put back after."""
    from onnx import TensorProto, version_converter

    have = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    needs = [(MIN_OPSET[_key(n)], n) for n in model.graph.node if _key(n) in MIN_OPSET]
    if not needs or max(v for v, _ in needs) <= have:
        return
    want, node = max(needs, key=lambda vn: vn[0])
    g = model.graph
    originals = list(g.initializer)
    del g.initializer[:]
    try:
        stubbed = onnx.ModelProto()
        stubbed.CopyFrom(model)
    finally:
        g.initializer.extend(originals)
    for t in originals:
        stub = stubbed.graph.initializer.add(name=t.name, data_type=t.data_type, dims=t.dims, data_location=TensorProto.EXTERNAL)
        stub.external_data.add(key="location", value="dequant-stub")
    try:
        converted = version_converter.convert_version(stubbed, want)
    except Exception as e:  # the converter's ConvertError and friends
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise FormatError(node, f"the model's default opset is {have}; its rewrite needs {want}, and onnx's version converter failed: {first}") from None
    by_name = {t.name: t for t in originals}
    tensors = [by_name.get(t.name, t) for t in converted.graph.initializer]
    del converted.graph.initializer[:]
    converted.graph.initializer.extend(tensors)
    model.CopyFrom(converted)


def _read(graph: onnx.GraphProto) -> set:
    """Every value name the nodes of a graph and of its subgraphs read."""
    names = set()
    for node in graph.node:
        names.update(node.input)
        for a in node.attribute:
            for g in (*([a.g] if a.HasField("g") else []), *a.graphs):
                names |= _read(g)
    return names


# Each format's module registers its rows of REWRITES when imported.
from . import attention, gather_block_quantized, matmul_nbits, normalization, qoperator  # noqa: E402,F401
