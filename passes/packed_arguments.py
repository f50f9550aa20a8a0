"""dq-packed-arguments: public function arguments marked `dq.packed` take sub-byte data packed.

    func.func @f(%x: tensor<?x64xi4> {dq.packed}, ...)
  becomes
    func.func @f(%x: tensor<?x64xi8> {dq.packed}, ...)     // the caller's descriptor: logical
      %m = bufferization.to_buffer %x read_only             // sizes, packed data (docs/abi.md)
      %flat = memref.reinterpret_cast %m to [ceil(elements * bits / 8)] bytes
      %bytes = bufferization.to_tensor %flat restrict
      %x' = "dq.unpack"(%bytes, %d0) : (tensor<?xi8>, index) -> tensor<?x64xi4>

The caller passes a memref descriptor whose sizes and strides are the logical tensor's (row-major,
offset 0) and whose data is the elements packed in ONNX's layout (docs/semantics.md#packed-sub-byte-data):
the descriptor describes the tensor, the bytes hold it. dq ops then read the bytes in place
(dq-to-linalg). Without the attribute a sub-byte argument is one element per byte
(dq-storage-abi). An argument attribute `dq.rows` ("whole" or "partial") is copied to the
`dq.unpack` (a compile-time hint, dialect/unpack.py). Runs before dq-to-linalg in dq-to-llvm.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, bufferization, memref, tensor

from dequant.dialect import unpack
from dequant.dialect.elements import of_type

from . import Pass
from .queries import function_type, public_functions

PACKED = "dq.packed"


def packed_arguments(f) -> list[int]:
    """The indices of `f`'s arguments marked `dq.packed`."""
    if "arg_attrs" not in f.attributes:
        return []
    return [i for i, a in enumerate(ir.ArrayAttr(f.attributes["arg_attrs"])) if PACKED in ir.DictAttr(a)]


def _rewrite_argument(f, index: int) -> str | None:
    """Make argument `index` a packed carrier; why it cannot be, or None."""
    entry = f.regions[0].blocks[0]
    arg = entry.arguments[index]
    if not isinstance(arg.type, ir.RankedTensorType):
        return "is not a ranked tensor"
    t = ir.RankedTensorType(arg.type)
    e = of_type(t.element_type)
    if e is None or not e.sub_byte:
        return f"is a tensor of {t.element_type}: only sub-byte types (i4, ui4, f4E2M1FN, i2, ui2) are packed"
    i8 = ir.IntegerType.get_signless(8)
    uses = [(u.owner, u.operand_number) for u in arg.uses]
    arg.set_type(ir.RankedTensorType.get(t.shape, i8))
    index_t = ir.IndexType.get()
    dyn = ir.ShapedType.get_dynamic_size()
    with ir.InsertionPoint.at_block_begin(entry), f.location:
        dims = [tensor.dim(arg, arith.constant(index_t, d)) for d in range(t.rank) if t.is_dynamic_dim(d)]
        count = arith.constant(index_t, 1)
        dynamic = iter(dims)
        for d in range(t.rank):
            count = arith.muli(count, next(dynamic) if t.is_dynamic_dim(d) else arith.constant(index_t, t.shape[d]))
        nbytes = arith.ceildivui(count, arith.constant(index_t, e.per_byte))
        buffer = bufferization.to_buffer(ir.MemRefType.get(t.shape, i8), arg, read_only=True)
        flat_t = ir.MemRefType.get([dyn], i8)
        flat = memref.reinterpret_cast(flat_t, buffer, [], [nbytes], [], [0], [dyn], [1])
        bytes_ = bufferization.to_tensor(ir.RankedTensorType.get([dyn], i8), flat, restrict=True)
        value = unpack.build(bytes_, t, dims)
    attrs = ir.DictAttr(ir.ArrayAttr(f.attributes["arg_attrs"])[index])
    if unpack.ROWS in attrs:  # the caller's hint (dq.unpack's docstring)
        value.owner.attributes[unpack.ROWS] = attrs[unpack.ROWS]
    for owner, n in uses:
        owner.operands[n] = value
    return None


def run(root) -> bool:
    ok = True
    for f in public_functions(root):
        indices = packed_arguments(f)
        for i in indices:
            why = _rewrite_argument(f, i)
            if why:
                f.location.emit_error(f"argument {i} is marked {PACKED} but {why}")
                ok = False
        if indices:
            ftype = function_type(f)
            inputs = [a.type for a in f.regions[0].blocks[0].arguments]
            f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(ftype.results)))
    return ok


PASS = Pass("dq-packed-arguments", "Public function arguments marked dq.packed take sub-byte data packed (ONNX layout)", run)
