"""The `dq` dialect: one module per op, each defining `OP` (an `OpDef`, opdef.py, for the
dequantize ops; unpack.py's definition for `dq.unpack`).

The registry is every module of this package that defines `OP`, so a new op is one new module
(its rules, result, canonical form and numpy docstring) plus its tests and docs. The dialect is
loaded into a context as IRDL generated from the OpDefs (`register`); `python -m
dequant.dialect` prints that IRDL. Everything IRDL cannot check (element types, spec rules) is
run by `verify`, by every dq pass and by dequant-opt after parsing.
"""

from __future__ import annotations

import importlib
import pkgutil

from mlir import ir
from mlir.dialects import irdl

from .canonical import NAME as CANONICAL
from .opdef import OpDef
from .walking import walk


def _discover() -> dict:
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        op = getattr(module, "OP", None)
        if op is not None and callable(getattr(op, "irdl", None)) and callable(getattr(op, "verify", None)):
            found[op.name] = op
    return found


OPS: dict = _discover()  # every op: name -> its definition
DEQUANTIZE_OPS: dict[str, OpDef] = {n: op for n, op in OPS.items() if op.canonical is not None}
SPEC_OPS: tuple[OpDef, ...] = tuple(op for op in DEQUANTIZE_OPS.values() if op.api)


def definition():
    """The dialect as an IRDL module (`irdl.dialect @dq`), in a new module of the current context."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        d = irdl.dialect("dq")
        with ir.InsertionPoint(d.body):
            for op in OPS.values():
                op.irdl()
    return module


def register(context) -> None:
    """Load the `dq` dialect into an `mlir.ir.Context` (once per context)."""
    if context.is_registered_operation(CANONICAL):
        return
    with context, ir.Location.unknown():
        irdl.load_dialects(definition())


def dq_ops(root) -> list:
    """The dq ops under `root` (an operation), in pre-order."""
    found = []

    def visit(op):
        if op.name in OPS:
            found.append(op)
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    return found


def verified(root) -> list | None:
    """[(op, OpDef, Signature)] for every dequantize op under `root`, after checking every dq op
    under it once against its rules; None if any breaks one (the errors are at the ops' locations)."""
    out, ok = [], True
    for op in dq_ops(root):
        d = OPS[op.name]
        sig = d.verify(op)
        ok &= sig is not None
        if d.canonical is not None:
            out.append((op, d, sig))
    return out if ok else None


def verify(root) -> bool:
    """Check every dq op under `root` against its spec rules; errors go to the op locations."""
    return verified(root) is not None
