"""ONNX's Softmax of f32 through dq's float softmax kernel (passes/kernels/softmax.py
FloatSoftmaxKernel, by torch-onnx-dq-softmax-iree-cpu on modules for x86 CPUs with AVX2).

The kernel's arithmetic as docs/semantics.md#softmax-of-f32 states it is written here in numpy
(`exp_model`, `softmax_model`; each FMA rounded once, by rounding the exact f64 sum to odd before
f32), and checked two ways: the exp's error against float64's exp over a dense sample of [-104,
0] (within 0.6 ulp, 0.75 where exp is subnormal), and the compiled kernel's output against the
model bit for bit, for AVX2 (8 lanes) and AVX-512 (16). Against a float64 softmax the kernel is
no further off than IREE's own softmax of the same model; rows with NaN and infinities give
what onnx.reference gives.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from dequant import iree as stage  # noqa: E402
from dequant.passes.kernels.softmax import MOST_LENGTH  # noqa: E402
from dequant.passes.target_features import host_has_avx2, host_has_avx512bw  # noqa: E402

F32, F64 = np.float32, np.float64
LANES = {"haswell": 8, "skylake-avx512": 16}
CPUS = {
    "haswell": pytest.mark.skipif(not host_has_avx2(), reason="the module is for an AVX2 CPU, which this host is not"),
    "skylake-avx512": pytest.mark.skipif(not host_has_avx512bw(), reason="the module's 16-lane kernel needs AVX-512, which this host lacks"),
}
AVX2 = pytest.mark.skipif(not host_has_avx2(), reason="the module is for an AVX2 CPU, which this host is not")


def fma(a, b, c) -> np.ndarray:
    """f32(a * b + c) rounded once, for f32 arrays: a * b is exact in f64, the f64 sum is rounded to
    odd (the f64 neighbour with an odd last bit where the sum is inexact, by TwoSum's error), and
    53 >= 24 + 2 bits make its rounding to f32 the exact value's."""
    p, c = np.asarray(a, F64) * np.asarray(b, F64), np.asarray(c, F64)
    s = p + c
    back = s - p
    err = (p - (s - back)) + (c - back)
    s = np.array(s, F64, ndmin=1)
    err = np.broadcast_to(err, s.shape)
    move = (err != 0) & ((s.view(np.int64) & 1) == 0)
    s[move] = np.nextafter(s[move], np.where(err[move] > 0, np.inf, -np.inf))
    return s.astype(F32)


def exp_model(d: np.ndarray) -> np.ndarray:
    """exp(d) for f32 d <= 0 as the kernel computes it (docs/semantics.md#softmax-of-f32)."""
    d = np.asarray(d, F32)
    x = np.where(np.isnan(d), F32(-104), np.maximum(d, F32(-104)))
    t = fma(x, F32(8 / np.log(2)), F32(1.5 * 2**23))
    kf = t - F32(1.5 * 2**23)
    k = kf.astype(np.int32)
    c1 = F32(np.round(np.log(2) / 8 * 2**15) / 2**15)  # ln(2) / 8 to 12 bits
    r = fma(kf, -F32(np.log(2) / 8 - F64(c1)), fma(kf, -c1, x))
    q = F32(1 / 120)
    for term in (1 / 24, 1 / 6, 1 / 2):
        q = fma(q, r, F32(term))
    p = fma(r * r, q, r)
    table = 2.0 ** (np.arange(8) / 8)
    hi, lo = table.astype(F32), (table - table.astype(F32)).astype(F32)
    e = fma(hi[k & 7], F32(1), fma(hi[k & 7], p, lo[k & 7]))  # an f32 addition
    e = (e * (2.0 ** ((k >> 3) + 64)).astype(F32)) * F32(2.0**-64)
    return np.where(np.isnan(d), d, e)


def flushed(v: np.ndarray) -> np.ndarray:
    """v with its subnormals as 0: IREE's workers run with subnormal results flushed to zero."""
    return np.where(np.abs(v) < 2.0**-126, F32(0), v)


def softmax_model(x: np.ndarray, lanes: int) -> np.ndarray:
    """The kernel's softmax over the last axis, as it runs in IREE's workers (subnormal results
    flushed to 0): e = exp_model(x - max), the f32 sum in `lanes` lanes (lane j the elements j, j
    + lanes, ... in order), the lanes by halves (the first half plus the second, and again, as
    IREE lowers the reduction), then the elements past the last whole step in order; e / s."""
    rows = x.reshape(-1, x.shape[-1])
    e = flushed(exp_model(rows - rows.max(axis=1, keepdims=True)).reshape(rows.shape))
    whole = e.shape[1] - e.shape[1] % lanes
    acc = np.zeros((e.shape[0], lanes), F32)
    for k in range(0, whole, lanes):
        acc = acc + e[:, k : k + lanes]
    s = np.zeros(e.shape[0], F32)
    while acc.shape[1] > 1:  # the lanes by halves
        acc = acc[:, : acc.shape[1] // 2] + acc[:, acc.shape[1] // 2 :]
    s = acc[:, 0]
    for i in range(whole, e.shape[1]):
        s = s + e[:, i]
    return flushed(e / s[:, None]).reshape(x.shape)


def ulps_exp(e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """|e - exp(d)| in ulps of f32 at exp(d) (the subnormals' spacing below them)."""
    want = np.exp(d.astype(F64))
    return np.abs(e.astype(F64) - want) / np.spacing(want.astype(F32)).astype(F64)


def test_exp_model_within_its_bound():
    """The exp's arithmetic (numpy) within 0.6 ulp of exp where exp(d) is a normal f32 and 0.75
    ulp where it is subnormal (d below about -87.3: rounded a second time), over every 61st f32
    of [-104, 0] (18 million values, each binade sampled alike); 0 and -0 to exactly 1, below
    -104 to 0 (as f32's nearest), NaN to NaN."""
    bits = np.arange(np.array(-0.0, F32).view(np.uint32), np.array(-104.0, F32).view(np.uint32) + 1, 61, dtype=np.uint32)
    for d in np.array_split(bits.view(F32), 16):
        off, normal = ulps_exp(exp_model(d), d), np.exp(d.astype(F64)) >= 2.0**-126
        assert off[normal].max(initial=0) <= 0.6 and off[~normal].max(initial=0) <= 0.75, (off[normal].max(initial=0), off[~normal].max(initial=0))
    special = np.array([0.0, -0.0, -104.0, -104.5, -1e30, -np.inf], F32)
    np.testing.assert_array_equal(exp_model(special), np.array([1, 1, 0, 0, 0, 0], F32))
    assert np.isnan(exp_model(np.array([np.nan], F32))).all()


def model_file(path, shape, *, axis=None, opset=21, element=TensorProto.FLOAT) -> str:
    """x -> Softmax (`axis`, or the opset's default) -> y."""
    node = helper.make_node("Softmax", ["x"], ["y"], **({} if axis is None else {"axis": axis}))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", element, list(shape))], [helper.make_tensor_value_info("y", element, list(shape))])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return str(path)


def staged(path, cpu: str) -> str:
    return stage.run_stage(stage.import_onnx(path, "llvm-cpu", cpu), cpu=cpu)[0]


def kernels(text: str) -> list:
    return re.findall(r"entry_points = \[@(dq_softmax_f32_\w+)::", text)


def function(tmp_path, text: str, cpu: str, name: str):
    """The module's "g", compiled for `cpu` and run by IREE's runtime."""
    import iree.runtime as rt
    from test_iree import compile_text

    flags = stage.compile_flags(text, extra_args=[f"--iree-llvmcpu-target-cpu={cpu}"])
    (tmp_path / name).mkdir()
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, compile_text(tmp_path / name, text, *flags)))
    return lambda x: np.asarray(ctx.modules.module["g"](x))


@needs_iree
@pytest.mark.parametrize("cpu", [pytest.param(c, marks=m) for c, m in CPUS.items()])
@pytest.mark.parametrize("shape", [(4, 128, 128), (5, 77), (3, 5), (40,)], ids=["whole-steps", "tail", "tail-alone", "one-row"])
def test_kernel_is_its_arithmetic(tmp_path, cpu, shape):
    """One dispatch of the kernel and no Softmax left to IREE; its output the numpy model's bit for
    bit, over inputs of spreads 1 to 80 (exponentials from 1 down to subnormals and 0)."""
    path = model_file(tmp_path / "m.onnx", shape)
    text = staged(path, cpu)
    assert kernels(text) == [f"dq_softmax_f32_l{shape[-1]}_v{LANES[cpu]}_w{min(8, int(np.prod(shape[:-1])))}"] and "onnx.Softmax" not in text
    f = function(tmp_path, text, cpu, "dq")
    for seed, spread in enumerate((1.0, 4.0, 20.0, 80.0)):
        x = (np.random.default_rng(seed).standard_normal(shape) * spread).astype(F32)
        np.testing.assert_array_equal(f(x), softmax_model(x, LANES[cpu]), err_msg=f"spread {spread}")


def ulps(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - softmax(x)| (float64's, over the last axis) in ulps of the f32 result, where it is at
    least 2^-100."""
    x64 = x.astype(F64)
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    want = e / e.sum(axis=-1, keepdims=True)
    seen = want >= 2.0**-100
    return np.abs(y[seen] - want[seen]) / np.spacing(want[seen].astype(F32))


@needs_iree
@AVX2
def test_no_less_exact_than_iree(tmp_path):
    """An attention's scores, [4, 128, 128]: against float64's softmax, the mean error in ulps no
    more than IREE's own softmax's (its vector code: math.exp expanded in f32) and the largest
    within an ulp of its largest (the two sum in different orders; the error of x - max in f32,
    the same in both, dominates at wide spreads)."""
    path = model_file(tmp_path / "m.onnx", (4, 128, 128))
    ours, theirs = function(tmp_path, staged(path, "haswell"), "haswell", "dq"), function(tmp_path, stage.import_onnx(path, "llvm-cpu", "haswell"), "haswell", "iree")
    for seed, spread in enumerate((1.0, 4.0, 20.0)):
        x = (np.random.default_rng(seed).standard_normal((4, 128, 128)) * spread).astype(F32)
        mine, iree = ulps(ours(x), x), ulps(theirs(x), x)
        assert mine.mean() <= iree.mean() and mine.max() <= iree.max() + 1, (spread, mine.mean(), iree.mean(), mine.max(), iree.max())


@needs_iree
@AVX2
def test_nan_and_infinities_as_onnx_reference(tmp_path):
    """A NaN or +inf in a row, or a row of -inf only, makes the row NaN; -inf elements of an
    otherwise finite row give 0; as onnx.reference (x - max, exp, sum, division) does. Rows of 21:
    the special values in whole steps and in the tail."""
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(3).standard_normal((7, 21)).astype(F32)
    x[0, 2] = np.nan
    x[1, 19] = np.nan
    x[2, 5] = np.inf
    x[3, [0, 9, 20]] = -np.inf
    x[4, :] = -np.inf
    x[5, :] = 0.0
    x[6, 20] = np.inf
    path = model_file(tmp_path / "m.onnx", x.shape)
    got, want = function(tmp_path, staged(path, "haswell"), "haswell", "dq")(x), ReferenceEvaluator(path).run(None, {"x": x})[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[[0, 1, 2, 4, 6]]).all() and not np.isnan(got[[3, 5]]).any()
    np.testing.assert_allclose(got[[3, 5]], want[[3, 5]], rtol=1e-6, atol=0)
    assert (got[3, [0, 9, 20]] == 0).all() and (got[5] == F32(1 / 21)).all()


@needs_iree
@AVX2
def test_rows_known_at_run_time(tmp_path):
    """Rows of 33 values, their count a run-time dim: one row, fewer rows than the 8 workgroups,
    and more (the last workgroup's share shorter): the model's output bit for bit."""
    path = model_file(tmp_path / "m.onnx", ["n", 33])
    f = function(tmp_path, staged(path, "haswell"), "haswell", "dq")
    for n in (1, 5, 19):
        x = np.random.default_rng(n).standard_normal((n, 33)).astype(F32) * 3
        np.testing.assert_array_equal(f(x), softmax_model(x, 8))


@pytest.mark.parametrize("case, shape, axis, opset, element", [
    ("last-axis-explicit", (2, 3, 20), 2, 21, TensorProto.FLOAT),
    ("opset-11-2d-default", (4, 20), None, 11, TensorProto.FLOAT),  # axis 1: the last
    ("first-axis", (2, 20), 0, 21, TensorProto.FLOAT),
    ("opset-11-3d-default", (2, 3, 20), None, 11, TensorProto.FLOAT),  # rows of 3 x 20: not the last axis's
    ("f16", (2, 20), None, 21, TensorProto.FLOAT16),
    ("longest", (2, MOST_LENGTH), None, 21, TensorProto.FLOAT),
    ("too-long", (2, MOST_LENGTH + 1), None, 21, TensorProto.FLOAT),
])  # fmt: skip
def test_which_softmaxes_the_kernel_takes(tmp_path, case, shape, axis, opset, element):
    """Over the last axis (as the opset's default or given), f32 rows of up to MOST_LENGTH values;
    IREE keeps the others, and every Softmax of a module for a CPU without AVX2."""
    path = model_file(tmp_path / "m.onnx", shape, axis=axis, opset=opset, element=element)
    taken = case in ("last-axis-explicit", "opset-11-2d-default", "longest")
    text = staged(path, "haswell")
    assert (len(kernels(text)), "onnx.Softmax" in text) == ((1, False) if taken else (0, True))
    assert not kernels(staged(path, "x86-64"))
