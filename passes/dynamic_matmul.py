"""What torch-onnx-dq-matmul-iree-cpu reads of a dynamic int8 MatMul of the torch form, as
onnxruntime's quantize_dynamic writes it (and dequant.formats writes DynamicQuantizeMatMul):

    xq, sx, zx = DynamicQuantizeLinear(x)                       uint8, run-time sx and zx
    y = Mul(Cast<f32>(MatMulInteger(xq, wq, zx[, zw])), Mul(sx, sw))

with wq constant int8 or uint8 weights [K, N], zw and sw constants per tensor or per column
(`Dynamic`). The QDQ kernel computes exactly this y (docs/semantics.md#dynamic-int8-matmuls), its
x scale and zero point read at run time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from mlir import ir

from . import torch_onnx as t
from .model_constants import torch_constant


class Dynamic(NamedTuple):
    """A matched dynamic int8 MatMul: the MatMulInteger, its Cast and the Mul (by `scale`, the
    Mul of sx and sw) whose result y the kernel computes; the DynamicQuantizeLinear; the weights'
    codes [K, N] as stored (uint8 view), whether signed, sw [1, N] f32, zw [1, N] int32 or None
    (none, or all zero); the torch types of xq and y."""

    matmul: object
    cast: object
    mul: object
    scale: object
    quantize: object
    codes: np.ndarray
    signed: bool
    sw: np.ndarray
    zw: np.ndarray | None
    a: t.TorchTensor
    y: t.TorchTensor

    @property
    def kn(self) -> tuple:
        return self.codes.shape


def _one_reader(value: ir.Value, onnx_op: str):
    uses = list(value.uses)
    if len(uses) == 1 and t.onnx_name(uses[0].owner) == onnx_op:
        return uses[0].owner
    return None


def _per_column(values: np.ndarray | None, n: int, dtype) -> np.ndarray | None:
    """A per-tensor (one value) or per-column (N values) constant as [1, N], or None."""
    if values is None or values.size not in (1, n) or (values.size == n and values.shape[-1:] != (n,)):
        return None
    return np.broadcast_to(values.reshape(-1), (n,)).astype(dtype).reshape(1, n)


def _other(op, value: ir.Value) -> ir.Value | None:
    """The operand of a two-operand op that is not `value` (None: both are, or neither)."""
    a, b = op.operands
    return b if a == value and b != value else a if b == value and a != value else None


def match(mmi) -> Dynamic | str | None:
    """The Dynamic of an `onnx.MatMulInteger`, why the kernel does not take it, or None where
    its A is no DynamicQuantizeLinear's."""
    if len(mmi.operands) < 3 or len(mmi.results) != 1:
        return None
    a, w, zx = mmi.operands[:3]
    q = a.owner
    if not isinstance(q, (ir.Operation, ir.OpView)) or t.onnx_name(q) != "onnx.DynamicQuantizeLinear" or len(q.results) != 3:
        return None
    if a != q.results[0] or zx != q.results[2]:
        return "its A's zero point is not A's DynamicQuantizeLinear's"
    at, wt, yt = (t.tensor_of(v.type) for v in (a, w, mmi.results[0]))
    if any(isinstance(v, str) for v in (at, wt, yt)) or len(wt.shape) != 2 or None in wt.shape:
        return "its B is not a static 2-D matrix"
    if len(at.shape) < 2 or at.shape[-1] != wt.shape[0] or at.element.bits != 8:
        return "its A is not 8-bit rows [..., M, K] of B's K"
    codes = torch_constant(w)
    if codes is None or codes.dtype not in (np.int8, np.uint8):
        return "its B is not a constant int8 or uint8 matrix of the model"
    k, n = wt.shape
    zw = None
    if len(mmi.operands) > 3 and not isinstance(t.tensor_of(mmi.operands[3].type), str):  # else `none`
        zw = _per_column(torch_constant(mmi.operands[3]), n, np.int32)
        if zw is None:
            return "its B's zero point is not a constant per tensor or per column"
        zw = zw if zw.any() else None
    cast = _one_reader(mmi.results[0], "onnx.Cast")
    if cast is None or t.int_attr(cast, "to") != 1:  # TensorProto.FLOAT
        return "its result is not read by one Cast to f32 alone"
    mul = _one_reader(cast.results[0], "onnx.Mul")
    scale = _other(mul, cast.results[0]) if mul is not None and len(mul.operands) == 2 else None
    owner = scale.owner if scale is not None else None
    if not isinstance(owner, (ir.Operation, ir.OpView)) or t.onnx_name(owner) != "onnx.Mul" or len(owner.operands) != 2:
        return "its f32 result is not multiplied by a Mul of x's and B's scales alone"
    other = _other(owner, q.results[1])
    swt = t.tensor_of(other.type) if other is not None else "none"
    sw = _per_column(torch_constant(other), n, np.float32) if not isinstance(swt, str) and swt.element.name == "f32" else None
    if sw is None:
        return "its f32 result is not multiplied by sx times an f32 constant per tensor or per column"
    y = t.tensor_of(mul.results[0].type)
    if isinstance(y, str) or y.shape != yt.shape:
        return "its scaled result is broadcast to another shape"
    return Dynamic(mmi, cast, mul, owner, q, codes.view(np.uint8).reshape(k, n), codes.dtype == np.int8, sw, zw, at, y)
