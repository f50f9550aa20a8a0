"""com.microsoft `GatherBlockQuantized`: the block-quantized table a Gather reads (onnxruntime's
genai builder writes an int4 LLM's tied embedding so), rewritten into standard ONNX that gathers
first and dequantizes only the rows gathered; the table stays packed.

    y = (data[indices] - zp[indices]) * scale[indices]    (blocks of block_size along quantize_axis)

data is uint8 (bits 2, 4 or 8 codes packed along the last axis, low bits first; gather_axis 0,
quantize_axis the last), int4 or uint4; scales of data's rank, ceil(dim / block_size) along
quantize_axis; zero points packed like uint8 data (2^(bits - 1) when absent) or of data's int4
type (0 when absent). onnxruntime's CPU kernel computes `float(q - zp) * scale` in f32 and rounds
to the scales' type once; the rewrite computes the same:

    bytes = Gather(table bytes, indices)          the table re-laid as unsigned codes' bytes
    codes = Reshape(Gather(lut, bytes))           a [256, 8 / bits] table of each byte's codes
    y = (Cast(codes) - Gather(zp)) * Gather(scale), scales and zero points expanded per element
        by a Gather along quantize_axis, then Cast to f16 for f16 scales.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper

from .rewrites import MIN_OPSET, MS, REWRITES, FormatError, Graph
from .matmul_nbits import _attr, _constant, _input, unpack_codes

_FLOATS = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16}
_INT4 = {np.dtype(ml_dtypes.int4): 8, np.dtype(ml_dtypes.uint4): 0}  # the shift to unsigned codes


def _pack(codes: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned codes packed 8 / bits a byte along the last axis, low bits first (padded)."""
    per = 8 // bits
    codes = np.pad(codes, [(0, 0)] * (codes.ndim - 1) + [(0, -codes.shape[-1] % per)])
    packed = np.zeros((*codes.shape[:-1], codes.shape[-1] // per), np.uint8)
    for i in range(per):
        packed |= (codes[..., i::per].astype(np.uint8) << np.uint8(bits * i)).astype(np.uint8)
    return packed


def gather_block_quantized(node: onnx.NodeProto, graph: Graph) -> list:
    """GatherBlockQuantized -> Gather of the packed rows, unpacked and dequantized in f32."""
    if len(node.input) < 3 or not node.input[0] or not node.input[1] or not node.input[2]:
        raise FormatError(node, "it needs the inputs data, indices and scales")
    data = _constant(node, graph, 0, "data")
    scales = _constant(node, graph, 2, "scales")
    zp = _constant(node, graph, 3, "zero points")
    rank = data.ndim
    if graph.opset < 15:  # normalise converts the model first (MIN_OPSET)
        raise FormatError(node, f"the model's default opset is {graph.opset}; its rewrite needs 15 (Shape with end)")
    gather_axis, quantize_axis = _attr(node, "gather_axis", 0), _attr(node, "quantize_axis", 1)
    block, bits = _attr(node, "block_size", 128), _attr(node, "bits", 4)
    if not -rank <= gather_axis < rank or not -rank <= quantize_axis < rank:
        raise FormatError(node, f"gather_axis {gather_axis} and quantize_axis {quantize_axis} must be axes of its rank-{rank} data")
    gather_axis, quantize_axis = gather_axis % rank, quantize_axis % rank
    if gather_axis == quantize_axis:
        raise FormatError(node, f"gather_axis and quantize_axis are both {gather_axis}; they must differ")
    if block < 16 or block & (block - 1):
        raise FormatError(node, f"block_size {block}: GatherBlockQuantized takes a power of two, at least 16")
    if scales.dtype not in _FLOATS:
        raise FormatError(node, f"its scales are {scales.dtype}; GatherBlockQuantized takes f32, f16 or bf16 scales")

    # The unsigned codes of the logical table, and its zero points, per element type.
    if data.dtype == np.uint8:
        if bits not in (2, 4, 8):
            raise FormatError(node, f"bits {bits}: GatherBlockQuantized with uint8 data takes bits 2, 4 or 8")
        if gather_axis != 0 or quantize_axis != rank - 1:
            raise FormatError(node, f"gather_axis {gather_axis}, quantize_axis {quantize_axis}: with uint8 data GatherBlockQuantized takes gather_axis 0 and quantize_axis the last")
        codes = unpack_codes(data, bits)
        zbits = bits
    elif data.dtype in _INT4:
        if bits != 4:
            raise FormatError(node, f"bits {bits}: GatherBlockQuantized with {data.dtype} data takes bits 4")
        codes = (data.astype(np.int16) + _INT4[data.dtype]).astype(np.uint8)
        zbits = None
    else:
        raise FormatError(node, f"its data is {data.dtype}; GatherBlockQuantized takes uint8, int4 or uint4 data")
    qdim = codes.shape[quantize_axis]
    blocks = -(-qdim // block)
    want = tuple(blocks if a == quantize_axis else d for a, d in enumerate(codes.shape))
    if scales.shape != want:
        raise FormatError(node, f"its scales are {list(scales.shape)}; its data {list(codes.shape)} (logical) with block_size {block} along axis {quantize_axis} needs {list(want)}")
    if zp is None:
        z = np.full(want, (1 << (bits - 1)) if zbits else _INT4[data.dtype], np.uint8)
    elif zbits:
        zwant = (*want[:-1], -(-want[-1] * bits // 8))
        if zp.dtype != np.uint8 or zp.shape != zwant:
            raise FormatError(node, f"its zero points are {zp.dtype} {list(zp.shape)}; uint8 data with scales {list(want)} needs uint8 {list(zwant)} ({bits}-bit codes packed)")
        z = unpack_codes(zp, bits)[..., : want[-1]]
    else:
        if zp.dtype != data.dtype or zp.shape != want:
            raise FormatError(node, f"its zero points are {zp.dtype} {list(zp.shape)}; they must be {data.dtype} {list(want)}, the scales' shape")
        z = (zp.astype(np.int16) + _INT4[data.dtype]).astype(np.uint8)
    if gather_axis == rank - 1:
        raise FormatError(node, "gather_axis is the last axis: the stage gathers the packed table's bytes along another axis than the one they pack")

    # The table as bytes packing the unsigned codes along the last axis (8-bit: the codes).
    pbits = zbits or 4
    per = 8 // pbits
    table = codes if per == 1 else _pack(codes, pbits)
    last = codes.shape[-1]
    stem = node.name or node.output[0]
    out_type = _FLOATS[scales.dtype]
    idx = node.input[1]
    nodes = []

    def add(op, inputs, **attrs):
        name = graph.fresh(f"{stem}_{op.lower()}")
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    got = add("Gather", [graph.constant(f"{stem}_table", table), idx], axis=gather_axis)
    if per > 1:
        lut = unpack_codes(np.arange(256, dtype=np.uint8)[:, None], pbits)  # [256, per]
        byte = add("Cast", [got], to=TensorProto.INT32)  # Gather's indices are int32 or int64
        pairs = add("Gather", [graph.constant(f"{stem}_lut", lut), byte], axis=0)  # [..., bytes, per]
        lead = add("Shape", [got], end=-1)
        shape = add("Concat", [lead, graph.constant(f"{stem}_codes", np.array([table.shape[-1] * per], np.int64))], axis=0)
        got = add("Reshape", [pairs, shape])
        if table.shape[-1] * per != last:  # the padding code of an odd last axis
            got = add("Slice", [got, graph.constant(f"{stem}_start", np.array([0], np.int64)), graph.constant(f"{stem}_end", np.array([last], np.int64)),
                                graph.constant(f"{stem}_axis", np.array([-1], np.int64))])  # fmt: skip
    # Scales and zero points per element of the table, gathered like it (the expansion along
    # quantize_axis is a Gather by k / block; axes after the gather axis keep their place from the
    # end, so the indices' rank is not needed).
    expand = graph.constant(f"{stem}_blocks", (np.arange(qdim) // block).astype(np.int64))
    q_out = quantize_axis if quantize_axis < gather_axis else quantize_axis - rank

    def per_element(value: np.ndarray, hint: str) -> str:
        g = add("Gather", [graph.constant(f"{stem}_{hint}", value), idx], axis=gather_axis)
        return add("Gather", [g, expand], axis=q_out)

    s = per_element(scales, "scale")
    if out_type != TensorProto.FLOAT:
        s = add("Cast", [s], to=TensorProto.FLOAT)  # the gathered scales widened (exactly): the table's stay at their size
    zf = per_element(z, "zero_point")
    diff = add("Sub", [add("Cast", [got], to=TensorProto.FLOAT), add("Cast", [zf], to=TensorProto.FLOAT)])
    if out_type == TensorProto.FLOAT:
        nodes.append(helper.make_node("Mul", [diff, s], [node.output[0]], name=graph.fresh(f"{stem}_mul")))
    else:
        nodes.append(helper.make_node("Cast", [add("Mul", [diff, s])], [node.output[0]], to=out_type, name=graph.fresh(f"{stem}_cast")))
    return nodes


REWRITES[(MS, "GatherBlockQuantized")] = gather_block_quantized
MIN_OPSET[(MS, "GatherBlockQuantized")] = 15
