"""`dq.dequantize`: the canonical form every spec op normalises to.

    y[i] = convert(scale[scale_map(i)] * (decode(x)[i] - zp[zero_point_map(i)]))   ("subtract")
    y[i] = convert(scale[scale_map(i)] * (decode(x)[i] - implicit) + zp[...])      ("add")

`decode` reads the storage: an integer widened exactly, a float8/float4 decoded to f32, or, with
`unpack = "int4x4"`, nibble k of x[i0, ...] as row 4*i0+k (unsigned, implicit zero point 8, an
integer zero point read as `zp & 0xF`). The maps send the output index to the scale and zero
point index: a dim, a dim divided by a block size, or the constant 0. Arithmetic is in f32
(f64 for an f64 output), the subtraction exact in a wide integer (NOTES.md, Arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass

from .attributes import Attr
from .opdef import OpDef
from .signature import Signature, same
from .types import ELEMS, is_minifloat

NAME = "dq.dequantize"
OUTPUTS = ("f16", "bf16", "f32", "f64")
SCALES = ("f16", "bf16", "f32", "f64", "f8E8M0FNU")
MODES = ("subtract", "add")
UNPACKS = ("none", "int4x4")


@dataclass(frozen=True)
class Form:
    """A spec op in canonical form. A map entry is ("dim", d), ("block", d, b) or ("zero",)."""

    scale_map: tuple
    zero_point_map: tuple | None = None
    zero_point_mode: str = "subtract"
    unpack: str = "none"


def affine_map(rank: int, entries: tuple):
    """The AffineMap of a canonical map: one result per scale (or zero point) dim."""
    from mlir import ir

    exprs = []
    for e in entries:
        if e[0] == "dim":
            exprs.append(ir.AffineDimExpr.get(e[1]))
        elif e[0] == "block":
            exprs.append(ir.AffineFloorDivExpr.get(ir.AffineDimExpr.get(e[1]), ir.AffineConstantExpr.get(e[2])))
        else:
            exprs.append(ir.AffineConstantExpr.get(0))
    return ir.AffineMap.get(rank, 0, exprs)


def _storage(sig: Signature) -> str | None:
    x = sig.operands["x"]
    if sig.attrs["unpack"] == "int4x4":
        return None if x.elem == "i16" else "unpack = \"int4x4\" needs i16 storage"
    e = ELEMS.get(x.elem)
    if e is None or not (e.kind == "int" or (is_minifloat(e) and e.name != "f8E8M0FNU")):
        return f"x must be an integer or float8/float4 storage type, got {x.elem}"
    return None


def _types(sig: Signature) -> str | None:
    s, y = sig.operands["scale"], sig.result
    if s.elem not in SCALES:
        return f"scale must be one of {', '.join(SCALES)}, got {s.elem}"
    if y is None or y.elem not in OUTPUTS:
        return f"result must be a tensor of {', '.join(OUTPUTS)}"
    return None


def _attrs(sig: Signature) -> str | None:
    if sig.attrs["zero_point_mode"] not in MODES:
        return f"zero_point_mode must be one of {', '.join(MODES)}"
    if sig.attrs["unpack"] not in UNPACKS:
        return f"unpack must be one of {', '.join(UNPACKS)}"
    return None


def _zero_point(sig: Signature) -> str | None:
    z, x = sig.operands["zero_point"], sig.operands["x"]
    if z is None:
        return None
    if sig.attrs["zero_point_mode"] == "add":
        return None if z.elem in OUTPUTS else "an added zero point must be a float tensor"
    if sig.attrs["unpack"] == "int4x4":
        return None if z.elem == "i8" else f"an int4x4 zero point must be i8, got {z.elem}"
    if ELEMS[x.elem].kind == "int":  # any integer type: subtracted exactly in a wide integer
        return None if z.elem in ELEMS and ELEMS[z.elem].kind == "int" else "a subtracted zero point of integer x must be an integer"
    return None if z.elem == x.elem else f"a subtracted zero point of float x must have x's type {x.elem}, got {z.elem}"


def _shapes(sig: Signature) -> str | None:
    x, y = sig.operands["x"], sig.result
    if x.rank != y.rank:
        return "x and the result must have the same rank"
    dims = list(zip(x.shape, y.shape))
    if sig.attrs["unpack"] == "int4x4":
        if x.rank == 0:
            return "unpack = \"int4x4\" needs x of rank >= 1"
        d0x, d0y = dims.pop(0)
        if d0x is not None and d0y is not None and d0y != 4 * d0x:
            return "with unpack = \"int4x4\" the result's dim 0 must be 4 times x's"
    if not all(same(a, b) for a, b in dims):
        return "x and the result must have the same shape"
    return None


def _maps(sig: Signature) -> str | None:
    rank = sig.result.rank
    for key, operand in (("scale_map", "scale"), ("zero_point_map", "zero_point")):
        t, m = sig.operands[operand], sig.attrs[key]
        if t is None:
            continue
        if m.n_dims != rank or m.n_symbols != 0:
            return f"{key} must have {rank} dims and no symbols"
        if len(m.results) != t.rank:
            return f"{key} must have one result per {operand} dim ({t.rank})"
    return None


OP = OpDef(
    name=NAME,
    operands=("x", "scale", "zero_point"),
    optional=("zero_point",),
    attrs=(
        Attr("scale_map", "map", required=True),
        Attr("zero_point_map", "map", required=True),
        Attr("zero_point_mode", "str", "subtract"),
        Attr("unpack", "str", "none"),
    ),
    rules=(_attrs, _storage, _types, _zero_point, _shapes, _maps),
)


def build(x, scale, zero_point, form: Form, result_type, *, loc=None, ip=None):
    """Build `dq.dequantize` for `form`; returns its result value."""
    from mlir import ir

    from .opdef import create

    rank = ir.RankedTensorType(result_type).rank
    zp_map = form.zero_point_map if form.zero_point_map is not None else form.scale_map
    values = {
        "scale_map": affine_map(rank, form.scale_map),
        "zero_point_map": affine_map(rank, zp_map),
        "zero_point_mode": form.zero_point_mode,
        "unpack": form.unpack,
    }
    return create(OP, [x, scale, zero_point], values, result_type, loc=loc, ip=ip)
