"""`dq.pmx_dequantize_linear`: OpenPPL (ppl.pmx) DequantizeLinear (docs/semantics.md#openppl-dequantizelinear).

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

from . import canonical
from .attributes import Attr
from .canonical import INT4X4, Form
from .opdef import Operand, OpDef
from .signature import Signature, Tensor, same, same_shape, show

NAME = "dq.pmx_dequantize_linear"
STORAGE = {"int8": "i8", "int4": "i16"}
T2 = ("f32", "f16")


def unpacked_shape(x_shape: tuple, quant_data_type: str) -> tuple:
    """The output shape for X's shape: dim 0 times 4 for int4 (int4x4 packing)."""
    if quant_data_type != "int4" or not x_shape:
        return tuple(x_shape)
    d0 = x_shape[0]
    return (None if d0 is None else INT4X4 * d0,) + tuple(x_shape[1:])


def _data_type(sig: Signature) -> str | None:
    q, x = sig.attrs["quant_data_type"], sig.operands["X"]
    if q not in STORAGE:
        return f"quant_data_type must be \"int4\" or \"int8\", got \"{q}\""
    if x.elem != STORAGE[q]:
        return f"X must be {'int16 (packed int4x4)' if q == 'int4' else 'int8'} for quant_data_type \"{q}\", got {x.elem}"
    if q == "int4" and x.rank == 0:
        return "int4 X (int4x4 packed along dim 0) must have rank >= 1"
    return None


def _scale_type(sig: Signature) -> str | None:
    s = sig.operands["Scale"]
    if s.elem not in T2:
        return f"Scale must be float32 or float16 (T2), got {s.elem}"
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
    if not same_shape(z.shape, sig.operands["Scale"].shape):
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
            return f"grouped Scale must have the shape of Y with dim quant_axis divided by group_size: {show(want)}"
        return None
    if _per_tensor(s):
        return None
    if not y_shape or not (s.rank in (1, len(y_shape)) and same(s.shape[0], y_shape[0]) and all(d == 1 for d in s.shape[1:])):
        return "with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))"
    return None


def _per_tensor(s) -> bool:
    return all(d == 1 for d in s.shape)


def result(sig: Signature) -> Tensor:
    """Y: X's unpacked shape, of the Scale's type."""
    return Tensor(sig.operands["Scale"].elem, unpacked_shape(sig.operands["X"].shape, sig.attrs["quant_data_type"]))


def canonical_form(sig: Signature) -> Form:
    axis, g, s = sig.attrs["quant_axis"], sig.attrs["group_size"], sig.operands["Scale"]
    rank = len(sig.operands["X"].shape)
    if g:
        m = tuple(canonical.block(i, g) if i == axis else canonical.dim(i) for i in range(rank))
    elif _per_tensor(s):
        m = tuple(canonical.ZERO for _ in range(s.rank))
    else:
        m = (canonical.dim(0),) + tuple(canonical.ZERO for _ in range(s.rank - 1))
    return Form(
        m,
        zero_point_mode="add" if sig.attrs["float_zeropoint"] else "subtract",
        unpack="int4x4" if sig.attrs["quant_data_type"] == "int4" else "none",
    )


DOC = """OpenPPL (ppl.pmx) DequantizeLinear.

``Y = Scale * q`` without zero point, ``Scale * (X - ZeroPoint)`` with an integer one, and
``Scale * q + ZeroPoint`` with a float one (`float_zeropoint`); q is X for int8, and for int4 the
nibble minus 8 (or minus ``ZeroPoint & 0xF``).

Parameters
----------
X : array_like
    int8 for quant_data_type "int8"; int16 packing four 4-bit values along dim 0 for "int4"
    (nibble k of ``X[i, ...]`` is output row ``4*i + k``).
Scale : array_like
    float32 or float16; Y has this type. Grouped (group_size != 0): Y's shape with dim
    `quant_axis` divided by `group_size`; else per-tensor ((), (1) or all ones) or per-channel
    ((d0, 1, ...) or (d0)).
ZeroPoint : array_like, optional
    Shaped as `Scale`: int8, or float16/float32 with ``float_zeropoint=True``; given exactly when
    ``has_zeropoint=True``.
quant_data_type : {"int8", "int4"}
quant_axis : {0, 1}, default 1
group_size : int, default 128
has_zeropoint : bool, default False
float_zeropoint : bool, default False
quant_method : str, default ""
    Accepted and ignored.
out : numpy.ndarray, optional
    Where to write Y: writable, C-contiguous, of Y's dtype and shape, overlapping no input.

Returns
-------
numpy.ndarray
    Y, of X's unpacked shape (dim 0 times 4 for int4).

Raises
------
ValueError
    When the arrays or attributes break a rule of the spec (the message names it), or `out`
    does not fit; always before any native code runs.

Examples
--------
>>> import numpy as np
>>> from dequant import ops
>>> X = np.array([[1, -2, 3, 4]], np.int8)
>>> ops.pmx_dequantize_linear(X, np.array([[0.5, 2.0]], np.float32), quant_data_type="int8", group_size=2)
array([[ 0.5, -1. ,  6. ,  8. ]], dtype=float32)
"""

OP = OpDef(
    name=NAME,
    summary="OpenPPL (ppl.pmx) DequantizeLinear (int8, int4x4 in int16, groups)",
    operands=(Operand("X", "data"), Operand("Scale", "scale"), Operand("ZeroPoint", "zero_point", optional=True)),
    attrs=(
        Attr("quant_data_type", "str", required=True),
        Attr("quant_method", "str", ""),
        Attr("quant_axis", "i64", 1),
        Attr("group_size", "i64", 128),
        Attr("has_zeropoint", "bool", False),
        Attr("float_zeropoint", "bool", False),
    ),
    rules=(_data_type, _scale_type, _zero_point, _granularity),
    canonical=canonical_form,
    result=result,
    result_type_words="Y must have the Scale's type (T2)",
    result_shape_words="Y must have the unpacked shape of X",
    doc=DOC,
    api="pmx_dequantize_linear",
)

build = OP.build

