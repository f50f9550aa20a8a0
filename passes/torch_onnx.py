"""The torch form of an imported ONNX model, as the torch-onnx-* passes read and write it.

`iree-import-onnx` (and torch-mlir's ONNX importer, whose code it ships) writes each ONNX node as
`torch.operator` with the property `name = "onnx.<OpType>"`, its ONNX attributes as
`torch.onnx.<attr>` (integers as si64; a data type as its ONNX TensorProto.DataType number), its
initializers as `onnx.Constant` nodes holding `torch.onnx.value` (a `dense_resource` of the
ONNX raw bytes, or `dense<...>`), and its values typed `!torch.vtensor<[d0,d1,...],dtype>` (`?`
a dynamic dim, dtype a builtin type with `si`/`ui` for signed/unsigned integers). dq reads that
form without the torch dialect: parsed in generic form with unregistered dialects allowed, the
types are opaque (`OpaqueType`, dialect "torch") and are read here; torch_c casts are created as
generic ops. The builtin tensor of a torch tensor is torch_c's: the same dims, integers signless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from dequant.dialect.elements import ELEMENTS, Element

from .queries import made_by, ops_named

OPERATOR = "torch.operator"
TO_BUILTIN = "torch_c.to_builtin_tensor"
FROM_BUILTIN = "torch_c.from_builtin_tensor"
_VTENSOR = re.compile(r"vtensor<\[([^\]]*)\],([A-Za-z0-9_]+)>")


@dataclass(frozen=True)
class TorchTensor:
    """A `!torch.vtensor<[dims],dtype>`: dims (None dynamic) and the dtype's dq element."""

    shape: tuple
    element: Element

    @property
    def rows(self) -> int | None:
        """The rows of a [..., L] tensor: the product of its leading dims, None where one is known
        at run time only."""
        lead = self.shape[:-1]
        return None if None in lead else int(np.prod(lead))

    def builtin(self) -> ir.RankedTensorType:
        """torch_c's builtin tensor type: signless integers."""
        e = self.element.ir_type()
        if isinstance(e, ir.IntegerType):
            e = ir.IntegerType.get_signless(ir.IntegerType(e).width)
        dyn = ir.ShapedType.get_dynamic_size()
        return ir.RankedTensorType.get([dyn if d is None else d for d in self.shape], e)

    def dq(self) -> ir.RankedTensorType:
        """The tensor dq ops take: the element's own type (unsigned stays unsigned)."""
        dyn = ir.ShapedType.get_dynamic_size()
        return ir.RankedTensorType.get([dyn if d is None else d for d in self.shape], self.element.ir_type())


def tensor_of(t: ir.Type) -> TorchTensor | str:
    """The TorchTensor of a type, or why it is not one dq reads."""
    if not isinstance(t, ir.OpaqueType) or ir.OpaqueType(t).dialect_namespace != "torch":
        return f"{t} is not a torch tensor type"
    data = ir.OpaqueType(t).data
    m = _VTENSOR.fullmatch(data)
    if m is None:
        return f"!torch.{data} is not a ranked !torch.vtensor with a dtype"
    dims = []
    for d in filter(None, (p.strip() for p in m.group(1).split(","))):
        if d == "?":
            dims.append(None)
        elif d.isdigit():
            dims.append(int(d))
        else:
            return f"!torch.{data} has a dim '{d}' that is neither a size nor '?'"
    dtype = m.group(2)
    e = ELEMENTS.get("i" + dtype[2:] if re.fullmatch(r"si\d+", dtype) else dtype)
    if e is None:
        return f"!torch.{data}: dtype {m.group(2)} is not a dq element type ({', '.join(ELEMENTS)})"
    return TorchTensor(tuple(dims), e)


def io_tensors(op) -> tuple | str:
    """(the TorchTensor of a `torch.operator`'s first operand, that of its first result), or why
    one is not a tensor dq reads."""
    x, y = tensor_of(op.operands[0].type), tensor_of(op.results[0].type)
    return x if isinstance(x, str) else y if isinstance(y, str) else (x, y)


def onnx_name(op) -> str | None:
    """The ONNX op type of a `torch.operator` ("onnx.MatMul"), or None for another op."""
    if op.name != OPERATOR or "name" not in op.attributes:
        return None
    a = op.attributes["name"]
    if not isinstance(a, ir.StringAttr):
        return None
    # bytes: a name that is not UTF-8 (the binding's `value` raises on it) names no ONNX op
    return ir.StringAttr(a).value_bytes.decode("utf-8", "replace")


def int_attr(op, name: str, default: int | None = None) -> int | None:
    """The integer ONNX attribute `name` of a `torch.operator` (`torch.onnx.<name>`), `default`
    where the op has none, None where it is not an integer."""
    key = f"torch.onnx.{name}"
    if key not in op.attributes:
        return default
    attr = op.attributes[key]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def float_attr(op, name: str) -> float | None:
    """The float ONNX attribute `name` of a `torch.operator`, None where it has none or another."""
    key = f"torch.onnx.{name}"
    attr = op.attributes[key] if key in op.attributes else None
    return ir.FloatAttr(attr).value if isinstance(attr, ir.FloatAttr) else None


def string_attr(op, name: str, default: str | None = None) -> str | None:
    """The string ONNX attribute `name` of a `torch.operator`, `default` where it has none, None
    where it is not a string."""
    key = f"torch.onnx.{name}"
    if key not in op.attributes:
        return default
    attr = op.attributes[key]
    return ir.StringAttr(attr).value_bytes.decode("utf-8", "replace") if isinstance(attr, ir.StringAttr) else None


def ints_attr(op, name: str, default: list) -> list:
    """The integer-list ONNX attribute `name` of a `torch.operator`, `default` where the op has none."""
    key = f"torch.onnx.{name}"
    return [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes[key])] if key in op.attributes else default


def opset(op) -> int | None:
    """The default domain's opset of the model a `torch.operator` came from: the importer's
    `torch.onnx_meta.opset_version` on the function holding it; None where none says."""
    key = "torch.onnx_meta.opset_version"
    at = op.parent
    while at is not None and key not in at.attributes:
        at = at.parent
    attr = None if at is None else at.attributes[key]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def nodes(root, onnx_op: str) -> list:
    """The `torch.operator` ops of ONNX type `onnx_op` (e.g. "onnx.DequantizeLinear") under root."""
    return [o for o in ops_named(root, OPERATOR) if onnx_name(o) == onnx_op]


def to_builtin(value: ir.Value, t: TorchTensor) -> ir.Value:
    """`torch_c.to_builtin_tensor` of a torch value, then its unsigned view if dq reads one."""
    v = ir.Operation.create(TO_BUILTIN, results=[t.builtin()], operands=[value]).result
    return v if t.builtin() == t.dq() else tensor.bitcast(t.dq(), v)


def byte_constant(data, name: str) -> ir.Value:
    """An `arith.constant` of packed bytes (`data`: a uint8/int8 array or bytes) as a 1-D i8
    `dense_resource` blob named after `name`, at the current insertion point."""
    values = np.frombuffer(data, np.int8).copy() if isinstance(data, bytes) else np.asarray(data).view(np.int8).copy()
    blob = ir.DenseResourceElementsAttr.get_from_buffer(values, name, ir.RankedTensorType.get([values.size], ir.IntegerType.get_signless(8)))
    return arith.ConstantOp(blob.type, blob).result


def from_builtin(value: ir.Value, torch_type: ir.Type) -> ir.Value:
    return ir.Operation.create(FROM_BUILTIN, results=[torch_type], operands=[value]).result


def builtin_of(value: ir.Value) -> ir.Value | None:
    """The builtin tensor a torch value was made from by `torch_c.from_builtin_tensor`, or None."""
    owner = made_by(value, FROM_BUILTIN)
    return owner.operands[0] if owner is not None else None


def constant_value(value: ir.Value):
    """The `torch.onnx.value` attribute of the `onnx.Constant` defining `value`, or None."""
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or onnx_name(owner.operation) != "onnx.Constant":
        return None
    attrs = owner.operation.attributes
    return attrs["torch.onnx.value"] if "torch.onnx.value" in attrs else None
