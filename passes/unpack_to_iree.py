"""dq-unpack-to-iree: packed integer data for IREE: `dq.unpack` becomes `iree_tensor_ext.bitcast`.

IREE reads a tensor of i4/i2 elements packed, in the layout of ONNX's packed bytes (element j in
bits (j mod k) * w of byte j / k); its bitcast reinterprets the bytes as that tensor without a
copy. A dq op then reads x as a plain sub-byte tensor, through the identity map, which IREE fuses
into the op's consumers and unpacks while it computes; dq's own in-place read (dq-to-linalg) is a
computed index IREE does not fuse. A `dq.unpack` becomes

    %x = iree_tensor_ext.bitcast %bytes : tensor<Bxi8> -> tensor<...xi4>   (then ui4: tensor.bitcast)

when its result is static and fills whole bytes, and its type is an integer (IREE has no packed
float4); the others stay for dq-to-linalg. The op is created in generic form (the dialect is
IREE's), so the output is for `iree-compile` only.

dq-unpack-to-iree-cpu, the llvm-cpu pipeline's, takes only the tensors whose last dim is a
multiple of 64 or a power of two: IREE's CPU codegen (3.13) reads any other i4 tensor with masked
`vector<Nxi4>` loads at the end of each row, which it cannot legalize ("failed to legalize
operation 'vector.maskedload'"; zero points [2, 33], [K / B, 500], [64, 2050] at every vector
width, weights [256, 31] read by a dequantize alone, N-major [N, 33], weights [200, 1] blocked by
128: IREE drops the unit dim). Those keep dq's in-place read of the bytes, which IREE compiles at
any dims (slower in the fused contraction, so the others keep the bitcast:
docs/iree.md#what-the-stage-does).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import tensor

from dequant.dialect import unpack
from dequant.dialect.elements import of_type

from . import Pass
from .queries import ops_named

BITCAST = "iree_tensor_ext.bitcast"


def cpu_reads(shape: list) -> bool:
    """Whether IREE's CPU codegen reads an i4/i2 tensor of this static shape without masked
    loads: its last dim a multiple of 64 or a power of two (every vector tile divides it), unit
    dims dropped first as IREE drops them ([200, 1] is read as 200 values)."""
    dims = [d for d in shape if d != 1]
    d = dims[-1] if dims else 1
    return d % 64 == 0 or d & (d - 1) == 0


def bitcasts(root, takes=lambda shape: True) -> bool:
    """Rewrite every dq.unpack of static integer data filling whole bytes whose shape `takes`."""
    if not root.context.allow_unregistered_dialects:  # creating an op of an unknown dialect would abort
        if ops_named(root, unpack.NAME):
            root.location.emit_error("dq-unpack-to-iree creates IREE's iree_tensor_ext.bitcast: allow unregistered dialects (--allow-unregistered-dialect)")
            return False
        return True
    for op in ops_named(root, unpack.NAME):
        if unpack.OP.check(op) is not None:
            continue  # dq-to-linalg reports it
        rt = ir.RankedTensorType(op.results[0].type)
        e = of_type(rt.element_type)
        if e.kind != "int" or not rt.has_static_shape or math.prod(rt.shape) * e.bits % 8 or not takes(list(rt.shape)):
            continue
        signless = ir.RankedTensorType.get(rt.shape, ir.IntegerType.get_signless(e.bits))
        with ir.InsertionPoint(op), op.location:
            segments = ir.DenseI32ArrayAttr.get([1, 0, 0])  # source, source dims, result dims
            x = ir.Operation.create(BITCAST, results=[signless], operands=[op.operands[0]], attributes={"operandSegmentSizes": segments}).result
            if signless != rt:
                x = tensor.bitcast(rt, x)
        op.results[0].replace_all_uses_with(x)
        op.erase()
    return True


def run(root) -> bool:
    return bitcasts(root)


PASS = Pass("dq-unpack-to-iree", "Rewrite dq.unpack of static integer data into IREE's iree_tensor_ext.bitcast", run)
