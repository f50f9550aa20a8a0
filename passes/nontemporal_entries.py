"""dq-nontemporal-entries: a second entry point `<name>_nt` for each public function computing a
dq op (a linalg.generic, once lowered), tagged `dq.nontemporal`, whose stores dq-vectorize makes
non-temporal.

A kernel with plain stores reads every output cache line before writing it (read for ownership)
and pushes the cache's other data out; a dequantize writes 2-8x more bytes than it reads, so for
calls whose data does not fit the cache that doubles most of the memory traffic. Non-temporal
stores write around the cache, but data that fits is faster through it. The choice belongs to
the caller, which knows the whole call (dequant.ops splits a call's rows across threads and calls
one entry for every range): `<name>` stores through the cache, `<name>_nt` around it. Both take
the same arguments and compute the same values (docs/abi.md, docs/performance.md).

Runs on bufferized functions (after dq-emit-c-interface: the copy keeps its C interface); a
function whose `_nt` name is taken is not copied.
"""

from __future__ import annotations

from mlir import ir

from . import Pass
from .queries import function_name, ops_named, public_functions
from dequant.dialect.attributes import text

NONTEMPORAL = "dq.nontemporal"
SUFFIX = "_nt"



def _computes(f) -> bool:
    """Whether `f` holds a linalg.generic (what dq ops lower to)."""
    return bool(ops_named(f, "linalg.generic"))


def run(op) -> bool:
    if op.name != "builtin.module":
        return True
    body = op.regions[0].blocks[0]
    names = {text(o.attributes["sym_name"]) for o in body.operations if "sym_name" in o.attributes}
    for f in public_functions(op):
        name = function_name(f)
        if NONTEMPORAL in f.attributes or name + SUFFIX in names or not _computes(f):
            continue
        copy = f.operation.clone(ir.InsertionPoint(body))
        copy.attributes["sym_name"] = ir.StringAttr.get(name + SUFFIX)
        copy.attributes[NONTEMPORAL] = ir.UnitAttr.get()
        names.add(name + SUFFIX)
    return True


PASS = Pass("dq-nontemporal-entries", "Copy each public function holding a linalg.generic into <name>_nt, tagged dq.nontemporal", run)
