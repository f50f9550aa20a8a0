"""What torch-onnx-dq-matmul-iree-cpu hands IREE: a kernel's `stream.executable` (`executable`:
the kernel body on IREE's bindings, one workgroup per `kernel.workgroups`, times up to
`kernel.row_groups` along the rows, or `kernel.apart_groups` from `kernel.APART_ROWS` rows, the row groups first in
the grid), a `flow.dispatch` of
it (`dispatch`) and its constants as `dense_resource`s (`resource`); and the loop of the passes
that make the stage's own nodes dispatches (`rewrite_nodes`) or, for x86, ONNX ops IREE lowers
too (`rewrite_x86_nodes`), and a dispatch of a row-by-row kernel in place of a node
(`dispatch_rows`). IREE's ops are created in
generic form (their dialects are not registered here).
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, builtin, func, tensor

from .kernels.target import Target
from .to_linalg import expand
from .torch_onnx import TO_BUILTIN, from_builtin, nodes, tensor_of


def _op(name: str, results=(), operands=(), attributes=None, regions: int = 0):
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attributes or {}, regions=regions)


def executable(kernel, module) -> str:
    """The `stream.executable` of `kernel` (a Kernel, Int8Kernel or Quantize) at the top of
    `module` (made once); its name, which is also its export's and function's."""
    name = kernel.name()
    for op in module.regions[0].blocks[0].operations:
        if op.name == "stream.executable" and ir.StringAttr(op.attributes["sym_name"]).value_bytes == name.encode():
            return name
    index = ir.IndexType.get()
    binding = ir.OpaqueType.get("stream", "binding")
    types = kernel.types()
    roles = list(types)  # the dispatch's tensor operands, then its results (kernel.results)
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        exe = _op("stream.executable", attributes={"sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private")}, regions=1)
    with ir.InsertionPoint(exe.regions[0].blocks.append()):
        export = _op("stream.executable.export", regions=1, attributes={
            "function_ref": ir.FlatSymbolRefAttr.get(name), "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("public")})  # fmt: skip
        most = getattr(kernel, "row_groups", 1)
        apart = (kernel.APART_ROWS, kernel.apart_groups) if hasattr(kernel, "APART_ROWS") and kernel.apart_groups > most else None
        split = most > 1 or apart is not None
        with ir.InsertionPoint(export.regions[0].blocks.append(index)) as at:
            one, columns = arith.constant(index, 1), arith.constant(index, kernel.workgroups)
            # the row groups first: IREE hands out workgroups in order, x fastest
            grid = [_row_groups(at.block.arguments[0], most, kernel.ROW_STEP, apart), columns] if split else [columns, one]
            _op("stream.return", operands=[*grid, one])
        inner = builtin.ModuleOp()
        with ir.InsertionPoint(inner.body):
            f = func.FuncOp(name, ir.FunctionType.get([binding] * len(roles) + [index], []))
            with ir.InsertionPoint(f.add_entry_block()):
                *bindings, m = f.arguments
                zero = arith.constant(index, 0)
                r0, rows = _rows_of_group(m, most, kernel.ROW_STEP, apart) if split else (zero, m)
                views = {}
                for role, b in zip(roles, bindings):
                    t = types[role]
                    # a row-indexed buffer (its dynamic first dim, the rows) from the group's first row
                    dims, at = ([rows], arith.muli(r0, arith.constant(index, _row_bytes(t)))) if t.is_dynamic_dim(0) else ([], zero)
                    views[role] = _op("stream.binding.subspan", [t], [b, at] + dims).result
                group = _op("stream.dispatch.workgroup.id", [index], attributes={"dimension": ir.IntegerAttr.get(index, 1 if split else 0)}).result
                kernel.emit_views(views, rows, group)
                func.ReturnOp([])
        _op("stream.executable.end")
    return name


def can_create_ops(root, pass_name: str) -> bool:
    """Whether the pass `pass_name` may create IREE's stream and flow ops under root (their
    dialects unregistered: creating one would abort without --allow-unregistered-dialect); an
    error at root's location where not."""
    if root.context.allow_unregistered_dialects:
        return True
    root.location.emit_error(f"{pass_name} creates IREE's stream and flow ops: allow unregistered dialects (--allow-unregistered-dialect)")
    return False


def rewrite_nodes(root, onnx_op: str, node: str, pass_name: str, rewrite) -> bool:
    """`rewrite(op, root)` of each `torch.operator` `onnx_op` under root (the stage's own node
    `node`, which has no other lowering): a node it refuses (returning why) is an error at its
    location naming the rule. False where any was refused, or where IREE's ops cannot be made."""
    found = nodes(root, onnx_op)
    if not found:
        return True
    if not can_create_ops(root, pass_name):
        return False
    ok = True
    for op in found:
        why = rewrite(op, root)
        if why is not None:
            op.location.emit_error(f"{node}: {why}")
            ok = False
    return ok


def rewrite_x86_nodes(root, onnx_op: str, pass_name: str, rewrite) -> bool:
    """`rewrite(op, root, target)` of each `torch.operator` `onnx_op` under root where the module
    is tagged for an x86 CPU with AVX2 (an ONNX op IREE lowers too: one it refuses keeps IREE's
    lowering). False where IREE's ops cannot be made."""
    target = Target.of(root)
    found = nodes(root, onnx_op) if target.x86_avx2 else []
    if found and not can_create_ops(root, pass_name):
        return False
    for op in found:
        rewrite(op, root, target)
    return True


def dispatch_rows(op, value: ir.Value, module, kernel, element: ir.Type, more) -> None:
    """Replace the one result of `op` (a torch tensor [..., L], L = kernel.length, as `value` is)
    by a dispatch of `kernel` over `value` as rows [R, L] of `element`s and the tensors `more()`
    makes, the result expanded back to [..., L]."""
    index = ir.IndexType.get()
    name = executable(kernel, module)
    tt = tensor_of(value.type)
    dims, rows = tt.shape, tt.rows
    length, lead = kernel.length, list(dims[:-1])
    with op.location, ir.InsertionPoint(op):
        shape = [ir.ShapedType.get_dynamic_size() if d is None else d for d in dims]
        values = _op(TO_BUILTIN, [ir.RankedTensorType.get(shape, element)], [value]).result
        rows_type = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size() if rows is None else rows, length], element)
        if not lead:  # one row
            flat = expand(values, [1, length], [[0, 1]])
        elif len(lead) > 1:
            flat = tensor.collapse_shape(rows_type, values, [list(range(len(lead))), [len(lead)]])
        else:
            flat = values
        rows_v = arith.constant(index, rows) if rows is not None else tensor.dim(flat, arith.constant(index, 0))
        y = dispatch(name, [flat, *more()], rows_v, [rows_type])[0]
        if not lead:
            y = tensor.collapse_shape(ir.RankedTensorType.get(shape, element), y, [[0, 1]])
        elif len(lead) > 1:
            sizes = [tensor.dim(values, arith.constant(index, i)) if d is None else d for i, d in enumerate(lead)]
            y = expand(y, sizes + [length], [list(range(len(lead))), [len(lead)]])
        done = from_builtin(y, op.results[0].type)
    op.results[0].replace_all_uses_with(done)
    op.erase()


def _row_groups(m, most: int, step: int, apart: tuple | None):
    """The row groups of a dispatch over m rows: ceil(m / step), 1 to `most`, or to apart[1]
    where m >= apart[0] (apart: given where apart[1] > most)."""
    index = ir.IndexType.get()
    c = lambda v: arith.constant(index, v)  # noqa: E731
    groups = arith.divui(arith.addi(m, c(step - 1)), c(step))
    top = c(most) if apart is None else arith.select(arith.cmpi(arith.CmpIPredicate.uge, m, c(apart[0])), c(apart[1]), c(most))
    return arith.maxui(arith.minui(groups, top), c(1))


def _rows_of_group(m, most: int, step: int, apart: tuple | None) -> tuple:
    """(first row, rows) of this workgroup's row group (workgroup id 0): ceil(m / groups) rounded
    up to a multiple of `step` each, the last fewer, any after it none."""
    index = ir.IndexType.get()
    groups = _row_groups(m, most, step, apart)
    each = arith.divui(arith.addi(m, arith.subi(groups, arith.constant(index, 1))), groups)
    each = arith.muli(arith.divui(arith.addi(each, arith.constant(index, step - 1)), arith.constant(index, step)), arith.constant(index, step))
    group = _op("stream.dispatch.workgroup.id", [index], attributes={"dimension": ir.IntegerAttr.get(index, 0)}).result
    r0 = arith.minui(arith.muli(group, each), m)
    return r0, arith.subi(arith.minui(arith.addi(r0, each), m), r0)


def _row_bytes(t: ir.MemRefType) -> int:
    """Bytes of one row (first-dim index) of a memref of static trailing dims."""
    return int(np.prod(t.shape[1:], dtype=np.int64)) * t.element_type.width // 8


def dispatch(name: str, args: list, rows_v, results: list) -> list:
    """A flow.dispatch of `name`'s export over `args` (tensors) and the row count `rows_v`, its
    workload: the `results` types' values. Every dynamic dim is the row count."""
    dynamic = [rows_v for v in args if not ir.RankedTensorType(v.type).has_static_shape]
    out_dims = [rows_v for t in results if not ir.RankedTensorType(t).has_static_shape]
    index = ir.IndexType.get()
    operands = args + [rows_v]
    op = _op("flow.dispatch", results, [rows_v] + operands + dynamic + out_dims, attributes={
        "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([name, name])]),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(operands), len(dynamic), len(out_dims)]),
        "tied_operands": ir.ArrayAttr.get([ir.IntegerAttr.get(index, -1)] * len(results))})  # fmt: skip
    return list(op.results)


def nhwc_codes(value: ir.Value, kernel) -> ir.Value:
    """A torch value of 8-bit codes [n, h, w, c] (a window kernel's x: kernels/window.py) as the
    signless builtin tensor a dispatch reads (`torch_c.to_builtin_tensor`)."""
    codes = ir.RankedTensorType.get([kernel.n, kernel.h, kernel.w, kernel.c], ir.IntegerType.get_signless(8))
    return _op(TO_BUILTIN, [codes], [value]).result


def resource(array: np.ndarray, element: ir.Type, name: str) -> ir.Value:
    """`array` as a constant `dense_resource` of `element`s (of the array's item size)."""
    width = element.width if isinstance(element, (ir.IntegerType, ir.FloatType)) else None
    assert width == 8 * array.itemsize, f"{name}: {array.dtype} is not {element}"
    attr = ir.DenseResourceElementsAttr.get_from_buffer(array, name, ir.RankedTensorType.get(list(array.shape), element))
    return arith.constant(attr.type, attr)


def table_constant(table: np.ndarray) -> ir.Value:
    """An epilogue's table of codes ([256] bytes, qdq_matmul.Lookup's) as a constant operand."""
    return arith.constant(ir.RankedTensorType.get([table.size], ir.IntegerType.get_signless(8)), ir.DenseElementsAttr.get(np.ascontiguousarray(table).view(np.int8)))
