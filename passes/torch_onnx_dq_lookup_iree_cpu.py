"""torch-onnx-dq-lookup-iree-cpu: a table lookup of 8-bit codes that no kernel's epilogue took
(python/qdq_tables.py writes one where dq's kernel makes the codes, or IREE's op a few;
torch-onnx-dq-matmul-iree-cpu and torch-onnx-dq-depthwise-iree-cpu take the kernels' into their
epilogue, which runs first) becomes one
dispatch of dq's lookup kernel (passes/kernels/lookup.py), for IREE's llvm-cpu backend:

    %x = tensor.collapse_shape (torch_c.to_builtin_tensor %codes) -> [S] i8
    %y = flow.dispatch @dq_lookup_S(%x, %t, %s) -> [S] i8

with t the table as the kernels read it (qdq_matmul.Lookup). IREE's own lowering of the Gather
vectorizes it as masked gathers of single bytes where the dispatch's tiles are not whole
vectors, which took up to 100 ns a byte (docs/iree.md#activations-as-tables). A lookup of a
shape not static stays IREE's.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, tensor

from . import Pass
from . import torch_onnx as t
from .iree_dispatch import can_create_ops, dispatch, executable, table_constant
from .kernels.lookup import LookupKernel
from .qdq_matmul import Lookup, lookup
from .to_linalg import expand


def _rewrite(got: Lookup, tt: t.TorchTensor, module) -> None:
    """The lookup `got` of codes of static type `tt` as a dispatch of the kernel."""
    size = math.prod(tt.shape)
    name = executable(LookupKernel(size), module)
    i8, index = ir.IntegerType.get_signless(8), ir.IndexType.get()
    cast, gather = got.ops[-1], got.ops[0]
    with cast.location, ir.InsertionPoint(gather):
        x = ir.Operation.create(t.TO_BUILTIN, results=[ir.RankedTensorType.get(list(tt.shape), i8)], operands=[cast.operands[0]]).result
        flat = tensor.collapse_shape(ir.RankedTensorType.get([size], i8), x, [list(range(len(tt.shape)))])
        y = dispatch(name, [flat, table_constant(got.table)], arith.constant(index, size), [ir.RankedTensorType.get([size], i8)])[0]
        done = t.from_builtin(expand(y, list(tt.shape), [list(range(len(tt.shape)))]), gather.results[0].type)
    gather.results[0].replace_all_uses_with(done)
    for op in got.ops:
        op.erase()


def _found(cast) -> tuple | None:
    """(the lookup the Cast `cast` begins, its codes' type) where the kernel takes it (codes of
    static shape), or None."""
    if len(cast.operands) != 1 or len(cast.results) != 1:
        return None
    got, tt = lookup(cast.operands[0]), t.tensor_of(cast.operands[0].type)
    if got is None or got.ops[-1] != cast or isinstance(tt, str) or None in tt.shape or not tt.shape:
        return None
    return got, tt


def run(root) -> bool:
    found = [f for c in t.nodes(root, "onnx.Cast") if (f := _found(c)) is not None]
    if not found:
        return True
    if not can_create_ops(root, "torch-onnx-dq-lookup-iree-cpu"):
        return False
    for got, tt in found:
        _rewrite(got, tt, root)
    return True


PASS = Pass("torch-onnx-dq-lookup-iree-cpu", "Rewrite the table lookups of 8-bit codes no kernel took into dispatches of dq's lookup kernel for IREE's llvm-cpu backend", run)
