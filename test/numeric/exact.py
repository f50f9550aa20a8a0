"""Helpers shared by the oneDNN, nGraph and OpenPPL tests: bit-exact comparison and random
integers over a type's whole range."""

from __future__ import annotations

import numpy as np
import pytest


def assert_exact(got: np.ndarray, want: np.ndarray) -> None:
    """Same dtype, shape and bits (signed zeros distinguished); a NaN matches any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    nan = np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan, err_msg="NaN pattern")
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[want.itemsize]
    bad = (got.view(bits) != want.view(bits)) & ~nan
    if bad.any():
        where = [tuple(int(i) for i in w) for w in np.argwhere(bad)[:6]]
        rows = "\n".join(f"  at {w}: got {got[w]!r}, want {want[w]!r}" for w in where)
        pytest.fail(f"{int(bad.sum())} of {bad.size} elements differ:\n{rows}")


def ints(rng, shape, dtype) -> np.ndarray:
    """Random values over the whole range of `dtype`, with its extremes at the first positions."""
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64).astype(dtype)
    flat = a.reshape(-1)
    flat[:2] = [info.min, info.max][: flat.size]
    return a
