"""`dq.onednn_dynamic_dequantize`: oneDNN Graph DynamicDequantize, current spec.

    dst = (src - zps) * scales      (zps = 0 when absent)

src s8/u8/s4/u4; scales f16/bf16/f32, and dst of the scales' type; zps s8/u8/s32 for 8-bit src,
s4/u4/s32 for 4-bit src (docs/semantics.md#onednn-types). `qtype` "per_tensor" (default: one
element), "per_channel" (1-D, dim(axis) elements; `axis` default 1, used only here) or
"per_group" (`group_shape` of src's rank: scales and zps have src's rank, src dim / group size
on grouped dims; docs/semantics.md#onednn-granularity).
"""

from __future__ import annotations

from . import canonical
from .attributes import Attr
from .canonical import Form
from .opdef import Operand, OpDef
from .signature import Signature, Tensor, same, show

NAME = "dq.onednn_dynamic_dequantize"
SRC = ("i8", "ui8", "i4", "ui4")
SCALES = ("f32", "f16", "bf16")
ZPS = {8: ("i8", "ui8", "i32"), 4: ("i4", "ui4", "i32")}
QTYPES = ("per_tensor", "per_channel", "per_group")
WORDS = {"i8": "s8", "ui8": "u8", "i4": "s4", "ui4": "u4", "i32": "s32", "f32": "f32", "f16": "f16", "bf16": "bf16"}


def _types(sig: Signature) -> str | None:
    x, s, z = sig.operands["src"], sig.operands["scales"], sig.operands["zps"]
    if x.elem not in SRC:
        return f"src must be a s8, u8, s4 or u4 tensor, got {x.elem}"
    if s.elem not in SCALES:
        return f"scales must be a f32, f16 or bf16 tensor, got {s.elem}"
    if z is not None:
        allowed = ZPS[4 if x.elem in ("i4", "ui4") else 8]
        if z.elem not in allowed:
            words = ", ".join(WORDS[t] for t in allowed)
            return f"zps of a {WORDS[x.elem]} src must be {words}, got {z.elem}"
    return None


def _qtype(sig: Signature) -> str | None:
    q, g = sig.attrs["qtype"], sig.attrs["group_shape"]
    if q not in QTYPES:
        return f"qtype must be \"per_tensor\", \"per_channel\" or \"per_group\", got \"{q}\""
    if q == "per_group" and g is None:
        return "qtype per_group needs group_shape"
    if q != "per_group" and g is not None:
        return f"group_shape is only used with qtype per_group, got qtype {q}"
    return None


def _axis(sig: Signature) -> str | None:
    r = sig.operands["src"].rank
    if sig.attrs["qtype"] == "per_channel" and not -r <= sig.attrs["axis"] <= r - 1:
        return f"axis {sig.attrs['axis']} must be in [-r, r-1] where r = rank(src) = {r}"
    return None


def _per_tensor(sig: Signature) -> str | None:
    if sig.attrs["qtype"] != "per_tensor":
        return None
    for name in ("scales", "zps"):
        t = sig.operands[name]
        if t is not None and not all(same(d, 1) for d in t.shape):
            return f"for qtype = per_tensor, there should be only one element in the {name} tensor, got shape {show(t.shape)}"
    return None


def _per_channel(sig: Signature) -> str | None:
    if sig.attrs["qtype"] != "per_channel":
        return None
    x = sig.operands["src"]
    want = x.shape[sig.attrs["axis"] % x.rank]
    for name in ("scales", "zps"):
        t = sig.operands[name]
        if t is None:
            continue
        if t.rank != 1:
            return f"for qtype = per_channel, {name} must be a 1D tensor, got rank {t.rank}"
        if not same(t.shape[0], want):
            return f"for qtype = per_channel, the element number of {name} should equal dim(axis) = {want}, got {t.shape[0]}"
    return None


def _per_group(sig: Signature) -> str | None:
    if sig.attrs["qtype"] != "per_group":
        return None
    x, groups = sig.operands["src"], sig.attrs["group_shape"]
    if len(groups) != x.rank:
        return f"group_shape must have one entry per src dim ({x.rank}), got {list(groups)}"
    if any(g < 1 for g in groups):
        return f"group_shape entries must be >= 1, got {list(groups)}"
    for d, (n, g) in enumerate(zip(x.shape, groups)):
        if g > 1 and n is not None and n % g:
            return f"src dim {d} ({n}) must be divisible by its group size {g}"
    want = tuple(None if n is None else n // g for n, g in zip(x.shape, groups))
    for name in ("scales", "zps"):
        t = sig.operands[name]
        if t is not None and (t.rank != x.rank or not all(same(a, b) for a, b in zip(t.shape, want))):
            return (
                f"for qtype = per_group, {name} must have src's rank with src dim / group size on grouped "
                f"dims: {show(want)}, got {show(t.shape)}"
            )
    return None


def result(sig: Signature) -> Tensor:
    """dst: src's shape, of the scales' type."""
    return Tensor(sig.operands["scales"].elem, sig.operands["src"].shape)


def canonical_form(sig: Signature) -> Form:
    q, s = sig.attrs["qtype"], sig.operands["scales"]
    if q == "per_tensor":
        reads = tuple(canonical.ZERO for _ in s.shape)
        z = sig.operands["zps"]
        return Form(reads, None if z is None else tuple(canonical.ZERO for _ in z.shape))
    if q == "per_channel":
        return Form((canonical.dim(sig.attrs["axis"] % sig.operands["src"].rank),))
    return Form(tuple(canonical.block(d, g) if g > 1 else canonical.dim(d) for d, g in enumerate(sig.attrs["group_shape"])))


DOC = """oneDNN Graph DynamicDequantize: ``dst = (src - zps) * scales``.

Parameters
----------
src : array_like or dequant.Packed
    int8, uint8, int4 or uint4 (ml_dtypes; 4-bit also as `dequant.Packed`).
scales : array_like
    float32, float16 or bfloat16; dst has this type. per_tensor: one element; per_channel: 1-D of
    ``src.shape[axis]`` elements; per_group: src's rank, ``src dim / group size`` on grouped dims.
zps : array_like or dequant.Packed, optional
    Shaped as `scales`: int8, uint8 or int32 for 8-bit src, int4, uint4 or int32 for 4-bit src.
qtype : {"per_tensor", "per_channel", "per_group"}, default "per_tensor"
axis : int, default 1
    The channel axis for per_channel, in [-r, r-1].
group_shape : sequence of int, optional
    For per_group (required there): the group size on each src dim (1 where not grouped); each
    grouped dim must be divisible by its group size.
out : numpy.ndarray, optional
    Where to write dst: writable, C-contiguous, of dst's dtype and shape, overlapping no input.

Returns
-------
numpy.ndarray
    dst, of src's shape and the scales' dtype.

Raises
------
ValueError
    When the arrays or attributes break a rule of the spec (the message names it), or `out`
    does not fit; always before any native code runs.

Examples
--------
>>> import numpy as np
>>> from dequant import ops
>>> src = np.array([[10, 20, 30, 40]], np.uint8)
>>> ops.onednn_dynamic_dequantize(src, np.array([[0.5, 0.25]], np.float32), np.array([[10, 0]], np.uint8),
...                               qtype="per_group", group_shape=[1, 2])
array([[ 0. ,  5. ,  7.5, 10. ]], dtype=float32)
"""

OP = OpDef(
    name=NAME,
    summary="oneDNN Graph DynamicDequantize (s8/u8/s4/u4; per_tensor, per_channel, per_group)",
    operands=(Operand("src", "data"), Operand("scales", "scale"), Operand("zps", "zero_point", optional=True)),
    attrs=(Attr("qtype", "str", "per_tensor"), Attr("axis", "i64", 1), Attr("group_shape", "i64_list")),
    rules=(_types, _qtype, _axis, _per_tensor, _per_channel, _per_group),
    canonical=canonical_form,
    result=result,
    result_type_words="dst has the scales' type",
    result_shape_words="dst must have the shape of src",
    doc=DOC,
    api="onednn_dynamic_dequantize",
)

build = OP.build
