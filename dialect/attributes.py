"""Attributes of dq ops: their kinds, spec defaults, and reading them from MLIR."""

from __future__ import annotations

from dataclasses import dataclass

from .types import elem_name


@dataclass(frozen=True)
class Attr:
    name: str
    kind: str  # "i64" | "str" | "bool" | "type" | "i64_set" | "map"
    default: object = None  # None: optional with no value, or required when `required`
    required: bool = False


class AttrError(Exception):
    """An attribute present on an op is not of its declared kind."""


KIND_WORDS = {
    "i64": "a 64-bit integer attribute (i64)",
    "str": "a string attribute",
    "bool": "a bool attribute",
    "type": "a type attribute",
    "i64_set": "an array<i64> attribute",
    "map": "an affine map attribute",
}


def read(op, attrs: tuple[Attr, ...]) -> dict:
    """Attribute values of `op` as Python values, with spec defaults for omitted ones."""
    from mlir import ir

    values = {}
    for a in attrs:
        if a.name not in op.attributes:
            if a.required:
                raise AttrError(f"attribute '{a.name}' is required")
            values[a.name] = a.default
            continue
        attr = op.attributes[a.name]
        try:
            if a.kind == "i64":
                i = ir.IntegerAttr(attr)
                if str(i.type) != "i64":
                    raise ValueError
                values[a.name] = i.value
            elif a.kind == "bool":
                values[a.name] = ir.BoolAttr(attr).value
            elif a.kind == "str":
                values[a.name] = ir.StringAttr(attr).value
            elif a.kind == "type":
                values[a.name] = elem_name(ir.TypeAttr(attr).value)
            elif a.kind == "i64_set":
                values[a.name] = list(ir.DenseI64ArrayAttr(attr))
            elif a.kind == "map":
                values[a.name] = ir.AffineMapAttr(attr).value
        except (ValueError, TypeError):
            raise AttrError(f"attribute '{a.name}' must be {KIND_WORDS[a.kind]}") from None
    return values


def build(attrs: tuple[Attr, ...], values: dict) -> dict:
    """MLIR attributes for the given Python values (omitted or None values are left out)."""
    from mlir import ir

    out = {}
    for a in attrs:
        v = values.get(a.name)
        if v is None:
            continue
        if a.kind == "i64":
            out[a.name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))
        elif a.kind == "bool":
            out[a.name] = ir.BoolAttr.get(bool(v))
        elif a.kind == "str":
            out[a.name] = ir.StringAttr.get(v)
        elif a.kind == "type":
            out[a.name] = ir.TypeAttr.get(v if isinstance(v, ir.Type) else ir.Type.parse(v))
        elif a.kind == "i64_set":
            out[a.name] = ir.DenseI64ArrayAttr.get([int(i) for i in v])
        elif a.kind == "map":
            out[a.name] = ir.AffineMapAttr.get(v)
    return out
