"""dq-unpack-to-iree-cpu: dq-unpack-to-iree for IREE's llvm-cpu backend: only the packed tensors
IREE's CPU codegen reads without masked sub-byte loads (passes/unpack_to_iree.py says which and
why); the others keep dq's in-place read."""

from __future__ import annotations

from . import Pass
from .unpack_to_iree import bitcasts, cpu_reads


def run(root) -> bool:
    return bitcasts(root, cpu_reads)


PASS = Pass(
    "dq-unpack-to-iree-cpu",
    "Rewrite dq.unpack of static integer data whose last dim IREE's CPU codegen reads unmasked into iree_tensor_ext.bitcast",
    run,
)
