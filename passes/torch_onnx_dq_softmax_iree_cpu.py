"""torch-onnx-dq-softmax-iree-cpu: each `dequant.QdqSoftmax` node (the stage's own, written by
python/qdq_softmax.py for a Softmax over the last axis between a per-tensor DequantizeLinear and
QuantizeLinear) becomes one dispatch of dq's softmax kernel (passes/kernels/softmax.py) for
IREE's llvm-cpu backend:

    %x = torch_c.to_builtin_tensor %codes : -> [..., L] i8, collapsed to [R, L]
    %y = flow.dispatch @dq_softmax_...(%x, %t, %r, %rows) -> [R, L] i8, expanded to [..., L]

with t the exponentials of the codes' differences (kernels.softmax.exponentials of its x_scale)
and r = [y_scale, y_zero_point]. The node has no other lowering, so one this pass cannot take is
an error at its location naming the rule.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch, executable, rewrite_nodes
from .kernels.loops import row_workgroups
from .kernels.softmax import SoftmaxKernel, exponentials
from .to_linalg import expand

NAME = "onnx.QdqSoftmax"  # as IREE's importer names a `dequant` domain node


def _kernel(op) -> tuple | str:
    """(the kernel, x's type, [sy, zy], sx) of a node, or why not."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "it takes the codes and gives the codes of their softmax"
    x, y = t.tensor_of(op.operands[0].type), t.tensor_of(op.results[0].type)
    if isinstance(x, str) or isinstance(y, str):
        return x if isinstance(x, str) else y
    if not x.shape or x.shape[-1] is None or x.shape != y.shape:
        return "its input and output must be codes of one shape, its last dim static"
    if any(e.bits != 8 or e.kind != "int" for e in (x.element, y.element)):
        return "its input and output must be 8-bit integer codes"
    sx, sy, zy = t.float_attr(op, "x_scale"), t.float_attr(op, "y_scale"), t.int_attr(op, "y_zero_point")
    low, high = (-128, 127) if y.element.signed else (0, 255)
    if sx is None or sy is None or zy is None or not (np.isfinite(sx) and np.isfinite(sy)) or sx <= 0 or sy <= 0 or not low <= zy <= high:
        return f"its x_scale and y_scale must be positive f32 and its y_zero_point one of the output's codes ({low} to {high})"
    lead = x.shape[:-1]
    rows = None if None in lead else int(np.prod(lead))
    kernel = SoftmaxKernel(x.shape[-1], x.element.signed, y.element.signed, row_workgroups(rows))
    why = kernel.why_not()
    return why if why is not None else (kernel, x, np.array([sy, zy], np.float32), sx)


def _rewrite(op, module) -> str | None:
    """The node as a dispatch of the kernel, or why not (nothing changed)."""
    got = _kernel(op)
    if isinstance(got, str):
        return got
    kernel, x, r, sx = got
    i8, f32, index = ir.IntegerType.get_signless(8), ir.F32Type.get(), ir.IndexType.get()
    name = executable(kernel, module)
    length, lead = kernel.length, list(x.shape[:-1])
    with op.location, ir.InsertionPoint(op):
        shape = [ir.ShapedType.get_dynamic_size() if d is None else d for d in x.shape]
        codes = ir.Operation.create(t.TO_BUILTIN, results=[ir.RankedTensorType.get(shape, i8)], operands=[op.operands[0]]).result
        rows = None if None in lead else int(np.prod(lead))
        dyn = ir.ShapedType.get_dynamic_size() if rows is None else rows
        rows_type = ir.RankedTensorType.get([dyn, length], i8)
        if not lead:  # one row
            flat = expand(codes, [1, length], [[0, 1]])
        elif len(lead) > 1:
            flat = tensor.collapse_shape(rows_type, codes, [list(range(len(lead))), [len(lead)]])
        else:
            flat = codes
        rows_v = arith.constant(index, rows) if rows is not None else tensor.dim(flat, arith.constant(index, 0))
        consts = [arith.constant(ir.RankedTensorType.get([v.size], f32), ir.DenseElementsAttr.get(v)) for v in (exponentials(sx), r)]
        y = dispatch(name, [flat, *consts], rows_v, [rows_type])[0]
        if not lead:
            y = tensor.collapse_shape(ir.RankedTensorType.get(shape, i8), y, [[0, 1]])
        elif len(lead) > 1:
            sizes = [tensor.dim(codes, arith.constant(index, i)) if d is None else d for i, d in enumerate(lead)]
            y = expand(y, sizes + [length], [list(range(len(lead))), [len(lead)]])
        done = t.from_builtin(y, op.results[0].type)
    op.results[0].replace_all_uses_with(done)
    op.erase()
    return None


def run(root) -> bool:
    return rewrite_nodes(root, NAME, "dequant.QdqSoftmax", "torch-onnx-dq-softmax-iree-cpu", _rewrite)


PASS = Pass("torch-onnx-dq-softmax-iree-cpu", "Rewrite dequant.QdqSoftmax nodes into dispatches of dq's softmax kernel for IREE's llvm-cpu backend", run)
