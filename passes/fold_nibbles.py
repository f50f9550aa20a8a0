"""dq-fold-nibble-casts: fold sub-byte truncate/extend pairs into shifts and masks on wide ints.

After dq-storage-abi and fusion, a 4-bit (or 2-bit) value is `trunci` of a byte and then
extended to i32; LLVM vectorizes `<N x i4>` poorly, so `extsi(trunci(b) : iK)` becomes
`(ext(b) << (W - K)) >>s (W - K)` and `extui(trunci(b) : iK)` becomes `ext(b) & (2^K - 1)`, with
no sub-byte type left. `sign_extend_in_bytes`, which dq-vectorize runs last, moves the signed
form's shifts back onto the byte where that is faster (its docstring).
"""

from __future__ import annotations

from mlir import ir, rewrite
from mlir.dialects import arith

from dequant.dialect.walking import walk

from . import Pass
from .queries import integer_value


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


def _element(t: ir.Type) -> ir.IntegerType | None:
    e = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    return ir.IntegerType(e) if isinstance(e, ir.IntegerType) else None


def sign_extend_in_bytes(root) -> None:
    """`(extsi(b) << c) >>s c` with b a byte (or a vector of bytes) and c = W - k, k < 8 (what
    `fold_extsi` made of a k-bit field) becomes `extsi((b << (8 - k)) >>s (8 - k))`: the field
    sign-extended within its byte, then widened. On x86 with GFNI the byte shifts are one
    `vgf2p8affineqb` pair per 64 bytes and the widening a plain `vpmovsxbd`, where the wide form
    shifts every 16 lanes twice: int4 blocked kernels 1.03-1.25x faster on the cached-store
    path, the same speed in one-line non-temporal tiles (docs/performance.md)."""
    found = []

    def visit(o):
        if o.name == "arith.shrsi":
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    for shr in found:
        shl = shr.operands[0].owner
        if not isinstance(shl, (ir.Operation, ir.OpView)) or shl.name != "arith.shli":
            continue
        c = integer_value(shr.operands[1])
        if c is None or integer_value(shl.operands[1]) != c:
            continue
        ext = shl.operands[0].owner
        if not isinstance(ext, (ir.Operation, ir.OpView)) or ext.name != "arith.extsi":
            continue
        byte = ext.operands[0]
        be, we = _element(byte.type), _element(shr.result.type)
        if be is None or we is None or be.width != 8 or not we.width - 8 < c < we.width:
            continue
        k = we.width - c
        with ir.InsertionPoint(shr), shr.location:
            bt = byte.type
            n = ir.IntegerAttr.get(be, 8 - k)
            amount = arith.constant(bt, ir.DenseElementsAttr.get_splat(bt, n) if isinstance(bt, ir.VectorType) else n)
            value = arith.extsi(shr.result.type, arith.shrsi(arith.shli(byte, amount), amount))
        shr.result.replace_all_uses_with(value)
        for dead in (shr, shl, ext):
            if not any(True for _ in dead.result.uses):
                dead.erase()
