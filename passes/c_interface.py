"""dq-emit-c-interface: mark public functions `llvm.emit_c_interface` for the C and JIT ABI."""

from __future__ import annotations

from mlir import ir

from . import Pass
from .queries import public_functions


def run(op) -> bool:
    for f in public_functions(op):
        f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-emit-c-interface", "Mark public functions llvm.emit_c_interface", run)
