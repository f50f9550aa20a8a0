"""Keeping a kernel's loads clear of 4K aliasing with its own stores.

A core compares a load's address with the stores still in its store queue on the address bits
below 4096 first; a load that matches a pending store there waits for it as if it read what the
store writes ("4K aliasing"). A dequantize kernel's inner loop runs along an output row: it
stores out[r, c:c+16] and, a few vectors later, loads scale[c+k:c+k+16] (and the zero point's).
When such an operand advances through memory at the rate the stores do (read along the output's
last dim, one element per column, of the output's element size) and sits a few hundred bytes
below the output modulo 4096, every one of those loads matches a pending store and waits.

The window is 32-256 bytes below the output, for a zero point and a scale alike; a call with an
operand inside it is measurably slower, so such operands are moved out of it (the scan by offset:
docs/performance.md#loads-clear-of-the-outputs-stores-4k-aliasing). Arrays from numpy's small
allocations (a 16 KiB scale row) land at any 16-byte offset, so about one allocation in sixteen
per operand falls in it; it was the benchmark's "slow mode" of oneDNN u8 per-channel.

`StoreAliasing` finds such operands of a plan once, and a call whose operand sits in the window
reads a copy of it placed half a grain away instead (a copy per call: the caller may change the
values between calls, `bind`'s included). It copies only operands of at most 1/64 of the output's
bytes (a row of scales, not an elementwise scale as large as the output).
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

PAGE = 4096  # the address bits a load is first compared on
WINDOW = 384  # an operand this many bytes or fewer below the output (mod PAGE) is moved
MIN_GRAIN = 1024  # rows of fewer bytes in common with PAGE spread the offsets; nothing is moved
MAX_SHARE = 64  # an operand is copied only if the output has at least this many times its bytes


class StoreAliasing:
    """The operands of a plan that step through memory with the output's stores, and, per call,
    the pointers with each one that sits in the window replaced by a copy outside it."""

    __slots__ = ("moved", "grain")

    def __init__(self, moved: list, grain: int):
        self.moved = moved  # (index in the pointer list, bytes) per operand that may be moved
        self.grain = grain  # offsets of the output's rows from an operand repeat modulo this

    @classmethod
    def of(cls, stepping: list, out_shape: tuple, out_itemsize: int) -> StoreAliasing | None:
        """For the operands read one element per output column along the output's last dim,
        contiguously ((pointer index, bytes, itemsize) each), the StoreAliasing of a call on an
        output of `out_shape`, or None when no operand can be moved."""
        if not out_shape:
            return None
        out_nbytes = math.prod(out_shape) * out_itemsize
        row = out_shape[-1] * out_itemsize
        grain = math.gcd(row, PAGE) if row else PAGE
        if grain < MIN_GRAIN:
            return None
        moved = [(k, nbytes) for k, nbytes, itemsize in stepping if itemsize == out_itemsize and 0 < nbytes * MAX_SHARE <= out_nbytes]
        return cls(moved, grain) if moved else None

    def caught(self, pointers: list) -> list:
        """The (index, bytes) of the operands at `pointers` (the output's last) in the window."""
        out, grain = pointers[-1], self.grain
        return [(k, n) for k, n in self.moved if 0 < (out - pointers[k]) % grain <= WINDOW]

    def place(self, pointers: list, caught: list) -> tuple[list, list]:
        """(the pointers with each caught operand's replaced by a scratch copy's address, the
        copies to make before each call: (destination, source, bytes, the scratch buffer that
        holds the destination, kept alive by the tuple))."""
        pointers, copies = list(pointers), []
        out = pointers[-1]
        grain = self.grain
        for k, n in caught:
            scratch = np.empty(n + grain + 128, np.uint8)
            base = scratch.ctypes.data
            # the copy starts half a grain below the output (mod grain), rounded down to a
            # 64-byte boundary: (out - copy) % grain is then in [grain / 2, grain / 2 + 64)
            address = base + 64 + (out - grain // 2 - base - 64) % grain
            address -= address % 64
            copies.append((address, pointers[k], n, scratch))
            pointers[k] = address
        return pointers, copies

    def __call__(self, pointers: list) -> tuple[list, list | None]:
        """(the pointers one call reads, the copies it made or None: keep them until the call
        returns, they own the scratch buffers)."""
        out, grain = pointers[-1], self.grain
        for k, _ in self.moved:  # `caught`, without building a list on the common path
            if 0 < (out - pointers[k]) % grain <= WINDOW:
                break
        else:
            return pointers, None
        pointers, copies = self.place(pointers, self.caught(pointers))
        copy(copies)
        return pointers, copies


def copy(copies: list) -> None:
    """Make the copies `place` returned (the operands' current values)."""
    for destination, source, n, _ in copies:
        ctypes.memmove(destination, source, n)
