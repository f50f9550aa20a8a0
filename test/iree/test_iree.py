"""The IREE stage end to end: ONNX models through iree-import-onnx, dq (torch-onnx-to-iree) and
iree-compile, run by IREE's runtime, against `onnx.reference` (f32 tolerance: the MatMul's sums
run in another order).

Needs the `iree` extra; skipped, with the reason, without it. CI installs it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("iree.compiler") is None or importlib.util.find_spec("iree.runtime") is None,
    reason="IREE is not installed (pip install 'dequant[iree]')",
)

onnx = pytest.importorskip("onnx")

from dequant import iree as stage  # noqa: E402

import iree_models  # noqa: E402
import iree_models as models  # noqa: E402


def run_vmfb(vmfb: bytes, x: np.ndarray, function: str = "g") -> np.ndarray:
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    return np.asarray(ctx.modules.module[function](x))


def reference(path: str, x: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(str(path)).run(None, {"x": x})[0]


def check(path: str, k: int, vmfb: bytes | None = None, m: int = 3) -> None:
    x = np.random.default_rng(7).standard_normal((m, k)).astype(np.float32)
    want = reference(path, x)
    got = run_vmfb(vmfb if vmfb is not None else stage.compile_onnx(path), x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def tool(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True)


# --- IREE alone, then with dq -------------------------------------------------------------------


def test_iree_alone_rejects_blocked_int4(tmp_path):
    """The problem the stage solves: IREE 3.13 cannot lower a blocked DequantizeLinear."""
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 64, 32, 32)
    imported = tmp_path / "m.mlir"
    assert tool("iree.compiler.tools.import_onnx", path, "-o", str(imported)).returncode == 0
    run = tool(stage.COMPILE, str(imported), "--iree-hal-target-device=local",
               "--iree-hal-local-target-device-backends=llvm-cpu", "-o", str(tmp_path / "m.vmfb"))  # fmt: skip
    assert run.returncode != 0
    assert "failed to legalize operation 'torch.operator'" in run.stderr


@pytest.mark.parametrize(
    "block, zero_point, unsigned",
    [(32, False, False), (32, True, False), (128, False, False), (128, True, False), (32, True, True), (64, False, True)],
)
def test_int4_blocked_matmul(tmp_path, block, zero_point, unsigned):
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 256, 64, block, zero_point=zero_point, unsigned=unsigned)
    check(path, 256)


def test_int4_blocked_matmul_batch_of_one_and_many(tmp_path):
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 128, 48, 32, zero_point=True)
    vmfb = stage.compile_onnx(path)
    for m in (1, 16):
        check(path, 128, vmfb, m=m)


def test_float8_e4m3fn_weights(tmp_path):
    path = models.float8_matmul(tmp_path / "m.onnx", 64, 32)
    check(path, 64)


def test_activations_and_weights_dequantized_into_one_matmul(tmp_path):
    path = models.qdq_both_matmul(tmp_path / "m.onnx", 64, 32)
    assert models.dequantize_linear_count(path) == 2
    check(path, 64)


def test_onnxruntime_quantize_static_qdq_model(tmp_path):
    path = models.quantize_static_model(tmp_path / "q.onnx", tmp_path, 32, 16)
    assert models.dequantize_linear_count(path) >= 4  # weights (per channel), bias, activations
    check(path, 32)


def test_every_dequantize_linear_becomes_dq(tmp_path):
    """No DequantizeLinear reaches IREE: each is linalg after the stage."""
    paths = [
        models.int4_blocked_matmul(tmp_path / "a.onnx", 64, 32, 32, zero_point=True),
        models.float8_matmul(tmp_path / "b.onnx", 32, 16),
        models.quantize_static_model(tmp_path / "c.onnx", tmp_path, 32, 16),
    ]
    for path in paths:
        imported = stage.import_onnx(path)
        assert imported.count('"onnx.DequantizeLinear"') == models.dequantize_linear_count(path)
        assert "onnx.DequantizeLinear" not in stage.prepare(imported)


# --- fusion, shown with IREE's own statistics ---------------------------------------------------


@pytest.mark.parametrize("zero_point", [False, True])
def test_int4_matmul_is_one_dispatch_reading_packed_weights(tmp_path, zero_point):
    """IREE's scheduling statistics: one dispatch, no transient buffer (no dispatch writes the
    f32 weights), and the constants are the packed weights (two int4 per byte) and the scales
    (and zero points, packed), nothing more."""
    k, n, block = 512, 256, 32
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", k, n, block, zero_point=zero_point)
    stats = tmp_path / "stats.json"
    vmfb = stage.compile_onnx(path, extra_args=["--iree-scheduling-dump-statistics-format=json",
                                                f"--iree-scheduling-dump-statistics-file={stats}"])  # fmt: skip
    s = json.loads(stats.read_text())["stream-aggregate"]
    assert s["execution"]["dispatch-count"] == 1
    assert s["execution"]["transient-memory-size"] == 0
    packed = k * n // 2 + (k // block) * n * 4 + ((k // block) * n // 2 if zero_point else 0)
    assert s["global"]["constant-size"] == packed
    check(path, k, vmfb)


def test_dispatch_reads_i4_and_writes_only_the_product(tmp_path):
    """The one executable's dispatch takes the i4 weights and returns the [M, N] product."""
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 256, 128, 32)
    text = stage.prepare(stage.import_onnx(path))
    source = tmp_path / "stage.mlir"
    source.write_text(text)
    flow = tmp_path / "flow.mlir"
    run = tool(stage.COMPILE, str(source), "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
               "--compile-to=flow", "--mlir-elide-resource-strings-if-larger=16", "-o", str(flow))  # fmt: skip
    assert run.returncode == 0, run.stderr
    dispatches = [ln for ln in flow.read_text().splitlines() if "flow.dispatch @" in ln]
    assert len(dispatches) == 1
    assert "xi4>" in dispatches[0] and "tensor<?x128xf32>" in dispatches[0].split("->")[-1]
    assert "256x128xf32" not in flow.read_text()


# --- the command line ---------------------------------------------------------------------------


def test_dequant_iree_command(tmp_path):
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 128, 32, 32)
    out = tmp_path / "m.vmfb"
    run = subprocess.run([sys.executable, "-m", "dequant.iree", path, "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    check(path, 128, out.read_bytes())


def test_dequant_iree_bad_model_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    run = subprocess.run([sys.executable, "-m", "dequant.iree", str(bad), "-o", str(tmp_path / "x.vmfb")], capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.startswith("dequant-iree: error: iree-import-onnx failed")
    assert "Traceback" not in run.stderr.split("failed", 1)[0]


# --- DequantizeLinear alone: types, granularities, opsets ----------------------------------------

F32, F16 = np.float32, np.float16
DQ_CASES = {
    # name: (x dtype, x shape, scale, zero point, opset, attrs)
    "int8-per-tensor-scalar-opset10": (np.int8, (3, 5), np.array(0.5, F32), np.array(-3, np.int8), 10, {}),
    "uint8-per-tensor-1-element-opset13": (np.uint8, (3, 5), np.array([0.25], F32), np.array([128], np.uint8), 13, {}),
    "int8-per-axis-0": (np.int8, (4, 6), np.arange(1, 5, dtype=F32) / 8, np.array([1, -2, 3, -4], np.int8), 13, {"axis": 0}),
    "uint16-per-axis-last": (np.uint16, (2, 3, 4), np.array([0.5, 1.0, 2.0, 4.0], F32), np.array([0, 1, 2, 60000], np.uint16), 21, {"axis": -1}),
    "int16-blocked": (np.int16, (4, 8), np.full((4, 2), 0.125, F32), np.full((4, 2), -7, np.int16), 21, {"axis": 1, "block_size": 4}),
    "int32-per-tensor": (np.int32, (3, 4), np.array(2.0**-10, F32), None, 21, {}),
    "int8-f16-scale": (np.int8, (3, 5), np.array(0.5, F16), np.array(1, np.int8), 21, {}),
    "int8-output-f16": (np.int8, (3, 5), np.array(0.5, F32), None, 23, {"output_dtype": F16}),
}


@pytest.mark.parametrize("name", list(DQ_CASES))
def test_dequantize_linear_alone(tmp_path, name):
    """Every DequantizeLinear form IREE's importer writes, converted by dq and compiled by IREE,
    equal to onnx.reference bit for bit (the dequantize is exact)."""
    x_dtype, shape, scale, zp, opset, attrs = DQ_CASES[name]
    attrs = dict(attrs)
    out = attrs.pop("output_dtype", None)
    path = iree_models.dequantize_only(tmp_path / "m.onnx", x_dtype, shape, scale, zp, opset=opset, output_dtype=out, **attrs)
    info = np.iinfo(x_dtype)
    x = np.random.default_rng(3).integers(info.min, info.max, size=shape, endpoint=True).astype(x_dtype)
    from onnx.reference import ReferenceEvaluator

    # onnx.reference implements DequantizeLinear from opset 19; the same node means the same at 19
    ref_path = path if opset >= 19 else iree_models.dequantize_only(tmp_path / "ref.onnx", x_dtype, shape, scale, zp, opset=19, **attrs)
    want = ReferenceEvaluator(ref_path).run(None, {"x": x})[0]
    got = run_vmfb(stage.compile_onnx(path), x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
