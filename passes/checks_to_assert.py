"""dq-checks-to-assert: the run-time shape checks of lowered dq ops as `cf.assert`, for IREE.

dq-to-linalg guards a dq op with dynamic dims by run-time checks (passes/checks.py): a failed one
calls `dequant_report_error(code)`, a function the caller provides (dequant's runtime, a C
program). IREE provides no such function, and `iree-compile` refuses the declaration ("function
is missing onnx opset version attribute"). This pass rewrites each report

    scf.if %failed { func.call @dequant_report_error(%code) }

into `cf.assert %holds, "<what failed>"` (the words of `checks.message`), which IREE lowers to a
status check: the call of the module function fails with that message, and nothing is computed
from the mismatched operand. The declaration goes once no call is left. dq's own lowering is
unchanged; the pass belongs to the torch-onnx-to-iree pipeline.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, cf

from dequant.dialect.attributes import text

from . import Pass, checks
from .queries import ops_named


def _code(call) -> int | None:
    owner = call.operands[0].owner if len(call.operands) == 1 else None
    if owner is None or not hasattr(owner, "name") or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def run(root) -> bool:
    for call in ops_named(root, "func.call"):
        if ir.FlatSymbolRefAttr(call.attributes["callee"]).value != checks.REPORT:
            continue
        guard = call.parent
        code = _code(call)
        body = [o.operation.name for o in guard.regions[0].blocks[0].operations] if guard is not None and guard.name == "scf.if" else []
        if code is None or sorted(set(body) - {"arith.constant"}) != ["func.call", "scf.yield"] or len(body) > 3:
            continue  # not the form checks.guarded writes: left alone
        with ir.InsertionPoint(guard), guard.location:
            holds = arith.xori(guard.operands[0], arith.constant(ir.IntegerType.get_signless(1), 1))
            cf.assert_(holds, f"dequantize: {checks.message(code)}")
        guard.erase()
    module = root.operation
    while module.name != "builtin.module" and module.parent is not None:
        module = module.parent
    if not any(ir.FlatSymbolRefAttr(c.attributes["callee"]).value == checks.REPORT for c in ops_named(module, "func.call")):
        for f in list(module.regions[0].blocks[0].operations):
            if f.operation.name == "func.func" and text(f.attributes["sym_name"]) == checks.REPORT and not len(f.regions[0].blocks):
                f.operation.erase()
    return True


PASS = Pass("dq-checks-to-assert", "Rewrite dq's run-time shape checks (dequant_report_error calls) into cf.assert, for IREE", run)
