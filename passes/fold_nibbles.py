"""dq-fold-nibble-casts: fold sub-byte truncate/extend pairs into shifts and masks on wide ints.

After dq-storage-abi and fusion, a 4-bit (or 2-bit) value is `trunci` of a byte and then
extended to i32; LLVM vectorizes `<N x i4>` poorly, so `extsi(trunci(b) : iK)` becomes
`(ext(b) << (W - K)) >>s (W - K)` and `extui(trunci(b) : iK)` becomes `ext(b) & (2^K - 1)`, with
no sub-byte type left.
"""

from __future__ import annotations

from mlir import ir, rewrite
from mlir.dialects import arith

from . import Pass


def _narrow_source(op):
    """(the wide value b, K) of `ext(trunci(b) : iK)` with K < 8, or None."""
    src = op.operands[0].owner
    if not isinstance(src, (ir.Operation, ir.OpView)) or src.operation.name != "arith.trunci":
        return None
    k = ir.IntegerType(op.operands[0].type).width
    return (src.operands[0], k) if k < 8 else None


def _widened(t: ir.Type, b: ir.Value, signed: bool) -> ir.Value:
    if ir.IntegerType(b.type).width >= ir.IntegerType(t).width:
        return b
    return arith.extsi(t, b) if signed else arith.extui(t, b)


def fold_extsi(op, rewriter) -> bool | None:
    found = _narrow_source(op)
    if found is None:
        return True
    byte, k = found
    t = op.results[0].type
    with rewriter.ip, op.location:
        shift = arith.constant(t, ir.IntegerType(t).width - k)
        value = arith.shrsi(arith.shli(_widened(t, byte, True), shift), shift)
    rewriter.replace_op(op, [value])
    return None


def fold_extui(op, rewriter) -> bool | None:
    found = _narrow_source(op)
    if found is None:
        return True
    byte, k = found
    t = op.results[0].type
    with rewriter.ip, op.location:
        value = arith.andi(_widened(t, byte, False), arith.constant(t, (1 << k) - 1))
    rewriter.replace_op(op, [value])
    return None


def run(op) -> bool:
    s = rewrite.RewritePatternSet(op.context)
    s.add("arith.extsi", fold_extsi)
    s.add("arith.extui", fold_extui)
    rewrite.apply_patterns_and_fold_greedily(op, s.freeze())
    return True


PASS = Pass("dq-fold-nibble-casts", "Fold sub-byte truncate/extend pairs into shifts and masks on wide integers", run)
