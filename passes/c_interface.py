"""dq-emit-c-interface: mark public functions `llvm.emit_c_interface` for the C and JIT ABI."""

from __future__ import annotations

from mlir import ir

from . import Pass


def run(op) -> bool:
    for f in op.regions[0].blocks[0].operations if op.operation.name == "builtin.module" else []:
        if f.operation.name == "func.func" and len(f.regions[0].blocks) and "sym_visibility" not in f.attributes:
            f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-emit-c-interface", "Mark public functions llvm.emit_c_interface", run)
