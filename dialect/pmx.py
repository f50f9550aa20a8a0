"""`dq.pmx_dequantize_linear`: OpenPPL (ppl.pmx) DequantizeLinear, as NOTES.md reads it.

- int8: X is i8 and q = X. int4: X is i16 packing four 4-bit values along dim 0; nibble k
  (bits 4k..4k+3) of X[i, ...] is output row 4i+k; q = nibble - 8, or nibble - (zp & 0xF)
  with an integer zero point. The output has X's shape with dim 0 times 4 (for int4).
- no zero point: Y = Scale * q; integer zero point (i8): Y = Scale * (x - zp);
  `float_zeropoint` (f16/f32 zero point): Y = Scale * q + zp.
- group_size != 0: Scale has the output's shape with dim `quant_axis` divided by group_size,
  which must divide it. group_size == 0: per-tensor (one element: (), (1) or all ones) or
  per-channel (one scale per row of dim 0: (d0, 1, ...) or (d0)), told by Scale's shape.
- Output type = Scale's type (f32 or f16). `quant_method` is accepted and ignored.
Decisions: a ZeroPoint operand needs has_zeropoint = true, and has_zeropoint = true needs one
(nothing is silently ignored); float_zeropoint = true needs has_zeropoint = true.
"""

from __future__ import annotations

from .attributes import Attr
from .canonical import Form
from .opdef import OpDef
from .signature import Signature, same

NAME = "dq.pmx_dequantize_linear"
STORAGE = {"int8": "i8", "int4": "i16"}
T2 = ("f32", "f16")


def unpacked_shape(x_shape: tuple, quant_data_type: str) -> tuple:
    """The output shape for X's shape: dim 0 times 4 for int4 (int4x4 packing)."""
    if quant_data_type != "int4" or not x_shape:
        return tuple(x_shape)
    d0 = x_shape[0]
    return (None if d0 is None else 4 * d0,) + tuple(x_shape[1:])


def _data_type(sig: Signature) -> str | None:
    q, x = sig.attrs["quant_data_type"], sig.operands["X"]
    if q not in STORAGE:
        return f"quant_data_type must be \"int4\" or \"int8\", got \"{q}\""
    if x.elem != STORAGE[q]:
        return f"X must be {'int16 (packed int4x4)' if q == 'int4' else 'int8'} for quant_data_type \"{q}\", got {x.elem}"
    if q == "int4" and x.rank == 0:
        return "int4 X (int4x4 packed along dim 0) must have rank >= 1"
    return None


def _output(sig: Signature) -> str | None:
    s, y = sig.operands["Scale"], sig.result
    if s.elem not in T2:
        return f"Scale must be float32 or float16 (T2), got {s.elem}"
    if y is None or y.elem != s.elem:
        return f"Y must have the Scale's type (T2): expected {s.elem}"
    want = unpacked_shape(sig.operands["X"].shape, sig.attrs["quant_data_type"])
    if len(want) != y.rank or not all(same(a, b) for a, b in zip(want, y.shape)):
        return f"Y must have the unpacked shape of X: {['?' if d is None else d for d in want]}"
    return None


def _zero_point(sig: Signature) -> str | None:
    z, has, flt = sig.operands["ZeroPoint"], sig.attrs["has_zeropoint"], sig.attrs["float_zeropoint"]
    if has and z is None:
        return "ZeroPoint must appear when has_zeropoint == True"
    if not has and z is not None:
        return "a ZeroPoint is given but has_zeropoint is False"
    if flt and not has:
        return "float_zeropoint == True needs has_zeropoint == True"
    if z is None:
        return None
    if flt and z.elem not in ("f16", "f32"):
        return f"ZeroPoint data type MUST be floating point when float_zeropoint == True, got {z.elem}"
    if not flt and z.elem != "i8":
        return f"an integer ZeroPoint must be int8 (T3), got {z.elem}"
    s = sig.operands["Scale"]
    if z.rank != s.rank or not all(same(a, b) for a, b in zip(z.shape, s.shape)):
        return "ZeroPoint shape must be the same as Scale's"
    return None


def _granularity(sig: Signature) -> str | None:
    axis, g = sig.attrs["quant_axis"], sig.attrs["group_size"]
    y_shape = unpacked_shape(sig.operands["X"].shape, sig.attrs["quant_data_type"])
    s = sig.operands["Scale"]
    if axis not in (0, 1):
        return f"quant_axis only accepts 0 or 1, got {axis}"
    if g < 0:
        return f"group_size must be >= 0, got {g}"
    if g:
        if axis >= len(y_shape):
            return f"quant_axis {axis} must be less than the rank of Y ({len(y_shape)})"
        d = y_shape[axis]
        if d is not None and d % g:
            return f"the grouped dimension (dim {axis} = {d}) must be divisible by group_size {g}"
        want = tuple(None if (i == axis and d is None) else (d // g if i == axis else d) for i, d in enumerate(y_shape))
        if s.rank != len(want) or not all(same(a, b) for a, b in zip(s.shape, want)):
            return f"grouped Scale must have the shape of Y with dim quant_axis divided by group_size: {_show(want)}"
        return None
    if _per_tensor(s):
        return None
    if not y_shape or not (s.rank in (1, len(y_shape)) and same(s.shape[0], y_shape[0]) and all(d == 1 for d in s.shape[1:])):
        return "with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))"
    return None


def _per_tensor(s) -> bool:
    return all(d == 1 for d in s.shape)


def _show(shape) -> list:
    return ["?" if d is None else d for d in shape]


def canonical(sig: Signature) -> Form:
    axis, g, s = sig.attrs["quant_axis"], sig.attrs["group_size"], sig.operands["Scale"]
    rank = len(sig.operands["X"].shape)
    if g:
        m = tuple(("block", i, g) if i == axis else ("dim", i) for i in range(rank))
    elif _per_tensor(s):
        m = tuple(("zero",) for _ in range(s.rank))
    else:
        m = (("dim", 0),) + tuple(("zero",) for _ in range(s.rank - 1))
    return Form(
        m,
        zero_point_mode="add" if sig.attrs["float_zeropoint"] else "subtract",
        unpack="int4x4" if sig.attrs["quant_data_type"] == "int4" else "none",
    )


OP = OpDef(
    name=NAME,
    operands=("X", "Scale", "ZeroPoint"),
    optional=("ZeroPoint",),
    attrs=(
        Attr("quant_data_type", "str", required=True),
        Attr("quant_method", "str", ""),
        Attr("quant_axis", "i64", 1),
        Attr("group_size", "i64", 128),
        Attr("has_zeropoint", "bool", False),
        Attr("float_zeropoint", "bool", False),
    ),
    rules=(_data_type, _output, _zero_point, _granularity),
    canonical=canonical,
)


def build(X, Scale, ZeroPoint=None, *, quant_data_type, quant_method=None, quant_axis=None, group_size=None,
          has_zeropoint=None, float_zeropoint=None, loc=None, ip=None):  # fmt: skip
    """Build `dq.pmx_dequantize_linear`; omitted attributes take the spec defaults."""
    from mlir import ir

    from .opdef import create, like
    from .signature import tensor_of
    from .types import elem_name

    shape = unpacked_shape(tensor_of(X.type).shape, quant_data_type)
    result = like(X, elem_name(ir.RankedTensorType(Scale.type).element_type), shape)
    values = dict(quant_data_type=quant_data_type, quant_method=quant_method, quant_axis=quant_axis,
                  group_size=group_size, has_zeropoint=has_zeropoint, float_zeropoint=float_zeropoint)  # fmt: skip
    return create(OP, [X, Scale, ZeroPoint], values, result, loc=loc, ip=ip)
