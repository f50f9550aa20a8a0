"""quant-to-dq: upstream `quant.dcast` of a `!quant.uniform` tensor becomes a dq op with
`arith.constant` scale and zero point.

    %y = quant.dcast %q : tensor<4x2x!quant.uniform<u8:f32:1, {5.0e-01:3, 2.5e-01:1}>> to tensor<4x2xf32>
  becomes
    %x = quant.scast %q : tensor<4x2x!quant.uniform<...>> to tensor<4x2xi8>    (or the scast's source)
    %u = tensor.bitcast %x : tensor<4x2xi8> to tensor<4x2xui8>                 (unsigned storage)
    %y = "dq.onnx_dequantize_linear"(%u, %scale, %zp) {axis = 1 : i64} : (...) -> tensor<4x2xf32>

Per-layer, per-axis and sub-channel types with one blocked axis become `dq.onnx_dequantize_linear`;
what ONNX cannot say becomes the canonical `dq.dequantize`: blocks on two axes, a sub-channel type
that leaves a non-unit dim out (one scale along it), an f64 expressed type, a non-zero zero point
with i32 storage. If the dcast's operand is a `quant.scast` of an integer tensor (itself perhaps a
`tensor.bitcast` of an unsigned one), that tensor is the dq op's `x`.

Scales (f64 in per-layer and per-axis types) become a tensor of the expressed type when it holds
them exactly, else f32 (rounded to nearest, as upstream's lower-quant-ops rounds them to an f32
expressed type). Zero points have x's type. The storage range (`i8<-8:7>`) bounds quantization,
not dequantization, and is dropped. Left alone, with a remark: other quantized types, storage the
dq dialect has no type for (u32, i2, ...), a zero point outside the storage range (upstream's
lowering would wrap it), and operands that are not ranked tensors.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, quant, tensor

from dequant.dialect import canonical, constants, onnx
from dequant.dialect.elements import ELEMENTS, name_of
from dequant.dialect.walking import walk

from . import Pass
from .queries import erase_dead
from .remarks import emit_remarks

UNIFORM = (quant.UniformQuantizedType, quant.UniformQuantizedPerAxisType, quant.UniformQuantizedSubChannelType)
ONNX_OUTPUTS = ("f32", "f16", "bf16")


def storage_name(q) -> str | None:
    """The dq element of a quant type's storage (i8, ui4, ...), or None."""
    name = f"{'' if q.is_signed else 'u'}i{q.storage_type_integral_width}"
    return name if name in ELEMENTS and ELEMENTS[name].kind == "int" else None


def parameters(q) -> tuple[np.ndarray, np.ndarray, dict]:
    """(scales, zero points, {data dim: block size}) of a uniform quantized type; per-axis is
    one dim with blocks of 1, per-layer no dim (rank-0 arrays)."""
    if isinstance(q, quant.UniformQuantizedType):
        return np.array(q.scale, np.float64), np.array(q.zero_point, np.int64), {}
    if isinstance(q, quant.UniformQuantizedPerAxisType):
        return np.array(q.scales, np.float64), np.array(q.zero_points, np.int64), {q.quantized_dimension: 1}
    scales = constants.elements_value(q.scales).astype(np.float64)
    zps = constants.elements_value(q.zero_points).astype(np.int64)
    if not q.is_signed:  # held in the signless storage type: read the bits as unsigned
        zps = zps & ((1 << q.storage_type_integral_width) - 1)
    return scales, zps, dict(zip(q.quantized_dimensions, q.block_sizes))


def _exact(values: np.ndarray, elem: str) -> bool:
    return bool(np.all(values.astype(ELEMENTS[elem].dtype).astype(np.float64) == values))


def scale_elem(scales: np.ndarray, expressed: str) -> str:
    """The scale tensor's element type: the expressed type if it holds the scales exactly, else f32."""
    if expressed == "f64" or _exact(scales, expressed):
        return expressed
    return "f32"


def constant(values: np.ndarray, elem: str) -> ir.Value:
    """An `arith.constant` dense tensor of `values` as `elem`."""
    attr = constants.attribute(values, ELEMENTS[elem])
    return arith.ConstantOp(attr.type, attr).result


def plan(op) -> tuple | str:
    """(quantized type, storage elem, output elem) of a `quant.dcast`, or why it has no dq form."""
    src, out = op.operands[0].type, op.results[0].type
    if not isinstance(src, ir.RankedTensorType) or not isinstance(out, ir.RankedTensorType):
        return "dq ops take ranked tensors"
    q = ir.RankedTensorType(src).element_type.maybe_downcast()
    if not isinstance(q, UNIFORM):
        return f"{q} is not a !quant.uniform type"
    storage = storage_name(q)
    if storage is None:
        kind = "i" if q.is_signed else "u"
        return f"the dq dialect has no storage type for {kind}{q.storage_type_integral_width}"
    y = name_of(ir.RankedTensorType(out).element_type)
    if y not in canonical.OUTPUTS:
        return f"the expressed type {y} is not a dq output type ({', '.join(canonical.OUTPUTS)})"
    _, zps, _ = parameters(q)
    e = ELEMENTS[storage]
    bad = zps[(zps < e.min) | (zps > e.max)]
    if bad.size:
        return f"zero point {int(bad.flat[0])} is outside the storage range [{e.min}, {e.max}] of {storage}"
    return q, storage, y


def storage_tensor(value: ir.Value, q, storage: str) -> ir.Value:
    """The integer tensor behind a quantized tensor, of dq element type `storage`."""
    t = ir.RankedTensorType(value.type)
    owner = value.owner
    if isinstance(owner, (ir.OpView, ir.Operation)) and owner.name == "quant.scast":
        source = owner.operands[0]
        if isinstance(source.type, ir.RankedTensorType) and isinstance(
            ir.RankedTensorType(source.type).element_type, ir.IntegerType
        ):
            value = source
    if value.type == t:  # still quantized: cast to the signless storage tensor
        signless = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(q.storage_type_integral_width))
        value = ir.Operation.create("quant.scast", results=[signless], operands=[value]).result
    if name_of(ir.RankedTensorType(value.type).element_type) == storage:
        return value
    owner = value.owner
    if isinstance(owner, (ir.OpView, ir.Operation)) and owner.name == "tensor.bitcast":
        source = owner.operands[0]
        if name_of(ir.RankedTensorType(source.type).element_type) == storage:
            return source
    return tensor.bitcast(ir.RankedTensorType.get(t.shape, ELEMENTS[storage].ir_type()), value)


def constants_of(q, storage: str, y_elem: str) -> tuple:
    """The scale and zero point constants of a quant type (the zero point None when all zero)."""
    scales, zps, _ = parameters(q)
    return constant(scales, scale_elem(scales, y_elem)), None if not zps.any() else constant(zps, storage)


def build(x: ir.Value, scale: ir.Value, zero: ir.Value | None, q, storage: str, y_elem: str, result_type: ir.Type) -> ir.Value:
    """The dq op for a `!quant.uniform` dequantization of storage tensor `x`, with the type's
    scale and zero point constants."""
    _, _, blocks = parameters(q)
    rank = ir.RankedTensorType(result_type).rank
    shape = list(ir.RankedTensorType(result_type).shape)
    dynamic = [ir.RankedTensorType(result_type).is_dynamic_dim(d) for d in range(rank)]
    s_elem = name_of(ir.RankedTensorType(scale.type).element_type)
    onnx_ok = y_elem in ONNX_OUTPUTS and not (storage == "i32" and zero is not None)
    output_dtype = None if s_elem == y_elem else y_elem
    if not blocks:
        if onnx_ok:
            return onnx.OP.build(x, scale, zero, output_dtype=output_dtype)
        return canonical.build(x, scale, zero, canonical.Form(()), result_type)
    if isinstance(q, quant.UniformQuantizedPerAxisType):
        (axis,) = blocks
        if onnx_ok:
            return onnx.OP.build(x, scale, zero, axis=axis, output_dtype=output_dtype)
        return canonical.build(x, scale, zero, canonical.Form((canonical.dim(axis),)), result_type)
    # sub-channel: the scale has the data's rank; a dim left out has one scale along it
    wide = [d for d, b in blocks.items() if b > 1]
    full = all(d in blocks or (not dynamic[d] and shape[d] == 1) for d in range(rank))
    if onnx_ok and full and len(wide) <= 1:
        axis = wide[0] if wide else max(blocks)
        return onnx.OP.build(x, scale, zero, axis=axis, block_size=blocks[axis], output_dtype=output_dtype)
    entries = tuple(canonical.ZERO if d not in blocks else canonical.block(d, blocks[d]) for d in range(rank))
    return canonical.build(x, scale, zero, canonical.Form(entries), result_type)


def rewrite(op, q, storage: str, y_elem: str) -> None:
    """Replace a `quant.dcast` of a `!quant.uniform` tensor by a dq op on its storage tensor."""
    source = op.operands[0]
    with ir.InsertionPoint(op), op.location:
        scale, zero = constants_of(q, storage, y_elem)
        x = storage_tensor(source, q, storage)
        y = build(x, scale, zero, q, storage, y_elem, op.results[0].type)
    op.results[0].replace_all_uses_with(y)
    op.erase()
    erase_dead([source])


def run(root) -> bool:
    found = []

    def visit(o):
        if o.name == "quant.dcast":
            found.append((o, plan(o)))
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    emit_remarks(root, [(o, f"not converted to dq: {p}") for o, p in found if isinstance(p, str)])
    for o, p in found:
        if not isinstance(p, str):
            rewrite(o, *p)
    return True


PASS = Pass("quant-to-dq", "Rewrite upstream quant.dcast of !quant.uniform tensors into dq ops", run)
