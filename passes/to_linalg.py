"""dq-to-linalg: every dq op becomes one `linalg.generic` on tensors, arith in its body.

Each op is verified once, read in its canonical form (dialect/canonical.py), and lowered by the
one function `lower`: x through the identity map, the scale and zero point through their
canonical maps (never broadcast in memory), the scalar arithmetic from dialect/semantics.py.
Unsigned storage is cast to the signless type of its width before the generic (`tensor.bitcast`;
dq-storage-abi makes those casts disappear at function boundaries and constants), as upstream's
LowerQuantOps casts quantized storage first. Packed data is read in place (`Split`): OpenPPL's
int4x4 iterates the output as [X rows, 4, ...], data held packed by `dq.unpack` as [..., bytes per
row, elements per byte] (when rows are whole bytes; else the elements, contiguous across rows,
unpacked into a byte each first: `flat_fields`), so the field's shift is loop-invariant in the
inner loops.

Dynamic dims are checked at run time against the dims they are read along (passes/checks.py):
the generic runs only if they agree, so native code never reads or writes out of bounds; a
failed check is reported to the caller instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, tensor

from dequant import dialect
from dequant.dialect import canonical, semantics, unpack
from dequant.dialect.attributes import text
from dequant.dialect.elements import ELEMENTS, of_type

from . import Pass, checks
from .lazy import linalg
from .queries import made_by
from .vectorize import LEAN_LOOPS



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

    def value(self, size) -> ir.Value:
        """A size (int or index value) as an index value."""
        return self.index(size) if isinstance(size, int) else size

    def count(self, sizes: list) -> ir.Value:
        """The element count of a tensor of `sizes` (ints or index values)."""
        n = self.index(1)
        for d in sizes:
            n = arith.muli(n, self.value(d))
        return n


@dataclass(frozen=True)
class Split:
    """Output dim `dim` iterated as (outer, k) with index = outer * factor + k: the data operand is
    a container tensor (x for int4x4, the packed bytes viewed per row otherwise) whose dim `dim`
    is `outer`, and bits [k * bits, (k + 1) * bits) of its element hold the value."""

    dim: int
    factor: int
    bits: int


def signless(value: ir.Value) -> ir.Value:
    """An unsigned integer tensor as the signless tensor of the same bits; others unchanged."""
    t = ir.RankedTensorType(value.type)
    e = t.element_type
    if isinstance(e, ir.IntegerType) and not ir.IntegerType(e).is_signless:
        return tensor.bitcast(ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(ir.IntegerType(e).width)), value)
    return value


# --- sizes and run-time checks ----------------------------------------------------------------


def sizes_of(shapes: Shapes, x: ir.Value, logical: list | None, y_type: ir.RankedTensorType, unpack_mode: str) -> list:
    """The output's sizes: static ints, and where dynamic x's dims (dim 0 times 4 for int4x4; the
    dims of dq.unpack, `logical`, for packed x)."""
    sizes = []
    for d in range(y_type.rank):
        if not y_type.is_dynamic_dim(d):
            sizes.append(y_type.shape[d])
        elif logical is not None:
            sizes.append(shapes.value(logical[d]))
        else:
            size = shapes.dim(x, d)
            if d == 0 and unpack_mode == "int4x4":
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
        size = shapes.value(sizes[r.dim])
        n = size if r.block == 1 else arith.ceildivui(size, shapes.index(r.block))
        holds = arith.cmpi(arith.CmpIPredicate.eq, have, n)
        # an empty dim reads nothing: one entry is accepted too (canonical.check_reads)
        empty = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, size, shapes.index(0)), arith.cmpi(arith.CmpIPredicate.eq, have, shapes.index(1)))
        out.append((arith.ori(holds, empty), checks.encode(kind, p, r.dim)))
    return out


def shape_checks(shapes: Shapes, x: ir.Value, y_type, unpack_mode: str) -> list:
    """(holds, code) for x's dynamic dims against static output dims (dim 0 is 4 times x's with
    int4x4)."""
    out = []
    xt = ir.RankedTensorType(x.type)
    for d in range(y_type.rank):
        if xt.is_dynamic_dim(d) and not y_type.is_dynamic_dim(d):
            have = shapes.dim(x, d)
            if d == 0 and unpack_mode == "int4x4":
                have = arith.muli(have, shapes.index(canonical.INT4X4))
            out.append((arith.cmpi(arith.CmpIPredicate.eq, have, shapes.index(y_type.shape[d])), checks.encode(checks.DATA, d, d)))
    return out


def destination_checks(shapes: Shapes, dest: ir.Value, sizes: list) -> list:
    """(holds, code) for the destination's dynamic dims against the output's sizes."""
    t = ir.RankedTensorType(dest.type)
    return [
        (arith.cmpi(arith.CmpIPredicate.eq, shapes.dim(dest, d), shapes.value(sizes[d])), checks.encode(checks.DESTINATION, d, d))
        for d in range(t.rank)
        if t.is_dynamic_dim(d)
    ]


def packed_checks(shapes: Shapes, bytes_: ir.Value, logical: list, bits: int) -> list:
    """(holds, code) that packed bytes are ceil(elements * bits / 8) long, where not static."""
    if not ir.RankedTensorType(bytes_.type).is_dynamic_dim(0) and all(isinstance(d, int) for d in logical):
        return []  # the verifier checked it
    want = arith.ceildivui(shapes.count(logical), shapes.index(8 // bits))
    return [(arith.cmpi(arith.CmpIPredicate.eq, shapes.dim(bytes_, 0), want), checks.encode(checks.PACKED, 0, 0))]


# --- indexing -----------------------------------------------------------------------------------


def read_expr(r: canonical.Read, split: Split | None):
    """The affine expression of a Read over the iteration dims (see Split)."""
    if r.dim is None:
        return ir.AffineConstantExpr.get(0)

    def divided(e, b):
        return e if b == 1 else ir.AffineFloorDivExpr.get(e, ir.AffineConstantExpr.get(b))

    if split is None or r.dim < split.dim:
        return divided(ir.AffineDimExpr.get(r.dim), r.block)
    if r.dim > split.dim:
        return divided(ir.AffineDimExpr.get(r.dim + 1), r.block)
    if r.block % split.factor == 0:  # a block of whole containers
        return divided(ir.AffineDimExpr.get(r.dim), r.block // split.factor)
    outer = ir.AffineExpr.get_mul(ir.AffineDimExpr.get(r.dim), ir.AffineConstantExpr.get(split.factor))
    return divided(ir.AffineExpr.get_add(outer, ir.AffineDimExpr.get(r.dim + 1)), r.block)


def split_operand(shapes: Shapes, operand: ir.Value, reads: tuple, split: Split) -> tuple:
    """(operand, its map's results) for a generic iterating the output with `split`. A dim read
    along the split dim in blocks smaller than the container (per element: b = 1, or b dividing
    the factor) is viewed as [outer, factor / b] (tensor.expand_shape), so it is read at
    (outer, k floordiv b): a plain or constant-stride read instead of the index outer * factor + k
    (e.g. a per-axis scale along packed int4 columns)."""
    t = ir.RankedTensorType(operand.type)
    exprs, view, groups = [], [], []
    for p, r in enumerate(reads):
        groups.append([len(view)])
        per = split.factor // r.block if r.dim == split.dim and r.block < split.factor and split.factor % r.block == 0 else 0
        if per and (t.is_dynamic_dim(p) or t.shape[p] % per == 0):  # (a static dim that does not split is never read split)
            n = shapes.dim(operand, p) if t.is_dynamic_dim(p) else t.shape[p]
            view += [n // per if isinstance(n, int) else arith.divui(n, shapes.index(per)), per]
            groups[-1].append(len(view) - 1)
            k = ir.AffineDimExpr.get(split.dim + 1)
            exprs += [ir.AffineDimExpr.get(split.dim), k if r.block == 1 else ir.AffineFloorDivExpr.get(k, ir.AffineConstantExpr.get(r.block))]
        else:
            view.append(shapes.dim(operand, p) if t.is_dynamic_dim(p) else t.shape[p])
            exprs.append(read_expr(r, split))
    if len(view) == t.rank:
        return operand, exprs
    return expand(operand, view, groups), exprs


def split_view(shapes: Shapes, init: ir.Value, sizes: list, split: Split, outer=None) -> tuple:
    """The output viewed as [..., outer, factor, ...] (tensor.expand_shape) and the groups that
    collapse it back (`outer`: the split dim's outer size where it is known as a value)."""
    groups = [[d + (d > split.dim)] if d != split.dim else [d, d + 1] for d in range(len(sizes))]
    if outer is None:
        outer = sizes[split.dim]
        outer = outer // split.factor if isinstance(outer, int) else arith.divui(outer, shapes.index(split.factor))
    return expand(init, sizes[: split.dim] + [outer, split.factor] + sizes[split.dim + 1 :], groups), groups


def expand(value: ir.Value, sizes: list, groups: list) -> ir.Value:
    """tensor.expand_shape of `value` to `sizes` (ints or index values)."""
    dyn = ir.ShapedType.get_dynamic_size()
    static = [d if isinstance(d, int) else dyn for d in sizes]
    result = ir.RankedTensorType.get(static, ir.RankedTensorType(value.type).element_type)
    return tensor.expand_shape(result, value, groups, [d for d in sizes if not isinstance(d, int)], static)


def packed_rows(shapes: Shapes, bytes_: ir.Value, sizes: list, per_byte: int) -> ir.Value:
    """Packed bytes viewed as [d0, ..., d(r-2), d(r-1) / per_byte] (rows of whole bytes): byte
    (..., j) holds elements (..., j * per_byte + k)."""
    last = sizes[-1] // per_byte if isinstance(sizes[-1], int) else arith.divui(sizes[-1], shapes.index(per_byte))
    view = sizes[:-1] + [last]
    dyn = ir.ShapedType.get_dynamic_size()
    want = ir.RankedTensorType.get([d if isinstance(d, int) else dyn for d in view], semantics.i(8))
    if len(sizes) == 1:
        return bytes_ if bytes_.type == want else tensor.cast(want, bytes_)
    # tensor.reshape, not expand_shape: one group of several dynamic dims does not lower
    shape = tensor.from_elements(ir.RankedTensorType.get([len(view)], ir.IndexType.get()), [shapes.value(d) for d in view])
    return tensor.reshape(want, bytes_, shape)


def linear_index(shapes: Shapes, sizes: list) -> ir.Value:
    """The row-major linear index of the current iteration of a generic over `sizes`."""
    index = None
    for d, n in enumerate(sizes):
        i = linalg.IndexOp(d).result
        index = i if index is None else arith.addi(arith.muli(index, shapes.value(n)), i)
    return index if index is not None else shapes.index(0)


def packed_field(shapes: Shapes, bytes_: ir.Value, index: ir.Value, bits: int) -> tuple:
    """(the byte holding element `index` of packed data, (its shift, bits)) at the insertion point."""
    per_byte = 8 // bits
    byte = tensor.extract(bytes_, [arith.divui(index, shapes.index(per_byte))])
    k = arith.index_cast(semantics.i(32), arith.remui(index, shapes.index(per_byte)))
    return byte, (arith.muli(k, semantics.const_int(bits)), bits)


def flat_fields(shapes: Shapes, bytes_: ir.Value, sizes: list, bits: int, init: ir.Value, value) -> ir.Value:
    """Packed `bytes_` (elements of `bits` bits, logical `sizes`) unpacked into `init` (a tensor
    of `sizes`), `value(byte, shift, bits)` per element, for rows that are not whole bytes (a row
    of an odd length of int4 starts mid-byte every other row). The elements are contiguous across
    rows, so the whole tensor is read as one row: its whole bytes by a [1, bytes, fields] generic
    (the form `by_rows` gives a row of whole bytes, which dq-vectorize vectorizes), the fields of
    an incomplete last byte (at most 3) at their linear index. Both write their slices of `init`
    viewed flat, so the result is `init`'s buffer after bufferization. `sizes` is not empty."""
    t = ir.RankedTensorType(init.type)
    per_byte = 8 // bits
    dyn, i8 = ir.ShapedType.get_dynamic_size(), semantics.i(8)
    flat_t = ir.RankedTensorType.get([dyn], t.element_type)
    n = shapes.count(sizes)
    nbytes = arith.divui(n, shapes.index(per_byte))
    whole = arith.muli(nbytes, shapes.index(per_byte))
    flat = init
    if t.rank > 1:
        collapsed = math.prod(t.shape) if t.has_static_shape else dyn
        flat = tensor.collapse_shape(ir.RankedTensorType.get([collapsed], t.element_type), init, [list(range(t.rank))])
    if flat.type != flat_t:
        flat = tensor.cast(flat_t, flat)

    row = expand(tensor.extract_slice(ir.RankedTensorType.get([dyn], i8), bytes_, [], [nbytes], [], [0], [dyn], [1]), [1, nbytes], [[0, 1]])
    dest = expand(tensor.extract_slice(flat_t, flat, [], [whole], [], [0], [dyn], [1]), [1, nbytes, per_byte], [[0, 1, 2]])
    byte_map = ir.AffineMap.get(3, 0, [ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)])

    def by_byte(byte, _):
        k = arith.index_cast(semantics.i(32), linalg.IndexOp(2).result)
        return value(byte, arith.muli(k, semantics.const_int(bits)), bits)

    y = generic([row], dest, [byte_map, ir.AffineMap.get_identity(3)], 3, by_byte)
    flat = tensor.insert_slice(tensor.collapse_shape(flat_t, y, [[0, 1, 2]]), flat, [], [whole], [], [0], [dyn], [1])

    def at_index(_):
        byte, (shift, width) = packed_field(shapes, bytes_, arith.addi(whole, linalg.IndexOp(0).result), bits)
        return value(byte, shift, width)

    rest = arith.subi(n, whole)
    tail = generic([], tensor.extract_slice(flat_t, flat, [whole], [rest], [], [dyn], [dyn], [1]), [ir.AffineMap.get_identity(1)], 1, at_index)
    flat = tensor.insert_slice(tail, flat, [whole], [rest], [], [dyn], [dyn], [1])
    if t.rank == 1:
        return flat if flat.type == t else tensor.cast(t, flat)
    # tensor.reshape, not expand_shape: one group of several dynamic dims does not lower
    shape = tensor.from_elements(ir.RankedTensorType.get([len(sizes)], ir.IndexType.get()), [shapes.value(d) for d in sizes])
    return tensor.reshape(t, flat, shape)


def generic(ins: list, init: ir.Value, maps: list, loops: int, body) -> ir.Value:
    """A parallel linalg.generic; its body's constants hoisted."""

    @linalg.generic(ins, [init], maps, [linalg.IteratorType.parallel] * loops)
    def y(*args):
        return body(*args)

    hoist_constants(y.owner)
    return y


def hoist_constants(generic_value) -> None:
    """Move the body's constants to the start of the enclosing function's body, one per value,
    as the greedy folder does with constants."""
    holder = generic_value.operation
    while holder.parent is not None and holder.parent.name not in ("func.func", "builtin.module"):
        holder = holder.parent
    block = holder.block
    hoisted = [o for o in block.operations if o.operation.name == "arith.constant"]
    first = next(iter(block.operations))
    for o in list(generic_value.regions[0].blocks[0].operations):
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


# --- the lowering -------------------------------------------------------------------------------


def field_value(e, byte: ir.Value, shift: ir.Value, bits: int, decode: bool) -> ir.Value:
    """Bits [shift, shift + bits) of i8 `byte`, an element of Element `e`, as one value: an
    integer's as i8 (sign-extended for a signed type), a float4's decoded to f32 (`decode`) or
    its code as i8 (which `semantics.to_float` decodes later)."""
    b = arith.andi(arith.shrui(arith.extui(semantics.i(32), byte), shift), semantics.const_int((1 << bits) - 1))
    if e.kind == "float":
        return semantics.decode_bits(b, e) if decode else arith.trunci(semantics.i(8), b)
    if e.signed:
        b = arith.shrsi(arith.shli(b, semantics.const_int(32 - bits)), semantics.const_int(32 - bits))
    return arith.trunci(semantics.i(8), b)


def zero_point_operand(shapes: Shapes, zp: ir.Value | None) -> tuple:
    """(the zero point operand, its Element). A packed zero point (dq.unpack's result) is
    unpacked first, into i8 values (f32 for float4): it is as small as the scale. The unpacking
    generic reads the bytes per row as the dequantize reads packed x (`by_rows`), which
    dq-vectorize vectorizes, or as one row of the whole tensor when rows are not whole bytes
    (`flat_fields`); a per-element read at the linear index stays scalar, a measurable part of a
    large call (docs/performance.md#packed-rows-that-are-not-whole-bytes)."""
    if zp is None:
        return None, None
    e = of_type(ir.RankedTensorType(zp.type).element_type)
    packed = made_by(zp, unpack.NAME)
    if packed is None:
        return zp, e
    bytes_, sizes = packed.operands[0], [shapes.value(d) if not isinstance(d, int) else d for d in unpack.dims_of(packed)]
    wide = semantics.i(8) if e.kind == "int" else ir.F32Type.get()
    init = tensor.empty(sizes, wide)
    rank = len(sizes)

    def value(byte: ir.Value, shift: ir.Value, bits: int) -> ir.Value:
        return field_value(e, byte, shift, bits, decode=True)

    def by_element(bytes_: ir.Value) -> ir.Value:
        return flat_fields(shapes, bytes_, sizes, e.bits, init, value)

    def at_index(bytes_: ir.Value) -> ir.Value:
        def body(_):
            byte, (shift, bits) = packed_field(shapes, bytes_, linear_index(shapes, sizes), e.bits)
            return value(byte, shift, bits)

        return generic([], init, [ir.AffineMap.get_identity(rank)], rank, body)

    def rows(container: ir.Value, split: Split) -> ir.Value:
        loops = rank + 1
        ct = ir.RankedTensorType(container.type)
        outer = shapes.dim(container, split.dim) if ct.is_dynamic_dim(split.dim) else None
        view, groups = split_view(shapes, init, sizes, split, outer)
        byte_map = ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in range(rank)])

        def body(byte, _):
            k = arith.index_cast(semantics.i(32), linalg.IndexOp(rank).result)
            return value(byte, arith.muli(k, semantics.const_int(split.bits)), split.bits)

        y = generic([container], view, [byte_map, ir.AffineMap.get_identity(loops)], loops, body)
        return tensor.collapse_shape(ir.RankedTensorType(init.type), y, groups)

    unpacked_zp = by_rows(shapes, bytes_, sizes, e.bits, init.type, rows, by_element, at_index, rows_hint(packed))
    return unpacked_zp, ELEMENTS["i8"] if e.kind == "int" else ELEMENTS["f32"]


def by_rows(shapes: Shapes, bytes_: ir.Value, sizes: list, bits: int, result_type: ir.Type, rows, by_element,
            at_index, hint: str | None = None) -> ir.Value:  # fmt: skip
    """The generic reading packed `bytes_` (elements of `bits` bits, logical `sizes`): `rows(view,
    split)` on the bytes viewed per row when each row is a whole number of bytes, else
    `by_element(bytes_)` (the elements unpacked as one row first, `flat_fields`); chosen at run
    time (scf.if) when the last dim is dynamic. A scalar is read by `at_index(bytes_)` (each
    element at its linear index: small code, slow). The unpack's `dq.rows` hint
    (dialect/unpack.py) trims what is compiled for the case the caller does not expect:
    "partial", `by_element` alone (correct for whole rows too); "whole", `at_index` in place of
    `by_element`."""
    if not sizes:
        return at_index(bytes_)
    per_byte = 8 // bits
    last = sizes[-1]
    if (isinstance(last, int) and last % per_byte) or (hint == unpack.PARTIAL_ROWS and not isinstance(last, int)):
        return by_element(bytes_)
    split = Split(len(sizes) - 1, per_byte, bits)
    if isinstance(last, int):
        return rows(packed_rows(shapes, bytes_, sizes, per_byte), split)
    whole = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(last, shapes.index(per_byte)), shapes.index(0))
    branch = scf.IfOp(whole, [result_type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([rows(packed_rows(shapes, bytes_, sizes, per_byte), split)])
    with ir.InsertionPoint(branch.else_block):
        if hint == unpack.WHOLE_ROWS:
            y = at_index(bytes_)
            y.owner.attributes[LEAN_LOOPS] = ir.UnitAttr.get()  # the hint says it does not run: compiled lean
        else:
            y = by_element(bytes_)
        scf.YieldOp([y])
    return branch.results[0]


def rows_hint(packed) -> str | None:
    """The `dq.rows` hint of a dq.unpack op, or None."""
    return text(packed.attributes[unpack.ROWS]) if unpack.ROWS in packed.attributes else None


def lower(op, form: canonical.Form, operands: dict) -> ir.Value:
    """The linalg.generic computing dq op `op` (verified, in canonical `form`) from its data,
    scale and zero point values (`operands`, the zero point None when absent or not read), writing into the
    op's destination where it has one. Data held packed by `dq.unpack` is read in place per row
    (a Split) when the last dim is a whole number of bytes; else its elements are unpacked into a
    byte each first (`flat_fields`, one row of the whole tensor) and read as int8 data is."""
    x, scale, zp = operands["data"], operands["scale"], operands["zero_point"]
    if not form.reads_zero_point:
        zp = None
    y_type = ir.RankedTensorType(op.results[0].type)
    element, rank = y_type.element_type, y_type.rank
    xe = of_type(ir.RankedTensorType(x.type).element_type)
    shapes = Shapes()
    packed = made_by(x, unpack.NAME)
    logical = unpack.dims_of(packed) if packed is not None else None
    sizes = sizes_of(shapes, x, logical, y_type, form.unpack)
    dest = destination(op)  # written in place by bufferization: no tensor.empty
    found = read_checks(shapes, scale, checks.SCALE, form.scale_map, sizes)
    if packed is not None:
        found = packed_checks(shapes, packed.operands[0], logical, xe.bits) + found
    else:
        found = shape_checks(shapes, x, y_type, form.unpack) + found
    if dest is not None:
        found += destination_checks(shapes, dest, sizes)
    zp, ze = zero_point_operand(shapes, zp)
    if zp is not None:
        found += read_checks(shapes, zp, checks.ZERO_POINT, form.zp_map, sizes)
    init = dest if dest is not None else tensor.empty(sizes, element)
    params = [signless(zp)] if zp is not None else []
    reads = [form.scale_map] + ([form.zp_map] if zp is not None else [])

    def dequantize(xv, sv, rest, field=None, int4x4=False, data_element=xe):
        zv = rest[0] if zp is not None else None
        return semantics.dequantize_value(xv, data_element, sv, zv, ze, element, mode=form.zero_point_mode, field=field, int4x4=int4x4)

    def plain(data: ir.Value, data_element) -> ir.Value:
        maps = [ir.AffineMap.get_identity(rank)] + [ir.AffineMap.get(rank, 0, [read_expr(r, None) for r in m]) for m in reads]
        return generic([data, scale] + params, init, maps + [ir.AffineMap.get_identity(rank)], rank,
                       lambda xv, sv, *rest: dequantize(xv, sv, rest, data_element=data_element))  # fmt: skip

    def split_read(container: ir.Value, split: Split, int4x4: bool) -> ir.Value:
        loops = rank + 1
        ct = ir.RankedTensorType(container.type)
        outer = shapes.dim(container, split.dim) if ct.is_dynamic_dim(split.dim) else None
        view, groups = split_view(shapes, init, sizes, split, outer)
        x_map = ir.AffineMap.get(loops, 0, [ir.AffineDimExpr.get(d) for d in range(loops) if d != split.dim + 1])
        operands = [split_operand(shapes, v, m, split) for v, m in zip([scale] + params, reads)]
        maps = [x_map] + [ir.AffineMap.get(loops, 0, exprs) for _, exprs in operands]

        def body(xv, sv, *rest):
            k = arith.index_cast(semantics.i(32), linalg.IndexOp(split.dim + 1).result)
            return dequantize(xv, sv, rest, field=(arith.muli(k, semantics.const_int(split.bits)), split.bits), int4x4=int4x4)

        y = generic([container] + [v for v, _ in operands], view, maps + [ir.AffineMap.get_identity(loops)], loops, body)
        return tensor.collapse_shape(ir.RankedTensorType(init.type), y, groups)

    def unpacked_first(bytes_: ir.Value) -> ir.Value:
        # rows not of whole bytes: each element unpacked into a byte of a temporary (flat_fields),
        # which the generic then reads as it reads int8 data (a float4 as its code)
        codes = flat_fields(shapes, bytes_, sizes, xe.bits, tensor.empty(sizes, semantics.i(8)), lambda b, shift, bits: field_value(xe, b, shift, bits, decode=False))
        return plain(codes, ELEMENTS["i8"] if xe.kind == "int" else xe)

    def at_index(bytes_: ir.Value) -> ir.Value:
        maps = [ir.AffineMap.get(rank, 0, [read_expr(r, None) for r in m]) for m in reads]

        def body(sv, *rest):
            byte, field = packed_field(shapes, bytes_, linear_index(shapes, sizes), xe.bits)
            return dequantize(byte, sv, rest, field=field)

        return generic([scale] + params, init, maps + [ir.AffineMap.get_identity(rank)], rank, body)

    def compute() -> ir.Value:
        if form.unpack == "int4x4":
            return split_read(signless(x), Split(0, canonical.INT4X4, 4), int4x4=True)
        if packed is None:
            return plain(signless(x), xe)
        return by_rows(shapes, packed.operands[0], sizes, xe.bits, init.type, lambda c, split: split_read(c, split, False),
                       unpacked_first, at_index, rows_hint(packed))  # fmt: skip

    return checks.guarded(found, compute, init, op)


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


def run(root) -> bool:
    found = dialect.verified(root)
    if found is None:
        return False
    unpacks = [op for op in dialect.dq_ops(root) if op.name == unpack.NAME]
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
    ok = True
    for u in unpacks:  # read in place by the dq ops above; any other reader has no lowering
        users = [use.owner for use in u.results[0].uses]
        if users:
            u.location.emit_error(f"'{unpack.NAME}' op result is read by '{users[0].name}': only dq ops read packed data")
            ok = False
        else:
            u.erase()
    return ok


PASS = Pass("dq-to-linalg", "Lower dq ops to one linalg.generic each, on tensors, with arith in the body", run)
