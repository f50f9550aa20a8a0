"""`dequant.jit` on module texts with `dq.onnx_dequantize_linear` ops, against ONNX's reference
evaluator (conftest.py): f32 results bit for bit, f16/bf16 within one ulp of the reference and
faithfully rounded (see test_onnx_dequantize_linear.py for why). Arrays that do not fit the
function, or break an op's rule, raise ValueError before the native call."""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import dequant

MODULE = """
func.func @dynamic(%x: tensor<?x?xi8>, %s: tensor<?xf32>, %z: tensor<?xi8>) -> tensor<?x?xf32> {
  %0 = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 0 : i64} : (tensor<?x?xi8>, tensor<?xf32>, tensor<?xi8>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

func.func @static(%x: tensor<4x6xf8E4M3FN>, %s: tensor<f16>) -> tensor<4x6xf16> {
  %0 = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 0 : i64} : (tensor<4x6xf8E4M3FN>, tensor<f16>) -> tensor<4x6xf16>
  return %0 : tensor<4x6xf16>
}

func.func @blocked(%x: tensor<?x?x?xi4>, %s: tensor<?x?x?xf32>, %z: tensor<?x?x?xi4>) -> tensor<?x?x?xbf16> {
  %0 = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -1 : i64, block_size = 3 : i64, output_dtype = bf16} : (tensor<?x?x?xi4>, tensor<?x?x?xf32>, tensor<?x?x?xi4>) -> tensor<?x?x?xbf16>
  return %0 : tensor<?x?x?xbf16>
}

func.func @two(%x: tensor<?x?xui8>, %s: tensor<?xf16>, %z: tensor<?xui8>, %t: tensor<1xf32>) -> (tensor<?x?xf16>, tensor<?x?xbf16>) {
  %0 = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<?x?xui8>, tensor<?xf16>, tensor<?xui8>) -> tensor<?x?xf16>
  %1 = "dq.onnx_dequantize_linear"(%x, %t) {output_dtype = bf16} : (tensor<?x?xui8>, tensor<1xf32>) -> tensor<?x?xbf16>
  return %0, %1 : tensor<?x?xf16>, tensor<?x?xbf16>
}

func.func @several(%a: tensor<?x?xi16>, %sa: tensor<?x?xf32>, %b: tensor<?xf8E5M2>, %sb: tensor<f8E8M0FNU>,
                   %c: tensor<?x3xi32>, %d: tensor<2x?x3xui4>, %sd: tensor<3xbf16>, %zd: tensor<3xui4>)
    -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<2x?x3xbf16>) {
  %s = arith.constant dense<[0.5, -0.25, 3.0]> : tensor<3xf32>
  %z = arith.constant dense<0> : tensor<3xi32>
  %0 = "dq.onnx_dequantize_linear"(%a, %sa) {axis = 0 : i64, block_size = 4 : i64} : (tensor<?x?xi16>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = "dq.onnx_dequantize_linear"(%b, %sb) {output_dtype = f32} : (tensor<?xf8E5M2>, tensor<f8E8M0FNU>) -> tensor<?xf32>
  %2 = "dq.onnx_dequantize_linear"(%c, %s, %z) {axis = -1 : i64} : (tensor<?x3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<?x3xf32>
  %3 = "dq.onnx_dequantize_linear"(%d, %sd, %zd) {axis = 2 : i64} : (tensor<2x?x3xui4>, tensor<3xbf16>, tensor<3xui4>) -> tensor<2x?x3xbf16>
  return %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<2x?x3xbf16>
}
"""


@pytest.fixture(scope="module")
def kernels():
    """Each function of MODULE compiled once."""
    return {name: dequant.jit(MODULE, name) for name in ("dynamic", "static", "blocked", "two", "several")}


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def ints(rng, dtype, shape):
    info = ml_dtypes.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max), size=shape, endpoint=True).astype(dtype)


def scales(rng, dtype, shape):
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return (sign * 2.0 ** rng.uniform(-10, 2, size=shape)).astype(dtype)


def compare(dql_check, got, want, exact):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype == np.float32:
        dql_check.same(got, want)
    else:
        dql_check.within_ulps(got, want, 1)
        with np.errstate(over="ignore"):
            dql_check.faithful(got, exact)


def against_reference(dql_evaluator, dql_check, got, *arrays, **attrs):
    """Compare `got` with the reference evaluator's result for one DequantizeLinear node."""
    want = dql_evaluator(*arrays, **attrs)
    attrs.pop("output_dtype", None)
    compare(dql_check, got, want, dql_check.spec_product(*arrays, **attrs))


def test_dynamic_shapes(kernels, dql_evaluator, dql_check, rng):
    """One compiled function, called on many shapes (dims of 1 included)."""
    for shape in [(1, 2), (5, 2), (3, 7), (1, 9), (64, 33), (300, 250)]:
        x = ints(rng, np.int8, shape)
        s, z = scales(rng, np.float32, shape[1]), ints(rng, np.int8, shape[1])
        got = kernels["dynamic"](x, s, z)
        against_reference(dql_evaluator, dql_check, got, x, s, z, axis=1)


def test_static_shapes_all_float8_values(kernels, dql_evaluator, dql_check, rng):
    """A static function: float8e4m3fn over its 256 bit patterns, six calls of 4x6."""
    patterns = rng.permutation(np.arange(256, dtype=np.uint8)).view(ml_dtypes.float8_e4m3fn)
    patterns = np.concatenate([patterns, patterns[:8]])
    for chunk in patterns.reshape(-1, 4, 6):
        s = scales(rng, np.float16, ())
        got = kernels["static"](chunk, s)
        assert got.dtype == np.float16 and got.shape == (4, 6)
        against_reference(dql_evaluator, dql_check, got, chunk, s)


def test_blocked_ragged(kernels, dql_evaluator, dql_check, rng):
    """Blocked along the last axis, block_size 3, last block ragged or full, bf16 output."""
    for d in (1, 2, 3, 4, 8, 9, 10):
        shape = (int(rng.integers(1, 4)), int(rng.integers(1, 5)), d)
        s_shape = shape[:2] + (-(-d // 3),)
        x, z = ints(rng, ml_dtypes.int4, shape), ints(rng, ml_dtypes.int4, s_shape)
        s = scales(rng, np.float32, s_shape)
        got = kernels["blocked"](x, s, z)
        against_reference(dql_evaluator, dql_check, got, x, s, z, axis=-1, block_size=3, output_dtype=ml_dtypes.bfloat16)


def test_two_results(kernels, dql_evaluator, dql_check, rng):
    """Two dq ops on one argument, two results of different types."""
    x = ints(rng, np.uint8, (6, 11))
    s, z, t = scales(rng, np.float16, 6), ints(rng, np.uint8, 6), scales(rng, np.float32, 1)
    y0, y1 = kernels["two"](x, s, z, t)
    against_reference(dql_evaluator, dql_check, y0, x, s, z, axis=0)
    against_reference(dql_evaluator, dql_check, y1, x, t, output_dtype=ml_dtypes.bfloat16)


def test_several_ops(kernels, dql_evaluator, dql_check, rng):
    """Four dq ops in one function (blocked, float8 with an e8m0 scale, int32 with constant scale
    and zero point, uint4 per-axis with a bf16 scale), four results."""
    for n in (1, 5, 9):
        a, sa = ints(rng, np.int16, (n, 7)), scales(rng, np.float32, (-(-n // 4), 7))
        b = rng.integers(0, 256, size=3 * n, dtype=np.uint8).view(ml_dtypes.float8_e5m2)
        sb = np.array(2.0**-3, ml_dtypes.float8_e8m0fnu)
        c = rng.integers(-(2**24), 2**24, size=(n, 3)).astype(np.int32)
        d = ints(rng, ml_dtypes.uint4, (2, n, 3))
        sd, zd = scales(rng, ml_dtypes.bfloat16, 3), ints(rng, ml_dtypes.uint4, 3)
        y = kernels["several"](a, sa, b, sb, c, d, sd, zd)
        assert len(y) == 4
        against_reference(dql_evaluator, dql_check, y[0], a, sa, axis=0, block_size=4)
        against_reference(dql_evaluator, dql_check, y[1], b, sb, output_dtype=np.float32)
        s, z = np.array([0.5, -0.25, 3.0], np.float32), np.zeros(3, np.int32)
        against_reference(dql_evaluator, dql_check, y[2], c, s, z, axis=-1)
        against_reference(dql_evaluator, dql_check, y[3], d, sd, zd, axis=2)


@pytest.fixture
def refuse_call(kernels, monkeypatch):
    """The kernels, each failing the test if it reaches its native call."""

    def native(*args, **kwargs):
        raise AssertionError("the native function was called with arrays that do not fit")

    for k in kernels.values():
        monkeypatch.setattr(k, "_native", native)
    return kernels


def _bad_calls():
    i8, f32 = np.int8, np.float32
    f8 = np.zeros((4, 6), ml_dtypes.float8_e4m3fn)
    cases = {
        "too_few_arrays": ("dynamic", (np.zeros((2, 3), i8), np.ones(3, f32)), r"'dynamic' takes 3 arrays, got 2"),
        "wrong_dtype": ("dynamic", (np.zeros((2, 3), np.uint8), np.ones(3, f32), np.zeros(3, i8)), r"argument 0: expected dtype int8"),
        "wrong_scale_dtype": ("dynamic", (np.zeros((2, 3), i8), np.ones(3, np.float16), np.zeros(3, i8)), r"argument 1: expected dtype float32"),
        "wrong_rank": ("dynamic", (np.zeros((2, 3, 1), i8), np.ones(3, f32), np.zeros(3, i8)), r"argument 0: expected shape .*, got \[2, 3, 1\]"),
        "static_wrong_shape": ("static", (np.zeros((6, 4), ml_dtypes.float8_e4m3fn), np.ones((), np.float16)), r"argument 0: expected shape \[4, 6\]"),
        "static_wrong_dtype": ("static", (f8.view(ml_dtypes.float8_e5m2), np.ones((), np.float16)), r"argument 0: expected dtype float8_e4m3fn"),
        "per_axis_length": ("dynamic", (np.zeros((2, 3), i8), np.ones(4, f32), np.zeros(4, i8)), r"per-axis x_scale must have dim\(axis\) = 3"),
        "zero_point_shape": ("dynamic", (np.zeros((2, 3), i8), np.ones(3, f32), np.zeros(2, i8)), r"x_zero_point shape must match x_scale"),
        "blocked_dims": ("blocked", (np.zeros((2, 3, 6), ml_dtypes.int4), np.ones((2, 2, 2), f32), np.zeros((2, 2, 2), ml_dtypes.int4)), r"blocked x_scale must have the shape of x except along axis"),
        "block_size_range": ("blocked", (np.zeros((2, 3, 6), ml_dtypes.int4), np.ones((2, 3, 3), f32), np.zeros((2, 3, 3), ml_dtypes.int4)), r"block_size 3 is out of the accepted range"),
    }  # fmt: skip
    return [pytest.param(*v, id=k) for k, v in cases.items()]


@pytest.mark.parametrize("entry, arrays, match", _bad_calls())
def test_bad_arguments(refuse_call, entry, arrays, match):
    """Arrays that do not fit the function's types, or break a dq op's rule: ValueError naming it."""
    with pytest.raises(ValueError, match=match):
        refuse_call[entry](*arrays)


def test_one_element_scale_where_dynamic_was_compiled(refuse_call):
    """A `?` scale dim called with one element would select per-tensor, not the compiled per-axis."""
    with pytest.raises(ValueError, match=r"another granularity than the one compiled"):
        refuse_call["dynamic"](np.zeros((2, 1), np.int8), np.ones(1, np.float32), np.zeros(1, np.int8))


INT32 = """
func.func @int32(%x: tensor<?xi32>, %s: tensor<?xf32>, %z: tensor<?xi32>) -> tensor<?xf32> {
  %0 = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<?xi32>, tensor<?xf32>, tensor<?xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""


def test_int32_nonzero_zero_point_argument(monkeypatch):
    """A zero point passed as an argument is checked by value on each call."""
    k = dequant.jit(INT32, "int32")
    x, s = np.arange(3, dtype=np.int32), np.ones(3, np.float32)
    np.testing.assert_array_equal(k(x, s, np.zeros(3, np.int32)), x.astype(np.float32))

    def native(*args):
        raise AssertionError("the native function was called with a nonzero int32 zero point")

    monkeypatch.setattr(k, "_native", native)
    with pytest.raises(ValueError, match=r"int32 x has no zero point"):
        k(x, s, np.array([0, 0, 1], np.int32))


def test_module_breaking_a_rule_is_rejected_at_jit():
    """An op without output_dtype on a float8e8m0 scale breaks the spec: no kernel is built."""
    text = """
func.func @f(%x: tensor<4xi8>, %s: tensor<f8E8M0FNU>) -> tensor<4xf8E8M0FNU> {
  %0 = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xi8>, tensor<f8E8M0FNU>) -> tensor<4xf8E8M0FNU>
  return %0 : tensor<4xf8E8M0FNU>
}
"""
    with pytest.raises(ValueError):
        dequant.jit(text, "f")


def test_unknown_entry():
    """jit of a function the module does not have."""
    with pytest.raises(ValueError, match=r"no function 'nope'"):
        dequant.jit(MODULE, "nope")
