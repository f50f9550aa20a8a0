"""Attributes of dq ops: kinds, spec defaults, and their three spellings.

An `Attr` is read from an MLIR op (`read`), built as an MLIR attribute (`build`), and taken from
a Python keyword argument of the numpy API (`from_python`), so the kinds and defaults live here
once. Errors name the attribute and what it must be.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np
from mlir import ir

from .elements import ELEMENTS, UnknownElementError, name_of, of_dtype

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


@dataclass(frozen=True)
class Attr:
    name: str
    kind: str  # "i64" | "str" | "bool" | "type" | "i64_set" | "i64_list" | "map"
    default: object = None  # the spec default (None: absent)
    required: bool = False


class AttrError(ValueError):
    """An attribute is not of its declared kind, or a required one is missing."""


KIND_WORDS = {
    "i64": "a 64-bit integer attribute (i64)",
    "str": "a string attribute (UTF-8)",
    "bool": "a bool attribute",
    "type": "a type attribute of a dq element type",
    "i64_set": "an array<i64> attribute",
    "i64_list": "an array<i64> attribute",
    "map": "an affine map attribute",
}


def text(attr) -> str:
    """A StringAttr's value for names and messages: its bytes as UTF-8, invalid bytes as `\\xNN`
    (reading `.value` of a non-UTF-8 string raises inside the bindings; found by fuzzing)."""
    return ir.StringAttr(attr).value_bytes.decode("utf-8", "backslashreplace")


def read(op, attrs: tuple[Attr, ...]) -> dict:
    """Attribute values of `op` as Python values, with spec defaults for omitted ones."""
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
                if not (isinstance(i.type, ir.IntegerType) and ir.IntegerType(i.type).width == 64):
                    raise ValueError
                values[a.name] = i.value
            elif a.kind == "bool":
                values[a.name] = ir.BoolAttr(attr).value
            elif a.kind == "str":
                values[a.name] = ir.StringAttr(attr).value_bytes.decode("utf-8")  # UnicodeDecodeError is a ValueError
            elif a.kind == "type":
                values[a.name] = name_of(ir.TypeAttr(attr).value)
                if values[a.name] is None:
                    raise ValueError
            elif a.kind in ("i64_set", "i64_list"):
                values[a.name] = list(ir.DenseI64ArrayAttr(attr))
            elif a.kind == "map":
                values[a.name] = ir.AffineMapAttr(attr).value
        except (ValueError, TypeError):
            raise AttrError(f"attribute '{a.name}' must be {KIND_WORDS[a.kind]}") from None
    return values


def build(attrs: tuple[Attr, ...], values: dict) -> dict:
    """MLIR attributes for Python values (omitted or None values are left out)."""
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
            out[a.name] = ir.TypeAttr.get(v if isinstance(v, ir.Type) else ELEMENTS[v].ir_type())
        elif a.kind in ("i64_set", "i64_list"):
            out[a.name] = ir.DenseI64ArrayAttr.get([int(i) for i in v])
        elif a.kind == "map":
            out[a.name] = ir.AffineMapAttr.get(v)
    return out


def from_python(a: Attr, value):
    """A Python keyword argument as the attribute's value (what `read` gives); AttrError if it is
    not of the attribute's kind (a float for an integer, a string for a set, ...)."""
    if value is None:
        if a.required:
            raise AttrError(f"{a.name} is required")
        return a.default
    if a.kind == "i64":
        return _i64(a.name, value)
    if a.kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise AttrError(f"{a.name} must be True or False, got {value!r}")
    if a.kind == "str":
        if not isinstance(value, str):
            raise AttrError(f"{a.name} must be a string, got {value!r}")
        return value
    if a.kind == "type":
        try:
            return of_dtype(value).name
        except UnknownElementError as e:
            raise AttrError(f"{a.name}: {e}") from None
    if a.kind in ("i64_set", "i64_list"):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise AttrError(f"{a.name} must be a {'set' if a.kind == 'i64_set' else 'sequence'} of integers, got {value!r}")
        items = [_i64(a.name, v) for v in value]
        if a.kind == "i64_set":
            if len(set(items)) != len(items):
                raise AttrError(f"{a.name} must not repeat an axis, got {items}")
            items = sorted(items)  # a set: its order carries no meaning (docs/semantics.md#ngraph-dequantize)
        return items
    raise AttrError(f"{a.name} cannot be given from Python")


def _i64(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise AttrError(f"{name} must be an integer, got {value!r}")
    try:
        i = operator.index(value)  # rejects 0.7 rather than truncating it
    except TypeError:
        raise AttrError(f"{name} must be an integer, got {value!r}") from None
    if not I64_MIN <= i <= I64_MAX:
        raise AttrError(f"{name} must fit in a 64-bit signed integer, got {i}")
    return i
