"""The ordered table of the kernels' routes for a weight-only MatMul, and `choose`: the first
route whose `fits` says nothing against the problem, the target and the options, as IREE's
mmt4d selector returns the first tile function that fits ("from oldest to shiniest" reversed:
the most specific first, the f32 kernel last, every route's fallback).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .digits import DigitKernel
from .digits_avx2 import DigitAvx2Kernel
from .f32 import Kernel
from .int8 import Int8Kernel
from .problem import Options, Problem
from .target import Target


@dataclass(frozen=True)
class Route:
    """One kernel route: `fits(problem, target, options)` is why not (a str) or None; `build`
    makes the kernel. `asked(options)`: whether the options let the route be tried at all (an
    opt-in route, or one an opt-in replaces); `remark`: where a later route is taken, the
    remark a refusal of this one makes (the user asked for it), before its reason."""

    name: str
    fits: Callable[[Problem, Target, Options], str | None]
    build: Callable[[Problem, Target], object]
    asked: Callable[[Options], bool] = lambda o: True
    remark: str = ""


def _int8_fits(p: Problem, t: Target, o: Options) -> str | None:
    if not t.avx512vnni:
        return "the target lacks AVX-512 VNNI"
    return Int8Kernel.why_not(p.k, p.n, p.block, p.bits)


def _digits_fits(p: Problem, t: Target, o: Options) -> str | None:
    if not t.avx512vnni:
        return "the target lacks AVX-512 VNNI"
    if p.rows not in (1, None):
        return f"{p.rows} rows (the one-row route takes 1, or a row count known only at run time)"
    return DigitKernel.why_not(p.k, p.n, p.block, p.bits, any_rows=p.rows is None)


def _digits_avx2_fits(p: Problem, t: Target, o: Options) -> str | None:
    if t.avx512vnni or t.lanes == 16:
        return "the target has AVX-512 (the one-row route's VNNI form, or the 16-lane f32 kernel)"
    if not t.x86_avx2:
        return "the target is not tagged AVX2 (dq.avx2)"
    if p.rows != 1:
        return f"{p.rows} rows (the AVX2 one-row route takes 1)"
    return DigitAvx2Kernel.why_not(p.k, p.n, p.block, p.bits)


def _f32_wide_fits(p: Problem, t: Target, o: Options) -> str | None:
    return Kernel.why_not(p.k, p.n, p.block, p.bits, 16) if t.lanes == 16 else "the target lacks AVX-512"


def _f32_fits(p: Problem, t: Target, o: Options) -> str | None:
    return Kernel.why_not(p.k, p.n, p.block, p.bits, 8)


ROUTES = (
    Route("int8-activations", _int8_fits, lambda p, t: Int8Kernel(p.k, p.n, p.block, p.bits, p.signed, p.zero_point),
          asked=lambda o: o.int8_activations, remark="MatMul given dq's exact kernel, not the int8-activation one"),
    Route("one-row", _digits_fits, lambda p, t: DigitKernel(p.k, p.n, p.block, p.bits, p.signed, p.zero_point, any_rows=p.rows is None),
          asked=lambda o: not o.int8_activations),
    Route("one-row-avx2", _digits_avx2_fits, lambda p, t: DigitAvx2Kernel(p.k, p.n, p.block, p.bits, p.signed, p.zero_point),
          asked=lambda o: not o.int8_activations),
    Route("f32-16-lanes", _f32_wide_fits, lambda p, t: Kernel(p.k, p.n, p.block, p.bits, p.signed, p.zero_point, 16)),
    Route("f32", _f32_fits, lambda p, t: Kernel(p.k, p.n, p.block, p.bits, p.signed, p.zero_point, 8)),
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
        if not route.asked(options):
            continue
        why = route.fits(problem, target, options)
        if why is None:
            return Choice(route.build(problem, target), refused)
        refused.append((route, why))
    return Choice(None, refused)
