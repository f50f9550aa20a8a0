"""`dq.ngraph_dequantize`: nGraph Dequantize.

    output[i] = (input[i] - zero_point[j]) * scale[j],  j = i projected onto `axes`

`type` is the output element type (f16, bf16, f32, f64) and must equal the scale's; the zero
point is required and of the input's type (i8, u8, i32). `axes` is a set (ascending, no
duplicates; empty means per-tensor with rank-0 scale and zero point). Messages follow nGraph's
validate_and_infer_types. Arithmetic is in f64 when `type` is f64, f32 otherwise.
"""

from __future__ import annotations

from .attributes import Attr
from .canonical import Form
from .opdef import OpDef
from .signature import Signature, same

NAME = "dq.ngraph_dequantize"
QUANTIZED = ("i8", "ui8", "i32")
REAL = ("f16", "bf16", "f32", "f64")


def _show(shape) -> str:
    return "{" + ",".join("?" if d is None else str(d) for d in shape) + "}"


def _types(sig: Signature) -> str | None:
    x, s, z, y, t = sig.operands["input"], sig.operands["scale"], sig.operands["zero_point"], sig.result, sig.attrs["type"]
    if t not in REAL:
        return f"Output element type ({t}) must be a floating point type"
    if z.elem != x.elem:
        return f"Zero point element type ({z.elem}) must match input element type ({x.elem})"
    if x.elem not in QUANTIZED:
        return f"Zero point / input element type ({x.elem}) must be a quantized type"
    if s.elem != t:
        return f"Scale element type ({s.elem}) must match output element type ({t})"
    if y is None or y.elem != t:
        return f"the result element type must be the output element type ({t})"
    return None


def _axes(sig: Signature) -> str | None:
    axes, r = sig.attrs["axes"], sig.operands["input"].rank
    if sorted(set(axes)) != list(axes):
        return f"axes must be a set: ascending, without duplicates, got {list(axes)}"
    for a in axes:
        if not 0 <= a < r:
            return f"Quantization axis ({a}) must be less than input shape rank ({r})"
    return None


def _shapes(sig: Signature) -> str | None:
    x, s, z, y, axes = sig.operands["input"], sig.operands["scale"], sig.operands["zero_point"], sig.result, sig.attrs["axes"]
    if s.rank != z.rank or not all(same(a, b) for a, b in zip(s.shape, z.shape)):
        return f"Scale shape ({_show(s.shape)}) and zero point shape ({_show(z.shape)}) must match"
    if s.rank != len(axes):
        return f"Scale / zero point rank ({s.rank}) does not match the number of quantization axes ({len(axes)})"
    if not all(same(s.shape[k], x.shape[a]) for k, a in enumerate(axes)):
        return (
            f"Scale / zero point shape ({_show(s.shape)}) must match input shape ({_show(x.shape)}) "
            f"at the quantization axes ({_show(axes)})"
        )
    if x.rank != y.rank or not all(same(a, b) for a, b in zip(x.shape, y.shape)):
        return "the result must have the shape of input"
    return None


def canonical(sig: Signature) -> Form:
    return Form(tuple(("dim", a) for a in sig.attrs["axes"]))


OP = OpDef(
    name=NAME,
    operands=("input", "scale", "zero_point"),
    optional=(),
    attrs=(Attr("type", "type", required=True), Attr("axes", "i64_set", ())),
    rules=(_types, _axes, _shapes),
    canonical=canonical,
)


def build(input, scale, zero_point, *, type, axes=(), loc=None, ip=None):
    """Build `dq.ngraph_dequantize` with output element `type` (an ir.Type or its spelling)."""
    from .opdef import create, like
    from .types import elem_name

    t = elem_name(type)
    return create(OP, [input, scale, zero_point], {"type": t, "axes": list(axes)}, like(input, t), loc=loc, ip=ip)
