"""torch-onnx-dq-gelu-iree-cpu: on a module tagged for an x86 CPU with AVX2 (dq-target-features),
each ONNX Gelu of f32 (approximate "none", opset 20's) becomes one dispatch of dq's Gelu kernel
(passes/kernels/gelu.py) for IREE's llvm-cpu backend, the bias Add before it too where the Add
adds a vector [N] along the last axis and nothing else reads its sum (a MatMul's bias, as
quantize_dynamic's models and the exporters write it):

    %x = torch_c.to_builtin_tensor %x : -> [..., N] f32, collapsed to [R, N]
    %y = flow.dispatch @dq_gelu_f32[_bias]_...(%x[, %b], %rows) -> [R, N] f32, expanded to [..., N]

A Gelu the kernel does not take (tanh's approximation, another type, a dynamic last dim) keeps
IREE's lowering (docs/semantics.md#gelu-of-f32).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch_rows, rewrite_x86_nodes
from .kernels.gelu import GeluKernel
from .kernels.loops import row_workgroups
from .kernels.target import Target

NAME = "onnx.Gelu"
PASS_NAME = "torch-onnx-dq-gelu-iree-cpu"


def _f32(value: ir.Value) -> t.TorchTensor | None:
    """The torch tensor type of an f32 value, or None."""
    tt = t.tensor_of(value.type)
    return tt if not isinstance(tt, str) and tt.element.kind == "float" and tt.element.bits == 32 else None


def _bias(gelu) -> tuple | None:
    """(the Add before `gelu`, the value it adds the bias to, the bias [N]) where the Add's sum of
    a [..., N] value and an [N] one (or [1, ..., 1, N]) is read by `gelu` alone, else None."""
    add = gelu.operands[0].owner
    if not isinstance(add, (ir.Operation, ir.OpView)) or t.onnx_name(add.operation) != "onnx.Add" or len(add.operands) != 2:
        return None
    if len(list(add.results[0].uses)) != 1:
        return None
    shape = _f32(gelu.operands[0]).shape
    for x, b in (add.operands, add.operands[::-1]):
        xt, bt = _f32(x), _f32(b)
        if xt is not None and bt is not None and xt.shape == shape and bt.shape and bt.shape[-1] == shape[-1] and all(d == 1 for d in bt.shape[:-1]):
            return add.operation, x, b
    return None


def _rewrite(op, module, target: Target) -> str | None:
    """The Gelu (and its bias Add) as a dispatch of the kernel, or why not (nothing changed)."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "it has one input and one output"
    if t.string_attr(op, "approximate", "none") != "none":
        return "its approximation is tanh's"
    x, y = _f32(op.operands[0]), _f32(op.results[0])
    if x is None or y is None or x.shape != y.shape or not x.shape or x.shape[-1] is None:
        return "its input and output must be f32 of one shape, the last dim static"
    bias = _bias(op)
    kernel = GeluKernel(x.shape[-1], bias is not None, target.lanes, row_workgroups(x.rows))
    if bias is None:
        dispatch_rows(op, op.operands[0], module, kernel, ir.F32Type.get(), list)
        return None
    add, value, b = bias
    bt = t.tensor_of(b.type)
    with op.location, ir.InsertionPoint(op):  # the bias as [N]
        row = ir.RankedTensorType.get([bt.shape[-1]], ir.F32Type.get())
        flat = ir.Operation.create(t.TO_BUILTIN, results=[ir.RankedTensorType.get(list(bt.shape), ir.F32Type.get())], operands=[b]).result
        if len(bt.shape) > 1:
            flat = tensor.collapse_shape(row, flat, [list(range(len(bt.shape)))])
    dispatch_rows(op, value, module, kernel, ir.F32Type.get(), lambda: [flat])
    add.erase()
    return None


def run(root) -> bool:
    return rewrite_x86_nodes(root, NAME, PASS_NAME, _rewrite)


PASS = Pass(PASS_NAME, "Rewrite ONNX Gelus of f32 (and the bias Add before one) into dispatches of dq's Gelu kernel for IREE's llvm-cpu backend on x86 CPUs", run)
