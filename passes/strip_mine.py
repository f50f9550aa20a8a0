"""dq-strip-mine-blocks: split an innermost loop at block boundaries so the block index is
invariant in the inner loop.

    scf.for %j = 0 to %n step 1 { ... affine.apply (d0 floordiv c)(%j) ... }
becomes
    scf.for %jb = 0 to (%n / c) * c step c { %k = %jb / c
      scf.for %j = %jb to %jb + c step 1 { ... %k ... } }
    scf.for %j = (%n / c) * c to %n step 1 { ... affine.apply (d0 floordiv c)(%j) ... }

so the scale and zero point of a block are loaded once per block and the inner loop, contiguous
in x and y, vectorizes. Its constant trip count c lets LLVM cover a block with whole vectors (a
dynamic count sent blocks of 32 to the scalar remainder loop under AVX-512; docs/performance.md#vectorization). Runs on
the loops `convert-linalg-to-loops` makes for blocked maps.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from dequant.dialect.walking import walk

from . import Pass
from .queries import constant_int, is_innermost


def _floordiv_of_iv(op):
    """(loop, c) when `op` is `affine.apply (d0 floordiv c)` of an scf.for counter from 0
    by 1 whose loop has no nested loop; else None."""
    m = ir.AffineMapAttr(op.attributes["map"]).value
    if len(m.results) != 1 or m.n_dims != 1 or m.n_symbols != 0:
        return None
    expr = m.results[0]
    if not isinstance(expr, ir.AffineFloorDivExpr):
        return None
    div = ir.AffineFloorDivExpr(expr)
    if not (isinstance(div.lhs, ir.AffineDimExpr) and isinstance(div.rhs, ir.AffineConstantExpr)):
        return None
    c = ir.AffineConstantExpr(div.rhs).value
    iv = op.operands[0]
    if c <= 1 or not isinstance(iv, ir.BlockArgument) or iv.arg_number != 0:
        return None
    loop = iv.owner.owner
    if loop.name != "scf.for" or len(loop.operands) != 3 or len(loop.results) != 0:
        return None
    if constant_int(loop.operands[0]) != 0 or constant_int(loop.operands[2]) != 1:
        return None
    if not is_innermost(loop):
        return None
    return loop, c


def strip_mine(loop, c: int, applies: list) -> None:
    index = ir.IndexType.get()
    with ir.InsertionPoint(loop), loop.location:
        zero, n = loop.operands[0], loop.operands[1]
        step = arith.constant(index, c)
        full = arith.muli(arith.divui(n, step), step)  # the end of the last whole block
        outer = scf.ForOp(zero, full, step)
        with ir.InsertionPoint(outer.body):
            start = outer.induction_variable
            block = arith.divui(start, step)
            stop = arith.addi(start, step)
            end = scf.YieldOp([])
    # The partial last block keeps the original loop (its floordiv per element), after the others.
    tail = loop.clone(ir.InsertionPoint.after(outer))
    tail.operands[0] = full
    loop.move_before(end)
    loop.operands[0] = start
    loop.operands[1] = stop  # a constant trip count: whole vectors, no remainder per block
    for a in applies:
        a.result.replace_all_uses_with(block)
        a.erase()


def run(op) -> bool:
    found: dict = {}

    def visit(o):
        if o.name == "affine.apply":
            hit = _floordiv_of_iv(o)
            if hit is not None:
                loop, c = hit
                found.setdefault(loop, []).append((c, o))
        return ir.WalkResult.ADVANCE

    walk(op, visit, ir.WalkOrder.PRE_ORDER)
    for loop, hits in found.items():
        sizes = {c for c, _ in hits}
        if len(sizes) == 1:  # blocks of one size: the scale's and the zero point's
            strip_mine(loop, sizes.pop(), [a for _, a in hits])
    return True


PASS = Pass("dq-strip-mine-blocks", "Split innermost loops at block boundaries so block scales are loop-invariant", run)
