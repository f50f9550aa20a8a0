"""`dq.onednn_dynamic_dequantize`: oneDNN Graph DynamicDequantize-1.

    output = (input - zps) * scales      (zps = 0 when absent)

`qtype` "per_tensor" (default): scales and zps hold one element. "per_channel": they hold
dim(axis) elements, `axis` in [-r, r-1] (used only for per_channel). input s8/u8, scales f32
1-D, zps s8/u8/s32 1-D (its type may differ from input's: the subtraction is exact in i64),
output f32.
"""

from __future__ import annotations

from .attributes import Attr
from .canonical import Form
from .opdef import OpDef
from .signature import Signature, same

NAME = "dq.onednn_dynamic_dequantize"
T1 = ("i8", "ui8")
T3 = ("i8", "ui8", "i32")
QTYPES = ("per_tensor", "per_channel")


def _types(sig: Signature) -> str | None:
    x, s, z, y = sig.operands["input"], sig.operands["scales"], sig.operands["zps"], sig.result
    if x.elem not in T1:
        return f"input must be a s8 or u8 tensor (T1), got {x.elem}"
    if s.elem != "f32":
        return f"scales must be an fp32 tensor (T2), got {s.elem}"
    if z is not None and z.elem not in T3:
        return f"zps must be a u8, s8 or s32 tensor (T3), got {z.elem}"
    if y is None or y.elem != "f32":
        return "output must be an fp32 tensor (T2)"
    return None


def _shape(sig: Signature) -> str | None:
    x, y = sig.operands["input"], sig.result
    if x.rank != y.rank or not all(same(a, b) for a, b in zip(x.shape, y.shape)):
        return "output must have the shape of input"
    return None


def _qtype(sig: Signature) -> str | None:
    if sig.attrs["qtype"] not in QTYPES:
        return f"qtype must be \"per_tensor\" or \"per_channel\", got \"{sig.attrs['qtype']}\""
    return None


def _one_d(sig: Signature) -> str | None:
    for name in ("scales", "zps"):
        t = sig.operands[name]
        if t is not None and t.rank != 1:
            return f"{name} must be a 1D tensor, got rank {t.rank}"
    return None


def _axis(sig: Signature) -> str | None:
    r = sig.operands["input"].rank
    if sig.attrs["qtype"] == "per_channel" and not -r <= sig.attrs["axis"] <= r - 1:
        return f"axis {sig.attrs['axis']} must be in [-r, r-1] where r = rank(input) = {r}"
    return None


def _lengths(sig: Signature) -> str | None:
    x = sig.operands["input"]
    if sig.attrs["qtype"] == "per_tensor":
        want, words = 1, "there should be only one element"
    else:
        a = sig.attrs["axis"] % x.rank
        want, words = x.shape[a], f"the element number should equal dim(axis) = {x.shape[a]}"
    for name in ("scales", "zps"):
        t = sig.operands[name]
        if t is not None and not same(t.shape[0], want):
            return f"for qtype = {sig.attrs['qtype']}, {words} in the {name} tensor, got {t.shape[0]}"
    return None


def canonical(sig: Signature) -> Form:
    if sig.attrs["qtype"] == "per_tensor":
        return Form((("zero",),))
    return Form((("dim", sig.attrs["axis"] % sig.operands["input"].rank),))


OP = OpDef(
    name=NAME,
    operands=("input", "scales", "zps"),
    optional=("zps",),
    attrs=(Attr("qtype", "str", "per_tensor"), Attr("axis", "i64", 1)),
    rules=(_types, _shape, _qtype, _one_d, _axis, _lengths),
    canonical=canonical,
)


def build(input, scales, zps=None, *, qtype=None, axis=None, loc=None, ip=None):
    """Build `dq.onednn_dynamic_dequantize`; omitted attributes take the spec defaults."""
    from .opdef import create, like

    return create(OP, [input, scales, zps], {"qtype": qtype, "axis": axis}, like(input, "f32"), loc=loc, ip=ip)
