"""Remarks from Python passes: `emit_remarks` emits remark diagnostics at ops' locations, to the
context's handlers (`--verify-diagnostics` checks them as `expected-remark`)."""

from __future__ import annotations

from mlir import ir, passmanager
from mlir.dialects import transform
from mlir.dialects.transform import debug, structured

from dequant.dialect.walking import walk


def emit_remarks(root, remarks: list) -> None:
    """Emit `remarks` [(op, message)] as remark diagnostics at the ops' locations.

    The bindings offer only `Location.emit_error`, so upstream's `transform.debug.emit_remark_at`
    emits them: `root` (the op a pass runs on) is cloned into a scratch module holding a
    transform script that matches the ops by name, splits the handle into one handle per op (in
    the walk order `transform.structured.match` uses, post-order) and emits each remark. The
    diagnostics reach the context's handlers; the IR under `root` is not changed."""
    if not remarks:
        return
    order: dict = {}  # op name -> the ops of that name under root, in post-order

    def visit(o):
        order.setdefault(o.name, []).append(o)
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.POST_ORDER)
    with root.context, ir.Location.unknown():
        scratch = ir.Module.create()
        scratch.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        any_op = transform.AnyOpType.get()
        with ir.InsertionPoint(scratch.body):
            seq = transform.NamedSequenceOp("__transform_main", [any_op], [],
                                            arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}])  # fmt: skip
        with ir.InsertionPoint(seq.body):
            for name in dict.fromkeys(op.name for op, _ in remarks):
                ops = order[name]
                matched = structured.MatchOp(any_op, seq.bodyTarget, ops=[name]).result
                handles = transform.SplitHandleOp([any_op] * len(ops), matched).results
                for op, message in remarks:
                    if op.name == name:
                        debug.EmitRemarkAtOp(handles[_index(ops, op)], message)
            transform.YieldOp([])
        root.clone(ip=ir.InsertionPoint.at_block_begin(scratch.body))
        pm = passmanager.PassManager.parse("builtin.module(transform-interpreter)")
        pm.enable_verifier(False)  # the clone may call functions it does not hold
        pm.run(scratch.operation)


def _index(ops: list, op) -> int:
    return next(i for i, o in enumerate(ops) if o == op)
