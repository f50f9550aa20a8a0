"""Numbers of `dequant.ops.pmx_dequantize_linear` against a reference written from the OpenPPL
(ppl.pmx) DequantizeLinear spec and docs/semantics.md (never from the code under test).

- q: int8 X as is; int4: unsigned nibbles (packed with `pmx_pack.pack_int4x4`, nibble k of X[i]
  is row 4i+k) minus 8, or minus (zp & 0xF) with an integer zero point.
- no zero point: Y = Scale * q; int8 zero point: Y = Scale * (X - zp) (int8 X) or
  Scale * (nibble - (zp & 0xF)) (int4); float zero point: Y = Scale * q + zp.
- group_size != 0: Scale[..., i // g, ...] along quant_axis (0 or 1); group_size 0: per-tensor
  (Scale (), (1), all ones) or per-channel (one scale per row: (d0, 1, ...) or (d0)).
Rounding (docs/semantics.md#arithmetic): integer difference exact, one conversion to f32, one f32 multiplication by the
scale; a float zero point is added in f32 after the product (two f32 roundings: mul, then add);
one rounding to the output type (the Scale's). The reference does that in numpy, so results must
match bit for bit (signed zeros included; NaN any NaN).
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from dequant import ops
from dequant.ops import pmx_dequantize_linear
from exact import assert_exact
from pmx_pack import pack_int4x4

SCALES = {"f16": np.float16, "f32": np.float32}
ZERO_POINTS = {"none": None, "int": np.int8, "f16": np.float16, "f32": np.float32}


# --- reference ------------------------------------------------------------------------------------


def expand(v: np.ndarray, y_shape: tuple, quant_axis: int, group_size: int) -> np.ndarray:
    """Scale or ZeroPoint broadcast to Y's shape, as the spec's granularities say."""
    v = np.asarray(v)
    if group_size:
        return np.repeat(v, group_size, axis=quant_axis)
    if v.size == 1:  # per-tensor: (), (1) or all ones
        return v.reshape(())
    return v.reshape((y_shape[0],) + (1,) * (len(y_shape) - 1))  # per-channel: (d0, 1, ...) or (d0)


def reference(values, Scale, ZeroPoint=None, *, quant_data_type, quant_axis=1, group_size=128, float_zeropoint=False):
    """Y from the quantized values (int8 X, or the int4 nibbles before packing)."""
    values = np.asarray(values).astype(np.int64)
    y_shape = values.shape
    s = expand(Scale, y_shape, quant_axis, group_size).astype(np.float32)
    if ZeroPoint is None or float_zeropoint:
        q = values - 8 if quant_data_type == "int4" else values
    else:
        z = expand(ZeroPoint, y_shape, quant_axis, group_size).astype(np.int64)
        q = values - (z & 0xF) if quant_data_type == "int4" else values - z
    with np.errstate(invalid="ignore", over="ignore"):
        y = q.astype(np.float32) * s  # one f32 rounding
        if float_zeropoint:
            y = y + expand(ZeroPoint, y_shape, quant_axis, group_size).astype(np.float32)  # a second one
        return np.asarray(y, np.float32).astype(np.asarray(Scale).dtype)


# --- random data ----------------------------------------------------------------------------------


def floats(rng, shape, dtype, top=0) -> np.ndarray:
    """Values of `dtype` with random mantissas, both signs and exponents up to 2^top."""
    s = rng.uniform(0.5, 1.0, shape) * np.exp2(rng.integers(top - 14, top + 1, shape)) * rng.choice([-1.0, 1.0], shape)
    return np.asarray(s).astype(dtype)


def quantized(rng, y_shape, quant_data_type):
    """(X, values): int8 X is its own values; int4 values are nibbles 0..15 and X packs them."""
    if quant_data_type == "int8":
        x = rng.integers(-128, 127, size=y_shape, endpoint=True).astype(np.int8)
        x.reshape(-1)[:2] = [-128, 127][: x.size]
        return x, x
    nibbles = rng.integers(0, 15, size=y_shape, endpoint=True)
    nibbles.reshape(-1)[:2] = [0, 15][: nibbles.size]
    return pack_int4x4(nibbles), nibbles


def zero_point(rng, shape, zp: str):
    if ZERO_POINTS[zp] is None:
        return None
    if zp == "int":
        z = rng.integers(-128, 127, size=shape, endpoint=True).astype(np.int8)
        z.reshape(-1)[:2] = [-128, 127][: z.size]
        return z
    return floats(rng, shape, ZERO_POINTS[zp], top=4)


def scale_shape(y_shape: tuple, granularity: str, quant_axis: int, group_size: int) -> tuple:
    if granularity == "group":
        return tuple(d // group_size if i == quant_axis else d for i, d in enumerate(y_shape))
    return {
        "tensor-scalar": (),
        "tensor-1": (1,),
        "tensor-ones": (1,) * len(y_shape),
        "channel-d0-ones": (y_shape[0],) + (1,) * (len(y_shape) - 1),
        "channel-d0": (y_shape[0],),
    }[granularity]


def run_and_check(x, values, Scale, ZeroPoint, *, quant_data_type, quant_axis, group_size, float_zeropoint=False, **more):
    attrs = dict(quant_data_type=quant_data_type, quant_axis=quant_axis, group_size=group_size)
    got = pmx_dequantize_linear(x, Scale, ZeroPoint, has_zeropoint=ZeroPoint is not None,
                                float_zeropoint=float_zeropoint, **attrs, **more)  # fmt: skip
    assert_exact(got, reference(values, Scale, ZeroPoint, float_zeropoint=float_zeropoint, **attrs))
    return got


def check_case(rng, y_shape, quant_data_type, zp, scale_type, granularity, quant_axis, group_size):
    g = group_size if granularity == "group" else 0
    x, values = quantized(rng, y_shape, quant_data_type)
    shape = scale_shape(y_shape, granularity, quant_axis, g)
    Scale = floats(rng, shape, SCALES[scale_type])
    run_and_check(x, values, Scale, zero_point(rng, shape, zp), quant_data_type=quant_data_type,
                  quant_axis=quant_axis, group_size=g, float_zeropoint=zp in ("f16", "f32"))  # fmt: skip


# --- hand-computed cases: unpack order, the nibble offset, zp & 0xF ---------------------------------


def test_pack_helper():
    np.testing.assert_array_equal(pack_int4x4([[1], [2], [3], [4]]), np.array([[0x4321]], np.int16))
    np.testing.assert_array_equal(pack_int4x4([10, 8, 0, 15, 0, 0, 0, 8]), np.array([0xF08A - 2**16, 0x8000 - 2**16], np.int16))


@pytest.mark.parametrize("scale_type", list(SCALES))
def test_int4_unpack_order_and_offset(scale_type):
    """0x4321: nibbles 1, 2, 3, 4 are rows 0..3; minus 8: -7, -6, -5, -4."""
    s = np.array([0.5], SCALES[scale_type])
    y = pmx_dequantize_linear(np.array([[0x4321]], np.int16), s, quant_data_type="int4", group_size=0)
    np.testing.assert_array_equal(y, np.array([[-3.5], [-3.0], [-2.5], [-2.0]], SCALES[scale_type]))
    assert y.dtype == SCALES[scale_type]


def test_int4_sign_bit_nibble_and_columns():
    """0xF08A (negative as int16): rows 10, 8, 0, 15 minus 8 = 2, 0, -8, 7; a second column and a
    second packed row keep their own nibbles."""
    x = np.array([[0xF08A - 2**16, 0x0001], [0x7654, -1]], np.int16)
    y = pmx_dequantize_linear(x, np.float32(1.0), quant_data_type="int4", group_size=0)
    want = np.array([[2, -7], [0, -8], [-8, -8], [7, -8], [-4, 7], [-3, 7], [-2, 7], [-1, 7]], np.float32)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize(
    "zp,want",
    [(-1, [-14, -13, -12, -11]), (0x13, [-2, -1, 0, 1]), (8, [-7, -6, -5, -4]), (-128, [1, 2, 3, 4]), (0x7F, [-14, -13, -12, -11])],
    ids=["-1-is-15", "0x13-is-3", "8", "-128-is-0", "0x7f-is-15"],
)
def test_int4_integer_zero_point_low_nibble(zp, want):
    """An integer zero point z subtracts (z & 0xF) from the nibble: -1 -> 15, 0x13 -> 3."""
    y = pmx_dequantize_linear(np.array([[0x4321]], np.int16), np.array([[2.0]], np.float32), np.array([[zp]], np.int8),
                              quant_data_type="int4", group_size=0, has_zeropoint=True)  # fmt: skip
    np.testing.assert_array_equal(y, 2.0 * np.array(want, np.float32).reshape(4, 1))


def test_int8_integer_zero_point_is_subtracted_whole():
    """int8: Y = Scale * (X - zp) over the full int8 range (no masking): 127 - (-128) = 255."""
    x = np.array([[-128, 127], [-128, 127]], np.int8)
    y = pmx_dequantize_linear(x, np.array([[1.0], [0.5]], np.float32), np.array([[127], [-128]], np.int8),
                              quant_data_type="int8", group_size=0, has_zeropoint=True)  # fmt: skip
    np.testing.assert_array_equal(y, np.array([[-255.0, 0.0], [0.0, 127.5]], np.float32))


def test_float_zero_point_is_added_after_scaling():
    """Y = Scale * q + zp: int8 X = 3, Scale 2, zp 0.25 -> 6.25; int4 nibble 1 -> q = -7 -> -13.75."""
    y = pmx_dequantize_linear(np.array([3, -3], np.int8), np.array([2.0], np.float32), np.array([0.25], np.float16),
                              quant_data_type="int8", group_size=0, has_zeropoint=True, float_zeropoint=True)  # fmt: skip
    np.testing.assert_array_equal(y, np.array([6.25, -5.75], np.float32))
    y = pmx_dequantize_linear(np.array([0x4321], np.int16), np.array(2.0, np.float16), np.array(0.25, np.float32),
                              quant_data_type="int4", group_size=0, has_zeropoint=True, float_zeropoint=True)  # fmt: skip
    np.testing.assert_array_equal(y, np.array([-13.75, -11.75, -9.75, -7.75], np.float16))


def test_float_zero_point_two_f32_roundings():
    """Cases where mul-then-add (two f32 roundings) and a fused multiply-add (one) differ:
    q * s = 3 * (1 + 2^-23) = 3 + 1.5 ulp(3) rounds (ties to even) to 3 + 2^-21 in f32; adding
    zp = -3 then gives 2^-21, while an FMA would give 3 * 2^-23."""
    s = np.array([1 + 2.0**-23], np.float32)
    y = pmx_dequantize_linear(np.array([3], np.int8), s, np.array([-3.0], np.float32),
                              quant_data_type="int8", group_size=0, has_zeropoint=True, float_zeropoint=True)  # fmt: skip
    assert y[0] == np.float32(2.0**-21), (y[0], 2.0**-21, 3 * 2.0**-23)


def test_float_zero_point_f16_output_rounded_twice():
    """f16 Scale: 1 * 1.0 + (2^-11 + 2^-30) is just above the f16 midpoint 1 + 2^-11; the f32 add
    rounds onto the midpoint, and f16 then rounds to even (1.0), where one rounding of the exact
    value would give 1 + 2^-10."""
    y = pmx_dequantize_linear(np.array([1], np.int8), np.array([1.0], np.float16), np.array([2.0**-11 + 2.0**-30], np.float32),
                              quant_data_type="int8", group_size=0, has_zeropoint=True, float_zeropoint=True)  # fmt: skip
    assert y.dtype == np.float16 and y[0] == 1.0 and np.float16(1 + 2.0**-11 + 2.0**-30) == 1 + 2.0**-10, y


# --- every granularity x data type x zero point --------------------------------------------------

GRANULARITIES = [("group", 0), ("group", 1), ("tensor-scalar", 1), ("tensor-1", 0), ("tensor-ones", 1),
                 ("channel-d0-ones", 1), ("channel-d0", 0)]  # fmt: skip
MATRIX = [(q, zp, g, a) for q in ("int8", "int4") for zp in ZERO_POINTS for g, a in GRANULARITIES]


@pytest.mark.parametrize("quant_data_type,zp,granularity,quant_axis", MATRIX,
                         ids=[f"{q}-zp_{zp}-{g}-axis{a}" for q, zp, g, a in MATRIX])  # fmt: skip
def test_granularities(quant_data_type, zp, granularity, quant_axis):
    """Rank 2, group size 4; the Scale type rotates over the cases."""
    k = MATRIX.index((quant_data_type, zp, granularity, quant_axis))
    rng = np.random.default_rng([1, k])
    scale_type = list(SCALES)[k % 2]
    for _ in range(2):
        y_shape = (4 * int(rng.integers(1, 5)), 4 * int(rng.integers(1, 5)))
        check_case(rng, y_shape, quant_data_type, zp, scale_type, granularity, quant_axis, 4)


COMBOS = [(q, zp, s) for q in ("int8", "int4") for zp in ZERO_POINTS for s in SCALES]


@pytest.mark.parametrize("quant_data_type,zp,scale_type", COMBOS, ids=[f"{q}-zp_{zp}-scale_{s}" for q, zp, s in COMBOS])
def test_scale_and_zero_point_types(quant_data_type, zp, scale_type):
    """Every Scale type with every zero point kind (f16 zp with f32 Scale and f32 zp with f16 Scale
    included): group size 32 along axis 1 and per channel."""
    rng = np.random.default_rng([2, COMBOS.index((quant_data_type, zp, scale_type))])
    check_case(rng, (8, 64), quant_data_type, zp, scale_type, "group", 1, 32)
    check_case(rng, (12, 5), quant_data_type, zp, scale_type, "channel-d0-ones", 1, 0)


GROUPS = [(q, a, g) for q in ("int8", "int4") for a in (0, 1) for g in (4, 32, 128)]


@pytest.mark.parametrize("quant_data_type,quant_axis,group_size", GROUPS, ids=[f"{q}-axis{a}-g{g}" for q, a, g in GROUPS])
def test_group_sizes(quant_data_type, quant_axis, group_size):
    """Group sizes 4, 32, 128 along both axes, with one and with several groups."""
    k = GROUPS.index((quant_data_type, quant_axis, group_size))
    rng = np.random.default_rng([3, k])
    for groups in (1, 3):
        y_shape = [8, 8]
        y_shape[quant_axis] = groups * group_size
        check_case(rng, tuple(y_shape), quant_data_type, list(ZERO_POINTS)[k % 4], list(SCALES)[k % 2], "group", quant_axis, group_size)


@pytest.mark.parametrize("group_size, zp", [(160, "none"), (224, "int")])
def test_groups_of_odd_vector_counts(group_size, zp):
    """int4 groups along the columns, f16: on AVX-512BW hosts a group's 16 values come from a
    per-tile table, one 32-lane permute per vector (dq-vectorize's `tables`); groups of 160 and
    224 are 5 and 7 of them, whose joins once built shuffles past their operands (issue 36.3)."""
    rng = np.random.default_rng([36, group_size])
    for groups in (1, 3):
        check_case(rng, (8, groups * group_size), "int4", zp, "f16", "group", 1, group_size)


RANKS = [(r, g, a) for r in (1, 3, 4) for g, a in GRANULARITIES if not (r == 1 and (g, a) == ("group", 1))]


@pytest.mark.parametrize("rank,granularity,quant_axis", RANKS, ids=[f"r{r}-{g}-axis{a}" for r, g, a in RANKS])
def test_ranks(rank, granularity, quant_axis):
    """Ranks 1, 3 and 4 (rank 2 is everywhere above); data type and zero point rotate."""
    k = RANKS.index((rank, granularity, quant_axis))
    rng = np.random.default_rng([4, k])
    y_shape = tuple(4 * int(d) for d in rng.integers(1, 4, size=rank))
    check_case(rng, y_shape, ("int8", "int4")[k % 2], list(ZERO_POINTS)[k % 4], list(SCALES)[k % 2], granularity, quant_axis, 4)


def test_per_channel_ignores_quant_axis_and_quant_method():
    """group_size 0 with a (d0, 1) Scale is one scale per row whatever quant_axis; quant_method is ignored."""
    rng = np.random.default_rng(5)
    x, values = quantized(rng, (8, 6), "int4")
    Scale, zp = floats(rng, (8, 1), np.float32), zero_point(rng, (8, 1), "int")
    for quant_axis in (0, 1):
        for method in ("", "weight_only", "anything"):
            run_and_check(x, values, Scale, zp, quant_data_type="int4", quant_axis=quant_axis, group_size=0, quant_method=method)


@pytest.mark.parametrize("scale_type", list(SCALES))
def test_every_nibble_against_every_integer_zero_point(scale_type):
    """int4, per channel: row r has zero point r - 128 (all 256 int8 values) and holds nibbles 0..15."""
    rng = np.random.default_rng([6, len(scale_type)])
    nibbles = np.tile(np.arange(16), (256, 1))
    zp = np.arange(-128, 128).astype(np.int8)
    for Scale in (floats(rng, 256, SCALES[scale_type]), np.full(256, -1.0, SCALES[scale_type])):
        run_and_check(pack_int4x4(nibbles), nibbles, Scale, zp, quant_data_type="int4", quant_axis=1, group_size=0)


@pytest.mark.parametrize("scale_type", list(SCALES))
def test_every_int8_against_every_integer_zero_point(scale_type):
    """int8, per channel (d0, 1): row r has zero point r - 128 and holds all 256 int8 values (a
    65536-element output, split across threads)."""
    rng = np.random.default_rng([7, len(scale_type)])
    x = np.tile(np.arange(-128, 128).astype(np.int8), (256, 1))
    zp = np.arange(-128, 128).astype(np.int8).reshape(256, 1)
    for Scale in (floats(rng, (256, 1), SCALES[scale_type]), np.full((256, 1), 0.5, SCALES[scale_type])):
        run_and_check(x, x, Scale, zp, quant_data_type="int8", quant_axis=1, group_size=0)


FLOAT_ZP = [(q, zp, s) for q in ("int8", "int4") for zp in ("f16", "f32") for s in SCALES]


@pytest.mark.parametrize("quant_data_type,zp_type,scale_type", FLOAT_ZP, ids=[f"{q}-zp_{z}-scale_{s}" for q, z, s in FLOAT_ZP])
def test_float_zero_point_random_rounding(quant_data_type, zp_type, scale_type):
    """Many random float zero points and scales with full mantissas: mul then add in f32 (two
    roundings), then the output type. With an f32 Scale the test checks that its data has values
    where a fused multiply-add would differ."""
    rng = np.random.default_rng([8, FLOAT_ZP.index((quant_data_type, zp_type, scale_type))])
    x, values = quantized(rng, (64, 256), quant_data_type)
    Scale = (rng.uniform(0.5, 1.0, (64, 8)) * 2.0**-6).astype(SCALES[scale_type])
    zp = (rng.uniform(-1, 1, (64, 8)) * 2.0**-4).astype(ZERO_POINTS[zp_type])
    got = run_and_check(x, values, Scale, zp, quant_data_type=quant_data_type, quant_axis=1, group_size=32, float_zeropoint=True)
    if scale_type == "f32":
        q = values.astype(np.float64) - (8 if quant_data_type == "int4" else 0)
        fused = q * expand(Scale, q.shape, 1, 32).astype(np.float64) + expand(zp, q.shape, 1, 32).astype(np.float64)
        assert (got != fused.astype(np.float32)).any(), "no case where a fused multiply-add would differ"


def test_special_scales():
    """Zeros of both signs, infinities, NaN and f16 extremes as per-channel scales (f16 output);
    nibble 8 gives q = 0, so 0 * inf = NaN and 0 * -s = -0 appear."""
    f = np.finfo(np.float16)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.smallest_subnormal, -f.smallest_subnormal, f.tiny,
                        f.max, -f.max, 1.0, f.eps], np.float16)  # fmt: skip
    nibbles = np.tile(np.arange(16), (special.size, 1))
    run_and_check(pack_int4x4(nibbles), nibbles, special, None, quant_data_type="int4", quant_axis=1, group_size=0)
    run_and_check(pack_int4x4(nibbles), nibbles, special, np.zeros(special.size, np.float16), quant_data_type="int4",
                  quant_axis=1, group_size=0, float_zeropoint=True)  # fmt: skip
    x = np.tile(np.array([-128, -1, 0, 1, 127], np.int8), (special.size, 1))
    run_and_check(x, x, special.reshape(-1, 1), np.full((special.size, 1), -1, np.int8), quant_data_type="int8", quant_axis=0, group_size=0)


def test_unit_group_count_then_wider():
    """A grouped Scale whose grouped dim is 1 (one group), then the same op with several groups."""
    rng = np.random.default_rng(9)
    for y_shape in [(4, 32), (4, 96), (1 * 4, 32), (8, 32)]:
        check_case(rng, y_shape, "int4", "int", "f32", "group", 1, 32)
        check_case(rng, y_shape[::-1], "int8", "f16", "f16", "group", 0, 32)


def test_rank_0_int8():
    rng = np.random.default_rng(13)
    x = np.int8(-5)
    run_and_check(x, x, np.float32(0.5), None, quant_data_type="int8", quant_axis=1, group_size=0)
    run_and_check(x, x, np.float16(-0.75), np.int8(-128), quant_data_type="int8", quant_axis=1, group_size=0)
    run_and_check(x, x, floats(rng, (), np.float16), np.float32(0.1), quant_data_type="int8", quant_axis=0, group_size=0, float_zeropoint=True)


def test_read_only_inputs():
    rng = np.random.default_rng(14)
    x, values = quantized(rng, (8, 8), "int4")
    Scale, zp = floats(rng, (8, 2), np.float32), zero_point(rng, (8, 2), "int")
    for a in (x, Scale, zp):
        a.setflags(write=False)
    run_and_check(x, values, Scale, zp, quant_data_type="int4", quant_axis=1, group_size=4)


def test_empty():
    y = pmx_dequantize_linear(np.zeros((0, 4), np.int16), np.ones((0, 1), np.float32), quant_data_type="int4", group_size=0)
    assert y.shape == (0, 4) and y.dtype == np.float32


def test_non_contiguous_input():
    rng = np.random.default_rng(10)
    nibbles = rng.integers(0, 16, size=(8, 12))
    x = np.zeros((2, 24), np.int16)
    x[:, ::2] = pack_int4x4(nibbles)
    Scale = floats(rng, (8, 3), np.float32)
    run_and_check(x[:, ::2], nibbles, Scale, None, quant_data_type="int4", quant_axis=1, group_size=4)


LARGE = [("int4", 0, 32, (160, 512), "int"), ("int4", 0, 128, (256, 1024), "f16"), ("int4", 1, 128, (300, 256), "none"),
         ("int8", 0, 4, (4004, 20), "f32"), ("int4", 0, 0, (404, 200), "int"), ("int8", 0, 0, (1001, 70), "none"),
         ("int4", 0, 6, (600, 130), "int"), ("int4", 0, 20, (700, 100), "f32")]  # fmt: skip


@pytest.mark.parametrize("threads", [1, 3])
def test_large_across_threads(threads, dq_threads):
    """Outputs big enough to be split in row ranges: ranges must respect the int4 packing (4 rows per
    X row) and groups along dim 0. group_size 0 here means per channel (d0)."""
    dq_threads(threads)
    for k, (q, axis, g, y_shape, zp) in enumerate(LARGE):
        rng = np.random.default_rng([11, threads, k])
        check_case(rng, y_shape, q, zp, ("f16", "f32")[k % 2], "group" if g else "channel-d0", axis, g)


def test_out_is_written_and_returned():
    rng = np.random.default_rng(12)
    x, values = quantized(rng, (8, 8), "int4")
    Scale, zp = floats(rng, (2, 8), np.float16), zero_point(rng, (2, 8), "f32")
    out = np.full((8, 8), np.nan, np.float16)
    got = pmx_dequantize_linear(x, Scale, zp, quant_data_type="int4", quant_axis=0, group_size=4, has_zeropoint=True,
                                float_zeropoint=True, out=out)  # fmt: skip
    assert got is out
    assert_exact(out, reference(values, Scale, zp, quant_data_type="int4", quant_axis=0, group_size=4, float_zeropoint=True))


@pytest.mark.parametrize(
    "out",
    [np.empty((8, 3), np.float16), np.empty((2, 3), np.float32), np.empty((8, 6), np.float32)[:, ::2]],
    ids=["dtype", "packed-shape", "non-contiguous"],
)
def test_out_must_match(out):
    with pytest.raises(ValueError, match=re.escape("out must be a C-contiguous float32 array of shape [8, 3]")):
        pmx_dequantize_linear(np.zeros((2, 3), np.int16), np.ones(1, np.float32), quant_data_type="int4", group_size=0, out=out)


# --- spec rules -----------------------------------------------------------------------------------

X4, X8 = np.zeros((2, 8), np.int16), np.zeros((8, 8), np.int8)  # both Y (8, 8)
S1, SG = np.ones(1, np.float32), np.ones((8, 2), np.float32)  # per-tensor; groups of 4 along axis 1
RULES = [
    ("quant_data_type", dict(X=X8, quant_data_type="int2"), 'quant_data_type must be "int4" or "int8", got "int2"'),
    ("int8-X-type", dict(X=X4, quant_data_type="int8"), 'X must be int8 for quant_data_type "int8", got i16'),
    ("int4-X-type", dict(X=X8, quant_data_type="int4"), 'X must be int16 (packed int4x4) for quant_data_type "int4", got i8'),
    ("int4-X-uint16", dict(X=X4.astype(np.uint16)), 'X must be int16 (packed int4x4) for quant_data_type "int4", got ui16'),
    ("int4-X-rank0", dict(X=np.int16(0), Scale=np.float32(1), group_size=0), "int4 X (int4x4 packed along dim 0) must have rank >= 1"),
    ("Scale-f64", dict(Scale=SG.astype(np.float64)), "Scale must be float32 or float16 (T2), got f64"),
    ("Scale-bf16", dict(Scale=SG.astype(ml_dtypes.bfloat16)), "Scale must be float32 or float16 (T2), got bf16"),
    ("zp-missing", dict(has_zeropoint=True), "ZeroPoint must appear when has_zeropoint == True"),
    ("zp-unflagged", dict(ZeroPoint=np.zeros((8, 2), np.int8)), "a ZeroPoint is given but has_zeropoint is False"),
    ("float-zp-unflagged", dict(float_zeropoint=True), "float_zeropoint == True needs has_zeropoint == True"),
    ("float-zp-int8", dict(ZeroPoint=np.zeros((8, 2), np.int8), has_zeropoint=True, float_zeropoint=True), "ZeroPoint data type MUST be floating point when float_zeropoint == True, got i8"),
    ("float-zp-f64", dict(ZeroPoint=np.zeros((8, 2)), has_zeropoint=True, float_zeropoint=True), "ZeroPoint data type MUST be floating point when float_zeropoint == True, got f64"),
    ("int-zp-uint8", dict(ZeroPoint=np.zeros((8, 2), np.uint8), has_zeropoint=True), "an integer ZeroPoint must be int8 (T3), got ui8"),
    ("int-zp-f16", dict(ZeroPoint=np.zeros((8, 2), np.float16), has_zeropoint=True), "an integer ZeroPoint must be int8 (T3), got f16"),
    ("zp-shape", dict(ZeroPoint=np.zeros((8, 1), np.int8), has_zeropoint=True), "ZeroPoint shape must be the same as Scale's"),
    ("zp-shape-scalar", dict(Scale=S1, ZeroPoint=np.int8(0), has_zeropoint=True, group_size=0), "ZeroPoint shape must be the same as Scale's"),
    ("quant_axis-2", dict(quant_axis=2), "quant_axis only accepts 0 or 1, got 2"),
    ("quant_axis-neg", dict(quant_axis=-1), "quant_axis only accepts 0 or 1, got -1"),
    ("group_size-neg", dict(group_size=-4), "group_size must be >= 0, got -4"),
    ("group-axis-rank", dict(X=np.zeros(2, np.int16), Scale=S1), "quant_axis 1 must be less than the rank of Y (1)"),
    ("group-divides", dict(group_size=3), "the grouped dimension (dim 1 = 8) must be divisible by group_size 3"),
    ("group-divides-int4-d0", dict(quant_axis=0, group_size=16), "the grouped dimension (dim 0 = 8) must be divisible by group_size 16"),
    ("group-scale-shape", dict(Scale=np.ones((2, 8), np.float32)), "grouped Scale must have the shape of Y with dim quant_axis divided by group_size: [8, 2]"),
    ("group-scale-packed-d0", dict(Scale=np.ones((1, 8), np.float32), quant_axis=0, group_size=2), "grouped Scale must have the shape of Y with dim quant_axis divided by group_size: [4, 8]"),
    ("group-scale-rank", dict(Scale=np.ones((8, 2, 1), np.float32)), "grouped Scale must have the shape of Y with dim quant_axis divided by group_size"),
    ("no-group-scale", dict(Scale=np.ones((1, 8), np.float32), group_size=0), "with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))"),
    ("no-group-packed-d0", dict(Scale=np.ones((2, 1), np.float32), group_size=0), "with group_size == 0, Scale must be per-tensor"),
    ("no-group-scale-rank", dict(Scale=np.ones((8, 1, 1), np.float32), group_size=0), "with group_size == 0, Scale must be per-tensor"),
]  # fmt: skip


@pytest.mark.parametrize("kwargs,message", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_spec_rule_violations_raise(kwargs, message, monkeypatch):
    """Each rule the arrays can break raises ValueError naming it, before any kernel is built or run."""
    monkeypatch.setattr(ops, "kernel_for", lambda *a, **k: pytest.fail("a kernel was requested for arrays that break a rule"))
    args = dict(X=X4, Scale=SG, ZeroPoint=None, quant_data_type="int4", group_size=4) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        pmx_dequantize_linear(args.pop("X"), args.pop("Scale"), args.pop("ZeroPoint"), **args)
