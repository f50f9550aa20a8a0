"""`dequant.Packed`: sub-byte data as models store it, two 4-bit or four 2-bit values per byte.

The layout is ONNX's (docs/semantics.md#packed-sub-byte-data): over the flattened row-major
tensor, element j sits in bits (j mod k) * w .. (j mod k) * w + w - 1 of byte j // k, with w the
element's bits and k = 8 // w elements per byte; the last byte is zero-padded. Every function of
`dequant.ops` (and `bind`) takes a Packed wherever it takes that sub-byte type, and reads the bytes
in place; `dequant.jit` takes them for arguments marked `dq.packed` (or compiled with
`packed=True`).

    >>> import numpy as np, ml_dtypes, dequant
    >>> p = dequant.pack(np.array([1, -2, 3], ml_dtypes.int4))
    >>> p.data, p.shape
    (array([225,   3], dtype=uint8), (3,))
    >>> x = p.unpack()
    >>> x.dtype.name, x.astype(np.int8).tolist()
    ('int4', [1, -2, 3])
"""

from __future__ import annotations

import math

import numpy as np

from dequant.dialect.elements import UnknownElementError, of_dtype, of_onnx
from dequant.dialect.unpack import pack_values, packed_bytes, unpack_values


class Packed:
    """Packed sub-byte data: `data` (1-D uint8, the packed bytes, a view of the caller's buffer),
    `dtype` (ml_dtypes int4, uint4, float4_e2m1fn, int2 or uint2) and `shape` (the logical shape,
    a tuple of ints).

    A Packed is a fixed value: its fields are checked against each other once, here, and cannot
    be set again (AttributeError), so a call never reads more bytes than `data` holds. The bytes'
    values are the caller's: they may change between calls (e.g. of a bound call); a view's size
    and address cannot."""

    __slots__ = ("data", "dtype", "shape", "element")

    def __init__(self, data, dtype, shape):
        try:
            element = of_dtype(dtype)
        except UnknownElementError:
            element = None
        if element is None or not element.sub_byte:
            raise ValueError(f"Packed dtype must be int4, uint4, float4_e2m1fn, int2 or uint2, got {dtype!r}")
        shape = _shape(shape)
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = np.frombuffer(data, np.uint8)
        data = np.asarray(data)
        if data.dtype not in (np.uint8, np.int8) or data.ndim != 1:
            raise ValueError(f"Packed data must be a 1-D array of bytes (uint8), got {data.dtype} of shape {data.shape}")
        if not data.flags.c_contiguous:
            raise ValueError("Packed data must be contiguous")
        want = packed_bytes(shape, element.bits)
        if data.size != want:
            raise ValueError(f"Packed data: {math.prod(shape)} {element.name} elements take {want} packed bytes, got {data.size}")
        for name, value in (("data", data.view(np.uint8)), ("dtype", element.dtype), ("shape", shape), ("element", element)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Packed is a fixed value: its {name} cannot be set (make a new Packed)")

    def __delattr__(self, name):
        raise AttributeError(f"Packed is a fixed value: its {name} cannot be deleted")

    def __reduce__(self):
        return type(self), (self.data, self.dtype, self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.data.size

    def __repr__(self) -> str:
        return f"Packed({self.element.name}, shape={self.shape}, {self.nbytes} bytes)"

    def unpack(self) -> np.ndarray:
        """The data as an ml_dtypes array, one element per byte (a new array)."""
        return unpack_values(self.data, self.element, self.shape)

    @classmethod
    def from_onnx(cls, tensor) -> Packed:
        """The packed data of an ONNX TensorProto of a 4- or 2-bit type, without unpacking it:
        `raw_data` is the packed bytes; `int32_data` holds one packed byte per entry."""
        types = type(tensor).DataType  # TensorProto's own enum: reading one needs no import of onnx here
        e = of_onnx(types.Name(tensor.data_type)) if tensor.data_type in types.values() else None
        if e is None or not e.sub_byte:
            raise ValueError(f"Packed.from_onnx takes a tensor of a 4- or 2-bit type, got data type {tensor.data_type}")
        if tensor.data_location == 1:  # EXTERNAL
            raise ValueError(f"tensor '{tensor.name}' keeps its data in an external file: load it first")
        shape = tuple(tensor.dims)
        if tensor.HasField("raw_data") or not tensor.int32_data:
            data = np.frombuffer(tensor.raw_data, np.uint8)
        else:
            data = np.asarray(tensor.int32_data, np.int64)
            bad = np.flatnonzero((data < 0) | (data > 255))
            if bad.size:
                raise ValueError(f"tensor '{tensor.name}': int32_data holds one packed byte per entry (0 to 255), "
                                 f"got {data[bad[0]]} at index {bad[0]}")  # fmt: skip
            data = data.astype(np.uint8)
        return cls(data, e.dtype, shape)


def _shape(shape) -> tuple:
    """`shape` as a tuple of non-negative ints; ValueError naming the field otherwise (2.7 is not
    read as 2, nor True as 1)."""
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"Packed shape must be a sequence of integers, got {shape!r}") from None
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise ValueError(f"Packed shape must be a sequence of integers, got {shape!r}")
        if d < 0:
            raise ValueError(f"Packed shape must not have negative dims, got {shape!r}")
    return tuple(int(d) for d in dims)


def pack(array) -> Packed:
    """The packed form of an ml_dtypes array of a sub-byte type (int4, uint4, float4_e2m1fn,
    int2, uint2): a new Packed."""
    a = np.asarray(array)
    return Packed(pack_values(a), a.dtype, a.shape)
