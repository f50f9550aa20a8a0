"""What a MatMul asks of a kernel (`Problem`), apart from its constants: the routes choose by it
alone (passes/kernels/routes.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """y [M, N] = x [M, K] @ dequantize(w [K, N]): the weights' block along K (K: one scale per
    column or tensor), their bits (4 or 8) and signedness, whether a zero point is read, the
    row count M (None: known only at run time), and the activation: "f32" (weight-only), or a
    quantized "u8"/"i8" activation with its scale and zero point (QDQ MatMuls: the model's own
    integer x), then `bound`, a bound on |sum_k (xq - zx) * (wq - zw)| over every xq (integer
    routes need it below 2^31); `float_zero_point`: a fractional zero point per block, read as
    z * s in f32 (`w = q * s - z * s` per weight; docs/semantics.md#onnxruntimes-weight-formats),
    which only the f32 kernel takes."""

    k: int
    n: int
    block: int
    bits: int
    signed: bool
    zero_point: bool
    rows: int | None = None
    activation: str = "f32"
    x_scale: float | None = None
    x_zero_point: int | None = None
    bound: int | None = None
    float_zero_point: bool = False

    @property
    def weights(self) -> str:
        """The weights' element as dq names it ("i4", "ui8", ...)."""
        return ("i" if self.signed else "ui") + str(self.bits)


# Why the integer kernels refuse a fractional float zero point: their sums are integer, and a
# float term taken off them would cancel (passes/kernels/__init__.py).
FLOAT_ZERO_POINT = "a fractional float zero point (the kernel's sums are integer; only the f32 kernel takes it)"


@dataclass(frozen=True)
class Options:
    """What the user asked of the route (pass options): int8 activations (opt-in, approximate)."""

    int8_activations: bool = False
