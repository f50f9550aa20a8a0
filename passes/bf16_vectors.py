"""dq-bf16-vectors-as-i16: bf16 vectors moved (stored, broadcast, shuffled) as i16 vectors of
the same bits.

LLVM's x86 backend has no bf16 vectors on targets without AVX512-BF16. It legalizes
`store <N x bfloat>` element by element (a scalar store per element, the vectorized loop's
advantage gone) and without its `!nontemporal` hint; and it legalizes `insertelement` and
`shufflevector` on bf16 vectors of some lengths (e.g. 7 lanes: a packed 4-bit row's fields) by
promoting the lanes to f32 and back, a call to compiler-rt's `__truncsfbf2`, which the JIT does
not load (found by fuzzing: "Symbols not found: __truncsfbf2"). None of these ops computes on
the values: on i16 vectors of the same bits they are exact, and a bitcast keeps the store whole
with its hint. Runs on the LLVM dialect, after convert-vector-to-llvm.
"""

from __future__ import annotations

from mlir import ir

from dequant.dialect.walking import walk

from . import Pass
from .lazy import llvm

MOVES = ("llvm.insertelement", "llvm.shufflevector")  # their results are bf16 vectors


def _bf16_vector(t: ir.Type) -> bool:
    return isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, ir.BF16Type)


def _as_i16(t: ir.Type) -> ir.Type:
    i16 = ir.IntegerType.get_signless(16)
    return ir.VectorType.get(ir.VectorType(t).shape, i16) if isinstance(t, ir.VectorType) else i16


def run(op) -> bool:
    stores, moves = [], []

    def visit(o):
        if o.name == "llvm.store" and _bf16_vector(o.operands[0].type):
            stores.append(o)
        elif o.name in MOVES and _bf16_vector(o.results[0].type):
            moves.append(o)
        return ir.WalkResult.ADVANCE

    walk(op, visit)
    for m in moves:
        with ir.InsertionPoint(m), m.location:
            operands = [llvm.bitcast(_as_i16(v.type), v) if _bf16_vector(v.type) or isinstance(v.type, ir.BF16Type) else v for v in m.operands]
            attrs = {name: m.attributes[name] for name in m.attributes}
            moved = ir.Operation.create(m.name, results=[_as_i16(m.results[0].type)], operands=operands, attributes=attrs)
            back = llvm.bitcast(m.results[0].type, moved.result)
        m.results[0].replace_all_uses_with(back)
        m.erase()
    for store in stores:
        value = store.operands[0]
        with ir.InsertionPoint(store), store.location:
            bits = llvm.bitcast(_as_i16(value.type), value)
        store.operands[0] = bits
    return True


PASS = Pass("dq-bf16-vectors-as-i16", "Move bf16 vectors as i16 (stores, inserts, shuffles): LLVM scalarizes or promotes bf16 vectors without AVX512-BF16", run)
