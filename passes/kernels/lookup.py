"""The table lookup of 8-bit codes (`LookupKernel`), y[i] = t[x[i]] byte by byte, for a lookup
python/qdq_tables.py wrote that no kernel's epilogue took (torch-onnx-dq-lookup-iree-cpu): one
dispatch over the codes' bytes, split into contiguous ranges across workgroups. Scalar code of no
particular instruction set; every byte indexes t's 256 entries (docs/iree.md#activations-as-tables).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf

from .loops import Hoisted

CODES = 256  # a table's entries: one per 8-bit code (its byte)
WORKGROUPS = 8  # at most (as the QDQ kernels' WORKGROUP_TARGET)
PER_WORKGROUP = 4096  # bytes at least, a workgroup's share worth its dispatch


def entry(t: ir.Value, code: ir.Value) -> ir.Value:
    """The byte of table t ([256] bytes) at a code's byte (an i8 scalar), zero-extended: an index
    within t whatever the code."""
    return memref.load(t, [arith.index_cast(ir.IndexType.get(), arith.extui(ir.IntegerType.get_signless(32), code))])


@dataclass(frozen=True)
class LookupKernel:
    """The lookup of `size` bytes of codes through a table of 256 bytes."""

    size: int

    @property
    def workgroups(self) -> int:
        return max(1, min(WORKGROUPS, -(-self.size // PER_WORKGROUP)))

    def name(self) -> str:
        return f"dq_lookup_{self.size}"

    def types(self) -> dict:
        i8 = ir.IntegerType.get_signless(8)
        return {"x": ir.MemRefType.get([self.size], i8), "t": ir.MemRefType.get([CODES], i8), "y": ir.MemRefType.get([self.size], i8)}

    def emit_views(self, v: dict, m, workgroup) -> None:
        h = Hoisted()
        loop = scf.ForOp(*h.workgroup_rows(h.const(self.size), workgroup, self.workgroups), h.const(1))
        with ir.InsertionPoint(loop.body):
            i = loop.induction_variable
            memref.store(entry(v["t"], memref.load(v["x"], [i])), v["y"], [i])
            scf.YieldOp([])
