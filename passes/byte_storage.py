"""dq-byte-storage: pass 4-bit tensors across function boundaries one element per byte.

LLVM packs vectors of i4 two to a byte in memory, while ml_dtypes (and this project's ABI) keep
one 4-bit element per byte. This pass retypes each public function's 4-bit tensor arguments
and results (i4, ui4, f4E2M1FN), and 4-bit constants, as i8 tensors. A `linalg.generic` reading such an argument
reads the bytes and converts each in its body; any other use gets an elementwise conversion
generic at entry; results are converted before return.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, linalg, tensor

from dequant.dialect import decode

from . import Pass

PARALLEL = "#linalg.iterator_type<parallel>"


def is_nibble_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and str(t.element_type) in ("i4", "ui4", "f4E2M1FN")


def convert(value: ir.Value, to_elem: ir.Type) -> ir.Value:
    """An elementwise generic converting `value` between i8 and a 4-bit element type."""
    t = ir.RankedTensorType(value.type)
    sizes = [
        tensor.dim(value, arith.constant(ir.IndexType.get(), d)) if t.is_dynamic_dim(d) else t.shape[d]
        for d in range(t.rank)
    ]
    init = tensor.empty(sizes, to_elem)
    ident = ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank))
    g = linalg.GenericOp(
        [ir.RankedTensorType.get(t.shape, to_elem)],
        [value],
        [init],
        ir.ArrayAttr.get([ident, ident]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * t.rank),
    )
    block = g.regions[0].blocks.append(t.element_type, to_elem)
    with ir.InsertionPoint(block):
        v = block.arguments[0]
        if str(to_elem) == "i8":  # 4-bit -> byte: zero-extend the bits
            out = arith.extui(decode.i(8), decode.raw_bits(v))
        else:  # byte -> 4-bit: keep the low four bits
            out = from_byte(v, to_elem)
        linalg.YieldOp([out])
    return g.results[0]


def from_byte(v: ir.Value, to_elem: ir.Type) -> ir.Value:
    """A byte scalar as a 4-bit scalar: its low four bits."""
    bits = arith.trunci(decode.i(4), v)
    if isinstance(to_elem, ir.FloatType):
        return arith.bitcast(to_elem, bits)
    if str(to_elem) == "ui4":
        return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to_elem], operands=[bits]).result
    return bits


def _read_in_body(owner, n: int, nibble: ir.Type, byte: ir.Value | None = None) -> bool:
    """If `owner` is a linalg.generic reading operand `n` as an input, make it read bytes
    (operand `byte` if given): its block argument becomes i8, converted at the top of the body."""
    if owner.name != "linalg.generic" or n >= len(owner.operands) - _num_outputs(owner):
        return False
    if byte is not None:
        owner.operands[n] = byte
    body = owner.regions[0].blocks[0]
    barg = body.arguments[n]
    uses = [(u.owner, u.operand_number) for u in barg.uses]
    barg.set_type(decode.i(8))
    with ir.InsertionPoint.at_block_begin(body), owner.location:
        value = from_byte(barg, nibble)
    for o, k in uses:
        o.operands[k] = value
    return True


def _num_outputs(generic) -> int:
    return ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[1]


def retype(f: func.FuncOp) -> None:
    i8 = decode.i(8)
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    entry = f.regions[0].blocks[0]
    inputs = []
    for arg in list(entry.arguments):
        t = arg.type
        if not is_nibble_tensor(t):
            inputs.append(t)
            continue
        byte_t = ir.RankedTensorType.get(ir.RankedTensorType(t).shape, i8)
        nibble = ir.RankedTensorType(t).element_type
        uses = [(u.owner, u.operand_number) for u in arg.uses]
        arg.set_type(byte_t)
        others = [(o, n) for o, n in uses if not _read_in_body(o, n, nibble)]
        if others:
            with ir.InsertionPoint.at_block_begin(entry), f.location:
                nibbles = convert(arg, nibble)
            for owner, n in others:
                owner.operands[n] = nibbles
        inputs.append(byte_t)
    results = list(ftype.results)
    for block in f.regions[0].blocks:
        ret = block.operations[len(block.operations) - 1]
        if ret.name != "func.return":
            continue
        for n, v in enumerate(list(ret.operands)):
            if is_nibble_tensor(v.type):
                with ir.InsertionPoint(ret), f.location:
                    ret.operands[n] = convert(v, i8)
                results[n] = ret.operands[n].type
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def retype_constant(c) -> bool:
    """A 4-bit `arith.constant` tensor becomes an i8 constant of the same values, read as bytes
    like an argument. False when its values cannot be read."""
    import ml_dtypes
    import numpy as np

    from dequant.dialect.opdef import constant_value

    t = ir.RankedTensorType(c.results[0].type)
    values = constant_value(c.results[0])
    if values is None:
        return False
    nibble = t.element_type
    if isinstance(nibble, ir.FloatType):
        data = np.asarray(values, np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8).astype(np.int8)
    else:
        data = (np.asarray(values, np.int64) & 0xF).astype(np.int8)
    with ir.InsertionPoint(c), c.location:
        byte_t = ir.RankedTensorType.get(t.shape, decode.i(8))
        data = np.ascontiguousarray(data.reshape(t.shape))
        attr = ir.DenseElementsAttr.get(data, type=decode.i(8), shape=list(t.shape)) if data.ndim else ir.DenseElementsAttr.get_splat(byte_t, ir.IntegerAttr.get(decode.i(8), int(data)))
        byte = arith.ConstantOp(byte_t, attr).result
    uses = [(u.owner, u.operand_number) for u in c.results[0].uses]
    others = [(o, n) for o, n in uses if not _read_in_body(o, n, nibble, byte)]
    if others:
        with ir.InsertionPoint(c), c.location:
            nibbles = convert(byte, nibble)
        for owner, n in others:
            owner.operands[n] = nibbles
    c.erase()
    return True


def run(op) -> bool:
    constants = []

    def visit(o):
        if o.name == "arith.constant" and is_nibble_tensor(o.results[0].type):
            constants.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    for c in constants:
        retype_constant(c)
    for f in op.regions[0].blocks[0].operations if op.operation.name == "builtin.module" else []:
        if f.operation.name == "func.func" and len(f.regions[0].blocks) and "sym_visibility" not in f.attributes:
            retype(f)
    return True


PASS = Pass("dq-byte-storage", "Pass 4-bit tensors across public function boundaries one element per byte", run)
