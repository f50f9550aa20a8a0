"""dq-to-linalg: every dq op becomes one `linalg.generic` on tensors, arith in its body.

Each op is verified once, read in its canonical form (dialect/canonical.py), and lowered by the
one function `lower`: x through the identity map, the scale and zero point through their
canonical maps (never broadcast in memory), the scalar arithmetic from dialect/semantics.py.
Unsigned storage is cast to the signless type of its width before the generic (`tensor.bitcast`;
dq-storage-abi makes those casts disappear at function boundaries and constants), as upstream's
LowerQuantOps casts quantized storage first. OpenPPL's int4x4 packing iterates the output as
[X.dim0, 4, ...]: the nibble index is the size-4 dim, so its shift is loop-invariant.

Dynamic dims are checked at run time against the dims they are read along (passes/checks.py):
the generic runs only if they agree, so native code never reads or writes out of bounds; a
failed check is reported to the caller instead.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from dequant import dialect
from dequant.dialect import canonical, semantics
from dequant.dialect.elements import ELEMENTS, of_type

from . import Pass, checks

PARALLEL = linalg.IteratorType.parallel


class Shapes:
    """Index constants and tensor dims of one lowering, each made once."""

    def __init__(self):
        self._consts: dict = {}
        self._dims: dict = {}

    def index(self, v: int) -> ir.Value:
        if v not in self._consts:
            self._consts[v] = arith.constant(ir.IndexType.get(), v)
        return self._consts[v]

    def dim(self, t: ir.Value, d: int) -> ir.Value:
        key = (t, d)
        if key not in self._dims:
            self._dims[key] = tensor.dim(t, self.index(d))
        return self._dims[key]


def signless(value: ir.Value) -> ir.Value:
    """An unsigned integer tensor as the signless tensor of the same bits; others unchanged."""
    t = ir.RankedTensorType(value.type)
    e = t.element_type
    if isinstance(e, ir.IntegerType) and not ir.IntegerType(e).is_signless:
        return tensor.bitcast(ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(ir.IntegerType(e).width)), value)
    return value


def sizes_of(shapes: Shapes, x: ir.Value, y_type: ir.RankedTensorType, unpack: str) -> list:
    """The output's sizes: static ints, and x's dims (dim 0 times 4 for int4x4) where dynamic."""
    sizes = []
    for d in range(y_type.rank):
        if not y_type.is_dynamic_dim(d):
            sizes.append(y_type.shape[d])
            continue
        size = shapes.dim(x, d)
        if d == 0 and unpack == "int4x4":
            size = arith.muli(size, shapes.index(canonical.INT4X4))
        sizes.append(size)
    return sizes


def read_checks(shapes: Shapes, operand: ir.Value, kind: int, reads: tuple, sizes: list) -> list:
    """(holds, code) for each dynamic dim of a scale or zero point against what its map reads of
    the output (sizes: ints or index values); a static pair was checked by the verifier."""
    t = ir.RankedTensorType(operand.type)
    out = []
    for p, r in enumerate(reads):
        if not t.is_dynamic_dim(p) and (r.dim is None or isinstance(sizes[r.dim], int)):
            continue
        have = shapes.dim(operand, p)
        if r.dim is None:
            out.append((arith.cmpi(arith.CmpIPredicate.sge, have, shapes.index(1)), checks.encode(kind, p, checks.EMPTY)))
            continue
        n = sizes[r.dim]
        n = shapes.index(n) if isinstance(n, int) else n
        if r.block > 1:
            n = arith.ceildivui(n, shapes.index(r.block))
        out.append((arith.cmpi(arith.CmpIPredicate.eq, have, n), checks.encode(kind, p, r.dim)))
    return out


def shape_checks(shapes: Shapes, x: ir.Value, dest: ir.Value | None, y_type, unpack: str, sizes: list) -> list:
    """(holds, code) for x's dynamic dims against static output dims (dim 0 is 4 times x's with
    int4x4), and for the destination's dynamic dims against the output's sizes."""
    out = []
    xt = ir.RankedTensorType(x.type)
    for d in range(y_type.rank):
        if xt.is_dynamic_dim(d) and not y_type.is_dynamic_dim(d):
            have = shapes.dim(x, d)
            if d == 0 and unpack == "int4x4":
                have = arith.muli(have, shapes.index(canonical.INT4X4))
            out.append((arith.cmpi(arith.CmpIPredicate.eq, have, shapes.index(y_type.shape[d])), checks.encode(checks.DATA, d, d)))
    if dest is not None:
        for d in range(y_type.rank):
            if y_type.is_dynamic_dim(d):
                out.append((arith.cmpi(arith.CmpIPredicate.eq, shapes.dim(dest, d), sizes[d]), checks.encode(checks.DESTINATION, d, d)))
    return out


def _expr(r: canonical.Read, packed: bool):
    """The affine expression of a Read over the iteration dims; with int4x4 packing the
    iteration is (d0 = X row, d1 = nibble, d2... = output dims 1...), output row = 4*d0 + d1."""
    if r.dim is None:
        return ir.AffineConstantExpr.get(0)
    if not packed:
        e = ir.AffineDimExpr.get(r.dim)
        return e if r.block == 1 else ir.AffineFloorDivExpr.get(e, ir.AffineConstantExpr.get(r.block))
    if r.dim > 0:
        e = ir.AffineDimExpr.get(r.dim + 1)
        return e if r.block == 1 else ir.AffineFloorDivExpr.get(e, ir.AffineConstantExpr.get(r.block))
    if r.block % canonical.INT4X4 == 0:  # a block of whole X rows
        return ir.AffineFloorDivExpr.get(ir.AffineDimExpr.get(0), ir.AffineConstantExpr.get(r.block // canonical.INT4X4))
    row = ir.AffineExpr.get_add(ir.AffineExpr.get_mul(ir.AffineDimExpr.get(0), ir.AffineConstantExpr.get(4)), ir.AffineDimExpr.get(1))
    return row if r.block == 1 else ir.AffineFloorDivExpr.get(row, ir.AffineConstantExpr.get(r.block))


def destination(op) -> ir.Value | None:
    """The tensor a dq op's result is only materialized into (`bufferization.
    materialize_in_destination`), which the generic can then write directly; else None."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "bufferization.materialize_in_destination" or uses[0].operand_number != 0:
        return None
    dest = uses[0].owner.operands[1]
    return dest if dest.type == op.results[0].type and _dominates(dest, op) else None


def _dominates(value: ir.Value, op) -> bool:
    """Whether `value` is defined before `op` in its block (an argument of an enclosing block)."""
    if isinstance(value, ir.BlockArgument):
        return True
    block = op.operation.block
    for o in block.operations:
        if o == op.operation:
            return False
        if o == value.owner:
            return True
    return False


def lower(op, form: canonical.Form, operands: dict) -> ir.Value:
    """The linalg.generic computing dq op `op` (verified, in canonical `form`) from its data,
    scale and zero point values (`operands`, the zero point None when absent), writing into the
    op's destination where it has one."""
    x, scale, zp = operands["data"], operands["scale"], operands["zero_point"]
    y_type = ir.RankedTensorType(op.results[0].type)
    xe = of_type(ir.RankedTensorType(x.type).element_type)
    ze = of_type(ir.RankedTensorType(zp.type).element_type) if zp is not None else None
    packed = form.unpack == "int4x4"
    rank = y_type.rank
    loops = rank + 1 if packed else rank
    shapes = Shapes()
    sizes = sizes_of(shapes, x, y_type, form.unpack)
    dest = destination(op)  # the one tensor.empty-free form: bufferization writes it in place
    found = shape_checks(shapes, x, dest, y_type, form.unpack, sizes) + read_checks(shapes, scale, checks.SCALE, form.scale_map, sizes)
    if zp is not None:
        found += read_checks(shapes, zp, checks.ZERO_POINT, form.zp_map, sizes)
    ins = [signless(x), scale] + ([signless(zp)] if zp is not None else [])
    maps = [ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in range(loops) if not (packed and d == 1)])]
    maps.append(ir.AffineMap.get(loops, 0, [_expr(r, packed) for r in form.scale_map]))
    if zp is not None:
        maps.append(ir.AffineMap.get(loops, 0, [_expr(r, packed) for r in form.zp_map]))
    maps.append(ir.AffineMap.get_identity(loops))
    init = dest if dest is not None else tensor.empty(sizes, y_type.element_type)
    groups = [[0, 1]] + [[d + 1] for d in range(1, rank)]
    if packed:  # the output as [X rows, 4, ...]: an expanded view of the same buffer
        rows = sizes[0] // canonical.INT4X4 if isinstance(sizes[0], int) else shapes.dim(x, 0)
        iter_sizes = [rows, canonical.INT4X4] + sizes[1:]
        iter_type = ir.RankedTensorType.get([d if isinstance(d, int) else ir.ShapedType.get_dynamic_size() for d in iter_sizes], y_type.element_type)
        dynamic = [d for d in iter_sizes if not isinstance(d, int)]
        static = [d if isinstance(d, int) else ir.ShapedType.get_dynamic_size() for d in iter_sizes]
        init = tensor.expand_shape(iter_type, init, groups, dynamic, static)

    def compute() -> ir.Value:
        @linalg.generic(ins, [init], maps, [PARALLEL] * loops)
        def y(*args):
            shift = None
            if packed:
                nibble = arith.index_cast(semantics.i(32), linalg.IndexOp(1).result)
                shift = arith.muli(nibble, semantics.const_int(4))
            return semantics.dequantize_value(args[0], xe, args[1], args[2] if zp is not None else None, ze,
                                              y_type.element_type, mode=form.zero_point_mode, nibble_shift=shift)  # fmt: skip

        hoist_constants(y.owner)
        return y

    y = checks.guarded(found, compute, init, op)
    return tensor.collapse_shape(y_type, y, groups) if packed else y


def hoist_constants(generic) -> None:
    """Move the body's constants to the start of the enclosing function's body, one per value,
    as the greedy folder does with constants."""
    holder = generic.operation
    while holder.parent is not None and holder.parent.name not in ("func.func", "builtin.module"):
        holder = holder.parent
    block = holder.block
    hoisted = [o for o in block.operations if o.operation.name == "arith.constant"]
    first = next(iter(block.operations))
    for o in list(generic.regions[0].blocks[0].operations):
        if o.operation.name != "arith.constant":
            continue
        value = o.attributes["value"]
        same = next((h for h in hoisted if h.attributes["value"] == value), None)
        if same is not None:
            o.results[0].replace_all_uses_with(same.results[0])
            o.erase()
        else:
            o.move_before(first)
            hoisted.append(o)


def run(root) -> bool:
    found = dialect.verified(root)
    if found is None:
        return False
    for op, d, sig in found:
        dest = destination(op)
        with ir.InsertionPoint(op), op.location:
            y = lower(op, d.canonical(sig), d.by_role(op))
        if dest is not None:  # the generic wrote the destination: the materialization is done
            materialize = next(iter(op.results[0].uses)).owner
            materialize.results[0].replace_all_uses_with(y)
            materialize.erase()
        op.results[0].replace_all_uses_with(y)
        op.erase()
    return True


PASS = Pass("dq-to-linalg", "Lower dq ops to one linalg.generic each, on tensors, with arith in the body", run)
