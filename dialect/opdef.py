"""An op of the `dq` dialect, declared once: operands, attributes, rules, result, canonical form.

An `OpDef` is the whole definition of an op. The dialect's IRDL (structure: operands, results,
required attributes) is generated from it (`irdl`); everything IRDL cannot say lives here too:
optional attributes with their spec defaults, element type sets and the spec's shape and value
rules (small functions returning the spec's words), the result type the op infers, its canonical
form, and the docstring of its numpy function in `dequant.ops`. The same rules check an op in IR
and the arrays given to the numpy API (signature.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mlir import ir
from mlir.dialects import irdl

from . import attributes, constants
from .elements import name_of, tensor_type
from .signature import Rule, Signature, Tensor, check, same_shape, show, tensor_of


@dataclass(frozen=True)
class Operand:
    name: str
    role: str  # "data" | "scale" | "zero_point"
    optional: bool = False


@dataclass(frozen=True)
class OpDef:
    name: str  # full op name, e.g. "dq.onnx_dequantize_linear"
    summary: str  # one line, for --help and the IRDL comment
    operands: tuple[Operand, ...]
    attrs: tuple[attributes.Attr, ...]
    rules: tuple[Rule, ...]  # on types, shapes and attributes, in order
    canonical: Callable[[Signature], object]  # Signature -> canonical.Form, for a verified op
    result: Callable[[Signature], Tensor] | None = None  # the inferred result (None: free)
    result_type_words: str = ""  # the spec's sentence on the result's element type (for messages)
    result_shape_words: str = ""  # and on its shape
    value_rules: tuple[Rule, ...] = ()  # rules on values, run where values are known
    doc: str = ""  # the numpy function's docstring (numpy style), for dequant.ops
    api: str = field(default="")  # the numpy function's name in dequant.ops ("" for none)

    @property
    def operand_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.operands)

    def role(self, role: str) -> str | None:
        """The name of the operand with `role`, or None."""
        return next((o.name for o in self.operands if o.role == role), None)

    def by_role(self, op) -> dict:
        """{"data": value, "scale": value, "zero_point": value or None} of an op of this OpDef."""
        values = dict(zip(self.operand_names, op.operands))
        return {o.role: values.get(o.name) for o in self.operands}

    # --- checking ---------------------------------------------------------------------------

    def signature(self, op) -> Signature:
        """The signature of an MLIR op (raises attributes.AttrError for a malformed attribute)."""
        operands = {o.name: None for o in self.operands}
        values = {}
        value_roles = {self.role("zero_point")} if self.value_rules else set()
        for o, v in zip(self.operands, op.operands):
            operands[o.name] = tensor_of(v.type)
            if o.name in value_roles:
                known = constants.read(v)
                if known is not None:
                    values[o.name] = known
        result = tensor_of(op.results[0].type) if len(op.results) == 1 else None
        return Signature(operands, result, attributes.read(op, self.attrs), values)

    def check_types(self, sig: Signature) -> str | None:
        """The first rule on types, shapes and attributes that `sig` breaks, or None."""
        for o in self.operands:
            if sig.operands[o.name] is None and not o.optional:
                return f"operand '{o.name}' must be a ranked tensor"
        message = check(self.rules, sig)
        if message or self.result is None or sig.result is None:
            return message
        want, got = self.result(sig), sig.result
        if want.elem != got.elem:
            return f"{self.result_type_words}: expected {want.elem}, got {got.elem}"
        if not same_shape(want.shape, got.shape):
            return f"{self.result_shape_words}: expected {show(want.shape)}, got {show(got.shape)}"
        return None

    def check(self, sig: Signature) -> str | None:
        """The first rule `sig` breaks (types and shapes, then known values), or None."""
        return self.check_types(sig) or check(self.value_rules, sig)

    def verify(self, op) -> Signature | None:
        """Check an MLIR op; a broken rule is an error at the op's location. The signature of a
        valid op, else None."""
        if len(op.results) != 1:
            op.location.emit_error(f"'{self.name}' op must have one result")
            return None
        try:
            sig = self.signature(op)
            message = self.check(sig)
        except attributes.AttrError as e:
            message = str(e)
        if message:
            op.location.emit_error(f"'{self.name}' op {message}")
            return None
        return sig

    # --- building ---------------------------------------------------------------------------

    def create(self, operands: list, values: dict, result_type, *, loc=None, ip=None):
        """Create the op (None operands and attribute values are left out); its result value."""
        op = ir.Operation.create(
            self.name,
            results=[result_type],
            operands=[v for v in operands if v is not None],
            attributes=attributes.build(self.attrs, values),
            loc=loc,
            ip=ip,
        )
        return op.result

    def build(self, *operands, loc=None, ip=None, **values):
        """Build the op on MLIR values with attributes given by name (omitted: the spec
        defaults); the result type is inferred. Returns the result value."""
        if self.result is None:
            raise TypeError(f"{self.name} infers no result type: use canonical.build")
        names = self.operand_names
        args = dict(zip(names, list(operands) + [None] * (len(names) - len(operands))))
        attrs = {}
        for a in self.attrs:
            v = values.pop(a.name, None)
            if isinstance(v, ir.Type):
                v = name_of(v)
            attrs[a.name] = v
        if values:
            raise TypeError(f"{self.name} has no attribute {sorted(values)[0]!r}")
        read = {a.name: (a.default if attrs[a.name] is None else attrs[a.name]) for a in self.attrs}
        sig = Signature({n: (tensor_of(v.type) if v is not None else None) for n, v in args.items()}, None, read)
        message = check(self.rules, sig)
        if message:
            raise ValueError(f"{self.name}: {message}")
        result = self.result(sig)
        return self.create([args[n] for n in names], attrs, tensor_type(result.shape, result.elem), loc=loc, ip=ip)

    # --- structure as IRDL ----------------------------------------------------------------

    def irdl(self) -> None:
        """Declare the op in IRDL at the current insertion point (inside `irdl.dialect`)."""
        op = irdl.operation_(self.name.split(".", 1)[1])
        with ir.InsertionPoint(op.body):
            tensors = [irdl.base(base_name="!builtin.tensor") for _ in self.operands]
            variadicity = [irdl.Variadicity.optional if o.optional else irdl.Variadicity.single for o in self.operands]
            irdl.operands_(tensors, [o.name.lower() for o in self.operands], variadicity)
            irdl.results_([irdl.base(base_name="!builtin.tensor")], ["result"], [irdl.Variadicity.single])
            required = [a for a in self.attrs if a.required]
            if required:
                bases = {"type": "#builtin.type", "str": "#builtin.string", "map": "#builtin.affine_map",
                         "i64": "#builtin.integer", "bool": "#builtin.bool", "i64_set": "#builtin.dense_array",
                         "i64_list": "#builtin.dense_array"}  # fmt: skip
                irdl.attributes_([irdl.base(base_name=bases[a.kind]) for a in required], [a.name for a in required])


