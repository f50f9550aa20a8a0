"""Numbers of `dequant.ops.ngraph_dequantize` against a reference written from the nGraph Dequantize
spec and docs/semantics.md (never from the code under test).

    output[i] = (input[i] - zero_point[j]) * scale[j],  j = i projected onto `axes`

scale and zero point have input's shape projected onto `axes` (ascending; rank 0 for no axes).
docs/semantics.md#arithmetic fixes the rounding: input - zero_point exactly in a wide integer type (i32 - i32 needs
33 bits), ONE conversion to f32 (f64 when `type` is f64), ONE multiplication by the scale in that
type, ONE rounding to `type`. The reference does exactly that in numpy (f16/bf16: f32 product,
then `.astype`), so results must match bit for bit (signed zeros included; NaN any NaN).
"""

from __future__ import annotations

import itertools
import re

import ml_dtypes
import numpy as np
import pytest

from dequant import ops
from dequant.ops import ngraph_dequantize
from exact import assert_exact, ints

INPUTS = {"i8": np.int8, "u8": np.uint8, "i32": np.int32}
TYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


# --- reference ------------------------------------------------------------------------------------


def projected(shape: tuple, axes) -> tuple:
    """`shape` projected onto `axes` (ascending)."""
    return tuple(shape[a] for a in sorted(axes))


def reference(input, scale, zero_point, *, type, axes) -> np.ndarray:
    """The spec's formula with the rounding of docs/semantics.md#arithmetic."""
    input = np.asarray(input)
    view = [input.shape[a] if a in set(axes) else 1 for a in range(input.ndim)]  # scale[j] broadcast
    d = input.astype(np.int64) - np.asarray(zero_point).astype(np.int64).reshape(view)
    wide = np.float64 if np.dtype(type) == np.float64 else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        return (d.astype(wide) * np.asarray(scale).astype(wide).reshape(view)).astype(type)


# --- random data ----------------------------------------------------------------------------------


def scales_of(rng, shape, dtype, input_dtype=np.int8) -> np.ndarray:
    """Scales of `dtype` with random mantissas, both signs, exponents that keep most products of
    `input_dtype` differences finite in f16 (some are not: overflow to inf is part of the test)."""
    top = -14 if np.dtype(input_dtype) == np.int32 else -4
    s = rng.uniform(0.5, 1.0, shape) * np.exp2(rng.integers(top - 12, top + 6, shape)) * rng.choice([-1.0, 1.0], shape)
    return np.asarray(s).astype(dtype)


def case(rng, shape, in_type, out_type, axes):
    x = ints(rng, shape, INPUTS[in_type])
    p = projected(shape, axes)
    return x, scales_of(rng, p, TYPES[out_type], INPUTS[in_type]), ints(rng, p, INPUTS[in_type])


def run_and_check(x, scale, zp, *, type, axes):
    got = ngraph_dequantize(x, scale, zp, type=type, axes=axes)
    assert_exact(got, reference(x, scale, zp, type=type, axes=axes))
    return got


# --- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("out_type", list(TYPES))
@pytest.mark.parametrize("in_type", list(INPUTS))
def test_types(in_type, out_type):
    rng = np.random.default_rng([1, list(INPUTS).index(in_type), list(TYPES).index(out_type)])
    for axes in ({1}, set()):
        for _ in range(2):
            shape = tuple(int(d) for d in rng.integers(1, 9, size=2))
            run_and_check(*case(rng, shape, in_type, out_type, axes), type=TYPES[out_type], axes=axes)


SUBSETS = [(r, axes) for r in range(1, 5) for n in range(r + 1) for axes in itertools.combinations(range(r), n)]


@pytest.mark.parametrize("rank,axes", SUBSETS, ids=[f"r{r}-axes{''.join(map(str, a)) or '-none'}" for r, a in SUBSETS])
def test_every_axes_set(rank, axes):
    """Every axes set of ranks 1-4, empty and all axes included; the types rotate over the cases;
    axes given as a set and as an ascending list."""
    k = SUBSETS.index((rank, axes))
    in_type, out_type = list(INPUTS)[k % 3], list(TYPES)[k % 4]
    rng = np.random.default_rng([2, k])
    for i in range(2):
        shape = tuple(int(d) for d in rng.integers(1 if i else 2, 6, size=rank))
        given = set(axes) if i == 0 else list(axes)
        run_and_check(*case(rng, shape, in_type, out_type, axes), type=TYPES[out_type], axes=given)


@pytest.mark.parametrize("out_type", ["f32", "f64", "f16"])
def test_int32_extremes_need_33_bits(out_type):
    """i32 - i32 spans [-(2^32 - 1), 2^32 - 1]: exact in i64, then one conversion."""
    v = np.array([-(2**31), -(2**31) + 1, -(2**24) - 1, -1, 0, 1, 2**24 + 1, 2**31 - 1], np.int32)
    x = np.tile(v, (v.size, 1))  # row i: zero point v[i], every value of v
    scale = np.ones(v.size, TYPES[out_type])
    got = run_and_check(x, scale, v, type=TYPES[out_type], axes={0})
    if out_type == "f64":
        want = x.astype(np.int64) - v.astype(np.int64)[:, None]
        np.testing.assert_array_equal(got, want.astype(np.float64))  # exact: |d| < 2^53
    if out_type != "f16":  # no wrap-around (f16 overflows to inf there)
        top = np.array(2**32 - 1, np.int64).astype(TYPES[out_type])
        assert got[0, -1] == top and got[-1, 0] == -top


@pytest.mark.parametrize("out_type", list(TYPES))
@pytest.mark.parametrize("in_type", ["i8", "u8"])
def test_every_input_against_every_zero_point(in_type, out_type):
    """Axes {0}: row i has zero point i's value and holds all 256 inputs (a 256 x 256 output, split
    across threads)."""
    rng = np.random.default_rng([3, len(in_type), list(TYPES).index(out_type)])
    info = np.iinfo(INPUTS[in_type])
    v = np.arange(info.min, info.max + 1).astype(INPUTS[in_type])
    x = np.tile(v, (v.size, 1))
    for scale in (scales_of(rng, v.size, TYPES[out_type]), np.full(v.size, -1.5, TYPES[out_type])):
        run_and_check(x, scale, v, type=TYPES[out_type], axes={0})
    run_and_check(x.T.copy(), scales_of(rng, v.size, TYPES[out_type]), v, type=TYPES[out_type], axes=[1])


@pytest.mark.parametrize("out_type", list(TYPES))
def test_special_scales(out_type):
    """Zeros of both signs, infinities, NaN, subnormals and the largest finite value of `type`,
    times differences that include zero (0 * inf is NaN, 0 * -s is -0) and overflow in f16/bf16."""
    t = np.dtype(TYPES[out_type])
    f = ml_dtypes.finfo(t)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.smallest_subnormal, -f.smallest_subnormal,
                        f.tiny, f.max, -f.max, 1.0, float(f.eps)], np.float64).astype(t)  # fmt: skip
    v = np.array([-(2**31), -5, -1, 0, 1, 3, 2**31 - 1], np.int32)
    x = np.tile(v, (special.size, 1))
    run_and_check(x, special, np.zeros(special.size, np.int32), type=t, axes={0})
    run_and_check(x, special, np.full(special.size, 3, np.int32), type=t, axes={0})
    run_and_check(x.astype(np.int8), special, np.full(special.size, -1, np.int8), type=t, axes=[0])


@pytest.mark.parametrize(
    "out_type,x,scale,want,once",
    [("bf16", 2**24 + 2**16 + 1, 1.0, 2**24, 2**24 + 2**17), ("f16", 2049 * 2**13 + 1, 2.0**-13, 2048, 2050)],
    ids=["bf16", "f16"],
)
def test_int32_rounded_twice(out_type, x, scale, want, once):
    """docs/semantics.md#arithmetic rounds the i32 difference to f32 and the product to `type`: the
    difference is one above a `type` midpoint, which f32 rounds onto the midpoint (ties to even),
    and `type` then rounds to even, where one rounding of the exact value would round up."""
    got = ngraph_dequantize(np.array([x], np.int32), np.array([scale], TYPES[out_type]), np.array([0], np.int32),
                            type=TYPES[out_type], axes={0})  # fmt: skip
    assert (want + once) / 2 < x * scale < once  # the exact value is above the midpoint
    assert got[0] == want, (got, want, once)
    rng = np.random.default_rng([7, len(out_type)])  # and many random i32 values
    run_and_check(*case(rng, (64, 500), "i32", out_type, (1,)), type=TYPES[out_type], axes=[1])


def test_rank_0():
    """A scalar input with no axes (rank-0 scale and zero point)."""
    got = ngraph_dequantize(np.int8(-5), np.float32(0.5), np.int8(3), type=np.float32, axes=set())
    assert got.shape == () and got == np.float32(-4.0)
    run_and_check(np.array(2**31 - 1, np.int32), np.array(-0.25, np.float16), np.array(-7, np.int32), type=np.float16, axes=[])


def test_read_only_inputs():
    rng = np.random.default_rng(8)
    arrays = case(rng, (3, 4), "u8", "f32", (0, 1))
    for a in arrays:
        a.setflags(write=False)
    run_and_check(*arrays, type=np.float32, axes={0, 1})


def test_f64_output_uses_f64_arithmetic():
    """With type f64 the product is computed in f64: (2^24 + 1) * (1 + 2^-30) is not rounded to f32."""
    scale = np.array(1 + 2.0**-30, np.float64)
    got = ngraph_dequantize(np.array([2**24 + 1], np.int32), scale, np.array(0, np.int32), type=np.float64, axes=set())
    assert got[0] == (2**24 + 1) * (1 + 2.0**-30)


def test_unit_dims_on_axes():
    """Projected dims of size 1 (scale shape with unit dims), then the same op with wider dims."""
    rng = np.random.default_rng(4)
    for shape in [(1, 4, 1), (3, 4, 2), (1, 1, 1), (3, 4, 2)]:
        run_and_check(*case(rng, shape, "u8", "bf16", (0, 2)), type=ml_dtypes.bfloat16, axes={0, 2})


def test_empty_input():
    got = ngraph_dequantize(np.zeros((2, 0, 3), np.uint8), np.ones((2, 3), np.float32), np.zeros((2, 3), np.uint8),
                            type=np.float32, axes={0, 2})  # fmt: skip
    assert got.shape == (2, 0, 3) and got.dtype == np.float32


def test_non_contiguous_input():
    rng = np.random.default_rng(5)
    x = ints(rng, (6, 10), np.int32)[::-2, 1::2]
    scale, zp = scales_of(rng, (5,), np.float16, np.int32), ints(rng, (5,), np.int32)
    run_and_check(x, scale, zp, type=np.float16, axes={1})
    run_and_check(x.T, scale, zp, type=np.float16, axes={0})


@pytest.mark.parametrize("threads", [1, 3])
def test_large_across_threads(threads, dq_threads):
    """Outputs big enough to be split in row ranges, with and without dim 0 among the axes."""
    rng = np.random.default_rng([6, threads])
    dq_threads(threads)
    for shape, axes, in_type, out_type in [((301, 9, 29), (0, 2), "i8", "f32"), ((301, 9, 29), (1,), "u8", "f16"),
                                           ((5, 140, 100), (0, 1, 2), "i32", "f64"), ((3, 30000), (), "u8", "bf16")]:  # fmt: skip
        run_and_check(*case(rng, shape, in_type, out_type, axes), type=TYPES[out_type], axes=set(axes))


def test_out_is_written_and_returned():
    rng = np.random.default_rng(7)
    x, scale, zp = case(rng, (4, 5), "i8", "bf16", (1,))
    out = np.zeros((4, 5), ml_dtypes.bfloat16)
    got = ngraph_dequantize(x, scale, zp, type=ml_dtypes.bfloat16, axes={1}, out=out)
    assert got is out
    assert_exact(out, reference(x, scale, zp, type=ml_dtypes.bfloat16, axes={1}))


@pytest.mark.parametrize(
    "out",
    [np.empty((4, 5), np.float32), np.empty((5, 4), np.float16), np.empty((4, 10), np.float16)[:, ::2]],
    ids=["dtype", "shape", "non-contiguous"],
)
def test_out_must_match(out):
    with pytest.raises(ValueError, match="out must be a C-contiguous float16 array of shape"):
        ngraph_dequantize(np.zeros((4, 5), np.int8), np.ones(5, np.float16), np.zeros(5, np.int8), type=np.float16, axes={1}, out=out)


# --- spec rules -----------------------------------------------------------------------------------

X = np.zeros((2, 3, 4), np.int8)
S, Z = np.ones((3,), np.float32), np.zeros((3,), np.int8)
RULES = [
    ("type-int", dict(type=np.int32), "Output element type (i32) must be a floating point type"),
    ("zp-type", dict(zero_point=Z.astype(np.uint8)), "Zero point element type (ui8) must match input element type (i8)"),
    ("input-quantized", dict(input=X.astype(np.int16), zero_point=Z.astype(np.int16)), "Zero point / input element type (i16) must be a quantized type"),
    ("scale-type", dict(scale=S.astype(np.float16)), "Scale element type (f16) must match output element type (f32)"),
    ("scale-type-bf16", dict(scale=S.astype(ml_dtypes.bfloat16), type=np.float64), "Scale element type (bf16) must match output element type (f64)"),
    ("axes-duplicates", dict(axes=[1, 1]), "axes must not repeat an axis, got [1, 1]"),
    ("axis-range", dict(axes={3}), "Quantization axis (3) must be less than input shape rank (3)"),
    ("axis-negative", dict(axes={-1}), "Quantization axis (-1) must be less than input shape rank (3)"),
    ("shapes-differ", dict(zero_point=np.zeros((1,), np.int8)), "Scale shape ({3}) and zero point shape ({1}) must match"),
    ("rank-vs-axes", dict(axes={0, 1}), "Scale / zero point rank (1) does not match the number of quantization axes (2)"),
    ("rank-vs-no-axes", dict(axes=set()), "Scale / zero point rank (1) does not match the number of quantization axes (0)"),
    ("projected-shape", dict(axes={2}), "Scale / zero point shape ({3}) must match input shape ({2,3,4}) at the quantization axes ({2})"),
    ("projected-order", dict(axes={1, 2}, scale=np.ones((4, 3), np.float32), zero_point=np.zeros((4, 3), np.int8)), "Scale / zero point shape ({4,3}) must match input shape ({2,3,4}) at the quantization axes ({1,2})"),
]  # fmt: skip


@pytest.mark.parametrize("kwargs,message", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_spec_rule_violations_raise(kwargs, message, monkeypatch):
    """Each rule the arrays can break raises ValueError naming it, before any kernel is built or run."""
    monkeypatch.setattr(ops, "kernel_for", lambda *a, **k: pytest.fail("a kernel was requested for arrays that break a rule"))
    args = dict(input=X, scale=S, zero_point=Z, type=np.float32, axes={1}) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        ngraph_dequantize(args.pop("input"), args.pop("scale"), args.pop("zero_point"), **args)


def test_axes_are_a_set_in_any_order():
    """`axes` is a set (docs/semantics.md#ngraph-dequantize): the Python API takes it in any order,
    the same as ascending."""
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    s = rng.random((3, 4)).astype(np.float32)
    z = rng.integers(-5, 5, (3, 4)).astype(np.int8)
    want = ngraph_dequantize(x, s, z, type=np.float32, axes=[1, 2])
    assert_exact(ngraph_dequantize(x, s, z, type=np.float32, axes=[2, 1]), want)
    assert_exact(ngraph_dequantize(x, s, z, type=np.float32, axes={2, 1}), want)
