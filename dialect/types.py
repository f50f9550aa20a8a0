"""Element types of the `dq` dialect: MLIR spelling, storage kind and numpy dtype.

Signless integers are the signed spec types (NOTES.md); `si*` is accepted as a synonym.
Each entry names how a stored value is decoded: `int` (signed or unsigned, of a bit width)
or `float` (a minifloat decoded by bit manipulation, or a builtin float).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class Elem:
    name: str  # canonical MLIR spelling
    kind: str  # "int" | "float"
    bits: int
    signed: bool = True
    # minifloat layout (kind == "float" and not a builtin float): exponent bits, mantissa bits, bias
    exp_bits: int = 0
    man_bits: int = 0
    bias: int = 0
    nan: str = ""  # "ieee" | "fn" (all ones is NaN) | "fnuz" (0x80 is NaN) | "none" | "e8m0"
    dtype: object = None


ELEMS: dict[str, Elem] = {
    e.name: e
    for e in [
        Elem("i4", "int", 4, True, dtype=ml_dtypes.int4),
        Elem("ui4", "int", 4, False, dtype=ml_dtypes.uint4),
        Elem("i8", "int", 8, True, dtype=np.int8),
        Elem("ui8", "int", 8, False, dtype=np.uint8),
        Elem("i16", "int", 16, True, dtype=np.int16),
        Elem("ui16", "int", 16, False, dtype=np.uint16),
        Elem("i32", "int", 32, True, dtype=np.int32),
        Elem("f8E4M3FN", "float", 8, True, 4, 3, 7, "fn", ml_dtypes.float8_e4m3fn),
        Elem("f8E4M3FNUZ", "float", 8, True, 4, 3, 8, "fnuz", ml_dtypes.float8_e4m3fnuz),
        Elem("f8E5M2", "float", 8, True, 5, 2, 15, "ieee", ml_dtypes.float8_e5m2),
        Elem("f8E5M2FNUZ", "float", 8, True, 5, 2, 16, "fnuz", ml_dtypes.float8_e5m2fnuz),
        Elem("f4E2M1FN", "float", 4, True, 2, 1, 1, "none", ml_dtypes.float4_e2m1fn),
        Elem("f8E8M0FNU", "float", 8, False, 8, 0, 127, "e8m0", ml_dtypes.float8_e8m0fnu),
        Elem("f16", "float", 16, dtype=np.float16),
        Elem("bf16", "float", 16, dtype=ml_dtypes.bfloat16),
        Elem("f32", "float", 32, dtype=np.float32),
        Elem("f64", "float", 64, dtype=np.float64),
    ]
}

SYNONYMS = {"si4": "i4", "si8": "i8", "si16": "i16", "si32": "i32"}
BUILTIN_FLOATS = ("f16", "bf16", "f32", "f64")


def elem_name(type_) -> str:
    """The canonical spelling of an MLIR element type (`si8` reads as `i8`)."""
    text = str(type_)
    return SYNONYMS.get(text, text)


def elem(type_) -> Elem | None:
    """The `Elem` of an MLIR element type, or None for a type the dialect does not know."""
    return ELEMS.get(elem_name(type_))


def is_minifloat(e: Elem) -> bool:
    return e.kind == "float" and e.name not in BUILTIN_FLOATS


_BY_DTYPE = {np.dtype(e.dtype): e for e in ELEMS.values()}


def from_dtype(dtype) -> Elem:
    """The `Elem` for a numpy or ml_dtypes dtype; ValueError for one the dialect has no type for."""
    e = _BY_DTYPE.get(np.dtype(dtype))
    if e is None:
        raise ValueError(f"no dq element type for numpy dtype {np.dtype(dtype)}")
    return e
