"""Numbers of `dequant.ops.onednn_dynamic_dequantize` against a reference written from the oneDNN
Graph DynamicDequantize-1 spec and docs/semantics.md (never from the code under test).

    output = (input - zps) * scales,  f32

scales/zps: one element ("per_tensor") or dim(axis) elements ("per_channel", axis in [-r, r-1]).
docs/semantics.md#arithmetic fixes the rounding: input - zps exactly in a wide integer type (zps may be s32 with u8
input, so i64), ONE conversion to f32, ONE f32 multiplication by the scale. The reference does
exactly that in numpy, so results must match bit for bit (signed zeros included; NaN any NaN).
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from dequant import ops
from dequant.ops import onednn_dynamic_dequantize
from exact import assert_exact, ints

# A reference that overflows or divides by zero says so (np.errstate); an unexpected one fails.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

INPUTS = {"s8": np.int8, "u8": np.uint8}
ZPS = {"none": None, "s8": np.int8, "u8": np.uint8, "s32": np.int32}
I32_EXTREMES = [-(2**31), -(2**31) + 1, -(2**24) - 1, -(2**24), -(2**24) + 1, -1, 0, 1, 2**24 - 1, 2**24, 2**24 + 1,
                2**24 + 3, 2**25 + 1, 2**31 - 129, 2**31 - 2, 2**31 - 1]  # fmt: skip


# --- reference ------------------------------------------------------------------------------------


def reference(src, scales, zps=None, *, qtype="per_tensor", axis=1) -> np.ndarray:
    """The spec's formula with docs/semantics.md#arithmetic's rounding: exact i64 difference, f32(d) * f32(scale)."""
    src = np.asarray(src)
    if qtype == "per_tensor":
        view = ()
    else:
        view = [1] * src.ndim
        view[axis % src.ndim] = -1
    d = src.astype(np.int64)
    if zps is not None:
        d = d - np.asarray(zps).astype(np.int64).reshape(view)
    with np.errstate(invalid="ignore", over="ignore"):
        return d.astype(np.float32) * np.asarray(scales, np.float32).reshape(view)


# --- random data ----------------------------------------------------------------------------------


def scales_of(rng, n) -> np.ndarray:
    """f32 scales with random mantissas over a range of exponents and both signs."""
    s = rng.uniform(0.5, 1.0, n) * np.exp2(rng.integers(-20, 4, n)) * rng.choice([-1.0, 1.0], n)
    return s.astype(np.float32)


def case(rng, shape, in_type, zp_type, qtype, axis):
    src = ints(rng, shape, INPUTS[in_type])
    n = 1 if qtype == "per_tensor" else shape[axis % len(shape)]
    zps = None if ZPS[zp_type] is None else ints(rng, n, ZPS[zp_type])
    return src, scales_of(rng, n), zps


def run_and_check(src, scales, zps, **attrs):
    got = onednn_dynamic_dequantize(src, scales, zps, **attrs)
    assert_exact(got, reference(src, scales, zps, **attrs))
    return got


# --- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("qtype", ["per_tensor", "per_channel"])
@pytest.mark.parametrize("zp_type", list(ZPS))
@pytest.mark.parametrize("in_type", list(INPUTS))
def test_types(in_type, zp_type, qtype):
    rng = np.random.default_rng([1, len(in_type), ord(zp_type[-1]), len(qtype)])
    for _ in range(3):
        shape = tuple(int(d) for d in rng.integers(1, 9, size=2))
        run_and_check(*case(rng, shape, in_type, zp_type, qtype, 1), qtype=qtype, axis=1)


AXES = [(r, a) for r in range(1, 5) for a in range(-r, r)]


@pytest.mark.parametrize("rank,axis", AXES, ids=[f"r{r}-axis{a}" for r, a in AXES])
def test_per_channel_axes(rank, axis):
    """Every axis in [-r, r-1] for ranks 1-4; the types rotate over the cases."""
    k = AXES.index((rank, axis))
    in_type, zp_type = list(INPUTS)[k % 2], list(ZPS)[k % 4]
    rng = np.random.default_rng([2, k])
    for _ in range(2):
        shape = tuple(int(d) for d in rng.integers(2, 6, size=rank))
        run_and_check(*case(rng, shape, in_type, zp_type, "per_channel", axis), qtype="per_channel", axis=axis)


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_per_tensor_ranks(rank):
    rng = np.random.default_rng([3, rank])
    shape = tuple(int(d) for d in rng.integers(1, 7, size=rank))
    run_and_check(*case(rng, shape, "u8", "s32", "per_tensor", 1), qtype="per_tensor")
    run_and_check(*case(rng, shape, "s8", "none", "per_tensor", 1))  # qtype defaults to per_tensor


@pytest.mark.parametrize("zp_type", ["s8", "u8", "s32"])
@pytest.mark.parametrize("in_type", list(INPUTS))
def test_every_input_against_every_zero_point(in_type, zp_type):
    """Per channel along axis 0: row i has zero point zps[i] and holds all 256 input values.
    s32 zero points include 2^31 - 1, -2^31 and the values around 2^24 where only an exact
    difference converted once to f32 gives the right result (e.g. 1 - (2^24 + 1) = -2^24,
    whereas f32(1) - f32(2^24 + 1) = 1 - 2^24)."""
    rng = np.random.default_rng([4, len(in_type), len(zp_type)])
    info = np.iinfo(ZPS[zp_type])
    if zp_type == "s32":
        zps = np.array(I32_EXTREMES + list(rng.integers(info.min, info.max, 16, endpoint=True)), np.int32)
    else:
        zps = np.arange(info.min, info.max + 1).astype(ZPS[zp_type])  # 256 x 256: output split in threads
    info = np.iinfo(INPUTS[in_type])
    src = np.tile(np.arange(info.min, info.max + 1).astype(INPUTS[in_type]), (zps.size, 1))
    for scales in (scales_of(rng, zps.size), np.ones(zps.size, np.float32), np.full(zps.size, -0.75, np.float32)):
        run_and_check(src, scales, zps, qtype="per_channel", axis=0)
    run_and_check(src[:, :40].T.copy(), scales_of(rng, zps.size), zps, qtype="per_channel", axis=-1)


@pytest.mark.parametrize("rows, cols", [(4, 16), (5, 17), (7, 33), (8, 64), (9, 47), (3, 48), (13, 100)])
def test_per_channel_last_axis_tile_edges(rows, cols):
    """Per channel along the last axis, the zero points and scales shared by the rows of a tile
    (dq-vectorize's 4-row tiles): row and column counts on and around the tiles' edges, s32 zero
    points with the extremes where only the exact difference is right."""
    rng = np.random.default_rng([5, rows, cols])
    zps = ints(rng, cols, np.int32)
    zps[: min(cols, len(I32_EXTREMES))] = I32_EXTREMES[:cols]
    for in_type in INPUTS:
        src = ints(rng, (rows, cols), INPUTS[in_type])
        run_and_check(src, scales_of(rng, cols), zps, qtype="per_channel", axis=1)


def test_s32_zero_point_exact_difference_hand_computed():
    """1 - (2^24 + 1) = -2^24 exactly; -128 - (2^31 - 1) = -2147483775 -> f32 -2^31;
    255 - (-2^31) = 2147483903 -> f32 2147483904 (one rounding)."""
    src = np.array([1, 0, 255, 255], np.uint8)
    scales = np.ones(4, np.float32)
    zps = np.array([2**24 + 1, 2**31 - 1, -(2**31), 2**24 + 3], np.int32)
    got = onednn_dynamic_dequantize(src, scales, zps, qtype="per_channel", axis=0)
    np.testing.assert_array_equal(got, np.array([-(2**24), -(2**31), 2147483904, -16776964], np.float32))
    assert_exact(got, reference(src, scales, zps, qtype="per_channel", axis=0))
    got = onednn_dynamic_dequantize(np.array([-128], np.int8), np.array([1.0], np.float32), np.array([2**31 - 1], np.int32))
    np.testing.assert_array_equal(got, np.array([-(2**31)], np.float32))


def test_special_scales():
    """Zero, negative zero, infinities, NaN, subnormals and the largest f32 as scales."""
    f = np.finfo(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.smallest_subnormal, -f.smallest_subnormal, f.tiny,
                        f.max, -f.max, 1.0, 2.0**-149 * 3], np.float32)  # fmt: skip
    src = np.tile(np.array([-128, -1, 0, 1, 5, 127], np.int8), (special.size, 1))
    for zps in (None, np.zeros(special.size, np.int8), np.full(special.size, 5, np.uint8)):
        run_and_check(src, special, zps, qtype="per_channel", axis=0)
    for s in special:  # per tensor, every special scale
        run_and_check(src, np.array([s], np.float32), None if s != 1.0 else np.array([-(2**31)], np.int32))


def test_zero_differences_keep_the_sign_of_the_scale():
    """(x - zp) = 0 times a negative scale is -0.0 in f32 arithmetic."""
    got = onednn_dynamic_dequantize(np.array([3, 3], np.uint8), np.array([-2.0], np.float32), np.array([3], np.int32))
    assert np.signbit(got).all(), got


def test_per_tensor_ignores_axis():
    """axis is "valid only when qtype is per_channel": an out-of-range axis is not an error there."""
    rng = np.random.default_rng(5)
    src, scales, zps = case(rng, (3, 4), "s8", "u8", "per_tensor", 1)
    want = reference(src, scales, zps)
    assert_exact(onednn_dynamic_dequantize(src, scales, zps, qtype="per_tensor", axis=17), want)
    assert_exact(onednn_dynamic_dequantize(src, scales, zps, qtype="per_tensor", axis=-9), want)


def test_per_channel_unit_axis_then_wider():
    """dim(axis) == 1 (a unit per-channel scale) and then the same op with dim(axis) == 5."""
    rng = np.random.default_rng(6)
    for shape in [(4, 1, 3), (4, 5, 3), (4, 1, 3)]:
        run_and_check(*case(rng, shape, "u8", "s8", "per_channel", 1), qtype="per_channel", axis=1)
        run_and_check(*case(rng, shape, "u8", "s8", "per_channel", -2), qtype="per_channel", axis=-2)


def test_rank_0():
    """A scalar input, per tensor (axis is not used)."""
    got = onednn_dynamic_dequantize(np.int8(-5), np.array([0.5], np.float32), np.array([3], np.int32))
    assert got.shape == () and got == np.float32(-4.0)
    run_and_check(np.uint8(255), np.array([0.1], np.float32), np.array([-(2**31)], np.int32))


def test_read_only_inputs():
    rng = np.random.default_rng(10)
    arrays = case(rng, (3, 4), "u8", "s32", "per_channel", 0)
    for a in arrays:
        a.setflags(write=False)
    run_and_check(*arrays, qtype="per_channel", axis=0)


def test_empty_input():
    src = np.zeros((0, 3), np.int8)
    got = onednn_dynamic_dequantize(src, np.ones(3, np.float32), np.zeros(3, np.int32), qtype="per_channel", axis=1)
    assert got.shape == (0, 3) and got.dtype == np.float32


def test_non_contiguous_input():
    rng = np.random.default_rng(7)
    src = ints(rng, (6, 8), np.int8)[::2, ::-1]
    scales, zps = scales_of(rng, 8), ints(rng, 8, np.int32)
    run_and_check(src, scales, zps, qtype="per_channel", axis=1)
    run_and_check(src.T, scales, zps, qtype="per_channel", axis=0)


@pytest.mark.parametrize("threads", [1, 3])
def test_large_per_channel_across_threads(threads, dq_threads):
    """Outputs big enough to be split in row ranges, per channel along dim 0 and along the last dim."""
    rng = np.random.default_rng([8, threads])
    dq_threads(threads)
    for shape, axis in [((301, 17, 23), 0), ((301, 17, 23), -1), ((7, 130, 80), 0)]:
        run_and_check(*case(rng, shape, "u8", "s32", "per_channel", axis), qtype="per_channel", axis=axis)
    run_and_check(*case(rng, (257, 300), "s8", "s8", "per_tensor", 1))


def test_out_is_written_and_returned():
    rng = np.random.default_rng(9)
    src, scales, zps = case(rng, (5, 6), "s8", "s32", "per_channel", 1)
    out = np.full((5, 6), np.nan, np.float32)
    got = onednn_dynamic_dequantize(src, scales, zps, qtype="per_channel", out=out)
    assert got is out
    assert_exact(out, reference(src, scales, zps, qtype="per_channel", axis=1))


@pytest.mark.parametrize(
    "out",
    [np.empty((5, 6), np.float64), np.empty((6, 5), np.float32), np.empty((5, 12), np.float32)[:, ::2]],
    ids=["dtype", "shape", "non-contiguous"],
)
def test_out_must_match(out):
    with pytest.raises(ValueError, match="out must be a C-contiguous float32 array of shape"):
        onednn_dynamic_dequantize(np.zeros((5, 6), np.int8), np.ones(1, np.float32), out=out)


# --- spec rules -----------------------------------------------------------------------------------

X = np.zeros((2, 3, 4), np.int8)
S1, S3 = np.ones(1, np.float32), np.ones(3, np.float32)
RULES = [
    ("src-s16", dict(src=X.astype(np.int16), scales=S1), "src must be a s8, u8, s4 or u4 tensor, got i16"),
    ("src-s32", dict(src=X.astype(np.int32), scales=S1), "src must be a s8, u8, s4 or u4 tensor, got i32"),
    ("scales-f64", dict(src=X, scales=S1.astype(np.float64)), "scales must be a f32, f16 or bf16 tensor, got f64"),
    ("zps-s16", dict(src=X, scales=S1, zps=np.zeros(1, np.int16)), "zps of a s8 src must be s8, u8, s32, got i16"),
    ("zps-f32", dict(src=X, scales=S1, zps=np.zeros(1, np.float32)), "zps of a s8 src must be s8, u8, s32, got f32"),
    ("zps-s4-of-s8", dict(src=X, scales=S1, zps=np.zeros(1, ml_dtypes.int4)), "zps of a s8 src must be s8, u8, s32, got i4"),
    ("zps-s8-of-s4", dict(src=X.astype(ml_dtypes.int4), scales=S1, zps=np.zeros(1, np.int8)), "zps of a s4 src must be s4, u4, s32, got i8"),
    ("qtype", dict(src=X, scales=S1, qtype="per_axis"), 'qtype must be "per_tensor", "per_channel" or "per_group", got "per_axis"'),
    ("scales-rank2", dict(src=X, scales=np.ones((1, 3), np.float32), qtype="per_channel"), "for qtype = per_channel, scales must be a 1D tensor, got rank 2"),
    ("zps-rank2", dict(src=X, scales=S3, zps=np.zeros((3, 1), np.int8), qtype="per_channel"), "for qtype = per_channel, zps must be a 1D tensor, got rank 2"),
    ("axis-high", dict(src=X, scales=S3, qtype="per_channel", axis=3), "axis 3 must be in [-r, r-1] where r = rank(src) = 3"),
    ("axis-low", dict(src=X, scales=S3, qtype="per_channel", axis=-4), "axis -4 must be in [-r, r-1] where r = rank(src) = 3"),
    ("per-tensor-scales", dict(src=X, scales=S3), "for qtype = per_tensor, there should be only one element in the scales tensor, got shape [3]"),
    ("per-tensor-zps", dict(src=X, scales=S1, zps=np.zeros(2, np.uint8)), "for qtype = per_tensor, there should be only one element in the zps tensor, got shape [2]"),
    ("per-channel-scales", dict(src=X, scales=S1, qtype="per_channel"), "for qtype = per_channel, the element number of scales should equal dim(axis) = 3, got 1"),
    ("per-channel-scales-neg", dict(src=X, scales=S3, qtype="per_channel", axis=-1), "the element number of scales should equal dim(axis) = 4, got 3"),
    ("per-channel-zps", dict(src=X, scales=S3, zps=np.zeros(4, np.int32), qtype="per_channel"), "the element number of zps should equal dim(axis) = 3, got 4"),
    ("per-group-without-shape", dict(src=X, scales=np.ones((2, 3, 2), np.float32), qtype="per_group"), "qtype per_group needs group_shape"),
    ("group-shape-without-per-group", dict(src=X, scales=S3, qtype="per_channel", group_shape=[1, 1, 2]), "group_shape is only used with qtype per_group, got qtype per_channel"),
    ("group-shape-rank", dict(src=X, scales=np.ones((2, 3, 2), np.float32), qtype="per_group", group_shape=[1, 2]), "group_shape must have one entry per src dim (3), got [1, 2]"),
    ("group-size-zero", dict(src=X, scales=np.ones((2, 3, 2), np.float32), qtype="per_group", group_shape=[1, 0, 2]), "group_shape entries must be >= 1, got [1, 0, 2]"),
    ("group-not-dividing", dict(src=X, scales=np.ones((2, 1, 4), np.float32), qtype="per_group", group_shape=[1, 2, 1]), "src dim 1 (3) must be divisible by its group size 2"),
    ("group-scales-shape", dict(src=X, scales=np.ones((2, 3, 4), np.float32), qtype="per_group", group_shape=[1, 1, 2]), "for qtype = per_group, scales must have src's rank with src dim / group size on grouped dims: [2, 3, 2], got [2, 3, 4]"),
    ("group-zps-shape", dict(src=X, scales=np.ones((2, 3, 2), np.float32), zps=np.zeros((2, 3, 4), np.int8), qtype="per_group", group_shape=[1, 1, 2]), "for qtype = per_group, zps must have src's rank"),
]  # fmt: skip


@pytest.mark.parametrize("kwargs,message", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_spec_rule_violations_raise(kwargs, message, monkeypatch):
    """Each rule the arrays can break raises ValueError naming it, before any kernel is built or run."""
    monkeypatch.setattr(ops, "kernel_for", lambda *a, **k: pytest.fail("a kernel was requested for arrays that break a rule"))
    kwargs = dict(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        onednn_dynamic_dequantize(kwargs.pop("src"), kwargs.pop("scales"), kwargs.pop("zps", None), **kwargs)


# --- the current spec: per_group, s4/u4 src, f16/bf16 scales and output ------------------------------


def group_reference(src, scales, zps, group_shape, out_dtype) -> np.ndarray:
    """The per_group formula (docs/semantics.md#onednn-granularity): element i of a grouped dim
    reads group i // G; exact integer difference, one f32 product, one rounding to the scales'
    type (numpy's f32 -> f16/bf16 conversion rounds to nearest even)."""
    src = np.asarray(src)
    expand = lambda a: a.repeat(group_shape[0], 0) if a.ndim == 1 else _repeat_all(a, group_shape)  # noqa: E731
    d = src.astype(np.int64) - (expand(np.asarray(zps).astype(np.int64)) if zps is not None else 0)
    with np.errstate(invalid="ignore", over="ignore"):
        return (d.astype(np.float32) * expand(np.asarray(scales).astype(np.float32))).astype(out_dtype)


def _repeat_all(a, group_shape):
    for axis, g in enumerate(group_shape):
        a = np.repeat(a, g, axis=axis)
    return a


GROUPS = [((8, 64), [1, 32]), ((8, 64), [4, 1]), ((6, 4, 12), [2, 1, 3]), ((5,), [5]), ((2, 3, 4, 8), [1, 3, 2, 4])]


@pytest.mark.parametrize("scale_type", [np.float32, np.float16, ml_dtypes.bfloat16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape,group_shape", GROUPS, ids=[f"{s}-{g}" for s, g in GROUPS])
@pytest.mark.parametrize("src_type,zp_type", [(np.int8, np.int8), (np.uint8, np.int32), (ml_dtypes.int4, ml_dtypes.uint4),
                                              (ml_dtypes.uint4, None)], ids=["s8-s8", "u8-s32", "s4-u4", "u4-none"])  # fmt: skip
def test_per_group(src_type, zp_type, shape, group_shape, scale_type):
    rng = np.random.default_rng([len(shape), sum(group_shape), np.dtype(scale_type).itemsize])
    info = ml_dtypes.iinfo(src_type)
    src = rng.integers(int(info.min), int(info.max) + 1, shape).astype(src_type)
    gshape = tuple(n // g for n, g in zip(shape, group_shape))
    scales = scales_of(rng, int(np.prod(gshape))).reshape(gshape).astype(scale_type)
    zps = None
    if zp_type is not None:
        zinfo = ml_dtypes.iinfo(zp_type)
        zps = rng.integers(max(int(zinfo.min), -(2**20)), min(int(zinfo.max), 2**20) + 1, gshape).astype(zp_type)
    got = onednn_dynamic_dequantize(src, scales, zps, qtype="per_group", group_shape=group_shape)
    assert_exact(got, group_reference(src, scales, zps, group_shape, scale_type))


def test_per_group_dim_not_divisible_is_an_error():
    """docs/semantics.md#onednn-granularity: a grouped dim must be a whole number of groups."""
    with pytest.raises(ValueError, match=r"src dim 1 \(10\) must be divisible by its group size 4"):
        onednn_dynamic_dequantize(np.zeros((2, 10), np.int8), np.ones((2, 3), np.float32), qtype="per_group", group_shape=[1, 4])


@pytest.mark.parametrize("scale_type", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_per_channel_output_is_the_scales_type(scale_type):
    rng = np.random.default_rng(11)
    src = ints(rng, (4, 6), np.uint8)
    scales = scales_of(rng, 6).astype(scale_type)
    zps = ints(rng, 6, np.int32) >> 8
    got = onednn_dynamic_dequantize(src, scales, zps, qtype="per_channel", axis=-1)
    d = src.astype(np.int64) - zps.astype(np.int64)
    product = d.astype(np.float32) * scales.astype(np.float32)
    with np.errstate(over="ignore"):  # past f16's 65504, rounding to nearest gives +-inf (IEEE 754), not a warning
        want = product.astype(scale_type)
    assert np.isinf(want).any() == (scale_type is np.float16)  # the data reaches f16's overflow, and only f16's
    assert_exact(got, want)
