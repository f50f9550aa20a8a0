"""dq-storage-abi: storage tensors at the edges of native code are signless bytes and words.

Native code passes tensors as memref descriptors over plain memory: unsigned integers hold the
same bits as the signless type of their width, and sub-byte types (i4, ui4, f4E2M1FN, i2, ui2)
one element per byte, the low bits (ml_dtypes' layout; LLVM would read `vector<N x i4>` as packed
nibbles). This pass rewrites, in the op it runs on (a module):
- public functions' arguments: `bufferization.writable = false` unless declared writable, so that
  bufferization copies rather than writes the caller's arrays;
- public functions' tensor arguments of those types: unsigned -> signless of the same width,
  sub-byte -> i8 (the caller passes bytes);
- `arith.constant` tensors of those types: the same values as signless or byte constants.
Each retyped value's uses follow: the `tensor.bitcast` to signless storage that dq-to-linalg puts
before its generics folds into the value; shape-only tensor ops (cast, extract_slice,
expand/collapse_shape) take the storage type along; a `linalg.generic` reading a byte tensor
converts the byte to the 4-bit (or 2-bit) value at the top of its body (`arith.trunci`, which
dq-fold-nibble-casts turns into shifts); any other use gets the logical tensor back from an
elementwise conversion. Public functions' results of those types are converted to storage before
`func.return`.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, tensor

from dequant.dialect import constants
from dequant.dialect.elements import ELEMENTS, Element, of_type
from dequant.dialect.walking import walk

from . import Pass
from .lazy import linalg
from .queries import function_type, made_by, public_functions, terminator

SHAPE_OPS = ("tensor.cast", "tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape")


def storage_element(value: ir.Value) -> ir.Type | None:
    """The storage element type of a tensor value whose element type is not its own storage:
    i8 for sub-byte types, the signless integer of the width for unsigned and `si*` ones."""
    t = value.type
    if not isinstance(t, ir.RankedTensorType):
        return None
    elem = ir.RankedTensorType(t).element_type
    e = of_type(elem)
    if e is not None and e.sub_byte:
        return ir.IntegerType.get_signless(8)
    if isinstance(elem, ir.IntegerType) and not ir.IntegerType(elem).is_signless:
        return ir.IntegerType.get_signless(ir.IntegerType(elem).width)
    return None


def _retyped(t: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(ir.RankedTensorType(t).shape, elem)


def _element(value: ir.Value) -> Element | None:
    t = value.type
    return of_type(ir.RankedTensorType(t).element_type) if isinstance(t, ir.RankedTensorType) else None


def from_storage(v: ir.Value, logical: ir.Type) -> ir.Value:
    """A storage scalar (signless, a byte for sub-byte types) as the scalar `logical` expects:
    the signless integer of the logical width, or the float4 value."""
    width = ir.IntegerType(v.type).width
    e = of_type(logical)
    if e is None or not e.sub_byte:
        if isinstance(logical, ir.IntegerType) and ir.IntegerType(logical).is_signless:
            return v
        return _cast(v, logical)
    bits = arith.trunci(ir.IntegerType.get_signless(e.bits), v) if width != e.bits else v
    if e.kind == "float":
        return arith.bitcast(logical, bits)
    return bits if ir.IntegerType(logical).is_signless else _cast(bits, logical)


def to_storage(v: ir.Value, storage: ir.Type) -> ir.Value:
    """A logical scalar as its storage scalar (zero-extended bits for sub-byte types)."""
    t = v.type
    if isinstance(t, ir.FloatType):
        v = arith.bitcast(ir.IntegerType.get_signless(ir.FloatType(t).width), v)
    elif not ir.IntegerType(t).is_signless:
        v = _cast(v, ir.IntegerType.get_signless(ir.IntegerType(t).width))
    return arith.extui(storage, v) if ir.IntegerType(v.type).width < ir.IntegerType(storage).width else v


def _cast(v: ir.Value, t: ir.Type) -> ir.Value:
    """Signless <-> unsigned scalars of one width: no arith op converts signedness, so an
    unrealized cast that the LLVM conversion reconciles (only on the rare path of `convert`)."""
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[t], operands=[v]).result


def convert(value: ir.Value, to_elem: ir.Type, scalar) -> ir.Value:
    """An elementwise generic converting tensor `value` to element type `to_elem` with `scalar`."""
    t = ir.RankedTensorType(value.type)
    sizes = [tensor.dim(value, arith.constant(ir.IndexType.get(), d)) if t.is_dynamic_dim(d) else t.shape[d] for d in range(t.rank)]
    init = tensor.empty(sizes, to_elem)
    ident = ir.AffineMap.get_identity(t.rank)

    @linalg.generic([value], [init], [ident, ident], [linalg.IteratorType.parallel] * t.rank)
    def converted(v, _):
        return scalar(v, to_elem)

    return converted


def retype(value: ir.Value, logical: ir.Type, storage: ir.Type) -> None:
    """Give `value` (a tensor of element `logical`) the element type `storage`; its uses follow."""
    value.set_type(_retyped(value.type, storage))
    follow(value, logical, storage)


def follow(value: ir.Value, logical: ir.Type, storage: ir.Type) -> None:
    """Make the uses of `value`, now a storage tensor standing for a tensor of `logical`
    elements, read storage."""
    materialized = None
    for use in list(value.uses):
        owner, n = use.owner, use.operand_number
        name = owner.operation.name
        if name == "tensor.bitcast":  # dq-to-linalg's cast to signless storage
            result = owner.results[0]
            target = ir.RankedTensorType(result.type).element_type
            if target != storage:  # the signless sub-byte type: bytes too
                result.set_type(_retyped(result.type, storage))
                follow(result, target, storage)
            result.replace_all_uses_with(value)
            owner.operation.erase()
        elif name in SHAPE_OPS and n == 0:
            retype(owner.results[0], logical, storage)
        elif name == "linalg.generic" and n < _num_inputs(owner):
            body = owner.regions[0].blocks[0]
            arg = body.arguments[n]
            uses = [(u.owner, u.operand_number) for u in arg.uses]
            arg.set_type(storage)
            with ir.InsertionPoint.at_block_begin(body), owner.location:
                scalar = from_storage(arg, logical)
            for o, k in uses:
                o.operands[k] = scalar
        else:  # the logical tensor again, converted once
            if materialized is None:
                with _after_definition(value), ir.Location.unknown():
                    materialized = convert(value, logical, from_storage)
            owner.operands[n] = materialized


def _num_inputs(generic) -> int:
    return ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]


def _after_definition(value: ir.Value) -> ir.InsertionPoint:
    if isinstance(value, ir.BlockArgument):
        return ir.InsertionPoint.at_block_begin(value.owner)
    return ir.InsertionPoint.after(value.owner)


WRITABLE = "bufferization.writable"


def _read_only_arguments(f) -> None:
    """Mark every argument the function does not declare writable `bufferization.writable =
    false`: bufferization then copies before writing, so the caller's arrays are never written."""
    n = len(function_type(f).inputs)
    old = list(ir.ArrayAttr(f.attributes["arg_attrs"])) if "arg_attrs" in f.attributes else [ir.DictAttr.get({})] * n
    new = []
    for attr in old:
        d = ir.DictAttr(attr)
        entries = {a.name: a.attr for a in (d[i] for i in range(len(d)))}
        entries.setdefault(WRITABLE, ir.BoolAttr.get(False))
        new.append(ir.DictAttr.get(entries))
    f.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


def _retype_function(f) -> None:
    _read_only_arguments(f)
    ftype = function_type(f)
    entry = f.regions[0].blocks[0]
    inputs = []
    for arg in entry.arguments:
        storage = storage_element(arg)
        if storage is not None:
            retype(arg, ir.RankedTensorType(arg.type).element_type, storage)
        inputs.append(arg.type)
    results = list(ftype.results)
    for block in f.regions[0].blocks:
        ret = terminator(block)
        if ret.operation.name != "func.return":
            continue
        for n, v in enumerate(list(ret.operands)):
            storage = storage_element(v)
            if storage is not None:
                with ir.InsertionPoint(ret), f.location:
                    ret.operands[n] = convert(v, storage, to_storage)
                results[n] = ret.operands[n].type
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _retype_constant(c) -> None:
    value = c.results[0]
    e, logical = _element(value), ir.RankedTensorType(value.type).element_type
    values = constants.read(value)
    if values is None:
        return
    raw = values.copy(order="C").view(e.carrier)  # one element per byte or word
    if e.sub_byte:
        raw = raw & ((1 << e.bits) - 1)
    storage = ELEMENTS[f"i{raw.dtype.itemsize * 8}"]
    with ir.InsertionPoint(c), c.location:
        attr = constants.attribute(raw.view(storage.dtype), storage)
        new = arith.ConstantOp(_retyped(value.type, storage.ir_type()), attr).result
    value.replace_all_uses_with(new)
    c.erase()
    follow(new, logical, storage.ir_type())


def run(op) -> bool:
    found = []

    def visit(o):
        if o.name == "arith.constant" and storage_element(o.results[0]) is not None:
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(op, visit, ir.WalkOrder.PRE_ORDER)
    for c in found:
        _retype_constant(c)
    for f in public_functions(op):
        _retype_function(f)
    _copy_remaining_casts(op)
    return True


def _copy_remaining_casts(op) -> None:
    """A `tensor.bitcast` to signless storage that nothing above removed (its source is an
    unreadable constant, a call's result, ...) becomes an elementwise copy: bufferization has no
    tensor.bitcast."""
    casts = []

    def visit(o):
        if o.name == "tensor.bitcast" and storage_element(o.operands[0]) == ir.RankedTensorType(o.results[0].type).element_type:
            casts.append(o)
        return ir.WalkResult.ADVANCE

    walk(op, visit, ir.WalkOrder.PRE_ORDER)
    for c in casts:
        source, target = c.operands[0], c.results[0]
        inner = made_by(source, "tensor.bitcast")
        if inner is not None and inner.operands[0].type == target.type:
            target.replace_all_uses_with(inner.operands[0])  # a cast back from the storage type
        else:
            with ir.InsertionPoint(c), c.location:
                target.replace_all_uses_with(convert(source, ir.RankedTensorType(target.type).element_type, _cast))
        c.erase()


PASS = Pass("dq-storage-abi", "Pass unsigned and sub-byte tensors across function boundaries and constants as signless bytes and words", run)
