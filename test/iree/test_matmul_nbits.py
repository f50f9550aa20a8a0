"""com.microsoft MatMulNBits through the IREE stage (dequant.formats rewrites it into
DequantizeLinear + MatMul): every form of the spec against onnxruntime's own kernel (accuracy
level 0, graph optimizations off), models written with onnx.helper from the spec and by
onnxruntime's `MatMulNBitsQuantizer`; bad input is one `error:` line.
"""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from requires import needs_iree

pytestmark = needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402

from dequant import iree as stage  # noqa: E402

import iree_models as models  # noqa: E402
from stage_cli import dequant_iree, one_error_line  # noqa: E402


def run_vmfb(vmfb: bytes, x: np.ndarray, function: str = "g") -> np.ndarray:
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    return np.asarray(ctx.modules.module[function](x))


def onnxruntime_kernel(path: str, x: np.ndarray) -> np.ndarray:
    """onnxruntime's MatMulNBits kernel on the model as written (no graph optimization)."""
    return onnxruntime_reference.session(path).run(None, {"x": x})[0]


def set_accuracy_level(path: str, level: int) -> str:
    """The model with every MatMulNBits' accuracy_level set to `level` (a copy beside it)."""
    m = onnx.load(path)
    for node in m.graph.node:
        if node.op_type == "MatMulNBits":
            for a in node.attribute:
                if a.name == "accuracy_level":
                    a.i = level
            if not any(a.name == "accuracy_level" for a in node.attribute):
                node.attribute.append(onnx.helper.make_attribute("accuracy_level", level))
    out = path.replace(".onnx", f"_level{level}.onnx")
    onnx.save(m, out)
    return out


def agree(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    got, want = got.astype(np.float32), want.astype(np.float32)
    assert np.abs(got - want).max() <= rtol * np.abs(want).max(), np.abs(got - want).max() / np.abs(want).max()


FORMS = {
    "int4": dict(),
    "int4-packed-zero-points": dict(zero_point="packed"),
    "int4-float-zero-points": dict(zero_point="float"),
    "int4-bias": dict(bias=True, zero_point="packed"),
    "int4-g_idx": dict(g_idx=True),
    "int4-g_idx-float-zero-points": dict(g_idx=True, zero_point="float"),
    "int4-g_idx-uneven-blocks": dict(g_idx="uneven"),
    "int4-g_idx-uneven-float-zero-points": dict(g_idx="uneven", zero_point="float", k=96),
    "int4-block16-partial": dict(k=72, block=16, zero_point="packed"),
    "int4-block256-rank3": dict(k=512, block=256, rank=3),
    "int8": dict(bits=8),
    "int8-packed-zero-points": dict(bits=8, zero_point="packed", block=128),
    "int2-packed-zero-points": dict(bits=2, zero_point="packed"),
    "int2-float-zero-points": dict(bits=2, zero_point="float", block=64),
    "f16-scales-bias": dict(scale_type=np.float16, zero_point="packed", bias=True),
    "f16-float-zero-points": dict(scale_type=np.float16, zero_point="float"),
    "accuracy-level-4-still-exact": dict(accuracy_level=4),
}


@pytest.mark.parametrize("name", FORMS)
def test_matmul_nbits_form_against_onnxruntime_kernel(tmp_path, name):
    """Each form compiled through the stage agrees with onnxruntime's kernel at accuracy level 0
    (f32 sums in another order; f16: both compute in f32 and round once), its MatMul fused with
    the dequantization."""
    form = dict(FORMS[name])
    k, n, rank = form.pop("k", 128), 64, form.get("rank", 2)
    path = models.matmul_nbits(tmp_path / "m.onnx", k, n, **form)
    summaries = []
    vmfb = stage.compile_onnx(path, report=summaries.append)
    # a partial last block: the stage splits the tail off into a MatMul of its own (unfused)
    assert (summaries[0].left, summaries[0].fused) == (0, 0 if k % form.get("block", 32) else 1), summaries[0].line()
    dtype = form.get("scale_type", np.float32)
    x = np.random.default_rng(1).standard_normal((1, 3, k) if rank == 3 else (3, k)).astype(dtype)
    agree(run_vmfb(vmfb, x), onnxruntime_kernel(set_accuracy_level(path, 0), x), 1e-3 if dtype == np.float16 else 1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_fractional_float_zero_points_exact_per_weight(tmp_path, dtype):
    """Fractional zero points of the scales' type with the weights near them and x over a large
    common offset (1e3 + noise), one row and 16: the module computes each weight on its own (no
    term z * s taken off a sum over K, which cancels here: issue 42), so it is within f32 rounding
    of the sums, sqrt(K) 2^-24 |x| @ |w|, of float64 numpy of the spec's (q - z) * s, as
    onnxruntime's kernel (accuracy level 0) is; f16: plus the output's rounding, 2^-11 |y|. The
    weights stay packed: dq's f32 kernel reads them, one dispatch, no DequantizeLinear left."""
    k, n, block = (1024, 64, 32) if dtype == np.float32 else (256, 64, 32)  # f16: y stays finite
    path = models.matmul_nbits(tmp_path / "m.onnx", k, n, block=block, zero_point="float", scale_type=dtype, near_zero=True)
    arrays = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    codes = np.stack([(arrays["B"].reshape(n, -1) >> s) & 15 for s in (0, 4)], -1).reshape(n, k).astype(np.float64)
    z, s = (arrays[name].reshape(n, k // block).astype(np.float64) for name in ("zp", "scales"))
    w = ((codes - np.repeat(z, block, 1)) * np.repeat(s, block, 1)).T  # [K, N], exact in float64
    summaries = []
    vmfb = stage.compile_onnx(path, report=summaries.append)
    assert (summaries[0].left, summaries[0].fused) == (0, 1), summaries[0].line()
    level0 = set_accuracy_level(path, 0)
    for rows in (1, 16):
        x = (1e3 + np.random.default_rng(rows).standard_normal((rows, k))).astype(dtype)
        want = x.astype(np.float64) @ w
        tol = np.sqrt(k) * 2.0**-24 * (np.abs(x.astype(np.float64)) @ np.abs(w))
        if dtype == np.float16:
            tol += 2.0**-11 * np.abs(want)
        for who, got in (("dq", run_vmfb(vmfb, x)), ("onnxruntime", onnxruntime_kernel(level0, x))):
            assert got.dtype == dtype, (who, got.dtype)
            err = np.abs(got.astype(np.float64) - want)
            assert (err <= tol).all(), (who, rows, float((err / tol).max()))
    assert len(vmfb) < 1.2 * (k * n // 2 + 2 * (k // block) * n * 4) + 64 * 1024, len(vmfb)  # codes packed, z * s and s in f32


@pytest.mark.parametrize("rows", [1, 64])
def test_float_zero_point_weights_rounded_twice(tmp_path, rows):
    """Each weight of a float zero point's MatMul is fl(fl(q * s) - fl(z * s)), two roundings
    (docs/semantics.md: onnxruntime's kernel at level 0, no FMA): x's rows are one-hot, so each
    output is one weight exactly, held to that in numpy's f32 bit for bit, by the one-row body
    and the several-rows one. IREE marks the kernel's fmul and fsub `contract`; fused into one
    FMA they round once, and a share of the weights came out an ulp off."""
    k, n, block = 64, 64, 32
    path = models.matmul_nbits(tmp_path / "m.onnx", k, n, block=block, zero_point="float")
    arrays = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    codes = np.stack([(arrays["B"].reshape(n, -1) >> s) & 15 for s in (0, 4)], -1).reshape(n, k).astype(np.float32)
    z, s = (np.repeat(arrays[name].reshape(n, k // block), block, 1) for name in ("zp", "scales"))
    w = ((codes * s).astype(np.float32) - (z * s).astype(np.float32)).astype(np.float32).T  # [K, N]
    vmfb = stage.compile_onnx(path)
    picked = np.random.default_rng(rows).permutation(k)[:rows]
    np.testing.assert_array_equal(run_vmfb(vmfb, np.eye(k, dtype=np.float32)[picked]), w[picked])


def test_bf16_scales(tmp_path):
    """bf16 scales (onnxruntime's CPU kernel has none): the spec's formula in f32, rounded once."""
    k, n, block = 64, 32, 32
    path = models.matmul_nbits(tmp_path / "m.onnx", k, n, block=block, scale_type=ml_dtypes.bfloat16, zero_point="packed")
    m = onnx.load(path)
    arrays = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    codes = np.stack([(arrays["B"].reshape(n, -1) >> s) & 15 for s in (0, 4)], -1).reshape(n, k).astype(np.float32)
    zp = np.stack([(arrays["zp"].reshape(n, -1) >> s) & 15 for s in (0, 4)], -1).reshape(n, -1)[:, : k // block].astype(np.float32)
    s = arrays["scales"].astype(np.float32).reshape(n, k // block)
    w = (codes - np.repeat(zp, block, 1)) * np.repeat(s, block, 1)
    x = np.random.default_rng(2).standard_normal((2, k)).astype(ml_dtypes.bfloat16)
    want = (x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32).astype(ml_dtypes.bfloat16)
    got = run_vmfb(stage.compile_onnx(path), x)
    assert got.dtype == want.dtype
    assert np.abs(got.astype(np.float32) - want.astype(np.float32)).max() <= 2 ** -7 * np.abs(want.astype(np.float32)).max()


def test_g_idx_with_packed_zero_points_follows_the_spec(tmp_path):
    """Act-order with packed zero points: the spec's (q - zp[g_idx]) * scale[g_idx], checked
    against numpy. onnxruntime's CPU kernel (1.32) takes every zero point as 8 on its g_idx path
    (it reads the packed zero point and never uses it; matmul_nbits_impl.cc), so it is no reference
    here: the test shows that too."""
    k, n, block = 128, 32, 32
    path = models.matmul_nbits(tmp_path / "m.onnx", k, n, block=block, g_idx=True, zero_point="packed")
    arrays = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    nibbles = lambda a, cols: np.stack([(a.reshape(n, -1) >> s) & 15 for s in (0, 4)], -1).reshape(n, -1)[:, :cols].astype(np.float64)  # noqa: E731
    codes, zp = nibbles(arrays["B"], k), nibbles(arrays["zp"], k // block)
    g, s = arrays["g_idx"].astype(np.int64), arrays["scales"].reshape(n, k // block).astype(np.float64)
    x = np.random.default_rng(2).standard_normal((3, k)).astype(np.float32)
    want = (x @ ((codes - zp[:, g]) * s[:, g]).T).astype(np.float32)
    agree(run_vmfb(stage.compile_onnx(path), x), want)
    ort_eights = (x @ ((codes - 8) * s[:, g]).T).astype(np.float32)
    agree(onnxruntime_kernel(path, x), ort_eights)


@pytest.mark.parametrize("options", [dict(), dict(symmetric=False), dict(bits=8), dict(block=128, accuracy_level=4)],
                         ids=["default", "asymmetric", "bits8", "block128-level4"])  # fmt: skip
def test_matmul_nbits_quantizer_forms(tmp_path, options):
    """onnxruntime's MatMulNBitsQuantizer in its default (QOperator) format, with its options, on
    a small MLP-like model: the stage's module agrees with onnxruntime at accuracy level 0."""
    pytest.importorskip("onnx_ir", reason="onnxruntime's MatMulNBitsQuantizer needs the onnx-ir package")
    options = dict(options)
    symmetric = options.pop("symmetric", True)
    float_path = models.decoder_layer(tmp_path / "f.onnx", seq=2, hidden=128, heads=4, mlp=256)
    path = models.quantize_matmul_nbits(float_path, tmp_path / "q.onnx", symmetric=symmetric, qoperator=True, **options)
    assert sum(n.op_type == "MatMulNBits" for n in onnx.load(path).graph.node) == 7
    summaries = []
    vmfb = stage.compile_onnx(path, report=summaries.append)
    assert (summaries[0].left, summaries[0].fused) == (0, 7), summaries[0].line()
    x = np.random.default_rng(3).standard_normal((1, 2, 128)).astype(np.float32)
    agree(run_vmfb(vmfb, x), onnxruntime_kernel(set_accuracy_level(path, 0), x))


def test_int8_activations_give_accuracy_level_4_when_asked(tmp_path):
    """`int8_activations` (AVX-512 VNNI hosts): the quantizer's model at accuracy level 4 takes
    dq's int8-activation kernel for its 7 MatMulNBits and agrees with onnxruntime's own level-4
    run within 2e-2 of the output's magnitude (both quantize x per block of K, rounding apart)."""
    from dequant.passes.target_features import host_has_avx512vnni

    if not host_has_avx512vnni():
        pytest.skip("the int8-activation kernel runs vpdpbusd (AVX-512 VNNI), which this host lacks")
    pytest.importorskip("onnx_ir", reason="onnxruntime's MatMulNBitsQuantizer needs the onnx-ir package")
    float_path = models.decoder_layer(tmp_path / "f.onnx", seq=3, hidden=128, heads=4, mlp=256)
    path = models.quantize_matmul_nbits(float_path, tmp_path / "q.onnx", symmetric=False, qoperator=True, accuracy_level=4)
    text, summary = stage.run_stage(stage.import_onnx(path), int8_activations=True)
    assert (summary.left, summary.fused) == (0, 7) and text.count("dq_matmul_x8_") >= 7, summary.line()
    x = np.random.default_rng(3).standard_normal((1, 3, 128)).astype(np.float32)
    got, want = run_vmfb(stage.compile_onnx(path, int8_activations=True), x), onnxruntime_kernel(path, x)
    assert np.abs(got - want).max() <= 2e-2 * np.abs(want).max()


def test_model_below_opset_21_is_converted_first(tmp_path):
    """A MatMulNBitsQuantizer model of a float model at opset 17 (ReduceMean's axes an attribute
    there, an input from 18): onnx's version converter raises it to 21 before the rewrite, and the
    module agrees with onnxruntime on the model as written."""
    pytest.importorskip("onnx_ir", reason="onnxruntime's MatMulNBitsQuantizer needs the onnx-ir package")
    from onnx import version_converter

    float_path = models.decoder_layer(tmp_path / "f.onnx", seq=2, hidden=128, heads=4, mlp=256)
    onnx.save(version_converter.convert_version(onnx.load(float_path), 17), float_path)
    path = models.quantize_matmul_nbits(float_path, tmp_path / "q.onnx", symmetric=True, qoperator=True)
    assert onnx.load(path).opset_import[0].version == 17
    summaries = []
    vmfb = stage.compile_onnx(path, report=summaries.append)
    assert (summaries[0].left, summaries[0].fused) == (0, 7), summaries[0].line()
    x = np.random.default_rng(4).standard_normal((1, 2, 128)).astype(np.float32)
    agree(run_vmfb(vmfb, x), onnxruntime_kernel(path, x))


def test_iree_alone_cannot_compile_matmul_nbits(tmp_path):
    """The problem: IREE's importer leaves com.microsoft MatMulNBits as a torch.operator that
    iree-compile cannot legalize."""
    path = models.matmul_nbits(tmp_path / "m.onnx", 64, 32)
    imported = tmp_path / "m.mlir"
    assert subprocess.run([sys.executable, "-m", "iree.compiler.tools.import_onnx", path, "-o", str(imported)], capture_output=True).returncode == 0
    run = subprocess.run([sys.executable, "-m", stage.COMPILE, str(imported), "--iree-hal-target-device=local",
                          "--iree-hal-local-target-device-backends=llvm-cpu", "-o", str(tmp_path / "m.vmfb")], capture_output=True, text=True)  # fmt: skip
    assert run.returncode != 0 and "failed to legalize operation 'torch.operator'" in run.stderr




def _edit(path: str, attrs: dict | None = None, init: tuple | None = None, opset: int | None = None) -> str:
    m = onnx.load(path)
    node = m.graph.node[0]
    for a in node.attribute:
        if attrs and a.name in attrs:
            a.i = attrs[a.name]
    if init:
        name, fn = init
        t = next(t for t in m.graph.initializer if t.name == name)
        t.CopyFrom(onnx.numpy_helper.from_array(fn(onnx.numpy_helper.to_array(t)), name))
    if opset:
        m.opset_import[0].version = opset
    onnx.save(m, path)
    return path


BAD = {
    "short-B": (dict(init=("B", lambda b: b.reshape(-1)[:-1])), ["B holds 2047 elements", "need 2048"]),
    "K-disagrees": (dict(attrs={"K": 96}), ["B holds 2048 elements", "ceil(K / block_size) = 3 blocks", "need 1536"]),
    "N-disagrees": (dict(attrs={"N": 16}), ["B holds 2048 elements", "need 1024"]),
    "B-shape": (dict(init=("B", lambda b: b.reshape(16, 8, 16))), ["its B is [16, 8, 16]", "need [32, 4, 16]"]),
    "block-not-power-of-two": (dict(attrs={"block_size": 24}), ["block_size 24", "power of two"]),
    "g_idx-out-of-range": (dict(init=("g_idx", lambda g: np.where(np.arange(g.size) == 5, 4, g).astype(np.int32))), ["g_idx holds 4", "outside the 4 blocks"]),
    "bits-3": (dict(attrs={"bits": 3}), ["bits 3", "bits 2, 4 or 8"]),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_matmul_nbits_is_one_error_line(tmp_path, name):
    edit, words = BAD[name]
    path = _edit(models.matmul_nbits(tmp_path / "m.onnx", 128, 32, block=32, g_idx=True), **edit)
    one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), "MatMulNBits node 'y'", *words)
