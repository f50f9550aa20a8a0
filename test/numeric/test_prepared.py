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
from dequant import kernel, ops, runtime
from dequant.runtime import PROBES, Runtime


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


# --- the split chosen by timing (ops.SplitChoice, docs/performance.md "Threads") -----------------


@pytest.mark.parametrize("seconds, threads, parts", [
    (100e-6, 4, 1), (249e-6, 2, 1), (250e-6, 2, 2), (10e-3, 2, 2),
    (749e-6, 4, 2), (750e-6, 4, 3), (1.5e-3, 4, 4), (1.5e-3, 3, 3),
])  # fmt: skip
def test_parts_worth_timing(seconds, threads, parts):
    """p ranges when the p-th saves split_seconds: seconds / (p * (p - 1)) >= 125 us here."""
    runtime = Runtime(threads)
    runtime.split_seconds = 125e-6
    assert runtime.time_parts(seconds) == parts


def test_which_calls_are_timed():
    from dequant.runtime import PROBE_MIN_BYTES

    runtime = Runtime(2)
    runtime.min_parallel = 8 << 20
    assert not runtime.times_calls(PROBE_MIN_BYTES - 1)
    assert runtime.times_calls(PROBE_MIN_BYTES)
    assert runtime.times_calls((32 << 20) - 1)
    assert runtime.times_calls(32 << 20) and runtime.times_calls(1 << 40)  # the bytes' split is timed too
    assert not Runtime(1).times_calls(PROBE_MIN_BYTES)


def test_split_choice_keeps_the_faster():
    """One thread timed PROBES times; then the candidate split PROBES times and one thread PROBES
    times again (calls of 2 ms fill probe_seconds, 1 ms, in fewer); the split is kept only if its
    fastest call takes at most split_gain of the second single-thread block's fastest (a sample for
    ranges the probe has moved past is ignored)."""
    from dequant.ops import SplitChoice
    from dequant.runtime import PROBES

    runtime = Runtime(2)
    runtime.split_seconds = 100e-6
    runtime.split_gain = 0.9
    for split_time, parts in ((0.9e-3, 2), (0.95e-3, 1)):
        choice = SplitChoice()
        assert choice.probe() == 1
        ended = [choice.record(t, 1, runtime, 1) for t in [3e-3, 2e-3, 2.5e-3][:PROBES]]  # cold calls
        assert ended == [False] * (PROBES - 1) + [True] and choice.single == (2e-3, 2.5e-3)
        assert choice.block == PROBES
        assert choice.probe() == 2 and not choice.record(5e-3, 1, runtime, 1)
        ended = [choice.record(split_time, 2, runtime, 1) for _ in range(PROBES)]
        assert ended == [False] * (PROBES - 1) + [True] and choice.probe() == 1
        ended = [choice.record(1e-3, 1, runtime, 1) for _ in range(PROBES)]
        assert ended == [False] * (PROBES - 1) + [True]
        assert choice.parts == parts and choice.probe() is None
        assert choice.single == (1e-3, 1e-3) and choice.split == (split_time, split_time)


@pytest.mark.parametrize("split_time, parts", [(0.99e-3, 2), (1.01e-3, 1)])
def test_split_choice_keeps_the_bytes_split_unless_slower(split_time, parts):
    """A call its bytes split (base 2) is probed too: one thread is kept only if the split is
    slower, whatever split_gain."""
    from dequant.ops import SplitChoice
    from dequant.runtime import PROBES

    runtime = Runtime(2)
    runtime.split_seconds = 1.0  # the time alone would never pay for a second thread
    choice = SplitChoice()
    for _ in range(PROBES):
        choice.record(1e-3, 1, runtime, 2)
    assert choice.candidate == 2
    for _ in range(PROBES):
        choice.record(split_time, 2, runtime, 2)
    for _ in range(PROBES):
        choice.record(1e-3, 1, runtime, 2)
    assert choice.parts == parts


def test_split_choice_wants_the_median_too():
    """A split whose fastest call passes split_gain but whose median is slower than one thread's
    (its worker woke late in most calls) is not kept; nor a split the bytes ask for that is faster
    in median only."""
    from dequant.ops import SplitChoice

    runtime = Runtime(2)
    runtime.split_seconds = 50e-6
    runtime.probe_seconds = 0.0  # blocks of PROBES
    one = (100e-6, 100e-6, 100e-6)
    for base, split_times, single_times, parts in (
        (1, [70e-6, 140e-6, 150e-6], one, 1),  # fastest 0.7x, median 1.5x
        (1, [70e-6, 80e-6, 150e-6], one, 2),  # both faster
        (2, [90e-6, 95e-6, 99e-6], one, 2),
        (2, [85e-6, 90e-6, 95e-6], (80e-6, 100e-6, 100e-6), 1),  # the bytes' split: faster in median only
        (2, [99e-6, 105e-6, 120e-6], one, 1),  # and in the fastest only
    ):
        choice = SplitChoice()
        for t in one:
            choice.record(t, 1, runtime, base)
        for t in split_times:
            choice.record(t, 2, runtime, base)
        for t in single_times:
            choice.record(t, 1, runtime, base)
        assert choice.parts == parts, (base, split_times)


@pytest.mark.parametrize("seconds, block", [(2e-3, 3), (400e-6, 3), (300e-6, 4), (100e-6, 9), (10e-6, 9)])
def test_probe_blocks_fill_probe_seconds(seconds, block):
    """After the first PROBES calls, each block has enough calls to fill probe_seconds (1 ms)."""
    from dequant.ops import SplitChoice

    runtime = Runtime(2)
    runtime.probe_seconds = 1e-3
    runtime.split_seconds = 0.0
    assert runtime.probe_block(seconds) == block
    choice = SplitChoice()
    seen = []
    while choice.probe() is not None:
        parts = choice.probe()
        seen.append(parts)
        choice.record(seconds, parts, runtime, 1)
    assert seen == [1] * 3 + [2] * block + [1] * block


def test_split_choice_of_a_short_call_is_one_thread():
    """A call shorter than two SPLIT_SECONDS stays on one thread untried; a longer one is tried
    over two ranges."""
    from dequant.ops import SplitChoice
    from dequant.runtime import PROBES, SPLIT_SECONDS

    short, long = SplitChoice(), SplitChoice()
    for _ in range(PROBES):
        short.record(1.9 * SPLIT_SECONDS, 1, Runtime(2), 1)
        long.record(2.1 * SPLIT_SECONDS, 1, Runtime(2), 1)
    assert short.parts == 1 and short.probe() is None
    assert long.parts is None and long.probe() == 2


def _large(rows=512):
    """An int8 per-axis call of rows x 4096 (10 MiB read + written at 512 rows)."""
    rng = np.random.default_rng(rows)
    x = rng.integers(-128, 128, (rows, 4096)).astype(np.int8)
    s = (rng.random(4096) + 0.5).astype(np.float32)
    return x, s, x.astype(np.float32) * s


def _runtime(gain: float) -> Runtime:
    runtime = Runtime(2)
    runtime.split_seconds = 0.0  # any time is worth timing a split
    runtime.split_gain = runtime.split_median_gain = runtime.keep_gain = gain  # 1e9: the split always kept; 0: never
    runtime.probe_seconds = 0.0  # blocks of PROBES calls
    return runtime


@pytest.mark.parametrize("gain, split", [(1e9, True), (0.0, False)])
def test_timed_calls_then_the_chosen_split(gain, split):
    """Prepared calls: PROBES on one thread, PROBES split in two, then the choice; every result exact."""
    from dequant.runtime import PROBES

    runtime = _runtime(gain)
    f = _f(runtime)
    x, s, want = _large()
    out = np.empty_like(want)
    seen = []
    for _ in range(3 * PROBES + 2):
        assert np.array_equal(f(x, s, axis=1, out=out), want)
        (prepared,) = [p for p in runtime.calls._entries.values() if p]
        seen.append(len(prepared.calls.templates))
    assert seen[: 3 * PROBES] == [1] * PROBES + [2] * PROBES + [1] * PROBES
    assert seen[-1] == (2 if split else 1)


@pytest.mark.parametrize("gain, split", [(1e9, True), (0.0, False)])
def test_bound_calls_take_the_chosen_split(gain, split):
    from dequant.runtime import PROBES

    x, s, want = _large()
    call = ops.bind(_f(_runtime(gain)), x, s, axis=1)
    for _ in range(3 * PROBES):
        assert np.array_equal(call(), want)
    assert len(call._calls) == (2 if split else 1)
    assert np.array_equal(call(), want)


def test_split_choice_starts_over_when_workers_run_late():
    """Calls over the chosen split whose ranges the caller had to take back (no worker started
    them) in LATE_CALLS more calls than not: the probe starts over; calls whose workers started
    in time keep the choice."""
    from dequant.ops import SplitChoice
    from dequant.runtime import LATE_CALLS, PROBES

    runtime = _runtime(1e9)
    choice = SplitChoice()
    for parts in [1] * PROBES + [2] * PROBES + [1] * PROBES:
        choice.record(1e-3, parts, runtime, 1)
    assert choice.parts == 2
    assert not any(choice.late(k % 2 == 0) for k in range(10 * LATE_CALLS))  # half late: kept
    assert not any(choice.late(True) for _ in range(LATE_CALLS - 1)) and choice.parts == 2
    assert choice.late(True) and choice.parts is None and choice.probe() == 1


class _CallerPool(runtime.WorkerPool):
    """A pool that runs every range in the caller and reports them taken back from workers that
    never started one (`late`), or none taken back."""

    def __init__(self, threads: int, late: bool):
        super().__init__(threads)
        self.late = late

    def run(self, calls: list) -> int:
        for c in calls:
            c()
        return len(calls) - 1 if self.late else 0


@pytest.mark.parametrize("bound", [False, True])
def test_split_with_late_workers_is_chosen_again(bound):
    """Prepared and bound calls over a chosen split whose ranges come back to the caller every
    time probe again after LATE_CALLS calls; every result exact."""
    from dequant.runtime import LATE_CALLS, PROBES

    rt = _runtime(1e9)
    rt.pool = _CallerPool(2, late=True)
    f = _f(rt)
    x, s, want = _large()
    out = np.empty_like(want)
    call = ops.bind(f, x, s, axis=1, out=out) if bound else (lambda: f(x, s, axis=1, out=out))
    for _ in range(3 * PROBES + LATE_CALLS):
        out.fill(np.nan)
        call()
        assert np.array_equal(out, want)
    (plan,) = rt.plans.values()
    assert plan.split.parts is None and plan.split.probe() == 1  # probing again, on one thread


def test_small_calls_are_not_timed():
    from dequant.runtime import PROBE_MIN_BYTES

    runtime = _runtime(1e9)
    f = _f(runtime)
    x, s, want = _large(rows=32)  # 0.625 MiB
    assert x.nbytes + want.nbytes < PROBE_MIN_BYTES
    for _ in range(8):
        assert np.array_equal(f(x, s, axis=1), want)
    (plan,) = runtime.plans._entries.values()
    assert plan.split.single is None and plan.split.parts is None


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


def _probe(choice, runtime, split_time: float) -> None:
    """A full probe of `choice`: one thread at 1 ms, the split at `split_time`."""
    for parts in [1] * PROBES + [2] * PROBES + [1] * PROBES:
        choice.record(1e-3 if parts == 1 else split_time, parts, runtime, 1)


def test_a_timed_choice_is_made_again_after_a_growing_number_of_calls():
    """A choice made by timing a split, kept or lost, is made again after RECHECK_CALLS calls,
    then after twice as many each time the probe confirms it, up to RECHECK_MAX_CALLS; a probe
    that changes it sets the wait back to RECHECK_CALLS. Late workers still restart it at once.
    One thread chosen because the call is too short for a second is final."""
    from dequant.ops import SplitChoice
    from dequant.runtime import LATE_CALLS, RECHECK_CALLS, RECHECK_MAX_CALLS

    runtime = Runtime(2)
    runtime.split_seconds, runtime.probe_seconds = 0.0, 0.0
    choice = SplitChoice()
    waits, chosen = [], []
    wins = [True] * 8 + [False, False, True]  # the split wins 8 probes, loses 2, wins again
    for win in wins:
        _probe(choice, runtime, 0.4e-3 if win else 2e-3)
        chosen.append(choice.parts)
        assert choice.watched
        taken = None if choice.parts == 1 else 0  # a split's calls: no range taken back
        calls = 1
        while not choice.ran(taken):
            calls += 1
        waits.append(calls)
        assert choice.parts is None and choice.probe() == 1
        assert not choice.ran(taken) and choice.probe() == 1  # a stale call's report: ignored
    assert chosen == [2 if win else 1 for win in wins]
    growing = [min(RECHECK_CALLS << k, RECHECK_MAX_CALLS) for k in range(8)]
    assert growing[-1] == RECHECK_MAX_CALLS
    assert waits == growing + [RECHECK_CALLS, 2 * RECHECK_CALLS, RECHECK_CALLS]
    _probe(choice, runtime, 0.4e-3)
    assert choice.parts == 2
    assert not any(choice.ran(1) for _ in range(LATE_CALLS - 1)) and choice.ran(1)  # late: at once
    short = SplitChoice()
    runtime.split_seconds = 1.0  # no call pays for a second thread: one thread, untried
    for _ in range(PROBES):
        short.record(1e-3, 1, runtime, 1)
    assert short.parts == 1 and not short.watched


def test_a_kept_split_is_dropped_again_only_if_slower():
    """A split taken up must pay split_gain (0.8); when the choice is made again after
    RECHECK_CALLS calls it is kept unless it measures slower than one thread. A split that was
    lost, or whose workers ran late, must pay the gain again. The choices and the calls made on
    each are logged (SplitChoice.choices, .calls)."""
    from dequant.ops import SplitChoice
    from dequant.runtime import LATE_CALLS, RECHECK_CALLS

    runtime = Runtime(2)
    runtime.split_seconds, runtime.probe_seconds = 0.0, 0.0
    assert runtime.split_gain == 0.8

    def again(choice) -> None:
        taken = None if choice.parts == 1 else 0
        while not choice.ran(taken):
            pass

    choice = SplitChoice()
    chosen = []
    for split_time in (0.95e-3, 0.7e-3, 0.95e-3, 0.99e-3, 1.01e-3, 0.95e-3):
        _probe(choice, runtime, split_time)
        chosen.append(choice.parts)
        again(choice)
    assert chosen == [1, 2, 2, 2, 1, 1]
    # what a reader (the benchmark) sees: each choice with its times, the calls on each
    assert [c[0] for c in choice.choices] == chosen
    assert choice.choices[1] == (2, (0.7e-3, 0.7e-3), (1e-3, 1e-3))
    # waits: 100 (first), 100 (changed), 200, 400, 100 (changed), 200
    assert choice.calls == [RECHECK_CALLS * (1 + 1 + 2), RECHECK_CALLS * (1 + 2 + 4)]
    _probe(choice, runtime, 0.7e-3)
    assert choice.parts == 2
    assert not any(choice.ran(1) for _ in range(LATE_CALLS - 1)) and choice.ran(1)  # late
    _probe(choice, runtime, 0.95e-3)
    assert choice.parts == 1


def _probed(gain: float, bound: bool) -> tuple:
    """A large call (prepared, or `bound`) on a runtime whose split is always (gain 1e9) or never
    (0) kept, its ranges run by a _CallerPool taking none back, after its probe: (the plan, the
    call, its output, the expected output)."""
    rt = _runtime(gain)
    rt.pool = _CallerPool(2, late=False)  # no range taken back: only the count of calls restarts the probe
    f = _f(rt)
    x, s, want = _large()
    out = np.empty_like(want)
    call = ops.bind(f, x, s, axis=1, out=out) if bound else (lambda: f(x, s, axis=1, out=out))
    for _ in range(3 * PROBES):
        call()
    (plan,) = rt.plans.values()
    return plan, call, out, want


@pytest.mark.parametrize("bound", [False, True])
@pytest.mark.parametrize("gain, parts", [(0.0, 1), (1e9, 2)])
def test_prepared_and_bound_calls_probe_again(bound, gain, parts):
    """Prepared and bound calls on the probe's choice (a split lost: one thread; a split kept: two
    ranges) probe again after RECHECK_CALLS calls; every result exact."""
    from dequant.runtime import RECHECK_CALLS

    plan, call, out, want = _probed(gain, bound)
    assert plan.split.parts == parts
    for k in range(RECHECK_CALLS):
        assert plan.split.parts == parts, k
        out.fill(np.nan)
        call()
        assert np.array_equal(out, want)
    assert plan.split.parts is None and plan.split.probe() == 1  # probing again, on one thread
    for _ in range(3 * PROBES):
        out.fill(np.nan)
        call()
        assert np.array_equal(out, want)
    assert plan.split.parts == parts


@pytest.mark.parametrize("bound", [False, True])
def test_one_thread_calls_report_in_batches(bound):
    """Calls of a timed choice of one thread report back every REPORT_CALLS calls (a report
    per call cost 1-1.5 us), and the choice is still made again after exactly RECHECK_CALLS."""
    from dequant.runtime import RECHECK_CALLS, REPORT_CALLS

    assert RECHECK_CALLS % REPORT_CALLS == 0
    plan, call, out, want = _probed(0.0, bound)  # the split is never kept
    assert plan.split.parts == 1 and plan.split.watched
    reports = []
    ran = plan.ran
    plan.ran = lambda taken, calls, n=1: reports.append((taken, n)) or ran(taken, calls, n)
    for _ in range(RECHECK_CALLS - 1):
        call()
    assert reports == [(None, REPORT_CALLS)] * ((RECHECK_CALLS - 1) // REPORT_CALLS)
    assert plan.split.parts == 1
    call()
    assert plan.split.parts is None and plan.split.calls == [RECHECK_CALLS, 0]
    assert np.array_equal(out, want)


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


def test_threads_sharing_a_plan_while_its_choice_is_made_again(monkeypatch):
    """Several threads calling one plan whose choice is made again every few calls: a call
    planned before another thread restarted the probe reports to a choice being remade, which
    ignores it (it raised TypeError once); every result exact."""
    import threading

    monkeypatch.setattr(ops, "RECHECK_CALLS", 2)
    monkeypatch.setattr(ops, "RECHECK_MAX_CALLS", 4)
    rt = _runtime(1e9)
    f = _f(rt)
    x, s, want = _large(rows=64)
    errors = []

    def work():
        out = np.empty_like(want)
        for _ in range(400):
            try:
                f(x, s, axis=1, out=out)
                if not np.array_equal(out, want):
                    errors.append("wrong result")
            except Exception as e:  # noqa: BLE001 - any exception is the failure
                errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
