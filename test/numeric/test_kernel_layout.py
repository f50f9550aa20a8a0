"""The constants of dq's matmul kernel (passes/kernels/f32.py, `Kernel.repack`) from the
weights as an ONNX model stores them (packed by onnx's own helper): laid out as the module
docstring says, checked element by element against a reference written from it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import numpy_helper

from dequant.passes.kernels import f32 as matmul_kernel
from dequant.passes.kernels.f32 import GROUPS, Kernel
from dequant.passes.kernels.problem import Problem

DTYPES = {(4, True): ml_dtypes.int4, (4, False): ml_dtypes.uint4, (8, True): np.int8, (8, False): np.uint8}


@pytest.mark.parametrize("bits, signed", list(DTYPES), ids=[f"{'i' if s else 'u'}{b}" for b, s in DTYPES])
@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("k, zero_point", [(2, False), (64, True), (130, False)])
def test_repack_lays_out_weights_scales_and_zero_points(monkeypatch, bits, signed, lanes, k, zero_point):
    width = GROUPS * lanes
    n, block = 2 * width, 2
    monkeypatch.setattr(matmul_kernel, "REPACK_BYTES", 3 * n)  # a few byte rows a step, the last step shorter
    rng = np.random.default_rng(k + bits + lanes)
    info = ml_dtypes.iinfo(DTYPES[bits, signed])
    q = rng.integers(info.min, info.max + 1, (k, n))
    s = rng.random((k // block, n), dtype=np.float32)
    z = rng.integers(info.min, info.max + 1, (k // block, n)) if zero_point else None
    stored = q.astype(DTYPES[bits, signed])
    stored = np.frombuffer(numpy_helper.from_array(stored).raw_data, np.uint8) if bits == 4 else stored.view(np.uint8)
    packed = Kernel(Problem(k, n, block, bits, signed, zero_point), lanes).repack(stored, s, z)
    w, ws, wz = packed.w, packed.s, packed.z

    bias = 1 << (bits - 1) if signed else 0
    u = q + bias  # each weight biased to unsigned
    for g in range(n // width):
        cols = slice(g * width, (g + 1) * width)
        if bits == 4:  # byte (g, r, j): row 2r of column g * W + j in bits 0-3, row 2r + 1 in bits 4-7
            want = np.stack([u[2 * r, cols] | u[2 * r + 1, cols] << 4 for r in range(k // 2)])
        else:
            want = u[:, cols]
        np.testing.assert_array_equal(w[g], want.astype(np.uint8))
        np.testing.assert_array_equal(ws[g], s[:, cols])
        if zero_point:
            np.testing.assert_array_equal(wz[g], (z[:, cols] + bias).astype(np.uint8))
    assert wz is None or zero_point
