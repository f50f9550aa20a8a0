"""dq-nontemporal-stores: for loops streaming more bytes than the last-level cache holds,
vectorize the innermost loop with non-temporal stores.

A kernel with plain stores reads every output cache line before writing it (read for ownership)
and pushes the cache's other data out; a dequantize writes 2-8x more bytes than it reads, so for
outputs past the cache that doubles most of its memory traffic. Non-temporal stores write around
the cache. LLVM's loop vectorizer refuses to vectorize a loop whose stores are marked
non-temporal unless it can prove them vector-aligned, so this pass vectorizes explicitly:

    scf.for %j = %lb to %ub step 1 { <loads at [.., %j]>, arith, memref.store %y, %out[.., %j] }
becomes
    scf.if (bytes of %out and of the inputs read at %j >= NONTEMPORAL_MIN_BYTES) {
      scf.for %j = %lb to %s step 1 { original body }   // %s: first element on a 64-byte line
      scf.for %j = %s to %s + (%ub - %s) / V * V step V {
        <vector.load at [.., %j]>, <arith on vector<V x T>>,
        vector.store %y, %out[.., %j] {nontemporal = true, alignment = 64} }   // V x elem = 64 bytes
      scf.for %j = %s + (%ub - %s) / V * V to %ub step 1 { original body }
    } else { original loop }

(a loop of constant trip count, a block, is not peeled: %s = %lb, stores unaligned).

Below the threshold (data that fits in cache is faster through it) the original loop runs and
LLVM vectorizes it as before. Runs on the loops `convert-linalg-to-loops` (and
`dq-strip-mine-blocks`) make; a loop it cannot vectorize (an index other than the loop counter in
the last position, a strided memref, an op other than arith and casts, the loop counter used as a
value) is left alone.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from . import Pass
from .queries import constant_int, is_innermost, trip_count

# Bytes streamed (the output plus the inputs read at the loop counter) from which the
# non-temporal loop runs: 1.5x the benchmark machine's 32 MiB L3. Measured there, one thread:
# int8 -> f32, 20 MiB: 2.5x slower non-temporal (it stays in L3); 40 MiB: 1.24x slower; 80 MiB:
# 1.29x faster; 160 MiB: 1.24x faster; int8 -> f16, 48 MiB: 1.17x faster.
NONTEMPORAL_MIN_BYTES = 48 << 20
VECTOR_BYTES = 64  # one cache line per store


_PURE = ("memref.load", "memref.dim", "affine.apply", "builtin.unrealized_conversion_cast")


def _inside(v: ir.Value, body: ir.Block) -> bool:
    """Whether `v` is defined in `body` (an op of it, or its argument)."""
    if isinstance(v, ir.BlockArgument):
        return v.owner == body
    return v.owner.operation.block == body


def _identity(memref_type: ir.Type) -> bool:
    """Row-major without offset: consecutive last indices are consecutive elements."""
    layout = ir.MemRefType(memref_type).layout
    if not isinstance(layout, ir.AffineMapAttr):
        return False
    m = layout.value
    return m == ir.AffineMap.get_identity(m.n_dims)


def _plan(body: ir.Block):
    """(store, varying values, memrefs read at the counter) when the loop body can be
    vectorized, else None."""
    iv = body.arguments[0]
    varying = {iv}
    store = None
    streamed = []
    ops = list(body.operations)[:-1]  # the scf.yield last
    for op in ops:
        name = op.operation.name
        operands = list(op.operands)
        dependent = any(o in varying for o in operands)
        if any(len(r.blocks) for r in op.regions):
            return None
        if name == "memref.load":
            indices = operands[1:]
            if not dependent:
                continue  # loop-invariant: stays a scalar load
            if not indices or indices[-1] != iv or any(i in varying for i in indices[:-1]):
                return None
            if not _identity(operands[0].type) or _inside(operands[0], body):
                return None
            varying.add(op.result)
            if operands[0] not in streamed:
                streamed.append(operands[0])
        elif name == "memref.store":
            indices = operands[2:]
            if store is not None or not indices or indices[-1] != iv or any(i in varying for i in indices[:-1]):
                return None
            if _inside(operands[1], body) or not _identity(operands[1].type):
                return None
            store = op
        elif not dependent:  # loop-invariant: cloned once per vector iteration, so side-effect free
            if not (name.startswith("arith.") or name in _PURE):
                return None
        elif name.startswith("arith.") or name == "builtin.unrealized_conversion_cast":
            if any(o == iv for o in operands) or any(isinstance(r.type, ir.IndexType) for r in op.results):
                return None  # the counter as a value would need a vector of indices
            if len(op.results) != 1:
                return None
            varying.add(op.result)
        else:
            return None
    if store is None:
        return None
    if any(op.operation.name == "memref.load" and op.operands[0] == store.operands[1] for op in ops):
        return None  # reads of the output: their order against the stores would change
    return store, varying, streamed


def _bits(t: ir.Type) -> int | None:
    for cls in (ir.FloatType, ir.IntegerType):
        try:
            return cls(t).width
        except (ValueError, TypeError):
            pass
    return None


def _static_bytes(t: ir.MemRefType) -> int:
    n = _bits(t.element_type) // 8
    for d in t.shape:
        n *= d
    return n


def _bytes_of(m: ir.Value) -> ir.Value:
    """The byte size of memref `m` (index), from its dims."""
    index = ir.IndexType.get()
    t = ir.MemRefType(m.type)
    size = arith.constant(index, _bits(t.element_type) // 8)
    for d in range(t.rank):
        size = arith.muli(size, _dim(m, d))
    return size


def _dim(m: ir.Value, d: int) -> ir.Value:
    """Dim `d` of memref `m` as an index value."""
    t = ir.MemRefType(m.type)
    index = ir.IndexType.get()
    return memref.dim(m, arith.constant(index, d)) if t.is_dynamic_dim(d) else arith.constant(index, t.shape[d])


def _vector_body(body: ir.Block, store, varying: set, width: int, new_body: ir.Block, aligned: bool) -> None:
    """Fill `new_body` (of a loop stepping by `width`) with the vector form of `body`."""
    iv = body.arguments[0]
    mapped = {iv: new_body.arguments[0]}
    broadcasts: dict = {}

    def vec_type(t: ir.Type) -> ir.Type:
        return ir.VectorType.get([width], t)

    def vec(v: ir.Value) -> ir.Value:
        if v in varying:
            return mapped[v]
        s = mapped.get(v, v)
        if s not in broadcasts:
            broadcasts[s] = vector.broadcast(vec_type(s.type), s)
        return broadcasts[s]

    for op in list(body.operations)[:-1]:
        name = op.operation.name
        operands = list(op.operands)
        if op == store:
            value = vec(operands[0])
            vector.store(value, mapped.get(operands[1], operands[1]), [mapped.get(o, o) for o in operands[2:]],
                         nontemporal=True, alignment=VECTOR_BYTES if aligned else None)  # fmt: skip
        elif len(op.results) == 1 and op.result in varying:
            if name == "memref.load":
                new = vector.load(vec_type(op.result.type), mapped.get(operands[0], operands[0]),
                                  [mapped.get(o, o) for o in operands[1:]]).owner  # fmt: skip
            else:
                attrs = {n: op.attributes[n] for n in op.attributes}
                new = ir.Operation.create(name, results=[vec_type(op.result.type)],
                                          operands=[vec(o) for o in operands], attributes=attrs)  # fmt: skip
            mapped[op.result] = new.result
        else:  # loop-invariant: the scalar op again
            new = op.operation.clone()
            for i, o in enumerate(operands):
                if o in mapped:
                    new.operands[i] = mapped[o]
            for old, r in zip(op.results, new.results):
                mapped[old] = r
    scf.YieldOp([])


def vectorize(loop) -> bool:
    """Version `loop` (an innermost scf.for stepping by 1) into the non-temporal vector form."""
    body = loop.regions[0].blocks[0]
    if len(loop.results) or len(body.arguments) != 1:
        return False
    planned = _plan(body)
    if planned is None:
        return False
    store, varying, streamed = planned
    bits = _bits(ir.MemRefType(store.operands[1].type).element_type)
    if bits is None or bits % 8 or VECTOR_BYTES % (bits // 8):
        return False
    width = VECTOR_BYTES // (bits // 8)
    moved = [store.operands[1]] + streamed
    if all(ir.MemRefType(m.type).has_static_shape for m in moved):
        if sum(_static_bytes(ir.MemRefType(m.type)) for m in moved) < NONTEMPORAL_MIN_BYTES:
            return False  # static arrays that fit in cache: the plain loop only
    index = ir.IndexType.get()
    target = store.operands[1]
    size = bits // 8
    # A loop of constant trip count (a block, from dq-strip-mine-blocks) is too short to peel to
    # a 64-byte boundary at every block: its stores stay unaligned (LLVM splits them into smaller
    # non-temporal stores). A row loop peels once per row and stores whole aligned lines.
    aligned = trip_count(loop) is None
    with ir.InsertionPoint(loop), loop.location:
        lb, ub = loop.operands[0], loop.operands[1]
        c = lambda v: arith.constant(index, v)  # noqa: E731
        total = _bytes_of(moved[0])
        for m in moved[1:]:
            total = arith.addi(total, _bytes_of(m))
        big = arith.cmpi(arith.CmpIPredicate.uge, total, c(NONTEMPORAL_MIN_BYTES))
        if aligned:
            # An output not aligned to its element size (possible for a numpy view) cannot be
            # peeled to a 64-byte boundary: the plain loop then.
            pointer = memref.extract_aligned_pointer_as_index(target)
            big = arith.andi(big, arith.cmpi(arith.CmpIPredicate.eq, arith.remui(pointer, c(size)), c(0)))
        branch = scf.IfOp(big, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            start = lb
            if aligned:  # peel up to the first element on a 64-byte boundary
                first = _linear(target, list(store.operands[2:-1]) + [lb])
                address = arith.addi(pointer, arith.muli(first, c(size)))
                gap = arith.remui(arith.subi(c(VECTOR_BYTES), arith.remui(address, c(VECTOR_BYTES))), c(VECTOR_BYTES))
                start = arith.minui(arith.addi(lb, arith.divui(gap, c(size))), ub)
                head = loop.clone(ir.InsertionPoint.current)
                head.operands[1] = start
            step = c(width)
            vend = arith.addi(start, arith.muli(arith.divui(arith.subi(ub, start), step), step))
            vloop = scf.ForOp(start, vend, step)
            with ir.InsertionPoint(vloop.body):
                _vector_body(body, store, varying, width, vloop.body, aligned)
            then_end = scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            else_end = scf.YieldOp([])
    rest = loop.clone(ir.InsertionPoint(then_end))
    rest.operands[0] = vend
    loop.move_before(else_end)
    return True


def _linear(m: ir.Value, indices: list) -> ir.Value:
    """The row-major linear index of `indices` in memref `m` (identity layout)."""
    linear = indices[0]
    for d in range(1, ir.MemRefType(m.type).rank):
        linear = arith.addi(arith.muli(linear, _dim(m, d)), indices[d])
    return linear


def _innermost_unit_loops(op) -> list:
    loops = []

    def visit(o):
        if o.name == "scf.for" and constant_int(o.operands[2]) == 1 and is_innermost(o):
            loops.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.POST_ORDER)
    return loops


def run(op) -> bool:
    for loop in _innermost_unit_loops(op):
        vectorize(loop)
    return True


PASS = Pass(
    "dq-nontemporal-stores",
    "Version innermost loops writing outputs past the cache into vector loops with non-temporal stores",
    run,
)
