"""dq-fold-nibble-casts: fold 4-bit truncate/extend pairs into shifts and masks on wide ints.

After dq-byte-storage and fusion, a 4-bit value is `trunci` of a byte and then extended to
i32; LLVM vectorizes <N x i4> poorly, so `extsi(trunci(b))` becomes `(ext(b) << 28) >>s 28`
and `extui(trunci(b))` becomes `ext(b) & 15`, with no 4-bit type left.
"""

from __future__ import annotations

from mlir import ir, rewrite
from mlir.dialects import arith

from . import Pass


def _narrow_source(op):
    """The byte `b` of `ext(trunci(b) : i4)`, or None."""
    src = op.operands[0].owner
    if not isinstance(src, (ir.Operation, ir.OpView)) or src.operation.name != "arith.trunci":
        return None
    if str(op.operands[0].type) != "i4":
        return None
    return src.operands[0]


def fold_extsi(op, rewriter) -> bool | None:
    byte = _narrow_source(op)
    if byte is None:
        return True
    t = op.results[0].type
    width = ir.IntegerType(t).width
    with rewriter.ip, op.location:
        wide = arith.extsi(t, byte) if ir.IntegerType(byte.type).width < width else byte
        shift = arith.constant(t, width - 4)
        value = arith.shrsi(arith.shli(wide, shift), shift)
    rewriter.replace_op(op, [value])
    return None


def fold_extui(op, rewriter) -> bool | None:
    byte = _narrow_source(op)
    if byte is None:
        return True
    t = op.results[0].type
    with rewriter.ip, op.location:
        wide = arith.extui(t, byte) if ir.IntegerType(byte.type).width < ir.IntegerType(t).width else byte
        value = arith.andi(wide, arith.constant(t, 15))
    rewriter.replace_op(op, [value])
    return None


def run(op) -> bool:
    s = rewrite.RewritePatternSet(op.context)
    s.add("arith.extsi", fold_extsi)
    s.add("arith.extui", fold_extui)
    rewrite.apply_patterns_and_fold_greedily(op, s.freeze())
    return True


PASS = Pass("dq-fold-nibble-casts", "Fold 4-bit truncate/extend pairs into shifts and masks on wide integers", run)
