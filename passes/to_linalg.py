"""dq-to-linalg: lower dq ops to one `linalg.generic` each, on tensors, with arith in the body."""

from __future__ import annotations

from mlir import ir, rewrite
from mlir.dialects import arith, linalg, tensor

from dequant import dialect
from dequant.dialect import canonical, decode
from dequant.dialect.types import elem

from . import Pass, normalize

PARALLEL = "#linalg.iterator_type<parallel>"


def output_sizes(x: ir.Value, y_type: ir.RankedTensorType, unpack: str) -> list:
    """The output's sizes for `tensor.empty`: static ints, and x's dims (dim 0 times 4 when
    unpacking int4x4) where dynamic."""
    sizes = []
    for d in range(y_type.rank):
        if not y_type.is_dynamic_dim(d):
            sizes.append(y_type.shape[d])
            continue
        size = tensor.dim(x, arith.constant(ir.IndexType.get(), d))
        if d == 0 and unpack == "int4x4":
            size = arith.muli(size, arith.constant(ir.IndexType.get(), 4))
        sizes.append(size)
    return sizes


def _entry(expr: ir.AffineExpr):
    """A canonical map entry from an affine expression: ("dim", d), ("block", d, b), ("zero",)."""
    if isinstance(expr, ir.AffineDimExpr):
        return ("dim", expr.position)
    if isinstance(expr, ir.AffineConstantExpr) and expr.value == 0:
        return ("zero",)
    if isinstance(expr, ir.AffineFloorDivExpr) and isinstance(expr.lhs, ir.AffineDimExpr):
        if isinstance(expr.rhs, ir.AffineConstantExpr):
            return ("block", expr.lhs.position, expr.rhs.value)
    return None


def shape_guards(operand: ir.Value, m: ir.AffineMap, sizes: list) -> None:
    """`cf.assert` that each dynamic dim of a scale or zero point matches what its map reads
    from the output (sizes: ints or index values), so native code never reads out of bounds
    even when called without the Python checks (e.g. from C)."""
    from mlir.dialects import cf

    t = ir.RankedTensorType(operand.type)
    index = ir.IndexType.get()
    for p, expr in enumerate(m.results):
        entry = _entry(expr)
        static = not t.is_dynamic_dim(p)
        if entry is None or entry[0] == "zero" and static:
            continue
        if entry[0] != "zero" and static and isinstance(sizes[entry[1]], int):
            continue  # both static: the verifier checked them
        have = tensor.dim(operand, arith.constant(index, p))
        if entry[0] == "zero":
            ok = arith.cmpi(arith.CmpIPredicate.sge, have, arith.constant(index, 1))
            cf.assert_(ok, f"dq: dim {p} of a scale or zero point is empty")
            continue
        n = sizes[entry[1]]
        n = arith.constant(index, n) if isinstance(n, int) else n
        if entry[0] == "block":
            n = arith.ceildivui(n, arith.constant(index, entry[2]))
        ok = arith.cmpi(arith.CmpIPredicate.eq, have, n)
        cf.assert_(ok, f"dq: dim {p} of a scale or zero point does not match the output dim {entry[1]} it is read along")


def x_map(rank: int, unpack: str) -> ir.AffineMap:
    if unpack == "int4x4":
        return canonical.affine_map(rank, (("block", 0, 4),) + tuple(("dim", d) for d in range(1, rank)))
    return ir.AffineMap.get_identity(rank)


def body(sig, attrs, args, y_elem: ir.Type) -> ir.Value:
    """The scalar computation of the canonical form (see dialect/canonical.py)."""
    xv, sv = args[0], args[1]
    zv = args[2] if sig.operands["zero_point"] is not None else None
    compute = ir.F64Type.get() if str(y_elem) == "f64" else ir.F32Type.get()
    mode, unpack = attrs["zero_point_mode"], attrs["unpack"]
    subtract = zv if mode == "subtract" else None
    xe = elem(xv.type)
    if unpack == "int4x4":
        k = arith.remui(linalg.IndexOp(0).result, arith.constant(ir.IndexType.get(), 4))
        shift = arith.muli(arith.index_cast(decode.i(32), k), decode.const_int(4))
        q = arith.andi(arith.shrui(arith.extui(decode.i(32), xv), shift), decode.const_int(0xF))
        z = arith.andi(arith.extsi(decode.i(32), subtract), decode.const_int(0xF)) if subtract else decode.const_int(8)
        d = arith.sitofp(compute, arith.subi(q, z))
    elif xe.kind == "int":
        ze = elem(subtract.type) if subtract is not None else xe
        if subtract is not None and max(xe.bits, ze.bits) == 32:  # i32 may overflow
            d = decode.exact_difference(xv, xe, subtract, ze, compute)
        else:  # x - zero point is exact in i32
            q = decode.wide_int(xv, xe, 32)
            d = arith.subi(q, decode.wide_int(subtract, ze, 32)) if subtract is not None else q
            d = arith.sitofp(compute, d)
    else:
        d = decode.to_float(xv, compute)
        if subtract is not None:
            d = arith.subf(d, decode.to_float(subtract, compute))
    y = arith.mulf(d, decode.to_float(sv, compute))
    if zv is not None and mode == "add":
        y = arith.addf(y, decode.to_float(zv, compute))
    return y if y.type == y_elem else arith.truncf(y_elem, y)


def lower_dequantize(op, rewriter) -> bool | None:
    """`dq.dequantize` becomes one `linalg.generic` reading scale and zero point through its maps."""
    sig = canonical.OP.signature(op)
    if canonical.OP.check(sig):
        return True
    attrs = sig.attrs
    operands = list(op.operands)
    y_type = ir.RankedTensorType(op.results[0].type)
    rank = y_type.rank
    maps = [x_map(rank, attrs["unpack"]), attrs["scale_map"]]
    if len(operands) > 2:
        maps.append(attrs["zero_point_map"])
    maps.append(ir.AffineMap.get_identity(rank))
    with rewriter.ip, op.location:
        sizes = output_sizes(operands[0], y_type, attrs["unpack"])
        for operand, m in zip(operands[1:], maps[1:-1]):
            shape_guards(operand, m, sizes)
        init = tensor.empty(sizes, y_type.element_type)
        generic = linalg.GenericOp(
            [y_type],
            operands,
            [init],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank),
        )
        block = generic.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type for v in operands], y_type.element_type)
        with ir.InsertionPoint(block):
            linalg.YieldOp([body(sig, attrs, list(block.arguments), y_type.element_type)])
    rewriter.replace_op(op, generic.results)
    return None


def run(op) -> bool:
    if not dialect.verify(op):
        return False
    s = normalize.patterns(op.context)
    s.add(canonical.NAME, lower_dequantize)
    rewrite.apply_patterns_and_fold_greedily(op, s.freeze())
    return True


PASS = Pass("dq-to-linalg", "Lower dq ops to linalg.generic on tensors with arith in the body", run)
