"""QDQ convolutions as QDQ MatMuls of their im2col'd int8 activation, for dq's exact int8 kernel.

dq's integer kernel for QDQ MatMuls (passes/kernels/qdq.py with AVX-512 VNNI, qdq_avxvnni.py
with AVX-VNNI, qdq_avx2.py with AVX2) computes sum((xq - zx) * (wq - zw)) exactly in i32 and requantizes in its epilogue; IREE
3.13 runs a QDQ Conv as an f32 convolution at best (dequant.qdq_convs), and those took nine
tenths of a ResNet's time (docs/iree.md#qdq-convolutions-as-int8-matmuls). So, for the llvm-cpu
target on a CPU whose tags take that kernel, before dequant.qdq_convs, a Conv

    Q(Conv(DQ(xq, sx, zx), DQ(wq, sw, zw), b), sy, zy)

(2-D, `group` 1, dilations 1, explicit pads; x per tensor 8-bit of static shape [N, C, H, W];
constant 8-bit weights per tensor or per output channel; a bias absent, f32 or a DequantizeLinear
of a constant; the Conv read only by a per-tensor 8-bit QuantizeLinear) of any number of output
channels becomes

    P = dequant.Im2col(xq in NHWC, zx)  [N * Ho * Wo, K]   the codes, K = kh * kw * C
                                                (tap-major), padded with zx to a multiple of 16
    q = Q(MatMul(DQ(P, sx, zx), DQ(W, sw, zw)) + b, sy, zy)   W [K, Cout]: wq's rows, the
                                                padding rows zw (they add 0)
    Transpose(Reshape(q, [N, Ho, Wo, Cout]), [0, 3, 1, 2])

which the stage's QDQ MatMul route takes whole (docs/semantics.md#qdq-convolutions-as-int8-matmuls).
dequant.Im2col is the stage's own node (attributes kernel_shape, strides, pads and columns, K
padded; torch-onnx-dq-im2col-iree-cpu makes it one dispatch of dq's im2col kernel,
passes/kernels/im2col.py): the padded codes' rows under each output position's taps, then zx up
to K; a 1 x 1 Conv of stride 1 whose K needs no padding is a Reshape instead. Padding with the
code zx is padding with 0 after DequantizeLinear, as the Conv pads; every product of the Conv is
a product of the MatMul, so the integer sum is the Conv's exact sum.
Any Cout: the kernel takes any N (its column tail, passes/kernels/tail.py), and the MobileNets' 1 x 1
convolutions of 16 to 320 channels run faster through it, the model as a whole too; a minimum K
(keeping the stems and the narrowest 1 x 1 convolutions float) was slower, its NCHW transposes
costing more than it saved (docs/iree.md#qdq-convolutions-as-int8-matmuls).
The QDQ depthwise Convs dq's depthwise kernel takes become its node on NHWC codes in the same
pass (python/qdq_depthwise.py), so the codes stay NHWC through them too.
Then each NCHW Transpose of NHWC codes moves after the per-tensor elementwise ops reading it
(the pairs, the residual Adds) and after a MaxPool of codes (which becomes dequant.NhwcMaxPool,
torch-onnx-dq-maxpool-iree-cpu's), and the next im2col reads the NHWC codes themselves: IREE
fuses a transpose into the elementwise dispatch reading it as strided reads
(docs/iree.md#qdq-convolutions-as-int8-matmuls). A per-tensor QuantizeLinear of an f32 image
(C <= 8: a model's input) read by those NHWC Transposes alone becomes dequant.NhwcQuantizeLinear
(torch-onnx-dq-quantize-iree-cpu's), its codes NHWC as the first im2col reads them, where IREE
fused the QuantizeLinear into a transpose dispatch of strided byte stores
(docs/iree.md#the-input-quantizelinear).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from dequant.passes.kernels.nhwc_quantize import MOST_CHANNELS
from dequant.passes.kernels.routes import qdq_kernel
from dequant.passes.kernels.target import Target
from dequant.passes.torch_onnx_to_dq_iree import MIN_INTEGER_MACS

from . import qdq_depthwise
from .formats import Graph
from .formats.emit import Emit
from .formats.rewrites import value_readers
from .qdq_convs import qdq_conv, static_types

IM2COL = "Im2col"  # the stage's own node (in qdq_depthwise.DOMAIN), torch-onnx-dq-im2col-iree-cpu's
NHWC_MAXPOOL = "NhwcMaxPool"  # the stage's own node too, torch-onnx-dq-maxpool-iree-cpu's
NHWC_QUANTIZE = "NhwcQuantizeLinear"  # and torch-onnx-dq-quantize-iree-cpu's
K_MULTIPLE = 16  # K padded to a multiple of every kernel's K step (VNNI 4, AVX2 16)
NHWC, NCHW = qdq_depthwise.NHWC, qdq_depthwise.NCHW
# elementwise ops a Transpose to NCHW sinks through, where their other inputs are scalars
_SINKS = ("DequantizeLinear", "QuantizeLinear", "Add", "Relu")


def kernel(tags) -> type | None:
    """dq's QDQ MatMul kernel on a CPU of dq-target-features `tags` (the routes' choice), or None
    (no integer kernel: the convolutions stay for dequant.qdq_convs)."""
    return qdq_kernel(Target.tagged(tags))


def _form(graph: Graph, node, producers: dict, readers: dict, types: dict):
    """What the rewrite needs of a Conv it takes (a dict), or None (the Conv stays)."""
    f = qdq_conv(graph, node, producers, readers, types)
    if f is None or f["group"] != 1 or f["wq"].shape[1] != f["dims"][1]:
        return None
    cout, c, kh, kw = f["wq"].shape
    (ho, wo), n = f["out"], f["dims"][0]
    k = kh * kw * c
    kp = -(-k // K_MULTIPLE) * K_MULTIPLE
    if n * ho * wo * kp * cout < MIN_INTEGER_MACS:
        return None  # the kernel would refuse it (docs/iree.md#qdq-models)
    d = np.abs(f["wq"].astype(np.int64) - f["zw"].reshape(-1, 1, 1, 1).astype(np.int64)).reshape(cout, -1).sum(axis=1).max()
    if 255 * int(d) >= 1 << 31:
        return None
    return dict(f, kp=kp)


def rewrite(model: onnx.ModelProto, tags) -> tuple[onnx.ModelProto, int]:
    """The model (in place) with the QDQ Convs the module docstring says as QDQ MatMuls, and the
    QDQ depthwise ones dq's depthwise kernel takes as its node, for a CPU of dq-target-features
    `tags`; and how many of both."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    if kernel(tags) is None or opset < 13 or not any(n.op_type == "Conv" for n in model.graph.node):
        return model, 0
    g = model.graph
    graph = Graph(model)
    types = static_types(model)
    producers = {o: n for n in g.node for o in n.output}
    readers = value_readers(g.node)
    for v in g.output:  # a graph output: read outside the graph
        readers.setdefault(v.name, []).append(None)
    forms = {id(n): f for n in g.node if (f := _form(graph, n, producers, readers, types)) is not None}
    depthwise = {id(n): f for n in g.node if (f := qdq_depthwise.form(graph, n, producers, readers, types)) is not None}
    if not forms and not depthwise:
        return model, 0
    gone = {id(f["q"]) for f in (*forms.values(), *depthwise.values())}
    nodes = []
    for node in g.node:
        if id(node) in forms:
            nodes.extend(_matmul(graph, node, forms[id(node)]))
        elif id(node) in depthwise:
            nodes.extend(qdq_depthwise.nodes(graph, node, depthwise[id(node)]))
        elif id(node) not in gone:
            nodes.append(node)
    outputs = {v.name for v in g.output}
    nodes = _quantized(graph, _live(_sink(graph, nodes, outputs, types), outputs), outputs, types)
    if any(n.domain == qdq_depthwise.DOMAIN for n in nodes):
        qdq_depthwise.declare(model)
    graph.replace_nodes(_live(nodes, outputs))
    return model, len(forms) + len(depthwise)


def _matmul(graph: Graph, node, f: dict) -> list:
    """The nodes computing the Conv's QuantizeLinear's output as the module docstring says."""
    hint = node.output[0]
    n, c, h, w = f["dims"]
    kh, kw = f["kernel"]
    (ho, wo), (sh, sv), pads, kp = f["out"], f["strides"], f["pads"], f["kp"]
    cout, k = f["wq"].shape[0], kh * kw * c
    e = Emit(node, graph)  # the nodes, named after the Conv

    zx = graph.constant(f"{hint}_zx", f["zx"].reshape(()))
    x = e.op("Transpose", f["xq"], perm=NHWC)  # cancelled where xq is an NCHW view of NHWC codes (_sink)
    if (kh, kw, sh, sv) == (1, 1, 1, 1) and not any(pads) and kp == k:
        rows = e.op("Reshape", x, e.ints(n * ho * wo, k))
    else:  # [N * Ho * Wo, kp]: tap-major, padded with zx (passes/kernels/im2col.py)
        rows = graph.fresh(f"{hint}_rows")
        e.nodes.append(helper.make_node(IM2COL, [x, zx], [rows], name=graph.fresh(f"{e.hint}/{IM2COL}"), domain=qdq_depthwise.DOMAIN,
                                        kernel_shape=[int(kh), int(kw)], strides=[int(sh), int(sv)], pads=[int(p) for p in pads], columns=int(kp)))  # fmt: skip
        elem = helper.np_dtype_to_tensor_dtype(f["zx"].dtype)
        graph.model.graph.value_info.append(helper.make_tensor_value_info(rows, elem, [n * ho * wo, kp]))
    a = e.op("DequantizeLinear", rows, *f["x_dq"].input[1:3])
    wq, zw = f["wq"], f["zw"]
    wmat = np.full((kp, cout), zw, wq.dtype)  # padding rows: zw, which the kernel's wq - zw makes 0
    wmat[:k] = wq.transpose(2, 3, 1, 0).reshape(k, cout)  # row (i * kw + j) * C + c
    b_dq = e.op("DequantizeLinear", graph.constant(f"{hint}_w", wmat), graph.constant(f"{hint}_sw", f["sw"]), graph.constant(f"{hint}_zw", zw), axis=1)
    y = e.op("MatMul", a, b_dq)
    if f["b"] is not None:
        y = e.op("Add", y, graph.constant(f"{hint}_b", f["b"].reshape(cout).astype(np.float32)))
    q = f["q"]
    qy = e.op("QuantizeLinear", y, *q.input[1:], **{x.name: helper.get_attribute_value(x) for x in q.attribute})
    nhwc = e.op("Reshape", qy, e.ints(n, ho, wo, cout))
    e.op("Transpose", nhwc, out=q.output[0], perm=NCHW)
    return e.nodes


def _perm(node) -> list | None:
    return list(helper.get_attribute_value(node.attribute[0])) if node.op_type == "Transpose" and len(node.attribute) == 1 else None


def _sink(graph: Graph, nodes: list, outputs: set, types: dict) -> list:
    """`nodes` with each NCHW Transpose of NHWC codes moved after the elementwise ops that read
    it (per-tensor Quantize- and DequantizeLinear, Add of two such views, Relu) and the MaxPools
    of codes (as dequant.NhwcMaxPool, `_pooled`), and each NHWC Transpose of such a view read from
    the NHWC tensor itself: a rewritten Conv's result reaches the next one's im2col, and the
    residual Adds between them, without a transpose (IREE fuses one into the elementwise dispatch
    that reads it, as strided reads)."""
    producers = {o: n for n in nodes for o in n.output}
    out = []
    for node in nodes:
        views = [producers.get(v) for v in node.input]
        if node.op_type == "Transpose" and _perm(node) == NHWC and views[0] is not None and _perm(views[0]) == NCHW:
            node = helper.make_node("Identity", [views[0].input[0]], list(node.output), name=node.name)
        elif (pooled := _pooled(graph, node, views, types, outputs)) is not None:
            out.append(pooled)
            producers[pooled.output[0]] = pooled
            node = helper.make_node("Transpose", [pooled.output[0]], [node.output[0]], name=graph.fresh(f"{node.name or node.output[0]}_Transpose"), perm=NCHW)
        elif node.op_type in _SINKS and node.domain in ("", "ai.onnx") and node.output[0] not in outputs and views and _sinks(graph, node, views):
            inner = graph.fresh(f"{node.output[0]}_nhwc")
            moved = helper.make_node(node.op_type, [v.input[0] if v is not None and _perm(v) == NCHW else i for v, i in zip(views, node.input)],
                                     [inner], name=node.name, domain=node.domain)  # fmt: skip
            moved.attribute.extend(node.attribute)
            back = helper.make_node("Transpose", [inner], [node.output[0]], name=graph.fresh(f"{node.name or inner}_Transpose"), perm=NCHW)
            out.append(moved)
            producers[inner] = moved
            node = back
        out.append(node)
        for o in node.output:
            producers[o] = node
    return out


def _live(nodes: list, outputs: set) -> list:
    """`nodes` less the DequantizeLinear and Transpose nodes nothing reads (the Convs' own
    DequantizeLinear nodes, the Transposes _sink left), as long as there are any."""
    while True:
        read = {v for n in nodes for v in n.input} | outputs
        kept = [n for n in nodes if n.op_type not in ("DequantizeLinear", "Transpose") or any(o in read for o in n.output)]
        if len(kept) == len(nodes):
            return nodes
        nodes = kept


def _quantized(graph: Graph, nodes: list, outputs: set, types: dict) -> list:
    """`nodes` with each per-tensor QuantizeLinear of constant parameters of an f32 image [N, C,
    H, W] (C <= MOST_CHANNELS: a CNN's input) that only NHWC Transposes read (the rewritten
    convolutions' im2col) as a dequant.NhwcQuantizeLinear of NHWC codes, which those read
    instead (as Identities); its result's type recorded."""
    readers = value_readers(nodes)
    swapped = {}
    for node in nodes:
        if node.op_type != "QuantizeLinear" or node.domain not in ("", "ai.onnx") or len(node.output) != 1 or node.output[0] in outputs:
            continue
        after = readers.get(node.output[0], [])
        if not after or any(n.op_type != "Transpose" or _perm(n) != NHWC for n in after) or any(a.name not in ("axis", "saturate") for a in node.attribute):
            continue
        scale, zero = graph.value(node.input[1]), node.input[2] if len(node.input) > 2 else ""
        if scale is None or scale.size != 1 or scale.dtype != np.float32 or zero and (graph.value(zero) is None or graph.value(zero).size != 1):
            continue
        (dims, dtype), code = types.get(node.input[0], ((), None)), types.get(node.output[0], ((), None))[1]
        if dtype != np.float32 or len(dims) != 4 or dims[1] > MOST_CHANNELS or code not in (np.int8, np.uint8):
            continue
        n, c, h, w = dims
        inner = graph.fresh(f"{node.output[0]}_nhwc")
        graph.model.graph.value_info.append(helper.make_tensor_value_info(inner, helper.np_dtype_to_tensor_dtype(np.dtype(code)), [n, h, w, c]))
        swapped[id(node)] = helper.make_node(NHWC_QUANTIZE, list(node.input), [inner], name=node.name, domain=qdq_depthwise.DOMAIN)
        for t in after:
            swapped[id(t)] = helper.make_node("Identity", [inner], list(t.output), name=t.name)
    return [swapped.get(id(n), n) for n in nodes]


def _pooled(graph: Graph, node, views: list, types: dict, outputs: set):
    """The dequant.NhwcMaxPool of the NHWC codes an ONNX MaxPool of 8-bit codes reads through an
    NCHW Transpose (2-D windows, no dilation, floor rounding, explicit pads less than the window:
    passes/kernels/maxpool.py), its NHWC result's type recorded; or None."""
    if node.op_type != "MaxPool" or node.domain not in ("", "ai.onnx") or len(node.output) != 1 or node.output[0] in outputs:
        return None
    if not views or views[0] is None or _perm(views[0]) != NCHW or node.input[0] not in types or node.output[0] not in types:
        return None
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    (n, c, h, w), dtype = types[node.input[0]]
    shape = list(a.get("kernel_shape", []))
    if dtype not in (np.int8, np.uint8) or len(shape) != 2 or set(a) - {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "storage_order"}:
        return None
    strides, pads = list(a.get("strides", [1, 1])), list(a.get("pads", [0] * 4))
    if any(d != 1 for d in a.get("dilations", [1, 1])) or a.get("ceil_mode", 0) or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        return None
    if len(strides) != 2 or len(pads) != 4 or max(pads[0], pads[2]) >= shape[0] or max(pads[1], pads[3]) >= shape[1]:
        return None
    ho, wo = types[node.output[0]][0][2:]
    inner = graph.fresh(f"{node.output[0]}_nhwc")
    graph.model.graph.value_info.append(helper.make_tensor_value_info(inner, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [n, ho, wo, c]))
    return helper.make_node(NHWC_MAXPOOL, [views[0].input[0]], [inner], name=node.name, domain=qdq_depthwise.DOMAIN,
                            kernel_shape=shape, strides=strides, pads=pads)  # fmt: skip


def _sinks(graph: Graph, node, views: list) -> bool:
    """Whether `node` reads NCHW views (the first input, and for Add both) and scalars else."""
    tensors = (0, 1) if node.op_type == "Add" else (0,)
    if len(node.output) != 1 or any(i >= len(views) or views[i] is None or _perm(views[i]) != NCHW for i in tensors):
        return False
    if node.op_type in ("DequantizeLinear", "QuantizeLinear") and any(a.name not in ("axis", "saturate") for a in node.attribute):
        return False
    rest = [v for i, v in enumerate(node.input) if i not in tensors and v]
    return all((c := graph.value(v)) is not None and c.size == 1 for v in rest)
