"""dq-fold-nibble-casts: fold sub-byte truncate/extend pairs into shifts and masks on wide ints.

After dq-storage-abi and fusion, a 4-bit (or 2-bit) value is `trunci` of a byte and then
extended to i32; LLVM vectorizes `<N x i4>` poorly, so `extsi(trunci(b) : iK)` becomes
`(ext(b) << (W - K)) >>s (W - K)` and `extui(trunci(b) : iK)` becomes `ext(b) & (2^K - 1)`, with
no sub-byte type left. `sign_extend_in_bytes`, which dq-vectorize runs last, moves the signed
form's shifts back onto the byte where that is faster (its docstring).
"""

from __future__ import annotations

import numpy as np
from mlir import ir, rewrite
from mlir.dialects import arith, vector

from dequant.dialect.walking import walk

from . import Pass
from .lazy import llvm
from .queries import concatenated, erase_dead, integer_lanes, integer_value, made_by, splat_int

MULTISHIFT = "llvm.x86.avx512.pmultishift.qb.512"  # vpmultishiftqb zmm (control, data)


def _narrow_source(op):
    """(the wide value b, K) of `ext(trunci(b) : iK)` with K < 8, or None."""
    src = op.operands[0].owner
    if not isinstance(src, (ir.Operation, ir.OpView)) or src.operation.name != "arith.trunci":
        return None
    k = ir.IntegerType(op.operands[0].type).width
    return (src.operands[0], k) if k < 8 else None


def _widened(t: ir.Type, b: ir.Value, signed: bool) -> ir.Value:
    if ir.IntegerType(b.type).width >= ir.IntegerType(t).width:
        return b
    return arith.extsi(t, b) if signed else arith.extui(t, b)


def fold_extsi(op, rewriter) -> bool | None:
    found = _narrow_source(op)
    if found is None:
        return True
    byte, k = found
    t = op.results[0].type
    with rewriter.ip, op.location:
        shift = arith.constant(t, ir.IntegerType(t).width - k)
        value = arith.shrsi(arith.shli(_widened(t, byte, True), shift), shift)
    rewriter.replace_op(op, [value])
    return None


def fold_extui(op, rewriter) -> bool | None:
    found = _narrow_source(op)
    if found is None:
        return True
    byte, k = found
    t = op.results[0].type
    with rewriter.ip, op.location:
        value = arith.andi(_widened(t, byte, False), arith.constant(t, (1 << k) - 1))
    rewriter.replace_op(op, [value])
    return None


def run(op) -> bool:
    s = rewrite.RewritePatternSet(op.context)
    s.add("arith.extsi", fold_extsi)
    s.add("arith.extui", fold_extui)
    rewrite.apply_patterns_and_fold_greedily(op, s.freeze())
    return True


PASS = Pass("dq-fold-nibble-casts", "Fold sub-byte truncate/extend pairs into shifts and masks on wide integers", run)


def _element(t: ir.Type) -> ir.IntegerType | None:
    e = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    return ir.IntegerType(e) if isinstance(e, ir.IntegerType) else None


def sign_extend_in_bytes(root) -> None:
    """`(extsi(b) << c) >>s c` with b a byte (or a vector of bytes) and c = W - k, k < 8 (what
    `fold_extsi` made of a k-bit field) becomes `extsi((b << (8 - k)) >>s (8 - k))`: the field
    sign-extended within its byte, then widened. On x86 with GFNI the byte shifts are one
    `vgf2p8affineqb` pair per 64 bytes and the widening a plain `vpmovsxbd`, where the wide form
    shifts every 16 lanes twice: int4 blocked kernels faster on the cached-store path, the same
    speed in one-line non-temporal tiles (docs/performance.md#4-bit-fields-sign-extended-in-their-byte)."""
    found = []

    def visit(o):
        if o.name == "arith.shrsi":
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    for shr in found:
        shl = made_by(shr.operands[0], "arith.shli")
        if shl is None:
            continue
        c = integer_value(shr.operands[1])
        if c is None or integer_value(shl.operands[1]) != c:
            continue
        ext = made_by(shl.operands[0], "arith.extsi")
        if ext is None:
            continue
        byte = ext.operands[0]
        be, we = _element(byte.type), _element(shr.result.type)
        if be is None or we is None or be.width != 8 or not we.width - 8 < c < we.width:
            continue
        k = we.width - c
        with ir.InsertionPoint(shr), shr.location:
            bt = byte.type
            n = ir.IntegerAttr.get(be, 8 - k)
            amount = arith.constant(bt, ir.DenseElementsAttr.get_splat(bt, n) if isinstance(bt, ir.VectorType) else n)
            value = arith.extsi(shr.result.type, arith.shrsi(arith.shli(byte, amount), amount))
        shr.result.replace_all_uses_with(value)
        for dead in (shr, shl, ext):
            if not any(True for _ in dead.result.uses):
                dead.erase()


def _repeated_bytes(shuffle) -> tuple | None:
    """(b, k) of `vector.shuffle b, b [0 x k, 1 x k, ...]` on a vector of bytes: each byte k times."""
    if shuffle is None or shuffle.operands[0] != shuffle.operands[1]:
        return None
    b = shuffle.operands[0]
    n, e = ir.VectorType(b.type).shape[0], _element(b.type)
    mask = list(ir.DenseI64ArrayAttr(shuffle.attributes["mask"]))
    if e is None or e.width != 8 or not mask or len(mask) % n:
        return None
    k = len(mask) // n
    return (b, k) if mask == [i // k for i in range(len(mask))] else None


def _side_effect_free(o) -> bool:
    """The ops `fields_in_bytes` leaves unused (the repeated bytes, their widening and shifts, the
    shift vector's constants, steps and casts): none has side effects."""
    return o.name.startswith("arith.") or o.name in ("vector.shuffle", "vector.step", "vector.broadcast")


def _interleaved(fields: list) -> ir.Value:
    """[f_0[0], ..., f_k-1[0], f_0[1], ...] of k = 2^m vectors (interleave f_j with f_j+k/2, then
    those)."""
    while len(fields) > 1:
        half = len(fields) // 2
        fields = [vector.interleave(fields[i], fields[i + half]) for i in range(half)]
    return fields[0]


def _byte_fields(b: ir.Value, k: int, bits: int, mask: int, signed: bool) -> list:
    """The k fields of bytes `b`, each in its byte: signed, field j shifted to the top of the byte,
    then arithmetically down; unsigned, shifted to the bottom, then masked (the last needs no
    mask)."""
    made = {}

    def splat(v: int) -> ir.Value:
        if v not in made:
            made[v] = splat_int(b.type, v)
        return made[v]

    if signed:
        return [arith.shrsi(arith.shli(b, splat(8 - bits * (j + 1))) if j < k - 1 else b, splat(8 - bits)) for j in range(k)]
    fields = [arith.shrui(b, splat(bits * j)) if j else b for j in range(k)]
    return [arith.andi(f, splat(mask)) if j < k - 1 else f for j, f in enumerate(fields)]


def _fields(wide, ext_name: str, shifts) -> tuple | None:
    """(b, k) when `wide` = `ext(shuffle b [each byte k times])` (ext_name) and lane i of `shifts`
    is shifts(i % k); else None."""
    ext = made_by(wide, ext_name)
    repeated = ext and _repeated_bytes(made_by(ext.operands[0], "vector.shuffle"))
    if not repeated:
        return None
    b, k = repeated
    return (b, k) if shifts is not None and shifts == [shifts[i % k] for i in range(len(shifts))] else None


def _multishifted(b: ir.Value, bits: int, lanes: int, signed: bool, t: ir.Type) -> ir.Value:
    """The `lanes` fields of bytes `b` (`bits` each, lane i at bit bits * i of the bytes) as i32
    vector `t`, 16 lanes at a time: the qword holding their fields broadcast to 512 bits, one
    `vpmultishiftqb` putting field j's byte-wide window (the 8 bits ending at its last bit) at
    the top of i32 lane j, then one shift down by 32 - bits (arithmetic for a signed field)."""
    i8, i32, i64 = (ir.IntegerType.get_signless(w) for w in (8, 32, 64))
    qwords = vector.bitcast(ir.VectorType.get([ir.VectorType(b.type).shape[0] // 8], i64), b)
    window = ir.VectorType.get([64], i8)
    down = None
    controls, groups = {}, []
    for g in range(lanes // 16):
        q, first = divmod(bits * 16 * g, 64)  # the 16 fields' qword, their first bit in it
        if first not in controls:
            control = np.zeros(64, np.int8)
            control[3::4] = [(first + bits * (j + 1) - 8) % 64 for j in range(16)]  # byte 3 of lane j
            controls[first] = arith.constant(window, ir.DenseElementsAttr.get(control, type=window))
        data = vector.bitcast(window, vector.broadcast(ir.VectorType.get([8], i64), vector.extract(qwords, [], [q])))
        moved = llvm.call_intrinsic(window, MULTISHIFT, [controls[first], data], [], [])
        top = vector.bitcast(ir.VectorType.get([16], i32), moved)
        down = down or splat_int(top.type, 32 - bits)
        groups.append(arith.shrsi(top, down) if signed else arith.shrui(top, down))
    joined = concatenated(groups)
    assert joined.type == t
    return joined


def fields_in_bytes(root, multishift: bool = False) -> None:
    """A packed tile's fields, computed on each byte repeated per field and widened (`ext(shuffle
    b [each byte k times])`, lane i holding field i % k of byte i / k, the first field in the low
    bits), are computed on the bytes, then interleaved and widened once:
    - signed, `(extui(..) << s) >>s c` with lane shifts s = c - bits * (i % k), bits = W - c:
      `extsi(interleave(f_0, ..))`, f_j = `(b << (8 - bits - bits * j)) >>s (8 - bits)`;
    - unsigned, `(extui(..) >>u bits * (i % k)) & (2^bits - 1)`:
      `extui(interleave(f_0, ..))`, f_j = `(b >>u bits * j) & (2^bits - 1)`.
    k byte shifts for k fields (`vgf2p8affineqb` with GFNI), where the wide form shifts every 16
    lanes of i32: int4 blocked-32 packed faster (docs/performance.md#packed-fields-cut-from-their-bytes).

    With `multishift` (AVX-512 VBMI: dq-target-features' `dq.avx512vbmi`), an i32 result of a
    multiple of 16 lanes from whole qwords of bytes is made by `_multishifted` instead: one
    `vpmultishiftqb` (its 8 bytes broadcast from memory) and one shift per 16 lanes, no
    interleave, no widening shuffle (docs/performance.md, "Packed fields by vpmultishiftqb").
    Not where every use truncates the result (a packed zero point unpacked to bytes: the byte
    form stays in bytes)."""
    found = []

    def visit(o):
        if o.name in ("arith.shrsi", "arith.andi") and isinstance(o.result.type, ir.VectorType):
            found.append(o)
        return ir.WalkResult.ADVANCE

    walk(root, visit, ir.WalkOrder.PRE_ORDER)
    matched = []
    for top in found:
        c = integer_value(top.operands[1])
        shift = made_by(top.operands[0], "arith.shli" if top.name == "arith.shrsi" else "arith.shrui")
        if c is None or shift is None:
            continue
        width = _element(top.result.type).width
        bits = width - c if top.name == "arith.shrsi" else c.bit_length()
        lanes = integer_lanes(shift.operands[1])
        found_fields = _fields(shift.operands[0], "arith.extui", lanes)
        if not found_fields or bits * found_fields[1] != 8:
            continue
        b, k = found_fields
        signed = top.name == "arith.shrsi"
        if lanes[:k] != ([c - bits * j for j in range(k)] if signed else [bits * j for j in range(k)]):
            continue
        if not signed and c != (1 << bits) - 1:
            continue
        n = ir.VectorType(top.result.type).shape[0]
        wide = multishift and width == 32 and n % 16 == 0 and ir.VectorType(b.type).shape[0] % 8 == 0
        wide = wide and not all(u.owner.name == "arith.trunci" for u in top.result.uses)
        with ir.InsertionPoint(top), top.location:
            if wide:
                value = _multishifted(b, bits, n, signed, top.result.type)
            else:
                value = (arith.extsi if signed else arith.extui)(top.result.type, _interleaved(_byte_fields(b, k, bits, c, signed)))
            for tag in [a for a in top.attributes if a.startswith("dq.")]:  # tags (dq.field_code, dq.lookup_code): the value's
                value.owner.attributes[tag] = top.attributes[tag]
        top.result.replace_all_uses_with(value)
        matched.append(top)
    erase_dead([top.result for top in matched], _side_effect_free)  # once every match is rewritten: `found` holds no erased op
