"""com.microsoft `MatMulNBits`: the weight format of onnxruntime's int4 LLMs (its genai model
builder, Olive, transformers.js q4), rewritten into the standard ONNX the dq stage takes fast.

    y = A @ dequant(B)^T (+ bias),   dequant(B)[n, k] = (q[n, k] - zp[n, k / block]) * scale[n, k / block]

B is [N, ceil(K / block), block * bits / 8] bytes, N-major, the codes packed low bits first;
scales [N * blocks] (or [N, blocks]); zero points packed uint8 codes (each column's row of
blocks padded to whole bytes; 2^(bits - 1) when absent) or of the scales' type; `g_idx` [K]
the block of each row of K (act-order); bias [N]. onnxruntime's CPU kernel at accuracy_level 0
computes exactly that with f32 sums, for f16 scales too (A and the dequantized weights widened
to f32, the output rounded to f16 once: measured against its kernel, docs/iree.md#model-formats).

The rewrite re-lays the weights once, at rewrite time, as a [K, N] initializer of the standard
sub-byte types (int4/uint4 stay two per byte) and emits

    [Cast f32] -> [Pad and Gather of A's last axis, for g_idx] -> MatMul(A, DequantizeLinear(w, s, z,
    axis 0, block) [- DequantizeLinear(ConstantOfShape(1), z * s, axis 0, block), for fractional
    float zero points]) [+ bias] [-> Cast back]

so every form reaches dq's exact matmul kernel. accuracy_level is ignored: the stage is exact
unless `--int8-activations` asks otherwise.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper

from .rewrites import MIN_OPSET, MS, REWRITES, FormatError, Graph

OPSET = 21  # DequantizeLinear with block_size, and int4/uint4 weights

_FLOATS = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(ml_dtypes.bfloat16): "bf16"}
_ONNX_TYPE = {"f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}


def _attr(node: onnx.NodeProto, name: str, default=None):
    a = next((a for a in node.attribute if a.name == name), None)
    return default if a is None else helper.get_attribute_value(a)


def unpack_codes(data: np.ndarray, bits: int) -> np.ndarray:
    """The unsigned codes of bytes packing 8 / bits of them each, low bits first: the last axis
    grows by 8 / bits."""
    per = 8 // bits
    shifts = np.arange(per, dtype=np.uint8) * bits
    codes = (data[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(*data.shape[:-1], data.shape[-1] * per)


def _input(node: onnx.NodeProto, i: int) -> str:
    return node.input[i] if len(node.input) > i else ""


def _constant(node: onnx.NodeProto, graph: Graph, i: int, what: str) -> np.ndarray | None:
    name = _input(node, i)
    if not name:
        return None
    value = graph.value(name)
    if value is None:
        raise FormatError(node, f"its {what} '{name}' is not a constant of the model (an initializer or a Constant): the stage re-lays it when it compiles")
    return value


def _check_size(node, what: str, value: np.ndarray, want: int, how: str) -> None:
    if value.size != want:
        raise FormatError(node, f"its {what} holds {value.size} elements, {how} need {want}")


def act_order(node, g_idx: np.ndarray, k: int, block: int, blocks: int) -> tuple[np.ndarray, int] | None:
    """For act-order `g_idx` (the block of each row of K): (order, width), the rows of K in block
    order, each block `width` rows long, and K (a zero row of A) where a block has fewer rows; or
    None when g_idx is the identity (k / block). GPTQ's act-order gives every block `block` rows:
    the order is then a permutation of K and width = block; uneven blocks are padded to the
    largest (rounded up to even: dq's kernel takes even blocks)."""
    g_idx = g_idx.reshape(-1).astype(np.int64)
    if g_idx.size != k:
        raise FormatError(node, f"its g_idx holds {g_idx.size} elements, K = {k} needs {k}")
    if g_idx.size and (g_idx.min() < 0 or g_idx.max() >= blocks):
        bad = int(g_idx[(g_idx < 0) | (g_idx >= blocks)][0])
        raise FormatError(node, f"its g_idx holds {bad}, outside the {blocks} blocks [0, {blocks})")
    want = np.arange(k) // block
    if np.array_equal(g_idx, want):
        return None
    order = np.argsort(g_idx, kind="stable")
    counts = np.bincount(g_idx, minlength=blocks)
    if np.array_equal(counts, np.bincount(want, minlength=blocks)):
        return order, block
    width = int(counts.max()) + int(counts.max()) % 2
    padded = np.full((blocks, width), k, np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for b in range(blocks):
        padded[b, : counts[b]] = order[starts[b] : starts[b] + counts[b]]
    return padded.reshape(-1), width


def matmul_nbits(node: onnx.NodeProto, graph: Graph) -> list:
    """MatMulNBits -> DequantizeLinear (blocked along K) + MatMul, weights re-laid [K, N]."""
    k, n = _attr(node, "K"), _attr(node, "N")
    bits, block = _attr(node, "bits", 4), _attr(node, "block_size")
    if k is None or n is None or block is None:
        raise FormatError(node, "it lacks one of its required attributes K, N and block_size")
    if bits not in (2, 4, 8):
        raise FormatError(node, f"bits {bits}: MatMulNBits takes bits 2, 4 or 8")
    if k < 1 or n < 1:
        raise FormatError(node, f"K = {k} and N = {n} must be positive")
    if block < 16 or block & (block - 1):
        raise FormatError(node, f"block_size {block}: MatMulNBits takes a power of two, at least 16")
    if len(node.input) < 3 or not node.input[1] or not node.input[2]:
        raise FormatError(node, "it needs the inputs A, B and scales")
    if graph.opset < OPSET:  # normalise converts the model first (MIN_OPSET)
        raise FormatError(node, f"the model's default opset is {graph.opset}; its rewrite is a DequantizeLinear with block_size, int4 weights, of opset {OPSET}")
    blocks, blob = -(-k // block), block * bits // 8

    b = _constant(node, graph, 1, "B")
    if b.dtype != np.uint8:
        raise FormatError(node, f"its B is {b.dtype}; MatMulNBits' B is uint8")
    _check_size(node, "B", b, n * blocks * blob, f"N = {n}, ceil(K / block_size) = {blocks} blocks of {blob} bytes ({bits}-bit)")
    if b.ndim == 3 and b.shape != (n, blocks, blob):
        raise FormatError(node, f"its B is {list(b.shape)}; K = {k}, N = {n}, block_size {block} and bits {bits} need [{n}, {blocks}, {blob}]")
    scales = _constant(node, graph, 2, "scales")
    if scales.dtype not in _FLOATS:
        raise FormatError(node, f"its scales are {scales.dtype}; MatMulNBits takes f32, f16 or bf16 scales")
    _check_size(node, "scales", scales, n * blocks, f"N = {n} columns of {blocks} blocks")
    zp = _constant(node, graph, 3, "zero points")
    g_idx = _constant(node, graph, 4, "g_idx")
    bias_name = _input(node, 5)
    if _input(node, 6) or len(node.input) > 6:
        raise FormatError(node, f"it has {len(node.input)} inputs; MatMulNBits takes at most 6")
    ftype = _FLOATS[scales.dtype]

    # The weights' codes, [K, N] (K's rows in g_idx's block order when it permutes them).
    codes = unpack_codes(b.reshape(n, blocks * blob), bits)[:, :k]
    reorder = None if g_idx is None else act_order(node, g_idx, k, block, blocks)
    if reorder is not None:
        perm, block = reorder  # K's rows gathered block by block (index k: a zero row of A)
        codes = np.concatenate([codes, np.zeros((n, 1), codes.dtype)], axis=1)[:, perm]
    codes = np.ascontiguousarray(codes.T)
    s32 = scales.reshape(n, blocks).astype(np.float32).T  # f16 and bf16 widen exactly

    fractional = None  # fractional float zero points: w = q * s - z * s per weight
    if zp is None:
        mid = 1 << (bits - 1)  # the spec's default zero point: the codes' midpoint, as signed weights
        w = (codes.astype(np.int16) - mid).astype(np.int8 if bits == 8 else ml_dtypes.int4)
        z = None
    elif zp.dtype == np.uint8:
        zbytes = -(-blocks * bits // 8)
        _check_size(node, "zero points", zp, n * zbytes, f"N = {n} columns of {blocks} {bits}-bit codes packed in {zbytes} bytes")
        z = unpack_codes(zp.reshape(n, zbytes), bits)[:, :blocks].T
        store = np.uint8 if bits == 8 else ml_dtypes.uint4
        w, z = codes.astype(store), np.ascontiguousarray(z).astype(store)
    elif zp.dtype == scales.dtype:
        _check_size(node, "zero points", zp, n * blocks, f"N = {n} columns of {blocks} blocks")
        zf = zp.reshape(n, blocks).astype(np.float32).T
        store = np.uint8 if bits == 8 else ml_dtypes.uint4
        w = codes.astype(store)
        if np.all(zf == np.round(zf)) and np.all((zf >= 0) & (zf < 1 << bits)):
            z = np.ascontiguousarray(zf.astype(np.int64)).astype(store)  # integer codes written as floats
        else:
            # z * s rounded once to f32 (exact in f64): the term onnxruntime's kernel adds per weight
            z, fractional = None, (zf.astype(np.float64) * s32).astype(np.float32)
    else:
        raise FormatError(node, f"its zero points are {zp.dtype}; MatMulNBits takes uint8 (packed) zero points or zero points of the scales' type ({scales.dtype})")

    out = [node.output[0]]
    nodes = []
    a = node.input[0]
    if ftype != "f32":
        a32 = graph.fresh(f"{a}_f32")
        nodes.append(helper.make_node("Cast", [a], [a32], to=TensorProto.FLOAT, name=graph.fresh(f"{node.name}_cast")))
        a = a32
    if reorder is not None:
        if perm.size != k or perm.max() == k:  # uneven blocks: A gets a zero row of K to pad them with
            ap = graph.fresh(f"{a}_padded")
            pads = [graph.constant("pads", np.array([0, 1], np.int64)), graph.constant("zero", np.array(0, np.float32)), graph.constant("last_axis", np.array([-1], np.int64))]
            nodes.append(helper.make_node("Pad", [a, *pads], [ap], name=graph.fresh(f"{node.name}_pad")))
            a = ap
        ap = graph.fresh(f"{a}_act_order")
        nodes.append(helper.make_node("Gather", [a, graph.constant("g_idx_order", perm)], [ap], axis=-1, name=graph.fresh(f"{node.name}_act_order")))
        a = ap
    stem = node.name or node.output[0]
    inputs = [graph.constant(f"{stem}_w", w), graph.constant(f"{stem}_s", np.ascontiguousarray(s32))]
    if z is not None:
        inputs.append(graph.constant(f"{stem}_z", z))
    wf, y = graph.fresh(f"{stem}_wf"), graph.fresh(f"{stem}_y")
    nodes += [helper.make_node("DequantizeLinear", inputs, [wf], axis=0, block_size=block, name=graph.fresh(f"{stem}_dq")),
              helper.make_node("MatMul", [a, wf], [y], name=graph.fresh(f"{stem}_matmul"))]  # fmt: skip
    if fractional is not None:
        # w - Expand(z * s): the expansion a DequantizeLinear of ones [K, N] made by ConstantOfShape
        # (no weights' worth of constant in the model), read per block by the same scale map
        # (docs/iree.md#matmulnbits)
        rows = w.shape[0]  # K, or K padded to whole blocks for uneven act-order
        ones, zf, wz = graph.fresh(f"{stem}_ones"), graph.fresh(f"{stem}_zsf"), graph.fresh(f"{stem}_wz")
        shape = graph.constant(f"{stem}_shape", np.array([rows, n], np.int64))
        nodes[-1:-1] = [helper.make_node("ConstantOfShape", [shape], [ones], value=helper.make_tensor("value", TensorProto.INT8, [1], [1]), name=graph.fresh(f"{stem}_ones")),
                        helper.make_node("DequantizeLinear", [ones, graph.constant(f"{stem}_zs", np.ascontiguousarray(fractional))], [zf], axis=0, block_size=block, name=graph.fresh(f"{stem}_zdq")),
                        helper.make_node("Sub", [wf, zf], [wz], name=graph.fresh(f"{stem}_sub"))]  # fmt: skip
        nodes[-1].input[1] = wz
    if bias_name:
        bias = graph.value(bias_name)
        if bias is not None:
            _check_size(node, "bias", bias, n, f"N = {n}")
            if bias.dtype != np.float32 or bias.shape != (n,):
                bias_name = graph.constant(f"{stem}_bias", bias.reshape(n).astype(np.float32))
        elif ftype != "f32":
            b32 = graph.fresh(f"{bias_name}_f32")
            nodes.append(helper.make_node("Cast", [bias_name], [b32], to=TensorProto.FLOAT, name=graph.fresh(f"{stem}_cast")))
            bias_name = b32
        yb = graph.fresh(f"{stem}_y")
        nodes.append(helper.make_node("Add", [y, bias_name], [yb], name=graph.fresh(f"{stem}_bias")))
        y = yb
    if ftype != "f32":
        nodes.append(helper.make_node("Cast", [y], out, to=_ONNX_TYPE[ftype], name=graph.fresh(f"{stem}_cast")))
    else:
        nodes[-1].output[0] = out[0]  # the last node computes y: it writes the node's output
    return nodes


REWRITES[(MS, "MatMulNBits")] = matmul_nbits
MIN_OPSET[(MS, "MatMulNBits")] = OPSET
