"""Storage decoding as arith IR: the scalar body of the canonical form's lowering.

Helpers take values at the current insertion point and return values. Integers are widened
exactly to i32; where a 32-bit value makes x - zero point overflow i32, the difference is taken
in 16-bit halves and rounded once (`exact_difference`); float8/float4/e8m0 are decoded to f32 by bit
manipulation, without branches (selects only), so that loops over them vectorize.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from .types import Elem, elem


def i(bits: int) -> ir.Type:
    return ir.IntegerType.get_signless(bits)


def const_int(value: int, bits: int = 32) -> ir.Value:
    return arith.constant(i(bits), value)


def const_float(value: float, type_: ir.Type) -> ir.Value:
    return arith.constant(type_, value)


def signless(v: ir.Value) -> ir.Value:
    """An unsigned (`ui*`) scalar as the signless integer of its width; others unchanged."""
    t = v.type
    if isinstance(t, ir.IntegerType) and not t.is_signless:
        return ir.Operation.create("builtin.unrealized_conversion_cast", results=[i(t.width)], operands=[v]).result
    return v


def raw_bits(v: ir.Value) -> ir.Value:
    """The bits of a scalar as a signless integer of its width."""
    t = v.type
    if isinstance(t, ir.IntegerType):
        return signless(v)
    return arith.bitcast(i(t.width), v)


def wide_int(v: ir.Value, e: Elem, width: int) -> ir.Value:
    """An integer storage value widened exactly to `width` bits (i32 holds every difference of two 16-bit values)."""
    v = signless(v)
    if e.bits == width:
        return v
    return arith.extsi(i(width), v) if e.signed else arith.extui(i(width), v)


def exact_difference(x: ir.Value, xe: Elem, z: ir.Value, ze: Elem, target: ir.Type) -> ir.Value:
    """x - z for integers of up to 32 bits, rounded once to the float `target` (f32 or f64), with
    i32 and `target` arithmetic only: what sitofp of the exact i64 difference gives, without i64
    lanes (packed i64 -> f32 conversion needs AVX-512DQ; LLVM scalarizes it on AVX2).

    Each value splits as v = hi + lo, lo = v & 0xFFFF (0 .. 2^16 - 1), hi = v - lo (a multiple of
    2^16, at most 16 significant bits: exact in f32). hi_x - hi_z is a multiple of 2^16 below 2^33
    in magnitude (17 significant bits): exact; lo_x - lo_z lies in (-2^16, 2^16): exact in i32 and
    f32. Their sum is x - z, rounded once by the last addition. For x of 16 bits or fewer,
    x - lo_z lies in (-2^17, 2^16): exact, and (x - lo_z) - hi_z rounds once."""
    mask, high = const_int(0xFFFF), const_int(-0x10000)

    def split(v32: ir.Value, e: Elem):  # (lo as i32, hi converted to `target`)
        lo, hi = arith.andi(v32, mask), arith.andi(v32, high)
        return lo, arith.sitofp(target, hi) if e.signed else arith.uitofp(target, hi)

    x32, z32 = wide_int(x, xe, 32), wide_int(z, ze, 32)
    z_lo, z_hi = split(z32, ze)
    if xe.bits <= 16:
        return arith.subf(arith.sitofp(target, arith.subi(x32, z_lo)), z_hi)
    x_lo, x_hi = split(x32, xe)
    return arith.addf(arith.subf(x_hi, z_hi), arith.sitofp(target, arith.subi(x_lo, z_lo)))


def minifloat_to_f32(v: ir.Value, e: Elem) -> ir.Value:
    """A float8/float4/e8m0 value as f32, decoded from its bits (NaN and Inf per format)."""
    f32 = ir.F32Type.get()
    b = arith.extui(i(32), raw_bits(v))
    E, M = e.exp_bits, e.man_bits
    exp = arith.andi(arith.shrui(b, const_int(M)), const_int((1 << E) - 1))
    if e.nan == "e8m0":  # 2^(e-127); e == 0 is the f32 subnormal 2^-127; e == 255 is NaN
        normal = arith.bitcast(f32, arith.shli(exp, const_int(23)))
        value = arith.select(_eq(exp, 0), const_float(2.0**-127, f32), normal)
        return arith.select(_eq(exp, 255), const_float(float("nan"), f32), value)
    man = arith.andi(b, const_int((1 << M) - 1))
    sign = arith.andi(arith.shrui(b, const_int(E + M)), const_int(1))
    rebias = arith.addi(exp, const_int(127 - e.bias))
    bits = arith.ori(arith.shli(rebias, const_int(23)), arith.shli(man, const_int(23 - M)))
    normal = arith.bitcast(f32, bits)
    subnormal = arith.mulf(arith.uitofp(f32, man), const_float(2.0 ** (1 - e.bias - M), f32))
    magnitude = arith.select(_eq(exp, 0), subnormal, normal)
    value = arith.select(_eq(sign, 1), arith.negf(magnitude), magnitude)
    nan = const_float(float("nan"), f32)
    all_ones = (1 << (E + M)) - 1
    if e.nan == "fn":  # S.1111.111 is NaN, no infinities
        return arith.select(_eq(arith.andi(b, const_int(all_ones)), all_ones), nan, value)
    if e.nan == "fnuz":  # 1.0000.000 (negative zero's pattern) is the only NaN
        return arith.select(_eq(b, 1 << (E + M)), nan, value)
    if e.nan == "ieee":  # exponent all ones: Inf with a zero mantissa, NaN otherwise
        inf = arith.select(_eq(sign, 1), const_float(float("-inf"), f32), const_float(float("inf"), f32))
        special = arith.select(_eq(man, 0), inf, nan)
        return arith.select(_eq(exp, (1 << E) - 1), special, value)
    return value


def to_float(v: ir.Value, target: ir.Type) -> ir.Value:
    """A float scalar (builtin or minifloat) converted to `target` (f32 or f64)."""
    e = elem(v.type)
    if e is not None and e.name not in ("f16", "bf16", "f32", "f64"):
        v = minifloat_to_f32(v, e)
    width = lambda t: ir.FloatType(t).width  # noqa: E731
    if v.type == target:
        return v
    return arith.extf(target, v) if width(v.type) <= width(target) else arith.truncf(target, v)


def _eq(a: ir.Value, value: int) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.eq, a, const_int(value))
