"""Numbers of `dequant.ops.onnx_dequantize_linear` against independent references.

Each numeric test runs twice through the `dql_reference` fixture (conftest.py): once against ONNX's
reference evaluator (`onnx.reference.ReferenceEvaluator`, DequantizeLinear-24) and once against
onnxruntime's CPU kernel (opset 21, or 23/24 where the node needs output_dtype, float4e2m1 or
float8e8m0); combinations onnxruntime rejects are skipped with its own message.

How results are compared (docs/semantics.md#arithmetic):
- f32 output: bit for bit (a NaN matches any NaN). docs/semantics.md#arithmetic: d = x - zero_point is exact, converted
  once to f32, multiplied once by the scale in f32, which is what the reference evaluator does
  (it computes `x.astype(float32) - zp` and multiplies by the scale in float32). The one exception
  docs/semantics.md#arithmetic names, int32 beyond 2^24, has its own test.
- f16/bf16 output: within one ulp of the output type of the reference, and faithfully rounded:
  one of the two output-type values around the exact product (`spec_product`, float64). The
  reference evaluator multiplies in float32 and casts (two roundings) while the spec says "the
  output type also determines the precision of the multiplication", so one ulp apart is allowed;
  faithful rounding is what either way of computing guarantees.
"""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import dequant
from dequant import ops
from dequant.ops import onnx_dequantize_linear

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # inf in the references

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
INTS = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "uint16": np.uint16,
    "int32": np.int32,
    "int4": ml_dtypes.int4,
    "uint4": ml_dtypes.uint4,
}
FLOAT8 = {
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
}
MINIFLOATS = {**FLOAT8, "float4_e2m1fn": ml_dtypes.float4_e2m1fn}
STORAGE = {**INTS, **MINIFLOATS}  # T1 of opset 24
# (x_scale type, output_dtype); float8e8m0 is not an output type, so it always has output_dtype
SCALE_OUT = [
    ("float32", None),
    ("float16", None),
    ("bfloat16", None),
    ("float8_e8m0fnu", "float32"),
    ("float8_e8m0fnu", "float16"),
    ("float8_e8m0fnu", "bfloat16"),
    ("float32", "float16"),
    ("float32", "bfloat16"),
    ("float16", "float32"),
    ("bfloat16", "float32"),
]
DTYPES = {"float32": F32, "float16": F16, "bfloat16": BF16, "float8_e8m0fnu": E8M0}


@pytest.fixture
def rng(request):
    """A generator seeded by the test's id (reproducible, different per case)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def random_shape(rng, rank: int, low: int = 1, high: int = 7, units=None) -> tuple:
    """Dims in [low, high), where `units` (a mask; random, about one in four, if None) dims are 1."""
    units = rng.random(rank) < 0.25 if units is None else np.asarray(units, bool)
    return tuple(int(d) for d in np.where(units, 1, rng.integers(low, high, size=rank)))


def random_x(rng, dtype, shape) -> np.ndarray:
    """Values over the type's whole range (int32: within +-2^24, see test_int32_beyond_2_24)."""
    dtype = np.dtype(dtype)
    if dtype in (np.dtype(t) for t in MINIFLOATS.values()):
        bits = 16 if dtype == np.dtype(ml_dtypes.float4_e2m1fn) else 256
        return rng.integers(0, bits, size=shape, dtype=np.uint8).view(dtype)
    info = ml_dtypes.iinfo(dtype)
    low, high = (-(2**24), 2**24) if dtype == np.int32 else (int(info.min), int(info.max))
    return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)


def random_zero_point(rng, dtype, shape) -> np.ndarray:
    """A zero point of x's type: any value for 8/16/4-bit ints, zeros where the spec says so."""
    dtype = np.dtype(dtype)
    if dtype == np.int32 or dtype in (np.dtype(t) for t in MINIFLOATS.values()):
        return np.zeros(shape, dtype)
    return random_x(rng, dtype, shape)


def random_scale(rng, dtype, shape) -> np.ndarray:
    """Nonzero scales of either sign, magnitudes 2^-12 to 2^2 (e8m0: powers of two 2^-20..2^20)."""
    dtype = np.dtype(dtype)
    if dtype == E8M0:
        return rng.integers(127 - 20, 127 + 21, size=shape, dtype=np.uint8).view(E8M0)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return (sign * 2.0 ** rng.uniform(-12, 2, size=shape)).astype(dtype)


def check_against(dql_reference, dql_check, x, scale, zp=None, **attrs) -> np.ndarray:
    """Run the code under test and `dql_reference` on the same arrays and compare (module docstring)."""
    got = onnx_dequantize_linear(x, scale, zp, **attrs)
    want = dql_reference(x, scale, zp, **attrs)
    assert got.shape == np.shape(x)
    context = {"x": np.asarray(x)}
    if got.dtype == F32:
        dql_check.same(got, want, **context)
    else:
        dql_check.within_ulps(got, want, 1, **context)
        exact = dql_check.spec_product(x, scale, zp, axis=attrs.get("axis", 1), block_size=attrs.get("block_size", 0))
        with np.errstate(over="ignore"):
            dql_check.faithful(got, exact, **context)
    return got


def _out(name):
    return None if name is None else DTYPES[name]


@pytest.mark.parametrize("scale_name, out_name", SCALE_OUT)
@pytest.mark.parametrize("x_name", list(STORAGE))
def test_types(dql_reference, dql_check, rng, x_name, scale_name, out_name):
    """Every T1 storage type with every T2 scale type and T3 output, per-tensor with a zero point."""
    x_dtype, scale_dtype = STORAGE[x_name], DTYPES[scale_name]
    for _ in range(3):
        shape = random_shape(rng, 2, 1, 12)
        x = random_x(rng, x_dtype, shape)
        scale = random_scale(rng, scale_dtype, ())
        zp = random_zero_point(rng, x_dtype, ())
        check_against(dql_reference, dql_check, x, scale, zp, output_dtype=_out(out_name))


@pytest.mark.parametrize("rank", [0, 3])
@pytest.mark.parametrize("zp_shape", [None, (), (1,)], ids=["no_zp", "zp_scalar", "zp_1d"])
@pytest.mark.parametrize("scale_shape", [(), (1,)], ids=["scale_scalar", "scale_1d"])
@pytest.mark.parametrize("x_name", ["int8", "uint4", "float8_e4m3fnuz"])
def test_per_tensor_forms(dql_reference, dql_check, rng, x_name, scale_shape, zp_shape, rank):
    """Per-tensor: the scale and zero point each a scalar or a one-element 1-D tensor (mixed)."""
    x_dtype = STORAGE[x_name]
    for _ in range(3):
        x = random_x(rng, x_dtype, random_shape(rng, rank))
        scale = random_scale(rng, F32, scale_shape)
        zp = None if zp_shape is None else random_zero_point(rng, x_dtype, zp_shape)
        check_against(dql_reference, dql_check, x, scale, zp)


AXES = [(r, a) for r in range(1, 5) for a in range(-r, r)]  # every axis of ranks 1-4, both spellings


def _rotate(i: int, items: list):
    return items[i % len(items)]


PER_AXIS = [
    pytest.param(r, a, _rotate(i + 5 * k, list(STORAGE)), *_rotate(3 * i + k, SCALE_OUT), k == 0, id=f"r{r}-axis{a}-{'zp' if k == 0 else 'no_zp'}")
    for i, (r, a) in enumerate(AXES)
    for k in range(2)
]


@pytest.mark.parametrize("rank, axis, x_name, scale_name, out_name, with_zp", PER_AXIS)
def test_per_axis(dql_reference, dql_check, rng, rank, axis, x_name, scale_name, out_name, with_zp):
    """Per-axis: a 1-D scale (and zero point) of dim(axis) values, every axis of ranks 1-4.
    Storage, scale and output types rotate over the cases so that each appears."""
    x_dtype = STORAGE[x_name]
    for _ in range(3):
        shape = list(random_shape(rng, rank))
        shape[axis] = int(rng.integers(2, 9))  # a per-axis scale has more than one element
        x = random_x(rng, x_dtype, tuple(shape))
        scale = random_scale(rng, DTYPES[scale_name], (shape[axis],))
        zp = random_zero_point(rng, x_dtype, (shape[axis],)) if with_zp else None
        check_against(dql_reference, dql_check, x, scale, zp, axis=axis, output_dtype=_out(out_name))


ROW_TILES = [(4, 16), (5, 17), (7, 33), (8, 64), (9, 47), (3, 48), (13, 100)]


@pytest.mark.parametrize("x_name, out_name", [("uint8", None), ("int16", "float16"), ("int4", None), ("int8", "bfloat16")])
def test_per_axis_last_axis_tile_edges(dql_reference, dql_check, rng, x_name, out_name):
    """Per-axis along the last axis, where the scale and zero point are shared by the rows of a
    tile (dq-vectorize's 4-row tiles; bf16 keeps rows of one): row and column counts on and
    around the tiles' edges, so whole tiles, partial row tiles and partial column tiles all run."""
    x_dtype = STORAGE[x_name]
    for rows, cols in ROW_TILES:
        x = random_x(rng, x_dtype, (rows, cols))
        scale = random_scale(rng, F32, (cols,))
        zp = random_zero_point(rng, x_dtype, (cols,))
        check_against(dql_reference, dql_check, x, scale, zp, axis=1, output_dtype=_out(out_name))


BLOCK_SIZES = [1, 2, 3, 4, 5, 7, 16]
BLOCKED = [
    pytest.param(r, a, _rotate(i, BLOCK_SIZES), _rotate(5 * i, list(STORAGE)), *_rotate(3 * i, SCALE_OUT), i % 2 == 0,
                 id=f"r{r}-axis{a}-b{_rotate(i, BLOCK_SIZES)}-{'zp' if i % 2 == 0 else 'no_zp'}")  # fmt: skip
    for i, (r, a) in enumerate(AXES)
]


def blocked_dims(rng, block_size: int) -> list[int]:
    """Lengths along the blocked axis: shorter than a block, exact multiples, ragged last blocks."""
    b = block_size
    dims = {1, b, b + 1, 2 * b, 3 * b - 1, int(rng.integers(1, 4 * b + 2))}
    return sorted(d for d in dims if d >= 1)


@pytest.mark.parametrize("rank, axis, block_size, x_name, scale_name, out_name, with_zp", BLOCKED)
def test_blocked(dql_reference, dql_check, rng, rank, axis, block_size, x_name, scale_name, out_name, with_zp):
    """Blocked: scale of x's rank, dim S = ceil(D/B) along axis (the only S the ONNX range
    [ceil(D/S), ceil(D/(S-1))-1] allows for B), the last block ragged when B does not divide D.
    A shape onnxruntime refuses (block_size 1 on a one-element scale, which it reads as
    per-tensor) is left out of the onnxruntime run only; the ONNX reference evaluator's run of the
    same parameters compares every shape, and a run where onnxruntime refuses all is a skip."""
    x_dtype = STORAGE[x_name]
    units = rng.random(rank) < 0.3  # which dims are 1 stays fixed: unit scale dims are compiled in
    dims, left_out = blocked_dims(rng, block_size), []
    for d in dims:
        shape = list(random_shape(rng, rank, units=units))
        shape[axis] = d
        s_shape = list(shape)
        s_shape[axis] = -(-d // block_size)
        x = random_x(rng, x_dtype, tuple(shape))
        scale = random_scale(rng, DTYPES[scale_name], tuple(s_shape))
        zp = random_zero_point(rng, x_dtype, tuple(s_shape)) if with_zp else None
        try:
            check_against(dql_reference, dql_check, x, scale, zp, axis=axis, block_size=block_size, output_dtype=_out(out_name))
        except pytest.skip.Exception as e:
            left_out.append(str(e))
    if len(left_out) == len(dims):
        pytest.skip(left_out[0])


# Blocks whose bf16 tiles are an odd count of 16-lane vectors (48, 80, 112, 240: 3, 5, 7, 15), or
# an odd count of their 32-lane pairs (96), where dq-vectorize's joins of f32 -> bf16 roundings
# once built shuffles past their operands (issue 36.3); x types through both byte-per-element and
# packed reads, ranks 1-3 along the last axis
ODD_VECTOR_BLOCKS = [
    pytest.param(b, x_name, packed, scale_name, out_name, rank, id=f"b{b}-{x_name}{'-packed' if packed else ''}-{scale_name}-r{rank}")
    for i, b in enumerate([48, 80, 112, 240, 96])
    for k, (scale_name, out_name) in enumerate([("bfloat16", None), ("float32", "bfloat16")])
    for x_name, packed in [_rotate(2 * i + k, [("int8", False), ("uint16", False), ("float8_e5m2fnuz", False), ("int4", True), ("uint4", True)])]
    for rank in [_rotate(i + k, [1, 2, 3])]
]


@pytest.mark.parametrize("block_size, x_name, packed, scale_name, out_name, rank", ODD_VECTOR_BLOCKS)
def test_blocks_of_odd_vector_counts(dql_evaluator, dql_check, rng, block_size, x_name, packed, scale_name, out_name, rank):
    """bf16 outputs blocked along the last axis in blocks of an odd count of vectors, against
    onnx.reference: dims of 1-7 (a block wider than the data: only partial tiles run), around
    one block and over two (whole tiles, then a ragged block)."""
    x_dtype = STORAGE[x_name]
    b = block_size
    for d in [1, 2, 7, b - 1, b, b + 5, 2 * b + 16]:
        shape = list(random_shape(rng, rank, high=4))
        shape[-1] = d
        s_shape = shape[:-1] + [-(-d // b)]
        x = random_x(rng, x_dtype, tuple(shape))
        scale = random_scale(rng, DTYPES[scale_name], tuple(s_shape))
        attrs = {"axis": -1, "block_size": b, "output_dtype": _out(out_name)}
        got = onnx_dequantize_linear(dequant.pack(x) if packed else x, scale, **attrs)
        dql_check.within_ulps(got, dql_evaluator(x, scale, **attrs), 1, x=x)
        with np.errstate(over="ignore"):
            dql_check.faithful(got, dql_check.spec_product(x, scale, axis=-1, block_size=b), x=x)


MINIFLOAT_SCALE_OUT = [("float32", None), ("float16", None), ("bfloat16", None), ("float8_e8m0fnu", "float32"), ("float32", "float16"), ("float8_e8m0fnu", "bfloat16")]


@pytest.mark.parametrize("scale_name, out_name", MINIFLOAT_SCALE_OUT)
@pytest.mark.parametrize("x_name", list(MINIFLOATS))
def test_minifloat_all_bit_patterns(dql_reference, dql_check, rng, x_name, scale_name, out_name):
    """float8/float4 inputs: every bit pattern (NaN, infinities, -0, subnormals), with the zero
    point absent, zero and -0 (not subtracted: -0 - -0 would give +0 where the reference keeps -0)."""
    x_dtype = np.dtype(MINIFLOATS[x_name])
    n = 16 if x_dtype == np.dtype(ml_dtypes.float4_e2m1fn) else 256
    x = rng.permutation(np.arange(n, dtype=np.uint8)).view(x_dtype).reshape(-1, 16)
    for zp in (None, np.zeros((), x_dtype), np.array(-0.0).astype(x_dtype)):
        for _ in range(2):
            scale = random_scale(rng, DTYPES[scale_name], ())
            check_against(dql_reference, dql_check, x, scale, zp, output_dtype=_out(out_name))
    check_against(dql_reference, dql_check, x, np.ones((), DTYPES[scale_name]), output_dtype=_out(out_name))


@pytest.mark.parametrize("out_name", ["float32", "float16", "bfloat16"])
def test_e8m0_all_scales(dql_reference, dql_check, rng, out_name):
    """float8e8m0 scales: all 256 (2^-127 .. 2^127 and NaN), per-axis over int8 data."""
    scale = rng.permutation(np.arange(256, dtype=np.uint8)).view(E8M0)
    x = random_x(rng, np.int8, (5, 256))
    zp = random_zero_point(rng, np.int8, (256,))
    with np.errstate(over="ignore"):
        check_against(dql_reference, dql_check, x, scale, zp, axis=-1, output_dtype=DTYPES[out_name])


@pytest.mark.parametrize("x_name", ["int16", "uint16", "int8", "uint8", "int4", "uint4"])
def test_integer_extremes(dql_reference, dql_check, x_name):
    """Largest differences x - zero_point (both signs) and zero differences, scale 1 and -1."""
    dtype = np.dtype(STORAGE[x_name])
    info = ml_dtypes.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    x = np.array([[lo, hi, lo, hi, 0, hi]] * 2, dtype=dtype)
    zp = np.array([hi, lo], dtype=dtype)  # per-axis along dim 0
    for scale in (np.array([1, -1], np.float32), np.array([2.0**-24, 3.0], np.float32)):
        check_against(dql_reference, dql_check, x, scale, zp, axis=0)


@pytest.mark.parametrize("scale_name", ["float32", "float16", "bfloat16"])
def test_special_scales(dql_reference, dql_check, scale_name):
    """Scales 0, -0, +-inf, NaN, subnormal and huge (per-axis), times 0, +-1 and extremes."""
    scale = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38, -1e-40, 6e-8, 65504], np.float32)
    with np.errstate(over="ignore"):
        scale = scale.astype(DTYPES[scale_name])
    x = np.array([[0] * 10, [1] * 10, [-1] * 10, [127] * 10, [-128] * 10], np.int8)
    zp = np.zeros(10, np.int8)
    with np.errstate(over="ignore", invalid="ignore"):
        check_against(dql_reference, dql_check, x, scale, None, axis=1)
        check_against(dql_reference, dql_check, x, scale, zp, axis=1)


def test_non_contiguous_inputs(dql_reference, dql_check, rng):
    """Strided and reversed views of x, scale and zero point."""
    x = random_x(rng, np.int16, (10, 12, 5))[::2, ::-3]
    scale = random_scale(rng, F32, (8,))[::-2]
    zp = random_zero_point(rng, np.int16, (8,))[1::2]
    check_against(dql_reference, dql_check, x, scale, zp, axis=1)
    check_against(dql_reference, dql_check, x.T, scale, zp, axis=1)


@pytest.mark.parametrize("shape, axis, s_shape, block_size", [
    ((0, 5), 1, (5,), 0), ((5, 0), 0, (5,), 0), ((0,), 0, (), 0), ((0, 3), 1, (0, 1), 4),
    ((5, 0), 1, (5, 0), 4), ((5, 0), 1, (5, 1), 4),  # an empty blocked axis: Si = 0 or 1 (found by fuzzing)
    ((0,), 0, (1,), 1), ((5, 0), 1, (5, 1), 1), ((5, 0), -1, (5, 1), 1),  # the same with block_size 1 (fuzzing again)
])  # fmt: skip
def test_empty(dql_reference, dql_check, rng, shape, axis, s_shape, block_size):
    """Arrays with a zero dim: an empty result of x's shape."""
    x = random_x(rng, np.uint8, shape)
    scale = random_scale(rng, F32, s_shape)
    got = check_against(dql_reference, dql_check, x, scale, None, axis=axis, block_size=block_size)
    assert got.shape == shape and got.dtype == F32


@pytest.mark.parametrize("with_zp", [False, True])
def test_int32_beyond_2_24(dql_reference, dql_check, rng, with_zp):
    """int32 over its whole range. docs/semantics.md#arithmetic: d converted once to f32, then one f32 multiplication;
    that formula is asserted exactly, and the reference within one f32 ulp (the case docs/semantics.md#arithmetic
    exempts from bit-for-bit equality)."""
    x = rng.integers(-(2**31), 2**31, size=(7, 300), dtype=np.int64).astype(np.int32)
    x[0, :6] = [-(2**31), 2**31 - 1, 2**24 + 1, -(2**24) - 1, 2**31 - 65, 16777217 * 3]
    scale = random_scale(rng, F32, (300,))
    zp = np.zeros(300, np.int32) if with_zp else None
    got = onnx_dequantize_linear(x, scale, zp, axis=1)
    notes = x.astype(np.int64).astype(np.float32) * scale  # numpy: IEEE f32 multiply, round to nearest
    dql_check.same(got, notes, x=x)
    dql_check.within_ulps(got, dql_reference(x, scale, zp, axis=1), 1, x=x)


LARGE = [  # at least 2^16 output elements, where rows are split over threads
    pytest.param("int8", (1000, 70), 0, 0, (1000,), True, "float32", None, id="per_axis_axis0"),
    pytest.param("uint8", (300, 7, 40), -1, 0, (40,), True, "float32", None, id="per_axis_last"),
    pytest.param("int4", (1000, 66), 0, 7, (143, 66), True, "float32", None, id="blocked_axis0_ragged"),
    pytest.param("int16", (513, 130), 0, 16, (33, 130), False, "float32", None, id="blocked_axis0_b16_ragged"),
    pytest.param("uint4", (700, 100), 1, 3, (700, 34), True, "float32", None, id="blocked_axis1_ragged"),
    pytest.param("float8_e4m3fn", (257, 300), 1, 0, (), False, "float32", None, id="per_tensor"),
    pytest.param("uint16", (70001,), 0, 0, (70001,), True, "float32", None, id="rank1_per_axis"),
    pytest.param("int8", (70001,), 0, 5, (14001,), True, "float32", None, id="rank1_blocked_ragged"),
    pytest.param("int8", (3, 40000), 0, 2, (2, 40000), True, "float32", None, id="blocked_axis0_few_rows"),
    pytest.param("float8_e5m2", (250, 9, 40), -3, 4, (63, 9, 40), False, "float32", None, id="blocked_axis_minus3"),
    pytest.param("uint8", (301, 250), 0, 0, (301,), True, "float16", None, id="per_axis_f16"),
    pytest.param("int4", (1000, 70), 0, 3, (334, 70), True, "float8_e8m0fnu", "bfloat16", id="blocked_e8m0_bf16"),
]


@pytest.fixture(params=[2, 3, 7], ids=lambda n: f"threads{n}")
def threads(request, dq_threads):
    """Run with n threads (dequant.ops.set_num_threads), restored afterwards."""
    dq_threads(request.param)
    return request.param


@pytest.mark.parametrize("x_name, shape, axis, block_size, s_shape, with_zp, scale_name, out_name", LARGE)
def test_large_threaded(dql_evaluator, dql_check, rng, threads, x_name, shape, axis, block_size, s_shape, with_zp,
                        scale_name, out_name):  # fmt: skip
    """Large arrays, whose output rows are split over threads at block boundaries, against the
    reference evaluator, with and without `out=`."""
    x_dtype = STORAGE[x_name]
    x = random_x(rng, x_dtype, shape)
    scale = random_scale(rng, DTYPES[scale_name], s_shape)
    zp = random_zero_point(rng, x_dtype, s_shape) if with_zp else None
    attrs = {"axis": axis, "block_size": block_size, "output_dtype": _out(out_name)}
    got = check_against(dql_evaluator, dql_check, x, scale, zp, **attrs)
    out = np.full(shape, np.nan, got.dtype)
    assert onnx_dequantize_linear(x, scale, zp, **attrs, out=out) is out
    dql_check.same(out, got)


@pytest.mark.parametrize("out_name", ["float32", "bfloat16"])
def test_out(dql_check, rng, out_name):
    """`out=`: the result is written into the given array, which is returned."""
    x = random_x(rng, np.uint8, (3, 5, 4))
    scale = random_scale(rng, F32, (5,))
    zp = random_zero_point(rng, np.uint8, (5,))
    out_dtype = DTYPES[out_name]
    out = np.full(x.shape, np.nan, out_dtype)
    result = onnx_dequantize_linear(x, scale, zp, axis=1, output_dtype=out_dtype, out=out)
    assert result is out
    dql_check.same(out, onnx_dequantize_linear(x, scale, zp, axis=1, output_dtype=out_dtype))
    assert not np.isnan(out.astype(np.float32)).any()


def _errors():
    i8, f32 = np.int8, np.float32
    x2 = np.zeros((2, 3), i8)
    s3 = np.ones(3, f32)
    f8 = np.zeros((2, 3), ml_dtypes.float8_e4m3fn)
    e8 = np.ones((), E8M0)
    cases = {
        "x_not_T1": ((np.zeros((2, 3), f32), np.float32(1)), {}, r"x must be a tensor of T1"),
        "x_float64_not_T1": ((np.zeros((2, 3), np.float64), np.float32(1)), {}, r"x must be a tensor of T1"),
        "scale_not_T2": ((x2, np.int8(1)), {}, r"x_scale must be a tensor of T2"),
        "scale_float64_not_T2": ((x2, np.float64(1)), {}, r"x_scale must be a tensor of T2"),
        "output_dtype_not_T3": ((x2, np.float32(1)), {"output_dtype": np.float64}, r"output_dtype must be one of T3"),
        "output_dtype_e8m0": ((x2, e8), {"output_dtype": E8M0}, r"output_dtype must be one of T3"),
        "zero_point_type_differs": ((x2, np.float32(1), np.uint8(0)), {}, r"x_zero_point and x must have the same type"),
        "zero_point_int4_vs_int8": ((x2, np.float32(1), np.zeros((), ml_dtypes.int4)), {}, r"same type"),
        "per_axis_length": ((x2, np.ones(2, f32)), {"axis": 1}, r"per-axis x_scale must have dim\(axis\) = 3"),
        "per_axis_length_negative_axis": ((x2, np.ones(3, f32)), {"axis": -2}, r"per-axis x_scale must have dim\(axis\) = 2"),
        "axis_too_large": ((x2, s3), {"axis": 2}, r"axis 2 is out of the accepted range \[-r, r-1\]"),
        "rank1_default_axis": ((np.zeros(4, i8), np.ones(4, f32)), {}, r"axis 1 is out of the accepted range \[-r, r-1\] where r = rank\(input\) = 1"),
        "axis_too_small": ((x2, s3), {"axis": -3}, r"axis -3 is out of the accepted range \[-r, r-1\]"),
        "blocked_axis_out_of_range": ((x2, np.ones((2, 1), f32)), {"axis": 5, "block_size": 3}, r"out of the accepted range \[-r, r-1\]"),
        "block_size_negative": ((x2, np.ones((2, 3), f32)), {"block_size": -1}, r"block_size must be a positive integer"),
        "block_size_too_small": ((np.zeros((2, 10), i8), np.ones((2, 3), f32)), {"block_size": 3}, r"block_size 3 is out of the accepted range \[ceil\(Di/Si\), ceil\(Di/\(Si-1\)\)-1\]"),
        "block_size_too_large": ((np.zeros((2, 10), i8), np.ones((2, 3), f32)), {"block_size": 5}, r"block_size 5 is out of the accepted range"),
        "blocked_dims_mismatch": ((x2, np.ones((3, 2), f32)), {"block_size": 2}, r"blocked x_scale must have the shape of x except along axis"),
        "blocked_rank_mismatch": ((x2, np.ones(2, f32)), {"block_size": 2}, r"blocked x_scale must have the rank of x"),
        "scale_rank_2_not_blocked": ((x2, np.ones((2, 3), f32)), {}, r"x_scale must be a scalar or 1-D tensor unless block_size > 0"),
        "zero_point_shape_differs": ((x2, s3, np.zeros(2, i8)), {}, r"x_zero_point shape must match x_scale"),
        "blocked_zero_point_shape": ((x2, np.ones((2, 2), f32), np.zeros((2, 3), i8)), {"block_size": 2}, r"x_zero_point shape must match x_scale"),
        "int32_nonzero_zero_point": ((np.zeros((2, 3), np.int32), s3, np.array([0, 1, 0], np.int32)), {}, r"int32 x has no zero point"),
        "float8_nonzero_zero_point": ((f8, np.float32(1), np.ones((), ml_dtypes.float8_e4m3fn)), {}, r"f8E4M3FN x_zero_point must be absent or zero"),
        "float8_nan_zero_point": ((f8, np.float32(1), np.full((), np.nan, ml_dtypes.float8_e4m3fn)), {}, r"x_zero_point must be absent or zero"),
        "float4_nonzero_zero_point": ((np.zeros(4, ml_dtypes.float4_e2m1fn), np.float32(1), np.ones((), ml_dtypes.float4_e2m1fn)), {}, r"f4E2M1FN x_zero_point must be absent or zero"),
        "e8m0_without_output_dtype": ((x2, e8), {}, r"float8e8m0 x_scale needs output_dtype"),
        "out_wrong_dtype": ((x2, np.float32(1)), {"out": np.empty((2, 3), np.float16)}, r"out must be a C-contiguous float32 array of shape \[2, 3\]"),
        "out_wrong_shape": ((x2, np.float32(1)), {"out": np.empty((3, 2), f32)}, r"out must be a C-contiguous float32 array of shape \[2, 3\]"),
        "out_not_contiguous": ((x2, np.float32(1)), {"out": np.empty((3, 2), f32).T}, r"out must be a C-contiguous"),
        "out_wrong_output_dtype": ((x2, np.float32(1)), {"output_dtype": BF16, "out": np.empty((2, 3), f32)}, r"out must be a C-contiguous bfloat16 array"),
    }  # fmt: skip
    return [pytest.param(*v, id=k) for k, v in cases.items()]


@pytest.fixture
def no_native_call(monkeypatch):
    """Fail the test if a kernel is compiled or called: errors come before any native call."""

    def native(*args, **kwargs):
        raise AssertionError("a kernel was compiled or called for arrays that break the spec")

    monkeypatch.setattr(ops, "kernel_for", native)
    monkeypatch.setattr(ops.CallTemplate, "call", native)


@pytest.mark.parametrize("args, kwargs, match", _errors())
def test_value_errors(no_native_call, args, kwargs, match):
    """Arrays that break a spec rule: ValueError naming the rule, before any native call."""
    with pytest.raises(ValueError, match=match):
        onnx_dequantize_linear(*args, **kwargs)


def test_block_size_2_pow_63_minus_1(dql_reference, dql_check, rng):
    """The largest block_size: one block per axis (the vectorizer's tile search once ran for
    ever on it; found by fuzzing). The reference gets the dim's length, which reads the same."""
    x = random_x(rng, np.int8, (3, 40))
    scale = random_scale(rng, F32, (3, 1))
    got = onnx_dequantize_linear(x, scale, axis=1, block_size=2**63 - 1)
    dql_check.same(got, dql_reference(x, scale, axis=1, block_size=40), x=x)
