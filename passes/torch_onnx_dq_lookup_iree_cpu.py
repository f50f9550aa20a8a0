"""torch-onnx-dq-lookup-iree-cpu: a table lookup of 8-bit codes that no kernel's epilogue took
(python/qdq_tables.py writes one where dq's kernel makes the codes; torch-onnx-dq-matmul-iree-cpu
and torch-onnx-dq-depthwise-iree-cpu take it into their epilogue, which runs first) becomes one
dispatch of dq's lookup kernel (passes/kernels/lookup.py), for IREE's llvm-cpu backend:

    %x = tensor.collapse_shape (torch_c.to_builtin_tensor %codes) -> [S] i8
    %y = flow.dispatch @dq_lookup_S(%x, %t, %s) -> [S] i8

with t the table as the kernels read it (qdq_matmul.Lookup). IREE's own lowering of the Gather
vectorizes it as masked gathers of single bytes where the dispatch's tiles are not whole
vectors, which took up to 100 ns a byte (docs/iree.md#activations-as-tables). A lookup of a
shape not static stays IREE's.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import dispatch, executable, table_constant
from .kernels.lookup import LookupKernel
from .qdq_matmul import lookup
from .to_linalg import expand


def _rewrite(cast, module) -> bool:
    """The lookup the Cast `cast` begins as a dispatch of the kernel; whether it was one."""
    codes = cast.operands[0]
    got = lookup(codes)
    tt = t.tensor_of(codes.type)
    if got is None or got.ops[-1] != cast or isinstance(tt, str) or None in tt.shape or not tt.shape:
        return False
    size = 1
    for d in tt.shape:
        size *= d
    kernel = LookupKernel(size)
    name = executable(kernel, module)
    i8, index = ir.IntegerType.get_signless(8), ir.IndexType.get()
    gather = got.ops[0]
    with cast.location, ir.InsertionPoint(gather):
        x = ir.Operation.create(t.TO_BUILTIN, results=[ir.RankedTensorType.get(list(tt.shape), i8)], operands=[codes]).result
        flat = tensor.collapse_shape(ir.RankedTensorType.get([size], i8), x, [list(range(len(tt.shape)))])
        y = dispatch(name, [flat, table_constant(got.table)], arith.constant(index, size), [ir.RankedTensorType.get([size], i8)])[0]
        done = t.from_builtin(expand(y, list(tt.shape), [list(range(len(tt.shape)))]), gather.results[0].type)
    gather.results[0].replace_all_uses_with(done)
    for op in got.ops:
        op.erase()
    return True


def run(root) -> bool:
    casts = [c for c in t.nodes(root, "onnx.Cast") if len(c.operands) == 1 and len(c.results) == 1]
    if not any(lookup(c.operands[0]) is not None for c in casts):
        return True
    if not root.context.allow_unregistered_dialects:  # creating IREE's ops would abort
        root.location.emit_error("torch-onnx-dq-lookup-iree-cpu creates IREE's stream and flow ops: allow unregistered dialects (--allow-unregistered-dialect)")
        return False
    for cast in casts:
        _rewrite(cast, root)
    return True


PASS = Pass("torch-onnx-dq-lookup-iree-cpu", "Rewrite the table lookups of 8-bit codes no kernel took into dispatches of dq's lookup kernel for IREE's llvm-cpu backend", run)
