"""The non-temporal entry point (`kernel_nt`: dq-nontemporal-entries, dq-vectorize) of the compiled
kernels: with the runtime's threshold at 0 every call takes it, with the threshold past any size
none does. Each result must equal, bit for bit, the plain entry's (the kernels other tests hold to
the spec references) and, where one is written here, a numpy formula from
docs/semantics.md#arithmetic. Outputs are placed at every element offset of a cache line (16-byte
aligned rows take the aligned vector stores, others the element-aligned ones), at an offset that
is not a multiple of the element size (such a call takes the plain entry), and with rows shorter
than one vector; on one thread and on three (row ranges at other offsets)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import dequant
from dequant import ops
from dequant.runtime import Runtime
from exact import assert_exact
from pmx_pack import pack_int4x4

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)


def _scales(rng, shape, dtype=np.float32):
    return (rng.uniform(0.5, 1, shape) * np.exp2(rng.integers(-8, 4, shape)) * rng.choice([-1, 1], shape)).astype(dtype)


def _placed(shape, dtype, byte_offset: int) -> np.ndarray:
    """An uninitialised C-contiguous array starting `byte_offset` bytes past a 64-byte boundary."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(n + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + byte_offset
    return raw[start : start + n].view(dtype).reshape(shape)


def onnx_i8_per_axis(rng, rows, cols):
    x = rng.integers(-128, 128, (rows, cols), dtype=np.int8)
    s, z = _scales(rng, cols), rng.integers(-128, 128, cols, dtype=np.int8)
    want = ((x.astype(np.float64) - z) * s).astype(np.float32)  # exact product, rounded once
    return ops.onnx_dequantize_linear, (x, s, z), {"axis": 1}, F32, want


def onnx_u4_block32_f16(rng, rows, cols):
    x = rng.integers(0, 16, (rows, cols)).astype(ml_dtypes.uint4)
    s = _scales(rng, (rows, -(-cols // 32)), np.float16)
    z = rng.integers(0, 16, s.shape).astype(ml_dtypes.uint4)
    d = x.astype(np.int32) - np.repeat(z.astype(np.int32), 32, axis=1)[:, :cols]
    want = (d.astype(np.float32) * np.repeat(s.astype(np.float32), 32, axis=1)[:, :cols]).astype(np.float16)
    return ops.onnx_dequantize_linear, (x, s, z), {"axis": 1, "block_size": 32}, F16, want


def onnx_f8_per_tensor_bf16(rng, rows, cols):
    x = rng.integers(0, 256, (rows, cols), dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    s = np.float32(0.375)
    want = (x.astype(np.float32) * s).astype(ml_dtypes.bfloat16)
    return ops.onnx_dequantize_linear, (x, s), {"output_dtype": ml_dtypes.bfloat16}, BF16, want


def onnx_i16_axis0(rng, rows, cols):
    x = rng.integers(-(2**15), 2**15, (rows, cols), dtype=np.int16)
    s, z = _scales(rng, rows), rng.integers(-(2**15), 2**15, rows, dtype=np.int16)
    want = ((x.astype(np.float64) - z[:, None]) * s[:, None]).astype(np.float32)
    return ops.onnx_dequantize_linear, (x, s, z), {"axis": 0}, F32, want


def onednn_s32_zps(rng, rows, cols):
    x = rng.integers(0, 256, (rows, cols), dtype=np.uint8)
    s = _scales(rng, cols)
    z = rng.integers(-(2**31), 2**31, cols, dtype=np.int64).astype(np.int32)
    z[:2] = [-(2**31), 2**31 - 1]
    want = (x.astype(np.int64) - z).astype(np.float32) * s  # exact difference, rounded once
    return ops.onednn_dynamic_dequantize, (x, s, z), {"qtype": "per_channel", "axis": 1}, F32, want


def ngraph_axes01(rng, rows, cols):
    x = rng.integers(-128, 128, (2, rows, cols), dtype=np.int8)
    s, z = _scales(rng, (2, rows)), rng.integers(-128, 128, (2, rows), dtype=np.int8)
    want = ((x.astype(np.float64) - z[..., None]) * s[..., None]).astype(np.float32)
    return ops.ngraph_dequantize, (x, s, z), {"type": np.float32, "axes": {0, 1}}, F32, want


def pmx_int4x4_zp(rng, rows, cols):
    group = 16 if cols % 16 == 0 else cols  # groups must divide the dim
    nibbles = rng.integers(0, 16, (4 * rows, cols))
    s = _scales(rng, (4 * rows, cols // group), np.float16)
    z = rng.integers(0, 16, s.shape).astype(np.int8)
    attrs = {"quant_data_type": "int4", "group_size": group, "has_zeropoint": True}
    return ops.pmx_dequantize_linear, (pack_int4x4(nibbles), s, z), attrs, F16, None


def onnx_i8_per_axis_bf16(rng, rows, cols):
    x = rng.integers(-128, 128, (rows, cols), dtype=np.int8)
    s, z = _scales(rng, cols, ml_dtypes.bfloat16), rng.integers(-128, 128, cols, dtype=np.int8)
    d = x.astype(np.int32) - z  # exact; then one f32 product, rounded once to bf16
    want = (d.astype(np.float32) * s.astype(np.float32)).astype(ml_dtypes.bfloat16)
    return ops.onnx_dequantize_linear, (x, s, z), {"axis": 1}, BF16, want


def onnx_i8_per_axis_f16(rng, rows, cols):
    """An f16 scale along the columns: widened to f32 once per call (dq-widen-scales-once), in
    both entries."""
    x = rng.integers(-128, 128, (rows, cols), dtype=np.int8)
    s, z = _scales(rng, cols, np.float16), rng.integers(-128, 128, cols, dtype=np.int8)
    d = x.astype(np.int32) - z  # exact; then one f32 product, rounded once to f16
    want = (d.astype(np.float32) * s.astype(np.float32)).astype(np.float16)
    return ops.onnx_dequantize_linear, (x, s, z), {"axis": 1}, F16, want


def onnx_i4_packed_block32(rng, rows, cols):
    """int4 data packed two per byte (dequant.Packed), read in place: whole-byte rows take the
    [rows, bytes, 2] tiles, odd rows the element-wise read."""
    x = rng.integers(-8, 8, (rows, cols)).astype(ml_dtypes.int4)
    s = _scales(rng, (rows, -(-cols // 32)))
    z = rng.integers(-8, 8, s.shape).astype(ml_dtypes.int4)
    d = x.astype(np.int32) - np.repeat(z.astype(np.int32), 32, axis=1)[:, :cols]
    want = (d.astype(np.float64) * np.repeat(s, 32, axis=1)[:, :cols]).astype(np.float32)
    return ops.onnx_dequantize_linear, (dequant.pack(x), s, z), {"axis": 1, "block_size": 32}, F32, want


def onnx_f4_packed_per_tensor(rng, rows, cols):
    """float4 e2m1 packed (every code, -0 included): whole tiles decode by the table lookup."""
    x = rng.integers(0, 16, (rows, cols), dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)
    s = np.float32(-0.375)
    want = (x.astype(np.float64) * np.float64(s)).astype(np.float32)
    return ops.onnx_dequantize_linear, (dequant.pack(x), s), {}, F32, want


def onnx_i4_packed_per_axis(rng, rows, cols):
    """int4 per-axis, x and zero point packed: scale and zero point read along the packed columns."""
    x = rng.integers(-8, 8, (rows, cols)).astype(ml_dtypes.int4)
    s, z = _scales(rng, cols), rng.integers(-8, 8, cols).astype(ml_dtypes.int4)
    want = ((x.astype(np.int32) - z.astype(np.int32)).astype(np.float64) * s).astype(np.float32)
    return ops.onnx_dequantize_linear, (dequant.pack(x), s, dequant.pack(z)), {"axis": 1}, F32, want


def onnx_u2_packed_per_axis(rng, rows, cols):
    """uint2 per-axis packed four per byte (opset 25)."""
    x = rng.integers(0, 4, (rows, cols)).astype(ml_dtypes.uint2)
    s, z = _scales(rng, cols), rng.integers(0, 4, cols).astype(ml_dtypes.uint2)
    want = ((x.astype(np.int32) - z.astype(np.int32)).astype(np.float64) * s).astype(np.float32)
    return ops.onnx_dequantize_linear, (dequant.pack(x), s, z), {"axis": 1}, F32, want


def pmx_int4x4(rng, rows, cols):
    group = 16 if cols % 16 == 0 else cols
    nibbles = rng.integers(0, 16, (4 * rows, cols))
    s = _scales(rng, (4 * rows, cols // group), np.float16)
    want = ((nibbles - 8).astype(np.float32) * np.repeat(s.astype(np.float32), group, axis=1)).astype(np.float16)
    attrs = {"quant_data_type": "int4", "group_size": group}
    return ops.pmx_dequantize_linear, (pack_int4x4(nibbles), s), attrs, F16, want


def pmx_int4x4_g128(rng, rows, cols):
    """OpenPPL int4x4, groups of 128 along the columns, f16: tiles of 128 outputs, where a
    host with AVX-512BW takes each group's 16 values from a per-tile table (dq-vectorize)."""
    group = 128 if cols % 128 == 0 else cols
    nibbles = rng.integers(0, 16, (4 * rows, cols))
    s = _scales(rng, (4 * rows, cols // group), np.float16)
    z = rng.integers(-128, 128, s.shape, dtype=np.int8)
    d = nibbles - (z.astype(np.int64) & 0xF).repeat(group, axis=1)
    want = (d.astype(np.float32) * np.repeat(s.astype(np.float32), group, axis=1)).astype(np.float16)
    attrs = {"quant_data_type": "int4", "group_size": group, "quant_axis": 1, "has_zeropoint": True}
    return ops.pmx_dequantize_linear, (pack_int4x4(nibbles), s, z), attrs, F16, want


CASES = [onnx_i8_per_axis, onnx_u4_block32_f16, onnx_f8_per_tensor_bf16, onnx_i16_axis0, onednn_s32_zps,
         ngraph_axes01, pmx_int4x4_zp, onnx_i8_per_axis_bf16, onnx_i8_per_axis_f16, onnx_i4_packed_block32, onnx_f4_packed_per_tensor,
         onnx_i4_packed_per_axis, onnx_u2_packed_per_axis, pmx_int4x4, pmx_int4x4_g128]  # fmt: skip


@pytest.fixture(params=[1, 3], ids=["1thread", "3threads"])
def plain_and_nontemporal(request):
    """(plain, nontemporal): each runs an op on a runtime whose calls all take the plain entry
    point or all the non-temporal one, on one thread or on three (row ranges: each thread's
    output starts at another offset)."""
    runtimes = {kind: Runtime(request.param) for kind in ("plain", "nt")}
    for kind, r in runtimes.items():
        r.min_parallel = 1 if request.param > 1 else 1 << 40
        r.nontemporal_min_bytes = 0 if kind == "nt" else 1 << 60

    def runner(kind):
        def run(fn, args, attrs, out):
            return ops.OpFunction(fn.opdef, runtimes[kind])(*args, out=out, **attrs)

        return run

    return runner("plain"), runner("nt")


@pytest.mark.parametrize("shape", [(3, 1013), (5, 7), (2, 4096)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_nontemporal_equals_plain(plain_and_nontemporal, case, shape):
    plain, nt = plain_and_nontemporal
    rng = np.random.default_rng([len(case.__name__), *shape])
    fn, args, attrs, dtype, want = case(rng, *shape)
    reference = plain(fn, args, attrs, None)
    if want is not None:
        assert_exact(reference, want)
    size = dtype.itemsize
    for offset in list(range(0, 64, size)) + [1]:  # every element offset in a line; one misaligned
        out = _placed(reference.shape, dtype, offset)
        out.view(np.uint8).fill(0xFF)  # NaN everywhere: an element left unwritten fails
        nt(fn, args, attrs, out)
        assert_exact(out, reference)



# (x type, packed, scale type, output_dtype) for prime blocks along the columns
PRIME_BLOCK_TYPES = [
    pytest.param("int8", False, np.float32, None, id="int8-f32"),
    pytest.param("uint4", True, np.float32, None, id="uint4_packed-f32"),
    pytest.param("int8", False, np.float16, None, id="int8-f16"),
    pytest.param("int16", False, ml_dtypes.bfloat16, None, id="int16-bf16"),
    pytest.param("uint8", False, np.float32, ml_dtypes.bfloat16, id="uint8-f32_to_bf16"),
]


@pytest.mark.parametrize("block", [17, 37])
@pytest.mark.parametrize("x_name, packed, scale_type, out_type", PRIME_BLOCK_TYPES)
def test_prime_blocks(dql_evaluator, dql_check, x_name, packed, scale_type, out_type, block):
    """Blocks of 17 and 37 along the columns through the non-temporal entry, against onnx.reference.
    Its tiles are at most one line and divide the block: 17 or 37 f32 values (and 37 of 16 bits)
    are tiles of one element, left to LLVM (the entry once failed to compile: "failed to peel the
    last iteration"), while 17 16-bit values are one 34-byte tile. Outputs placed 16-byte aligned
    and not."""
    rng = np.random.default_rng([block, len(x_name), int(packed)])
    dtype = getattr(ml_dtypes, x_name, None) or np.dtype(x_name)
    info = ml_dtypes.iinfo(dtype)
    r = Runtime(1)
    r.nontemporal_min_bytes = 0
    f = ops.OpFunction(ops.onnx_dequantize_linear.opdef, r)
    for rows, cols in ((2, 7), (3, 2 * block + 5), (2, 1013)):
        x = rng.integers(int(info.min), int(info.max), (rows, cols), endpoint=True).astype(dtype)
        s = _scales(rng, (rows, -(-cols // block)), scale_type)
        attrs = {"axis": 1, "block_size": block, "output_dtype": out_type}
        want = dql_evaluator(x, s, **attrs)
        for offset in (0, 4):
            out = _placed(want.shape, want.dtype, offset)
            out.view(np.uint8).fill(0xFF)  # NaN everywhere: an element left unwritten fails
            f(dequant.pack(x) if packed else x, s, out=out, **attrs)
            if want.dtype == F32:
                dql_check.same(out, want, x=x)
            else:
                dql_check.within_ulps(out, want, 1, x=x)


@pytest.mark.parametrize("case", [onnx_i8_per_axis, onnx_i4_packed_block32, onnx_i8_per_axis_bf16], ids=lambda c: c.__name__)
def test_entry_point_chosen_on_the_whole_call(case):
    """The runtime picks one entry point per call from the bytes the whole call moves (read +
    written), before splitting its rows across threads: calls just under and at the threshold
    take different entry points, every row range the same one, with equal results."""
    rng = np.random.default_rng(11)
    fn, args, attrs, dtype, want = case(rng, 64, 256)
    runtime = Runtime(2)
    runtime.min_parallel = 1  # two row ranges whatever the size
    f = ops.OpFunction(fn.opdef, runtime)
    plan, _ = f.prepare(*args, **attrs)
    results = {}
    for threshold, nontemporal in ((plan.nbytes + 1, False), (plan.nbytes, True)):
        runtime.nontemporal_min_bytes = threshold
        out = np.full(want.shape, np.nan, dtype)
        f(*args, out=out, **attrs)
        calls = plan.calls()
        assert calls.nontemporal is nontemporal
        assert len(calls.templates) == 2  # both ranges call `calls.entry(...)`, chosen once
        results[nontemporal] = out
    assert_exact(results[True], results[False])
    assert_exact(results[True], want)


def _bf16_edge_scales(n: int) -> np.ndarray:
    """Per-column scales whose products round at every edge of f32 -> bf16: ties to even (odd and
    even bf16 mantissas, low half exactly 0x8000), just below and above a tie, a carry into the
    exponent, overflow to infinity, f32 subnormals (bf16 subnormals), zero, -0, infinities, NaN."""
    bits = [0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x3FFF8000, 0x7F7F8000, 0x7F7FFFFF,
            0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x80408000, 0x00000000, 0x80000000,
            0x7F800000, 0xFF800000, 0x7FC00000, 0xFFA00001]  # fmt: skip
    s = np.resize(np.array(bits, np.uint32), n).view(np.float32).copy()
    return s


@pytest.mark.parametrize("kind", ["plain", "nt"])
def test_bf16_rounding_edges(kind):
    """int8 per-axis to bf16 with x = 1 (the product is the scale, rounded only to bf16) and x in
    -3..3: every lane must be the f32 product rounded to nearest even by ml_dtypes, NaN for NaN.
    Whole 16- and 32-lane tiles (4096 columns) take the vectorized rounding."""
    _assert_bf16_products(kind, _bf16_edge_scales(4096), rows=2, seed=7)


def _assert_bf16_products(kind: str, s: np.ndarray, rows: int, seed: int) -> None:
    """int8 per-axis (x = 1, then x in -3..3) times f32 scales `s` to bf16 through the `kind`
    entry point: each lane the f32 product rounded to nearest even by ml_dtypes."""
    for x in (np.ones((rows, s.size), np.int8), np.random.default_rng(seed).integers(-3, 4, (rows, s.size)).astype(np.int8)):
        r = Runtime(1)
        r.nontemporal_min_bytes = 0 if kind == "nt" else 1 << 60
        got = ops.OpFunction(ops.onnx_dequantize_linear.opdef, r)(x, s, axis=1, output_dtype=ml_dtypes.bfloat16)
        with np.errstate(invalid="ignore", over="ignore"):
            want = (x.astype(np.float32) * s).astype(ml_dtypes.bfloat16)
        assert_exact(got, want)


# f32 values whose rounding to bf16 vcvtne2ps2bf16 gives exactly (ties both ways, just below and
# above a tie, carries into the exponent, overflow to infinity, the smallest normal and a tie
# there, zeros, infinities), and values that tile must take the bit rounding for (subnormals, NaN)
_CLEAN = [0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x3FFF8000, 0x7F7F8000, 0x7F7FFFFF, 0x80408000,
          0x00800000, 0x00808000, 0x80818000, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x4B7FFF80]  # fmt: skip
_BAD = [0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x807F8000, 0x7FC00000, 0xFFA00001]


# _CLEAN without its infinities: every scale zero or normal and finite
_PLAIN = [b for b in _CLEAN if b & 0x7FFFFFFF != 0x7F800000]


@pytest.mark.parametrize("bad", [None, *_BAD, 0x7F800000, 0xFF800000], ids=lambda b: "plain" if b is None else hex(b))
def test_bf16_plain_scales(bad):
    """On AVX512_BF16 hosts the non-temporal entry scans the scales once per call
    (passes/vectorize.py, `_on_plain_scales`): all zero or normal and finite, its tiles round by
    vcvtne2ps2bf16 untested; one NaN, subnormal or infinity among 4096 sends the call through the
    tested tiles. Either way each lane is ml_dtypes' rounding of the f32 product: ties, carries,
    overflow to infinity and the smallest normals with x in -3..3 (x = 0 makes an infinite scale's
    product NaN). Elsewhere the same values hold through the bit rounding."""
    s = np.resize(np.array(_PLAIN, np.uint32), 4096)
    if bad is not None:
        s[1234] = bad
    _assert_bf16_products("nt", s.view(np.float32), rows=3, seed=5)


@pytest.mark.parametrize("kind", ["plain", "nt"])
def test_bf16_conversion_tiles(kind):
    """On hosts with AVX512_BF16, a 32-lane tile holding no NaN and no subnormal is rounded by
    vcvtne2ps2bf16, any other by the bit rounding (passes/vectorize_x86.py, bf16_rounding). Scales of
    clean values in most tiles, one NaN or subnormal in every third: each lane must be the f32
    product rounded to nearest even by ml_dtypes (x = 0 makes an infinite scale's product NaN in
    an otherwise clean tile). Elsewhere every tile takes the bit rounding, which this also holds
    to the same values."""
    cols = 4096
    s = np.resize(np.array(_CLEAN, np.uint32), cols)
    for t in range(0, cols // 32, 3):
        s[32 * t + (7 * t) % 32] = _BAD[t % len(_BAD)]
    _assert_bf16_products(kind, s.view(np.float32), rows=3, seed=11)
