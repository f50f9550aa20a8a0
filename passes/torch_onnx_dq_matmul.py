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

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from dequant import dialect
from dequant.dialect import canonical, constants, unpack
from dequant.dialect.elements import of_type
from dequant.dialect.canonical import Form, Read

from . import Pass
from . import torch_onnx as t
from .queries import made_by
from .to_linalg import expand

PARALLEL, REDUCTION = linalg.IteratorType.parallel, linalg.IteratorType.reduction


def _weights(w: ir.Value, found: dict):
    """(dq op, its OpDef, its canonical Form) if torch value `w` is the dq weights a MatMul can
    read quantized, else None."""
    y = t.builtin_of(w)
    if y is None or y.owner.name not in dialect.DEQUANTIZE_OPS or y.owner.operation not in found:
        return None
    d, sig = found[y.owner.operation]
    form = d.canonical(sig)
    x = ir.RankedTensorType(y.owner.operands[0].type)
    if x.rank != 2 or not x.has_static_shape or form.unpack != "none" or form.zero_point_mode != "subtract":
        return None
    for use in w.uses:
        if t.onnx_name(use.owner) != "onnx.MatMul" or use.operand_number != 1:
            return None
    for use in y.uses:
        if use.owner.name != t.FROM_BUILTIN:
            return None
    return y.owner, d, form


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
    data = constants.resource_bytes(source.attributes["value"])
    e = of_type(xt.element_type)
    if data is None or len(data) != unpack.packed_bytes(tuple(xt.shape), e.bits):
        return None
    from dequant.packed import Packed, pack

    values = Packed(np.frombuffer(data, np.uint8), e.dtype, tuple(xt.shape)).unpack()
    with ir.InsertionPoint(source):  # beside the source: it dominates every reader of x
        made[key] = t.byte_constant(pack(np.ascontiguousarray(values.T)).data, "dq_packed_nk")
    return unpack.build(made[key], ir.RankedTensorType.get(shape, xt.element_type))


def rewrite(matmul, dq_op, d, form: Form, made: dict) -> bool:
    a_t, y_t = t.tensor_of(matmul.operands[0].type), t.tensor_of(matmul.results[0].type)
    w_type = ir.RankedTensorType(dq_op.results[0].type)
    k, n = w_type.shape
    if isinstance(a_t, str) or isinstance(y_t, str) or len(a_t.shape) < 2 or a_t.builtin().element_type != w_type.element_type:
        return False
    # (a K known only at run time is left to the compiler's own MatMul checks)
    if a_t.shape[-1] != k or tuple(y_t.shape[:-1]) != tuple(a_t.shape[:-1]) or y_t.shape[-1] != n:
        return False
    v = d.by_role(dq_op)
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

        @linalg.generic([a, w], [init], [a_map, w_map, y_map], [PARALLEL] * (batch + 2) + [REDUCTION] * red)
        def y(ai, wi, acc):
            return arith.addf(acc, arith.mulf(ai, wi))

        out = t.from_builtin(y, matmul.results[0].type)
    matmul.results[0].replace_all_uses_with(out)
    matmul.erase()
    return True


def run(root) -> bool:
    verified = dialect.verified(root)
    if verified is None:
        return False
    found = {op.operation: (d, sig) for op, d, sig in verified}
    rewritten, made = set(), {}
    for matmul in t.nodes(root, "onnx.MatMul"):
        w = _weights(matmul.operands[1], found) if len(matmul.operands) == 2 and len(matmul.results) == 1 else None
        if w is not None and rewrite(matmul, *w, made):
            rewritten.add(w[0])
    for dq_op in rewritten:  # the dequantized weights no MatMul reads any more
        casts = [u.owner for u in dq_op.results[0].uses]
        if all(not list(c.results[0].uses) for c in casts):
            for c in casts:
                c.erase()
            x = dq_op.operands[0]
            dq_op.erase()
            owner = made_by(x, unpack.NAME)
            if owner is not None and not list(x.uses):
                source = made_by(owner.operands[0], "arith.constant")
                owner.erase()
                if source is not None and not list(source.results[0].uses):
                    source.erase()
    return True


PASS = Pass("torch-onnx-dq-matmul", "Rewrite ONNX MatMuls of dq-dequantized weights into one contraction reading the quantized weights", run)
