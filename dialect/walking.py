"""`walk`: Operation.walk with a callback that can never abort the process.

A Python exception raised inside a walk callback cannot cross MLIR's C++ walk: the bindings
terminate the process. The fuzzers found one: an op whose name is not UTF-8 (`"\\ff"`, with
unregistered dialects allowed), whose `.name` raises UnicodeDecodeError. Every walk in dequant goes
through this function: such an op is skipped (no dq pass handles an op it cannot name), and any
other exception stops the walk and is raised again after it, where Python can handle it.
"""

from __future__ import annotations

from mlir import ir


def walk(root, visit, order=None) -> None:
    """`root.walk(visit, order)` (pre-order by default for an explicit order, else the bindings'
    default), with `visit`'s exceptions handled as the module docstring says."""
    raised: list = []

    def guarded(op):
        try:
            return visit(op)
        except UnicodeDecodeError:
            return ir.WalkResult.SKIP if hasattr(ir.WalkResult, "SKIP") else ir.WalkResult.ADVANCE
        except Exception as e:  # noqa: BLE001 - raised again below, outside the C++ walk
            raised.append(e)
            return ir.WalkResult.INTERRUPT

    target = root.operation if hasattr(root, "operation") else root
    if order is None:
        target.walk(guarded)
    else:
        target.walk(guarded, order)
    if raised:
        raise raised[0]
