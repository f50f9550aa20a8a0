"""dq-check-lowerable: every tensor must have a memref form before bufferization.

Bufferization turns each tensor into a memref and asserts (aborting the process) on an element
type a memref cannot hold, such as `!quant.uniform`. This pass, first in dq-to-llvm, reports such a
tensor as an error at the op (or function) that holds it, naming the pass that would lower it.
dequant-opt also runs it before upstream one-shot-bufferize wherever that appears
(python/pipeline.py, GUARDS).
"""

from __future__ import annotations

from mlir import ir

from dequant.dialect.walking import walk

from . import Pass


def _element_of(t: ir.Type) -> ir.Type | None:
    if isinstance(t, ir.RankedTensorType):
        return ir.RankedTensorType(t).element_type
    if isinstance(t, ir.UnrankedTensorType):
        return ir.UnrankedTensorType(t).element_type
    return None


def _has_memref_form(elem: ir.Type, seen: dict) -> bool:
    key = str(elem)  # a cache key only; the answer comes from the type builder
    if key not in seen:
        try:
            ir.MemRefType.get([1], elem)
            seen[key] = True
        except ir.MLIRError:
            seen[key] = False
    return seen[key]


def run(root) -> bool:
    seen: dict = {}
    ok = True

    def bad(types) -> ir.Type | None:
        for t in types:
            elem = _element_of(t)
            if elem is not None and not _has_memref_form(elem, seen):
                return t
        return None

    def visit(o):
        nonlocal ok
        types = [r.type for r in o.results] + [a.type for region in o.regions for block in region.blocks for a in block.arguments]
        attr = o.attributes["function_type"] if "function_type" in o.attributes else None
        signature = ir.TypeAttr(attr).value if isinstance(attr, ir.TypeAttr) else None
        if isinstance(signature, ir.FunctionType):  # a declaration's too (not llvm.func's LLVM type)
            types += list(signature.inputs) + list(signature.results)
        found = bad(types)
        if found is not None:
            o.location.emit_error(
                f"cannot lower a tensor of {_element_of(found)}: it has no memref form (lower quant types first: "
                "quant-to-dq, or upstream lower-quant-ops)"
            )
            ok = False
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    return ok


PASS = Pass("dq-check-lowerable", "Report tensors whose element type has no memref form (bufferization would abort)", run)
