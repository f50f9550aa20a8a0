"""dq-int8-activations: opt in to int8 activations in dq's CPU matmul kernel (approximate).

Tags the module `dq.int8_activations` (unit attribute); torch-onnx-dq-matmul-iree-cpu then gives
each MatMul it takes the int8-activation kernel (passes/kernels/int8.py): x quantized to
int8 per row and block of K, as ONNX Runtime's MatMulNBits does at `accuracy_level` 4
(docs/semantics.md#int8-activations). It needs AVX-512 VNNI (`dq.avx512vnni`, recorded by
dq-target-features); without it the kernel pass refuses the module with an error. Never on by
default: run it before the pipeline (`--dq-int8-activations --torch-onnx-to-iree`, or
`dequant-iree --int8-activations`).
"""

from __future__ import annotations

from mlir import ir

from . import Pass

INT8_ACTIVATIONS = "dq.int8_activations"


def run(op) -> bool:
    if op.name == "builtin.module":
        op.attributes[INT8_ACTIVATIONS] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-int8-activations", "Opt in to int8 activations (approximate, AVX-512 VNNI) in dq's CPU matmul kernel: tag the module dq.int8_activations", run)
