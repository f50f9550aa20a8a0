"""dq-free-temporaries: free the buffers bufferization allocates for a kernel's temporaries.

One-shot bufferization turns a temporary tensor (a packed zero point unpacked, the shape operand
of a `tensor.reshape` viewing packed bytes per row) into a `memref.alloc` and frees nothing:
each call leaked it (8 KiB per call for an int4 zero point of 64 x 128, 16 bytes per call for
packed x). Upstream's `buffer-deallocation-pipeline` would free them, but it also makes every
public function return a buffer it owns: a copy of the destination the kernel writes in place
(`bufferization.clone`), allocated on every call.

The rule here is local: a `memref.alloc` whose uses, through view ops and the results of the
`scf.if`s that yield it, are all in its own block (or nested in that block's ops), and none of
them another terminator, a call or a store of the buffer itself, is freed (`memref.dealloc`)
just before its block's terminator, after every use. Any other allocation is left alone.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import memref

from . import Pass
from .queries import MEMREF_VIEWS, ops_named

ESCAPES = ("func.return", "scf.yield", "func.call", "memref.store", "llvm.call", "bufferization.to_tensor")


def _local(alloc) -> bool:
    """Whether every use of `alloc`'s buffer (through views) stays in its block and none lets it escape."""
    block = alloc.operation.block
    work = [alloc.results[0]]
    while work:
        v = work.pop()
        for use in v.uses:
            owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if owner.name == "scf.yield" and owner.parent is not None and owner.parent.name == "scf.if":
                work.append(owner.parent.results[use.operand_number])  # the if's result is this buffer
                owner = owner.parent
            elif owner.name in ESCAPES and not (owner.name == "memref.store" and use.operand_number != 0):
                return False
            if owner.name in MEMREF_VIEWS:
                work.extend(owner.results)
            o = owner
            while o.parent is not None and o.block != block:  # (a top-level op has no block)
                o = o.parent
            if o.parent is None:
                return False
    return True


def run(op) -> bool:
    for alloc in ops_named(op, "memref.alloc"):
        if not _local(alloc):
            continue
        block = alloc.operation.block
        end = list(block.operations)[-1]
        with ir.InsertionPoint(end), alloc.location:
            memref.dealloc(alloc.results[0])
    return True


PASS = Pass("dq-free-temporaries", "Free the buffers bufferization allocates for a kernel's temporaries (memref.dealloc before their block ends)", run)
