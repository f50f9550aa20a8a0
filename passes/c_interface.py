"""dq-emit-c-interface: mark public functions `llvm.emit_c_interface` for the C and JIT ABI, and
keep LLVM from inlining them into their wrappers.

convert-func-to-llvm gives each marked function `<name>` a wrapper `_mlir_ciface_<name>` (the entry
point: one pointer per memref descriptor), and the ExecutionEngine adds a packed wrapper
`_mlir_<name>` of every function it compiles. LLVM at -O3 inlined a kernel small enough into each
of them: the int8 per-tensor kernel's loop was compiled four times (`kernel`, `_mlir_ciface_kernel`,
`_mlir_kernel`, `_mlir__mlir_ciface_kernel`). `passthrough = ["noinline"]` (which
convert-func-to-llvm carries to the function and its wrapper) has it compiled once; a call then
pays one direct call from the wrapper (docs/performance.md, "Compile time").
"""

from __future__ import annotations

from mlir import ir

from . import Pass
from .queries import public_functions


def run(op) -> bool:
    noinline = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
    for f in public_functions(op):
        f.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        f.attributes["passthrough"] = noinline
    return True


PASS = Pass("dq-emit-c-interface", "Mark public functions llvm.emit_c_interface, not to be inlined into their wrappers", run)
