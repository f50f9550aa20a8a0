"""`dequant.ops.bind`: an op on fixed arrays, checked and compiled once, rerun by one native call
per thread. References are numpy's (x - zero_point) * scale on the same values, computed in f64
(exact for these int8 inputs and power-of-two scales), not dequant's own results."""

from __future__ import annotations

import numpy as np
import pytest

from dequant import ops


def _want(x, s, z, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    return ((x.astype(np.float64) - z.reshape(shape)) * s.reshape(shape)).astype(np.float32)


@pytest.mark.parametrize("n_threads", [1, 3])
def test_bound_call_reads_current_values(dq_threads, n_threads):
    dq_threads(n_threads, min_parallel=1)  # split even this small array into row ranges
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (9, 40), dtype=np.int8)
    s = (2.0 ** rng.integers(-6, 3, 40)).astype(np.float32)
    z = rng.integers(-128, 128, 40, dtype=np.int8)
    out = np.empty((9, 40), np.float32)
    call = ops.bind(ops.onnx_dequantize_linear, x, s, z, axis=1, out=out)
    assert call.out is out
    assert np.array_equal(call(), _want(x, s, z, 1))
    x[...] = rng.integers(-128, 128, x.shape, dtype=np.int8)  # new values, same arrays
    s[3] = 0.25
    assert call() is out
    assert np.array_equal(out, _want(x, s, z, 1))


def test_bound_blocked_rows_split(dq_threads):
    dq_threads(2, min_parallel=1)
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (12, 5), dtype=np.int8)
    s = (2.0 ** rng.integers(-4, 4, (3, 5))).astype(np.float32)  # blocks of 4 rows
    call = ops.bind(ops.onnx_dequantize_linear, x, s, axis=0, block_size=4)
    want = (x.astype(np.float64) * np.repeat(s, 4, axis=0)).astype(np.float32)
    assert np.array_equal(call(), want)


def test_bind_checks_rules_once_at_bind_time():
    x = np.zeros((4, 8), np.int8)
    with pytest.raises(ValueError, match="per-axis x_scale must have dim\\(axis\\) = 8 elements"):
        ops.bind(ops.onnx_dequantize_linear, x, np.ones(4, np.float32), axis=1)
    with pytest.raises(ValueError, match="out must be a C-contiguous float32 array"):
        ops.bind(ops.onnx_dequantize_linear, x, np.ones(8, np.float32), out=np.empty((4, 8), np.float16))


def test_bind_refuses_arrays_it_cannot_read_in_place():
    x = np.zeros((4, 16), np.int8)
    with pytest.raises(ValueError, match="x must be a C-contiguous numpy array"):
        ops.bind(ops.onnx_dequantize_linear, x[:, ::2], np.ones(8, np.float32))
    with pytest.raises(ValueError, match="scales must be a C-contiguous numpy array"):
        ops.bind(ops.onednn_dynamic_dequantize, x, [1.0], qtype="per_tensor")


def test_bind_leaves_plain_calls_alone():
    x = np.ones((2, 2), np.int8)
    ops.bind(ops.onnx_dequantize_linear, x, np.float32(2.0))
    y = ops.onnx_dequantize_linear(x, np.float32(2.0))
    assert isinstance(y, np.ndarray) and np.array_equal(y, np.full((2, 2), 2, np.float32))
