"""The requantize's division by a constant scale as a product by its split reciprocal, where
that gives every code the division gives (`split`; docs/semantics.md#the-requantizes-division).

QuantizeLinear's code is saturate(roundeven(y / sy) + zy), the quotient one f32 division. For a
constant sy the kernels may compute it as fma(y, zh, y * zl) instead, zh = f32(1 / sy) and zl =
f32(1 / sy - zh): one product and one FMA in place of a division (several times their cost on
x86). That sum is within 2^-46 of y / sy (relative), so its rounding to f32 is the quotient's or
its neighbour, and a code can differ only where y / sy lies within an ulp or two of a half-integer
h between two codes. `split` tries every f32 y within ULPS ulps of each such h * sy, computing the
FMA's one rounding exactly, and gives the pair only where every code agrees with the division's:
then every y gives the division's code (away from those y both quotients lie strictly between the
same two half-integers). numpy only, when the stage runs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

RANGES = {"u8": (0, 255), "i8": (-128, 127)}  # a code kind's saturation bounds
# |sy| in [2^-LIMIT, 2^LIMIT]: every y near a boundary (|y / sy| >= 1/2), and y * zl there, normal
# in f32, where the bound above holds; a scale outside is divided
LIMIT = 100
# y within so many ulps of h * sy: past them, y / sy is more than 2 of h's ulps from h (an ulp of h
# is at most twice an ulp of y, relative), farther than either rounding moves it (half an ulp, and
# 2^-46 of it); docs/semantics.md#the-requantizes-division
ULPS = 4


def split(sy, zy, kind: str) -> tuple[np.float32, np.float32] | None:
    """(zh, zl) for f32 scale sy, integer zero point zy and codes of `kind` ("u8" or "i8"), where
    roundeven(clamp(fma(y, zh, y * zl))) + zy is the division's code for every finite f32 y; or
    None (the kernel divides)."""
    sy = np.float32(sy)
    if not np.isfinite(sy) or sy == 0 or not 2.0**-LIMIT <= abs(float(sy)) <= 2.0**LIMIT:
        return None
    zh = np.float32(1) / sy
    zl = np.float32(float(1 / Fraction(float(sy)) - Fraction(float(zh))))
    return (zh, zl) if differing(sy, zy, kind, zh, zl).size == 0 else None


def reciprocals(r: np.ndarray, divisors) -> np.ndarray | None:
    """The split reciprocals of a kernel's quantizations, [zh, zl] each in order, r to be followed
    by them; `divisors`: (position of sy in r, kind) each, zy after sy (the kernels' `divisors`);
    or None where any is refused (the kernel divides)."""
    pairs = [split(r[at], r[at + 1], kind) for at, kind in divisors]
    return None if None in pairs else np.array(pairs, np.float32).reshape(-1)


def differing(sy, zy, kind: str, zh, zl) -> np.ndarray:
    """The f32 y near the codes' boundaries (`near`) whose code by fma(y, zh, y * zl) is not
    their code by y / sy."""
    sy, zh, zl = np.float32(sy), np.float32(zh), np.float32(zl)
    y = near(sy, zy, kind)
    low = y * zl  # f32, rounded as the kernel rounds it
    fused = np.array([_fma(float(a), float(zh), float(b)) for a, b in zip(y, low)], np.float32)
    return y[codes(fused, zy, kind) != codes(y / sy, zy, kind)]


def near(sy, zy, kind: str) -> np.ndarray:
    """Every f32 within ULPS ulps of h * sy, for each half-integer h between two codes of `kind`
    (before zy is added)."""
    low, high = RANGES[kind]
    h = np.arange(low - int(zy), high - int(zy)) + 0.5
    centre = (h * np.float64(sy)).astype(np.float32)
    out, up, down = [centre], centre, centre
    for _ in range(ULPS):
        up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def codes(q: np.ndarray, zy, kind: str) -> np.ndarray:
    """roundeven(clamp(q, low - zy, high - zy)) + zy of f32 quotients q: the kernels' codes."""
    low, high = RANGES[kind]
    return np.rint(np.clip(q, np.float32(low - int(zy)), np.float32(high - int(zy)))) + int(zy)


def _fma(a: float, b: float, c: float) -> float:
    """f32(a * b + c) rounded once (to nearest, ties to even), for f32 values a, b, c; exact."""
    (an, ad), (bn, bd), (cn, cd) = a.as_integer_ratio(), b.as_integer_ratio(), c.as_integer_ratio()
    num, den = an * bn * cd + cn * ad * bd, ad * bd * cd  # den: a power of two
    if num == 0:
        return 0.0
    sign, num = (-1 if num < 0 else 1), abs(num)
    shift = max(num.bit_length() - 24, 0)  # f32's 24 bits (normal results: LIMIT)
    q, rest = num >> shift, num & ((1 << shift) - 1)
    half = 1 << shift >> 1
    if shift and (rest > half or (rest == half and q & 1)):
        q += 1
    return math.ldexp(sign * q, shift - (den.bit_length() - 1))
