"""dq-target-features: record on the module what the host CPU offers that dq-vectorize's
schedules depend on (the ExecutionEngine and `--emit=object` compile for this host).

`dq.avx512bw` (unit attribute): the host has AVX-512F and AVX-512BW. dq-vectorize then
(passes/vectorize.py)
- looks up per-tile tables of 16 x 32-bit or 32 x 16-bit values with one variable permute
  (`vpermd`, `vpermw`) per 512 bits (`tables`). On AVX2 (8 x 32-bit permutes, no 16-bit one) a
  16-entry lookup becomes a sequence through the stack, slower than computing the values;
- narrows f32 -> bf16 roundings with one two-source word permute (`vpermt2w`, `bf16_rounding`).
The host's features are read from numpy's CPU dispatch table, which the running numpy detected
on this machine.

A module holding the attribute already (set by hand, e.g. in a test) is left as it is.
"""

from __future__ import annotations

from mlir import ir

from . import Pass

AVX512BW = "dq.avx512bw"


def host_has_avx512bw() -> bool:
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
    if op.name == "builtin.module" and AVX512BW not in op.attributes and host_has_avx512bw():
        op.attributes[AVX512BW] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-target-features", "Record on the module the host CPU features dq-vectorize's schedules use (dq.avx512bw)", run)
