"""`dq.unpack`: the sub-byte tensor whose elements are packed in a byte tensor.

    %x = "dq.unpack"(%bytes, %d0) : (tensor<8xi8>, index) -> tensor<?x4xi4>

`bytes` is a 1-D tensor of i8 holding the elements of the result, a tensor of a sub-byte type
(i4, ui4, f4E2M1FN, i2, ui2), in ONNX's packed layout (docs/semantics.md#packed-sub-byte-data):
over the flattened row-major tensor, element j in bits (j mod k) * w .. of byte j / k, k = 8 / w
elements per byte of w bits, the last byte zero-padded. Its length is ceil(elements / k). The
index operands are the result's dynamic dims, in order. `pack_codes` and `unpack_codes` (the
fields' raw bits), `pack_values` and `unpack_values` (ml_dtypes values) are this layout in numpy
(for dequant.Packed and the passes that read constant bytes).

A dq op reading an unpacked tensor as its data reads the bytes in place (dq-to-linalg); any other
use gets the unpacked tensor. The result's element type is the one fact the bytes do not carry.

An optional attribute `dq.rows` = "whole" or "partial" says whether the result's rows (its last
dim) are expected to be a whole number of bytes, when the last dim is dynamic. It only chooses
which code dq-to-linalg compiles for the other case: code for either case is correct for any
shape, and without the attribute both fast paths are compiled (docs/performance.md, "Packed rows
that are not whole bytes").
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir
from mlir.dialects import irdl

from .elements import Element, UnknownElementError, of_dtype, of_type

NAME = "dq.unpack"
ROWS = "dq.rows"  # the rows the caller expects (a compile-time hint): one of
WHOLE_ROWS, PARTIAL_ROWS = "whole", "partial"


def packed_bytes(shape: tuple, bits: int) -> int:
    """The byte count of `shape` elements of `bits` bits packed."""
    return -(-math.prod(shape) * bits // 8)


def pack_codes(codes: np.ndarray, bits: int) -> np.ndarray:
    """The packed bytes (1-D uint8, a new array) of `codes`, uint8 fields of `bits` bits (any
    shape, read flattened), in the layout above."""
    per = 8 // bits
    padded = np.zeros(-(-codes.size // per) * per, np.uint8)
    padded[: codes.size] = codes.reshape(-1)
    groups = padded.reshape(-1, per)
    data = np.zeros(groups.shape[0], np.uint8)
    for k in range(per):
        data |= groups[:, k] << np.uint8(k * bits)
    return data


def unpack_codes(data, bits: int, count: int) -> np.ndarray:
    """The first `count` fields of `bits` bits packed in `data` (bytes or a 1-D uint8 array) in
    the layout above, one uint8 code each (1-D, a new array)."""
    data = data if isinstance(data, np.ndarray) else np.frombuffer(data, np.uint8)
    shifts = np.arange(8 // bits, dtype=np.uint8) * np.uint8(bits)
    return ((data[:, None] >> shifts) & np.uint8((1 << bits) - 1)).reshape(-1)[:count]


def pack_values(values: np.ndarray) -> np.ndarray:
    """The packed bytes (1-D uint8, a new array) of `values`, an ml_dtypes array of a sub-byte
    type, in the layout above; ValueError for another dtype."""
    try:
        e = of_dtype(values.dtype)
    except UnknownElementError:
        e = None
    if e is None or not e.sub_byte:
        raise ValueError(f"pack takes an array of int4, uint4, float4_e2m1fn, int2 or uint2, got {values.dtype}")
    return pack_codes(values.reshape(-1).view(np.uint8) & np.uint8((1 << e.bits) - 1), e.bits)


def unpack_values(data: np.ndarray, element: Element, shape: tuple) -> np.ndarray:
    """The values packed in `data` (1-D uint8, at least `packed_bytes(shape, element.bits)`
    long) as an ml_dtypes array of `element`'s dtype and of `shape`, one element per byte (a
    new array)."""
    e = element
    values = unpack_codes(data, e.bits, math.prod(shape))
    if e.kind == "float":
        return values.view(e.dtype).reshape(shape)
    if e.signed:
        values = values.astype(np.int8)
        values = np.where(values >= 1 << (e.bits - 1), values - (1 << e.bits), values)
    return values.astype(e.dtype).reshape(shape)


class UnpackDef:
    """The definition of `dq.unpack` (not a dequantize: no canonical form, no numpy function)."""

    name = NAME
    summary = "the sub-byte tensor held packed in a byte tensor (ONNX layout)"
    canonical = None
    api = ""

    def irdl(self) -> None:
        op = irdl.operation_(NAME.split(".", 1)[1])
        with ir.InsertionPoint(op.body):
            bytes_ = irdl.base(base_name="!builtin.tensor")
            dims = irdl.is_(ir.TypeAttr.get(ir.IndexType.get()))
            irdl.operands_([bytes_, dims], ["bytes", "dims"], [irdl.Variadicity.single, irdl.Variadicity.variadic])
            irdl.results_([irdl.base(base_name="!builtin.tensor")], ["result"], [irdl.Variadicity.single])

    def check(self, op) -> str | None:
        """The first rule `op` breaks, or None."""
        operands = list(op.operands)
        if len(op.results) != 1 or not operands:
            return "takes a byte tensor and the result's dynamic dims, and has one result"
        bt, rt = operands[0].type, op.results[0].type
        if not isinstance(bt, ir.RankedTensorType) or ir.RankedTensorType(bt).rank != 1:
            return "bytes must be a 1-D tensor of i8"
        elem = ir.RankedTensorType(bt).element_type
        if not (isinstance(elem, ir.IntegerType) and ir.IntegerType(elem).width == 8 and ir.IntegerType(elem).is_signless):
            return f"bytes must be a 1-D tensor of i8, got {bt}"
        if not isinstance(rt, ir.RankedTensorType):
            return "the result must be a ranked tensor"
        r = ir.RankedTensorType(rt)
        e = of_type(r.element_type)
        if e is None or not e.sub_byte:
            return f"the result's element type must be a sub-byte type (i4, ui4, f4E2M1FN, i2, ui2), got {r.element_type}"
        dynamic = [d for d in range(r.rank) if r.is_dynamic_dim(d)]
        if len(operands) - 1 != len(dynamic):
            return f"takes one index operand per dynamic dim of the result ({len(dynamic)}), got {len(operands) - 1}"
        b = ir.RankedTensorType(bt)
        if not dynamic and not b.is_dynamic_dim(0):
            want = packed_bytes(tuple(r.shape), e.bits)
            if b.shape[0] != want:
                return f"bytes must hold ceil({math.prod(r.shape)} * {e.bits} / 8) = {want} bytes, got {b.shape[0]}"
        return None

    def verify(self, op):
        message = self.check(op)
        if message:
            op.location.emit_error(f"'{NAME}' op {message}")
            return None
        return True


OP = UnpackDef()


def build(bytes_, result_type, dims=(), *, loc=None, ip=None):
    """`dq.unpack` of `bytes_` into `result_type`, `dims` its dynamic dims (index values)."""
    return ir.Operation.create(NAME, results=[result_type], operands=[bytes_, *dims], loc=loc, ip=ip).result


def dims_of(op) -> list:
    """The result's sizes: ints for static dims, the index operands for dynamic ones."""
    r = ir.RankedTensorType(op.results[0].type)
    dynamic = iter(list(op.operands)[1:])
    return [next(dynamic) if r.is_dynamic_dim(d) else r.shape[d] for d in range(r.rank)]
