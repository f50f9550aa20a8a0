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
from mlir.dialects import arith

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch_rows, rewrite_nodes, rewrite_x86_nodes
from .kernels.loops import row_workgroups
from .kernels.softmax import FloatSoftmaxKernel, SoftmaxKernel, exponentials
from .kernels.target import Target

NAME = "onnx.QdqSoftmax"  # as IREE's importer names a `dequant` domain node
FLOAT_NAME = "onnx.Softmax"
PASS_NAME = "torch-onnx-dq-softmax-iree-cpu"


def _kernel(op) -> tuple | str:
    """(the kernel, [sy, zy], sx) of a node, or why not."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "it takes the codes and gives the codes of their softmax"
    got = t.io_tensors(op)
    if isinstance(got, str):
        return got
    x, y = got
    if not x.shape or x.shape[-1] is None or x.shape != y.shape:
        return "its input and output must be codes of one shape, its last dim static"
    if any(e.bits != 8 or e.kind != "int" for e in (x.element, y.element)):
        return "its input and output must be 8-bit integer codes"
    sx, sy, zy = t.float_attr(op, "x_scale"), t.float_attr(op, "y_scale"), t.int_attr(op, "y_zero_point")
    low, high = (-128, 127) if y.element.signed else (0, 255)
    if sx is None or sy is None or zy is None or not (np.isfinite(sx) and np.isfinite(sy)) or sx <= 0 or sy <= 0 or not low <= zy <= high:
        return f"its x_scale and y_scale must be positive f32 and its y_zero_point one of the output's codes ({low} to {high})"
    kernel = SoftmaxKernel(x.shape[-1], x.element.signed, y.element.signed, row_workgroups(x.rows))
    why = kernel.why_not()
    return why if why is not None else (kernel, np.array([sy, zy], np.float32), sx)


def _rewrite(op, module) -> str | None:
    """The node as a dispatch of the kernel, or why not (nothing changed)."""
    got = _kernel(op)
    if isinstance(got, str):
        return got
    kernel, r, sx = got
    f32 = ir.F32Type.get()
    tables = lambda: [arith.constant(ir.RankedTensorType.get([v.size], f32), ir.DenseElementsAttr.get(v)) for v in (exponentials(sx), r)]  # noqa: E731
    dispatch_rows(op, op.operands[0], module, kernel, ir.IntegerType.get_signless(8), tables)
    return None


def _float_kernel(op, target: Target) -> FloatSoftmaxKernel | str:
    """The kernel of an ONNX Softmax of f32, or why not."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "it has one input and one output"
    got = t.io_tensors(op)
    if isinstance(got, str):
        return got
    x, y = got
    if x.element.kind != "float" or x.element.bits != 32 or x.element != y.element:
        return "its input and output must be f32"
    if not x.shape or x.shape[-1] is None or x.shape != y.shape:
        return "its input and output must be of one shape, its last dim static"
    opset = t.opset(op)
    axis = t.int_attr(op, "axis", -1 if opset is None or opset >= 13 else 1)
    if axis not in (-1, len(x.shape) - 1):  # before opset 13 too: over [rows, last dim] alike
        return f"its axis {axis} is not the last"
    kernel = FloatSoftmaxKernel(x.shape[-1], target.lanes, row_workgroups(x.rows))
    why = kernel.why_not()
    return why if why is not None else kernel


def _rewrite_float(op, module, target: Target) -> str | None:
    """An ONNX Softmax of f32 as a dispatch of the float kernel, or why not (nothing changed)."""
    got = _float_kernel(op, target)
    if isinstance(got, str):
        return got
    dispatch_rows(op, op.operands[0], module, got, ir.F32Type.get(), list)
    return None


def run(root) -> bool:
    if not rewrite_nodes(root, NAME, "dequant.QdqSoftmax", PASS_NAME, _rewrite):
        return False
    return rewrite_x86_nodes(root, FLOAT_NAME, PASS_NAME, _rewrite_float)


PASS = Pass(PASS_NAME, "Rewrite dequant.QdqSoftmax nodes, and ONNX Softmaxes of f32 for x86 CPUs, into dispatches of dq's softmax kernels for IREE's llvm-cpu backend", run)
