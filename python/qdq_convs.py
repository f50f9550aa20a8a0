"""QDQ convolutions handed to IREE's CPU backend as the float convolutions the QDQ graph writes.

IREE 3.13 (torch-mlir) turns a QDQ Conv into an i8 x i8 -> i32 convolution, and its CPU code for
those runs at half the speed of its f32 convolutions of the same shapes (docs/iree.md#qdq-convolutions).
So, on a model with a Conv whose weights are a DequantizeLinear of a constant, for the llvm-cpu
target, before IREE's importer:

- each DequantizeLinear of a constant (weights, int32 biases) read only by Convs becomes its f32
  values, computed as the op does: f32(q - z) * s, one rounding; so does one of a scalar constant
  read only by elementwise arithmetic (ARITHMETIC: an attention's scale, as quantize_static
  writes it), which IREE would otherwise compute at run time and pass to the dispatch that reads
  it as a buffer, where it costs the fused elementwise code its constant
  (docs/iree.md#scalar-constants);
- each DequantizeLinear of a per-tensor QuantizeLinear's output, with the same scale and zero
  point and no MatMul or Gemm among its readers (those stay for dq's integer kernel and IREE's),
  becomes the pair's arithmetic on the QuantizeLinear's input, in f32: round(clip(x / s,
  lo - z, hi - z)) * s, which is (clip(round(x / s) + z, lo, hi) - z) * s exactly (a true
  division, saturation to the zero point's type, round half to even), so its values are the
  pair's, bit for bit. The QuantizeLinear stays where something else reads it.

The model computes what the QDQ graph says, the float convolution of the dequantized values
(docs/semantics.md#qdq-convolutions-through-iree), and IREE fuses each pair into the epilogue
of the convolution before it. The pairs alone are taken on QDQ models without convolutions too
(`has_pairs`: transformer blocks), where IREE fuses them into the dispatches around them.
"""

from __future__ import annotations

import functools

import numpy as np
import onnx
from onnx import helper

from .formats import Graph
from .formats.rewrites import default_domain, inferred_types, value_readers

_8BIT = (np.int8, np.uint8)
# v + 1.5 * 2^23 lies in [2^23, 2^24), where f32's spacing is 1, for |v| < 2^22: the addition rounds
# v half to even (1.5 * 2^23 is even), the subtraction is exact (docs/semantics.md#qdq-convolutions-through-iree).
ROUND = 1.5 * 2**23
# Readers a DequantizeLinear of a scalar constant is folded for: f32 arithmetic, where the folded
# value is the one the op computes (no MatMul, Gemm or Conv: dq's kernels and the Conv rule match
# their DequantizeLinears).
ARITHMETIC = {"Mul", "Div", "Add", "Sub", "Pow"}
_Q_ATTRIBUTES = {"axis"}  # a per-tensor pair ignores its axis; `saturate`, `block_size`, `output_dtype`: left alone


def _scalar(graph: Graph, node: onnx.NodeProto, i: int, default=None):
    """Input i of `node` as a constant of one element, `default` where it is left out, or None
    (not a constant, or more than one element)."""
    if i >= len(node.input) or not node.input[i]:
        return default
    v = graph.value(node.input[i])
    return v if v is not None and v.size == 1 else None


def _pair_parameters(graph: Graph, node: onnx.NodeProto):
    """(s, z) of a per-tensor QuantizeLinear or DequantizeLinear: an f32 scale and an 8-bit zero
    point (uint8 0 where left out), or None."""
    if any(a.name not in _Q_ATTRIBUTES for a in node.attribute):
        return None
    s, z = _scalar(graph, node, 1), _scalar(graph, node, 2, np.zeros((), np.uint8))
    if s is None or z is None or s.dtype != np.float32 or z.dtype not in _8BIT or not np.isfinite(s).all() or s.reshape(()) == 0:
        return None
    return s.reshape(()), z.reshape(())


def activation_parameters(graph: Graph, x_dq: onnx.NodeProto, types: dict, rank: int) -> tuple | None:
    """(xq, sx, zx as xq's type) of a per-tensor 8-bit DequantizeLinear `x_dq` of codes xq of
    static shape and rank `rank` (`types`: inferred (dims, dtype)), or None."""
    xq = x_dq.input[0]
    if xq not in types or types[xq][1] not in _8BIT or len(types[xq][0]) != rank:
        return None
    pair = _pair_parameters(graph, x_dq)
    if pair is None:
        return None
    sx, zx = pair
    if zx.dtype != types[xq][1] and len(x_dq.input) > 2 and x_dq.input[2]:
        return None
    return xq, sx, zx.astype(types[xq][1])


def _weights(graph: Graph, node: onnx.NodeProto) -> np.ndarray | None:
    """The f32 values of a DequantizeLinear of a constant (8-bit or int32; per tensor or per axis
    with a 1-D scale), or None."""
    q = graph.value(node.input[0])
    s = graph.value(node.input[1]) if len(node.input) > 1 else None
    z = graph.value(node.input[2]) if len(node.input) > 2 and node.input[2] else np.zeros((), q.dtype if q is not None else np.int8)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if q is None or s is None or z is None or set(attrs) - {"axis"} or s.dtype != np.float32 or q.dtype not in (*_8BIT, np.int32) or z.dtype != q.dtype:
        return None
    if s.size != 1 or z.size != 1:
        if q.ndim == 0 or s.ndim != 1 or z.shape not in ((), (1,), s.shape):
            return None
        axis = attrs.get("axis", 1)
        if not isinstance(axis, int) or not -q.ndim <= axis < q.ndim or s.size != q.shape[axis]:
            return None
        axis %= q.ndim
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape if z.size > 1 else ())
    else:
        s, z = s.reshape(()), z.reshape(())
    return ((q.astype(np.int64) - z.astype(np.int64)).astype(np.float32) * s).astype(np.float32)


_CONV_ATTRIBUTES = {"group", "kernel_shape", "pads", "strides", "dilations", "auto_pad"}


def static_types(model: onnx.ModelProto) -> dict:
    """Each value's (dims, numpy dtype) where ONNX's shape inference knows them all statically."""
    return {name: (dims, dtype) for name, (dims, dtype) in inferred_types(model).items() if dtype is not None and all(isinstance(d, int) and d > 0 for d in dims)}


def qdq_conv(graph: Graph, node: onnx.NodeProto, producers: dict, readers: dict, types: dict) -> dict | None:
    """What dq's integer convolution routes (dequant.qdq_conv_matmuls, dequant.qdq_depthwise) read
    of `Q(Conv(DQ(xq, sx, zx), DQ(wq, sw, zw), b), sy, zy)`, or None: a 2-D Conv with explicit pads
    and dilations 1, x a per-tensor 8-bit DequantizeLinear of static shape [N, C, H, W] (`types`:
    inferred (dims, dtype)), constant 8-bit weights [Cout, C / group, kh, kw] per tensor or per
    output channel, a bias absent, f32 or a DequantizeLinear of a constant, and the Conv read only
    by a per-tensor 8-bit QuantizeLinear, each sx * sw 0 or a normal f32. The dict: xq, x_dq, sx, zx (xq's type), wq, sw, zw [Cout],
    b [Cout] f32 or None, q (the QuantizeLinear), group, dims, kernel, pads, strides, out (Ho, Wo)."""
    if node.op_type != "Conv" or node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    if set(a) - _CONV_ATTRIBUTES or a.get("auto_pad", b"NOTSET") != b"NOTSET":
        return None
    x_dq, w_dq = producers.get(node.input[0]), producers.get(node.input[1])
    if x_dq is None or w_dq is None or x_dq.op_type != "DequantizeLinear" or w_dq.op_type != "DequantizeLinear":
        return None
    x = activation_parameters(graph, x_dq, types, 4)
    wq = graph.value(w_dq.input[0])
    if x is None or wq is None or wq.dtype not in _8BIT or wq.ndim != 4:
        return None
    xq, sx, zx = x
    cout, _, kh, kw = wq.shape
    n, c, h, w = types[xq][0]
    pads, strides = list(a.get("pads", [0] * 4)), list(a.get("strides", [1, 1]))
    if list(a.get("kernel_shape", [kh, kw])) != [kh, kw] or list(a.get("dilations", [1, 1])) != [1, 1]:
        return None
    if len(pads) != 4 or min(pads) < 0 or len(strides) != 2 or min(strides) < 1:
        return None
    ho, wo = (h + pads[0] + pads[2] - kh) // strides[0] + 1, (w + pads[1] + pads[3] - kw) // strides[1] + 1
    if ho < 1 or wo < 1:
        return None
    sw, zw = weight_parameters(graph, w_dq, wq)
    if sw is None:
        return None
    b = None
    if len(node.input) > 2 and node.input[2]:
        b = f32_values(graph, producers, node.input[2])
        if b is None or b.dtype != np.float32 or b.size != cout:
            return None
    q = readers.get(node.output[0], [])
    if len(q) != 1 or q[0] is None or q[0].op_type != "QuantizeLinear" or q[0].domain not in ("", "ai.onnx") or _pair_parameters(graph, q[0]) is None:
        return None
    with np.errstate(over="ignore", under="ignore"):
        scales = (sx * sw).astype(np.float32)
    if not np.all(np.isfinite(scales) & ((scales == 0) | (np.abs(scales) >= np.finfo(np.float32).tiny))):
        return None  # the kernels' s = f32(sx * sw) is 0 or a normal f32 (docs/semantics.md#the-integer-route-of-qdq-matmuls)
    return dict(xq=xq, x_dq=x_dq, sx=sx, zx=zx, wq=wq, sw=sw, zw=zw, b=b, q=q[0], group=a.get("group", 1),
                dims=(n, c, h, w), kernel=(kh, kw), pads=pads, strides=strides, out=(ho, wo))  # fmt: skip


def f32_values(graph: Graph, producers: dict, name: str) -> np.ndarray | None:
    """The values of `name`: a constant, a DequantizeLinear of a constant (its f32 values, as
    `_weights` computes them), or Mul(Cast<f32>(c), s) of constants c and f32 s (f32(c) * s in
    f32, as ONNX computes it: the per-column bias dequant.formats writes for a QOperator QGemm);
    None for anything else."""
    node = producers.get(name)
    if node is None:
        return graph.value(name)
    if node.op_type == "DequantizeLinear":
        return _weights(graph, node)
    cast = producers.get(node.input[0]) if node.op_type == "Mul" and len(node.input) == 2 else None
    if cast is None or cast.op_type != "Cast" or [(a.name, a.i) for a in cast.attribute] != [("to", onnx.TensorProto.FLOAT)]:
        return None
    c, s = graph.value(cast.input[0]), graph.value(node.input[1])
    if c is None or s is None or s.dtype != np.float32:
        return None
    return c.astype(np.float32) * s


def weight_parameters(graph: Graph, w_dq, wq: np.ndarray, axis: int = 0):
    """(sw [N] f32, zw [N] of wq's type) of the weights' DequantizeLinear, per tensor or per index
    of wq's output axis `axis` (N = wq.shape[axis]: a Conv's Cout, axis 0), or (None, None)."""
    n = wq.shape[axis]
    s = graph.value(w_dq.input[1]) if len(w_dq.input) > 1 else None
    z = graph.value(w_dq.input[2]) if len(w_dq.input) > 2 and w_dq.input[2] else np.zeros((), wq.dtype)
    attrs = {x.name: helper.get_attribute_value(x) for x in w_dq.attribute}
    if s is None or z is None or s.dtype != np.float32 or z.dtype != wq.dtype or set(attrs) - {"axis"} or not np.isfinite(s).all():
        return None, None
    along = attrs.get("axis", 1)
    if not isinstance(along, int):
        return None, None
    if s.size != 1 and (s.ndim != 1 or s.size != n or not -wq.ndim <= along < wq.ndim or along % wq.ndim != axis or z.size not in (1, n)):
        return None, None
    return np.broadcast_to(s.reshape(-1), (n,)).astype(np.float32), np.broadcast_to(z.reshape(-1), (n,)).astype(wq.dtype)


def applies(model: onnx.ModelProto) -> bool:
    """Whether the model has a Conv whose weights are a DequantizeLinear (of opset 13 or later,
    which the rewrite's Round and Clip need too)."""
    g = model.graph
    dq = {n.output[0] for n in g.node if n.op_type == "DequantizeLinear" and n.domain in ("", "ai.onnx") and n.output}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    return opset >= 13 and any(n.op_type == "Conv" and len(n.input) > 1 and n.input[1] in dq for n in g.node)


def has_pairs(model: onnx.ModelProto) -> bool:
    """Whether the model (opset 13 or later) has a QuantizeLinear read by a DequantizeLinear that
    no MatMul or Gemm reads: a pair `rewrite` may take on a model without convolutions too (QDQ
    transformers: IREE fuses the pairs' f32 arithmetic into the dispatches around them;
    docs/iree.md#qdq-pairs-in-transformers)."""
    g = model.graph
    q = {n.output[0] for n in g.node if n.op_type == "QuantizeLinear" and n.domain in ("", "ai.onnx") and n.output}
    matmuls = {v for n in g.node if n.op_type in ("MatMul", "Gemm") for v in n.input}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    return opset >= 13 and any(n.op_type == "DequantizeLinear" and n.input and n.input[0] in q and not set(n.output) & matmuls for n in g.node)


def _made(producers: dict, v: str, op_type: str) -> onnx.NodeProto | None:
    """The node of `op_type` (ONNX's domain) producing `v`, or None."""
    node = producers.get(v)
    return node if node is not None and node.op_type == op_type and default_domain(node) else None


def of_matmul(graph: Graph, producers: dict, y: str) -> bool:
    """Whether `y` is the result of a MatMul of constant weights (B a DequantizeLinear of a
    constant), or one plus a constant bias (f32 or a DequantizeLinear of a constant; the MatMul's
    result directly, or through its own QuantizeLinear and DequantizeLinear, as quantize_static
    writes a bias): a QuantizeLinear of it is the epilogue of dq's QDQ kernel where that kernel
    takes the MatMul."""
    return matmul_of(graph, producers, y) is not None


def matmul_of(graph: Graph, producers: dict, y: str) -> onnx.NodeProto | None:
    """The MatMul `of_matmul` finds `y` the result of, or None."""

    made = functools.partial(_made, producers)

    def weighted(v: str):
        matmul = made(v, "MatMul")
        w = made(matmul.input[1], "DequantizeLinear") if matmul is not None and len(matmul.input) == 2 else None
        return matmul if w is not None and w.input[0] in graph.constants else None

    if (add := made(y, "Add")) is None:
        return weighted(y)
    if len(add.input) != 2:
        return None
    for v, b in (add.input, add.input[::-1]):
        if (dq := made(v, "DequantizeLinear")) is not None and (q := made(dq.input[0], "QuantizeLinear")) is not None:
            v = q.input[0]
        bias = b in graph.constants or ((dq := made(b, "DequantizeLinear")) is not None and dq.input[0] in graph.constants)
        if bias and (matmul := weighted(v)) is not None:
            return matmul
    return None


def of_residual(graph: Graph, producers: dict, y: str, types) -> bool:
    """Whether `y` is a residual Add dq's QDQ kernel may compute in its epilogue after its own
    requantize: Add(DQ(Q(m)), DQ(codes)) in either order, Q(m) a QuantizeLinear of the result of
    a MatMul of constant weights (`of_matmul`; reshaped between Q and DQ or not) whose activation
    is 2-D of static shape (`types()`: static_types, asked only here; the kernel's condition: a
    convolution's im2col'd codes); passes/qdq_matmul.py's `residual` checks the rest."""

    made = functools.partial(_made, producers)

    add = made(y, "Add")
    if add is None or len(add.input) != 2:
        return False
    for own, other in (add.input, add.input[::-1]):
        dq = made(own, "DequantizeLinear")
        v = dq.input[0] if dq is not None else ""
        while (shaped := made(v, "Reshape") or made(v, "Identity")) is not None:
            v = shaped.input[0]
        q = made(v, "QuantizeLinear")
        matmul = matmul_of(graph, producers, q.input[0]) if q is not None and made(other, "DequantizeLinear") is not None else None
        if matmul is not None and len(types().get(matmul.input[0], ((),))[0]) == 2:
            return True
    return False


def rewrite(model: onnx.ModelProto, kernels: bool = False) -> tuple[onnx.ModelProto, int, int]:
    """The model (in place) with its QDQ convolutions' weights and activation pairs in float, as
    the module docstring says; and how many DequantizeLinear of constants and of pairs it took.
    With `kernels` (dq's QDQ kernel takes the CPU's MatMuls), a pair whose QuantizeLinear reads the
    result of a MatMul of constant weights (`of_matmul`), or of a residual Add after one
    (`of_residual`), stays: the kernel computes it in its epilogue, and the pair's
    DequantizeLinear reads the codes it stores."""
    graph = Graph(model)
    g = model.graph
    outputs = {v.name for v in g.output}
    producers = {o: n for n in g.node for o in n.output}
    readers = value_readers(g.node)
    nodes, folded, pairs = [], 0, 0
    types = functools.cache(lambda: static_types(model))  # shape inference, where a residual Add asks
    for node in g.node:
        if node.op_type != "DequantizeLinear" or node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
            nodes.append(node)
            continue
        read_by = readers.get(node.output[0], [])
        constant = graph.constants.get(node.input[0])
        if read_by and node.output[0] not in outputs and constant is not None and (
            all(r.op_type == "Conv" for r in read_by)
            or (int(np.prod(constant.dims)) == 1 and all(r.op_type in ARITHMETIC and r.domain in ("", "ai.onnx") for r in read_by))
        ):
            w = _weights(graph, node)
            if w is not None:
                name = graph.constant(f"{node.output[0]}_f32", w)
                for r in read_by:
                    r.input[:] = [name if v == node.output[0] else v for v in r.input]
                folded += 1
                continue
        quantize = producers.get(node.input[0])
        if quantize is not None and quantize.op_type == "QuantizeLinear" and quantize.domain in ("", "ai.onnx") and not any(
            r.op_type in ("MatMul", "Gemm") for r in read_by
        ) and not (kernels and (of_matmul(graph, producers, quantize.input[0]) or of_residual(graph, producers, quantize.input[0], types))):
            dq, q = _pair_parameters(graph, node), _pair_parameters(graph, quantize)
            if dq is not None and q is not None and dq[0] == q[0] and dq[1] == q[1] and dq[1].dtype == q[1].dtype:
                nodes.extend(_pair(graph, quantize.input[0], *q, node))
                pairs += 1
                continue
        nodes.append(node)
    read = {v for n in nodes for v in n.input} | outputs
    nodes = [n for n in nodes if n.op_type != "QuantizeLinear" or any(o in read for o in n.output)]
    graph.replace_nodes(nodes)
    return model, folded, pairs


def _pair(graph: Graph, x: str, s: np.ndarray, z: np.ndarray, node: onnx.NodeProto) -> list:
    """QuantizeLinear(x, s, z) then DequantizeLinear in f32, into `node`'s output: v = x / s
    clipped to [lo - z, hi - z] (saturation, before rounding: the bounds are integers), rounded
    half to even by adding and subtracting 1.5 * 2^23 (IREE's Round costs more), times s."""
    info = np.iinfo(z.dtype)
    hint = node.output[0]
    scale = graph.constant(f"{hint}_scale", s.astype(np.float32))
    lo, hi, magic = (graph.constant(f"{hint}_{what}", np.float32(v)) for what, v in (("min", info.min - int(z)), ("max", info.max - int(z)), ("round", ROUND)))
    steps = [("Div", [x, scale]), ("Clip", [None, lo, hi]), ("Add", [None, magic]), ("Sub", [None, magic]), ("Mul", [None, scale])]
    out, prev = [], None
    for i, (op, inputs) in enumerate(steps):
        inputs = [prev if v is None else v for v in inputs]
        result = node.output[0] if i == len(steps) - 1 else graph.fresh(f"{hint}_{op.lower()}")
        out.append(helper.make_node(op, inputs, [result], name=graph.fresh(f"{node.name or hint}_{op}")))
        prev = result
    return out
