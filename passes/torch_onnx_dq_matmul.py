"""torch-onnx-dq-matmul: an ONNX MatMul of dequantized weights becomes one contraction that reads
the quantized weights, so a compiler can run the dequantize inside the matmul.

Input: the output of torch-onnx-to-dq. A `torch.operator "onnx.MatMul"(%a, %w)` matches when
- %w is `torch_c.from_builtin_tensor` of a dq op with a 2-D x [K, N] of static dims, in
  canonical form with the zero point subtracted and no int4x4 unpacking, whose result is used
  only by MatMuls;
- %a is a torch tensor [b..., M, K] (rank 2 or more) of the dq result's element type, and the
  MatMul's result is [b..., M, N].
It becomes, on builtin tensors (torch_c casts at the seams):

    %w = dq.dequantize(%x, %s, %z) : [K/B, B, N]     scale and zero point read at (d0, d2)
    %y = linalg.generic (b..., m, n, ko, ki) { y[b.., m, n] += a[b.., m, ko, ki] * w[ko, ki, n] }

for weights blocked along K (block B dividing K: x, and %a, viewed with K split into [K/B, B],
so every read of the dequantize is a plain dim and no reshape stands between it and the
contraction), else the same over (b..., m, n, k) with w [K, N]. The sum runs in the element
type, ko then ki, as a MatMul's f32 dot product does (ONNX leaves the order open). Packed x
(dq.unpack) is unpacked to the split shape directly.

This is the form IREE's dispatch formation clones a dequantize into (a producer whose reads are
projected permutations and whose body only widens, converts and multiplies: f32 results from
integer storage); other element types still lower correctly, in separate dispatches. Everything
else is untouched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from dequant import dialect
from dequant.dialect import canonical, constants, unpack
from dequant.dialect.elements import of_type
from dequant.dialect.canonical import Form, Read

from . import Pass
from . import torch_onnx as t
from .lazy import linalg
from .queries import PURE_PRODUCERS, erase_dead, made_by
from .remarks import emit_remarks
from .to_linalg import expand


@dataclass(frozen=True)
class FloatZero:
    """The fractional float zero point of MatMulNBits' rewrite (python/formats/matmul_nbits.py):
    `onnx.Sub(%wq, %zs)` where %zs is a dq op of `onnx.ConstantOfShape` ones [K, N] whose scale
    holds z * s per block (`dq_op`, its OpDef and Form), read as the weights' scale is."""

    sub: object
    dq_op: object
    definition: object
    form: Form


def _ones(v: ir.Value) -> bool:
    """Whether v (builtin) is `onnx.ConstantOfShape` of 1 (through torch_c's cast)."""
    cast = made_by(v, t.TO_BUILTIN)
    op = cast.operands[0].owner if cast is not None else None
    if not isinstance(op, (ir.Operation, ir.OpView)) or t.onnx_name(op) != "onnx.ConstantOfShape" or "torch.onnx.value" not in op.attributes:
        return False
    value = op.attributes["torch.onnx.value"]
    return isinstance(value, ir.DenseIntElementsAttr) and len(value) == 1 and value[0] == 1


def _float_zero(w: ir.Value, found: dict) -> tuple | str | None:
    """For B = onnx.Sub(dq(%q, %s), dq(ones, %zs)) of one blocking: (the weights' dq result,
    FloatZero), why the form is not read, or None (B is not that form)."""
    sub = w.owner
    if not isinstance(sub, (ir.Operation, ir.OpView)) or t.onnx_name(sub) != "onnx.Sub" or len(sub.operands) != 2:
        return None
    ys = [t.builtin_of(v) for v in sub.operands]
    if any(y is None or y.owner.name not in dialect.DEQUANTIZE_OPS or y.owner.operation not in found for y in ys):
        return None
    wy, zy = ys
    z_op = zy.owner
    d, sig = found[z_op.operation]
    zv = d.by_role(z_op)
    if not _ones(zv["data"]):
        return None
    w_op = wy.owner
    wd, wsig = found[w_op.operation]
    form, w_form = d.canonical(sig), wd.canonical(wsig)
    if zv["zero_point"] is not None or form.scale_map != w_form.scale_map or zy.type != wy.type:
        return "the float zero point is not read per block as the weights' scale is"
    for v, operand in ((sub.operands[0], 0), (sub.operands[1], 1)):
        if any(u.owner.operation != sub.operation or u.operand_number != operand for u in v.uses):
            return "the weights' or their float zero point's dequantize is also read by other ops than the Sub"
        if any(u.owner.name != t.FROM_BUILTIN for u in ys[operand].uses):
            return "the weights' or their float zero point's dequantize is also used on builtin tensors"
    return wy, FloatZero(sub, z_op, d, form)


@dataclass(frozen=True)
class Match:
    """An `onnx.MatMul(%a, %w)` whose %w is dq-dequantized weights [K, N] a contraction can read
    quantized: the dq op, its OpDef and canonical Form, and the torch types of %a and the result."""

    matmul: object
    dq_op: object
    definition: object
    form: Form
    a: t.TorchTensor
    y: t.TorchTensor
    activation: tuple | None = None  # (dq op, OpDef, signature) where %a is dq-dequantized too
    zero: FloatZero | None = None  # B = onnx.Sub(dq result, FloatZero), float zero points only

    @property
    def kn(self) -> tuple:
        return tuple(ir.RankedTensorType(self.dq_op.results[0].type).shape)


def _why_not(matmul, found: dict, float_zero_points: bool = False) -> Match | str | None:
    """The Match of a MatMul, why its dequantized weights cannot be read quantized, or None when
    its B operand is not dq-dequantized at all (`float_zero_points`: nor dq-dequantized weights
    minus their float zero point, `FloatZero`)."""
    if len(matmul.operands) != 2 or len(matmul.results) != 1:
        return None
    w = matmul.operands[1]
    y, zero = t.builtin_of(w), None
    if float_zero_points and y is None:
        got = _float_zero(w, found)
        if got is None or isinstance(got, str):
            return got
        y, zero = got
    if y is None or y.owner.name not in dialect.DEQUANTIZE_OPS or y.owner.operation not in found:
        return None
    dq_op = y.owner
    d, sig = found[dq_op.operation]
    form = d.canonical(sig)
    x = ir.RankedTensorType(dq_op.operands[0].type)
    if x.rank != 2 or not x.has_static_shape:
        return f"the weights {x} are not 2-D with static dims"
    if form.unpack != "none" or form.zero_point_mode != "subtract":
        return "the weights' zero point is not subtracted before scaling (OpenPPL int4x4 or float zero point)"
    for use in w.uses:
        if t.onnx_name(use.owner) != "onnx.MatMul" or use.operand_number != 1:
            return "the dequantized weights are also used by other ops than as MatMul B operands"
    for use in y.uses:
        if use.owner.name != t.FROM_BUILTIN:
            return "the dequantized weights are also used on builtin tensors"
    a_t, y_t = t.tensor_of(matmul.operands[0].type), t.tensor_of(matmul.results[0].type)
    if isinstance(a_t, str) or isinstance(y_t, str):
        return a_t if isinstance(a_t, str) else y_t
    k, n = ir.RankedTensorType(dq_op.results[0].type).shape
    w_et = ir.RankedTensorType(dq_op.results[0].type).element_type
    if len(a_t.shape) < 2 or a_t.builtin().element_type != w_et:
        return "A is not [..., M, K] of the weights' element type"
    if y_t.builtin().element_type != w_et:
        return "the result's element type is not the weights' (left to the compiler's own MatMul checks)"
    # (a K known only at run time is left to the compiler's own MatMul checks)
    if a_t.shape[-1] != k or tuple(y_t.shape[:-1]) != tuple(a_t.shape[:-1]) or y_t.shape[-1] != n:
        return f"A {list(a_t.shape)} and the result {list(y_t.shape)} do not fit weights [{k}, {n}] with static K"
    a = t.builtin_of(matmul.operands[0])
    activation = None
    if a is not None and a.owner.name in dialect.DEQUANTIZE_OPS and a.owner.operation in found:
        activation = (a.owner, *found[a.owner.operation])
    return Match(matmul, dq_op, d, form, a_t, y_t, activation, zero)


def matches(root, remarks: list, float_zero_points: bool = False) -> list | None:
    """The Matches of the MatMuls under `root` (None: a dq op broke a rule, reported); a MatMul of
    dq-dequantized weights that cannot be read quantized gets a remark in `remarks` saying why.
    `float_zero_points`: also the MatMuls whose B is the weights minus a float zero point
    (`FloatZero`), which only dq's CPU kernel reads."""
    verified = dialect.verified(root)
    if verified is None:
        return None
    found = {op.operation: (d, sig) for op, d, sig in verified}
    out = []
    for matmul in t.nodes(root, "onnx.MatMul"):
        m = _why_not(matmul, found, float_zero_points)
        if isinstance(m, Match):
            out.append(m)
        elif m is not None:
            remarks.append((matmul, f"MatMul left unfused (the dequantize runs as its own dispatch): {m}"))
    return out


def _erasable(op) -> bool:
    return op.name in PURE_PRODUCERS + (unpack.NAME, t.TO_BUILTIN) or t.onnx_name(op) in ("onnx.Constant", "onnx.ConstantOfShape")


def erase_unused(dq_ops) -> None:
    """Erase the dq ops that no MatMul reads any more, with their casts and the constants and
    casts that only they read."""
    for dq_op in dq_ops:
        casts = [u.owner for u in dq_op.results[0].uses]
        if all(not list(c.results[0].uses) for c in casts):
            for c in casts:
                c.erase()
            operands = list(dq_op.operands)
            dq_op.erase()
            erase_dead(operands, _erasable)


def _split(form: Form, k: int) -> int:
    """The block of the weights along K (dim 0) if blocked and dividing K, else 1."""
    blocks = {r.block for r in form.scale_map + (form.zp_map if form.reads_zero_point else ()) if r.dim == 0}
    if len(blocks) == 1 and (b := blocks.pop()) > 1 and k % b == 0:
        return b
    return 1


def _view_reads(reads: tuple, b: int, transposed: bool) -> tuple:
    """Reads over x [K, N] as reads over the weights' view: [K/B, B, N] (b > 1) or [K, N], or
    transposed, [N, K/B, B] or [N, K]. A block of K becomes the K/B dim."""
    k_dim, n_dim = (1, 0) if transposed else (0, 2 if b > 1 else 1)
    out = []
    for r in reads:
        if r.dim == 0:
            out.append(Read(k_dim, 1 if b > 1 else r.block))
        elif r.dim == 1:
            out.append(Read(n_dim, r.block))
        else:
            out.append(r)
    return tuple(out)


def _data(x: ir.Value, shape: list) -> ir.Value:
    """x [K, N] as `shape`: dq.unpack straight to it when x is unpacked, else expand_shape."""
    et = ir.RankedTensorType(x.type).element_type
    if (owner := made_by(x, unpack.NAME)) is not None:
        return unpack.build(owner.operands[0], ir.RankedTensorType.get(shape, et))
    return expand(x, shape, [[0, 1], [2]])


def _transposed(x: ir.Value, shape: list, made: dict) -> ir.Value | None:
    """Constant packed x [K, N] as packed N-major weights of `shape` ([N, K/B, B] or [N, K]), or
    None when x is not a packed constant. Each output column's weights are then contiguous, as
    a vector-matrix product reads them (the bytes stay packed, two int4 per byte). One copy per
    source constant and view (`made`), however many MatMuls read it."""
    owner = made_by(x, unpack.NAME)
    source = made_by(owner.operands[0], "arith.constant") if owner is not None else None
    if source is None:
        return None
    xt = ir.RankedTensorType(x.type)
    key = (source.operation, tuple(shape))
    if key in made:
        return unpack.build(made[key], ir.RankedTensorType.get(shape, xt.element_type))
    data = constants.resource_view(source.attributes["value"])
    e = of_type(xt.element_type)
    if data is None or len(data) != unpack.packed_bytes(tuple(xt.shape), e.bits):
        return None
    values = unpack.unpack_values(data, e, tuple(xt.shape))
    with ir.InsertionPoint(source):  # beside the source: it dominates every reader of x
        made[key] = t.byte_constant(unpack.pack_values(np.ascontiguousarray(values.T)), "dq_packed_nk")
    return unpack.build(made[key], ir.RankedTensorType.get(shape, xt.element_type))


def rewrite(match: Match, made: dict) -> None:
    matmul, dq_op, form, a_t, y_t = match.matmul, match.dq_op, match.form, match.a, match.y
    w_type = ir.RankedTensorType(dq_op.results[0].type)
    k, n = w_type.shape
    v = match.definition.by_role(dq_op)
    b = _split(form, k)
    batch = len(a_t.shape) - 2
    with ir.InsertionPoint(matmul), matmul.location:
        a = t.to_builtin(matmul.operands[0], a_t)
        sizes = [tensor.dim(a, arith.constant(ir.IndexType.get(), i)) if s is None else s for i, s in enumerate(a_t.shape[:-1])]
        view = [n, k // b, b] if b > 1 else [n, k]
        x = _transposed(v["data"], view, made)
        transposed = x is not None
        if not transposed:
            view = [k // b, b, n] if b > 1 else [k, n]
            x = _data(v["data"], view) if b > 1 else v["data"]
        reads = Form(_view_reads(form.scale_map, b, transposed), _view_reads(form.zp_map, b, transposed),
                     form.zero_point_mode, form.unpack, form.reads_zero_point)  # fmt: skip
        w = canonical.build(x, v["scale"], v["zero_point"], reads, ir.RankedTensorType.get(view, w_type.element_type))
        red = 2 if b > 1 else 1
        if b > 1:
            a = expand(a, sizes + [k // b, b], [[i] for i in range(batch + 1)] + [[batch + 1, batch + 2]])
        loops = batch + 2 + red  # (b..., m, n, k...)
        dims = [ir.AffineDimExpr.get(i) for i in range(loops)]
        ks = dims[batch + 2 :]
        a_map = ir.AffineMap.get(loops, 0, dims[: batch + 1] + ks)
        w_map = ir.AffineMap.get(loops, 0, [dims[batch + 1]] + ks if transposed else ks + [dims[batch + 1]])
        y_map = ir.AffineMap.get(loops, 0, dims[: batch + 2])
        out_type = y_t.builtin()
        empty = tensor.empty(sizes + [n], out_type.element_type)
        zero = arith.constant(out_type.element_type, 0.0)
        init = linalg.fill(zero, outs=[empty])

        @linalg.generic([a, w], [init], [a_map, w_map, y_map], [linalg.IteratorType.parallel] * (batch + 2) + [linalg.IteratorType.reduction] * red)
        def y(ai, wi, acc):
            return arith.addf(acc, arith.mulf(ai, wi))

        out = t.from_builtin(y, matmul.results[0].type)
    matmul.results[0].replace_all_uses_with(out)
    matmul.erase()


def run(root) -> bool:
    remarks = []
    found = matches(root, remarks)
    if found is None:
        return False
    made = {}
    for m in found:
        rewrite(m, made)
    erase_unused({m.dq_op for m in found})
    emit_remarks(root, remarks)
    return True


PASS = Pass("torch-onnx-dq-matmul", "Rewrite ONNX MatMuls of dq-dequantized weights into one contraction reading the quantized weights", run)
