"""Constant tensors as numpy arrays and back, through attribute APIs only.

`read(value)` gives the value of an `arith.constant` dense tensor of any dq element type as a
numpy array of that element's dtype (ml_dtypes for bf16, float8, float4, 4- and 2-bit integers).
The Python bindings convert only some element types to buffers, so the others are read from the
attribute's raw storage through MLIR's C API (`mlirDenseElementsAttrGetRawData`, the same library
the bindings are built on): MLIR keeps each element of fewer than 8 bits in its own byte (the low
bits), every other element in its natural width, and a splat once. `dense_resource` blobs are not
read (the C API gives no safe access to a blob that may be absent): their values count as unknown.

`attribute(array, element)` is the inverse: a `DenseElementsAttr` built from the array's bits.
"""

from __future__ import annotations

import ctypes
import os

import mlir._mlir_libs as libs
import numpy as np
from mlir import ir

from .elements import Element, of_type


class _ArrayRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class _CAPI:
    """The few C API functions the bindings do not expose for every element type."""

    def __init__(self):
        lib = ctypes.CDLL(os.path.join(os.path.dirname(libs.__file__), "libMLIRPythonCAPI.so"))
        self.raw_data = lib.mlirDenseElementsAttrGetRawData
        self.raw_data.restype, self.raw_data.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
        self.pointer = ctypes.pythonapi.PyCapsule_GetPointer
        self.pointer.restype, self.pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

        self.is_resource = lib.mlirAttributeIsADenseResourceElements
        self.is_resource.restype, self.is_resource.argtypes = ctypes.c_bool, [ctypes.c_void_p]
        # No C API function reads a blob; `DenseResourceElementsAttr::getData()` (exported by the
        # same library, Itanium C++ ABI: `this` is the address of the attribute's one pointer, the
        # ArrayRef<char> comes back in two registers) gives its bytes, or an empty array when the
        # blob is absent (a handle without data: never a dangling read).
        self.blob = lib._ZN4mlir25DenseResourceElementsAttr7getDataEv
        self.blob.restype, self.blob.argtypes = _ArrayRef, [ctypes.c_void_p]

    def address(self, attr) -> int:
        return self.pointer(attr._CAPIPtr, b"mlir.ir.Attribute._CAPIPtr")

    def raw(self, attr, nbytes: int) -> bytes:
        """`nbytes` of the raw storage of a DenseElementsAttr (a copy)."""
        address = self.raw_data(self.pointer(attr._CAPIPtr, b"mlir.ir.Attribute._CAPIPtr"))
        return ctypes.string_at(address, nbytes)


_capi: _CAPI | None = None  # the loaded library handle: created once, immutable afterwards


def _c() -> _CAPI:
    global _capi
    if _capi is None:
        _capi = _CAPI()
    return _capi


def elements_value(attr) -> np.ndarray | None:
    """The values of a DenseElementsAttr of a dq element type, shaped, or None for another attribute."""
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    dense = ir.DenseElementsAttr(attr)
    t = ir.ShapedType(dense.type)
    e = of_type(t.element_type)
    if e is None or not t.has_static_shape:
        return None
    shape = tuple(t.shape)
    count = 1 if dense.is_splat else int(np.prod(shape, dtype=np.int64))
    carrier = e.carrier
    bits = np.frombuffer(_c().raw(dense, count * carrier.itemsize), dtype=carrier)
    values = _from_bits(bits, e)
    return np.full(shape, values[0], e.dtype) if dense.is_splat else values.reshape(shape)


def _from_bits(bits: np.ndarray, e: Element) -> np.ndarray:
    """Stored bits (one element per carrier) as values of `e`'s dtype."""
    if e.sub_byte:
        low = bits & ((1 << e.bits) - 1)
        if e.kind == "int" and e.signed:  # sign-extend the low bits
            return ((low.astype(np.int8) ^ (1 << (e.bits - 1))) - (1 << (e.bits - 1))).astype(e.dtype)
        return low.astype(e.dtype) if e.kind == "int" else low.view(e.dtype)
    return bits.view(e.dtype)


def resource_view(attr) -> np.ndarray | None:
    """The bytes of a `dense_resource` attribute's blob read in place: a read-only 1-D uint8 array
    over MLIR's memory (no copy of a model's weights), or None for another attribute or a blob
    whose data is absent (e.g. elided by `--mlir-elide-resource-strings-if-larger`). MLIR frees a
    blob with its context only: read the array while the context lives (a pass reads it and
    makes arrays of its own)."""
    c = _c()
    address = c.address(attr)
    if not c.is_resource(address):
        return None
    this = ctypes.c_void_p(address)
    view = c.blob(ctypes.addressof(this))
    if not view.data:
        return None
    array = np.ctypeslib.as_array((ctypes.c_uint8 * view.size).from_address(view.data))
    array.flags.writeable = False
    return array


def read(value) -> np.ndarray | None:
    """The value of `value` if it is an `arith.constant` dense tensor of a dq element type."""
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.name != "arith.constant":
        return None
    return elements_value(owner.attributes["value"])


def attribute(array: np.ndarray, element: Element, shape=None):
    """A DenseElementsAttr of `element` holding `array`'s values (converted to the element's dtype)."""
    shape = tuple(np.shape(array)) if shape is None else tuple(shape)
    values = np.asarray(array).astype(element.dtype).reshape(shape).copy(order="C")
    if element.kind == "int":  # the bindings read integers by value, of at least 8 bits
        data = values.astype(np.int8 if element.signed else np.uint8) if element.sub_byte else values
    elif element.name in ("f16", "f32", "f64"):
        data = values
    else:  # bf16 and minifloats: their bits
        data = values.view(element.carrier if not element.sub_byte else np.uint8)
    return ir.DenseElementsAttr.get(data, type=element.ir_type(), shape=list(shape))
