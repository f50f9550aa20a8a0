"""The IREE stage end to end: ONNX models through iree-import-onnx, dq (torch-onnx-to-iree) and
iree-compile, run by IREE's runtime, against `onnx.reference` (f32 tolerance: the MatMul's sums
run in another order).

Needs the `iree` extra; skipped, with the reason, without it. CI installs it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from requires import needs_iree

pytestmark = needs_iree

onnx = pytest.importorskip("onnx")

from dequant import iree as stage  # noqa: E402

F32, F16 = np.float32, np.float16

import iree_models  # noqa: E402
import iree_models as models  # noqa: E402
import onnxruntime_reference  # noqa: E402
from stage_cli import dequant_iree, one_error_line  # noqa: E402


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


def test_dequantize_linear_iree_cannot_lower_becomes_dq(tmp_path):
    """The DequantizeLinear nodes IREE cannot lower (blocked int4, float8 per column) and the
    weights of a weight-only MatMul become dq; a QDQ model's nodes, which IREE turns into integer
    arithmetic, stay IREE's (torch-onnx-to-dq-iree)."""
    cases = [
        (models.int4_blocked_matmul(tmp_path / "a.onnx", 64, 32, 32, zero_point=True), 0),
        (models.float8_matmul(tmp_path / "b.onnx", 32, 16), 0),
        (models.matmul_forms(tmp_path / "c.onnx", 64, 32, [(np.int8, 0, False), (np.uint8, -1, True)]), 0),
        (models.quantize_static_model(tmp_path / "d.onnx", tmp_path, 32, 16), None),
    ]
    for path, left in cases:
        imported = stage.import_onnx(path)
        count = models.dequantize_linear_count(path)
        assert imported.count('"onnx.DequantizeLinear"') == count
        prepared = stage.prepare(imported)
        assert prepared.count('"onnx.DequantizeLinear"') == (count if left is None else left), path


# Each form torch-onnx-to-dq-iree leaves to IREE (IREE_LOWERS), as IREE alone computes it:
# x, x's shape, scale, zero point, opset, attributes. Not bf16 outputs (a bf16 scale without
# output_dtype, or output_dtype bf16): alone they match, but widened again in the same dispatch
# (a Cast to float) IREE drops their rounding, so dq takes them (test_rounding_to_the_output_...).
IREE_FORMS = {
    "int8-tensor": (np.int8, (3, 5), np.array(0.5, F32), np.array(-3, np.int8), 21, {}),
    "uint8-axis": (np.uint8, (4, 6), np.arange(1, 7, dtype=F32) / 8, np.arange(6, dtype=np.uint8) * 20, 21, {"axis": 1}),
    "int16-axis": (np.int16, (4, 6), np.arange(1, 5, dtype=F32) / 8, np.array([1, -2, 3, -4], np.int16), 21, {"axis": 0}),
    "int32-axis": (np.int32, (6,), np.arange(1, 7, dtype=F32) / 1e3, None, 21, {"axis": 0}),
    "int8-f16-scale": (np.int8, (3, 5), np.array(0.3, F16), np.array(1, np.int8), 21, {}),
    "uint8-axis-output-f16": (np.uint8, (4, 6), np.arange(1, 7, dtype=F32) / 7, np.arange(6, dtype=np.uint8) * 20, 23, {"axis": 1, "output_dtype": F16}),
    "float8e4m3fn-tensor": (ml_dtypes.float8_e4m3fn, (3, 4), np.array(0.5, F32), None, 21, {}),
    "float8e5m2fnuz-tensor": (ml_dtypes.float8_e5m2fnuz, (3, 4), np.array(0.5, F32), None, 21, {}),
}


@pytest.mark.parametrize("name", list(IREE_FORMS))
def test_forms_left_to_iree_are_computed_exactly_by_iree(tmp_path, name):
    """The table behind the policy: IREE alone compiles each form the stage leaves to it and
    equals onnx.reference bit for bit (a new IREE that did not would fail here)."""
    from onnx.reference import ReferenceEvaluator

    x_dtype, shape, scale, zp, opset, attrs = IREE_FORMS[name]
    attrs = dict(attrs)
    out = attrs.pop("output_dtype", None)
    path = models.dequantize_only(tmp_path / "m.onnx", x_dtype, shape, scale, zp, opset=opset, output_dtype=out, **attrs)
    imported = stage.import_onnx(path)
    assert '"onnx.DequantizeLinear"' in stage.prepare(imported), "the stage must leave this form to IREE"
    vmfb = compile_text(tmp_path, imported, *stage.TARGETS["llvm-cpu"].flags)
    rng = np.random.default_rng(3)
    if np.dtype(x_dtype).kind in "iu":
        info = np.iinfo(x_dtype)
        x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(x_dtype)
    else:  # every float8 code but NaN
        x = rng.integers(0, 256, size=shape).astype(np.uint8).view(x_dtype)
        x[np.isnan(x.astype(np.float32))] = 0
    want = ReferenceEvaluator(path).run(None, {"x": x})[0]
    got = run_vmfb(vmfb, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_stage_adds_no_dispatch_to_qdq_models(tmp_path):
    """A QDQ CNN block and a QDQ MatMul model (quantize_static): IREE + dq runs no more dispatches
    than IREE alone (IREE's statistics), and equals onnx.reference. (IREE's integer route sums in
    int32 and scales once, which may flip a requantization's rounding in larger models; on these
    two it does not.)"""
    for name, path, x in (
        ("conv", models.qdq_conv_model(tmp_path / "conv.onnx", tmp_path), np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)),
        ("matmul", models.quantize_static_model(tmp_path / "mm.onnx", tmp_path, 32, 16), np.random.default_rng(0).standard_normal((3, 32)).astype(np.float32)),
    ):  # fmt: skip
        counts, imported = {}, stage.import_onnx(path)
        for route, text in (("iree", imported), ("iree+dq", stage.prepare(imported))):
            stats = tmp_path / f"{name}-{route}.json"
            # compile_onnx's flags (the target's and COMMON_FLAGS), so the iree+dq module is the one it makes
            vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags, *stage.COMMON_FLAGS,
                                "--iree-scheduling-dump-statistics-format=json", f"--iree-scheduling-dump-statistics-file={stats}")  # fmt: skip
            counts[route] = json.loads(stats.read_text())["stream-aggregate"]["execution"]["dispatch-count"]
        assert counts["iree+dq"] <= counts["iree"], (name, counts)
        want = reference(path, x)
        got = run_vmfb(vmfb, x)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


# --- dq's matmul kernel (CPU): every weight form it takes, against onnx.reference ----------------

I4, U4 = ml_dtypes.int4, ml_dtypes.uint4
KERNEL_FORMS = [(I4, 32, False), (I4, 32, True), (U4, 32, True), (U4, 64, False), (I4, 16, True),
                (I4, 128, False), (U4, 0, True), (I4, -1, False), (np.int8, 0, False), (np.uint8, 32, True)]  # fmt: skip


def compile_text(tmp_path, text: str, *flags: str) -> bytes:
    source, out = tmp_path / "stage.mlir", tmp_path / "m.vmfb"
    source.write_text(text)
    run = tool(stage.COMPILE, str(source), *flags, "-o", str(out))
    assert run.returncode == 0, run.stderr[-3000:]
    return out.read_bytes()


@pytest.mark.parametrize("lanes", [8, 16])
def test_kernel_takes_every_constant_weight_form(tmp_path, lanes):
    """One model, one MatMul per weight form (int4/uint4/int8/uint8; blocks 16-128, a scale per
    column, one scale; with and without zero points): each MatMul is one dispatch of dq's kernel,
    and every output matches onnx.reference within f32 rounding of the sums, for row counts that
    take the one-row body (1) and the several-rows body with full and partial row tiles. Both
    vector widths on any host: 8 lanes for N = 96 (no multiple of 64 columns), 16 for N = 64 in
    a module tagged AVX-512 by hand (on an AVX2 host LLVM splits the 16-lane vectors)."""
    from onnx.reference import ReferenceEvaluator

    k, n = 256, {8: 96, 16: 64}[lanes]
    path = models.matmul_forms(tmp_path / "m.onnx", k, n, KERNEL_FORMS)
    text = stage.import_onnx(path)
    if lanes == 16:
        end = "\n}) : () -> ()\n"  # the module's own closing line, in generic form
        assert end in text
        text = text.replace(end, "\n}) {dq.avx512bw} : () -> ()\n", 1)
    text = stage.prepare(text)
    assert text.count('"flow.dispatch"') == len(KERNEL_FORMS)
    assert text.count(f"_l{lanes}::") == len(KERNEL_FORMS)
    assert "onnx.MatMul" not in text
    ctx_vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags)
    ref = ReferenceEvaluator(path)
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, ctx_vmfb))
    for m in (1, 2, 3, 5, 16):
        x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
        got = ctx.modules.module["g"](x)
        got = [np.asarray(g) for g in (got if isinstance(got, (list, tuple)) else [got])]
        for i, (g, want) in enumerate(zip(got, ref.run(None, {"x": x}))):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()), err_msg=f"form {KERNEL_FORMS[i]}, M = {m}")


@pytest.mark.parametrize("route", ["f32", "digits"])
def test_kernel_bodies_are_exact_for_any_input(tmp_path, route):
    """The f32 kernel (the route of 8-bit weights, and of 4-bit ones without AVX-512 VNNI), one row
    and several, both vector widths; and (`digits`, a module tagged AVX-512 VNNI) the exact one-row
    route of the 4-bit weights, x's blocks as integer digits (it gave NaN for a block holding an
    infinity: fuzz case stage:1201:72); against x @ dequantize(w) in float64 of the f32 dequantized
    weights `(q - z) * s` (docs/semantics.md#matmul-of-dequantized-weights), for x a large common
    offset over weights mostly at their zero point (a column of zero weights is exactly 0), x
    holding +-inf (+-inf where the reference has it, NaN where it meets a zero weight) and x
    holding +-1e38 (finite wherever the sum of |x * w| is): within f32 rounding of a sum of K
    terms, (K + 2) * 2^-24 * sum |x * w|. The one-row body once summed x * (q + bias) and took
    the zero point off per block in f32, `y += s * (sum x * u - z' * sum x)`, which cancelled
    (issue 45: 0.35 for 0.066), gave NaN for inf - inf and overflowed at 1e38."""
    k, rng = 256, np.random.default_rng(45)
    weights = []
    for dtype, block, zero_point in [(I4, 32, True), (I4, 32, False), (U4, 64, True), (np.int8, 32, True), (np.uint8, 256, True)]:
        for n in (64, 96):  # 16 lanes, 8 lanes (N = 96 is no multiple of 64 columns)
            info = ml_dtypes.iinfo(dtype)
            z = rng.integers(info.min, info.max, (k // block, n), endpoint=True) if zero_point else np.zeros((k // block, n), np.int64)
            w = np.repeat(z, block, axis=0)
            off = (rng.random((k, n)) < 1 / 32) & (np.arange(n) % 2 == 0)  # odd columns: every weight at its zero point
            w = np.where(off, rng.integers(info.min, info.max, (k, n), endpoint=True), w)
            s = (rng.random((k // block, n)) * 0.1 + 0.01).astype(F32)
            weights.append((w.astype(dtype), s, z.astype(dtype) if zero_point else None, block))
    path = models.matmuls_of(tmp_path / "m.onnx", k, weights)
    text = stage.import_onnx(path)
    end = "\n}) : () -> ()\n"  # the module's own closing line: tagged AVX-512 without VNNI by hand
    assert end in text
    if route == "digits" and not host_has_avx512vnni():
        pytest.skip("the one-row route runs vpdpbusd (AVX-512 VNNI), which this host lacks")
    tags = "dq.avx512bw" + (", dq.avx512vnni" if route == "digits" else "")
    text = stage.prepare(text.replace(end, f"\n}}) {{{tags}}} : () -> ()\n", 1))
    if route == "f32":
        assert text.count("_l16::") == text.count("_l8::") == len(weights) // 2 and "digits" not in text
    else:  # the three MatMuls of 4-bit weights with N = 64 (N = 96 is no multiple of its 64 columns)
        assert len(set(re.findall(r"dq_matmul_digits_\w+", text))) == 3, sorted(set(re.findall(r"dq_matmul_digits_\w+", text)))
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags)))
    deq = [(w.astype(np.int64) - np.repeat(z.astype(np.int64) if z is not None else 0 * s.astype(np.int64), b, axis=0)).astype(F32)
           * np.repeat(s, b, axis=0) for w, s, z, b in weights]  # fmt: skip

    offset = (1e5 + rng.standard_normal(k)).astype(F32)
    cases = {"offset": np.stack([offset, offset * F32(0.5)])}
    for sign in (1, -1):
        x = rng.standard_normal((2, k)).astype(F32)
        x[0, 7], x[1, 130] = sign * np.inf, -sign * np.inf
        cases[f"{sign:+}inf"] = x
    big = rng.standard_normal((2, k)).astype(F32)
    big[:, [3, 100, 200]] = F32(1e38) * np.sign(big[:, [3, 100, 200]])
    cases["1e38"] = big
    for name, x2 in cases.items():
        for rows in (x2[:1], np.concatenate([x2, x2[:1]])):  # one row, several
            got = ctx.modules.module["g"](rows)
            for i, (g, d) in enumerate(zip(got, deq)):
                g = np.asarray(g)
                with np.errstate(invalid="ignore", over="ignore"):
                    want = rows.astype(np.float64) @ d.astype(np.float64)
                    size = np.abs(rows.astype(np.float64)) @ np.abs(d.astype(np.float64))
                finite = np.isfinite(size) & (size < np.finfo(F32).max)
                where = f"{name}, weights {i} ({weights[i][0].dtype}, block {weights[i][3]}), M = {len(rows)}"
                np.testing.assert_array_equal(g[~np.isfinite(want)], want[~np.isfinite(want)].astype(F32), err_msg=where)
                ok = finite & np.isfinite(want)
                assert not ok.any() if "inf" in name else ok.mean() > 0.8, where
                bound = (k + 2) * 2.0**-24 * size
                if route == "digits" and weights[i][0].dtype in (np.dtype(I4), np.dtype(U4)) and d.shape[1] == 64:  # the digits' MatMuls
                    # and X's rounding, 2^-30 max |x| sum |(w - z) s| per block of 32 (docs/semantics.md)
                    amax = np.abs(rows.astype(np.float64)).reshape(len(rows), k // 32, 32).max(-1)
                    bound = bound + 2.0**-30 * amax @ np.abs(d.astype(np.float64)).reshape(k // 32, 32, -1).sum(1)
                err = np.abs(g[ok] - want[ok])
                assert (err <= bound[ok]).all(), (where, float(err.max()))
                if name == "offset":
                    assert (g[:, 1::2] == 0).all(), where


def test_kernel_with_batch_dims(tmp_path):
    """A = [B, M, K] with both leading dims dynamic: collapsed to rows for the kernel and back."""
    k, n = 128, 32
    path = models.matmul_forms(tmp_path / "m.onnx", k, n, [(I4, 32, True)], batch=True)
    vmfb = stage.compile_onnx(path)
    x = np.random.default_rng(0).standard_normal((2, 3, k)).astype(np.float32)
    from onnx.reference import ReferenceEvaluator

    want = ReferenceEvaluator(path).run(None, {"x": x})[0]
    got = run_vmfb(vmfb, x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def test_kernel_dispatch_reads_packed_weights(tmp_path):
    """IREE's scheduling statistics: one dispatch per MatMul (two on a VNNI host: x's digits for
    the one-row route, then the kernel), no transient buffer (no f32 weights written anywhere),
    and the constants are the kernel's layout of the weights (two int4 per byte), the f32 scales
    and the zero points (a byte each), nothing more."""
    k, n, block = 512, 256, 32
    for zero_point in (False, True):
        path = models.int4_blocked_matmul(tmp_path / f"m{zero_point}.onnx", k, n, block, zero_point=zero_point)
        stats = tmp_path / "stats.json"
        vmfb = stage.compile_onnx(path, extra_args=["--iree-scheduling-dump-statistics-format=json",
                                                    f"--iree-scheduling-dump-statistics-file={stats}"])  # fmt: skip
        s = json.loads(stats.read_text())["stream-aggregate"]
        assert s["execution"]["dispatch-count"] == (2 if host_has_avx512vnni() else 1)
        assert s["execution"]["transient-memory-size"] == 0
        assert s["global"]["constant-size"] == k * n // 2 + (k // block) * n * 4 + ((k // block) * n if zero_point else 0)
        check(path, k, vmfb)


def test_matmul_the_kernel_does_not_take_is_fused_with_a_remark(tmp_path):
    """N = 48 is no multiple of the kernel's 32 columns: the MatMul becomes the fused
    contraction, and a remark says why."""
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 128, 48, 32)
    run = subprocess.run(["dequant-opt", "--allow-unregistered-dialect", "--torch-onnx-to-iree"],
                         input=stage.import_onnx(path), capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "remark: MatMul not given dq's CPU kernel (fused contraction instead): N = 48 is not a multiple of 32 columns" in run.stderr
    assert "flow.dispatch" not in run.stdout and "linalg.generic" in run.stdout
    check(path, 128)


# --- int8 activations (opt-in, approximate): against a numpy model of the same quantization -----

from dequant import qdq_conv_matmuls  # noqa: E402
from dequant.passes.target_features import cpu_tags, host_has_avx2, host_has_avx512bw, host_has_avx512vnni  # noqa: E402

needs_vnni = pytest.mark.skipif(not host_has_avx512vnni(), reason="the int8-activation kernel runs vpdpbusd (AVX-512 VNNI), which this host lacks")


def form_arrays(inits: dict, i: int, form: tuple, k: int, n: int) -> tuple:
    """(block, w [K, N], s [K / block, N], z [K / block, N]) of MatMul i of `models.matmul_forms`,
    of `form`, from the model's initializers (w and z as int64; a scale per column or one scale
    is one block of K; no zero point: z = 0)."""
    _, block, zero_point = form
    block = block if block > 0 else k
    s = np.broadcast_to(inits[f"s{i}"], (k // block, n))
    z = np.broadcast_to(inits[f"z{i}"].astype(np.int64), (k // block, n)) if zero_point else np.zeros((k // block, n), np.int64)
    return block, inits[f"w{i}"].astype(np.int64), s, z


def int8_activations_reference(x: np.ndarray, w: np.ndarray, s: np.ndarray, z: np.ndarray, block: int) -> np.ndarray:
    """y = x @ dequantize(w) with x quantized as docs/semantics.md#int8-activations states (from
    MLAS's CompInt8): per row and block of K, xs = amax / 127, xq = roundeven(x * (127 / amax))
    (0 where amax is 0), the sums of xq * (w - z) in integers, and y = sum over blocks, in order,
    of (s * xs) * float(sum), in f32. x [M, K] f32, w [K, N] integers, s and z [K / block, N]."""
    m, k = x.shape
    kb = k // block
    xb = x.reshape(m, kb, block)
    amax = np.abs(xb).max(axis=2)
    xs = amax / F32(127)
    inverse = np.where(amax != 0, F32(127) / np.where(amax != 0, amax, F32(1)), F32(0)).astype(F32)
    xq = np.rint(xb * inverse[:, :, None]).astype(np.int64)  # rint: ties to even
    sums = np.einsum("mcb,cbn->mcn", xq, (w.astype(np.int64) - np.repeat(z.astype(np.int64), block, axis=0)).reshape(kb, block, -1))
    y = np.zeros((m, w.shape[1]), F32)
    for c in range(kb):
        y = y + (s[c][None, :] * xs[:, c : c + 1]) * sums[:, c].astype(F32)
    return y


@needs_vnni
def test_int8_activations_every_weight_form(tmp_path):
    """With int8 activations, every weight form of the kernel (int4/uint4/int8/uint8; blocks 16 to
    128, a scale per column or one scale: then one block of K) is two dispatches (x quantized once,
    then the kernel) and agrees with the numpy model of the same quantization within f32 rounding
    of the block sums, for row counts that take full and partial row tiles. Against the exact
    product the error is that of quantizing x (max relative 2e-2 here)."""
    from onnx import numpy_helper

    k, n = 256, 64
    path = models.matmul_forms(tmp_path / "m.onnx", k, n, KERNEL_FORMS)
    text = stage.prepare(stage.import_onnx(path), int8_activations=True)
    assert text.count("dq_quantize_rows_k") and text.count('"flow.dispatch"') == 2 * len(KERNEL_FORMS)
    assert "onnx.MatMul" not in text
    vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags)
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    for m in (1, 2, 3, 5, 16):
        x = np.random.default_rng(m).standard_normal((m, k)).astype(F32)
        x[0, :32] = 0  # a block of zeros: amax 0, every xq 0
        x[-1, 32:64] = [127.0, -2.5, 0.5, 1.5] * 8  # amax 127: x * (127 / amax) = x, ties rounded to even
        got = [np.asarray(g) for g in ctx.modules.module["g"](x)]
        for i, form in enumerate(KERNEL_FORMS):
            block, w, s, z = form_arrays(inits, i, form, k, n)
            want = int8_activations_reference(x, w, s, z, block)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()), err_msg=f"form {KERNEL_FORMS[i]}, M = {m}")
            exact = x.astype(np.float64) @ ((w - np.repeat(z, block, axis=0)) * np.repeat(s, block, axis=0))
            assert np.abs(got[i] - exact).max() <= 2e-2 * np.abs(exact).max()


@needs_vnni
@pytest.mark.parametrize("symmetric", [True, False], ids=["int4", "uint4-zero-point"])
def test_llama_decoder_layer_with_int8_activations(tmp_path, symmetric):
    """The decoder layer of test_llama_decoder_layer_quantized_by_matmul_nbits with int8
    activations: every MatMul is dq's int8-activation kernel, and the output is within 2e-2 of
    the output's magnitude of onnxruntime's unoptimized run (the exact QDQ graph; onnxruntime's
    own MatMulNBits with int8 activations is off by about 1e-2 on this layer at full size)."""
    pytest.importorskip("onnx_ir", reason="onnxruntime's MatMulNBitsQuantizer needs the onnx-ir package")
    float_path = models.decoder_layer(tmp_path / "f.onnx", seq=3, hidden=128, heads=4, mlp=256)
    path = models.quantize_matmul_nbits(float_path, tmp_path / "q.onnx", symmetric=symmetric)
    text, summary = stage.run_stage(stage.import_onnx(path), int8_activations=True)
    assert (summary.left, summary.fused) == (0, 7), summary.line()
    assert text.count("dq_matmul_x8_") >= 7
    vmfb = stage.compile_onnx(path, int8_activations=True)
    x = np.random.default_rng(3).standard_normal((1, 3, 128)).astype(F32)
    got, want = run_vmfb(vmfb, x), ort_unoptimized(path, x)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 2e-2 * np.abs(want).max()


def test_int8_activations_without_vnni_or_off_the_cpu_are_refused(tmp_path):
    """A module tagged AVX-512 without VNNI (by hand: dq-target-features leaves it) is refused
    with the reason; int8 activations for a GPU target are a ValueError before anything runs."""
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 64, 64, 32)
    text = stage.import_onnx(path)
    end = "\n}) : () -> ()\n"
    assert end in text
    with pytest.raises(stage.IreeStageError, match="int8 activations .int8-activations=true. need AVX-512 VNNI, which the target lacks"):
        stage.run_stage(text.replace(end, "\n}) {dq.avx512bw} : () -> ()\n", 1), int8_activations=True)
    with pytest.raises(ValueError, match="int8 activations are for the llvm-cpu target, not cuda"):
        stage.compile_onnx(path, target="cuda", int8_activations=True)
    run = dequant_iree(str(path), "-o", str(tmp_path / "m.vmfb"), "--target", "cuda", "--int8-activations")
    one_error_line(run, "int8 activations are for the llvm-cpu target, not cuda")


# --- the exact one-row route (AVX-512 VNNI): against a numpy model of its integer arithmetic -----


def f32_rounded(q: Fraction) -> F32:
    """The rational q rounded once to f32 (to nearest, ties to even; subnormals; no overflow)."""
    if q == 0:
        return F32(0)
    e = max(q.numerator.bit_length() - q.denominator.bit_length(), -126)
    while abs(q) >= Fraction(2) ** e:  # 2^(e - 1) <= |q| < 2^e, or |q| < 2^-126
        e += 1
    while e > -125 and abs(q) < Fraction(2) ** (e - 1):
        e -= 1
    ulp = Fraction(2) ** (max(e, -125) - 24)
    return F32(float(round(q / ulp) * ulp))


def one_row_reference(x: np.ndarray, w: np.ndarray, s: np.ndarray, z: np.ndarray, block: int) -> np.ndarray:
    """y = x @ dequantize(w) for one row x [K] as docs/semantics.md#the-exact-one-row-route states:
    per block of x (32 values, or the longest multiple of 8 dividing the weights' block), 2^e the
    power of two just above its largest |x| (2^-126 at least), X = roundeven(x * 2^(30 - e)), Y =
    sum X * (w - z) exact then rounded once to f32, y = y + s * Y * 2^(e - 30) rounded once, blocks
    in order; a block holding a NaN or an infinity makes y NaN. w [K, N] integers, s and z [K /
    block, N]."""
    k, n = w.shape
    xb = next(d for d in (32, 24, 16, 8) if block % d == 0)
    y = [F32(0)] * n
    for b in range(k // xb):
        part = x[b * xb : (b + 1) * xb].astype(np.float64)
        if not np.isfinite(part).all():
            return np.full(n, np.nan, F32)
        e = max(int(np.frexp(np.abs(part).max())[1]), -126)  # max |x| < 2^e
        big = np.rint(np.ldexp(part, 30 - e)).astype(np.int64)
        rows = slice(b * xb, (b + 1) * xb)
        d = big @ (w[rows].astype(np.int64) - z[b * xb // block].astype(np.int64))
        for j in range(n):
            term = Fraction(float(s[b * xb // block, j])) * Fraction(float(f32_rounded(Fraction(int(d[j]))))) * Fraction(2) ** (e - 30)
            y[j] = f32_rounded(Fraction(float(y[j])) + term)
    return np.array(y, F32)


def one_row_inputs(rng, k: int) -> dict:
    """The one-row routes' x of K values by name: normal; wide (a block of zeros in every form's
    blocks of 8 and up, 2^50 from the largest to the smallest, subnormals, values below 2^-119);
    large (near 1e34)."""
    cases = {"normal": rng.standard_normal(k)}
    wide = rng.standard_normal(k)
    wide[:8] = 0
    wide[32:64] *= np.logspace(0, -15, 32)
    wide[64:96] = rng.standard_normal(32) * 1e-40
    wide[96:128] = rng.standard_normal(32) * 1e-37
    cases["wide"] = wide
    cases["large"] = rng.standard_normal(k) * 1e34
    return cases


ONE_ROW_FORMS = [(I4, 32, False), (I4, 32, True), (U4, 32, True), (U4, 64, False), (I4, 16, True), (I4, 128, False),
                 (U4, 0, True), (I4, -1, False), (I4, 8, False), (I4, 24, True), (np.int8, 32, False)]  # fmt: skip


@needs_vnni
def test_one_row_exact_integer_kernel(tmp_path):
    """A MatMul of one row (static) and 4-bit weights takes the exact one-row kernel (two
    dispatches: x's digits, then the kernel; 8-bit weights keep the f32 kernel), bit for bit the
    numpy model of its arithmetic, for every 4-bit weight form and x with a block of zeros, a
    block spanning 2^50 (its small values rounded to 2^-30 of its largest), subnormals, blocks
    below 2^-119 (x * 2^(30 - e) and 2^(e - 30) leave f32's normal range), and values near 1e34.
    Against the exact product the error is within 1e-6 of the output's magnitude; a NaN in x
    makes the row NaN, one infinity gives what f32 arithmetic gives (+-inf, NaN where its weight
    equals the zero point)."""
    from onnx import numpy_helper

    k, n = 384, 64
    path = models.matmul_forms(tmp_path / "m.onnx", k, n, ONE_ROW_FORMS, rows=1)
    text = stage.prepare(stage.import_onnx(path))
    four_bit = len(ONE_ROW_FORMS) - 1
    assert len(re.findall(r'"flow.dispatch"\([^)]*\) \{entry_points = \[@dq_matmul_digits_', text)) == four_bit
    assert len(re.findall(r'"flow.dispatch"\([^)]*\) \{entry_points = \[@dq_digits_rows_', text)) == four_bit
    assert text.count("entry_points = [@dq_matmul_i8_k384_n64_b32_l16") == 1
    vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags)
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))

    def run(x):
        return [np.asarray(g)[0] for g in ctx.modules.module["g"](x[None, :])]

    rng = np.random.default_rng(11)
    for name, x in one_row_inputs(rng, k).items():
        x = x.astype(F32)
        got = run(x)
        for i, form in enumerate(ONE_ROW_FORMS[:-1]):
            block, w, s, z = form_arrays(inits, i, form, k, n)
            np.testing.assert_array_equal(got[i], one_row_reference(x, w, s, z, block), err_msg=f"form {ONE_ROW_FORMS[i]}, x {name}")
            exact = x.astype(np.float64) @ ((w - np.repeat(z, block, axis=0)) * np.repeat(s.astype(np.float64), block, axis=0))
            assert np.abs(got[i] - exact).max() <= 1e-6 * np.abs(exact).max(), (ONE_ROW_FORMS[i], name)
    for bad in (np.nan, np.inf, -np.inf):  # NaN: the row NaN; one infinity: as f32 arithmetic gives
        x = rng.standard_normal(k).astype(F32)
        x[100] = bad
        for i, (form, g) in enumerate(zip(ONE_ROW_FORMS[:-1], run(x)[:-1])):
            block, w, s, z = form_arrays(inits, i, form, k, n)
            with np.errstate(invalid="ignore"):
                want = x.astype(np.float64) @ ((w - np.repeat(z, block, axis=0)) * np.repeat(s.astype(np.float64), block, axis=0))
            assert not np.isfinite(want).any(), (form, bad)
            np.testing.assert_array_equal(g, want.astype(F32), err_msg=f"form {form}, x[100] = {bad}")


@needs_vnni
def test_any_row_count_takes_the_one_row_route_at_one_row(tmp_path):
    """A MatMul whose row count is known only at run time, on a VNNI host: x's digits, then one
    kernel reading x too, which computes one row by the one-row route (bit for bit the numpy
    model) and more rows by the f32 kernel's several-rows body on the same weights (against
    onnx.reference within f32 rounding of the sums), for every 4-bit weight form."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    k, n = 384, 64
    forms = ONE_ROW_FORMS[:-1]
    path = models.matmul_forms(tmp_path / "m.onnx", k, n, forms)
    text = stage.prepare(stage.import_onnx(path))
    assert len(re.findall(r'"flow.dispatch"\([^)]*\) \{entry_points = \[@dq_matmul_digits_\w*_anyrows::', text)) == len(forms)
    ctx_vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags)
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    ref = ReferenceEvaluator(path)
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, ctx_vmfb))
    for m in (1, 2, 3, 5, 16):
        x = np.random.default_rng(m).standard_normal((m, k)).astype(F32)
        got = [np.asarray(g) for g in ctx.modules.module["g"](x)]
        for i, want in enumerate(ref.run(None, {"x": x})):
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()), err_msg=f"form {forms[i]}, M = {m}")
            if m == 1:
                block, w, s, z = form_arrays(inits, i, forms[i], k, n)
                np.testing.assert_array_equal(got[i][0], one_row_reference(x[0], w, s, z, block))


# --- QDQ MatMuls: dq's exact integer kernel (AVX-512 VNNI) ---------------------------------------

QDQ_FORMS = {
    "uint8-x-per-column": {},
    "int8-x-per-column": {"activations": np.int8},
    "uint8-x-per-tensor-zero-point": {"per_column": False, "weight_zero_point": True},
    "int8-x-per-column-zero-point": {"activations": np.int8, "weight_zero_point": True},
    "uint8-x-bias": {"bias": True},
    "uint8-x-requantize-int8": {"requantize": np.int8},
    "int8-x-zero-point-requantize-uint8": {"activations": np.int8, "weight_zero_point": True, "requantize": np.uint8},
    # y / sy = d / 256 exactly (sx = 2^-4, sw = 2^-3): ties wherever d = 128 mod 256
    "uint8-x-requantize-ties": {"requantize": np.int8, "weight_scale": 2.0**-3, "sy": 2.0},
    "uint8-x-bias-requantize-uint8": {"bias": True, "requantize": np.uint8},
    "uint8-x-qdq-bias-requantize-uint8": {"bias": True, "qdq_bias": True, "requantize": np.uint8},
}


NO_DISPATCH_ADDED = {"uint8-x-per-column", "uint8-x-requantize-int8", "int8-x-zero-point-requantize-uint8",
                     "uint8-x-bias-requantize-uint8", "uint8-x-qdq-bias-requantize-uint8"}  # fmt: skip


def qdq_integer_model(path: str, x: np.ndarray) -> np.ndarray:
    """The QDQ MatMul of models.qdq_matmul as integers, from the ONNX initializers: xq by
    QuantizeLinear's rule (x / sx rounded half to even, + zx, saturated), d = (xq - zx) @ (wq - zw)
    in int64, then y = f32(sx * sw) * f32(d) in f32, and the model's nodes after the MatMul (a
    bias Add, QuantizeLinear, ...) run by onnx.reference on that y."""
    init = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    sx, zx = init["sx"], init["zx"]
    info = np.iinfo(zx.dtype)
    xq = np.clip(np.rint(x / sx).astype(np.int64) + int(zx), info.min, info.max)
    wq = init["w"].astype(np.int64) - init.get("zw", np.zeros((), np.int8)).astype(np.int64)
    d = (xq - int(zx)) @ wq
    y = (sx * init["sw"]).astype(F32) * d.astype(F32)
    from onnx.reference import ReferenceEvaluator

    model = onnx.load(path)
    nodes = list(model.graph.node)
    at = [node.op_type for node in nodes].index("MatMul")
    if at == len(nodes) - 1:
        return y
    y_info = onnx.helper.make_tensor_value_info(nodes[at].output[0], onnx.TensorProto.FLOAT, list(y.shape))
    rest = onnx.helper.make_graph(nodes[at + 1 :], "after", [y_info], list(model.graph.output), list(model.graph.initializer))
    return ReferenceEvaluator(onnx.helper.make_model(rest, opset_imports=model.opset_import)).run(None, {nodes[at].output[0]: y})[0]


@needs_vnni
@pytest.mark.parametrize("name", list(QDQ_FORMS))
def test_qdq_matmul_integer_kernel(tmp_path, name):
    """A QDQ MatMul of 32 rows and 256 x 256 int8 weights takes dq's integer kernel reading xq
    (no dequantize of x left): equal, bit for bit, to the same integer arithmetic in numpy, and
    to onnx.reference within the bound of two f32 evaluations of one sum (docs/semantics.md#the-integer-route-of-qdq-matmuls):
    |y - y_ref| <= (K + 6) * 2^-24 * sum_k |x_k * w_k| (+ 2^-23 |y_ref| for the bias's rounding).
    A QuantizeLinear reading y is the kernel's epilogue (its result the dispatch's i8 tensor, no
    QuantizeLinear of y left): equal, bit for bit, to onnx.reference's QuantizeLinear of the
    numpy y, and within one step of onnx.reference's whole model (the bound above, far below sy,
    can move a code across at most one rounding boundary).

    On the forms of NO_DISPATCH_ADDED, IREE + dq runs no more dispatches than IREE alone (IREE's
    statistics): x's quantize and dq's kernel reading its bytes, where IREE fuses its integer
    contraction and the scaling into one dispatch after the same quantize; with a QuantizeLinear
    of y (after a bias Add, or as quantize_static writes a bias, after y's own QuantizeLinear and
    DequantizeLinear), which IREE fuses into that dispatch too and dq's kernel into its own. (One
    test, so the IREE + dq module is compiled once for both checks.)"""
    form = QDQ_FORMS[name]
    path = models.qdq_matmul(tmp_path / "m.onnx", 32, 256, 256, **form)
    imported = stage.import_onnx(path)
    staged = stage.prepare(imported)
    assert staged.count("entry_points = [@dq_matmul_qdq_") == 1
    assert "onnx.DequantizeLinear" not in staged and "linalg.generic" not in staged
    if "requantize" in form:
        dispatch = next(line for line in staged.splitlines() if "entry_points = [@dq_matmul_qdq_" in line)
        assert staged.count('"onnx.QuantizeLinear"') == 1 and dispatch.endswith("-> tensor<32x256xi8>"), dispatch  # x's only
    counts = {}
    for route, text in (("iree", imported), ("iree+dq", staged))[name not in NO_DISPATCH_ADDED :]:
        stats = tmp_path / f"{route}.json"
        # compile_onnx's flags (the target's and COMMON_FLAGS): the iree+dq module is the one it makes
        vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags, *stage.COMMON_FLAGS,
                            "--iree-scheduling-dump-statistics-format=json", f"--iree-scheduling-dump-statistics-file={stats}")  # fmt: skip
        counts[route] = json.loads(stats.read_text())["stream-aggregate"]["execution"]["dispatch-count"]
    if name in NO_DISPATCH_ADDED:
        assert counts["iree+dq"] <= counts["iree"], counts
    x = (np.random.default_rng(1).standard_normal((32, 256)) * 3).astype(F32)  # some codes saturate
    got = run_vmfb(vmfb, x)
    want_exact = qdq_integer_model(path, x)
    if got.dtype == np.int8 and want_exact.dtype == np.uint8:  # IREE's buffers are signless
        got = got.view(np.uint8)
    assert got.dtype == want_exact.dtype
    np.testing.assert_array_equal(got, want_exact)
    if "requantize" in form:
        steps = np.abs(got.astype(np.int64) - reference(path, x).astype(np.int64))
        assert steps.max() <= 1 and np.isin(got, np.iinfo(got.dtype).max).any(), steps.max()  # some saturate
        return
    init = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    info = np.iinfo(init["zx"].dtype)
    xf = (np.clip(np.rint(x / init["sx"]) + int(init["zx"]), info.min, info.max) - int(init["zx"])) * np.float64(init["sx"])
    wf = (init["w"].astype(np.float64) - init.get("zw", np.zeros((), np.int8)).astype(np.float64)) * init["sw"].astype(np.float64)
    want = reference(path, x)
    bound = (256 + 6) * 2.0**-24 * (np.abs(xf) @ np.abs(wf)) + 2.0**-23 * np.abs(want)
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound)


@needs_vnni
@pytest.mark.parametrize("rows, taken", [(8, True), (4, False)])
def test_qdq_matmul_of_few_rows_takes_the_integer_kernel_from_enough_work(tmp_path, rows, taken):
    """On a VNNI host the integer kernel pays from 2^19 multiply-adds a MatMul (MIN_INTEGER_MACS in
    passes/torch_onnx_to_dq_iree.py), not from 32 rows: 8 x 256 @ 256 x 256 takes it (equal, bit for
    bit, to the integer arithmetic in numpy), 4 rows stay IREE's integer contraction."""
    path = models.qdq_matmul(tmp_path / "m.onnx", rows, 256, 256)
    staged = stage.prepare(stage.import_onnx(path))
    assert staged.count("entry_points = [@dq_matmul_qdq_") == (1 if taken else 0)
    assert ("onnx.DequantizeLinear" in staged) is not taken
    x = (np.random.default_rng(1).standard_normal((rows, 256)) * 3).astype(F32)
    if taken:
        np.testing.assert_array_equal(run_vmfb(stage.compile_onnx(path), x), qdq_integer_model(path, x))


@needs_vnni
def test_qdq_matmul_whose_scale_product_overflows_keeps_the_float_route(tmp_path):
    """sx * sw (2^100 * 2^40) is no f32: the integer kernel, whose y is f32(sx * sw) * d, would
    give inf * 0 = NaN where the model gives 0 (x / sx rounds to the zero point everywhere); the
    MatMul keeps the float route and the output is the model's."""
    path = models.qdq_matmul(tmp_path / "m.onnx", 32, 256, 256, sx=2.0**100, weight_scale=2.0**40)
    staged = stage.prepare(stage.import_onnx(path))
    assert "entry_points = [@dq_matmul_qdq_" not in staged
    x = np.random.default_rng(1).standard_normal((32, 256)).astype(F32)
    got, want = run_vmfb(stage.compile_onnx(path), x), reference(path, x)
    assert not np.isnan(want).any()
    np.testing.assert_array_equal(got, want)


# --- the fused contraction (GPU pipelines), shown with IREE's own statistics ---------------------


@pytest.mark.parametrize("zero_point", [False, True])
def test_fused_int4_matmul_is_one_dispatch_reading_packed_weights(tmp_path, zero_point):
    """The GPU pipeline's fused contraction, compiled for the CPU (where it runs here): one
    dispatch, no transient buffer, and the constants are the packed weights (two int4 per byte)
    and the scales (and zero points, packed), nothing more."""
    k, n, block = 512, 256, 32
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", k, n, block, zero_point=zero_point)
    stats = tmp_path / "stats.json"
    text = stage.prepare(stage.import_onnx(path), "torch-onnx-to-iree-gpu")
    vmfb = compile_text(tmp_path, text, *stage.TARGETS["llvm-cpu"].flags, "--iree-scheduling-dump-statistics-format=json",
                        f"--iree-scheduling-dump-statistics-file={stats}")  # fmt: skip
    s = json.loads(stats.read_text())["stream-aggregate"]
    assert s["execution"]["dispatch-count"] == 1
    assert s["execution"]["transient-memory-size"] == 0
    packed = k * n // 2 + (k // block) * n * 4 + ((k // block) * n // 2 if zero_point else 0)
    assert s["global"]["constant-size"] == packed
    check(path, k, vmfb)


def test_fused_dispatch_reads_i4_and_writes_only_the_product(tmp_path):
    """The fused form's one executable takes the i4 weights and returns the [M, N] product."""
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 256, 128, 32)
    text = stage.prepare(stage.import_onnx(path), "torch-onnx-to-iree-gpu")
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


@pytest.mark.parametrize("target", ["cuda", "rocm", "vulkan-spirv"])
def test_gpu_targets_compile(tmp_path, target):
    """Compile only (no GPU here): an int4 blocked MatMul with zero points and a float8 one
    through the stage for each GPU backend IREE ships."""
    for name, path in (("int4", models.int4_blocked_matmul(tmp_path / "a.onnx", 256, 64, 32, zero_point=True)),
                       ("float8", models.float8_matmul(tmp_path / "b.onnx", 64, 32))):  # fmt: skip
        vmfb = stage.compile_onnx(path, target=target)
        assert len(vmfb) > 0, name


# --- the command line ---------------------------------------------------------------------------


def test_dequant_iree_command(tmp_path):
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 128, 32, 32)
    out = tmp_path / "m.vmfb"
    run = dequant_iree(path, "-o", str(out))
    assert run.returncode == 0, run.stderr
    check(path, 128, out.read_bytes())


def test_routes_follow_the_cpu_compiled_for_not_the_host(tmp_path):
    """`-- --iree-llvmcpu-target-cpu=haswell` (after the options, as the help says): the stage's
    kernels are the AVX2 ones (8 lanes, no vpdpbusd) whatever CPU runs the stage, and the module
    runs here with onnx.reference's numbers. On a VNNI host the stage once tagged the module with
    the host's features and iree-compile stopped ("LLVM ERROR: Do not know how to split the
    result of this operator!"); and argparse took no iree-compile flag after an option. A CPU
    with VNNI gets the one-row route; a CPU dq's table does not know gets AVX2 routes and a note."""
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 128, 64, 32)
    out = tmp_path / "m.vmfb"
    run = dequant_iree(path, "-o", str(out), "--", "--iree-llvmcpu-target-cpu=haswell")
    assert run.returncode == 0, run.stderr
    check(path, 128, out.read_bytes(), m=1)
    text = stage.import_onnx(path)
    for cpu, kernel in (("haswell", "dq_matmul_i4_k128_n64_b32_l8"), ("cascadelake", "dq_matmul_digits_i4_k128_n64_b32_l16_anyrows"),
                        ("skylake-avx512", "dq_matmul_i4_k128_n64_b32_l16"), ("no-such-cpu", "dq_matmul_i4_k128_n64_b32_l8")):  # fmt: skip
        out, summary = stage.run_stage(text, cpu=cpu)
        assert set(re.findall(r"@(dq_matmul_\w+)::", out)) == {kernel}, cpu
        assert ("CPU 'no-such-cpu' is not in dq's table" in summary.line()) == (cpu == "no-such-cpu"), summary.line()




def test_dequant_iree_bad_inputs_are_one_error_line(tmp_path):
    """Not a model, a text file, a missing file, a model the importer's checker refuses: one line
    each (the stage reads the model first, for its formats; then the importer's own words), never
    a traceback."""
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    one_error_line(dequant_iree(str(bad), "-o", str(tmp_path / "x.vmfb")), "cannot read", "as an ONNX model")
    one_error_line(dequant_iree(str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "x.vmfb")), "cannot open", "no such file")
    one_error_line(dequant_iree(str(tmp_path), "-o", str(tmp_path / "x.vmfb")), "cannot open", "not a file")
    import ml_dtypes

    path = models.blocked_matmul(tmp_path / "m.onnx", 64, 32, 16, ml_dtypes.int4)
    m = onnx.load(path)
    m.graph.initializer[0].raw_data = m.graph.initializer[0].raw_data[:-1]
    onnx.save(m, path)
    one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), "ValidationError", "raw_data size (1023 bytes) is too small")
    # a model the stage rewrites (MatMulNBits) whose external data lies outside its folder, or
    # has no location (the stage fuzzer's findings stage:53:1053 and stage:53:750)
    for where in ([("location", "sub/../../weights.bin")], [("offset", "0"), ("length", "64")]):
        path = iree_models.matmul_nbits(tmp_path / "nbits.onnx", 64, 32)
        m = onnx.load(path)
        init = m.graph.initializer[0]
        init.ClearField("raw_data")  # its bytes "outside": nothing for onnx.save to write
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for key, value in where:
            init.external_data.add(key=key, value=value)
        onnx.save(m, path)
        one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), "cannot read the external data", "nbits.onnx")
    # a QDQ Conv's weight DequantizeLinear whose axis is a graph, not an integer (the stage
    # fuzzer's stage:59:260): the stage leaves it, IREE's importer names it
    path = iree_models.qdq_conv_model(tmp_path / "conv.onnx", tmp_path)
    m = onnx.load(path)
    dq = next(n for n in m.graph.node if n.op_type == "DequantizeLinear" and any(a.name == "axis" for a in n.attribute))
    axis = next(a for a in dq.attribute if a.name == "axis")
    axis.type = onnx.AttributeProto.GRAPH
    onnx.save(m, path)
    one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), "axis", "DequantizeLinear")
    # an initializer of an element type onnx does not know, or UNDEFINED with no bytes (the stage
    # fuzzer's stage:71:65 and stage:71:721): the stage reads neither, the importer names it
    for data_type, words in ((2147483647, "data_type"), (onnx.TensorProto.UNDEFINED, "UNDEFINED")):
        m = onnx.load(iree_models.qdq_conv_model(tmp_path / "conv.onnx", tmp_path))
        init = next(t for t in m.graph.initializer if t.name == "x_zero_point")
        init.data_type = data_type
        if data_type == onnx.TensorProto.UNDEFINED:
            init.ClearField("int32_data")
        onnx.save(m, path)
        one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), words, init.name)


@pytest.mark.parametrize("dtype", ["FLOAT4E2M1", "INT2", "UINT2"])
def test_element_types_the_importer_does_not_know_are_one_line(tmp_path, dtype):
    import ml_dtypes

    np_type = {"FLOAT4E2M1": ml_dtypes.float4_e2m1fn, "INT2": ml_dtypes.int2, "UINT2": ml_dtypes.uint2}[dtype]
    path = iree_models.dequantize_only(tmp_path / "m.onnx", np_type, (4, 8), np.array(0.5, np.float32), opset=25)
    one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), f"({dtype})", "does not read")


def test_without_iree_an_install_hint(tmp_path):
    """`iree` not importable (a meta path finder refuses it): the hint, not "No module named"."""
    code = ("import sys, importlib.abc\n"
            "class No(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'iree' or name.startswith('iree.'): raise ModuleNotFoundError(f'No module named {name!r}')\n"
            "sys.meta_path.insert(0, No())\n"
            "from dequant import iree\n"
            f"sys.exit(iree.main([{str(tmp_path / 'm.onnx')!r}, '-o', {str(tmp_path / 'x.vmfb')!r}]))\n")  # fmt: skip
    (tmp_path / "m.onnx").write_bytes(b"")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    one_error_line(run, "pip install 'dequant[iree]'")


def test_summary_line_and_quiet(tmp_path):
    path = models.int4_blocked_matmul(tmp_path / "m.onnx", 64, 32, 32)
    run = dequant_iree(path, "--emit-mlir", "-o", str(tmp_path / "m.mlir"))
    assert run.returncode == 0 and run.stderr == "dequant-iree: dq stage: 1 of 1 DequantizeLinear to dq, 1 MatMul(s) fused\n", run.stderr
    run = dequant_iree(path, "-q", "--emit-mlir", "-o", str(tmp_path / "m.mlir"))
    assert run.returncode == 0 and run.stderr == ""


def test_a_model_without_dequantize_linear_says_so(tmp_path):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", 8])
    path = iree_models._save_graph([helper.make_node("Relu", ["x"], ["y"])], [], x,
                                   helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 8]), tmp_path / "m.onnx", 21)  # fmt: skip
    run = dequant_iree(path, "-o", str(tmp_path / "m.vmfb"))
    assert run.returncode == 0 and "no DequantizeLinear in the model" in run.stderr, run.stderr


@pytest.mark.parametrize("attrs, why", [({"axis": 5}, "axis 5 is out of the accepted range"),
                                        ({"axis": 1, "block_size": -1}, "block_size must be a positive integer"),
                                        ({"output_dtype": 999}, "output_dtype 999 is not an ONNX data type")])  # fmt: skip
def test_a_node_dq_leaves_is_named_in_the_summary_and_in_the_error(tmp_path, attrs, why):
    """Invalid attributes: the summary says why dq left the node (also under --emit-mlir, which
    exits 0), and when iree-compile then fails on it (axis 5) the error is followed by that
    remark."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.INT8, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [x], [y], [onnx.numpy_helper.from_array(np.array([0.5] * 8, np.float32), "s")])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]), path)  # not checked: the attributes are invalid
    run = dequant_iree(path, "--emit-mlir", "-o", str(tmp_path / "m.mlir"))
    assert run.returncode == 0 and "1 left to IREE: " + why in run.stderr, run.stderr
    if "axis" in why:  # IREE lowers the other two itself (it ignores the attribute)
        run = dequant_iree(path, "-q", "-o", str(tmp_path / "m.vmfb"))
        one_error_line(run, "iree-compile: ", "failed to legalize operation")
        assert "note: dq left this DequantizeLinear to IREE: " in run.stderr and why in run.stderr.split("error:", 2)[-1], run.stderr


# --- DequantizeLinear alone: types, granularities, opsets ----------------------------------------

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


# --- exactness: what the stage must not lose (issue 33) -------------------------------------------


def run_module(vmfb: bytes, *args: np.ndarray, function: str = "g") -> np.ndarray:
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    return np.asarray(ctx.modules.module[function](*args))


@pytest.mark.parametrize("case", ["uint8-per-tensor", "float8e4m3fn-per-axis", "int8-output-f16"])
def test_rounding_to_the_output_type_survives_a_cast(tmp_path, case):
    """DequantizeLinear(output_dtype=BFLOAT16) then Cast(FLOAT): the values are rounded to bf16
    as onnx.reference rounds them, bit for bit (IREE emulates bf16 in f32 and drops a truncf
    that is widened again in the same dispatch: dq-round-bf16). f16 is checked the same way."""
    import ml_dtypes

    rng = np.random.default_rng(5)
    if case == "uint8-per-tensor":
        x = rng.integers(0, 256, size=(3, 256)).astype(np.uint8)
        path = models.dequantize_cast(tmp_path / "m.onnx", np.uint8, x.shape, np.array(0.1234567, np.float32),
                                      np.array(3, np.uint8), output_dtype=ml_dtypes.bfloat16)  # fmt: skip
    elif case == "float8e4m3fn-per-axis":
        x = (rng.standard_normal((4, 64)) * 8).astype(ml_dtypes.float8_e4m3fn)
        path = models.dequantize_cast(tmp_path / "m.onnx", ml_dtypes.float8_e4m3fn, x.shape,
                                      (rng.random(64) + 0.37).astype(np.float32), output_dtype=ml_dtypes.bfloat16, axis=1)  # fmt: skip
    else:
        x = rng.integers(-128, 128, size=(3, 256)).astype(np.int8)
        path = models.dequantize_cast(tmp_path / "m.onnx", np.int8, x.shape, np.array(0.1234567, np.float32), output_dtype=np.float16)
    from onnx.reference import ReferenceEvaluator

    want = ReferenceEvaluator(path).run(None, {"x": x})[0]
    got = run_module(stage.compile_onnx(path), x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_int4_initializer_with_extra_raw_bytes_reads_the_leading_ones(tmp_path):
    """raw_data one byte longer than the dims need (the ONNX checker accepts it): the numbers of
    onnx.reference, which reads the leading bytes."""
    import ml_dtypes

    path = models.blocked_matmul(tmp_path / "m.onnx", 64, 32, 16, ml_dtypes.int4, extra_bytes=1)
    check(path, 64)


def _in_typed_fields(path) -> None:
    """Rewrite a model's initializers into the typed fields (`int32_data`: the 16-bit floats' bits,
    int4 values one per entry), as onnx.helper.make_tensor stores them unless told raw=True."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    m = onnx.load(path)
    for t in m.graph.initializer:
        a = numpy_helper.to_array(t)
        floats = t.data_type in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)
        vals = a.astype(np.float32) if floats else a.astype(np.int64)  # make_tensor rounds them to the type
        t.CopyFrom(helper.make_tensor(t.name, t.data_type, t.dims, vals.flatten().tolist()))
        assert not t.HasField("raw_data")
    onnx.save(m, path)


@pytest.mark.parametrize("scale_dtype", [ml_dtypes.bfloat16, np.float16])
def test_initializers_in_typed_fields(tmp_path, scale_dtype):
    """Int4 weights and 16-bit float scales stored in `int32_data`, not `raw_data` (valid ONNX:
    onnx.helper's default): IREE's importer stops on them ("Unhandled ONNX TensorProto data"), so
    the stage moves them to raw_data first; the numbers are onnx.reference's. Through --check,
    which says where onnxruntime has no kernel (DequantizeLinear-21 of bf16 scales)."""
    path = models.weights_matmul(tmp_path / "m.onnx", 64, 32, ml_dtypes.int4, block=32, zero_point=True, scale_dtype=scale_dtype, cast=True)
    _in_typed_fields(path)
    run = dequant_iree(str(path), "--check", "-q")
    assert run.returncode == 0, run.stderr
    m = re.search(r"^check: y\s+(\S+)\s+(\S+)\s+(\S+)$", run.stdout, re.M)
    assert m and float(m.group(1)) <= 1e-6, run.stdout
    assert ("n/a" in m.group(2) and "onnxruntime cannot run the model" in run.stdout) == (scale_dtype == ml_dtypes.bfloat16), run.stdout


def test_int4_initializer_with_missing_raw_bytes_is_left_with_a_reason(tmp_path):
    """A blob shorter than its dims need (the importer's checker refuses such a model, so the
    torch form is cut here): the node stays, with the reason, instead of IREE reading past it."""
    import ml_dtypes

    path = models.blocked_matmul(tmp_path / "m.onnx", 64, 32, 16, ml_dtypes.int4)
    text = stage.import_onnx(path)
    blob = re.search(r'w: "0x08000000([0-9A-F]+)"', text)
    cut = text[: blob.end(1) - 2] + text[blob.end(1) :]
    out, summary = stage.run_stage(cut)
    assert "\"onnx.DequantizeLinear\"" in out and summary.left == 1
    assert any("holds 1023 bytes, its dims [64, 32] need 1024" in r for r in summary.remarks), summary.remarks


@pytest.mark.parametrize("dtype, zero_point", [("int4", False), ("int4", True), ("int8", True)])
def test_partial_last_block(tmp_path, dtype, zero_point):
    """K = 33, block 16: two whole blocks and a tail of one row (IREE cannot tile the floordiv
    read of a partial block inside a contraction: the stage splits the tail off)."""
    import ml_dtypes

    dt = ml_dtypes.int4 if dtype == "int4" else np.int8
    path = models.blocked_matmul(tmp_path / "m.onnx", 33, 16, 16, dt, zero_point=zero_point)
    check(path, 33)


PARTIAL_BLOCKS = {
    "uint4-k200-block128": dict(k=200, n=64, dtype=ml_dtypes.uint4, block=128),
    "int8-k200-block128": dict(k=200, n=64, dtype=np.int8, block=128),
    "int4-gemm-transb-k200-block128": dict(k=200, n=64, dtype=ml_dtypes.int4, block=128, gemm=True),
    "int4-zero-point-k300-block128": dict(k=300, n=48, dtype=ml_dtypes.int4, block=128, zero_point=True),
    "uint8-gemm-transb-one-partial-block": dict(k=72, n=40, dtype=np.uint8, block=128, zero_point=True, gemm=True),
    "uint8-k200-block64-one-row": dict(k=200, n=100, dtype=np.uint8, block=64, rows=1),  # stage:4545:108
    # whole blocks along the axis int4 bytes pack: the read was `d floordiv 16` of the byte index
    # ("tile size 24 ... must divide or be divisible by the step 16"; stage:1201:22)
    "int4-gemm-transb-k96-block32-bf16-cast": dict(k=96, n=31, dtype=ml_dtypes.int4, block=32, zero_point=True, scale_dtype=ml_dtypes.bfloat16, cast=True, gemm=True),
    "int4-gemm-transb-k96-block32": dict(k=96, n=31, dtype=ml_dtypes.int4, block=32, gemm=True),
    # whole blocks of 48 (no power of two) read through a Cast: "tile size 32 ... must divide or be
    # divisible by the step 48" (stage:88:498)
    "uint8-k96-block48-f16-cast": dict(k=96, n=500, dtype=np.uint8, block=48, scale_dtype=np.float16, cast=True),
}


@pytest.mark.parametrize("name", list(PARTIAL_BLOCKS))
def test_partial_last_block_of_any_block_axis_and_form(tmp_path, name):
    """A partial last block longer than IREE's tiles (K = 200, block 128), on either axis (Gemm
    transB=1 blocks axis 1), 4- and 8-bit, the only block partial too; and whole int4 blocks along
    the axis the bytes pack (Gemm transB=1, K = 96, block 32): no `floordiv` read
    reaches IREE, which refused them ("tiling is not supported for the semi-affine indexing map:
    tile size 12 ... must divide or be divisible by the step 128") while the split-off tail was
    still a blocked dequantize."""
    c = PARTIAL_BLOCKS[name]
    path = models.weights_matmul(tmp_path / "m.onnx", **c)
    check(path, c["k"], m=c.get("rows") or 5)
    assert "floordiv" not in stage.prepare(stage.import_onnx(path))


# IREE's CPU codegen read these i4 tensors (zero points [2, 33] and [2, 500], weights [256, 31] of
# a dequantize alone, N-major [N, 33]) with masked `vector<Nxi4>` loads it cannot legalize, for
# every CPU: compiled for fixed CPUs, so the host does not decide what is tested.
ODD_I4_DIMS = {
    "int4-blocked-zero-point-n33-m8": (dict(k=64, n=33, dtype=ml_dtypes.int4, block=32, zero_point=True, rows=8), "haswell"),
    "int4-blocked-zero-point-n33-m8-avx512": (dict(k=64, n=33, dtype=ml_dtypes.int4, block=32, zero_point=True, rows=8), "skylake-avx512"),
    "int4-blocked-zero-point-n500-m8": (dict(k=64, n=500, dtype=ml_dtypes.int4, block=32, zero_point=True, rows=8), "haswell"),
    "int4-per-tensor-f16-scale-cast-n31": (dict(k=256, n=31, dtype=ml_dtypes.int4, block=-1, scale_dtype=np.float16, cast=True), "haswell"),
    "int4-per-column-k33-m1": (dict(k=33, n=40, dtype=ml_dtypes.int4, block=0, zero_point=True, rows=1), "haswell"),
    # N = 1 (the stage fuzzer's stage:61:309): IREE drops the unit dim and reads K = 200 values
    "int4-blocked-k200-n1-m1": (dict(k=200, n=1, dtype=ml_dtypes.int4, block=128, rows=1), "haswell"),
}


@pytest.mark.parametrize("name", list(ODD_I4_DIMS))
def test_int4_tensors_of_odd_dims_compile_for_every_cpu(tmp_path, name):
    """Int4 data whose last dim is no multiple of IREE's vectors keeps dq's in-place read of the
    bytes (dq-unpack-to-iree-cpu), where an i4 tensor made IREE refuse the model ("failed to
    legalize operation 'vector.maskedload'") for AVX2 and AVX-512 alike."""
    c, cpu = ODD_I4_DIMS[name]
    path = models.weights_matmul(tmp_path / "m.onnx", **c)
    vmfb = stage.compile_onnx(path, extra_args=[f"--iree-llvmcpu-target-cpu={cpu}"])
    if cpu == "haswell" or host_has_avx512bw():
        check(path, c["k"], vmfb, m=c.get("rows") or 3)


def test_dynamic_dim_checked_against_a_static_blocked_scale(tmp_path):
    """x [?, 32] int8 blocked along dim 1 with a scale [4, 2]: the run-time check that dim 0 is 4
    is an assertion IREE compiles; a mismatch is an error of the call, with dq's words."""
    path = iree_models.dequantize_only(tmp_path / "m.onnx", np.int8, ("N", 32), np.full((4, 2), 0.5, np.float32), axis=1, block_size=16)
    vmfb = stage.compile_onnx(path)
    x = np.random.default_rng(1).integers(-128, 128, size=(4, 32)).astype(np.int8)
    from onnx.reference import ReferenceEvaluator

    np.testing.assert_array_equal(run_module(vmfb, x), ReferenceEvaluator(path).run(None, {"x": x})[0])
    with pytest.raises(RuntimeError, match="dim 0 of the scale does not match output dim 0"):
        run_module(vmfb, x[:3])


def test_int4_weights_input_with_dynamic_k(tmp_path):
    path = models.weights_input_matmul(tmp_path / "m.onnx", 16, 16, 2)
    """int4 weights given as an input [K, 16] with K dynamic, scales [2, 16] blocked by 16: it
    compiles, with K checked by an assertion (IREE's runtime takes no int4 array from numpy, so
    the run is left to the int8 case above)."""
    assert "cf.assert" in stage.prepare(stage.import_onnx(path))
    assert stage.compile_onnx(path)[:64]


# --- whole models at small dims (bench/models.py runs them at full size) -------------------------


def ort_unoptimized(path: str, x: np.ndarray) -> np.ndarray:
    """onnxruntime with graph optimizations off: the QDQ graph as written (its DequantizeLinear
    is exact; its MatMul sums in another order than onnx.reference's numpy)."""
    return onnxruntime_reference.session(path).run(None, {"x": x})[0]


# Each route (a sequence of 3, one token, a run-time length) and each weight form, the dynamic
# layer with both; bench/models.py --quick (CI) runs this layer at one token (int4) against the
# exact QDQ graph, so the other static pairs add no route.
@pytest.mark.parametrize("symmetric, seq", [(True, 3), (False, 1), (True, None), (False, None)],
                         ids=["int4-seq3", "uint4-zero-point-seq1", "int4-seq-dynamic", "uint4-zero-point-seq-dynamic"])  # fmt: skip
def test_llama_decoder_layer_quantized_by_matmul_nbits(tmp_path, symmetric, seq):
    """A Llama-style decoder layer (RMSNorm, causal attention, SiLU MLP) at small dims, quantized
    by onnxruntime's MatMulNBitsQuantizer (QDQ, blocked 32): through the stage every MatMul reads
    its weights quantized (on a VNNI host, at one token or a sequence length known only at run
    time, by the exact one-row integer kernel) and the output agrees with onnxruntime's
    unoptimized run and with onnx.reference within f32 rounding (the dynamic layer at 1 and 4
    tokens, one compiled module)."""
    pytest.importorskip("onnx_ir", reason="onnxruntime's MatMulNBitsQuantizer needs the onnx-ir package")
    float_path = models.decoder_layer(tmp_path / "f.onnx", seq=seq, hidden=128, heads=4, mlp=256)
    path = models.quantize_matmul_nbits(float_path, tmp_path / "q.onnx", symmetric=symmetric)
    assert models.dequantize_linear_count(path) == 7
    summaries = []
    vmfb = stage.compile_onnx(path, report=summaries.append)
    assert (summaries[0].left, summaries[0].fused) == (0, 7), summaries[0].line()
    if seq in (1, None) and host_has_avx512vnni():
        kernels = re.findall(r"entry_points = \[@(dq_matmul_digits_\w+)::", stage.prepare(stage.import_onnx(path)))
        assert len(kernels) == 7 and all(name.endswith("_anyrows") == (seq is None) for name in kernels), kernels
    for rows in (seq,) if seq else (1, 4):
        x = np.random.default_rng(3).standard_normal((1, rows, 128)).astype(np.float32)
        got = run_vmfb(vmfb, x)
        for want in (ort_unoptimized(path, x), reference(path, x)):
            assert got.shape == want.shape
            assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("name", ["resnet", "transformer"])
def test_qdq_whole_models_routes_dispatches_and_numbers(tmp_path, name):
    """A small QDQ CNN and a transformer block (quantize_static; per-tensor int8 activations, and
    per-channel uint8: the QDQ MobileNet of test_formats_qoperator.py's per-layer test, which
    makes these checks on it too), the stage as compile_onnx runs it for llvm-cpu. The CNN's QDQ
    convolutions of output channels a multiple of the column step of dq's int8 kernel on this
    host (64 with VNNI, 32 with AVX2) reach it as QDQ MatMuls, one dispatch each
    (dequant.qdq_conv_matmuls: every one of the ResNet-10's 12), the others IREE in float
    (dequant.qdq_convs), and the output is no further from the QDQ graph as written than
    onnxruntime's integer kernels' (its optimized session, made exact on AVX2 hosts too by
    onnxruntime_reference; IREE alone is compiled for the
    transformer only, whose dispatch count it bounds). The
    transformer's (32 tokens, hidden 256) feed MatMuls large enough for dq to take: one dispatch
    of dq's matmul kernel per MatMul. IREE fused the quantized activation and the output's bias
    and requantization into its integer contraction; dq's kernel dispatch fuses neither, so each
    kernel adds at most two dispatches. Every route agrees with the QDQ graph as written within a
    requantization step."""
    build = {"resnet": lambda p: models.resnet(p, 64, 10, blocks=1),
             "transformer": lambda p: models.transformer_block(p, 32, 256, 2, 512)}[name]  # fmt: skip
    shape = {"transformer": (1, 32, 256)}.get(name, (1, 3, 64, 64))
    quant = dict(per_channel=False, activations="int8") if name == "resnet" else {}
    path = models.quantize_static_file(build(tmp_path / "f.onnx"), tmp_path / "q.onnx", shape, **quant)
    outputs, counts = {}, {}
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu"))
    kernels = staged.count("entry_points = [@dq_matmul")
    convs = qdq_conv_matmuls.rewrite(onnx.load(path), cpu_tags("host")[0])[1]
    assert convs == (12 if name == "resnet" and host_has_avx2() else convs)
    assert kernels == (6 if name == "transformer" else convs)  # q, k, v, output and the two FFN weights
    assert "onnx.Clip" in staged  # the QDQ pairs in f32 (the transformer's: dequant.qdq_convs.has_pairs)
    routes = (("iree", stage.import_onnx(path)),) if name == "transformer" else ()
    for route, text in (*routes, ("iree+dq", staged)):
        stats = tmp_path / f"{route}.json"
        flags = stage.compile_flags(text) if route == "iree+dq" else (*stage.TARGETS["llvm-cpu"].flags, *stage.COMMON_FLAGS)
        vmfb = compile_text(tmp_path, text, *flags, "--iree-scheduling-dump-statistics-format=json", f"--iree-scheduling-dump-statistics-file={stats}")
        counts[route] = json.loads(stats.read_text())["stream-aggregate"]["execution"]["dispatch-count"]
        x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
        outputs[route] = run_vmfb(vmfb, x)
    if name == "transformer":
        assert counts["iree+dq"] <= counts["iree"] + 2 * kernels, counts
    want = ort_unoptimized(path, x)
    err = {route: float(np.abs(y - want).max() / np.abs(want).max()) for route, y in outputs.items()}
    print(name, counts, err)  # -s shows them
    assert all(e <= 0.1 for e in err.values()), err
    if name != "transformer":
        fused = onnxruntime_reference.session(path, optimized=True).run(None, {"x": x})[0]
        assert err["iree+dq"] <= max(float(np.abs(fused - want).max() / np.abs(want).max()), 1e-6), err
