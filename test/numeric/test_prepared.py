"""The cached call path of `dequant.ops` (ops.Prepared): a call repeated on arrays of the same
types, dtypes, shapes and strides and the same attributes skips the type and shape rules (their
verdict is the ShapePlan's) but still checks, on every call, what its key does not fix: the value rules,
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


def test_value_rules_are_skipped_only_where_they_cannot_fire():
    """ONNX's zero-point value rule reads the values for int32 and float8 x only: an int8 plan
    skips it (any int8 zero point is valid), a float8 plan checks every call."""
    s = np.float32(0.5)
    x8 = np.arange(12, dtype=np.int8).reshape(3, 4)
    xf8 = x8.astype(ml_dtypes.float8_e4m3fn)
    for x, zp, checked in ((x8, np.int8(3), False), (xf8, np.zeros((), ml_dtypes.float8_e4m3fn), True)):
        f = _f()
        f(x, s, zp)
        f(x, s, zp)  # prepared
        (plan,) = f.runtime.plans.values()
        assert (plan.zero_point_index is not None) == checked
    assert np.array_equal(f(x8, s, np.int8(3)), (x8.astype(np.float32) - 3) * np.float32(0.5))
    f(xf8, s, np.zeros((), ml_dtypes.float8_e4m3fn))
    with pytest.raises(ValueError, match="x_zero_point must be absent or zero"):
        f(xf8, s, np.ones((), ml_dtypes.float8_e4m3fn))


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


def test_scalars_are_read_in_their_own_objects():
    """A numpy or ml_dtypes scalar's value is read where the scalar object holds it (no array
    built per call): each call sees its own scalar's value, whichever object it is."""
    for t in (np.float32, np.float16, np.int8, np.uint8, np.int32, ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.float8_e4m3fn):
        assert kernel.scalar_inline(t), t
    f = _f()
    x = np.arange(-8, 8, dtype=np.int8).reshape(2, 8)
    for scale, zp in [(0.5, 3), (0.25, -2), (2.0, 0), (0.5, 3)]:
        s, z = np.float32(scale), np.int8(zp)  # new objects each call, same key
        want = (x.astype(np.float32) - np.float32(zp)) * np.float32(scale)
        assert np.array_equal(f(x, s, z), want)
    (prepared,) = [p for p in f.runtime.calls._entries.values() if p]
    assert prepared.direct == [(0, True), (1, False), (2, False)]
    for scale in (0.5, 1.5):  # bfloat16 scale, float32 output
        y = f(x, ml_dtypes.bfloat16(scale), output_dtype=np.float32)
        assert np.array_equal(y, x.astype(np.float32) * np.float32(scale))


def test_scalar_of_a_subclass_takes_an_array():
    class Scale(np.float32):
        pass

    assert not kernel.scalar_inline(Scale) and not kernel.scalar_inline(np.bool_)
    f = _f()
    x = np.arange(8, dtype=np.int8)
    for _ in range(2):
        assert np.array_equal(f(x, Scale(0.5)), x * np.float32(0.5))


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


# --- the split: a static cost model on the call's bytes (docs/performance.md "Thread policy") ------


def _large(rows=512):
    """An int8 per-axis call of rows x 4096 (10 MiB read + written at 512 rows)."""
    rng = np.random.default_rng(rows)
    x = rng.integers(-128, 128, (rows, 4096)).astype(np.int8)
    s = (rng.random(4096) + 0.5).astype(np.float32)
    return x, s, x.astype(np.float32) * s


@pytest.mark.parametrize("rows, parts", [(200, 1), (206, 2), (512, 2)])
def test_the_split_is_decided_on_the_bytes_alone(rows, parts):
    """A call moving 2 * MIN_PARALLEL bytes or more is split, from its first call, prepared and
    bound alike; below, it runs on one thread (206 rows of 4096 int8 in, f32 out and a 16 KiB
    scale: 4.04 MiB; 200 rows: 3.92 MiB)."""
    from dequant.runtime import MIN_PARALLEL

    rt = Runtime(2)
    assert rt.min_parallel == MIN_PARALLEL == 2 << 20
    f = _f(rt)
    x, s, want = _large(rows)
    out = np.empty_like(want)
    for _ in range(3):
        out.fill(np.nan)
        f(x, s, axis=1, out=out)
        np.testing.assert_array_equal(out, want)
    (plan,) = rt.plans.values()
    assert (plan.nbytes >= 2 * MIN_PARALLEL) == (parts == 2)
    assert len(plan.calls().templates) == parts
    bound = ops.bind(f, x, s, axis=1, out=out)
    assert len(bound._calls) == parts
    out.fill(np.nan)
    np.testing.assert_array_equal(bound(), want)


def test_attribute_keys_of_sequences_and_sets():
    """A prepared call's key holds each attribute as given: equal sequences and sets of ints give
    one key; another container type, another element or an element of another type (0 and 0.0,
    1 and True) another key."""
    from dequant.ops import _call_key

    f = ops.ngraph_dequantize
    x = np.zeros((2, 3), np.int8)

    def key(axes):
        return _call_key(f, (x,), None, {"axes": axes})

    assert key({0, 1}) == key({1, 0}) == key(set(range(2))) and key([0, 1]) == key(list(range(2)))
    distinct = [key({0, 1}), key({0, 2}), key([0, 1]), key((0, 1)), key([0, 1.0]), key([0, True]), key([]), key(())]
    assert len(set(distinct)) == len(distinct)
    assert key([0, object()]) is None  # not preparable: the call takes the full path


def test_prepared_calls_plan_once_per_thread_setting():
    """Thread settings switched back and forth: a prepared call plans its native calls again
    once after each switch, not on every call."""
    rt = Runtime(2)
    f = _f(rt)
    x, s = np.arange(64, dtype=np.int8).reshape(8, 8), np.full(8, 0.5, np.float32)
    out = np.empty((8, 8), np.float32)
    f(x, s, axis=1, out=out)
    (plan,) = rt.plans.values()
    planned = []
    calls = plan.calls
    plan.calls = lambda: planned.append(1) or calls()
    for threads in (1, 2, 1, 2):
        rt.set_num_threads(threads)
        for _ in range(10):
            f(x, s, axis=1, out=out)
    assert len(planned) == 4
    assert np.array_equal(out, x * np.float32(0.5))
