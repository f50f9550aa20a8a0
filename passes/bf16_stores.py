"""dq-bf16-stores-as-i16: store bf16 vectors as i16 vectors of the same bits.

LLVM's x86 backend has no bf16 vectors on targets without AVX512-BF16: it legalizes
`store <N x bfloat>` element by element (a scalar store per element, the vectorized loop's
advantage gone) and without its `!nontemporal` hint. The bits are the same as i16: a bitcast
keeps the vector store whole and its hint. Runs on the LLVM dialect, after convert-vector-to-llvm.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import llvm

from . import Pass


def run(op) -> bool:
    stores = []

    def visit(o):
        if o.name == "llvm.store":
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


PASS = Pass("dq-bf16-stores-as-i16", "Store bf16 vectors as i16 vectors (LLVM scalarizes bf16 vector stores and drops their non-temporal hint)", run)
