"""A model's constants as the IREE stage reads them, in place (no copy where the bytes allow):
the builtin tensors torch-onnx-to-dq made of a model's initializers (`constant`, and `stored`,
packed weights as a kernel's `repack` takes them) and the torch tensors of its `onnx.Constant`s
(`torch_constant`). Shared by torch-onnx-dq-matmul-iree-cpu and its QDQ matching (qdq_matmul.py).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from dequant.dialect import constants, unpack
from dequant.dialect.elements import of_type

from . import torch_onnx as t
from .queries import made_by


def stored(value: ir.Value) -> np.ndarray | None:
    """A constant 4- or 8-bit integer tensor as the model stores it, read in place, as
    `Kernel.repack` takes it (uint8: a code per element for 8 bits, the packed bytes in ONNX
    order for 4), or None."""
    rt = ir.RankedTensorType(value.type)
    e = of_type(rt.element_type)
    if (owner := made_by(value, unpack.NAME)) is None:
        values = constant(value)
        return None if values is None or e.bits != 8 else values.view(np.uint8)
    source = made_by(owner.operands[0], "arith.constant")
    data = constants.resource_view(source.attributes["value"]) if source is not None else None
    if data is None or e.bits != 4 or len(data) != unpack.packed_bytes(tuple(rt.shape), e.bits):
        return None
    return data


def constant(value: ir.Value) -> np.ndarray | None:
    """The values of a builtin tensor the stage made from a model's constant, or None."""
    rt = ir.RankedTensorType(value.type)
    e = of_type(rt.element_type)
    if e is None or not rt.has_static_shape:
        return None
    shape = tuple(rt.shape)
    if (owner := made_by(value, unpack.NAME)) is not None:
        source = made_by(owner.operands[0], "arith.constant")
        data = constants.resource_view(source.attributes["value"]) if source is not None else None
        if data is None or len(data) != unpack.packed_bytes(shape, e.bits):
            return None
        return unpack.unpack_values(data, e, shape)
    if (owner := made_by(value, "tensor.bitcast")) is not None:
        inner = constant(owner.operands[0])
        return None if inner is None else inner.view(e.dtype)
    if (owner := made_by(value, t.TO_BUILTIN)) is not None:
        attr = t.constant_value(owner.operands[0])
    elif (owner := made_by(value, "arith.constant")) is not None:
        attr = owner.attributes["value"]
    else:
        return None
    return _values(attr, e, shape)


def torch_constant(value: ir.Value) -> np.ndarray | None:
    """The values of a torch tensor a model's constant (`onnx.Constant`) defines, or None."""
    tt = t.tensor_of(value.type)
    if isinstance(tt, str) or None in tt.shape or tt.element.sub_byte:
        return None
    return _values(t.constant_value(value), tt.element, tuple(tt.shape))


def _values(attr, e, shape: tuple) -> np.ndarray | None:
    """The values of a constant's attribute (elements or a resource blob) of element e, or None."""
    if attr is None:
        return None
    values = constants.elements_value(attr)
    if values is None and not e.sub_byte:
        data = constants.resource_view(attr)
        if data is not None and len(data) == int(np.prod(shape)) * e.carrier.itemsize:
            values = np.frombuffer(data, e.carrier).view(e.dtype).reshape(shape)
    return values if values is not None and values.shape == shape else None
