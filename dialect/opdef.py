"""An op of the `dq` dialect as Python sees it: operands, attributes, rules, canonical form.

IRDL (dq.irdl.mlir) declares each op's operands, results and required attributes; an `OpDef`
adds what IRDL cannot say: optional attributes with spec defaults, element type sets, and the
spec's shape and value rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import attributes
from .signature import Rule, Signature, check, tensor_of


@dataclass(frozen=True)
class OpDef:
    name: str  # full op name, e.g. "dq.onnx_dequantize_linear"
    operands: tuple[str, ...]
    optional: tuple[str, ...]  # names of optional operands (trailing)
    attrs: tuple[attributes.Attr, ...]
    rules: tuple[Rule, ...]
    canonical: Callable[[Signature], "object"] | None = None  # Signature -> canonical.Form
    value_operands: tuple[str, ...] = ()  # operands whose constant values `value_rules` read
    value_rules: tuple[Rule, ...] = ()  # rules on values (run after the others pass)

    def signature(self, op) -> Signature:
        """The signature of an MLIR op (raises attributes.AttrError for a malformed attribute)."""
        names = list(self.operands[: len(op.operands)])
        operands = {n: None for n in self.operands}
        values = {}
        for n, v in zip(names, op.operands):
            operands[n] = tensor_of(v.type)
            if n in self.value_operands:
                known = constant_value(v)
                if known is not None:
                    values[n] = known
        result = tensor_of(op.results[0].type) if len(op.results) else None
        return Signature(operands, result, attributes.read(op, self.attrs), values)

    def check(self, sig: Signature) -> str | None:
        """The first rule `sig` breaks, or None."""
        return self.check_types(sig) or check(list(self.value_rules), sig)

    def check_types(self, sig: Signature) -> str | None:
        """The first rule on types, shapes and attributes that `sig` breaks, or None."""
        missing = [n for n, t in sig.operands.items() if t is None and n not in self.optional]
        if missing:
            return f"operand '{missing[0]}' must be a ranked tensor"
        return check(list(self.rules), sig)

    def verify(self, op) -> bool:
        """Check an MLIR op; a broken rule is an error at the op's location."""
        try:
            message = self.check(self.signature(op))
        except attributes.AttrError as e:
            message = str(e)
        if message:
            op.location.emit_error(f"'{self.name}' op {message}")
            return False
        return True


def constant_value(value) -> np.ndarray | None:
    """The value of an `arith.constant` dense tensor as a numpy array, where it can be read."""
    from mlir import ir

    owner = value.owner
    if not isinstance(owner, ir.OpView) and not isinstance(owner, ir.Operation):
        return None
    if owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    dense = ir.DenseElementsAttr(attr)
    shape = tuple(ir.ShapedType(dense.type).shape)
    try:
        if dense.is_splat:
            splat = dense.get_splat_value()
            scalar = ir.IntegerAttr(splat).value if isinstance(splat, ir.IntegerAttr) else ir.FloatAttr(splat).value
            return np.full(shape, scalar)
        if isinstance(attr, ir.DenseIntElementsAttr):
            return np.array(ir.DenseIntElementsAttr(attr)).reshape(shape)
        return np.array(ir.DenseFPElementsAttr(attr)).reshape(shape)
    except (ValueError, TypeError, RuntimeError):
        return _from_text(str(dense), shape)


def _from_text(text: str, shape: tuple) -> np.ndarray | None:
    """The values of a dense attribute numpy cannot view (float8, float4, bf16, 4-bit ints),
    read from its printed form: a list of numbers, or hex bytes of 4- and 8-bit elements."""
    import re

    from .types import elem

    inner = text[text.index("dense<") + 6 :]
    inner = inner[: inner.index(">")]
    typed = re.search(r"tensor<(?:[0-9?]+x)*([A-Za-z0-9]+)>\s*$", text)
    e = elem(typed.group(1)) if typed else None
    if inner.startswith('"0x'):  # hex bytes: one byte per element for 4- and 8-bit types
        if e is None or e.bits not in (4, 8):
            return None
        raw = np.frombuffer(bytes.fromhex(inner[3:-1]), dtype=np.uint8)
        if raw.size != np.prod(shape):
            return None
        if e.bits == 4 and e.kind == "int":
            nibbles = (raw & 0xF).astype(np.int64)
            data = ((nibbles ^ 8) - 8) if e.signed else nibbles
        else:
            data = (raw & 0xF if e.bits == 4 else raw).view(e.dtype) if e.kind == "float" else raw.view(e.dtype)
        return np.asarray(data, np.float64).reshape(shape)
    numbers = re.findall(r"[-+]?(?:inf|nan|0x[0-9A-Fa-f]+|\d+\.?\d*(?:[eE][-+]?\d+)?)", inner)
    try:
        if e is None or e.kind != "float":
            values = [float(n) for n in numbers]
            return np.array(values, dtype=np.float64).reshape(shape)
        # hex entries are bit patterns (MLIR prints NaN and the like so); decimals are printed
        # short, so each is rounded back to the element type it came from
        bits = np.dtype(f"uint{max(8, e.bits)}")
        values = [
            np.array(int(n, 16), bits).view(e.dtype) if n.lower().startswith("0x") else np.array(float(n)).astype(e.dtype)
            for n in numbers
        ]
        return np.array([float(v) for v in values], dtype=np.float64).reshape(shape)
    except (ValueError, TypeError):
        return None


def create(opdef: OpDef, operands: list, values: dict, result_type, *, loc=None, ip=None):
    """Create an op of `opdef` (None operands and attribute values are left out); its result value."""
    from mlir import ir

    op = ir.Operation.create(
        opdef.name,
        results=[result_type],
        operands=[v for v in operands if v is not None],
        attributes=attributes.build(opdef.attrs, values),
        loc=loc,
        ip=ip,
    )
    return op.result


def like(value, elem: str, shape=None):
    """A ranked tensor type with `value`'s shape (or `shape`, None for a dynamic dim) and
    element type `elem`."""
    from mlir import ir

    t = ir.RankedTensorType(value.type)
    dims = list(t.shape) if shape is None else [ir.ShapedType.get_dynamic_size() if d is None else d for d in shape]
    return ir.RankedTensorType.get(dims, ir.Type.parse(elem))
