"""torch-onnx-dq-quantize-iree-cpu: each `dequant.NhwcQuantizeLinear` node (the stage's own,
written by python/qdq_conv_matmuls.py for a CNN's input quantized before a rewritten
convolution) becomes one dispatch of dq's NHWC quantize kernel (passes/kernels/nhwc_quantize.py)
for IREE's llvm-cpu backend:

    %x = torch_c.to_builtin_tensor %image : -> [N, C, H, W] f32, collapsed to [N * C * H, W]
    %y = flow.dispatch @dq_quantize_nhwc_...(%x, %r, %rows) -> [N * H, W * C] i8, expanded to [N, H, W, C]

with r = [sy, zy] from its constant scale and zero point (one each; the zero point absent: 0 of
uint8), and sy's split reciprocal after them where kernels/reciprocal.py finds it gives the
division's codes (`_rcp`): ONNX's QuantizeLinear of x, its codes NHWC. The node has no other
lowering, so one this pass cannot take is an error at its location naming the rule.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch, executable, rewrite_nodes
from .kernels.nhwc_quantize import NhwcQuantizeKernel
from .kernels.reciprocal import RANGES, reciprocals
from .model_constants import torch_constant

NAME = "onnx.NhwcQuantizeLinear"  # as IREE's importer names a `dequant` domain node


def _kernel(op) -> tuple | str:
    """(kernel, r, x's TorchTensor) of a node, or why not."""
    if len(op.operands) not in (2, 3) or len(op.results) != 1:
        return "it takes x, a scale and a zero point (or none) and gives the codes"
    values = [torch_constant(v) for v in op.operands[1:]]
    if any(v is None or v.size != 1 for v in values):
        return "its scale and zero point must be constants of one value"
    got = t.io_tensors(op)
    if isinstance(got, str):
        return got
    x, y = got
    if x.element.name != "f32" or None in x.shape or len(x.shape) != 4:
        return "its input must be f32 of static shape [N, C, H, W]"
    if y.element.bits != 8 or y.element.kind != "int":
        return "its output must be 8-bit integer codes"
    n, c, h, w = x.shape
    if tuple(y.shape) != (n, h, w, c):
        return f"its output is {list(y.shape)}, not [{n}, {h}, {w}, {c}]"
    kind = "i8" if y.element.signed else "u8"
    sy, zy = float(values[0].reshape(())), (int(values[1].reshape(())) if len(values) == 2 else 0)
    if not np.isfinite(sy) or sy == 0:
        return f"its scale {sy} must be finite and not 0"
    if not RANGES[kind][0] <= zy <= RANGES[kind][1]:
        return f"its zero point {zy} is outside its codes' range {list(RANGES[kind])}"
    kernel = NhwcQuantizeKernel(n, c, h, w, kind)
    why = kernel.why_not()
    if why is not None:
        return why
    r = np.array([sy, zy], np.float32)
    pairs = reciprocals(r, kernel.divisors)
    if pairs is not None:  # x / sy by a product and an FMA, the same codes (kernels/reciprocal.py)
        kernel, r = dataclasses.replace(kernel, reciprocal=True), np.concatenate([r, pairs])
    return kernel, r, x


def _rewrite(op, module) -> str | None:
    """The node as a dispatch of the kernel, or why not (nothing changed)."""
    got = _kernel(op)
    if isinstance(got, str):
        return got
    k, r, x = got
    f32, i8, index = ir.F32Type.get(), ir.IntegerType.get_signless(8), ir.IndexType.get()
    name = executable(k, module)
    with op.location, ir.InsertionPoint(op):
        image = t.to_builtin(op.operands[0], x)
        planes = tensor.collapse_shape(ir.RankedTensorType.get([k.n * k.c * k.h, k.w], f32), image, [[0, 1, 2], [3]])
        consts = arith.constant(ir.RankedTensorType.get([r.size], f32), ir.DenseElementsAttr.get(r))
        y = dispatch(name, [planes, consts], arith.constant(index, k.rows), [ir.RankedTensorType.get([k.n * k.h, k.w * k.c], i8)])[0]
        codes = tensor.expand_shape(ir.RankedTensorType.get([k.n, k.h, k.w, k.c], i8), y, [[0, 1], [2, 3]], [], [k.n, k.h, k.w, k.c])
        done = t.from_builtin(codes, op.results[0].type)
    op.results[0].replace_all_uses_with(done)
    op.erase()
    return None


def run(root) -> bool:
    return rewrite_nodes(root, NAME, "dequant.NhwcQuantizeLinear", "torch-onnx-dq-quantize-iree-cpu", _rewrite)


PASS = Pass("torch-onnx-dq-quantize-iree-cpu", "Rewrite dequant.NhwcQuantizeLinear nodes into dispatches of dq's NHWC quantize kernel for IREE's llvm-cpu backend", run)
