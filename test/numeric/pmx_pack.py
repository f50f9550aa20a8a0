"""int4x4 packing for the OpenPPL DequantizeLinear tests, written from docs/semantics.md#openppl-int4x4-packing (not from the code
under test): X is int16, and nibble k (bits 4k..4k+3) of X[i, ...] is unpacked row 4i+k."""

from __future__ import annotations

import numpy as np


def pack_int4x4(nibbles) -> np.ndarray:
    """Unsigned nibbles (0..15) of shape (4*d0, ...) packed into int16 of shape (d0, ...)."""
    n = np.asarray(nibbles)
    if n.ndim == 0 or n.shape[0] % 4:
        raise ValueError(f"dim 0 must be a multiple of 4, got shape {n.shape}")
    if n.size and (n.min() < 0 or n.max() > 15):
        raise ValueError("nibbles must be in 0..15")
    rows = n.astype(np.uint16).reshape((n.shape[0] // 4, 4) + n.shape[1:])
    packed = rows[:, 0] | (rows[:, 1] << 4) | (rows[:, 2] << 8) | (rows[:, 3] << 12)
    return np.ascontiguousarray(packed.astype(np.uint16)).view(np.int16)
