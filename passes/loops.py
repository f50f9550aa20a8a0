"""Queries on scf.for loops shared by the loop passes (dq-strip-mine-blocks, dq-nontemporal-stores)."""

from __future__ import annotations

from mlir import ir


def constant_int(v: ir.Value) -> int | None:
    """The value of an `arith.constant` integer or index, else None."""
    owner = v.owner
    if isinstance(owner, (ir.Operation, ir.OpView)) and owner.operation.name == "arith.constant":
        return ir.IntegerAttr(owner.operation.attributes["value"]).value
    return None


def is_innermost(loop) -> bool:
    """Whether an scf.for's body holds no loop."""
    return not any(o.operation.name in ("scf.for", "scf.parallel") for o in loop.regions[0].blocks[0].operations)


def trip_count(loop) -> int | None:
    """The constant trip count of an scf.for from %lb to %lb + c, or between constants."""
    lb, ub = loop.operands[0], loop.operands[1]
    if constant_int(lb) is not None and constant_int(ub) is not None:
        return constant_int(ub) - constant_int(lb)
    o = ub.owner
    if isinstance(o, (ir.Operation, ir.OpView)) and o.operation.name == "arith.addi":
        x, y = o.operation.operands
        if x == lb and constant_int(y) is not None:
            return constant_int(y)
        if y == lb and constant_int(x) is not None:
            return constant_int(x)
    return None
