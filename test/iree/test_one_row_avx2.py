"""The exact one-row route of 4-bit weights on AVX2 targets (passes/kernels/digits_avx2.py,
`vpmaddubsw`): a module tagged `dq.avx2` alone, compiled for `--iree-llvmcpu-target-cpu=haswell`,
run where the host has AVX2, bit for bit against test_iree's numpy model of the route's arithmetic
(the VNNI form's: the same digits, the same sums)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from requires import needs_iree

pytestmark = needs_iree

sys.path.insert(0, str(Path(__file__).parent))
from dequant import iree as stage  # noqa: E402
from dequant.passes.target_features import AVX2, host_has_avx2  # noqa: E402

import iree_models as models  # noqa: E402
from test_iree import ONE_ROW_FORMS, compile_text, form_arrays, one_row_inputs, one_row_reference  # noqa: E402

needs_avx2 = pytest.mark.skipif(not host_has_avx2(), reason="the AVX2 one-row kernel runs vpmaddubsw (AVX2), which this host lacks")
HASWELL = (*stage.TARGETS["llvm-cpu"].flags[:2], "--iree-llvmcpu-target-cpu=haswell", "--iree-opt-level=O3", *stage.COMMON_FLAGS)


def staged_for_avx2(path) -> str:
    """The dq stage's output for a module tagged as for an AVX2 host (dq.avx2, no AVX-512 tag)."""
    text = stage.import_onnx(path)
    end = "\n}) : () -> ()\n"  # the module's own closing line
    assert end in text
    return stage.prepare(text.replace(end, f"\n}}) {{{AVX2}}} : () -> ()\n", 1))


@needs_avx2
def test_one_row_avx2_kernel(tmp_path):
    """One row (static) of every 4-bit weight form takes the AVX2 one-row kernel (x's digits, then
    the kernel; 8-bit weights keep the 8-lane f32 kernel), bit for bit the numpy model, for x with
    a block of zeros, a block spanning 2^50, subnormals, blocks below 2^-119 and values near 1e34."""
    from onnx import load, numpy_helper

    k, n = 384, 64
    path = models.matmul_forms(tmp_path / "m.onnx", k, n, ONE_ROW_FORMS, rows=1)
    text = staged_for_avx2(path)
    four_bit = len(ONE_ROW_FORMS) - 1
    assert len(re.findall(r'"flow.dispatch"\([^)]*\) \{entry_points = \[@dq_matmul_digits_avx2_', text)) == four_bit
    assert len(re.findall(r'"flow.dispatch"\([^)]*\) \{entry_points = \[@dq_digits_rows_', text)) == four_bit
    assert text.count("entry_points = [@dq_matmul_i8_k384_n64_b32_l8") == 1 and "vpdpbusd" not in text
    vmfb = compile_text(tmp_path, text, *HASWELL)
    inits = {i.name: numpy_helper.to_array(i) for i in load(path).graph.initializer}
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))

    def run(x):
        return [np.asarray(g)[0] for g in ctx.modules.module["g"](x[None, :])]

    for name, x in one_row_inputs(np.random.default_rng(11), k).items():
        x = x.astype(np.float32)
        got = run(x)
        for i, form in enumerate(ONE_ROW_FORMS[:-1]):
            block, w, s, z = form_arrays(inits, i, form, k, n)
            np.testing.assert_array_equal(got[i], one_row_reference(x, w, s, z, block), err_msg=f"form {ONE_ROW_FORMS[i]}, x {name}")
