"""Dynamic int8 MatMuls (quantize_dynamic's DynamicQuantizeLinear + MatMulInteger + Cast + Mul by
sx * sw) through dq's exact integer kernel, x's scale and zero point read at run time
(passes/dynamic_matmul.py; docs/semantics.md#dynamic-int8-matmuls): on AVX-512 VNNI
(cascadelake), AMX (sapphirerapids: the direct form's 32-row tiles, passes/kernels/qdq_amx.py),
AVX-VNNI (alderlake: vpdpbusd on 256 bits, passes/kernels/qdq_avxvnni.py) and AVX2 (haswell,
vpmaddwd) targets, against onnx.reference and onnxruntime."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from requires import needs_iree
from onnx import TensorProto, helper, numpy_helper

pytestmark = needs_iree

sys.path.insert(0, str(Path(__file__).parent))
from dequant import iree as stage  # noqa: E402
from dequant.passes.target_features import host_has_amx_int8, host_has_avx2, host_has_avx512vnni, host_has_avxvnni  # noqa: E402

from test_iree import compile_text, reference, run_vmfb  # noqa: E402
import onnxruntime_reference  # noqa: E402

CPUS = {
    "cascadelake": pytest.mark.skipif(not host_has_avx512vnni(), reason="the VNNI kernel runs vpdpbusd, which this host lacks"),
    "haswell": pytest.mark.skipif(not host_has_avx2(), reason="the AVX2 kernel runs vpmaddwd, which this host lacks"),
    "alderlake": pytest.mark.skipif(not host_has_avxvnni(), reason="the AVX-VNNI kernel runs VEX vpdpbusd, which this host (or its OS's flags) lacks"),
    "sapphirerapids": pytest.mark.skipif(not host_has_amx_int8(), reason="the AMX kernel runs tdpbusd, which this host (or its OS) lacks"),
}


def dynamic_matmul(path, k: int, n: int, *, weights=np.int8, per_column=False, zero_point=False, bias=False, w=None, seed=0) -> str:
    """x [m, K] -> DynamicQuantizeLinear -> MatMulInteger(xq, w, zx, zw) -> Cast -> Mul(., sx * sw)
    (-> Add b), the nodes and order quantize_dynamic writes; sw and zw per column or per tensor."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(weights)
    if w is None:
        w = rng.integers(info.min, info.max + 1, (k, n)).astype(weights)
    shape = (n,) if per_column else ()
    sw = (rng.random(shape) * 0.02 + 0.001).astype(np.float32)
    zw = rng.integers(info.min // 2, info.max // 2 + 1, shape).astype(weights) if zero_point else np.zeros(shape, weights)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(sw, "sw"), numpy_helper.from_array(zw, "zw")]
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "sx", "zx"]),
        helper.make_node("Mul", ["sx", "sw"], ["s"]),
        helper.make_node("MatMulInteger", ["xq", "w", "zx", "zw"], ["d"]),
        helper.make_node("Cast", ["d"], ["df"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["df", "s"], ["y" if not bias else "yb"]),
    ]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b"))
        nodes.append(helper.make_node("Add", ["yb", "b"], ["y"]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])], inits)  # fmt: skip
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), str(path))
    return str(path)


def compiled(tmp_path, path, cpu: str) -> tuple[bytes, list, str]:
    """The module for `cpu`, the dq matmul kernels its stage dispatches (each after the
    DynamicQuantizeLinear's two dispatches they read, the range's first, checked), and the
    stage's summary line."""
    text, summary = stage.run_stage(stage.import_onnx(path), cpu=cpu)
    flags = (*stage.TARGETS["llvm-cpu"].flags[:2], f"--iree-llvmcpu-target-cpu={cpu}", "--iree-opt-level=O3", *stage.COMMON_FLAGS)
    kernels = re.findall(r"entry_points = \[@(dq_\w+)::", text)
    quantize = [k for k in kernels if k.startswith(("dq_dynamic_range_", "dq_dynamic_quantize_"))]
    matmuls = sorted(k for k in kernels if k not in quantize)
    # the model's one DynamicQuantizeLinear: dq's two dispatches where dq's kernel reads it, else IREE's node
    assert [k.split("_k")[0] for k in quantize] == (["dq_dynamic_range", "dq_dynamic_quantize"] if matmuls else []), kernels
    assert ('"onnx.DynamicQuantizeLinear"' in text) == (not matmuls), kernels
    return compile_text(tmp_path, text, *flags), matmuls, summary.line()


def inputs(m: int, k: int) -> dict:
    """x drawn normal, all positive (zx = 0, codes up to 255), all negative (zx = 255), with a
    large common offset, and all zero (onnxruntime's scale 1, onnx.reference's 1/255: y is 0);
    normal with one outlier in the last row (the range of every row is x's, not each row
    group's: the quantize dispatches split the rows); and halves of odd integers in [-127.5,
    127.5] with both ends (sx = 1, zx = 128: every x / sx a tie, rounded to even)."""
    rng = np.random.default_rng(m * 1000 + k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    outlier = x.copy()
    outlier[-1, k // 2] = 60.0
    ties = (rng.integers(-128, 128, (m, k)) + 0.5).astype(np.float32)
    ties.flat[:2] = (-127.5, 127.5)
    return {"normal": x, "positive": np.abs(x) * 3, "negative": -np.abs(x), "offset": x + 40, "zero": np.zeros_like(x), "outlier": outlier,
            "ties": ties}  # fmt: skip


def ort(path, x, optimized: bool) -> np.ndarray:
    return onnxruntime_reference.session(path, optimized).run(None, {"x": x})[0]


FORMS = {
    "int8-per-tensor": dict(weights=np.int8),
    "uint8-per-tensor-zero-point": dict(weights=np.uint8, zero_point=True),
    "int8-per-column-zero-point": dict(weights=np.int8, per_column=True, zero_point=True),
    "uint8-per-column-bias": dict(weights=np.uint8, per_column=True, zero_point=True, bias=True),
}


@pytest.mark.parametrize("cpu", [pytest.param(c, marks=mark) for c, mark in CPUS.items()])
@pytest.mark.parametrize("form", FORMS)
def test_dynamic_matmul_kernel(tmp_path, cpu, form):
    """K = 256, N = 128, M = 1, 7, 16 and 45 on one module (its row count a run-time dim; 7: the
    kernel's tails of 2 and 1 rows after a tile of 4; 45: AMX's tile of 32 rows, then 13): one dispatch
    of dq's kernel, y bit for bit onnx.reference's and onnxruntime's with optimizations off (the
    graph's own nodes), and onnxruntime's fused DynamicQuantizeMatMul's."""
    path = dynamic_matmul(tmp_path / "m.onnx", 256, 128, **FORMS[form])
    vmfb, kernels, line = compiled(tmp_path, path, cpu)
    assert len(kernels) == 1 and kernels[0].endswith("_dyn"), (kernels, line)
    assert ("avx2" in kernels[0]) == (cpu == "haswell") and "1 of 1 MatMulInteger to dq's integer kernel" in line
    assert ("avxvnni" in kernels[0]) == (cpu == "alderlake"), kernels
    assert ("amx" in kernels[0]) == (cpu == "sapphirerapids" and form == "int8-per-tensor"), kernels  # the direct form only
    for m in (1, 7, 16, 45):
        for name, x in inputs(m, 256).items():
            got = run_vmfb(vmfb, x)
            np.testing.assert_array_equal(got, reference(path, x), err_msg=f"M = {m}, x {name}")
            np.testing.assert_array_equal(got, ort(path, x, False), err_msg=f"M = {m}, x {name}")
            np.testing.assert_array_equal(got, ort(path, x, True), err_msg=f"M = {m}, x {name}")


@pytest.mark.parametrize("cpu", [pytest.param(c, marks=mark) for c, mark in CPUS.items()])
@pytest.mark.parametrize("k", [260, 250])
def test_dynamic_matmul_k_off_the_kernels_step(tmp_path, cpu, k):
    """K = 260 (a multiple of the VNNI kernel's step, 4, not of the AVX2 kernel's, 16: the VNNI row
    sums' 4-byte tail; AVX-VNNI's step is 4 too) and K = 250 (of neither): the kernel where its
    step divides K, else IREE's own MatMulInteger with the stage's remark; y bit for bit
    onnx.reference's either way. N = 72: a partial last workgroup (8 columns, of 64 with VNNI, of
    32 with AVX2 and AVX-VNNI), stored masked."""
    path = dynamic_matmul(tmp_path / "m.onnx", k, 72, weights=np.int8, per_column=True, zero_point=True)
    vmfb, kernels, line = compiled(tmp_path, path, cpu)
    takes = k % (16 if cpu == "haswell" else 4) == 0
    assert len(kernels) == int(takes), (kernels, line)
    for m in (1, 16):
        for name, x in inputs(m, k).items():
            np.testing.assert_array_equal(run_vmfb(vmfb, x), reference(path, x), err_msg=f"M = {m}, x {name}")


@pytest.mark.parametrize("cpu", [pytest.param(c, marks=mark) for c, mark in CPUS.items()])
def test_dynamic_matmul_does_not_saturate(tmp_path, cpu):
    """x at 0 and 40 (zx = 0, codes 0 and 255) against weights 127 and -128: a pair of products
    summed in int16 as `vpmaddubsw` sums them (255 * 127 twice: 64,770) saturates at 32,767, so a
    kernel doing so would be off by thousands of steps; y is bit for bit onnx.reference's, and
    within the three f32 roundings of float64 (sx * sw, float(d), their product) of the exact
    real (xq - zx) * sx @ (w * sw)."""
    k, n = 256, 64
    w = np.where(np.random.default_rng(3).random((k, n)) < 0.3, -128, 127).astype(np.int8)
    w[:, :16] = 127  # whole columns of one sign: the largest |d|
    path = dynamic_matmul(tmp_path / "m.onnx", k, n, weights=np.int8, w=w)
    vmfb, kernels, _ = compiled(tmp_path, path, cpu)
    assert len(kernels) == 1
    x = np.full((48, k), 40.0, np.float32)  # 48 rows: a tile of AMX's 32 too
    x[:, 1::7] = 0.0
    got = run_vmfb(vmfb, x)
    np.testing.assert_array_equal(got, reference(path, x))
    sx, sw = np.float32(40.0) / np.float32(255), onnx.numpy_helper.to_array(onnx.load(path).graph.initializer[1])
    xq = np.round(x / sx).astype(np.float64)  # 0 and 255, exactly
    assert xq.max() == 255 and 2 * 255 * 127 > 32767
    want = (xq * np.float64(sx)) @ (w.astype(np.float64) * np.float64(sw))
    np.testing.assert_allclose(got, want, rtol=3 * 2.0**-24 * 1.01, atol=0)
