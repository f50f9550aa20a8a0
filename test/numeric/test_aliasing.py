"""4K aliasing (python/aliasing.py): a scale or zero point that steps through memory with the
output's stores and sits just below the output modulo 4096 is read from a copy placed half a
grain away; its values are still the caller's current ones, in prepared, full and bound calls.
Expected values come from numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from dequant import aliasing, ops
from dequant.runtime import Runtime


def _at(offset: int, out: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of `values` starting `offset` bytes from `out`'s start modulo 4096."""
    buf = np.empty(values.nbytes + 2 * aliasing.PAGE, np.uint8)
    start = (out.ctypes.data + offset - buf.ctypes.data) % aliasing.PAGE
    a = buf[start : start + values.nbytes].view(values.dtype)
    a[...] = values
    assert (a.ctypes.data - out.ctypes.data) % aliasing.PAGE == offset % aliasing.PAGE
    return a


def _onednn(runtime=None):
    return ops.OpFunction(ops.spec_op("onednn_dynamic_dequantize"), runtime or Runtime(1))


def _arrays(rows=64, cols=4096, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (rows, cols), dtype=np.uint8)
    s = (rng.integers(1, 64, cols) / 64).astype(np.float32)
    z = rng.integers(0, 256, cols).astype(np.int32)
    return x, s, z


def _want(x, s, z):
    return ((x.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


def _plan(f, *arrays, **attrs):
    return f.prepare(*arrays, **attrs)[0]


def test_the_operands_that_step_with_the_output():
    x, s, z = _arrays()
    onednn, onnx = _onednn(), ops.OpFunction(ops.spec_op("onnx_dequantize_linear"), Runtime(1))
    assert _plan(onednn, x, s, z, qtype="per_channel", axis=1).aliasing.moved == [(1, s.nbytes), (2, z.nbytes)]
    # a u8 zero point steps at a quarter of the output's rate: only the f32 scale
    assert _plan(onnx, x, s, z.astype(np.uint8), axis=1).aliasing.moved == [(1, s.nbytes)]
    # f16 scale and output
    assert _plan(onnx, x, s.astype(np.float16), axis=1).aliasing.moved == [(1, s.nbytes // 2)]
    # read along rows, blocked, per tensor: nothing steps with the stores
    assert _plan(onnx, x, np.ones(64, np.float32), axis=0).aliasing is None
    assert _plan(onnx, x, np.ones((64, 128), np.float32), axis=1, block_size=32).aliasing is None
    assert _plan(onnx, x, np.float32(0.5)).aliasing is None
    # too few rows for a copy to pay (the output under 64 times the operand), rows of 12,000 bytes
    assert _plan(onednn, x[:16], s, z, qtype="per_channel", axis=1).aliasing is None
    x3 = np.zeros((512, 3000), np.uint8)
    assert _plan(onednn, x3, np.ones(3000, np.float32), qtype="per_channel", axis=1).aliasing is None
    # rows of 768 f32: offsets repeat modulo 1024
    x7 = np.zeros((512, 768), np.uint8)
    assert _plan(onednn, x7, np.ones(768, np.float32), qtype="per_channel", axis=1).aliasing.grain == 1024


@pytest.mark.parametrize("offset", [-96, -32, -256, 0, 512, 2048])
def test_bound_calls_read_a_copy_out_of_the_window(offset):
    f = _onednn()
    x, s0, z0 = _arrays()
    out = np.empty(x.shape, np.float32)
    s, z = _at(offset, out, s0), _at(offset - 128, out, z0)
    b = ops.bind(f, x, s, z, qtype="per_channel", axis=1, out=out)
    read = b._pointers
    for p, a in ((read[1], s), (read[2], z)):
        d = (out.ctypes.data - a.ctypes.data) % aliasing.PAGE
        if 0 < d <= aliasing.WINDOW:
            assert p != a.ctypes.data and aliasing.PAGE // 2 <= (out.ctypes.data - p) % aliasing.PAGE < aliasing.PAGE // 2 + 64 and p % 64 == 0
        else:
            assert p == a.ctypes.data
    assert np.array_equal(b(), _want(x, s, z))
    s[:] = s0[::-1]  # values changed between bound calls are read
    z[:7] = 5
    assert np.array_equal(b(), _want(x, s, z))


def test_prepared_and_full_calls_copy_when_caught(monkeypatch):
    made = []
    copy = aliasing.copy
    monkeypatch.setattr(aliasing, "copy", lambda copies: (made.append(len(copies)), copy(copies)))
    f = _onednn()
    x, s0, z0 = _arrays(seed=1)
    out = np.empty(x.shape, np.float32)
    for offset, caught in ((-96, 2), (1024, 0), (-200, 2), (-96, 2)):
        s, z = _at(offset, out, s0 * offset), _at(offset, out, z0 + offset)
        made.clear()
        assert np.array_equal(f(x, s, z, qtype="per_channel", axis=1, out=out), _want(x, s, z))
        assert made == ([caught] if caught else [])


def test_f16_scale_and_output():
    f = ops.OpFunction(ops.spec_op("onnx_dequantize_linear"), Runtime(1))
    rng = np.random.default_rng(2)
    x = rng.integers(-128, 128, (128, 2048), dtype=np.int8)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        out = np.empty(x.shape, dtype)
        s = _at(-64, out, (rng.integers(1, 64, 2048) / 64).astype(dtype))
        assert _plan(f, x, s, axis=1).aliasing.moved == [(1, s.nbytes)]
        want = (x.astype(np.float32) * s.astype(np.float32)).astype(dtype)
        assert np.array_equal(f(x, s, axis=1, out=out), want)
        assert np.array_equal(ops.bind(f, x, s, axis=1, out=out)(), want)
