"""ONNX import: every DequantizeLinear node of a model becomes a `func.func` of one
`dq.onnx_dequantize_linear`.

- Only the top-level graph is read: DequantizeLinear nodes inside subgraphs (If, Loop, Scan
  bodies) are not imported; the node that holds the subgraph is listed as skipped.
- Nodes of the default domain ("" or "ai.onnx") named DequantizeLinear are imported; every other
  node (other op types, other domains such as com.microsoft) is listed in the module attribute
  `dq.skipped_nodes = ["Conv:conv1", ...]` ("OpType:name", "domain.OpType:name" outside the
  default domain).
- Each function is named after its node (`node.name`, or `DequantizeLinear_<i>` with i the
  node's index in the graph when the name is empty), every character outside [A-Za-z0-9_]
  replaced by `_`, `_` put before a leading digit, `_1`, `_2`, ... added to repeated names.
  The op's location is a name location holding the node's original name.
- Inputs that are initializers (or outputs of `Constant` nodes) become `arith.constant`s:
  `dense<...>` up to 1024 elements, `dense_resource<...>` blobs beyond (one blob per
  initializer, shared by the functions that read it). 4- and 2-bit initializers (int4, uint4,
  float4e2m1, int2, uint2) stay packed: a 1-D i8 constant of their ONNX bytes, never unpacked,
  read through `dq.unpack` (dq ops then read the bytes in place). Other inputs become function
  arguments typed from `onnx.shape_inference.infer_shapes` (unknown dims are `?`).
- The model's opset of the default domain chooses the DequantizeLinear version: its attributes
  (axis from 13, block_size from 21, output_dtype from 23) and its type constraints are those of
  `onnx.defs.get_schema`; opsets 10-12 are per-tensor only.

A malformed node (unknown attribute, type outside the version's constraints, input without
a type, an op the dq verifier rejects, a zero point whose values break a rule, whatever the
initializer's size) is an `OnnxImportError` (a ValueError) naming the node:
"node '<name>' (DequantizeLinear): ...".
"""

from __future__ import annotations

import argparse
import os
import re
import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, tensor

from dequant import dialect
from dequant.dialect import constants, unpack
from dequant.dialect import onnx as dq_onnx
from dequant.dialect.elements import ELEMENTS, of_onnx, tensor_type
from dequant.dialect.attributes import text as attr_text
from dequant.dialect.signature import Signature, Tensor

from . import context as new_context
from . import diagnostics
from .packed import Packed

if TYPE_CHECKING:
    import onnx
# onnx is imported where used (`_onnx()`: the install hint): an optional dependency (docs/development.md#imports).

DEFAULT_DOMAINS = ("", "ai.onnx")
DENSE_LIMIT = 1024  # initializers with more elements become dense_resource blobs
INPUTS = ("x", "x_scale", "x_zero_point")


def element_of_onnx(data_type: int):
    """The dq Element of an ONNX TensorProto.DataType value, or None."""
    onnx = _onnx()
    values = onnx.TensorProto.DataType
    return of_onnx(values.Name(data_type)) if data_type in values.values() else None


# A shape of more elements overflows int64 byte sizes and strides (MLIR asserts on it; found by fuzzing).
MAX_ELEMENTS = 1 << 60


class OnnxImportError(ValueError):
    """A model, or one of its DequantizeLinear nodes, that cannot be imported (the message names it)."""


def _onnx():
    """The onnx package, or an ImportError that says how to get it."""
    try:
        import onnx
        import onnx.numpy_helper
        import onnx.shape_inference
    except ImportError as e:
        raise ImportError("ONNX import needs the onnx package: pip install 'dequant[onnx]'") from e
    return onnx


def import_onnx(model: str | os.PathLike | onnx.ModelProto, context: ir.Context | None = None) -> ir.Module:
    """A module with one function per DequantizeLinear node of `model` (a path or a ModelProto);
    raises OnnxImportError (a ValueError) naming the node for a model it cannot import."""
    onnx = _onnx()
    base_dir = ""
    if isinstance(model, (str, os.PathLike)):
        base_dir = os.path.dirname(os.fspath(model))
        path = os.fspath(model)
        try:  # external data is read where a value is used, so a missing file is named there
            model = onnx.load(path, load_external_data=False)
        except OSError as e:
            raise OnnxImportError(f"cannot read '{path}': {e.strerror or e}") from None
        except Exception as e:  # protobuf DecodeError and the like
            raise OnnxImportError(f"'{path}' is not an ONNX model: {e}") from None
        if not model.HasField("graph"):
            raise OnnxImportError(f"'{path}' holds no ONNX model (the file is empty or has no graph)")
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"import_onnx takes a path or an onnx.ModelProto, got {type(model).__name__}")
    ctx = context if context is not None else new_context()
    dialect.register(ctx)
    with ctx, ir.Location.unknown():
        return _Importer(onnx, model, base_dir).run()


class _Importer:
    """One import: the graph's values, the module being built, the names already used."""

    def __init__(self, onnx, model, base_dir: str):
        self.onnx, self.base_dir = onnx, base_dir
        self.opset = next((o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS), None)
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
        except Exception:  # inference is best effort: values it cannot type are reported where used
            inferred = model
        graph = inferred.graph
        self.nodes = list(graph.node)
        self.types = {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}
        self.initializers = {t.name: t for t in graph.initializer}
        self.constants = {}  # Constant node output -> the node
        for node in self.nodes:
            if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS and len(node.output) == 1:
                self.constants[node.output[0]] = node
        self.produced = {o for node in self.nodes for o in node.output}
        self.attrs = {}  # initializer name -> its MLIR elements attribute (shared by functions)
        self.values = {}  # initializer name -> its value (numpy)
        self.symbols, self.resources = set(), set()

    def run(self) -> ir.Module:
        module = ir.Module.create()
        skipped = []
        for index, node in enumerate(self.nodes):
            if node.op_type == "DequantizeLinear" and node.domain in DEFAULT_DOMAINS:
                with ir.InsertionPoint(module.body):
                    self.function(node, index)
            else:
                domain = "" if node.domain in DEFAULT_DOMAINS else node.domain + "."
                skipped.append(f"{domain}{node.op_type}:{node.name or f'{node.op_type}_{index}'}")
        module.operation.attributes["dq.skipped_nodes"] = ir.ArrayAttr.get([ir.StringAttr.get(s) for s in skipped])
        _check(module.operation, "the imported module")
        return module

    def function(self, node, index: int) -> None:
        """Build the function of one DequantizeLinear node."""
        name = node.name or f"DequantizeLinear_{index}"
        where = f"node '{name}' (DequantizeLinear)"
        try:
            schema, attrs = self.read_node(node)
            inputs = [self.input(role, n) if n else None for role, n in zip(INPUTS, node.input)]
            inputs += [None] * (3 - len(inputs))
            self.check_types(schema, inputs)
            if schema.since_version < 13:
                for i in inputs[1:]:
                    if i is not None and i.shape and (None in i.shape or int(np.prod(i.shape)) != 1):
                        raise OnnxImportError(
                            f"DequantizeLinear-{schema.since_version} is per-tensor only: {i.role} must be a scalar, "
                            f"got shape {_show(i.shape)}"
                        )
            self.check_values(inputs)
            fn = self.build(self.symbol(name), name, inputs, attrs)
        except ValueError as e:
            raise OnnxImportError(f"{where}: {e}") from None
        _check(fn.operation, where)

    def read_node(self, node):
        """The node's schema (from the model's opset) and its attributes as dq attribute values."""
        onnx = self.onnx
        if self.opset is None:
            raise OnnxImportError("the model imports no opset of the default domain ('' or 'ai.onnx')")
        try:
            schema = onnx.defs.get_schema("DequantizeLinear", self.opset, "")
        except onnx.defs.SchemaError:
            message = f"DequantizeLinear needs opset 10 or later, the model imports opset {self.opset}"
            raise OnnxImportError(message) from None
        if not 2 <= len(node.input) <= 3 or not node.input[0] or not node.input[1]:
            got = list(node.input)
            raise OnnxImportError(f"DequantizeLinear takes x, x_scale and an optional x_zero_point, got inputs {got}")
        if len(node.output) != 1:
            raise OnnxImportError(f"DequantizeLinear has one output, got {len(node.output)}")
        version = f"DequantizeLinear-{schema.since_version} (opset {self.opset})"
        attrs = {}
        for a in node.attribute:
            formal = schema.attributes.get(a.name)
            if formal is None:
                known = f"has: {', '.join(sorted(schema.attributes))}" if schema.attributes else "has no attributes"
                raise OnnxImportError(f"attribute '{a.name}' is not an attribute of {version}, which {known}")
            if a.type != formal.type:
                raise OnnxImportError(f"attribute '{a.name}' must be of type {formal.type.name}")
            attrs[a.name] = onnx.helper.get_attribute_value(a)
        out = attrs.pop("output_dtype", 0)
        if out:  # 0 (UNDEFINED, the default) means the scale's type
            values = onnx.TensorProto.DataType
            name = values.Name(out) if out in values.values() else str(out)
            allowed = _allowed(schema, "T3")
            if _onnx_type(name) not in allowed:
                raise OnnxImportError(f"output_dtype {name} is not one of T3 ({', '.join(sorted(allowed))})")
            attrs["output_dtype"] = of_onnx(name).name
        return schema, attrs

    def input(self, role: str, name: str) -> "_Input":
        """One input of the node: its element type and shape, and its value if it is constant."""
        tensor = self.initializers.get(name)
        if tensor is None and name in self.constants:
            tensor = _constant_tensor(self.constants[name])
        if tensor is not None:
            if math.prod(tensor.dims) >= MAX_ELEMENTS:
                raise OnnxImportError(f"input '{name}' ({role}) is a constant of {list(tensor.dims)} elements: more than 2^60 cannot be addressed in bytes")
            if any(d < 0 for d in tensor.dims):
                raise OnnxImportError(f"input '{name}' ({role}) is a constant with a negative dim: {list(tensor.dims)}")
            return _Input(role, name, self.type_name(tensor.data_type, name), tuple(tensor.dims), tensor)
        t = self.types.get(name)
        if t is None:
            if name not in self.produced:
                raise OnnxImportError(f"input '{name}' ({role}) is not a graph input, an initializer or a node's output")
            raise OnnxImportError(f"input '{name}' ({role}) has no type: shape inference found none")
        if t.WhichOneof("value") != "tensor_type":
            raise OnnxImportError(f"input '{name}' ({role}) is not a tensor")
        tt = t.tensor_type
        if not tt.HasField("shape"):
            raise OnnxImportError(f"input '{name}' ({role}) has no known rank: shape inference found none")
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
        if any(d is not None and d < 0 for d in shape):
            raise OnnxImportError(f"input '{name}' ({role}) has a negative dim: {[-1 if d is None else d for d in shape]}")
        if math.prod(d for d in shape if d is not None) >= MAX_ELEMENTS:
            raise OnnxImportError(f"input '{name}' ({role}) has {shape} elements: more than 2^60 cannot be addressed in bytes")
        return _Input(role, name, self.type_name(tt.elem_type, name), shape)

    def type_name(self, data_type: int, value: str) -> str:
        """The TensorProto.DataType name of an element type (ValueError if undefined)."""
        values = self.onnx.TensorProto.DataType
        if data_type == 0 or data_type not in values.values():
            raise OnnxImportError(f"input '{value}' has no known element type ({data_type})")
        return values.Name(data_type)

    def check_types(self, schema, inputs: list) -> None:
        """Element types within the schema's constraints, and known to the dq dialect."""
        for formal, i in zip(schema.inputs, inputs):
            if i is None:
                continue
            allowed = _allowed(schema, formal.type_str)
            if _onnx_type(i.type_name) not in allowed:
                types = ", ".join(sorted(allowed))
                if allowed != {formal.type_str}:  # a type parameter: T1, T2
                    types = f"{formal.type_str} ({types})"
                raise OnnxImportError(
                    f"{i.role} '{i.name}' is {_onnx_type(i.type_name)}; DequantizeLinear-{schema.since_version} "
                    f"takes {i.role} of {types}"
                )
            if of_onnx(i.type_name) is None:
                message = f"{i.role} '{i.name}' has element type {i.type_name}, which the dq dialect has no type for"
                raise OnnxImportError(message)

    def check_values(self, inputs: list) -> None:
        """The op's value rules on a constant zero point, read here whatever its size (the
        verifier cannot read the dense_resource blob a large one becomes)."""
        x, zp = inputs[0], inputs[2]
        if zp is None or zp.tensor is None:
            return
        value = self.packed(zp).unpack() if ELEMENTS[zp.elem].sub_byte else self.value(zp)
        sig = Signature({"x": Tensor(x.elem, x.shape)}, None, {}, {"x_zero_point": value})
        for rule in dq_onnx.OP.value_rules:
            message = rule(sig)
            if message:
                raise OnnxImportError(message)

    def build(self, symbol: str, name: str, inputs: list, attrs: dict):
        """The func.func: arguments for non-constant inputs, constants for the others."""
        args = [i for i in inputs if i is not None and i.tensor is None]
        x, scale = inputs[0], inputs[1]
        result = tensor_type(x.shape, attrs.get("output_dtype") or scale.elem)
        loc = ir.Location.name(name)
        fn = func.FuncOp(symbol, ([i.mlir_type() for i in args], [result]), loc=loc)
        block = fn.add_entry_block()
        with ir.InsertionPoint(block), loc:
            values, arguments = [], iter(block.arguments)
            for i in inputs:
                if i is None:
                    values.append(None)
                elif i.tensor is None:
                    values.append(next(arguments))
                else:
                    values.append(self.constant(i))
            y = dq_onnx.OP.build(*values, **attrs, loc=loc)
            func.ReturnOp([y])
        return fn

    def constant(self, i: "_Input") -> ir.Value:
        """The `arith.constant` of a constant input. A large unsigned one is a blob of the signless
        type of its width, `tensor.bitcast` to the unsigned type: native code reads storage as
        signless, and a blob cannot be retyped later (its values are not readable in IR)."""
        attr = self.elements(i)
        if ELEMENTS[i.elem].sub_byte:  # the packed bytes, read in place through dq.unpack
            return unpack.build(arith.ConstantOp(attr.type, attr).result, i.mlir_type())
        if attr.type == i.mlir_type():
            return arith.ConstantOp(i.mlir_type(), attr).result
        return tensor.bitcast(i.mlir_type(), arith.ConstantOp(attr.type, attr).result)

    def packed(self, i: "_Input"):
        """The packed bytes of a 4- or 2-bit constant input (a dequant.Packed), never unpacked."""
        tensor = i.tensor
        if tensor.data_location == self.onnx.TensorProto.EXTERNAL:
            tensor = type(tensor)()
            tensor.CopyFrom(i.tensor)
            try:
                from onnx.external_data_helper import load_external_data_for_tensor

                load_external_data_for_tensor(tensor, self.base_dir)
            except Exception as e:
                raise OnnxImportError(f"cannot read the value of '{i.name}' ({i.role}): {e}") from None
        try:
            return Packed.from_onnx(tensor)
        except ValueError as e:
            raise OnnxImportError(f"cannot read the value of '{i.name}' ({i.role}): {e}") from None

    def value(self, i: "_Input") -> np.ndarray:
        """The value of a constant input, of its element's dtype and shape (read once)."""
        if i.name not in self.values:
            try:
                array = self.onnx.numpy_helper.to_array(i.tensor, self.base_dir)
            except Exception as e:
                raise OnnxImportError(f"cannot read the value of '{i.name}' ({i.role}): {e}") from None
            self.values[i.name] = np.asarray(array).astype(ELEMENTS[i.elem].dtype).reshape(i.shape)
        return self.values[i.name]

    def elements(self, i: "_Input") -> ir.Attribute:
        """The value of a constant input as `dense<...>` or, when large, `dense_resource<...>`;
        one attribute per ONNX value, shared by the functions that read it."""
        if i.name in self.attrs:
            return self.attrs[i.name]
        e = ELEMENTS[i.elem]
        if e.sub_byte:  # 4- and 2-bit initializers stay packed: a 1-D i8 tensor of their bytes
            data = self.packed(i).data.view(np.int8)
            byte_t = tensor_type((data.size,), "i8")
            if data.size > DENSE_LIMIT:
                attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(data.copy()), self.resource(i.name), byte_t)
            else:
                attr = constants.attribute(data, ELEMENTS["i8"])
            self.attrs[i.name] = attr
            return attr
        values = self.value(i)
        if values.size > DENSE_LIMIT:
            blob = memoryview(values.copy(order="C").view(e.carrier))
            t = i.mlir_type()
            if e.kind == "int" and not e.signed:
                t = tensor_type(i.shape, f"i{e.bits}")
            attr = ir.DenseResourceElementsAttr.get_from_buffer(blob, self.resource(i.name), t)
        else:
            attr = constants.attribute(values, e)
        self.attrs[i.name] = attr
        return attr

    def symbol(self, name: str) -> str:
        return _unique(_sanitize(name), self.symbols)

    def resource(self, name: str) -> str:
        return _unique(_sanitize(name or "initializer"), self.resources)


@dataclass
class _Input:
    role: str  # x, x_scale, x_zero_point
    name: str  # the ONNX value
    type_name: str  # TensorProto.DataType name
    shape: tuple  # ints, None for an unknown dim
    tensor: object = None  # the TensorProto of a constant input

    @property
    def elem(self) -> str:
        return of_onnx(self.type_name).name

    def mlir_type(self) -> ir.RankedTensorType:
        return tensor_type(self.shape, self.elem)


def _constant_tensor(node):
    """The TensorProto of a Constant node's `value` (or value_float(s)), or None."""
    from onnx import helper, numpy_helper

    for a in node.attribute:
        if a.name == "value":
            return a.t
        if a.name in ("value_float", "value_floats"):
            return numpy_helper.from_array(np.asarray(helper.get_attribute_value(a), np.float32), node.output[0])
    return None


def _allowed(schema, type_str: str) -> set[str]:
    """The ONNX type strings a formal type (`T1` or `tensor(float)`) allows."""
    for c in schema.type_constraints:
        if c.type_param_str == type_str:
            return set(c.allowed_type_strs)
    return {type_str}


def _onnx_type(type_name: str) -> str:
    return f"tensor({type_name.lower()})"


def _sanitize(name: str) -> str:
    """A bare MLIR identifier: [A-Za-z0-9_] only, not starting with a digit."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", name) or "_"
    return "_" + name if name[0].isdigit() else name


def _unique(name: str, used: set) -> str:
    candidate, n = name, 0
    while candidate in used:
        n += 1
        candidate = f"{name}_{n}"
    used.add(candidate)
    return candidate


def _show(shape) -> list:
    return ["?" if d is None else d for d in shape]


def _check(op, where: str) -> None:
    """Structural (IRDL) and dq spec verification of `op`; the errors as one ValueError."""
    with diagnostics.Collector(op.context) as collected:
        try:
            op.verify()
        except ir.MLIRError as e:
            collected.add_error(e)
        else:
            dialect.verify(op)
    errors = [d.message for d in collected.diags if d.severity == "error"]
    if errors:
        raise OnnxImportError(f"{where}: {'; '.join(errors)}")


def main(argv: list[str] | None = None) -> int:
    """dequant-import-onnx MODEL.onnx [-o out.mlir]"""
    p = argparse.ArgumentParser(
        prog="dequant-import-onnx",
        description="Import the DequantizeLinear nodes of an ONNX model as dq functions (one func.func per node).",
    )
    p.add_argument("model", help="the ONNX model (.onnx)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    args = p.parse_args(argv)
    try:
        module = import_onnx(args.model)
    except (OnnxImportError, TypeError, ImportError) as e:
        print(f"dequant-import-onnx: error: {e}", file=sys.stderr)
        return 1
    skipped = [attr_text(a) for a in ir.ArrayAttr(module.operation.attributes["dq.skipped_nodes"])]
    if skipped:
        print(f"skipped {len(skipped)} nodes: {', '.join(skipped)}", file=sys.stderr)
    text = str(module)
    try:
        if args.output == "-":
            sys.stdout.write(text)
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
    except OSError as e:
        print(f"dequant-import-onnx: error: cannot write '{args.output}': {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
