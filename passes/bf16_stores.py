"""dq-nontemporal-bf16-as-i16: store non-temporal bf16 vectors as i16 vectors.

LLVM's x86 backend legalizes `store <N x bfloat>` without its `!nontemporal` hint (the targets
without AVX512-BF16 have no bf16 vectors), so a dq-nontemporal-stores loop with a bf16 output
would write through the cache. The bits are the same as i16: a bitcast keeps the hint. Runs on
the LLVM dialect, after convert-vector-to-llvm.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import llvm

from . import Pass


def run(op) -> bool:
    stores = []

    def visit(o):
        if o.name == "llvm.store" and "nontemporal" in o.attributes:
            t = o.operands[0].type
            if isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, ir.BF16Type):
                stores.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    for store in stores:
        value = store.operands[0]
        i16 = ir.VectorType.get(ir.VectorType(value.type).shape, ir.IntegerType.get_signless(16))
        with ir.InsertionPoint(store), store.location:
            bits = llvm.bitcast(i16, value)
        store.operands[0] = bits
    return True


PASS = Pass(
    "dq-nontemporal-bf16-as-i16",
    "Store non-temporal bf16 vectors as i16 vectors so that LLVM keeps their non-temporal hint",
    run,
)
