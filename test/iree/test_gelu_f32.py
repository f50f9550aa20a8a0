"""ONNX's Gelu of f32 (and the bias Add before it) through dq's Gelu kernel (passes/kernels/gelu.py,
by torch-onnx-dq-gelu-iree-cpu on modules for x86 CPUs with AVX2).

The kernel's arithmetic as docs/semantics.md#gelu-of-f32 states it is written here in numpy
(`erf_model`, `gelu_model`; each FMA rounded once, test_softmax_f32.fma), and checked two ways:
erf's error against Python's math.erf over a dense sample of [0, 4.5] and of tiny values (within
1.6 ulp), and the compiled kernel's output against the model bit for bit, for AVX2 (8 lanes) and
AVX-512 (16). Against a float64 Gelu of the same inputs the kernel is no further off than IREE's
own Gelu; NaN and infinities give what onnx.reference gives.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from test_softmax_f32 import AVX2, CPUS, LANES, fma, function, staged  # noqa: E402

from dequant import iree as stage  # noqa: E402
from dequant.passes.kernels.gelu import ERF_COEFFICIENTS  # noqa: E402

F32, F64 = np.float32, np.float64
ERF = np.frompyfunc(math.erf, 1, 1)


def erf_model(u: np.ndarray) -> np.ndarray:
    """erf(u) as the kernel computes it: a = min(|u|, 4), interval j = min(trunc(2 a), 7), t = a -
    (0.5 j + 0.25), q by Horner's FMAs over ERF_COEFFICIENTS[j], a q on interval 0 and q on the
    others, at most 1, u's sign; NaN stays."""
    u = np.asarray(u, F32)
    a = np.where(np.isnan(u), F32(4), np.minimum(np.abs(u), F32(4)))  # x86's vminps: 4 for NaN
    j = np.minimum((a * F32(2)).astype(np.int32), 7)
    t = a - (j.astype(F32) * F32(0.5) + F32(0.25))
    table = np.array(ERF_COEFFICIENTS, F32)
    q = table[j, -1]
    for i in range(table.shape[1] - 2, -1, -1):
        q = fma(q, t, table[j, i])
    e = np.minimum(np.where(a < F32(0.5), a * q, q), F32(1))
    return np.where(np.isnan(u), u, np.copysign(e, u))


def gelu_model(x: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """v = x + b; v ((erf_model(v / f32(sqrt 2)) + 1) 0.5), subnormal results as 0 (IREE's
    workers flush them)."""
    v = x if b is None else (x + b).astype(F32)
    y = v * ((erf_model(v / F32(math.sqrt(2))) + F32(1)) * F32(0.5))
    return np.where(np.abs(y) < 2.0**-126, F32(0) * y, y)


def test_erf_model_within_its_bound():
    """The erf's arithmetic (numpy) within 1.6 ulp of math.erf over every 509th f32 of [0, 4.5] and
    every 4099th of [2^-126, 2^-10] (each binade sampled alike), the negatives its mirror; erf(0) =
    0, erf(-0) = -0, erf(+-inf) = +-1, NaN to NaN."""
    top, low = np.array(4.5, F32).view(np.uint32), np.array(2.0**-10, F32).view(np.uint32)
    u = np.concatenate([np.arange(np.array(2.0**-10, F32).view(np.uint32), top, 509, dtype=np.uint32),
                        np.arange(np.array(2.0**-126, F32).view(np.uint32), low, 4099, dtype=np.uint32)]).view(F32)  # fmt: skip
    want = ERF(u.astype(F64)).astype(F64)
    off = np.abs(erf_model(u).astype(F64) - want) / np.spacing(want.astype(F32)).astype(F64)
    assert off.max() <= 1.6, (off.max(), u[np.argmax(off)])
    np.testing.assert_array_equal(erf_model(-u), -erf_model(u))
    special = erf_model(np.array([0.0, -0.0, np.inf, -np.inf], F32))
    np.testing.assert_array_equal(special, np.array([0.0, -0.0, 1.0, -1.0], F32))
    assert np.signbit(special[1]) and np.isnan(erf_model(np.array([np.nan], F32))).all()


def model_file(path, shape, *, bias=None, approximate=None, element=TensorProto.FLOAT, opset=20) -> str:
    """x (-> Add b) -> Gelu -> y; b an initializer."""
    nodes, inits, at = [], [], "x"
    if bias is not None:
        nodes.append(helper.make_node("Add", ["x", "b"], ["v"]))
        inits.append(numpy_helper.from_array(bias, "b"))
        at = "v"
    nodes.append(helper.make_node("Gelu", [at], ["y"], **({} if approximate is None else {"approximate": approximate})))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", element, list(shape))], [helper.make_tensor_value_info("y", element, list(shape))], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return str(path)


def kernels(text: str) -> list:
    return re.findall(r"entry_points = \[@(dq_gelu_f32\w+)::", text)


def inputs(shape, seed: int) -> list:
    """Normal values of spreads 1, 3 and 10 (erf's every interval, both signs, its saturation)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * s).astype(F32) for s in (1.0, 3.0, 10.0)]


@needs_iree
@pytest.mark.parametrize("cpu", [pytest.param(c, marks=m) for c, m in CPUS.items()])
@pytest.mark.parametrize("shape, bias", [((128, 1024), None), ((5, 77), None), ((2, 3, 40), [40]), ((40,), None), ((6, 24), [1, 24])],
                         ids=["whole-steps", "tail", "bias", "one-row", "bias-1xN"])  # fmt: skip
def test_kernel_is_its_arithmetic(tmp_path, cpu, shape, bias):
    """One dispatch of the kernel, no Gelu (nor the bias Add) left to IREE; its output the numpy
    model's bit for bit."""
    b = None if bias is None else (np.random.default_rng(9).standard_normal(bias) * 0.5).astype(F32)
    path = model_file(tmp_path / "m.onnx", shape, bias=b)
    text = staged(path, cpu)
    rows = min(8, int(np.prod(shape[:-1])))
    assert kernels(text) == [f"dq_gelu_f32{'_bias' if b is not None else ''}_n{shape[-1]}_v{LANES[cpu]}_w{rows}"]
    assert "onnx.Gelu" not in text and "onnx.Add" not in text
    f = function(tmp_path, text, cpu, "dq")
    for x in inputs(shape, 1):
        np.testing.assert_array_equal(f(x), gelu_model(x, None if b is None else b.reshape(-1)))


def ulps(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|y - Gelu(x)| (float64's, of the f32 x) in ulps of the f32 result, where |Gelu(x)| >= 2^-100."""
    x64 = x.astype(F64)
    want = 0.5 * x64 * (1 + ERF(x64 / math.sqrt(2)).astype(F64))
    seen = np.abs(want) >= 2.0**-100
    return np.abs(y[seen] - want[seen]) / np.spacing(np.abs(want[seen]).astype(F32))


@needs_iree
@AVX2
def test_no_less_exact_than_iree(tmp_path):
    """[128, 1024] (a BERT-style FFN's rows) of spreads 1 to 10: against float64's Gelu, the largest
    and the mean error in ulps no more than IREE's own Gelu's (its math.erf expansion)."""
    path = model_file(tmp_path / "m.onnx", (128, 1024))
    ours, theirs = function(tmp_path, staged(path, "haswell"), "haswell", "dq"), function(tmp_path, stage.import_onnx(path, "llvm-cpu", "haswell"), "haswell", "iree")
    for x in inputs((128, 1024), 2):
        mine, iree = ulps(ours(x), x), ulps(theirs(x), x)
        assert mine.max() <= iree.max() and mine.mean() <= iree.mean(), (mine.max(), iree.max(), mine.mean(), iree.mean())


@needs_iree
@AVX2
def test_nan_and_infinities_as_onnx_reference(tmp_path):
    """Gelu(NaN) is NaN, Gelu(inf) inf, Gelu(-inf) NaN (-inf times 0), Gelu(-0) -0, as
    onnx.reference computes 0.5 x (1 + erf(x / sqrt(2))); in whole steps and in the tail."""
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(4).standard_normal((2, 13)).astype(F32)
    x[0, [1, 2, 3, 4]] = [np.nan, np.inf, -np.inf, -0.0]
    x[1, [9, 10, 11, 12]] = [np.nan, np.inf, -np.inf, -0.0]
    path = model_file(tmp_path / "m.onnx", x.shape)
    got, want = function(tmp_path, staged(path, "haswell"), "haswell", "dq")(x), ReferenceEvaluator(path).run(None, {"x": x})[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isinf(got[[0, 1], [2, 10]]).all() and np.signbit(got[[0, 1], [4, 12]]).all()
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", ["taken", "tanh", "f16", "residual-add", "dynamic-last-dim", "untagged"])
def test_which_gelus_the_kernel_takes(tmp_path, case):
    """An f32 Gelu (approximate "none") of a static last dim on a module for an AVX2 CPU, with the
    Add of a [N] bias before it; IREE keeps tanh's, f16's, one of a dynamic last dim and every
    Gelu of a module for a CPU without AVX2, and an Add of two activations (a residual) before it
    stays IREE's while the Gelu is taken."""
    shape, element, b = (4, 32), TensorProto.FLOAT, np.ones(32, F32)
    path = tmp_path / "m.onnx"
    if case == "residual-add":
        nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["x", "r"], ["v"]), helper.make_node("Gelu", ["v"], ["y"])]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", element, list(shape))], [helper.make_tensor_value_info("y", element, list(shape))])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]), str(path))
    else:
        model_file(path, (4, "n") if case == "dynamic-last-dim" else shape, bias=None if case == "dynamic-last-dim" else (b.astype(np.float16) if case == "f16" else b),
                   approximate="tanh" if case == "tanh" else None, element=TensorProto.FLOAT16 if case == "f16" else element)  # fmt: skip
    text = staged(path, "x86-64" if case == "untagged" else "haswell")
    found = kernels(text)
    if case == "taken":
        assert found == ["dq_gelu_f32_bias_n32_v8_w4"] and "onnx.Add" not in text
    elif case == "residual-add":
        assert found == ["dq_gelu_f32_n32_v8_w4"] and "onnx.Add" in text
    else:
        assert not found and "onnx.Gelu" in text
