"""`dq.dequantize`: the canonical form every spec op normalises to (docs/semantics.md#canonical-form).

    y[i] = round(scale[s(i)] * (decode(x)[i] - zp[z(i)]))          zero_point_mode = "subtract"
    y[i] = round(scale[s(i)] * (decode(x)[i] - implicit) + zp[z(i)]) zero_point_mode = "add"

`decode` reads the storage: an integer widened exactly, a float8/float4 decoded to f32, or, with
`unpack = "int4x4"`, nibble k of x[i0, ...] as row 4*i0+k (unsigned, implicit zero point 8, an
integer zero point read as `zp & 0xF`). The maps `s` and `z` send the output index to the scale
and zero point index. Each of their results is one `Read`: an output dim, an output dim divided
by a block size, or the constant 0; nothing else is accepted, since anything else could read out
of bounds. Arithmetic: docs/semantics.md#arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from .attributes import Attr
from .elements import ELEMENTS
from .opdef import Operand, OpDef
from .signature import Signature, Tensor, same, same_shape

NAME = "dq.dequantize"
OUTPUTS = ("f16", "bf16", "f32", "f64")
SCALES = ("f16", "bf16", "f32", "f64", "f8E8M0FNU")
MODES = ("subtract", "add")
UNPACKS = ("none", "int4x4")
INT4X4 = 4  # values per int16 element along dim 0 in OpenPPL's int4x4 packing


@dataclass(frozen=True)
class Read:
    """One result of a canonical map: output dim `dim` divided by `block` (floor), or, with
    `dim` None, the constant index 0."""

    dim: int | None
    block: int = 1

    def extent(self, size: int | None) -> int | None:
        """The operand dim this read needs for an output dim of `size` (None: dynamic); for the
        constant 0, at least 1 (returned as 1)."""
        if self.dim is None:
            return 1
        return None if size is None else math.ceil(size / self.block)


ZERO = Read(None)


def dim(d: int) -> Read:
    return Read(d)


def block(d: int, b: int) -> Read:
    return Read(d, b)


@dataclass(frozen=True)
class Form:
    """A dq op in canonical form: one Read per scale dim (and per zero point dim)."""

    scale_map: tuple
    zero_point_map: tuple | None = None  # None: the scale's
    zero_point_mode: str = "subtract"
    unpack: str = "none"
    # False: the op's zero point is not read. A spec whose zero point must be zero and whose
    # reference never subtracts it (ONNX float8/float4 x): subtracting a -0.0 would turn x = -0.0
    # into +0.0 (docs/semantics.md, "ONNX zero point values").
    reads_zero_point: bool = True

    @property
    def zp_map(self) -> tuple:
        return self.scale_map if self.zero_point_map is None else self.zero_point_map


def affine_map(rank: int, reads: tuple):
    """The AffineMap of a canonical map over `rank` output dims."""
    exprs = []
    for r in reads:
        if r.dim is None:
            exprs.append(ir.AffineConstantExpr.get(0))
        elif r.block == 1:
            exprs.append(ir.AffineDimExpr.get(r.dim))
        else:
            exprs.append(ir.AffineFloorDivExpr.get(ir.AffineDimExpr.get(r.dim), ir.AffineConstantExpr.get(r.block)))
    return ir.AffineMap.get(rank, 0, exprs)


def reads_of(m, rank: int) -> tuple | str:
    """The Reads of an AffineMap, or why it is not canonical."""
    if m.n_dims != rank or m.n_symbols != 0:
        return f"must have {rank} dims and no symbols"
    reads = []
    for expr in m.results:
        if isinstance(expr, ir.AffineDimExpr):
            reads.append(Read(ir.AffineDimExpr(expr).position))
        elif isinstance(expr, ir.AffineConstantExpr) and ir.AffineConstantExpr(expr).value == 0:
            reads.append(ZERO)
        elif isinstance(expr, ir.AffineFloorDivExpr):
            div = ir.AffineFloorDivExpr(expr)
            if not (isinstance(div.lhs, ir.AffineDimExpr) and isinstance(div.rhs, ir.AffineConstantExpr)):
                return f"result {expr} must be a dim, a dim floordiv a positive constant, or 0"
            b = ir.AffineConstantExpr(div.rhs).value
            if b <= 0:
                return f"result {expr} divides by {b}: a block size must be positive"
            reads.append(Read(ir.AffineDimExpr(div.lhs).position, b))
        else:
            return f"result {expr} must be a dim, a dim floordiv a positive constant, or 0"
    return tuple(reads)


def check_reads(reads: tuple, operand: Tensor, out_shape: tuple, what: str) -> str | None:
    """Whether `operand` has the dims `reads` need for an output of `out_shape`: a dim read as
    output dim d (block b) has ceil(size_d / b) elements (or 1 when size_d is 0: nothing is read),
    a dim read at 0 at least one."""
    if len(reads) != operand.rank:
        return f"{what} must have one result per {what.split('_map')[0]} dim ({operand.rank}), got {len(reads)}"
    for p, (r, have) in enumerate(zip(reads, operand.shape)):
        if r.dim is None:
            if have == 0:
                return f"{what} reads index 0 of dim {p}, which is empty"
            continue
        want = r.extent(out_shape[r.dim])
        if out_shape[r.dim] == 0 and have == 1:
            continue  # an empty dim reads nothing: one entry is accepted too (ONNX's range formula does, block_size 1 included)
        if not same(have, want):
            read = f"d{r.dim}" if r.block == 1 else f"d{r.dim} floordiv {r.block}"
            return f"{what} reads dim {p} as {read}: it needs {want} elements for an output dim of {out_shape[r.dim]}, got {have}"
    return None


def _storage(sig: Signature) -> str | None:
    x = sig.operands["x"]
    if sig.attrs["unpack"] == "int4x4":
        return None if x.elem == "i16" else 'unpack = "int4x4" needs i16 storage'
    e = ELEMENTS.get(x.elem)
    if e is None or not (e.kind == "int" or (e.is_minifloat and e.name != "f8E8M0FNU")):
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
    if ELEMENTS[x.elem].kind == "int":  # any integer type: subtracted exactly in a wide integer
        ze = ELEMENTS.get(z.elem)
        return None if ze is not None and ze.kind == "int" else "a subtracted zero point of integer x must be an integer"
    return None if z.elem == x.elem else f"a subtracted zero point of float x must have x's type {x.elem}, got {z.elem}"


def _shapes(sig: Signature) -> str | None:
    x, y = sig.operands["x"], sig.result
    if x.rank != y.rank:
        return "x and the result must have the same rank"
    if sig.attrs["unpack"] == "int4x4":
        if x.rank == 0:
            return 'unpack = "int4x4" needs x of rank >= 1'
        if x.shape[0] is not None and y.shape[0] is not None and y.shape[0] != INT4X4 * x.shape[0]:
            return 'with unpack = "int4x4" the result\'s dim 0 must be 4 times x\'s'
        return None if same_shape(x.shape[1:], y.shape[1:]) else "x and the result must have the same shape"
    return None if same_shape(x.shape, y.shape) else "x and the result must have the same shape"


def _maps(sig: Signature) -> str | None:
    y = sig.result
    for key, operand in (("scale_map", "scale"), ("zero_point_map", "zero_point")):
        t = sig.operands[operand]
        if t is None:
            continue
        reads = reads_of(sig.attrs[key], y.rank)
        if isinstance(reads, str):
            return f"{key} {reads}"
        message = check_reads(reads, t, y.shape, key)
        if message:
            return message
    return None


def canonical(sig: Signature) -> Form:
    rank = sig.result.rank
    return Form(
        reads_of(sig.attrs["scale_map"], rank),
        reads_of(sig.attrs["zero_point_map"], rank),
        sig.attrs["zero_point_mode"],
        sig.attrs["unpack"],
    )


OP = OpDef(
    name=NAME,
    summary="the canonical form: per-dim scale and zero point maps, one lowering for every spec op",
    operands=(Operand("x", "data"), Operand("scale", "scale"), Operand("zero_point", "zero_point", optional=True)),
    attrs=(
        Attr("scale_map", "map", required=True),
        Attr("zero_point_map", "map", required=True),
        Attr("zero_point_mode", "str", "subtract"),
        Attr("unpack", "str", "none"),
    ),
    rules=(_attrs, _storage, _types, _zero_point, _shapes, _maps),
    canonical=canonical,
)


def build(x, scale, zero_point, form: Form, result_type, *, loc=None, ip=None):
    """`dq.dequantize` for `form`; returns its result value."""
    rank = ir.RankedTensorType(result_type).rank
    values = {
        "scale_map": affine_map(rank, form.scale_map),
        "zero_point_map": affine_map(rank, form.zp_map),
        "zero_point_mode": form.zero_point_mode,
        "unpack": form.unpack,
    }
    return OP.create([x, scale, zero_point if form.reads_zero_point else None], values, result_type, loc=loc, ip=ip)
