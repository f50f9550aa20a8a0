"""The element types of the dq dialect: one table, used everywhere.

Each `Element` says how one spec type is spelled in MLIR and built with the bindings' typed
builders, its numpy/ml_dtypes dtype (one element per byte for sub-byte types), its ONNX
`TensorProto.DataType` name, the C type of its bits in memory, its bit width and packing (how many
fit in a byte in the packed layout), its storage range for integers, and for minifloats the
layout the decoder reads (docs/semantics.md#element-types). Signless integers are the signed
spec types; `si*` reads as a synonym of the signless type.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np
from mlir import ir


@dataclass(frozen=True)
class Minifloat:
    """The bit layout of a float8/float4/e8m0 format, as the decoder reads it."""

    exp_bits: int
    man_bits: int
    bias: int
    nan: str  # "ieee" | "fn" (all ones is NaN) | "fnuz" (only 0x80 is NaN) | "none" | "e8m0"


@dataclass(frozen=True)
class Element:
    name: str  # canonical MLIR spelling, e.g. "i4", "ui8", "f8E4M3FN"
    kind: str  # "int" | "float"
    bits: int
    signed: bool
    dtype_name: str  # its numpy or ml_dtypes type: "int8", "ml_dtypes.int4" (the `dtype` property)
    c_type: str  # the C type of one element's bits as passed one per byte
    onnx: str | None  # ONNX TensorProto.DataType name
    make: Callable  # () -> ir.Type, with the bindings' typed builders
    minifloat: Minifloat | None = None

    @functools.cached_property
    def dtype(self) -> np.dtype:
        """The numpy / ml_dtypes dtype (one element per byte below 8 bits). ml_dtypes is imported
        here, on the first use of one of its types, not with the table: start-up (`dequant-opt
        --help`, the IREE stage) does not pay for a type it never uses (docs/development.md#imports)."""
        module, _, name = self.dtype_name.rpartition(".")
        if module == "ml_dtypes":
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, name))
        return np.dtype(name)

    def ir_type(self):
        """The MLIR type (in the current context)."""
        return self.make()

    @property
    def per_byte(self) -> int:
        """Elements per byte in the packed layout (1 for types of 8 bits and more)."""
        return 8 // self.bits if self.bits < 8 else 1

    @property
    def sub_byte(self) -> bool:
        return self.bits < 8

    @property
    def min(self) -> int:
        """The smallest stored integer."""
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        """The largest stored integer."""
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def carrier(self) -> np.dtype:
        """The unsigned integer dtype holding one element's bits (as a memref element in memory)."""
        return np.dtype(f"uint{max(8, self.dtype.itemsize * 8)}")

    @property
    def is_minifloat(self) -> bool:
        return self.minifloat is not None


def _int(bits: int, signed: bool):
    def make():
        return ir.IntegerType.get_signless(bits) if signed else ir.IntegerType.get_unsigned(bits)

    return make


def _float(cls_name: str):
    def make():
        return getattr(ir, cls_name).get()

    return make


def _e(name, kind, bits, signed, dtype_name, c_type, onnx, make, minifloat=None) -> Element:
    return Element(name, kind, bits, signed, dtype_name, c_type, onnx, make, minifloat)


ELEMENTS: dict[str, Element] = {
    e.name: e
    for e in [
        _e("i2", "int", 2, True, "ml_dtypes.int2", "int8_t", "INT2", _int(2, True)),
        _e("ui2", "int", 2, False, "ml_dtypes.uint2", "uint8_t", "UINT2", _int(2, False)),
        _e("i4", "int", 4, True, "ml_dtypes.int4", "int8_t", "INT4", _int(4, True)),
        _e("ui4", "int", 4, False, "ml_dtypes.uint4", "uint8_t", "UINT4", _int(4, False)),
        _e("i8", "int", 8, True, "int8", "int8_t", "INT8", _int(8, True)),
        _e("ui8", "int", 8, False, "uint8", "uint8_t", "UINT8", _int(8, False)),
        _e("i16", "int", 16, True, "int16", "int16_t", "INT16", _int(16, True)),
        _e("ui16", "int", 16, False, "uint16", "uint16_t", "UINT16", _int(16, False)),
        _e("i32", "int", 32, True, "int32", "int32_t", "INT32", _int(32, True)),
        _e("f8E4M3FN", "float", 8, True, "ml_dtypes.float8_e4m3fn", "uint8_t", "FLOAT8E4M3FN",
           _float("Float8E4M3FNType"), Minifloat(4, 3, 7, "fn")),  # fmt: skip
        _e("f8E4M3FNUZ", "float", 8, True, "ml_dtypes.float8_e4m3fnuz", "uint8_t", "FLOAT8E4M3FNUZ",
           _float("Float8E4M3FNUZType"), Minifloat(4, 3, 8, "fnuz")),  # fmt: skip
        _e("f8E5M2", "float", 8, True, "ml_dtypes.float8_e5m2", "uint8_t", "FLOAT8E5M2",
           _float("Float8E5M2Type"), Minifloat(5, 2, 15, "ieee")),  # fmt: skip
        _e("f8E5M2FNUZ", "float", 8, True, "ml_dtypes.float8_e5m2fnuz", "uint8_t", "FLOAT8E5M2FNUZ",
           _float("Float8E5M2FNUZType"), Minifloat(5, 2, 16, "fnuz")),  # fmt: skip
        _e("f4E2M1FN", "float", 4, True, "ml_dtypes.float4_e2m1fn", "uint8_t", "FLOAT4E2M1",
           _float("Float4E2M1FNType"), Minifloat(2, 1, 1, "none")),  # fmt: skip
        _e("f8E8M0FNU", "float", 8, False, "ml_dtypes.float8_e8m0fnu", "uint8_t", "FLOAT8E8M0",
           _float("Float8E8M0FNUType"), Minifloat(8, 0, 127, "e8m0")),  # fmt: skip
        _e("f16", "float", 16, True, "float16", "uint16_t", "FLOAT16", _float("F16Type")),
        _e("bf16", "float", 16, True, "ml_dtypes.bfloat16", "uint16_t", "BFLOAT16", _float("BF16Type")),
        _e("f32", "float", 32, True, "float32", "float", "FLOAT", _float("F32Type")),
        _e("f64", "float", 64, True, "float64", "double", "DOUBLE", _float("F64Type")),
    ]
}

_FLOAT_CLASSES = {  # bindings class name -> element name
    "Float8E4M3FNType": "f8E4M3FN", "Float8E4M3FNUZType": "f8E4M3FNUZ", "Float8E5M2Type": "f8E5M2",
    "Float8E5M2FNUZType": "f8E5M2FNUZ", "Float4E2M1FNType": "f4E2M1FN", "Float8E8M0FNUType": "f8E8M0FNU",
    "F16Type": "f16", "BF16Type": "bf16", "F32Type": "f32", "F64Type": "f64",
}  # fmt: skip
_BY_NUMPY_DTYPE = {e.dtype: e for e in ELEMENTS.values() if not e.dtype_name.startswith("ml_dtypes.")}
_BY_ONNX = {e.onnx: e for e in ELEMENTS.values() if e.onnx}


class UnknownElementError(ValueError):
    """A type, dtype or ONNX type the dq dialect has no element type for."""


def name_of(type_) -> str | None:
    """The element name of an MLIR type (`si8` reads as `i8`), or None for a type outside the table."""
    if isinstance(type_, ir.IntegerType):
        t = ir.IntegerType(type_)
        name = f"{'u' if t.is_unsigned else ''}i{t.width}"
        return name if name in ELEMENTS else None
    for cls, name in _FLOAT_CLASSES.items():
        if isinstance(type_, getattr(ir, cls)):
            return name
    return None


def of_type(type_) -> Element | None:
    """The `Element` of an MLIR element type, or None."""
    name = name_of(type_)
    return ELEMENTS[name] if name else None


def of_dtype(dtype) -> Element:
    """The `Element` of a numpy/ml_dtypes dtype; UnknownElementError for one the dialect lacks."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    # A numpy dtype is found without importing ml_dtypes; any other is an ml_dtypes one or none.
    e = None if d is None else _BY_NUMPY_DTYPE.get(d) or _by_dtype().get(d)
    if e is None:
        raise UnknownElementError(f"no dq element type for {_dtype_words(dtype)}")
    return e


@functools.cache
def _by_dtype() -> dict[np.dtype, Element]:
    return {e.dtype: e for e in ELEMENTS.values()}


def of_onnx(name: str) -> Element | None:
    """The `Element` of an ONNX TensorProto.DataType name ("INT4", "FLOAT8E4M3FN", ...), or None."""
    return _BY_ONNX.get(name)


def _dtype_words(dtype) -> str:
    try:
        return f"numpy dtype {np.dtype(dtype)}"
    except TypeError:
        return repr(dtype)


def tensor_type(shape, element: Element | str):
    """A ranked tensor type; `None` in `shape` is a dynamic dim."""
    e = ELEMENTS[element] if isinstance(element, str) else element
    dims = [ir.ShapedType.get_dynamic_size() if d is None else int(d) for d in shape]
    return ir.RankedTensorType.get(dims, e.ir_type())
