"""What the QDQ route of torch-onnx-dq-matmul-iree-cpu reads around a MatMul of the torch form:
its quantized activation (`activation`: a per-tensor DequantizeLinear of int8 or uint8, as a dq op
or left to IREE), and the QuantizeLinear reading its result, after a constant bias Add or its
own QuantizeLinear and DequantizeLinear, that the QDQ kernel's epilogue computes (`requantize`,
an `Epilogue`), with a table lookup of its codes (`lookup`, a `Lookup`: python/qdq_tables.py's
activations, which the depthwise kernel and dq's lookup kernel take too).
docs/semantics.md#the-integer-route-of-qdq-matmuls states the arithmetic.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from mlir import ir

from dequant.dialect.canonical import ZERO
from dequant.dialect.elements import of_type

from . import torch_onnx as t
from .model_constants import constant, torch_constant
from .queries import made_by
from .torch_onnx_dq_matmul import Match
from .torch_onnx_to_dq import read_attrs


class Activation(NamedTuple):
    """A QDQ MatMul's quantized activation: `codes()` makes xq as a signless i8 tensor [b...,
    M, K] at the insertion point; its scale sx, zero point zx, whether xq is uint8, and its
    dequantize."""

    codes: Callable
    scale: np.float32
    zero_point: int
    unsigned: bool
    op: object


def activation(m: Match) -> Activation | str | None:
    """The activation of a MatMul whose A is a dequantized activation, per tensor: a dq op (the
    stage took the node) or a DequantizeLinear left to IREE (it has other readers too); why the
    QDQ kernel does not read it; or None (A is no dequantize)."""
    if m.activation is not None:
        op, definition, sig = m.activation
        v, form = definition.by_role(op), definition.canonical(sig)
        e = of_type(ir.RankedTensorType(v["data"].type).element_type)
        if form.unpack != "none" or (form.reads_zero_point and form.zero_point_mode != "subtract"):
            return "its activation's zero point is not subtracted before scaling"
        if not all(r == ZERO for r in form.scale_map + (form.zp_map if form.reads_zero_point else ())):
            return "its activation's scale or zero point is not per tensor"
        f32 = ir.RankedTensorType(op.results[0].type).element_type == ir.F32Type.get()
        sx = constant(v["scale"])
        zx = constant(v["zero_point"]) if v["zero_point"] is not None and form.reads_zero_point else np.zeros((), np.int32)
        xq = v["data"]
        if (cast := made_by(xq, "tensor.bitcast")) is not None:
            xq = cast.operands[0]

        def codes(xq=xq):
            return xq
    else:
        op = m.matmul.operands[0].owner
        if not isinstance(op, (ir.Operation, ir.OpView)) or t.onnx_name(op) != "onnx.DequantizeLinear" or len(op.operands) < 2:
            return None
        tt, attrs = t.tensor_of(op.operands[0].type), read_attrs(op)
        if isinstance(tt, str) or isinstance(attrs, str):
            return "its activation is not a quantized tensor dq reads"
        e, f32 = tt.element, attrs.get("output_dtype", "f32") == "f32"
        sx, zx = _scale_and_zero_point(op)
        if (sx is not None and sx.size != 1) or (zx is not None and zx.size != 1):
            return "its activation's scale or zero point is not per tensor"

        def codes(value=op.operands[0], tt=tt):
            return ir.Operation.create(t.TO_BUILTIN, results=[tt.builtin()], operands=[value]).result
    if e.kind != "int" or e.bits != 8:
        return f"its activation is {e.name} (the kernel reads int8 and uint8)"
    if not f32:
        return "its activation is not dequantized to f32"
    if sx is None or zx is None or sx.dtype != np.float32:
        return "its activation's scale is not an f32 constant, or its zero point not a constant, of the model"
    return Activation(codes, np.float32(sx.reshape(-1)[0]), int(zx.reshape(-1)[0]), not e.signed, op)


# QuantizeLinear's attributes the kernel's epilogue takes, and the values it takes (output_dtype
# typed the result, checked apart): axis means nothing to one scale; saturate applies to float8
# outputs only; block_size 0 is not blocked; precision FLOAT (1) is the f32 scale's own division.
_QUANTIZE_ATTRS = {"axis": lambda v: True, "saturate": lambda v: True, "block_size": lambda v: v == 0, "precision": lambda v: v in (0, 1)}


class Epilogue(NamedTuple):
    """What the QDQ kernel computes after y (QdqKernel's requantize, mid, bias_add and residual):
    the ops it stands for (the last first, then back to the MatMul's reader), r = [sy, zy(, sy',
    zy', s'', z'')(, sq, zq, s1, z1, s2, z2)] f32, the output's kind, the mid requantization's
    kind or None, b [N] f32 or None, and the bias's own DequantizeLinear (erased when nothing
    else reads it) or None; a `Residual` or None."""

    ops: list
    r: np.ndarray
    out: str
    mid: str | None = None
    bias: np.ndarray | None = None
    bias_op: object = None
    table: np.ndarray | None = None  # [256] bytes: the codes' Lookup after the QuantizeLinear
    residual: Residual | None = None


class Residual(NamedTuple):
    """A residual Add after the epilogue's QuantizeLinear, Q3(DQ1(codes) + DQ2(other)) (python/
    qdq_convs.py's `of_residual`): the ops it stands for (Q3 first, back to the reader of the
    codes), the other operand's codes (a torch tensor of the Add's shape) and their kind, [s1, z1,
    s2, z2] f32, Q3's (sy, zy, kind), DQ2 (erased when nothing else reads it), and the kind of
    the codes the epilogue's own QuantizeLinear makes (`requantize` sets it)."""

    ops: list
    codes: ir.Value
    kind: str
    r: np.ndarray
    final: tuple
    dq: object
    first: str = ""


_SHAPE_ONLY = ("onnx.Reshape", "onnx.Identity")  # ops between the codes and DQ1 that keep [M, N]'s order


def residual(codes: ir.Value, m: Match) -> Residual | None:
    """The residual Add reading the epilogue's codes [M, N] (`codes`, the QuantizeLinear's
    result, of a MatMul of a 2-D activation of static shape; its only reader a chain of Reshape
    and Identity to the Add's static shape [..., N], or DQ1 itself): DQ1 (per tensor) the Add's one operand, DQ2 (per tensor, of 8-bit codes of
    the same shape) its other, the Add's only reader a QuantizeLinear per tensor to 8 bits with
    default attributes; each op the only reader of the one before; or None."""
    ops, v = [], codes
    while (op := _reader(v)) is not None and t.onnx_name(op) in _SHAPE_ONLY and len(op.results) == 1:
        ops, v = [op, *ops], op.results[0]
    dq1 = _reader(v)
    add = _reader(dq1.results[0], None) if dq1 is not None and t.onnx_name(dq1) == "onnx.DequantizeLinear" else None
    if add is None or t.onnx_name(add) != "onnx.Add" or len(add.operands) != 2 or len(add.results) != 1:
        return None
    other = add.operands[1] if add.operands[0] == dq1.results[0] else add.operands[0]
    dq2 = other.owner if isinstance(other.owner, (ir.Operation, ir.OpView)) else None
    shape, n = t.tensor_of(add.results[0].type), m.kn[1]
    if dq2 is None or t.onnx_name(dq2) != "onnx.DequantizeLinear" or isinstance(shape, str) or None in shape.shape or shape.shape[-1:] != (n,):
        return None
    if len(m.a.shape) != 2 or None in m.a.shape or int(np.prod(shape.shape[:-1])) != m.a.shape[0]:  # y [M, N] of M static rows
        return None
    made = dq2.operands[0].owner  # the dispatch, at the MatMul, reads the other codes: defined before it
    if isinstance(made, (ir.Operation, ir.OpView)) and (made.operation.block != m.matmul.operation.block or not made.operation.is_before_in_block(m.matmul.operation)):
        return None
    their, mine = t.tensor_of(dq2.operands[0].type), t.tensor_of(dq1.results[0].type)
    if isinstance(their, str) or their.shape != shape.shape or their.element.kind != "int" or their.element.bits != 8 or mine != shape or t.tensor_of(other.type) != shape:
        return None
    scales = [_per_tensor(dq) for dq in (dq1, dq2)]
    attrs = [read_attrs(dq) for dq in (dq1, dq2)]
    if any(isinstance(x, str) for x in scales + attrs) or any(set(a) - {"axis"} for a in attrs):
        return None
    q3 = _reader(add.results[0])
    final = _quantize_linear(q3, shape)
    if not isinstance(final, tuple):
        return None
    r = np.array([*scales[0], *scales[1]], np.float32)
    return Residual([q3, add, dq1, *ops], dq2.operands[0], "i8" if their.element.signed else "u8", r, final, dq2)


class Lookup(NamedTuple):
    """A table of codes read after a kernel's 8-bit codes, as python/qdq_tables.py writes an
    activation: the ops it stands for (the Gather first, back to the Cast) and the table as the
    kernels read it, [256] bytes with code c's entry at c & 255 (its byte)."""

    ops: list
    table: np.ndarray


def lookup(value: ir.Value) -> Lookup | None:
    """The lookup reading 8-bit codes `value`, Gather(T, Cast<int32>(value)) (uint8) or
    Gather(T, Cast<int32>(value) + 128) (int8) along axis 0 of a constant T of 256 8-bit codes,
    each op the one reader of the one before (python/qdq_tables.py); or None."""
    codes = t.tensor_of(value.type)
    if isinstance(codes, str) or codes.element.kind != "int" or codes.element.bits != 8:
        return None
    cast = _reader(value)
    if cast is None or t.onnx_name(cast) != "onnx.Cast" or t.int_attr(cast, "to") != 6 or len(cast.results) != 1:  # 6: ONNX's INT32
        return None
    ops, index, offset = [cast], cast.results[0], 0
    op = _reader(index, None)
    if op is not None and t.onnx_name(op) == "onnx.Add" and len(op.operands) == 2 and len(op.results) == 1:
        c = torch_constant(op.operands[1] if op.operands[0] == index else op.operands[0])
        if c is None or c.size != 1 or c.dtype != np.int32:
            return None
        ops, index, offset = [op, *ops], op.results[0], int(c.reshape(()))
        op = _reader(index, None)
    if offset != (128 if codes.element.signed else 0) or op is None or t.onnx_name(op) != "onnx.Gather" or len(op.operands) != 2 or len(op.results) != 1 or op.operands[1] != index:
        return None
    table, out = torch_constant(op.operands[0]), t.tensor_of(op.results[0].type)
    if t.int_attr(op, "axis", 0) != 0 or table is None or table.shape != (256,) or table.dtype not in (np.int8, np.uint8) or isinstance(out, str) or out.shape != codes.shape:
        return None
    c = np.arange(-128, 128) if codes.element.signed else np.arange(256)
    entries = np.zeros(256, np.uint8)
    entries[c & 255] = table[c + offset].view(np.uint8)
    return Lookup([op, *ops], entries)


def _reader(value: ir.Value, operand: int | None = 0):
    """The op reading `value`, where it is the one reader (at `operand`, None: any), or None."""
    uses = list(value.uses)
    ok = len(uses) == 1 and (operand is None or uses[0].operand_number == operand)
    return uses[0].owner if ok else None


def _scale_and_zero_point(op) -> tuple:
    """(scale, zero point) of a Quantize- or DequantizeLinear node as constant arrays, each None
    where it is not a constant of the model; an absent (or `none`) zero point is 0."""
    scale = torch_constant(op.operands[1]) if len(op.operands) > 1 else None
    has_zp = len(op.operands) > 2 and not isinstance(t.tensor_of(op.operands[2].type), str)  # else `none`
    return scale, torch_constant(op.operands[2]) if has_zp else np.zeros((), np.int32)


def _per_tensor(op) -> tuple | str:
    """(scale f32, zero point int) of a Quantize- or DequantizeLinear's constant per-tensor
    operands (no zero point: 0), or why not."""
    scale, zp = _scale_and_zero_point(op)
    if scale is None or scale.dtype != np.float32 or scale.size != 1 or zp is None or zp.size != 1:
        return "scale is not one f32 constant, or its zero point not one constant"
    scale = np.float32(scale.reshape(-1)[0])
    return (scale, int(zp.reshape(-1)[0])) if np.isfinite(scale) and scale != 0 else f"scale is {scale}"


def _quantize_linear(op, y: t.TorchTensor) -> tuple | str | None:
    """(sy, zy, "u8" or "i8") of a QuantizeLinear of `y` the epilogue computes: per tensor with
    constants sy (f32, finite, not 0) and zy, 8-bit integer output, default attributes; why not;
    or None where `op` is no QuantizeLinear (or None)."""
    if op is None or t.onnx_name(op) != "onnx.QuantizeLinear":
        return None
    out = t.tensor_of(op.results[0].type)
    if isinstance(out, str) or out.element.kind != "int" or out.element.bits != 8 or out.shape != y.shape:
        return "its QuantizeLinear's output is not an int8 or uint8 tensor of the MatMul's shape"
    for name in op.attributes:
        short = name[len("torch.onnx.") :] if name.startswith("torch.onnx.") else None
        attr = op.attributes[name]
        if short is None or (short == "output_dtype" and isinstance(attr, ir.IntegerAttr)):
            continue  # output_dtype: the importer typed the result by it (checked above)
        if short not in _QUANTIZE_ATTRS or not isinstance(attr, ir.IntegerAttr) or not _QUANTIZE_ATTRS[short](ir.IntegerAttr(attr).value):
            return f"its QuantizeLinear's attribute '{short}' is not one the kernel takes"
    got = _per_tensor(op)
    return f"its QuantizeLinear's {got}" if isinstance(got, str) else (*got, "i8" if out.element.signed else "u8")


def _bias(add, value: ir.Value, n: int) -> tuple | None:
    """(b [N] f32, its DequantizeLinear or None) of an Add of `value` and a constant b of N
    values along the last dim: f32, or 8-bit integers dequantized per tensor (as quantize_static
    writes a bias: (q - z) * s in f32, as DequantizeLinear computes it); or None."""
    if t.onnx_name(add) != "onnx.Add" or len(add.operands) != 2:
        return None
    other = add.operands[1] if add.operands[0] == value else add.operands[0]
    tt, dq = t.tensor_of(other.type), None
    if isinstance(tt, str) or tt.element.name != "f32":
        return None
    b = torch_constant(other)
    owner = other.owner
    if b is None and isinstance(owner, (ir.Operation, ir.OpView)) and t.onnx_name(owner) == "onnx.DequantizeLinear":
        q, scale = torch_constant(owner.operands[0]), _per_tensor(owner)
        attrs = read_attrs(owner)
        if q is None or isinstance(scale, str) or q.dtype not in (np.int8, np.uint8) or isinstance(attrs, str) or set(attrs) - {"axis"}:
            return None
        b, dq = (q.astype(np.float32) - np.float32(scale[1])) * scale[0], owner
    if b is None or b.dtype != np.float32 or b.size != n or b.shape[-1:] != (n,):
        return None
    return b.reshape(n), dq


def requantize(m: Match) -> Epilogue | str | None:
    """The epilogue of a MatMul whose result y only a QuantizeLinear reads (`_quantize_linear`),
    after a constant bias Add (y + b), or after its own QuantizeLinear and DequantizeLinear per
    tensor (DQ(Q(y)) + b, as quantize_static writes it), the `residual` Add reading its codes
    and the `lookup` reading the last codes, if any; why a QuantizeLinear reading y alone is not
    taken; or None."""
    got = _requantize(m)
    if isinstance(got, Epilogue) and (res := residual(got.ops[0].results[0], m)) is not None:
        # the Add's QuantizeLinear is the output now: r = [its sy, zy, the mid's, Q's sy, zy, DQ1's, DQ2's]
        mid = got.r[2:6] if got.mid else []
        r = np.array([*res.final[:2], *mid, *got.r[:2], *res.r], np.float32)
        got = got._replace(ops=res.ops + got.ops, r=r, out=res.final[2], residual=res._replace(first=got.out))
    if not isinstance(got, Epilogue) or (table := lookup(got.ops[0].results[0])) is None:
        return got
    return got._replace(ops=table.ops + got.ops, table=table.table)


def _requantize(m: Match) -> Epilogue | str | None:
    y, n = m.matmul.results[0], m.kn[1]
    first = _reader(y, None)
    if first is None:
        return None
    if (bias := _bias(first, y, n)) is not None:  # y + b
        q = _reader(first.results[0])
        got = _quantize_linear(q, m.y)
        return None if not isinstance(got, tuple) else Epilogue([q, first], np.array(got[:2], np.float32), got[2], None, *bias)
    got = _quantize_linear(first, m.y) if first.operands[0] == y else None
    if not isinstance(got, tuple):
        return got
    plain = Epilogue([first], np.array(got[:2], np.float32), got[2])
    dq = _reader(first.results[0])  # DQ(Q(y)) + b, then a QuantizeLinear
    if dq is None or t.onnx_name(dq) != "onnx.DequantizeLinear" or t.tensor_of(dq.results[0].type) != m.y:
        return plain
    attrs, back = read_attrs(dq), _per_tensor(dq)
    add = _reader(dq.results[0], None)
    if isinstance(attrs, str) or set(attrs) - {"axis"} or isinstance(back, str) or add is None or (bias := _bias(add, dq.results[0], n)) is None:
        return plain
    q = _reader(add.results[0])
    last = _quantize_linear(q, m.y)
    if not isinstance(last, tuple):
        return plain
    return Epilogue([q, add, dq, first], np.array([*last[:2], *got[:2], *back], np.float32), last[2], got[2], *bias)
