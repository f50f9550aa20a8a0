"""The ordered table of the kernels' routes, and `choose`: the first route whose `fits` says
nothing against the problem, the target and the options, as IREE's mmt4d selector returns the
first tile function that fits ("from oldest to shiniest" reversed: the most specific first, the
f32 kernel last, every route's fallback). Two sections: the integer route of QDQ MatMuls (an
integer activation, `Problem.activation` "u8" or "i8"), then the weight-only routes, which
every MatMul may take (a QDQ MatMul reading its activation dequantized, as f32).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .digits import DigitKernel
from .digits_avx2 import DigitAvx2Kernel
from .f32 import Kernel
from .int8 import Int8Kernel
from .problem import Options, Problem
from .qdq import QdqKernel
from .qdq_amx import QdqAmxKernel
from .qdq_avx2 import QdqAvx2Kernel
from .qdq_avxvnni import QdqAvx2BytesKernel, QdqAvx2SignKernel, QdqAvxVnniKernel
from .target import Target


@dataclass(frozen=True)
class Route:
    """One kernel route: `fits(problem, target, options)` is why not (a str) or None; `build`
    makes the kernel. `asked(options)`: whether the options let the route be tried at all (an
    opt-in route, or one an opt-in replaces); `remark`: where a later route is taken, the
    remark a refusal of this one makes (the user or the model asked for it), before its
    reason; `activations`: the activation kinds it takes (other problems skip it unremarked: a
    weight-only MatMul has no integer activation to read)."""

    name: str
    fits: Callable[[Problem, Target, Options], str | None]
    build: Callable[[Problem, Target], object]
    asked: Callable[[Options], bool] = lambda o: True
    remark: str = ""
    activations: tuple = ("f32", "u8", "i8")


def qdq_kernel(t: Target) -> type[QdqKernel] | None:
    """The QDQ MatMul kernel of a target (AMX's tiles aside: `_qdq_kernel`), or None: the same
    results from each, by AVX-512 VNNI, AVX-VNNI (its sums at 8 lanes, qdq_avxvnni.py) or AVX2
    (vpmaddwd, qdq_avx2.py)."""
    if t.avx512vnni:
        return QdqKernel
    if t.avxvnni:
        return QdqAvxVnniKernel
    return QdqAvx2Kernel if t.x86_avx2 else None


def for_weights(kernel, codes):
    """The kernel a chosen one becomes for these constant weights' codes [K, N]: the AVX2 QDQ
    kernel's direct `vpmaddubsw` form where its weights allow it (QdqAvx2BytesKernel.of), else
    its sign-split form for any int8 weights without a zero point (QdqAvx2SignKernel.of), else
    itself (vpmaddwd)."""
    if type(kernel) is not QdqAvx2Kernel:
        return kernel
    bytes_form = QdqAvx2BytesKernel.of(kernel, codes)
    return bytes_form if bytes_form is not kernel else QdqAvx2SignKernel.of(kernel)


def _qdq_fits(p: Problem, t: Target, o: Options) -> str | None:
    kernel = qdq_kernel(t)
    return "the target is tagged neither AVX-512 VNNI nor AVX2" if kernel is None else kernel.why_not(p)


def _qdq_kernel(p: Problem, t: Target) -> QdqKernel:
    if t.amx_int8 and t.avx512vnni and QdqAmxKernel.why_not(p) is None:
        return QdqAmxKernel(p)  # the VNNI kernel with AMX for its whole row tiles (qdq_amx.py)
    return qdq_kernel(t)(p)


def _int8_fits(p: Problem, t: Target, o: Options) -> str | None:
    if not t.avx512vnni:
        return "the target lacks AVX-512 VNNI"
    return Int8Kernel.why_not(p)


def _digits_fits(p: Problem, t: Target, o: Options) -> str | None:
    if not t.avx512vnni:
        return "the target lacks AVX-512 VNNI"
    if p.rows not in (1, None):
        return f"{p.rows} rows (the one-row route takes 1, or a row count known only at run time)"
    return DigitKernel.why_not(p)


def _digits_avx2_fits(p: Problem, t: Target, o: Options) -> str | None:
    if t.avx512vnni or t.lanes == 16:
        return "the target has AVX-512 (the one-row route's VNNI form, or the 16-lane f32 kernel)"
    if not t.x86_avx2:
        return "the target is not tagged AVX2 (dq.avx2)"
    if p.rows != 1:
        return f"{p.rows} rows (the AVX2 one-row route takes 1)"
    return DigitAvx2Kernel.why_not(p)


def _f32_wide_fits(p: Problem, t: Target, o: Options) -> str | None:
    return Kernel.why_not(p, 16) if t.lanes == 16 else "the target lacks AVX-512"


def _f32_fits(p: Problem, t: Target, o: Options) -> str | None:
    return Kernel.why_not(p, 8)


ROUTES = (
    # QDQ MatMuls: the model's own integer activation
    Route("qdq", _qdq_fits, _qdq_kernel,
          remark="QDQ MatMul given dq's float route, not its integer kernel", activations=("u8", "i8")),
    # every MatMul: x as f32
    Route("int8-activations", _int8_fits, lambda p, t: Int8Kernel(p),
          asked=lambda o: o.int8_activations, remark="MatMul given dq's exact kernel, not the int8-activation one"),
    Route("one-row", _digits_fits, lambda p, t: DigitKernel(p),
          asked=lambda o: not o.int8_activations),
    Route("one-row-avx2", _digits_avx2_fits, lambda p, t: DigitAvx2Kernel(p), asked=lambda o: not o.int8_activations),
    Route("f32-16-lanes", _f32_wide_fits, lambda p, t: Kernel(p, 16)),
    Route("f32", _f32_fits, lambda p, t: Kernel(p, 8)),
)


@dataclass(frozen=True)
class Choice:
    """The kernel chosen (None: no route fits), and every route refused before it, with why."""

    kernel: object
    refused: list = field(default_factory=list)

    @property
    def why_not(self) -> str | None:
        """Why no kernel: the last route's reason (the f32 kernel's), or None."""
        return self.refused[-1][1] if self.kernel is None else None

    def remarks(self) -> list:
        """The remarks of refusals worth one though a kernel was chosen."""
        return [f"{r.remark}: {why}" for r, why in self.refused if r.remark] if self.kernel is not None else []


def choose(problem: Problem, target: Target, options: Options, routes=ROUTES) -> Choice:
    """The first route of `routes` the options ask for that fits, built, with the refusals
    before it."""
    refused = []
    for route in routes:
        if problem.activation not in route.activations or not route.asked(options):
            continue
        why = route.fits(problem, target, options)
        if why is None:
            return Choice(route.build(problem, target), refused)
        refused.append((route, why))
    return Choice(None, refused)
