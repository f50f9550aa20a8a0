"""QDQ MatMuls on AVX2 targets: dq's exact integer kernels for a module tagged `dq.avx2` alone (an
AVX2 host without AVX-512: haswell, znver2), compiled for `--iree-llvmcpu-target-cpu=haswell`:
`vpmaddwd` (passes/kernels/qdq_avx2.py) for weights with a zero point, the `vpmaddubsw` forms
(passes/kernels/qdq_avxvnni.py) for int8 weights without one; run where the host has AVX2, against
the integer arithmetic in numpy (int64) and float64."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from requires import needs_iree

pytestmark = needs_iree

sys.path.insert(0, str(Path(__file__).parent))
from dequant import iree as stage  # noqa: E402
from dequant.passes.target_features import AVX2, host_has_avx2  # noqa: E402

import iree_models as models  # noqa: E402
from test_iree import QDQ_FORMS, compile_text, qdq_integer_model, run_vmfb  # noqa: E402

needs_avx2 = pytest.mark.skipif(not host_has_avx2(), reason="the AVX2 integer kernel runs vpmaddwd (AVX2), which this host lacks")
HASWELL = (*stage.TARGETS["llvm-cpu"].flags[:2], "--iree-llvmcpu-target-cpu=haswell", "--iree-opt-level=O3", *stage.COMMON_FLAGS)
FORMS = ["uint8-x-per-column", "int8-x-per-column-zero-point", "uint8-x-per-tensor-zero-point", "uint8-x-bias",
         "int8-x-zero-point-requantize-uint8", "uint8-x-qdq-bias-requantize-uint8"]  # fmt: skip


def staged_for_avx2(path, kernel: str) -> str:
    """The dq stage's output for a module tagged as for an AVX2 host (dq.avx2, no AVX-512 tag),
    one dispatch of the AVX2 kernel `kernel`: "avx2_", vpmaddwd; "avx2b_", the direct vpmaddubsw
    form; "avx2s_", the sign-split one."""
    text = stage.import_onnx(path)
    end = "\n}) : () -> ()\n"  # the module's own closing line
    assert end in text
    staged = stage.prepare(text.replace(end, f"\n}}) {{{AVX2}}} : () -> ()\n", 1))
    assert staged.count(f"entry_points = [@dq_matmul_qdq_{kernel}") == 1 and "vpdpbusd" not in staged
    return staged


@needs_avx2
@pytest.mark.parametrize("name", FORMS)
def test_qdq_matmul_avx2_kernel(tmp_path, name):
    """32 x 256 @ 256 x 256 int8 QDQ MatMuls (the VNNI kernel's forms, test_iree.QDQ_FORMS) on the AVX2
    kernels (weights with a zero point vpmaddwd, the others, uniform over int8, the sign-split
    form): equal, bit for bit, to the same integer arithmetic in numpy (and so to the VNNI kernel)."""
    path = models.qdq_matmul(tmp_path / "m.onnx", 32, 256, 256, **QDQ_FORMS[name])
    vmfb = compile_text(tmp_path, staged_for_avx2(path, "avx2_" if "zero-point" in name else "avx2s_"), *HASWELL)
    x = (np.random.default_rng(1).standard_normal((32, 256)) * 3).astype(np.float32)  # some codes saturate
    got, want = run_vmfb(vmfb, x), qdq_integer_model(path, x)
    if got.dtype == np.int8 and want.dtype == np.uint8:  # IREE's buffers are signless
        got = got.view(np.uint8)
    np.testing.assert_array_equal(got, want)


@needs_avx2
@pytest.mark.parametrize("zero_point", [False, True], ids=["sign-split", "vpmaddwd"])
@pytest.mark.parametrize("activations", [np.uint8, np.int8])
def test_qdq_matmul_avx2_kernel_does_not_saturate(tmp_path, activations, zero_point):
    """Every x code at its extreme (255 for uint8, -128 for int8, the other extreme in other rows)
    and weights -128 and 127: the pairs a vpmaddubsw of x as it is would add in i16 (255 * 127
    twice, or 128 * 255 as the kernel biases them) leave int16. Without a weight zero point the
    sign-split form (its products |v| * (w ^ m) at their ends, -128 * 128 twice, -32768), with one
    vpmaddwd (i32 sums). y against float64: (xq - zx) * sx @ ((wq - zw) * sw), each term exact,
    within the kernel's three f32 roundings (sx * sw, float(d), their product)."""
    k = n = 256
    w = np.where(np.random.default_rng(2).random((k, n)) < 0.5, -128, 127).astype(np.int8)
    w[:, :32] = 127  # whole columns of one sign: the largest |d|
    path = models.qdq_matmul(tmp_path / "m.onnx", 15, k, n, activations=activations, weights=w, weight_zero_point=zero_point)  # 3 x 4 rows, then 2 and 1
    vmfb = compile_text(tmp_path, staged_for_avx2(path, "avx2_" if zero_point else "avx2s_"), *HASWELL)
    x = np.full((15, k), 1e6 if activations == np.uint8 else -1e6, np.float32)
    x[1::2, ::3] *= -1  # other rows: the other extreme too
    got = run_vmfb(vmfb, x)
    np.testing.assert_array_equal(got, qdq_integer_model(path, x))
    init = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    info, zx = np.iinfo(activations), int(init["zx"])
    xq = np.where(x > 0, info.max, info.min).astype(np.float64)
    centred = w.astype(np.float64) - init.get("zw", np.zeros(())).astype(np.float64)
    want = ((xq - zx) * np.float64(init["sx"])) @ (centred * init["sw"].astype(np.float64))
    assert np.abs(xq - zx).max() * 127 * 2 > 32767  # two products overflow an i16 sum
    np.testing.assert_allclose(got, want, rtol=3 * 2.0**-24 * 1.01, atol=0)


@needs_avx2
@pytest.mark.parametrize("opset", [13, 17, 19])
def test_qdq_matmul_of_each_opset(tmp_path, opset):
    """quantize_static writes QDQ at the model's opset; from 13 (per-axis DequantizeLinear, no
    `saturate` nor block attributes before 19 and 21) the QDQ MatMul with a bias and a
    QuantizeLinear of y takes the integer kernel whole, equal, bit for bit, to the integer
    arithmetic in numpy (whose QuantizeLinear after the MatMul is onnx.reference's at opset 21:
    the same node means the same there, and onnx.reference has no opset-13 form)."""
    form = QDQ_FORMS["uint8-x-qdq-bias-requantize-uint8"]
    path = models.qdq_matmul(tmp_path / "m.onnx", 32, 256, 256, opset=opset, **form)
    assert onnx.load(path).opset_import[0].version == opset
    vmfb = compile_text(tmp_path, staged_for_avx2(path, "avx2s_"), *HASWELL)
    x = (np.random.default_rng(1).standard_normal((32, 256)) * 3).astype(np.float32)
    want = qdq_integer_model(models.qdq_matmul(tmp_path / "ref.onnx", 32, 256, 256, **form), x)
    np.testing.assert_array_equal(run_vmfb(vmfb, x).view(np.uint8), want)


@needs_avx2
def test_dynamic_matmul_takes_the_vpmaddubsw_form(tmp_path):
    """A MatMul by quantize_dynamic (DynamicQuantizeLinear, MatMulInteger: uint8 x, per-tensor int8
    weights, few pairs beyond 128) takes the AVX2 kernel's vpmaddubsw form (passes/kernels/qdq_avxvnni.py,
    QdqAvx2BytesKernel), x quantized at run time; onnxruntime's exact session on the same model
    gives the same y bit for bit, x spread so that its codes reach 0 and 255."""
    from onnx import TensorProto, helper, numpy_helper

    from dequant import check

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((256, 256)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 256])], [w])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "f.onnx")
    path = models.quantize_dynamic_file(tmp_path / "f.onnx", tmp_path / "q.onnx")
    staged = staged_for_avx2(path, "avx2b_")
    assert "_dyn_f" in staged
    x = (rng.standard_normal((32, 256)) * 3).astype(np.float32)
    x[0, :] = np.linspace(-10, 10, 256)  # the row's range: codes 0 and 255
    got = run_vmfb(compile_text(tmp_path, staged, *HASWELL), x)
    want = check.onnxruntime_session(str(path)).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)
