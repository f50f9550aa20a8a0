"""torch-onnx-dq-maxpool-iree-cpu: each `dequant.NhwcMaxPool` node (the stage's own, written by
python/qdq_conv_matmuls.py for a MaxPool of NHWC codes between rewritten convolutions) becomes
one dispatch of dq's max pooling kernel (passes/kernels/maxpool.py) for IREE's llvm-cpu backend:

    %x = torch_c.to_builtin_tensor %codes : -> [N, H, W, C] i8, collapsed to [N * H * W, C]
    %y = flow.dispatch @dq_maxpool_...(%x, %rows) -> [N * Ho * Wo, C] i8, expanded to [N, Ho, Wo, C]

with its attributes kernel_shape [kh, kw], strides (default 1) and pads [top, left, bottom, right]
(default 0), ONNX's MaxPool on NHWC codes. The node has no other lowering, so one this pass
cannot take is an error at its location naming the rule.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch, executable, nhwc_codes, rewrite_nodes
from .kernels.maxpool import MaxPoolKernel

NAME = "onnx.NhwcMaxPool"  # as IREE's importer names a `dequant` domain node


def _kernel(op) -> MaxPoolKernel | str:
    """The kernel of a node, or why not."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return "it takes the codes and gives the pooled codes"
    got = t.io_tensors(op)
    if isinstance(got, str):
        return got
    x, y = got
    if None in x.shape or len(x.shape) != 4 or None in y.shape or len(y.shape) != 4:
        return "its input and output must be codes of static shape [N, H, W, C]"
    if x.element.bits != 8 or x.element.kind != "int" or x.element != y.element:
        return "its input and output must be 8-bit integer codes of one type"
    shape, strides, pads = t.ints_attr(op, "kernel_shape", []), t.ints_attr(op, "strides", [1, 1]), t.ints_attr(op, "pads", [0] * 4)
    if len(shape) != 2 or len(strides) != 2 or len(pads) != 4:
        return f"its kernel_shape {shape}, strides {strides} and pads {pads} must have 2, 2 and 4 values"
    kernel = MaxPoolKernel(*x.shape, *shape, *strides, pads=tuple(pads), signed=x.element.signed)
    why = kernel.why_not()
    if why is not None:
        return why
    if tuple(y.shape) != (kernel.n, kernel.ho, kernel.wo, kernel.c):
        return f"its output is {list(y.shape)}, not [{kernel.n}, {kernel.ho}, {kernel.wo}, {kernel.c}]"
    return kernel


def _rewrite(op, module) -> str | None:
    """The node as a dispatch of the kernel, or why not (nothing changed)."""
    kernel = _kernel(op)
    if isinstance(kernel, str):
        return kernel
    i8, index = ir.IntegerType.get_signless(8), ir.IndexType.get()
    name = executable(kernel, module)
    k = kernel
    with op.location, ir.InsertionPoint(op):
        pixels = tensor.collapse_shape(ir.RankedTensorType.get([k.n * k.h * k.w, k.c], i8), nhwc_codes(op.operands[0], k), [[0, 1, 2], [3]])
        out = ir.RankedTensorType.get([k.n * k.ho * k.wo, k.c], i8)
        y = dispatch(name, [pixels], arith.constant(index, k.rows), [out])[0]
        pooled = tensor.expand_shape(ir.RankedTensorType.get([k.n, k.ho, k.wo, k.c], i8), y, [[0, 1, 2], [3]], [], [k.n, k.ho, k.wo, k.c])
        done = t.from_builtin(pooled, op.results[0].type)
    op.results[0].replace_all_uses_with(done)
    op.erase()
    return None


def run(root) -> bool:
    return rewrite_nodes(root, NAME, "dequant.NhwcMaxPool", "torch-onnx-dq-maxpool-iree-cpu", _rewrite)


PASS = Pass("torch-onnx-dq-maxpool-iree-cpu", "Rewrite dequant.NhwcMaxPool nodes into dispatches of dq's max pooling kernel for IREE's llvm-cpu backend", run)
