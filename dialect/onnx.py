"""`dq.onnx_dequantize_linear`: ONNX DequantizeLinear, opsets 10 to 24.

    y = (x - x_zero_point) * x_scale

Granularity is told by x_scale's shape (NOTES.md): a scalar or one-element 1-D scale is
per-tensor; another 1-D scale with block_size 0 is per-axis along `axis`; a scale of x's rank
with block_size > 0 is blocked along `axis`. Decisions beyond NOTES.md:
- x of rank 1 with a 1-D scale of dim(axis) elements is per-axis, as in the ONNX reference.
- a 1-D scale whose length is dynamic is per-axis: a per-tensor 1-D scale must be static [1].
- `axis` is range-checked only where it is used (per-axis and blocked), as opset 19 says.
"""

from __future__ import annotations

import math

import numpy as np

from .attributes import Attr
from .canonical import Form
from .opdef import OpDef
from .signature import Signature, same
from .types import ELEMS, is_minifloat

NAME = "dq.onnx_dequantize_linear"
T1 = ("f4E2M1FN", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "i16", "i32", "i4", "i8", "ui16", "ui4", "ui8")
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
    r = sig.operands["x"].rank
    a = sig.attrs["axis"]
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


def _output_type(sig: Signature) -> str | None:
    out, s, y = sig.attrs["output_dtype"], sig.operands["x_scale"], sig.result
    if out is not None and out not in T3:
        return f"output_dtype must be one of T3 ({', '.join(T3)}), got {out}"
    if out is None and s.elem == "f8E8M0FNU":
        return "a float8e8m0 x_scale needs output_dtype: f8E8M0FNU is not an output type (T3)"
    want = out if out is not None else s.elem
    if y is None or y.elem != want:
        got = y.elem if y is not None else "none"
        return f"the output type is output_dtype or, in its absence, the type of x_scale: expected {want}, got {got}"
    return None


def _same_shape(sig: Signature) -> str | None:
    x, y = sig.operands["x"], sig.result
    if x.rank != y.rank or not all(same(a, b) for a, b in zip(x.shape, y.shape)):
        return "x and y must have the same shape"
    return None


def _zero_point_values(sig: Signature) -> str | None:
    x = sig.operands["x"]
    zp = sig.values.get("x_zero_point")
    if zp is None or not (x.elem == "i32" or is_minifloat(ELEMS[x.elem])):
        return None
    if not np.any(np.asarray(zp, dtype=np.float64) != 0):
        return None
    if x.elem == "i32":
        return "int32 x has no zero point: x_zero_point must be absent or all zero"
    if is_minifloat(ELEMS[x.elem]):
        return f"a {x.elem} x_zero_point must be absent or zero"
    return None


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
        if d is not None and si is not None:
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
        return None  # a scalar and a one-element 1-D tensor may be mixed (NOTES.md)
    if z.rank != s.rank or not all(same(a, b) for a, b in zip(z.shape, s.shape)):
        return f"x_zero_point shape must match x_scale: {list(z.shape)} vs {list(s.shape)}"
    return None


def canonical(sig: Signature) -> Form:
    """The canonical form of a verified op."""
    r, g, a = sig.operands["x"].rank, granularity(sig), _axis(sig)

    def per_tensor(t):
        return () if t.rank == 0 else (("zero",),)

    s, z = sig.operands["x_scale"], sig.operands["x_zero_point"]
    if g == "per_tensor":
        return Form(per_tensor(s), per_tensor(z) if z is not None else None)
    if g == "per_axis":
        return Form((("dim", a),))
    b = sig.attrs["block_size"]
    return Form(tuple(("block", i, b) if i == a else ("dim", i) for i in range(r)))


OP = OpDef(
    name=NAME,
    operands=("x", "x_scale", "x_zero_point"),
    optional=("x_zero_point",),
    attrs=(Attr("axis", "i64", 1), Attr("block_size", "i64", 0), Attr("output_dtype", "type")),
    rules=(
        _element_types,
        _output_type,
        _same_shape,
        _block_size,
        _scale_rank,
        _axis_range,
        _scale_shape,
        _zero_point_shape,
    ),
    canonical=canonical,
    value_operands=("x_zero_point",),
    value_rules=(_zero_point_values,),
)


def result_elem(scale_elem: str, output_dtype: str | None) -> str:
    """The output element type: output_dtype, or the scale's type."""
    return output_dtype if output_dtype is not None else scale_elem


def build(x, x_scale, x_zero_point=None, *, axis=None, block_size=None, output_dtype=None, loc=None, ip=None):
    """Build `dq.onnx_dequantize_linear`; omitted attributes take the spec defaults."""
    from mlir import ir

    from .opdef import create, like
    from .types import elem_name

    scale_elem = elem_name(ir.RankedTensorType(x_scale.type).element_type)
    out = elem_name(output_dtype) if output_dtype is not None else None
    result = like(x, result_elem(scale_elem, out))
    values = {"axis": axis, "block_size": block_size, "output_dtype": out}
    return create(OP, [x, x_scale, x_zero_point], values, result, loc=loc, ip=ip)
