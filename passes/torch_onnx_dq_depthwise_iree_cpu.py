"""torch-onnx-dq-depthwise-iree-cpu: each `dequant.QLinearDepthwiseConv` node (the stage's own,
written by python/qdq_depthwise.py) becomes one dispatch of dq's depthwise kernel
(passes/kernels/depthwise.py) for IREE's llvm-cpu backend:

    %x = torch_c.to_builtin_tensor %xq : -> [N, H, W, C] i8
    %y = flow.dispatch @dq_depthwise_...(%x, %w, %c, %s[, %b], %r[, %t], %rows) -> [N, Ho, Wo, C] i8

with its constants made once when the stage runs: wc = W - zw [kh * kw, C] f32, c = -zx * sum
over taps of wc, s = f32(sx * sw), b, r = [sy, zy] (and zx where the node's `pads` pad x: the
kernel reads the padding, docs/iree.md#the-depthwise-kernel; then sy's split reciprocal zh, zl
where kernels/reciprocal.py finds it gives the division's codes, `_rcp`), and t,
the [256] bytes of a table lookup reading the node's codes (an activation python/qdq_tables.py
wrote as a Gather; qdq_matmul.lookup), which the kernel then computes too. The node has no other
lowering, so one this pass cannot take is an error at its location naming the rule.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from mlir import ir
from mlir.dialects import arith

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch, executable, nhwc_codes, resource, rewrite_nodes, table_constant
from .kernels.depthwise import WIDE, DepthwiseKernel
from .kernels.qdq import QUOTIENT_BOUND, quotient_bound
from .kernels.reciprocal import reciprocals
from .kernels.target import Target
from .model_constants import torch_constant
from .qdq_matmul import lookup

NAME = "onnx.QLinearDepthwiseConv"  # as IREE's importer names a `dequant` domain node


def _kernel(op) -> tuple | str:
    """(kernel, its constants as arrays, in its operands' order, the bound on its requantize's
    |y / sy|: qdq.py's `quotient_bound`) of a node, or why not."""
    values = [torch_constant(v) for v in op.operands[1:]]
    if len(values) not in (7, 8) or any(v is None for v in values):
        return "its scales, zero points, weights and bias must be constants of the model"
    sx, zx, wq, sw, zw, sy, zy, *b = values
    got = t.io_tensors(op)
    if isinstance(got, str):
        return got
    x, y = got
    if None in x.shape or len(x.shape) != 4 or x.element.bits != 8 or x.element.kind != "int" or y.element.bits != 8 or y.element.kind != "int":
        return "its input and output must be 8-bit integer codes of static shape [N, H, W, C]"
    strides, pads = t.ints_attr(op, "strides", [1, 1]), t.ints_attr(op, "pads", [0] * 4)
    n, h, w, c = x.shape
    if wq.ndim != 3 or wq.shape[2] != c or sw.shape != (c,) or zw.shape != (c,) or len(strides) != 2 or (b and b[0].shape != (c,)):
        return "its weights must be [kh, kw, C] with C scales and zero points"
    if len(pads) != 4 or min(pads) < 0 or min(strides) < 1:
        return f"its pads {pads} (4, top, left, bottom, right) and strides {strides} must be non-negative, the strides positive"
    kh, kw = wq.shape[:2]
    wc = wq.astype(np.int64).reshape(kh * kw, c) - zw.astype(np.int64)
    kernel = DepthwiseKernel(n, h, w, c, kh, kw, *strides, not x.element.signed, "i8" if y.element.signed else "u8", bool(b), pads=tuple(pads))
    if kernel.ho < 1 or kernel.wo < 1:
        return f"its {kh} x {kw} taps do not fit its padded input"
    zx = int(zx.reshape(()))
    why = kernel.why_not(zx, kernel.unsigned_x, wc)
    if why is not None:
        return why
    if tuple(y.shape) != (n, kernel.ho, kernel.wo, c):
        return f"its output is {list(y.shape)}, not [{n}, {kernel.ho}, {kernel.wo}, {c}]"
    s = (np.float32(sx.reshape(())) * sw.astype(np.float32)).astype(np.float32)
    bias = b[0].astype(np.float32) if b else None
    consts = [wc.astype(np.float32), (-zx * wc.sum(axis=0)).astype(np.float32), s] + ([bias] if bias is not None else [])
    r = np.array([sy.reshape(()), zy.reshape(())] + ([zx] if any(pads) else []), np.float32)
    pairs = reciprocals(r, kernel.divisors)
    if pairs is not None:  # y / sy by a product and an FMA, the same codes (kernels/reciprocal.py)
        kernel, r = dataclasses.replace(kernel, reciprocal=True), np.concatenate([r, pairs])
    return kernel, consts + [r], quotient_bound(kernel.sums_bound(zx, kernel.unsigned_x, wc), s, r, bias)


def _rewrite(op, module) -> str | None:
    """The node as a dispatch of the kernel, the table of codes reading its result (`lookup`)
    in its epilogue if any; or why not (nothing changed)."""
    got = _kernel(op)
    if isinstance(got, str):
        return got
    kernel, arrays, quotient = got
    if Target.of(module).avx512bw and kernel.c % WIDE == 0:
        kernel = dataclasses.replace(kernel, lanes=WIDE)  # AVX-512's vectors (docs/iree.md#the-depthwise-kernel)
    elif quotient < QUOTIENT_BOUND:
        kernel = dataclasses.replace(kernel, bounded=True)  # the 8-lane epilogue converts without its cap
    table = lookup(op.results[0])
    if table is not None:
        kernel = dataclasses.replace(kernel, table=True)
    f32, i8, index = ir.F32Type.get(), ir.IntegerType.get_signless(8), ir.IndexType.get()
    name = executable(kernel, module)
    with op.location, ir.InsertionPoint(op):
        xq = nhwc_codes(op.operands[0], kernel)
        consts = [resource(a, f32, "dq_depthwise") for a in arrays[:-1]]
        r = arrays[-1]
        consts.append(arith.constant(ir.RankedTensorType.get([r.size], f32), ir.DenseElementsAttr.get(r)))
        consts += [table_constant(table.table)] if table is not None else []
        out = ir.RankedTensorType.get([kernel.n, kernel.ho, kernel.wo, kernel.c], i8)
        y = dispatch(name, [xq] + consts, arith.constant(index, kernel.rows), [out])[0]
        replaced = [*(table.ops if table is not None else []), op]  # the last op first
        done = t.from_builtin(y, replaced[0].results[0].type)
    for o in replaced:
        o.results[0].replace_all_uses_with(done)
        o.erase()
    return None


def run(root) -> bool:
    return rewrite_nodes(root, NAME, "dequant.QLinearDepthwiseConv", "torch-onnx-dq-depthwise-iree-cpu", _rewrite)


PASS = Pass("torch-onnx-dq-depthwise-iree-cpu", "Rewrite dequant.QLinearDepthwiseConv nodes into dispatches of dq's depthwise kernel for IREE's llvm-cpu backend", run)
