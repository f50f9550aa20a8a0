"""Run-time shape checks of lowered dq ops, and how native code reports a failed one.

Native code never reads or writes out of bounds: where a dim is dynamic, the lowering compares it
with the dim the op reads it against, and computes only if every comparison holds. A failed check
calls `dequant_report_error(int64_t code)` once per failed dim and leaves the result unwritten;
the caller then has an error, not a crash:
- `dequant.jit`, `dequant.ops`: the function is provided by the runtime (kernel.py), which turns
  the code into a `ValueError` after the call returns;
- C callers of `dequant-opt --emit=object` objects define it (the generated header declares it and
  decodes codes into messages with `dequant_error_message`).

A code packs (kind, operand dim, output dim) as kind << 40 | operand dim << 20 | output dim;
output dim EMPTY stands for "read at index 0, so it must not be empty". Each call carries the
code's words as a discardable attribute, so the lowered IR reads without decoding:

    func.call @dequant_report_error(%c1099511627777_i64)
        {dq.error = "dim 0 of the scale does not match output dim 1, which it is read along"} : (i64) -> ()
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, scf
from dequant.dialect.attributes import text

REPORT = "dequant_report_error"
ERROR_ATTR = "dq.error"  # on each report call: what its code means, as `message` says it
KINDS = {1: "the scale", 2: "the zero point", 3: "x", 4: "the destination", 5: "the packed bytes"}
SCALE, ZERO_POINT, DATA, DESTINATION, PACKED = 1, 2, 3, 4, 5
EMPTY = (1 << 20) - 1


def encode(kind: int, operand_dim: int, output_dim: int) -> int:
    return kind << 40 | operand_dim << 20 | output_dim


def message(code: int) -> str:
    """The words of a failed check's code."""
    kind, p, d = code >> 40, (code >> 20) & EMPTY, code & EMPTY
    what = KINDS.get(kind, f"operand kind {kind}")
    if d == EMPTY:
        return f"dim {p} of {what} is empty, but it is read at index 0"
    if kind == PACKED:
        return "the packed bytes do not hold ceil(elements * bits / 8) bytes of the unpacked tensor"
    return f"dim {p} of {what} does not match output dim {d}, which it is read along"


C_DECODER = """\
/* The words of a code passed to dequant_report_error (see passes/checks.py). */
static inline const char *dequant_error_operand(int64_t code) {
  switch (code >> 40) { case 1: return "the scale"; case 2: return "the zero point"; case 3: return "x"; case 4: return "the destination"; default: return "the packed bytes"; }
}
static inline int64_t dequant_error_operand_dim(int64_t code) { return (code >> 20) & 0xFFFFF; }
static inline int64_t dequant_error_output_dim(int64_t code) { return code & 0xFFFFF; } /* 0xFFFFF: read at index 0, empty */
"""


def report_function(anchor) -> str:
    """Declare `dequant_report_error(i64)` in the module holding `anchor` (once); its name."""
    op = anchor.operation
    while op.name != "builtin.module":
        op = op.parent
    body = op.regions[0].blocks[0]
    for o in body.operations:
        if o.operation.name == "func.func" and text(o.attributes["sym_name"]) == REPORT:
            return REPORT
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        f = func.FuncOp(REPORT, ([ir.IntegerType.get_signless(64)], []), visibility="private")
    del f
    return REPORT


def guarded(checks: list, compute, otherwise: ir.Value, anchor) -> ir.Value:
    """`compute()` (a tensor value built in the then-region) if every check (i1 value, code)
    holds; else each failed check is reported and `otherwise` is the result."""
    if not checks:
        return compute()
    name = report_function(anchor)
    ok = checks[0][0]
    for c, _ in checks[1:]:
        ok = arith.andi(ok, c)
    i64 = ir.IntegerType.get_signless(64)
    true = arith.constant(ir.IntegerType.get_signless(1), 1)
    for c, code in checks:
        failed = arith.xori(c, true)
        report = scf.IfOp(failed)
        with ir.InsertionPoint(report.then_block):
            call = func.CallOp([], ir.FlatSymbolRefAttr.get(name), [arith.constant(i64, code)])
            call.attributes[ERROR_ATTR] = ir.StringAttr.get(message(code))  # the code's words, for the reader
            scf.YieldOp([])
    branch = scf.IfOp(ok, [otherwise.type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([compute()])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([otherwise])
    return branch.results[0]
