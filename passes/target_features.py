"""dq-target-features: record on the module what the host CPU offers that dq-vectorize's
schedules depend on (the ExecutionEngine and `--emit=object` compile for this host).

`dq.table_lookups` (unit attribute): the host has AVX-512BW, so LLVM lowers a lookup in a
constant table of 16 x 32-bit or 32 x 16-bit elements, indexed by another vector's lanes, to one
variable permute (`vpermps`, `vpermw`). Without it (AVX2: 8 x 32-bit permutes, no 16-bit one) the
same IR becomes a sequence through the stack, slower than computing the values, and dq-vectorize
computes them (see passes/vectorize.py, `tables`). The host's features are read from numpy's CPU
dispatch table, which the running numpy detected on this machine.

A module holding the attribute already (set by hand, e.g. in a test) is left as it is.
"""

from __future__ import annotations

from mlir import ir

from . import Pass

TABLE_LOOKUPS = "dq.table_lookups"


def host_has_table_lookups() -> bool:
    """AVX-512F and AVX-512BW on this host (False where numpy does not say)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return False
    return bool(features.get("AVX512F") and features.get("AVX512BW"))


def run(op) -> bool:
    if op.name == "builtin.module" and TABLE_LOOKUPS not in op.attributes and host_has_table_lookups():
        op.attributes[TABLE_LOOKUPS] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-target-features", "Record on the module the host CPU features dq-vectorize's schedules use (dq.table_lookups: AVX-512BW permutes)", run)
