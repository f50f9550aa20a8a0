"""The scalar semantics of every dq op: one function, `dequantize_value`, builds the arithmetic of
one output element as arith IR at the current insertion point (the body of the lowering's
`linalg.generic`; the granularities differ only in the generic's indexing maps).

docs/semantics.md#arithmetic: x - zero point is exact (integers widened to i32; where a 32-bit
value makes the difference overflow i32, it is taken in 16-bit halves and rounded once, see
`exact_difference`), converted once to f32 (f64 for an f64 output), multiplied once by the scale
converted to that type, rounded once to the output type. Float8/float4/e8m0 values are decoded to
f32 from their bits with selects only, so that loops over them vectorize.

Storage values arrive as signless integers of their width (the lowering casts unsigned tensors
to signless ones before the generic); an `Element` says how to read them.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith

from .elements import Element, of_type

# Tags for dq-vectorize's table lookup of a 4-bit float (passes/vectorize.py, `lookups`): LOOKUP
# on the op yielding the decoded f32 value holds the 8 magnitudes by code & 7 (the sign is bit 3
# of the code); CODE marks the op yielding the code. Where no vectorization happens, they are inert.
LOOKUP = "dq.lookup"
CODE = "dq.lookup_code"
# On the op yielding a packed field (its low `width` bits are the element's code, the attribute's
# value): dq-vectorize's per-tile tables (passes/vectorize_x86.py, `tables`). The field lies within its
# container (shift + width <= the container's bits), which lets `tables` compute the code in the
# container's width.
FIELD_CODE = "dq.field_code"


def i(bits: int) -> ir.Type:
    return ir.IntegerType.get_signless(bits)


def const_int(value: int, bits: int = 32) -> ir.Value:
    return arith.constant(i(bits), value)


def const_float(value: float, type_: ir.Type) -> ir.Value:
    return arith.constant(type_, value)


def dequantize_value(x: ir.Value, xe: Element, scale: ir.Value, zero_point: ir.Value | None, ze: Element | None,
                     out: ir.Type, *, mode: str = "subtract", field: tuple | None = None,
                     int4x4: bool = False) -> ir.Value:  # fmt: skip
    """One output element.

    - x: the stored value (signless integer of its width, or the float8/float4 value), of element
      `xe`. With `field` = (shift, bits), x is a container (i8, i16) whose bits [shift, shift +
      bits) hold the element (packed sub-byte data; shift an i32 value).
    - int4x4: OpenPPL's packing: the field is an unsigned nibble with an implicit zero point 8,
      an integer zero point read as `zp & 0xF`.
    - scale: the scale (any float type); zero_point: None, or the zero point of element `ze`
      (signless storage), subtracted exactly (mode "subtract") or, a float, added after scaling
      (mode "add").
    - out: the output element type (f16, bf16, f32, f64)."""
    compute = ir.F64Type.get() if isinstance(out, ir.F64Type) else ir.F32Type.get()
    subtract = zero_point if mode == "subtract" else None
    bits = q = None
    if field is not None:
        shift, width = field
        wide = arith.extui(i(32), x)
        if xe.kind == "int" and xe.signed and not int4x4:  # the field's top bit to bit 31, then back with its sign
            q = arith.shrsi(arith.shli(wide, arith.subi(const_int(32 - width), shift)), const_int(32 - width))
        bits = arith.andi(arith.shrui(wide, shift), const_int((1 << width) - 1)) if q is None else q
        bits.owner.attributes[FIELD_CODE] = ir.IntegerAttr.get(i(32), width)
    if int4x4:
        z = arith.andi(arith.extsi(i(32), subtract), const_int(0xF)) if subtract is not None else const_int(8)
        d = arith.sitofp(compute, arith.subi(bits, z))
    elif bits is not None and xe.kind == "int":  # a packed integer: its value in i32
        q = bits  # a signed field arrives sign-extended
        if subtract is not None and ze.bits == 32:  # the difference may overflow i32
            d = exact_difference(q, xe, subtract, ze, compute)
        else:
            d = arith.sitofp(compute, arith.subi(q, wide_int(subtract, ze, 32)) if subtract is not None else q)
    elif bits is not None:  # a packed float4
        d = decode_bits(bits, xe)
        if compute != d.type:
            d = arith.extf(compute, d)
        if subtract is not None:
            d = arith.subf(d, to_float(subtract, ze, compute))
    elif xe.kind == "int":
        if subtract is not None and max(xe.bits, ze.bits) == 32:  # the difference may overflow i32
            d = exact_difference(x, xe, subtract, ze, compute)
        else:  # exact in i32
            q = wide_int(x, xe, 32)
            d = arith.subi(q, wide_int(subtract, ze, 32)) if subtract is not None else q
            d = arith.sitofp(compute, d)
    else:
        d = to_float(x, xe, compute)
        if subtract is not None:
            d = arith.subf(d, to_float(subtract, ze, compute))
    y = arith.mulf(d, to_float(scale, of_type(scale.type), compute))
    if zero_point is not None and mode == "add":
        y = arith.addf(y, to_float(zero_point, of_type(zero_point.type), compute))
    return y if y.type == out else arith.truncf(out, y)


def wide_int(v: ir.Value, e: Element, width: int) -> ir.Value:
    """A signless integer storage value widened exactly to `width` bits."""
    if e.bits == width:
        return v
    return arith.extsi(i(width), v) if e.signed else arith.extui(i(width), v)


def exact_difference(x: ir.Value, xe: Element, z: ir.Value, ze: Element, target: ir.Type) -> ir.Value:
    """x - z for integers of up to 32 bits (x as storage of `xe`, or its value already in i32), rounded once to the float `target` (f32 or f64), with
    i32 and `target` arithmetic only: what sitofp of the exact i64 difference gives, without i64
    lanes (packed i64 -> f32 conversion needs AVX-512DQ; LLVM scalarizes it on AVX2).

    Each value splits as v = hi + lo, lo = v & 0xFFFF (0 .. 2^16 - 1), hi = v - lo (a multiple of
    2^16, at most 16 significant bits: exact in f32). hi_x - hi_z is a multiple of 2^16 below 2^33
    in magnitude (17 significant bits): exact; lo_x - lo_z lies in (-2^16, 2^16): exact in i32 and
    f32. Their sum is x - z, rounded once by the last addition. For x of 16 bits or fewer,
    x - lo_z lies in (-2^17, 2^16): exact, and (x - lo_z) - hi_z rounds once."""
    mask, high = const_int(0xFFFF), const_int(-0x10000)

    def split(v32: ir.Value, e: Element):  # (lo as i32, hi converted to `target`)
        lo, hi = arith.andi(v32, mask), arith.andi(v32, high)
        return lo, arith.sitofp(target, hi) if e.signed else arith.uitofp(target, hi)

    x32 = x if x.type == i(32) else wide_int(x, xe, 32)  # a packed field arrives in i32
    z32 = wide_int(z, ze, 32)
    z_lo, z_hi = split(z32, ze)
    if xe.bits <= 16:
        return arith.subf(arith.sitofp(target, arith.subi(x32, z_lo)), z_hi)
    x_lo, x_hi = split(x32, xe)
    return arith.addf(arith.subf(x_hi, z_hi), arith.sitofp(target, arith.subi(x_lo, z_lo)))


def minifloat_to_f32(v: ir.Value, e: Element) -> ir.Value:
    """A float8/float4/e8m0 value (or its signless bits) as f32."""
    bits = v if isinstance(v.type, ir.IntegerType) else arith.bitcast(i(e.bits), v)
    return decode_bits(arith.extui(i(32), bits), e)


def decode_bits(b: ir.Value, e: Element) -> ir.Value:
    """The f32 value of a float8/float4/e8m0 whose bits are the low bits of i32 `b` (NaN and Inf
    per format)."""
    f32 = ir.F32Type.get()
    layout = e.minifloat
    E, M = layout.exp_bits, layout.man_bits
    if e.bits == 8 and E <= 5 and (E < 5 or layout.nan == "ieee"):
        return _via_f16(b, e)
    exp = arith.andi(arith.shrui(b, const_int(M)) if M else b, const_int((1 << E) - 1))
    if layout.nan == "e8m0":  # 2^(e-127); e == 0 is the f32 subnormal 2^-127; e == 255 is NaN
        normal = arith.bitcast(f32, arith.shli(exp, const_int(23)))
        value = arith.select(_eq(exp, 0), const_float(2.0**-127, f32), normal)
        return arith.select(_eq(exp, 255), const_float(float("nan"), f32), value)
    man = arith.andi(b, const_int((1 << M) - 1))
    sign = arith.andi(arith.shrui(b, const_int(E + M)), const_int(1))
    rebias = arith.addi(exp, const_int(127 - layout.bias))
    normal = arith.bitcast(f32, arith.ori(arith.shli(rebias, const_int(23)), arith.shli(man, const_int(23 - M))))
    subnormal = arith.mulf(arith.uitofp(f32, man), const_float(2.0 ** (1 - layout.bias - M), f32))
    magnitude = arith.select(_eq(exp, 0), subnormal, normal)
    value = arith.select(_eq(sign, 1), arith.negf(magnitude), magnitude)
    if layout.nan in ("fn", "fnuz"):
        return _nan_pattern(b, e, value)
    if layout.nan == "ieee":  # exponent all ones: Inf with a zero mantissa, NaN otherwise
        inf = arith.select(_eq(sign, 1), const_float(float("-inf"), f32), const_float(float("inf"), f32))
        special = arith.select(_eq(man, 0), inf, const_float(float("nan"), f32))
        return arith.select(_eq(exp, (1 << E) - 1), special, value)
    if e.bits == 4 and isinstance(b.owner, (ir.Operation, ir.OpView)):  # no NaN, no Inf: 8 magnitudes, a sign bit
        magnitudes = np.arange(8, dtype=np.uint8).view(e.dtype).astype(np.float32)
        value.owner.attributes[LOOKUP] = ir.DenseElementsAttr.get(magnitudes, type=ir.VectorType.get([8], f32))
        b.owner.attributes[CODE] = ir.UnitAttr.get()
    return value


def _via_f16(b: ir.Value, e: Element) -> ir.Value:
    """decode_bits of a float8 through f16, whose exponent field holds the format's (E <= 5):
    the sign to bit 15 and the exponent and mantissa bits below it, as the top bits of f16's
    exponent and mantissa fields, give f16 value v * 2^(bias - 15) for every normal and subnormal
    value v (one spacing of the exponent field in both), so v is that f16 value, widened to f32
    (exact), times 2^(15 - bias) (exact: a power of two, within f32's range). With 5 exponent bits
    and IEEE specials (e5m2) the pattern is f16's own, infinities and NaNs included. Else the
    format's NaN pattern is mapped to NaN after. On x86 with F16C (`vcvtph2ps`) this is about half
    the vector instructions of the field-by-field decode below (docs/performance.md)."""
    layout = e.minifloat
    E, M = layout.exp_bits, layout.man_bits
    f16, f32, i16 = ir.F16Type.get(), ir.F32Type.get(), i(16)
    h = arith.trunci(i16, b)
    if M == 2:  # sign, exponent and mantissa all move by 8: f16's top byte
        bits = arith.shli(h, const_int(8, 16))
    else:
        magnitude = arith.shli(arith.andi(h, const_int(0x7F, 16)), const_int(10 - M, 16))
        bits = arith.ori(magnitude, arith.shli(arith.andi(h, const_int(0x80, 16)), const_int(8, 16)))
    value = arith.extf(f32, arith.bitcast(f16, bits))
    if layout.bias != 15:
        value = arith.mulf(value, const_float(2.0 ** (15 - layout.bias), f32))
    return _nan_pattern(b, e, value)  # "ieee" with E = 5: f16's own infinities and NaNs


def _nan_pattern(b: ir.Value, e: Element, value: ir.Value) -> ir.Value:
    """`value` (the f32 decode of bits `b`), NaN where `b` is the format's NaN pattern for the
    formats without infinities ("fn": S.1111.111; "fnuz": 1.0000.000, negative zero's pattern);
    `value` itself for the others."""
    width = e.minifloat.exp_bits + e.minifloat.man_bits
    if e.minifloat.nan == "fn":
        is_nan = _eq(arith.andi(b, const_int((1 << width) - 1)), (1 << width) - 1)
    elif e.minifloat.nan == "fnuz":
        is_nan = _eq(b, 1 << width)
    else:
        return value
    return arith.select(is_nan, const_float(float("nan"), ir.F32Type.get()), value)


def to_float(v: ir.Value, e: Element, target: ir.Type) -> ir.Value:
    """A float scalar (builtin, or a minifloat given as its value or its signless bits) as `target`."""
    if e.is_minifloat:
        v = minifloat_to_f32(v, e)
    if v.type == target:
        return v
    width = lambda t: ir.FloatType(t).width  # noqa: E731
    return arith.extf(target, v) if width(v.type) <= width(target) else arith.truncf(target, v)


def _eq(a: ir.Value, value: int) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.eq, a, const_int(value))
