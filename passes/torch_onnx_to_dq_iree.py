"""torch-onnx-to-dq-iree: torch-onnx-to-dq for IREE, taking only the DequantizeLinear nodes dq adds
something to: those IREE cannot lower, and those read only by MatMuls it computes slower.

IREE (3.13) lowers many DequantizeLinear nodes itself, and folds a DequantizeLinear feeding a
Conv, MatMul or Gemm with a quantized activation into integer arithmetic (an i8 x i8 -> i32
contraction and one float scale after it). For a Conv that is the faster route: dq's float
dequantize in its place made QDQ CNNs slower than IREE alone (the f32 convolution, and each
activation dequantize a dispatch of its own; docs/semantics.md#qdq-graphs-through-iree). For a
large MatMul it is the slower one: dq's float route (its matmul kernel reading the int8 weights,
the activation's QDQ pair in f32) ran QDQ transformer blocks of 32 to 128 rows faster than IREE
alone (docs/iree.md#qdq-models). So a node is left to IREE when

- IREE lowers its form (`IREE_LOWERS`: checked against onnx.reference, bit for bit, by test/iree:
  8-, 16- and 32-bit integers per tensor or per axis, float8 per tensor; scales f32, f16 or bf16,
  outputs f32 or f16: a bf16 output widened again in the same dispatch, as a Cast to float does,
  loses its rounding in IREE's codegen, which dq-round-bf16 keeps), and
- it is not weight-only (constant integer weights read only as the B operand of MatMuls whose A
  is no DequantizeLinear: dq's matmul forms read those weights quantized, where IREE would write
  them out in f32 first), and
- it is not read only by large MatMuls (`matmul_only`: at least MIN_ROWS rows and MIN_WEIGHTS
  elements of B per matrix; weights beside a quantized activation, and quantized activations).
  On a module tagged `dq.avx512vnni`, `dq.avxvnni` or `dq.avx2` (dq-target-features), a QDQ MatMul
  the target's integer kernel reads (`integer_route`: 8-bit weights, a per-tensor 8-bit activation,
  constant scales and zero points, that kernel's shapes: K a multiple of 4 for VNNI, of 16 for
  AVX2) is large from MIN_INTEGER_MACS multiply-adds (rows x K x N).

Every other node becomes dq exactly as torch-onnx-to-dq makes it (blocked, 4- and 2-bit, float4,
float8 per axis, uint16, float8e8m0 scales, ...). Which route each pattern takes and why:
docs/semantics.md#qdq-graphs-through-iree.
"""

from __future__ import annotations

import math

from mlir import ir

from . import Pass
from . import torch_onnx as t
from .kernels.problem import Problem
from .kernels.qdq import QdqKernel
from .kernels.routes import qdq_kernel
from .kernels.target import Target
from .remarks import emit_remarks
from .torch_onnx_to_dq import read_attrs, rewrite

INTEGERS = ("i8", "ui8", "i16", "i32")
FLOATS = ("f32", "f16", "bf16")
# A QDQ MatMul (quantized activation) takes dq's float route from MIN_ROWS rows and a B of
# MIN_WEIGHTS elements per matrix: below 32 rows dq's exact f32 weight panel is shared by too few
# rows, and below MIN_WEIGHTS the product does not pay for the dispatch each MatMul adds
# (measured on QDQ transformer blocks: docs/iree.md#qdq-models).
MIN_ROWS = 32
MIN_WEIGHTS = 1 << 16
# dq's integer kernel (VNNI) is faster than IREE's contraction at fewer rows too, from 2^19
# multiply-adds a MatMul; below that the gain is within the noise and the kernel's dispatch each
# adds is left out (docs/iree.md#qdq-models).
MIN_INTEGER_MACS = 1 << 19
# x's element -> granularities IREE lowers it at (IREE 3.13; test/iree checks each against
# onnx.reference). "tensor": one scale; "axis": one scale per index of `axis`.
IREE_LOWERS = {e: ("tensor", "axis") for e in INTEGERS} | {e: ("tensor",) for e in ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ")}


def iree_lowers(op) -> bool:
    """Whether IREE lowers this DequantizeLinear node by itself (its form is in IREE_LOWERS)."""
    if len(op.operands) < 2:
        return False
    x, scale = (t.tensor_of(v.type) for v in list(op.operands)[:2])  # the zero point has x's type
    attrs = read_attrs(op)
    if isinstance(x, str) or isinstance(scale, str) or isinstance(attrs, str):
        return False
    if attrs.get("block_size", 0) != 0 or scale.element.name not in FLOATS or attrs.get("output_dtype", "f32") not in FLOATS:
        return False
    if attrs.get("output_dtype", scale.element.name) == "bf16":  # IREE drops the rounding (dq-round-bf16)
        return False
    granularity = "tensor" if all(d == 1 for d in scale.shape) else "axis"
    return granularity in IREE_LOWERS.get(x.element.name, ())


def _shapes(matmul) -> tuple | None:
    """(rows: A's dims but the last, multiplied; B's shape) of a MatMul of two operands of static
    shapes, or None."""
    if len(matmul.operands) != 2:
        return None  # not ONNX's MatMul: torch-mlir's lowering says what is wrong with it
    a, b = (t.tensor_of(v.type) for v in matmul.operands)
    if isinstance(a, str) or isinstance(b, str) or None in a.shape or None in b.shape or len(b.shape) < 2:
        return None
    return math.prod(a.shape[:-1]), b.shape


def _large(matmul, kernel: type[QdqKernel] | None) -> bool:
    """Whether a MatMul has static shapes, at least MIN_ROWS rows and a B of at least MIN_WEIGHTS
    elements per matrix (its last two dims); or takes `kernel` (the target's integer QDQ kernel,
    `qdq_kernel`) with at least MIN_INTEGER_MACS multiply-adds."""
    if (shapes := _shapes(matmul)) is None:
        return False
    rows, b = shapes
    if kernel is not None and integer_route(matmul, kernel):
        return rows * math.prod(b) >= MIN_INTEGER_MACS
    return rows >= MIN_ROWS and b[-2] * b[-1] >= MIN_WEIGHTS


def _dequantized(value: ir.Value, weights: bool) -> bool:
    """Whether `value` is a DequantizeLinear IREE lowers, of 8-bit integers to f32 with a constant
    f32 scale and zero point: per tensor, or for `weights` constant [K, N] integers per tensor or
    per column."""
    op = value.owner
    if not isinstance(op, (ir.Operation, ir.OpView)) or t.onnx_name(op) != "onnx.DequantizeLinear" or not iree_lowers(op):
        return False
    x, scale = (t.tensor_of(v.type) for v in list(op.operands)[:2])
    per_tensor = all(d == 1 for d in scale.shape)
    if x.element.name not in ("i8", "ui8") or scale.element.name != "f32" or read_attrs(op).get("output_dtype", "f32") != "f32":
        return False
    if not (per_tensor or (weights and read_attrs(op).get("axis", 1) in (1, -1))):
        return False
    if weights and t.constant_value(op.operands[0]) is None:
        return False
    return all(t.constant_value(v) is not None for v in list(op.operands)[1:])


def integer_route(matmul, kernel: type[QdqKernel]) -> bool:
    """Whether a static 2-D-weights MatMul has the form dq's integer kernel `kernel` takes
    (torch-onnx-dq-matmul-iree-cpu): A a per-tensor 8-bit activation and B constant 8-bit
    weights, each dequantized with constant scale and zero point, and the kernel's shapes."""
    a, b = list(matmul.operands)[:2]
    shapes = _shapes(matmul)
    if shapes is None or len(shapes[1]) != 2 or not _dequantized(a, False) or not _dequantized(b, True):
        return False
    k, n = shapes[1]
    problem = Problem(k, n, k, 8, True, False, activation="i8", bound=255 * 255 * k)  # 255 * 255 * k bounds |d| for any 8-bit operands
    return kernel.why_not(problem) is None


def weight_only(op) -> bool:
    """Whether the node dequantizes constant integer weights read only as MatMul B operands whose
    A is not itself a DequantizeLinear result (weight-only quantization)."""
    x = t.tensor_of(op.operands[0].type)
    if isinstance(x, str) or x.element.kind != "int" or t.constant_value(op.operands[0]) is None:
        return False
    uses = list(op.results[0].uses)
    for use in uses:
        if t.onnx_name(use.owner) != "onnx.MatMul" or use.operand_number != 1:
            return False
        a = use.owner.operands[0].owner
        if isinstance(a, (ir.Operation, ir.OpView)) and t.onnx_name(a) == "onnx.DequantizeLinear":
            return False
    return bool(uses)


def matmul_only(op, kernel: type[QdqKernel] | None = None) -> bool:
    """Whether every use of the node is an operand of a large MatMul (`_large`), and it has one."""
    uses = list(op.results[0].uses)
    return bool(uses) and all(t.onnx_name(use.owner) == "onnx.MatMul" and _large(use.owner, kernel) for use in uses)


def run(root) -> bool:
    remarks = []
    kernel = qdq_kernel(Target.of(root))  # the integer QDQ kernel of the module's MatMuls, if any
    for op in t.nodes(root, "onnx.DequantizeLinear"):
        if iree_lowers(op) and not (weight_only(op) or matmul_only(op, kernel)):
            why = rewrite(op, check_only=True)  # left to IREE; a broken rule still gets its remark
        else:
            why = rewrite(op)
        if why is not None:
            remarks.append((op, f"DequantizeLinear not converted to dq: {why}"))
    emit_remarks(root, remarks)
    return True


PASS = Pass(
    "torch-onnx-to-dq-iree",
    "Rewrite into dq ops the ONNX DequantizeLinear nodes IREE does not lower itself and those read only by MatMuls; leave the rest to IREE",
    run,
)
