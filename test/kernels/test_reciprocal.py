"""The split reciprocal of the requantize (passes/kernels/reciprocal.py): where `split` gives (zh,
zl), fma(y, zh, y * zl) must give every y the code y / sy gives. Held here for many scales of
both code kinds against numpy's f32 division, at every f32 within 64 ulps of each rounding
boundary (the module tries 4) and at random y of every magnitude, the FMA's one rounding computed
by another method than the module's (the nearest of three f32 candidates, by exact distances).
And the check must refuse: a pair that is wrong somewhere (zl = 0, the reciprocal alone), and
scales outside its range. numpy only (the kernels' own results: test_requantize.py).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dequant.passes.kernels import reciprocal

WIDE_ULPS = 64
RANDOM = 20000


def scales() -> list:
    """Scales of quantized activations (log-uniform over 1e-5 .. 10), both signs, powers of two,
    and the range's ends."""
    rng = np.random.default_rng(7)
    drawn = np.float32(np.exp(rng.uniform(np.log(1e-5), np.log(10.0), 24)))
    edge = [np.float32(2.0**-100), np.float32(2.0**100), np.nextafter(np.float32(2.0**-100), np.float32(1))]
    return [*drawn, -drawn[0], np.float32(0.125), np.float32(1.0), *edge]


def fused(y: np.ndarray, zh: np.float32, zl: np.float32) -> np.ndarray:
    """fma(y, zh, y * zl) in f32 for f32 y: the f64 sum of y * zh (exact in f64) and f32(y * zl)
    rounded to f32 where that sum is exact (its TwoSum error 0: one rounding), else `fma32`."""
    p, t = y.astype(np.float64) * np.float64(zh), (y * zl).astype(np.float64)
    s = p + t
    back = s - p
    exact = ((p - (s - back)) + (t - back)) == 0
    out = s.astype(np.float32)
    for i in np.nonzero(~exact)[0]:
        out[i] = fma32(y[i], zh, np.float32(y[i] * zl))
    return out


def fma32(a: np.float32, b: np.float32, c: np.float32) -> np.float32:
    """f32(a * b + c) rounded once, ties to even: of the f32 nearest the f64 rounding and its two
    neighbours, the one nearest the exact value (the even one of two as near)."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = np.float32(float(exact))
    near = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    return min(near, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.array(v).view(np.uint32)) & 1))


def codes(q: np.ndarray, zy: int, kind: str) -> np.ndarray:
    low, high = {"u8": (0, 255), "i8": (-128, 127)}[kind]
    return np.clip(np.rint(q) + zy, low, high)


def tried(sy: np.float32, zy: int, kind: str) -> np.ndarray:
    """Every f32 within WIDE_ULPS of each boundary h * sy, and RANDOM y of every magnitude up to
    past saturation."""
    low, high = {"u8": (0, 255), "i8": (-128, 127)}[kind]
    centre = ((np.arange(low - zy, high - zy) + 0.5) * np.float64(sy)).astype(np.float32)
    bits = centre.view(np.int32)[:, None] + np.arange(-WIDE_ULPS, WIDE_ULPS + 1, dtype=np.int32)  # one sign: ulps apart
    rng = np.random.default_rng([int(np.float32(sy).view(np.uint32)), zy + 128, high])
    spread = (rng.uniform(-300, 300, RANDOM) * np.exp(rng.uniform(-12, 0, RANDOM)) * np.float64(sy)).astype(np.float32)
    return np.concatenate([bits.reshape(-1).view(np.float32), spread])


@pytest.mark.parametrize("kind, zy", [("u8", 0), ("u8", 131), ("i8", 0), ("i8", -7)])
def test_split_gives_the_divisions_codes(kind, zy):
    taken = 0
    for sy in scales():
        pair = reciprocal.split(sy, zy, kind)
        if pair is None:
            continue
        taken += 1
        zh, zl = pair
        y = tried(sy, zy, kind)
        np.testing.assert_array_equal(codes(fused(y, zh, zl), zy, kind), codes(y / sy, zy, kind), err_msg=f"sy={sy!r}")
    assert taken == len(scales())  # the range's ends included (1 / 2^100 is a normal f32)


def test_split_refuses_a_wrong_pair_and_scales_out_of_range():
    sy = np.float32(0.0371)
    zh = np.float32(1) / sy
    wrong = reciprocal.differing(sy, 20, "u8", zh, np.float32(0))  # the reciprocal alone
    assert wrong.size > 0
    assert (codes(wrong * zh, 20, "u8") != codes(wrong / sy, 20, "u8")).all()
    assert reciprocal.split(sy, 20, "u8") is not None
    for bad in (0.0, np.inf, np.nan, 2.0**101, -(2.0**101), 2.0**-101, 1.5 * 2.0**126):
        assert reciprocal.split(np.float32(bad), 0, "u8") is None, bad
