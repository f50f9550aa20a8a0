"""dq-normalize: rewrite each spec op into the canonical `dq.dequantize`."""

from __future__ import annotations

from mlir import ir, rewrite

from dequant import dialect
from dequant.dialect import canonical

from . import Pass


def normalize_spec_op(op, rewriter) -> bool | None:
    """One spec op becomes `dq.dequantize` with its canonical maps; invalid ops are left alone."""
    d = dialect.OPS[op.name]
    sig = d.signature(op)
    if d.check(sig):
        return True
    form = d.canonical(sig)
    operands = list(op.operands)
    zero_point = operands[2] if len(operands) > 2 else None
    with rewriter.ip, op.location:
        y = canonical.build(operands[0], operands[1], zero_point, form, op.results[0].type)
    rewriter.replace_op(op, [y])
    return None


def patterns(context) -> rewrite.RewritePatternSet:
    """The normalisation patterns, one per spec op."""
    s = rewrite.RewritePatternSet(context)
    for name in dialect.SPEC_OPS:
        s.add(name, normalize_spec_op)
    return s


def run(op) -> bool:
    if not dialect.verify(op):
        return False
    rewrite.apply_patterns_and_fold_greedily(op, patterns(op.context).freeze())
    return True


PASS = Pass("dq-normalize", "Rewrite dq spec ops into the canonical dq.dequantize form", run)
