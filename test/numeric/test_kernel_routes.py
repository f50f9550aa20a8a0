"""The kernels' route table (passes/kernels/routes.py) against the rules docs/iree.md states for
the CPU kernel: int8 activations only when asked for and on AVX-512 VNNI, the exact one-row route
for 4-bit weights at one row (or a run-time row count) on VNNI, 16 lanes with AVX-512 where N is
a multiple of 64 columns, else 8 lanes, else no kernel with the f32 kernel's reason."""

from __future__ import annotations

import dataclasses

import pytest

from dequant.passes.kernels.digits import DigitKernel
from dequant.passes.kernels.digits_avx2 import DigitAvx2Kernel
from dequant.passes.kernels.f32 import Kernel
from dequant.passes.kernels.int8 import Int8Kernel
from dequant.passes.kernels.problem import Options, Problem
from dequant.passes.kernels.qdq import QdqKernel
from dequant.passes.kernels.qdq_avx2 import QdqAvx2Kernel
from dequant.passes.kernels.qdq_avxvnni import QdqAvxVnniKernel
from dequant.passes.kernels.routes import choose
from dequant.passes.kernels.target import Target

UNTAGGED, AVX2, AVX512, VNNI = Target(), Target(avx2=True), Target(avx512bw=True), Target(avx512bw=True, avx512vnni=True)
AVXVNNI = Target(avx2=True, avxvnni=True)
INT8 = Options(int8_activations=True)


@pytest.mark.parametrize("problem, target, options, kind, lanes", [
    (Problem(256, 64, 32, 4, True, False, rows=None), AVX2, Options(), Kernel, 8),
    (Problem(256, 64, 32, 4, True, False, rows=None), AVX512, Options(), Kernel, 16),
    (Problem(256, 96, 32, 4, True, False, rows=None), AVX512, Options(), Kernel, 8),  # N = 96: no 64-column multiple
    (Problem(256, 64, 32, 4, True, False, rows=1), VNNI, Options(), DigitKernel, 16),
    (Problem(256, 64, 32, 4, True, False, rows=1), AVX2, Options(), DigitAvx2Kernel, 8),
    (Problem(256, 64, 32, 4, True, False, rows=1), UNTAGGED, Options(), Kernel, 8),  # no x86 intrinsics untagged
    (Problem(256, 64, 32, 4, True, False, rows=1), AVX512, Options(), Kernel, 16),  # AVX-512 without VNNI: 16-lane f32
    (Problem(256, 64, 32, 4, True, False, rows=None), VNNI, Options(), DigitKernel, 16),
    (Problem(256, 64, 32, 4, True, False, rows=3), VNNI, Options(), Kernel, 16),  # static rows above 1
    (Problem(256, 64, 32, 8, True, False, rows=1), VNNI, Options(), Kernel, 16),  # 8-bit: the f32 kernel
    (Problem(256, 64, 32, 4, True, True, rows=1), VNNI, INT8, Int8Kernel, 16),
    (Problem(256, 32, 32, 4, True, True, rows=1), VNNI, INT8, Kernel, 8),  # int8 refused (N = 32), remarked
])  # fmt: skip
def test_the_first_route_that_fits(problem, target, options, kind, lanes):
    choice = choose(problem, target, options)
    assert type(choice.kernel) is kind and choice.kernel.lanes == lanes
    remarks = choice.remarks()
    assert remarks == (["MatMul given dq's exact kernel, not the int8-activation one: N = 32 is not a multiple of 64 columns"] if problem.n == 32 else [])
    if kind is DigitKernel:
        assert choice.kernel.any_rows == (problem.rows is None)


@pytest.mark.parametrize("target", [VNNI, AVX2], ids=["vnni", "avx2"])
@pytest.mark.parametrize("rows", [1, None])
def test_float_zero_point_takes_the_f32_kernel(target, rows):
    """A fractional float zero point: the integer one-row routes refuse it (their sums are
    integer), the f32 kernel takes it; int8 activations asked for are refused with a remark
    naming why (docs/iree.md#matmulnbits)."""
    p = Problem(256, 64, 32, 4, False, False, rows=rows, float_zero_point=True)
    choice = choose(p, target, Options())
    assert type(choice.kernel) is Kernel and choice.kernel.float_zero_point and choice.remarks() == []
    if target is VNNI or rows == 1:  # where the integer route would take it (AVX2's: one static row)
        assert any("float zero point" in why for _, why in choice.refused), choice.refused
    if target is VNNI:
        assert choose(p, target, INT8).remarks() == ["MatMul given dq's exact kernel, not the int8-activation one: a fractional float zero point "
                                                     "(the kernel's sums are integer; only the f32 kernel takes it)"]  # fmt: skip


def test_no_route_gives_the_f32_kernels_reason():
    choice = choose(Problem(256, 48, 32, 4, True, False), VNNI, Options())
    assert choice.kernel is None and choice.why_not == "N = 48 is not a multiple of 32 columns" and choice.remarks() == []
    assert choose(Problem(256, 64, 32, 2, True, False), AVX2, Options()).why_not == "2-bit weights (the kernel reads 4 and 8 bits)"


def test_target_reads_the_module_tags_only():
    from mlir import ir

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse("module attributes {dq.avx512bw, dq.avx512vnni} {}")
        assert Target.of(module.operation) == VNNI
        assert Target.of(ir.Module.parse("module {}").operation) == UNTAGGED and Target.of(None) == UNTAGGED
        assert Target.of(ir.Module.parse("module attributes {dq.avx2} {}").operation) == AVX2
        assert Target.of(ir.Module.parse("module attributes {dq.avxvnni, dq.avx2} {}").operation) == AVXVNNI


def test_qdq_route_first_for_an_integer_activation_else_the_float_route_with_a_remark():
    qdq = Problem(256, 64, 256, 8, True, False, rows=4, activation="u8", x_scale=0.5, x_zero_point=128, bound=127 * 255 * 256)
    choice = choose(qdq, VNNI, Options())
    assert type(choice.kernel) is QdqKernel and choice.kernel.unsigned_x and choice.remarks() == []
    avx2 = choose(qdq, AVX512, Options())  # AVX-512 without VNNI: the AVX2 form, vpmaddwd
    assert type(avx2.kernel) is QdqAvx2Kernel and avx2.kernel.lanes == 8 and avx2.remarks() == []
    assert type(choose(qdq, AVX2, Options()).kernel) is QdqAvx2Kernel
    avxvnni = choose(qdq, AVXVNNI, Options())  # AVX-VNNI without AVX-512: vpdpbusd on 8 lanes
    assert type(avxvnni.kernel) is QdqAvxVnniKernel and avxvnni.kernel.lanes == 8 and avxvnni.remarks() == []
    both = dataclasses.replace(VNNI, avx2=True, avxvnni=True)  # sapphirerapids, znver5: AVX-512 VNNI's 16 lanes
    assert type(choose(qdq, both, Options()).kernel) is QdqKernel
    k20 = dataclasses.replace(qdq, k=20, block=20, bound=127 * 255 * 20)  # K a multiple of 4, not 16: AVX-VNNI's, not AVX2's
    assert type(choose(k20, AVXVNNI, Options()).kernel) is QdqAvxVnniKernel
    assert choose(k20, AVX2, Options()).remarks() == ["QDQ MatMul given dq's float route, not its integer kernel: K = 20 is not a multiple of 16"]
    float_route = choose(qdq, UNTAGGED, Options())
    assert type(float_route.kernel) is Kernel and float_route.kernel.lanes == 8
    assert float_route.remarks() == ["QDQ MatMul given dq's float route, not its integer kernel: the target is tagged neither AVX-512 VNNI nor AVX2"]
    too_long = choose(Problem(256, 64, 256, 8, True, False, activation="i8", bound=1 << 31), VNNI, Options())
    assert type(too_long.kernel) is Kernel and too_long.remarks()[0].endswith("K = 256 is too long for an exact i32 sum (|d| up to 2147483648)")
    blocked = choose(Problem(256, 64, 32, 8, True, False, activation="i8", bound=1), VNNI, Options())
    assert blocked.remarks() == ["QDQ MatMul given dq's float route, not its integer kernel: its weights are i8 blocked by 32 (the kernel reads 8-bit weights per tensor or per column)"]
    assert type(choose(dataclasses.replace(qdq, activation="f32"), VNNI, Options()).kernel) is Kernel  # weight-only: no QDQ route


@pytest.mark.parametrize("n", [1, 24, 72, 1000])
def test_qdq_route_takes_any_n_in_whole_and_partial_workgroups(n):
    """The QDQ kernels take any N (docs/iree.md#the-matmul-kernel-cpu): ceil(N / 64) workgroups
    with VNNI, ceil(N / 32) with AVX2 and AVX-VNNI, the last one partial; the weight-only routes
    keep their rule (N a multiple of 32, or none)."""
    qdq = Problem(256, n, 256, 8, True, False, rows=4, activation="u8", x_scale=0.5, x_zero_point=128, bound=127 * 255 * 256)
    vnni, avx2 = choose(qdq, VNNI, Options()), choose(qdq, AVX2, Options())
    assert type(vnni.kernel) is QdqKernel and vnni.kernel.workgroups == (n + 63) // 64 and vnni.remarks() == []
    assert type(avx2.kernel) is QdqAvx2Kernel and avx2.kernel.workgroups == (n + 31) // 32 and avx2.remarks() == []
    avxvnni = choose(qdq, AVXVNNI, Options()).kernel
    assert type(avxvnni) is QdqAvxVnniKernel and avxvnni.workgroups == (n + 31) // 32
    assert choose(dataclasses.replace(qdq, activation="f32", n=24), VNNI, Options()).why_not == "N = 24 is not a multiple of 32 columns"
