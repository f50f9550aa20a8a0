"""The cached call path of `dequant.ops` (ops.Prepared): a call repeated on arrays of the same
types, dtypes, shapes and strides and the same attributes skips the type and shape rules (their
verdict is the Plan's) but still checks, on every call, what its key does not fix: the value rules,
`out`'s writability and its overlap with the inputs. It reads data pointers through
kernel.data_pointer, whose fast read is self-tested at import."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import dequant
from dequant import kernel, ops
from dequant.runtime import Runtime


def _f(runtime=None):
    return ops.OpFunction(ops.spec_op("onnx_dequantize_linear"), runtime or Runtime(1))


def test_data_pointer_is_the_first_element():
    base = np.arange(100, dtype=np.float32)
    samples = [base, base[7:], base.reshape(10, 10)[3], np.empty(()), np.zeros(5, ml_dtypes.bfloat16), dequant.pack(np.zeros(5, ml_dtypes.int4)).data]
    for a in samples:
        assert kernel.data_pointer(a) == a.ctypes.data
    assert kernel.PEEK == kernel._peek_works()


def test_repeated_calls_take_the_prepared_path():
    f = _f()
    x, s = np.arange(32, dtype=np.int8).reshape(4, 8), np.full(8, 0.5, np.float32)
    out = np.empty((4, 8), np.float32)
    f(x, s, axis=1, out=out)
    assert len(f.runtime.calls) == 1
    x2 = x + 1  # new arrays, same key: new pointers patched in
    y = f(x2, s, axis=1, out=out)
    assert y is out and np.array_equal(out, x2 * np.float32(0.5))
    assert len(f.runtime.calls) == 1
    y = f(x2, s, axis=1)  # no out: another key, a new output each call
    assert y is not out and np.array_equal(y, out)


def test_value_rules_are_checked_on_every_call():
    f = _f()
    x, s = np.arange(12, dtype=np.int32).reshape(3, 4), np.float32(2.0)
    zero = np.int32(0)
    assert np.array_equal(f(x, s, zero), x * np.float32(2.0))
    assert np.array_equal(f(x, s, zero), x * np.float32(2.0))  # prepared now
    with pytest.raises(ValueError, match="int32 x has no zero point"):
        f(x, s, np.int32(5))


def test_out_is_checked_on_every_call():
    f = _f()
    x, s = np.ones((4, 8), np.int8), np.ones(8, np.float32)
    out = np.empty((4, 8), np.float32)
    f(x, s, axis=1, out=out)
    f(x, s, axis=1, out=out)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        f(x, s, axis=1, out=out)
    # an output with the key's dtype, shape and strides that overlaps an input
    raw = np.zeros(64, np.float32)
    scale = raw[:8]
    with pytest.raises(ValueError, match="out overlaps x_scale"):
        f(x, scale, axis=1, out=raw[4:36].reshape(4, 8))
    fresh = np.empty((4, 8), np.float32)
    assert np.array_equal(f(x, s, axis=1, out=fresh), np.ones((4, 8), np.float32))


def test_operands_by_keyword_and_unhashable_attributes():
    f = _f()
    x, s, z = np.full((2, 4), 3, np.int8), np.full(4, 2.0, np.float32), np.ones(4, np.int8)
    want = np.full((2, 4), 4.0, np.float32)
    for _ in range(2):
        assert np.array_equal(f(x, s, x_zero_point=z, axis=1), want)
        assert np.array_equal(f(x=x, x_scale=s, x_zero_point=z, axis=1), want)
    g = ops.OpFunction(ops.spec_op("ngraph_dequantize"), Runtime(1))
    xi, si, zi = np.ones((2, 3, 4), np.int8), np.full((2, 3), 0.5, np.float32), np.zeros((2, 3), np.int8)
    for _ in range(2):
        assert np.array_equal(g(xi, si, zi, type=np.float32, axes={0, 1}), np.full((2, 3, 4), 0.5, np.float32))


def test_non_contiguous_and_python_operands_take_the_full_path():
    f = _f()
    x = np.arange(64, dtype=np.int8).reshape(8, 8)[:, ::2]
    s = np.float32(0.25)
    for _ in range(2):
        assert np.array_equal(f(x, s), x * np.float32(0.25))
    with pytest.raises(ValueError, match="Python"):
        f(np.ones((2, 2), np.int8), 0.5)


def test_thread_settings_change_the_split_of_prepared_calls():
    runtime = Runtime(1)
    f = _f(runtime)
    x, s = np.arange(40 * 16, dtype=np.int16).reshape(40, 16).astype(np.int8), np.full(16, 0.5, np.float32)
    f(x, s, axis=1)
    (prepared,) = [p for p in runtime.calls._entries.values() if p]
    assert len(prepared.calls.templates) == 1
    runtime.set_num_threads(3)
    runtime.min_parallel = 1
    y = f(x, s, axis=1)
    assert len(prepared.calls.templates) == 3
    assert np.array_equal(y, x * np.float32(0.5))


def test_packed_and_scalar_operands():
    f = _f()
    values = np.array([[1, -2, 3, -4], [5, -6, 7, -8]], ml_dtypes.int4)
    p = dequant.pack(values)
    want = values.astype(np.float32) * np.float32(0.5)
    for _ in range(2):
        assert np.array_equal(f(p, np.float32(0.5)), want)


@pytest.mark.parametrize("wrong", [1.0, True, [1], np.float64(1.0)])
def test_attribute_types_are_part_of_the_key(wrong):
    """1 == 1.0 == True in Python, but only an integer is an axis: a prepared call made with
    axis=1 must not let the others through (found by fuzzing)."""
    f = _f()
    x, s = np.zeros((3, 2), np.int8), np.ones(2, np.float32)
    f(x, s, axis=1)
    f(x, s, axis=1)
    with pytest.raises(ValueError, match="axis must be an integer"):
        f(x, s, axis=wrong)


def test_array_valued_attributes_are_keyed_by_value():
    """An attribute given as a numpy array (unhashable) is keyed by its dtype, shape and bytes."""
    f = ops.OpFunction(ops.spec_op("ngraph_dequantize"), Runtime(1))
    x, s, z = np.arange(6, dtype=np.uint8).reshape(3, 2), np.array([1, 2, 3], np.float32), np.zeros(3, np.uint8)
    for _ in range(2):
        assert np.array_equal(f(x, s, z, type=np.float32, axes=np.array([0])), x * s[:, None])
    s2 = np.array([1, 2], np.float32)
    assert np.array_equal(f(x, s2, z[:2], type=np.float32, axes=np.array([1])), x * s2)


# --- the split chosen by a call's measured time (runtime.SPLIT_SECONDS, docs/performance.md) ----


@pytest.mark.parametrize("seconds, threads, parts", [
    (None, 4, 1), (100e-6, 4, 1), (249e-6, 2, 1), (250e-6, 2, 2), (10e-3, 2, 2),
    (749e-6, 4, 2), (750e-6, 4, 3), (1.5e-3, 4, 4), (1.5e-3, 3, 3),
])  # fmt: skip
def test_parts_paid_for_by_the_time(seconds, threads, parts):
    """p ranges when the p-th saves split_seconds: seconds / (p * (p - 1)) >= 125 us."""
    runtime = Runtime(threads)
    runtime.split_seconds = 125e-6
    assert runtime.parallel_parts(1 << 20, seconds) == parts


def test_parts_by_bytes_when_more():
    runtime = Runtime(4)
    runtime.min_parallel = 1 << 20
    assert runtime.parallel_parts(3 << 20, 250e-6) == 3
    assert runtime.parallel_parts(3 << 20, None) == 3
    assert runtime.parallel_parts(64 << 20, 250e-6) == 4


def _large(rows=512):
    """An int8 per-axis call of rows x 4096 (10 MiB read + written at 512 rows)."""
    rng = np.random.default_rng(rows)
    x = rng.integers(-128, 128, (rows, 4096)).astype(np.int8)
    s = (rng.random(4096) + 0.5).astype(np.float32)
    return x, s, x.astype(np.float32) * s


@pytest.mark.parametrize("split_seconds, split", [(0.0, True), (1e9, False)])
def test_timed_calls_then_the_split_their_time_pays_for(split_seconds, split):
    """A call its bytes do not split runs on one thread, timed, PROBES times; then on as many
    threads as that time pays for (all of them when split_seconds is 0, none when it is huge)."""
    from dequant.runtime import PROBES

    runtime = Runtime(2)
    runtime.split_seconds = split_seconds
    f = _f(runtime)
    x, s, want = _large()
    out = np.empty_like(want)
    for i in range(PROBES + 2):
        assert np.array_equal(f(x, s, axis=1, out=out), want)
        (plan,) = runtime.plans._entries.values()
        assert (plan.seconds is None) == (i < PROBES - 1)
    (prepared,) = [p for p in runtime.calls._entries.values() if p]
    assert len(prepared.calls.templates) == (2 if split else 1)


def test_bound_calls_take_the_split_once_timed():
    from dequant.runtime import PROBES

    runtime = Runtime(2)
    runtime.split_seconds = 0.0
    x, s, want = _large()
    call = ops.bind(_f(runtime), x, s, axis=1)
    for _ in range(PROBES):
        assert len(call._calls) == 1
        assert np.array_equal(call(), want)
    assert len(call._calls) == 2
    assert np.array_equal(call(), want)


def test_small_calls_are_not_timed():
    runtime = Runtime(2)
    runtime.split_seconds = 0.0
    f = _f(runtime)
    x, s, want = _large(rows=64)  # 1.25 MiB
    for _ in range(5):
        assert np.array_equal(f(x, s, axis=1), want)
    (plan,) = runtime.plans._entries.values()
    assert plan.seconds is None
