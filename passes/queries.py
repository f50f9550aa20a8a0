"""IR queries the passes (and the tools) share: public functions, constant integers, loops."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, vector

from dequant.dialect.attributes import text
from dequant.dialect.walking import walk


def ops_named(root, name: str) -> list:
    """The ops named `name` nested in `root` (root included), in pre-order."""
    found = []

    def visit(o):
        if o.name == name:
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(root.operation, visit, ir.WalkOrder.PRE_ORDER)
    return found


def indexing_maps(g) -> list:
    """The indexing maps (ir.AffineMap) of a linalg structured op `g`, inputs first."""
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(g.attributes["indexing_maps"])]


def enclosing(op, name: str):
    """`op` itself or its nearest ancestor named `name` (an ir.Operation), or None."""
    m = op.operation if hasattr(op, "operation") else op
    while m is not None and m.name != name:
        m = m.parent
    return m


def public_functions(module) -> list:
    """The `func.func`s with a body and no private/nested visibility directly in `module` (an
    ir.Module or a builtin.module operation)."""
    op = module.operation
    if op.name != "builtin.module":
        return []
    return [
        f
        for f in op.regions[0].blocks[0].operations
        if f.operation.name == "func.func" and len(f.regions[0].blocks) and "sym_visibility" not in f.attributes
    ]


def function_name(f) -> str:
    return text(f.attributes["sym_name"])


def function_type(f) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)


def made_by(v: ir.Value, name: str):
    """The op named `name` whose result `v` is, or None (another op's, or a block argument)."""
    op = v.owner
    if isinstance(op, (ir.Operation, ir.OpView)) and op.name == name:
        return op
    return None


def constant_int(v: ir.Value) -> int | None:
    """The value of an `arith.constant` integer or index, else None."""
    owner = made_by(v, "arith.constant")
    if owner is None:
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def integer_value(v: ir.Value) -> int | None:
    """The integer of an `arith.constant`: a scalar (`constant_int`), or every element of a splat
    vector; else None."""
    if constant_int(v) is not None:
        return constant_int(v)
    owner = made_by(v, "arith.constant")
    if owner is None:
        return None
    attr = owner.operation.attributes["value"]
    if isinstance(attr, ir.DenseIntElementsAttr) and ir.DenseIntElementsAttr(attr).is_splat:
        return ir.IntegerAttr(ir.DenseIntElementsAttr(attr).get_splat_value()).value
    return None


def integer_lanes(v: ir.Value, depth: int = 8) -> list | None:
    """The lanes of an integer or index vector computed from constants alone (`arith.constant`,
    `vector.step`, `vector.broadcast`, `vector.shuffle`, `arith.index_cast`, `arith.addi`,
    `arith.subi`, `arith.muli`), as Python ints; else None."""
    if depth < 0 or not isinstance(v.type, ir.VectorType):
        return None
    n = ir.VectorType(v.type).shape[0] if ir.VectorType(v.type).rank == 1 else None
    o = v.owner
    if n is None or not isinstance(o, (ir.Operation, ir.OpView)):
        return None
    name = o.operation.name
    if name == "arith.constant":
        attr = o.operation.attributes["value"]
        if not isinstance(attr, ir.DenseIntElementsAttr):
            return None
        dense = ir.DenseIntElementsAttr(attr)
        if dense.is_splat:
            return [ir.IntegerAttr(dense.get_splat_value()).value] * n
        return [dense[i] for i in range(n)]
    if name == "vector.step":
        return list(range(n))
    if name == "vector.broadcast":
        c = constant_int(o.operands[0])
        return None if c is None else [c] * n
    if name == "arith.index_cast":
        return integer_lanes(o.operands[0], depth - 1)
    if name == "vector.shuffle":
        a, b = integer_lanes(o.operands[0], depth - 1), integer_lanes(o.operands[1], depth - 1)
        mask = list(ir.DenseI64ArrayAttr(o.operation.attributes["mask"]))
        return None if a is None or b is None else [(a + b)[m] for m in mask]
    ops = {"arith.addi": lambda x, y: x + y, "arith.subi": lambda x, y: x - y, "arith.muli": lambda x, y: x * y}
    if name in ops:
        a, b = integer_lanes(o.operands[0], depth - 1), integer_lanes(o.operands[1], depth - 1)
        return None if a is None or b is None else [ops[name](x, y) for x, y in zip(a, b)]
    return None


def terminator(block):
    """The last op of `block` (its terminator)."""
    return block.operations[len(block.operations) - 1]


def is_innermost(loop) -> bool:
    """Whether an scf.for's body holds no loop."""
    return not any(o.operation.name in ("scf.for", "scf.parallel") for o in loop.regions[0].blocks[0].operations)


PURE_PRODUCERS = ("arith.constant", "quant.scast", "tensor.bitcast")

# ops whose memref result views their first operand's buffer
MEMREF_VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.reshape")


def erase_dead(values, erasable=lambda o: o.name in PURE_PRODUCERS) -> None:
    """Erase the producers of `values` left without uses, and theirs in turn, among the ops
    `erasable` accepts (default: constants and casts): what a greedy rewrite would have cleaned
    up after a rewrite done by hand. The ops are collected first, then erased: an op reached
    twice is erased once."""
    ops, seen, work = [], set(), list(values)
    while work:
        o = work.pop().owner
        if not isinstance(o, (ir.Operation, ir.OpView)) or o.operation in seen or not erasable(o):
            continue
        seen.add(o.operation)
        ops.append(o)
        work.extend(o.operands)
    erased, changed = set(), True
    while changed:  # users before producers is not guaranteed: repeat until nothing is left to erase
        changed = False
        for i, o in enumerate(ops):
            if i not in erased and not any(True for r in o.results for _ in r.uses):
                o.erase()
                erased.add(i)
                changed = True


def splat_int(t: ir.VectorType, v: int) -> ir.Value:
    """An `arith.constant` of vector type `t` with every element the integer `v`."""
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(ir.VectorType(t).element_type, v)))


def concatenated(pieces: list) -> ir.Value:
    """The 1-D vectors `pieces` (at least one) joined in order, in pairs: a balanced tree of
    vector.shuffle, each mask as long as its two operands together. Any count and lengths: 3 or
    5 pieces (a tile of 48 or 80 bf16 values in 16-lane pieces) pair a joined vector with a
    shorter one, which a mask twice the first operand's length would index past."""
    while len(pieces) > 1:
        pairs = [(a, b, ir.VectorType(a.type).shape[0] + ir.VectorType(b.type).shape[0]) for a, b in zip(pieces[0::2], pieces[1::2])]
        pieces = [vector.shuffle(a, b, list(range(n))) for a, b, n in pairs] + (pieces[-1:] if len(pieces) % 2 else [])
    return pieces[0]


def element_bits(t: ir.Type) -> int | None:
    """The width of an integer or float type, or None for any other type."""
    for cls in (ir.FloatType, ir.IntegerType):
        try:
            return cls(t).width
        except (ValueError, TypeError):
            pass
    return None


def producer(op, match, depth: int):
    """The nearest op above `op` for which `match(op)` holds: among its operands' producers,
    breadth first, each visited once, at most `depth` ops up; or None."""
    frontier, seen = [op], set()
    for _ in range(depth):
        nxt = []
        for o in frontier:
            for v in o.operands:
                p = v.owner
                if isinstance(p, (ir.Operation, ir.OpView)) and p.operation not in seen:
                    if match(p):
                        return p
                    seen.add(p.operation)
                    nxt.append(p)
        frontier = nxt
    return None


def tagged_source(op, tag: str, depth: int = 8) -> ir.Value | None:
    """The result of the nearest op tagged `tag` above `op` (see `producer`), or None."""
    p = producer(op, lambda o: tag in o.attributes, depth)
    return None if p is None else p.results[0]
