"""`dq.ngraph_dequantize`: nGraph Dequantize.

    output[i] = (input[i] - zero_point[j]) * scale[j],  j = i projected onto `axes`

`type` is the output element type (f16, bf16, f32, f64) and must equal the scale's; the zero
point is required and of the input's type (i8, u8, i32). `axes` is a set (ascending, no
duplicates; empty means per-tensor with rank-0 scale and zero point). Messages follow nGraph's
validate_and_infer_types. Arithmetic is in f64 when `type` is f64, f32 otherwise.
"""

from __future__ import annotations

from . import canonical
from .attributes import Attr
from .canonical import Form
from .opdef import Operand, OpDef
from .signature import Signature, Tensor, same, same_shape, show

NAME = "dq.ngraph_dequantize"
QUANTIZED = ("i8", "ui8", "i32")
REAL = ("f16", "bf16", "f32", "f64")


def _types(sig: Signature) -> str | None:
    x, s, z, t = sig.operands["input"], sig.operands["scale"], sig.operands["zero_point"], sig.attrs["type"]
    if t not in REAL:
        return f"Output element type ({t}) must be a floating point type"
    if z.elem != x.elem:
        return f"Zero point element type ({z.elem}) must match input element type ({x.elem})"
    if x.elem not in QUANTIZED:
        return f"Zero point / input element type ({x.elem}) must be a quantized type"
    if s.elem != t:
        return f"Scale element type ({s.elem}) must match output element type ({t})"
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
    x, s, z, axes = sig.operands["input"], sig.operands["scale"], sig.operands["zero_point"], sig.attrs["axes"]
    if not same_shape(s.shape, z.shape):
        return f"Scale shape ({show(s.shape, braces=True)}) and zero point shape ({show(z.shape, braces=True)}) must match"
    if s.rank != len(axes):
        return f"Scale / zero point rank ({s.rank}) does not match the number of quantization axes ({len(axes)})"
    if not all(same(s.shape[k], x.shape[a]) for k, a in enumerate(axes)):
        return (
            f"Scale / zero point shape ({show(s.shape, braces=True)}) must match input shape ({show(x.shape, braces=True)}) "
            f"at the quantization axes ({show(axes, braces=True)})"
        )
    return None


def result(sig: Signature) -> Tensor:
    """output: input's shape, of element `type`."""
    return Tensor(sig.attrs["type"], sig.operands["input"].shape)


def canonical_form(sig: Signature) -> Form:
    return Form(tuple(canonical.dim(a) for a in sig.attrs["axes"]))


DOC = """nGraph Dequantize: ``output = (input - zero_point) * scale``, scale and zero point indexed
by the input's coordinates on `axes`.

Parameters
----------
input : array_like
    int8, uint8 or int32.
scale : array_like
    Of element `type`, shaped as the input projected on `axes` (rank 0 when `axes` is empty).
zero_point : array_like
    Of the input's type, shaped as `scale`.
type : dtype
    The output element type: float16, bfloat16, float32 or float64 (arithmetic in float64 for
    float64).
axes : iterable of int, default ()
    The quantization axes, a set (given in any order, without repeats).
out : numpy.ndarray, optional
    Where to write the output: writable, C-contiguous, of its dtype and shape, overlapping no input.

Returns
-------
numpy.ndarray
    The output, of the input's shape and element `type`.

Raises
------
ValueError
    When the arrays or attributes break a rule of the spec (the message follows nGraph's
    wording), or `out` does not fit; always before any native code runs.

Examples
--------
>>> import numpy as np
>>> from dequant import ops
>>> x = np.array([[1, 2], [3, 4]], np.int8)
>>> ops.ngraph_dequantize(x, np.array([1.0, 0.5], np.float32), np.array([0, 2], np.int8), type=np.float32, axes={0})
array([[1. , 2. ],
       [0.5, 1. ]], dtype=float32)
"""

OP = OpDef(
    name=NAME,
    summary="nGraph Dequantize (any set of axes)",
    operands=(Operand("input", "data"), Operand("scale", "scale"), Operand("zero_point", "zero_point")),
    attrs=(Attr("type", "type", required=True), Attr("axes", "i64_set", ())),
    rules=(_types, _axes, _shapes),
    canonical=canonical_form,
    result=result,
    result_type_words="the output element type is `type`",
    result_shape_words="the output must have the shape of input",
    doc=DOC,
    api="ngraph_dequantize",
)

build = OP.build
