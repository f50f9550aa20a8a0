"""torch-onnx-dq-softmax-iree-cpu: each `dequant.QdqSoftmax` node (the stage's own, written by
python/qdq_softmax.py for a Softmax over the last axis between a per-tensor DequantizeLinear and
QuantizeLinear) becomes one dispatch of dq's softmax kernel (passes/kernels/softmax.py) for
IREE's llvm-cpu backend:

    %x = torch_c.to_builtin_tensor %codes : -> [..., L] i8, collapsed to [R, L]
    %y = flow.dispatch @dq_softmax_...(%x, %t, %r, %rows) -> [R, L] i8, expanded to [..., L]

with t the exponentials of the codes' differences (kernels.softmax.exponentials of its x_scale)
and r = [y_scale, y_zero_point]. The node has no other lowering, so one this pass cannot take is
an error at its location naming the rule.

On a module tagged for an x86 CPU with AVX2 (dq-target-features), each ONNX Softmax of f32 over
the last axis (rows of a static length up to MOST_LENGTH) becomes, the same way, one dispatch of
dq's float softmax kernel, `dq_softmax_f32_...(%x, %rows)` (docs/semantics.md#softmax-of-f32);
one it does not take keeps IREE's own lowering.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import can_create_ops, dispatch, executable, rewrite_nodes
from .kernels.loops import row_workgroups
from .kernels.softmax import FloatSoftmaxKernel, SoftmaxKernel, exponentials
from .kernels.target import Target
from .to_linalg import expand

NAME = "onnx.QdqSoftmax"  # as IREE's importer names a `dequant` domain node
FLOAT_NAME = "onnx.Softmax"
PASS_NAME = "torch-onnx-dq-softmax-iree-cpu"


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
    f32 = ir.F32Type.get()
    tables = lambda: [arith.constant(ir.RankedTensorType.get([v.size], f32), ir.DenseElementsAttr.get(v)) for v in (exponentials(sx), r)]  # noqa: E731
    _by_rows(op, module, kernel, x, ir.IntegerType.get_signless(8), tables)
    return None


def _float_kernel(op, target: Target) -> tuple | str:
    """(the kernel, x's type) of an ONNX Softmax of f32, or why not."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "it has one input and one output"
    x, y = t.tensor_of(op.operands[0].type), t.tensor_of(op.results[0].type)
    if isinstance(x, str) or isinstance(y, str):
        return x if isinstance(x, str) else y
    if x.element.kind != "float" or x.element.bits != 32 or x.element != y.element:
        return "its input and output must be f32"
    if not x.shape or x.shape[-1] is None or x.shape != y.shape:
        return "its input and output must be of one shape, its last dim static"
    opset = t.opset(op)
    axis = t.int_attr(op, "axis", -1 if opset is None or opset >= 13 else 1)
    if axis not in (-1, len(x.shape) - 1):  # before opset 13 too: over [rows, last dim] alike
        return f"its axis {axis} is not the last"
    lead = x.shape[:-1]
    kernel = FloatSoftmaxKernel(x.shape[-1], target.lanes, row_workgroups(None if None in lead else int(np.prod(lead))))
    why = kernel.why_not()
    return why if why is not None else (kernel, x)


def _rewrite_float(op, module, target: Target) -> str | None:
    """An ONNX Softmax of f32 as a dispatch of the float kernel, or why not (nothing changed)."""
    got = _float_kernel(op, target)
    if isinstance(got, str):
        return got
    _by_rows(op, module, *got, ir.F32Type.get(), list)
    return None


def _by_rows(op, module, kernel, x, element: ir.Type, consts) -> None:
    """Replace `op` by a dispatch of `kernel` over its input as rows [R, L] of `element`s and the
    tensors `consts()` makes, the result expanded back to the input's shape."""
    index = ir.IndexType.get()
    name = executable(kernel, module)
    length, lead = kernel.length, list(x.shape[:-1])
    with op.location, ir.InsertionPoint(op):
        shape = [ir.ShapedType.get_dynamic_size() if d is None else d for d in x.shape]
        values = ir.Operation.create(t.TO_BUILTIN, results=[ir.RankedTensorType.get(shape, element)], operands=[op.operands[0]]).result
        rows = None if None in lead else int(np.prod(lead))
        dyn = ir.ShapedType.get_dynamic_size() if rows is None else rows
        rows_type = ir.RankedTensorType.get([dyn, length], element)
        if not lead:  # one row
            flat = expand(values, [1, length], [[0, 1]])
        elif len(lead) > 1:
            flat = tensor.collapse_shape(rows_type, values, [list(range(len(lead))), [len(lead)]])
        else:
            flat = values
        rows_v = arith.constant(index, rows) if rows is not None else tensor.dim(flat, arith.constant(index, 0))
        y = dispatch(name, [flat, *consts()], rows_v, [rows_type])[0]
        if not lead:
            y = tensor.collapse_shape(ir.RankedTensorType.get(shape, element), y, [[0, 1]])
        elif len(lead) > 1:
            sizes = [tensor.dim(values, arith.constant(index, i)) if d is None else d for i, d in enumerate(lead)]
            y = expand(y, sizes + [length], [list(range(len(lead))), [len(lead)]])
        done = t.from_builtin(y, op.results[0].type)
    op.results[0].replace_all_uses_with(done)
    op.erase()


def run(root) -> bool:
    if not rewrite_nodes(root, NAME, "dequant.QdqSoftmax", PASS_NAME, _rewrite):
        return False
    target = Target.of(root)
    found = t.nodes(root, FLOAT_NAME) if target.x86_avx2 else []
    if found and not can_create_ops(root, PASS_NAME):
        return False
    for op in found:  # one the kernel does not take keeps IREE's lowering
        _rewrite_float(op, root, target)
    return True


PASS = Pass(PASS_NAME, "Rewrite dequant.QdqSoftmax nodes, and ONNX Softmaxes of f32 for x86 CPUs, into dispatches of dq's softmax kernels for IREE's llvm-cpu backend", run)
