"""dq-check-quant-lowerable: the quant casts upstream lower-quant-ops can lower.

MLIR 22's lower-quant-ops rewrites `quant.dcast` and `quant.qcast` of `!quant.uniform` types
(per-layer, per-axis, sub-channel) and aborts the process (an `llvm_unreachable`) on any other
quantized type: `!quant.any`, `!quant.calibrated` (found by fuzzing). dequant-opt runs this pass
before lower-quant-ops wherever that appears (python/pipeline.py, GUARDS): each such cast is an
error at its location, and the pipeline stops before upstream's pass runs.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import quant

from dequant.dialect.walking import walk

from . import Pass
from .from_quant import UNIFORM

CASTS = {"quant.dcast": "operand", "quant.qcast": "result"}  # where each cast's quantized type is


def _element(t: ir.Type) -> ir.Type:
    return ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t


def run(root) -> bool:
    ok = True

    def visit(o):
        nonlocal ok
        if o.name in CASTS and len(o.operands) == 1 and len(o.results) == 1:
            q = _element((o.operands[0] if CASTS[o.name] == "operand" else o.results[0]).type)
            if isinstance(q, quant.QuantizedType) and not isinstance(q, UNIFORM):
                o.location.emit_error(f"lower-quant-ops cannot lower {o.name} of {q}: it lowers !quant.uniform types only (MLIR 22 aborts on others)")
                ok = False
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    return ok


PASS = Pass("dq-check-quant-lowerable", "Report quant casts upstream lower-quant-ops would abort on (types other than !quant.uniform)", run)
