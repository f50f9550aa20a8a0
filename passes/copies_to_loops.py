"""dq-copies-to-loops: `memref.copy` becomes `linalg.copy`, which convert-linalg-to-loops turns into
loops. MLIR lowers a copy between non-contiguous memrefs to a call of `memrefCopy`, defined in
upstream's runtime library (libmlir_c_runner_utils), which neither the JIT nor a C program linking
an object from `--emit=object` has; as loops the copy needs no library.
"""

from __future__ import annotations

from mlir import ir

from . import Pass
from .lazy import linalg
from .queries import ops_named


def run(root) -> bool:
    for c in ops_named(root, "memref.copy"):
        with ir.InsertionPoint(c), c.location:
            linalg.copy(c.operands[0], outs=[c.operands[1]])
        c.erase()
    return True


PASS = Pass("dq-copies-to-loops", "Rewrite memref.copy into linalg.copy (loops), so no runtime library is needed", run)
