"""`dq.onnx_dequantize_linear`: ONNX DequantizeLinear, opsets 10 to 25.

    y = (x - x_zero_point) * x_scale

Granularity is told by x_scale's shape (docs/semantics.md#onnx-granularity): a scalar or
one-element 1-D scale is per-tensor; another 1-D scale with block_size 0 is per-axis along
`axis`; a scale of x's rank with block_size > 0 is blocked along `axis`. Types by opset:
docs/semantics.md#onnx-types-and-versions; zero point values: #onnx-zero-point-values.
"""

from __future__ import annotations

import math

import numpy as np

from . import canonical
from .attributes import Attr
from .canonical import Form
from .elements import ELEMENTS
from .opdef import Operand, OpDef
from .signature import Signature, Tensor, same, same_shape

NAME = "dq.onnx_dequantize_linear"
T1 = ("f4E2M1FN", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "i16", "i2", "i32", "i4", "i8",
      "ui16", "ui2", "ui4", "ui8")  # fmt: skip
T2 = ("bf16", "f32", "f16", "f8E8M0FNU")
T3 = ("bf16", "f32", "f16")


def granularity(sig: Signature) -> str:
    """"per_tensor", "per_axis" or "blocked", from the scale's shape and block_size."""
    s = sig.operands["x_scale"]
    if sig.attrs["block_size"] > 0:
        return "blocked"
    if s.rank == 0 or (s.rank == 1 and s.shape[0] == 1):
        return "per_tensor"
    return "per_axis"


def _axis(sig: Signature) -> int:
    r, a = sig.operands["x"].rank, sig.attrs["axis"]
    return a + r if a < 0 else a


def _element_types(sig: Signature) -> str | None:
    x, s, z = sig.operands["x"], sig.operands["x_scale"], sig.operands["x_zero_point"]
    if x.elem not in T1:
        return f"x must be a tensor of T1 ({', '.join(T1)}), got {x.elem}"
    if s.elem not in T2:
        return f"x_scale must be a tensor of T2 ({', '.join(T2)}), got {s.elem}"
    if z is not None and z.elem != x.elem:
        return f"x_zero_point and x must have the same type, got {z.elem} and {x.elem}"
    return None


def _output_dtype(sig: Signature) -> str | None:
    out, s = sig.attrs["output_dtype"], sig.operands["x_scale"]
    if out is not None and out not in T3:
        return f"output_dtype must be one of T3 ({', '.join(T3)}), got {out}"
    if out is None and s.elem == "f8E8M0FNU":
        return "a float8e8m0 x_scale needs output_dtype: f8E8M0FNU is not an output type (T3)"
    return None


def _zero_point_values(sig: Signature) -> str | None:
    x = sig.operands["x"]
    if not (x.elem == "i32" or ELEMENTS[x.elem].is_minifloat):
        return None  # before reading the values: a packed zero point is unpacked only when read
    zp = sig.values.get("x_zero_point")
    if zp is None:
        return None
    if not np.any(np.asarray(zp, dtype=np.float64) != 0):
        return None
    if x.elem == "i32":
        return "int32 x has no zero point: x_zero_point must be absent or all zero"
    return f"a {x.elem} x_zero_point must be absent or zero"


def _block_size(sig: Signature) -> str | None:
    if sig.attrs["block_size"] < 0:
        return f"block_size must be a positive integer (or 0 when not blocked), got {sig.attrs['block_size']}"
    return None


def _scale_rank(sig: Signature) -> str | None:
    x, s = sig.operands["x"], sig.operands["x_scale"]
    if granularity(sig) == "blocked":
        if s.rank != x.rank:
            return f"blocked x_scale must have the rank of x ({x.rank}), got rank {s.rank}"
    elif s.rank > 1:
        return "x_scale must be a scalar or 1-D tensor unless block_size > 0 (blocked quantization)"
    return None


def _axis_range(sig: Signature) -> str | None:
    r = sig.operands["x"].rank
    if granularity(sig) != "per_tensor" and not -r <= sig.attrs["axis"] <= r - 1:
        return f"axis {sig.attrs['axis']} is out of the accepted range [-r, r-1] where r = rank(input) = {r}"
    return None


def _scale_shape(sig: Signature) -> str | None:
    x, s = sig.operands["x"], sig.operands["x_scale"]
    g, a = granularity(sig), _axis(sig)
    if g == "per_axis" and not same(s.shape[0], x.shape[a]):
        return f"per-axis x_scale must have dim(axis) = {x.shape[a]} elements, got {s.shape[0]}"
    if g == "blocked":
        for i, (d, si) in enumerate(zip(x.shape, s.shape)):
            if i != a and not same(d, si):
                return f"blocked x_scale must have the shape of x except along axis: dim {i} is {si}, x has {d}"
        d, si, b = x.shape[a], s.shape[a], sig.attrs["block_size"]
        if d is not None and si is not None and not (d == 0 and si == 0):  # an empty axis has no blocks
            low = math.ceil(d / si) if si else math.inf
            high = math.ceil(d / (si - 1)) - 1 if si > 1 else math.inf
            if not low <= b <= high:
                return (
                    f"block_size {b} is out of the accepted range [ceil(Di/Si), ceil(Di/(Si-1))-1] "
                    f"for Di = {d}, Si = {si}"
                )
    return None


def _zero_point_shape(sig: Signature) -> str | None:
    s, z = sig.operands["x_scale"], sig.operands["x_zero_point"]
    if z is None:
        return None
    if granularity(sig) == "per_tensor" and (z.rank == 0 or z.shape == (1,)):
        return None  # a scalar and a one-element 1-D tensor may be mixed
    if not same_shape(z.shape, s.shape):
        return f"x_zero_point shape must match x_scale: {list(z.shape)} vs {list(s.shape)}"
    return None


def result(sig: Signature) -> Tensor:
    """y: x's shape, of output_dtype or, in its absence, x_scale's type."""
    out = sig.attrs["output_dtype"]
    return Tensor(out if out is not None else sig.operands["x_scale"].elem, sig.operands["x"].shape)


def canonical_form(sig: Signature) -> Form:
    """The canonical form of a verified op. A float8/float4 x's zero point (zero by the value
    rules) is not read: the ONNX reference never subtracts it (docs/semantics.md)."""
    r, g, a = sig.operands["x"].rank, granularity(sig), _axis(sig)
    s, z = sig.operands["x_scale"], sig.operands["x_zero_point"]
    reads = not ELEMENTS[sig.operands["x"].elem].is_minifloat

    def per_tensor(t):
        return () if t.rank == 0 else (canonical.ZERO,)

    if g == "per_tensor":
        return Form(per_tensor(s), per_tensor(z) if z is not None else None, reads_zero_point=reads)
    if g == "per_axis":
        return Form((canonical.dim(a),), reads_zero_point=reads)
    b = sig.attrs["block_size"]
    return Form(tuple(canonical.block(i, b) if i == a else canonical.dim(i) for i in range(r)), reads_zero_point=reads)


DOC = """ONNX DequantizeLinear (opsets 10 to 25): ``y = (x - x_zero_point) * x_scale``.

Parameters
----------
x : array_like or dequant.Packed
    Quantized data: int8, uint8, int16, uint16, int32, int4, uint4, int2, uint2 (ml_dtypes),
    float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) or float4_e2m1fn; sub-byte types also as
    `dequant.Packed` (two or four values per byte, read in place).
x_scale : array_like
    float32, float16, bfloat16 or float8_e8m0fnu. A scalar or one-element 1-D scale is per-tensor;
    a 1-D scale of ``x.shape[axis]`` elements is per-axis; with ``block_size > 0``, a scale of
    x's rank is blocked along `axis`.
x_zero_point : array_like or dequant.Packed, optional
    x's type and the scale's shape (all zero for int32 and float8/float4 x).
axis : int, default 1
    The quantized axis (negative counts from the end); used per-axis and blocked.
block_size : int, default 0
    Elements per block along `axis` (0: not blocked).
output_dtype : dtype, optional
    float32, float16 or bfloat16; default the scale's type (required for a float8_e8m0fnu scale).
out : numpy.ndarray, optional
    Where to write y: writable, C-contiguous, of y's dtype and shape, overlapping no input.

Returns
-------
numpy.ndarray
    y, of x's shape.

Raises
------
ValueError
    When the arrays or attributes break a rule of the spec (the message names it), or `out`
    does not fit; always before any native code runs.

Examples
--------
>>> import numpy as np
>>> from dequant import ops
>>> x = np.array([[0, 2, 4], [-3, 7, 10]], np.int8)
>>> ops.onnx_dequantize_linear(x, np.array([0.5, 2.0], np.float32), axis=0)
array([[ 0.,  1.,  2.],
       [-6., 14., 20.]], dtype=float32)
"""

OP = OpDef(
    name=NAME,
    summary="ONNX DequantizeLinear, opsets 10 to 25",
    operands=(Operand("x", "data"), Operand("x_scale", "scale"), Operand("x_zero_point", "zero_point", optional=True)),
    attrs=(Attr("axis", "i64", 1), Attr("block_size", "i64", 0), Attr("output_dtype", "type")),
    rules=(_element_types, _output_dtype, _block_size, _scale_rank, _axis_range, _scale_shape, _zero_point_shape),
    canonical=canonical_form,
    result=result,
    result_type_words="the output type is output_dtype or, in its absence, the type of x_scale",
    result_shape_words="x and y must have the same shape",
    value_rules=(_zero_point_values,),
    doc=DOC,
    api="onnx_dequantize_linear",
)

build = OP.build
