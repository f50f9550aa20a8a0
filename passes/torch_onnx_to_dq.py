"""torch-onnx-to-dq: every ONNX DequantizeLinear of an imported model (torch form) becomes dq.

Input: the torch form of `iree-import-onnx` or torch-mlir's ONNX importer (passes/torch_onnx.py),
in generic form. Each `torch.operator "onnx.DequantizeLinear"` becomes

    %x = torch_c.to_builtin_tensor %x_t      (the same for x_scale and x_zero_point)
    %y = dq.onnx_dequantize_linear(%x, %s, %z) {axis, block_size, output_dtype}
    %y_t = torch_c.from_builtin_tensor %y

read from `torch.onnx.axis`, `torch.onnx.block_size` and `torch.onnx.output_dtype` (absent: the
spec defaults), with every type, granularity and opset the op takes (docs/semantics.md). A
`!torch.none` zero point is absent. Unsigned storage is `tensor.bitcast` from torch_c's signless
tensor. A sub-byte x or zero point (int4, uint4, float4e2m1, int2, uint2) that is an initializer
is kept packed: an `arith.constant` of its ONNX bytes (1-D i8, the same bytes the importer's
blob holds) read through `dq.unpack`, so no 4-bit constant reaches the next compiler (IREE 3.13
cannot serialize a 4-bit `dense_resource` and miscomputes a 4-bit `dense`); a blob longer than
the dims need is read by its leading bytes, as onnx.reference reads `raw_data`, and a shorter one
leaves the node with a remark. A blocked node whose last block along a static x is partial,
whose block is not a power of two (unless only MatMuls read it, as their weights), or whose
sub-byte x is blocked along the axis its bytes pack, becomes `dq.dequantize`s reading no
`floordiv` (the whole blocks in a [.., K / B, B, ..] view, the tail) joined by `tensor.concat`
(`split_blocks`, `block_view`).

Everything else is untouched. A DequantizeLinear dq cannot express stays as it was, with a remark
at its location naming why: a type dq does not read, an attribute the spec does not define, a
rule of the spec broken (the dq verifier's words), a result type other than the spec's.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from dequant.dialect import canonical, constants, unpack
from dequant.dialect import onnx as dq_onnx
from dequant.dialect.signature import Signature, Tensor
from dequant.dialect.elements import of_onnx

from . import Pass
from . import torch_onnx as t
from .remarks import emit_remarks
from .to_linalg import expand

ATTRS = {"torch.onnx.axis": "axis", "torch.onnx.block_size": "block_size", "torch.onnx.output_dtype": "output_dtype"}


def onnx_type_name(code: int) -> str | None:
    """The ONNX TensorProto.DataType name of a number (the onnx package's table), or None."""
    try:
        from onnx import TensorProto  # an optional dependency (docs/development.md#imports)
    except ImportError:
        return None
    try:
        return TensorProto.DataType.Name(code)
    except ValueError:
        return None


def read_attrs(op) -> dict | str:
    """{axis, block_size, output_dtype} of a DequantizeLinear node, or why they are not readable."""
    values = {}
    for name in op.attributes:
        if not name.startswith("torch.onnx."):
            continue
        short, attr = name[len("torch.onnx.") :], op.attributes[name]
        if name not in ATTRS:
            return f"attribute '{short}' is not an attribute of DequantizeLinear"
        if not isinstance(attr, ir.IntegerAttr):
            return f"attribute '{short}' must be an integer, got {attr}"
        values[ATTRS[name]] = ir.IntegerAttr(attr).value
    if "output_dtype" in values:
        name = onnx_type_name(values["output_dtype"])
        e = of_onnx(name) if name else None
        if e is None:
            return f"output_dtype {values['output_dtype']} is not an ONNX data type dq knows"
        values["output_dtype"] = e.name
    return values


def packed_bytes(value: ir.Value, tt: t.TorchTensor):
    """The ONNX bytes of a sub-byte initializer (bytes, or a uint8 array read in place: see
    `constants.resource_view`), why they cannot be read (a str), or None (not a sub-byte
    initializer). A blob longer than the dims need is read by its leading bytes, as
    onnx.reference reads `raw_data` (the ONNX checker accepts extra bytes); a shorter one is
    refused: IREE would read past it."""
    attr = t.constant_value(value)
    if attr is None or not tt.element.sub_byte or None in tt.shape:
        return None
    want = unpack.packed_bytes(tt.shape, tt.element.bits)
    data = constants.resource_view(attr)
    if data is None:
        values = constants.elements_value(attr)
        if values is None or values.shape != tt.shape:
            return None
        data = unpack.pack_values(values).tobytes()
    if len(data) < want:
        return f"the {tt.element.name} initializer holds {len(data)} bytes, its dims {list(tt.shape)} need {want}"
    return data[:want]


def packed_constant(data, tt: t.TorchTensor) -> ir.Value:
    """A sub-byte initializer as dq.unpack of an i8 constant of its ONNX bytes."""
    return unpack.build(t.byte_constant(data, f"dq_packed_{tt.element.name}"), tt.dq())


def block_view(sig: Signature, types: list, matmul_weights: bool = False) -> tuple[int, int] | None:
    """(axis, full) of a blocked node read through the [.., K / B, B, ..] view (split_blocks):
    `full` elements of whole blocks (a multiple of the block, maybe 0), then a shorter tail; else
    None. Three forms: the last block along a static axis is partial; a block that is not a
    power of two, which IREE's power-of-two tiles need not divide nor be divisible by once the
    dequantize is fused into a consumer (K = 96, block 48, a Cast then a MatMul: "tile size 32 for
    dimension d0 must divide or be divisible by the step 48"; fuzz case stage:88:498), unless
    `matmul_weights` (every use a MatMul's B, which dq's MatMul rewrites read block by block
    themselves); or a sub-byte x is blocked along its last axis, the one its bytes pack, where
    the block read would be a `floordiv` of the byte index (`d floordiv B/2` for int4), which IREE
    tiles only when its tile divides B/2 (a [31, 96] int4 weight, block 32: "tile size 24 ... must
    divide or be divisible by the step 16")."""
    b, x = sig.attrs["block_size"], types[0]
    if b <= 0 or not x.shape or None in x.shape:
        return None
    axis = sig.attrs["axis"] % len(x.shape)
    d = x.shape[axis]
    if d % b == 0 and (b & (b - 1) == 0 or matmul_weights) and not (x.element.sub_byte and axis == len(x.shape) - 1 and d > b):
        return None
    return axis, d - d % b


def _matmul_weights(value: ir.Value, through_sub: bool = True) -> bool:
    """Whether every use of `value` is a MatMul's B, or (`through_sub`) a Sub whose every use is
    one (MatMulNBits' float zero points, w - z * s: python/formats/matmul_nbits.py): the forms
    dq's MatMul rewrites read block by block themselves."""
    uses = list(value.uses)
    return bool(uses) and all(
        (t.onnx_name(u.owner) == "onnx.MatMul" and u.operand_number == 1)
        or (through_sub and t.onnx_name(u.owner) == "onnx.Sub" and _matmul_weights(u.owner.results[0], False))
        for u in uses
    )


def _slice(v: ir.Value, tt: t.TorchTensor, data, axis: int, start: int, size: int, view: list | None = None) -> ir.Value:
    """Elements [start, start + size) along `axis` of an operand: of its packed bytes (`data`,
    repacked) when it is a sub-byte initializer, else a tensor.extract_slice of its builtin tensor;
    with `view`, the `axis` dim of the slice split in two, [size / view[1], view[1]]."""
    shape = list(tt.shape)
    shape[axis] = size
    part = t.TorchTensor(tuple(shape), tt.element)
    split = shape[:axis] + list(view) + shape[axis + 1 :] if view else None
    if data is not None:
        codes = unpack.unpack_codes(data, tt.element.bits, int(np.prod(tt.shape))).reshape(tt.shape)
        index = [slice(None)] * len(shape)
        index[axis] = slice(start, start + size)
        # the row-major order of the codes is the same in the split view: the same bytes
        return packed_constant(unpack.pack_codes(codes[tuple(index)], tt.element.bits).tobytes(), t.TorchTensor(tuple(split or shape), tt.element))
    # Sliced signless, then viewed unsigned: IREE's constant evaluation of a slice of a ui8
    # initializer fails ("jit global source initialization order invalid: global ... has no value").
    whole = ir.Operation.create(t.TO_BUILTIN, results=[tt.builtin()], operands=[v]).result
    offsets = [start if i == axis else 0 for i in range(len(shape))]
    # The other dims whole, as the operand's type gives them (static or not).
    dims = {i: tensor.dim(whole, arith.constant(ir.IndexType.get(), i)) for i, n in enumerate(shape) if n is None}
    static = [ir.ShapedType.get_dynamic_size() if n is None else n for n in shape]
    y = tensor.extract_slice(part.builtin(), whole, [], list(dims.values()), [], offsets, static, [1] * len(shape))
    if split:
        sizes = [dims.get(i, n) for i, n in enumerate(shape)]
        groups = [[i] for i in range(axis)] + [[axis, axis + 1]] + [[i + 1] for i in range(axis + 1, len(shape))]
        y = expand(y, sizes[:axis] + list(view) + sizes[axis + 1 :], groups)
    want = t.TorchTensor(tuple(split or shape), tt.element).dq()
    return y if y.type == want else tensor.bitcast(want, y)


def split_blocks(operands, types, packed, attrs, result, axis: int, full: int) -> ir.Value:
    """A blocked dequantize read through its blocks' view (`block_view`), as `dq.dequantize`s that read no
    `floordiv` (IREE cannot tile a `floordiv` read inside a contraction unless its tile sizes
    divide the block: "tiling is not supported for the semi-affine indexing map"): the whole
    blocks with x viewed as [..., full / B, B, ...], the scale and zero point read at the block's
    index, then collapsed; the tail (one block) reading their one entry along the axis (index 0);
    joined by tensor.concat (docs/iree.md). Each part has its own slice of x, the scale and the
    zero point."""
    b = attrs["block_size"]
    d = types[0].shape[axis]
    rank = len(types[0].shape)
    reads_zero_point = not types[0].element.is_minifloat
    parts = []
    for whole, start, size, blocks_at in ((True, 0, full, 0), (False, full, d - full, full // b)):
        if size == 0:
            continue
        view = [size // b, b] if whole else None
        ins = [_slice(operands[0], types[0], packed[0], axis, start, size, view)]
        ins += [_slice(v, tt, p, axis, blocks_at, -(-size // b)) for v, tt, p in zip(operands[1:], types[1:], packed[1:])]
        if whole:  # over [..., full / B, B, ...]: the scale's dim p is the view's p, or p + 1 after the axis
            reads = tuple(canonical.dim(p if p <= axis else p + 1) for p in range(rank))
        else:
            reads = tuple(canonical.ZERO if p == axis else canonical.dim(p) for p in range(rank))
        shape = list(result.shape)
        shape[axis] = size
        part = t.TorchTensor(tuple(shape[:axis] + view + shape[axis + 1 :]) if whole else tuple(shape), result.element).dq()
        form = canonical.Form(reads, reads_zero_point=reads_zero_point)
        y = canonical.build(ins[0], ins[1], ins[2] if len(ins) > 2 else None, form, part)
        if whole:
            groups = [[i] for i in range(axis)] + [[axis, axis + 1]] + [[i + 1] for i in range(axis + 1, rank)]
            y = tensor.collapse_shape(t.TorchTensor(tuple(shape), result.element).dq(), y, groups)
        parts.append(y)
    return tensor.concat(result.dq(), axis, parts) if len(parts) > 1 else parts[0]


def rewrite(op, check_only: bool = False) -> str | None:
    """Rewrite one DequantizeLinear node; why not (nothing changed), or None when done.
    `check_only`: why the node breaks a rule, or None, and nothing is rewritten (for a node left
    to another compiler, whose invalid attributes are still worth a remark)."""
    operands = list(op.operands)
    if not 2 <= len(operands) <= 3 or len(op.results) != 1:
        return f"DequantizeLinear takes x, x_scale and an optional x_zero_point and has one result, got {len(operands)} operands"
    if len(operands) == 3 and isinstance(operands[2].type, ir.OpaqueType) and ir.OpaqueType(operands[2].type).data == "none":
        operands = operands[:2]
    attrs = read_attrs(op)  # first: a bad output_dtype is why the importer typed no result
    if isinstance(attrs, str):
        return attrs
    types = [t.tensor_of(v.type) for v in operands]
    result = t.tensor_of(op.results[0].type)
    for v in types + [result]:
        if isinstance(v, str):
            return v
    names = dq_onnx.OP.operand_names
    sig = Signature(
        {n: Tensor(tt.element.name, tt.shape) for n, tt in zip(names, types)} | {n: None for n in names[len(types) :]},
        Tensor(result.element.name, result.shape),
        {a.name: attrs.get(a.name, a.default) for a in dq_onnx.OP.attrs},
    )
    zp_attr = t.constant_value(operands[2]) if len(types) == 3 else None
    zp = constants.elements_value(zp_attr) if zp_attr is not None else None
    if zp is not None:
        sig.values["x_zero_point"] = zp
    why = dq_onnx.OP.check(sig)
    if why:
        return why
    packed = [packed_bytes(v, tt) for v, tt in zip(operands, types)]
    why = next((p for p in packed if isinstance(p, str)), None)
    if why or check_only:
        return why
    with ir.InsertionPoint(op), op.location:
        cut = block_view(sig, types, _matmul_weights(op.results[0]))
        if cut is None:
            ins = [packed_constant(p, tt) if p is not None else t.to_builtin(v, tt) for v, tt, p in zip(operands, types, packed)]
            y = dq_onnx.OP.create(ins + [None] * (3 - len(ins)), attrs, result.dq())
        else:
            y = split_blocks(operands, types, packed, attrs, result, *cut)
        out = t.from_builtin(y, op.results[0].type)
    op.results[0].replace_all_uses_with(out)
    op.erase()
    for v in operands:  # initializers now read packed
        owner = v.owner
        if isinstance(owner, (ir.Operation, ir.OpView)) and t.onnx_name(owner.operation) == "onnx.Constant":
            if not list(owner.results[0].uses):
                owner.erase()
    return None


def run(root) -> bool:
    remarks = []
    for op in t.nodes(root, "onnx.DequantizeLinear"):
        why = rewrite(op)
        if why is not None:
            remarks.append((op, f"DequantizeLinear not converted to dq: {why}"))
    emit_remarks(root, remarks)
    return True


PASS = Pass("torch-onnx-to-dq", "Rewrite ONNX DequantizeLinear of IREE's / torch-mlir's ONNX import into dq ops", run)
