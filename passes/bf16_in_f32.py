"""dq-bf16-in-f32: bf16 arithmetic as f32 arithmetic rounded to bf16 after each op.

A CPU without AVX512-BF16 has no bf16 instructions: LLVM then calls compiler-rt's
`__truncsfbf2` and friends, which the JIT does not load (the call would jump to address 0). This
pass rewrites each arith op on bf16 values into the same op on f32 (`extf`, exact) followed by
`truncf` to bf16, so that only f32 <-> bf16 conversions remain for `arith-expand` to turn into
integer operations. Rounding each op's exact f32 result to bf16 equals the bf16 op: for +, -, *,
/ of bf16 values the f32 result is exact or rounded with 24 >= 2*8 + 2 bits, where double
rounding is innocuous. Integer -> bf16 conversions go through f32 (exact for integers of up to 24
bits; wider ones round twice). Unlike upstream's arith-emulate-unsupported-floats, no f32 value
is carried from one op to the next, so every op rounds as bf16 arithmetic does.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from dequant.dialect.walking import walk

from . import Pass

BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.maximumf", "arith.minimumf",
          "arith.maxnumf", "arith.minnumf")  # fmt: skip


def _is_bf16(t: ir.Type) -> bool:
    return isinstance(t, ir.BF16Type) or (isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, ir.BF16Type))


def _like(t: ir.Type, elem: ir.Type) -> ir.Type:
    return ir.VectorType.get(ir.VectorType(t).shape, elem) if isinstance(t, ir.VectorType) else elem


def _rewrite(op) -> bool:
    """Rewrite one op if it computes on bf16; whether it did."""
    name = op.operation.name
    f32 = ir.F32Type.get()
    operands = list(op.operands)
    results = list(op.results)
    if name in BINARY or name == "arith.negf":
        if not _is_bf16(results[0].type):
            return False
        wide = [arith.extf(_like(v.type, f32), v) for v in operands]
        attrs = {n: op.attributes[n] for n in op.attributes}
        value = ir.Operation.create(name, results=[_like(results[0].type, f32)], operands=wide, attributes=attrs).result
        new = arith.truncf(results[0].type, value)
    elif name in ("arith.sitofp", "arith.uitofp"):
        if not _is_bf16(results[0].type):
            return False
        as_f32 = ir.Operation.create(name, results=[_like(results[0].type, f32)], operands=operands).result
        new = arith.truncf(results[0].type, as_f32)
    elif name in ("arith.fptosi", "arith.fptoui", "arith.cmpf"):
        if not any(_is_bf16(v.type) for v in operands):
            return False
        wide = [arith.extf(_like(v.type, f32), v) if _is_bf16(v.type) else v for v in operands]
        attrs = {n: op.attributes[n] for n in op.attributes}
        new = ir.Operation.create(name, results=[results[0].type], operands=wide, attributes=attrs).result
    elif name == "arith.truncf" and _is_bf16(results[0].type) and not isinstance(_elem(operands[0].type), ir.F32Type):
        new = arith.truncf(results[0].type, arith.truncf(_like(operands[0].type, f32), operands[0]))
    elif name == "arith.extf" and _is_bf16(operands[0].type) and not isinstance(_elem(results[0].type), ir.F32Type):
        new = arith.extf(results[0].type, arith.extf(_like(operands[0].type, f32), operands[0]))
    else:
        return False
    results[0].replace_all_uses_with(new)
    return True


def _elem(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


def run(root) -> bool:
    found = []

    def visit(o):
        if o.name.startswith("arith."):
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            if _rewrite(op):
                op.erase()
    return True


PASS = Pass("dq-bf16-in-f32", "Compute bf16 arithmetic in f32, rounded to bf16 after each op (no bf16 libcalls)", run)
