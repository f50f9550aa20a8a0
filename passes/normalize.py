"""dq-normalize: rewrite each spec op into the canonical `dq.dequantize` (dialect/canonical.py)."""

from __future__ import annotations

from mlir import ir

from dequant import dialect
from dequant.dialect import canonical

from . import Pass


def run(root) -> bool:
    found = dialect.verified(root)
    if found is None:
        return False
    for op, d, sig in found:
        if d.name == canonical.NAME:
            continue
        v = d.by_role(op)
        with ir.InsertionPoint(op), op.location:
            y = canonical.build(v["data"], v["scale"], v["zero_point"], d.canonical(sig), op.results[0].type)
        op.results[0].replace_all_uses_with(y)
        op.erase()
    return True


PASS = Pass("dq-normalize", "Rewrite dq spec ops into the canonical dq.dequantize form", run)
