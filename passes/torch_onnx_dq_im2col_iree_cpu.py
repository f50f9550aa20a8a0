"""torch-onnx-dq-im2col-iree-cpu: each `dequant.Im2col` node (the stage's own, written by
python/qdq_conv_matmuls.py for a QDQ convolution's MatMul) becomes one dispatch of dq's im2col
kernel (passes/kernels/im2col.py) for IREE's llvm-cpu backend:

    %x = torch_c.to_builtin_tensor %codes : -> [N, H, W, C] i8, collapsed to [N * H * W * C]
    %y = flow.dispatch @dq_im2col_...(%x, %zx, %rows) -> [N * Ho * Wo, Kp] i8

with zx, the node's second input, a constant 8-bit scalar, and its attributes kernel_shape [kh,
kw], strides (default 1), pads [top, left, bottom, right] (default 0) and columns, the rows'
length Kp >= kh * kw * C (the output's second dim). The node has no other lowering, so one this
pass cannot take is an error at its location naming the rule.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch, executable, nhwc_codes, rewrite_nodes
from .kernels.im2col import Im2colKernel
from .model_constants import torch_constant

NAME = "onnx.Im2col"  # as IREE's importer names a `dequant` domain node


def _kernel(op) -> tuple | str:
    """(kernel, zx) of a node, or why not."""
    if len(op.operands) != 2 or len(op.results) != 1:
        return "it takes the codes and their zero point, and gives the rows"
    zx = torch_constant(op.operands[1])
    got = t.io_tensors(op)
    if isinstance(got, str):
        return got
    x, y = got
    if zx is None or zx.size != 1:
        return "its zero point must be a constant scalar of the model"
    if None in x.shape or len(x.shape) != 4 or None in y.shape or len(y.shape) != 2:
        return "its input must be codes of static shape [N, H, W, C], its output [rows, K]"
    if any(e.bits != 8 or e.kind != "int" for e in (x.element, y.element)) or x.element != y.element or zx.dtype.itemsize != 1:
        return "its input, zero point and output must be 8-bit integer codes of one type"
    shape, strides, pads = t.ints_attr(op, "kernel_shape", []), t.ints_attr(op, "strides", [1, 1]), t.ints_attr(op, "pads", [0] * 4)
    if len(shape) != 2 or len(strides) != 2 or len(pads) != 4:
        return f"its kernel_shape {shape}, strides {strides} and pads {pads} must have 2, 2 and 4 values"
    columns = t.int_attr(op, "columns")
    if columns is None:
        return "its columns (the rows' length) must be an integer attribute"
    kernel = Im2colKernel(*x.shape, *shape, *strides, pads=tuple(pads), kp=columns)
    why = kernel.why_not()
    if why is not None:
        return why
    if tuple(y.shape) != (kernel.n * kernel.ho * kernel.wo, columns):
        return f"its output is {list(y.shape)}, not [N * Ho * Wo, columns] = [{kernel.n * kernel.ho * kernel.wo}, {columns}]"
    return kernel, np.asarray(zx).reshape(1).view(np.int8)


def _rewrite(op, module) -> str | None:
    """The node as a dispatch of the kernel, or why not (nothing changed)."""
    got = _kernel(op)
    if isinstance(got, str):
        return got
    kernel, zx = got
    i8, index = ir.IntegerType.get_signless(8), ir.IndexType.get()
    name = executable(kernel, module)
    with op.location, ir.InsertionPoint(op):
        flat = tensor.collapse_shape(ir.RankedTensorType.get([kernel.n * kernel.h * kernel.w * kernel.c], i8), nhwc_codes(op.operands[0], kernel), [[0, 1, 2, 3]])
        z = arith.constant(ir.RankedTensorType.get([1], i8), ir.DenseElementsAttr.get(zx))
        out = ir.RankedTensorType.get([kernel.n * kernel.ho * kernel.wo, kernel.kp], i8)
        y = dispatch(name, [flat, z], arith.constant(index, kernel.rows), [out])[0]
        done = t.from_builtin(y, op.results[0].type)
    op.results[0].replace_all_uses_with(done)
    op.erase()
    return None


def run(root) -> bool:
    return rewrite_nodes(root, NAME, "dequant.Im2col", "torch-onnx-dq-im2col-iree-cpu", _rewrite)


PASS = Pass("torch-onnx-dq-im2col-iree-cpu", "Rewrite dequant.Im2col nodes into dispatches of dq's im2col kernel for IREE's llvm-cpu backend", run)
