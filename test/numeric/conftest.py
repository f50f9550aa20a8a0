"""Independent references for the ONNX DequantizeLinear tests, and the comparisons they are held to.

Fixtures (prefixed dql_, this folder is shared with other ops' tests): `dql_reference` (each
reference in turn), `dql_evaluator` (the reference evaluator only), `dql_check` (comparisons).

References (never the code under test):
- `run_onnx_reference`: `onnx.reference.ReferenceEvaluator` on a one-node DequantizeLinear model
  (opset 24). It takes ml_dtypes arrays for the 4-bit and float8 types (onnx >= 1.18).
- `run_onnxruntime`: onnxruntime's CPU provider on the same node. The ORT Python binding cannot
  take ml_dtypes arrays as feeds, so the arrays are initializers (`numpy_helper.from_array`
  packs 4-bit data) and graph optimisations are off, so the kernel runs at `run` time.
- `spec_product`: y = (x - x_zero_point) * x_scale evaluated exactly (float64, or long double
  for int32 whose differences need 33 bits), with the scale expanded to x's shape as the
  spec's granularities say. Used to check that f16/bf16 results are faithfully rounded.

Comparisons:
- `assert_same`: bit for bit (sign of zero included); any NaN matches any NaN.
- `assert_within_ulps`: at most n representable values apart in the output type.
- `assert_faithful`: the result is one of the two output-type values around the exact value.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from dequant import ops
from dequant.runtime import DEFAULT

OUTPUT_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16,
}
_BITS = {2: (np.uint16, np.int32), 4: (np.uint32, np.int64)}


def tensor_type(dtype) -> int:
    """The ONNX element type of a numpy/ml_dtypes dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def output_dtype_of(scale: np.ndarray, output_dtype) -> np.dtype:
    return np.dtype(output_dtype) if output_dtype is not None else np.dtype(scale.dtype)


def dequantize_node(has_zero_point: bool, axis: int, block_size: int, output_dtype) -> onnx.NodeProto:
    attrs = {"axis": axis, "block_size": block_size}
    if output_dtype is not None:
        attrs["output_dtype"] = OUTPUT_TYPES[np.dtype(output_dtype)]
    inputs = ["x", "x_scale"] + (["x_zero_point"] if has_zero_point else [])
    return helper.make_node("DequantizeLinear", inputs, ["y"], **attrs)


def run_onnx_reference(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=None) -> np.ndarray:
    """DequantizeLinear-24 by onnx's reference evaluator (inputs typed with make_tensor_value_info)."""
    arrays = {"x": x, "x_scale": x_scale, "x_zero_point": x_zero_point}
    arrays = {k: np.asarray(v) for k, v in arrays.items() if v is not None}
    inputs = [helper.make_tensor_value_info(k, tensor_type(a.dtype), a.shape) for k, a in arrays.items()]
    out = output_dtype_of(arrays["x_scale"], output_dtype)
    outputs = [helper.make_tensor_value_info("y", OUTPUT_TYPES[out], np.shape(x))]
    node = dequantize_node(x_zero_point is not None, axis, block_size, output_dtype)
    graph = helper.make_graph([node], "dequantize", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    (y,) = ReferenceEvaluator(model).run(None, arrays)
    assert y.dtype == out, f"the reference evaluator returned {y.dtype}, expected {out}"
    return y


def ort_opset(x, x_scale, output_dtype) -> int:
    """Opset 21 where it can express the node, else the first one that can (23, 24)."""
    if np.dtype(x_scale.dtype) == np.dtype(ml_dtypes.float8_e8m0fnu):
        return 24  # float8e8m0 scales are opset 24
    if output_dtype is not None or np.dtype(x.dtype) == np.dtype(ml_dtypes.float4_e2m1fn):
        return 23  # output_dtype and float4e2m1 are opset 23
    return 21


def run_onnxruntime(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=None) -> np.ndarray:
    """DequantizeLinear by onnxruntime (CPU); skips the test where onnxruntime rejects the node."""
    arrays = {"x": x, "x_scale": x_scale, "x_zero_point": x_zero_point}
    arrays = {k: np.asarray(v) for k, v in arrays.items() if v is not None}
    out = output_dtype_of(arrays["x_scale"], output_dtype)
    opset = ort_opset(arrays["x"], arrays["x_scale"], output_dtype)
    node = dequantize_node(x_zero_point is not None, axis, block_size, output_dtype)
    inits = [numpy_helper.from_array(a, k) for k, a in arrays.items()]
    outputs = [helper.make_tensor_value_info("y", OUTPUT_TYPES[out], np.shape(x))]
    graph = helper.make_graph([node], "dequantize", [], outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=11)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        (y,) = session.run(None, {})
    except Exception as e:  # NOT_IMPLEMENTED / INVALID_GRAPH / FAIL from onnxruntime itself
        reason = str(e).strip().splitlines()[0]
        types = ", ".join(f"{k} {np.dtype(a.dtype).name}{list(a.shape)}" for k, a in arrays.items())
        pytest.skip(
            f"onnxruntime {ort.__version__} does not run DequantizeLinear-{opset} "
            f"({types}, axis={axis}, block_size={block_size}, output {out.name}): {reason}"
        )
    return np.asarray(y).view(out) if np.asarray(y).dtype != out else y


def expand(v: np.ndarray, shape: tuple, axis: int, block_size: int) -> np.ndarray:
    """x_scale or x_zero_point broadcast to x's shape, per the spec's granularities."""
    v = np.asarray(v)
    if block_size > 0:  # each value replicated block_size times along axis, last block ragged
        return np.take(np.repeat(v, block_size, axis=axis), np.arange(shape[axis]), axis=axis)
    if v.size == 1:  # per-tensor: scalar or one-element 1-D
        return v.reshape(())
    dims = [1] * len(shape)  # per-axis: a 1-D tensor of dim(axis) values
    dims[axis] = v.size
    return v.reshape(dims)


def spec_product(x, x_scale, x_zero_point=None, *, axis=1, block_size=0) -> np.ndarray:
    """The exact value of (x - x_zero_point) * x_scale (float64; long double for int32). A float
    x's zero point, zero by ONNX's rules, is not subtracted, as the ONNX reference does (it would
    turn -0 into +0)."""
    x = np.asarray(x)
    wide = np.longdouble if x.dtype == np.int32 else np.float64

    def value(a):
        a = np.asarray(a)
        return a.astype(np.int64).astype(wide) if a.dtype.kind in "iu" else a.astype(np.float64).astype(wide)

    d = value(x)
    if x_zero_point is not None and not x.dtype.name.startswith("float"):
        d = d - expand(value(x_zero_point), x.shape, axis, block_size)
    return d * expand(value(x_scale), x.shape, axis, block_size)


def _ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns as integers in the order of the values (+0 and -0 both 0)."""
    unsigned, signed = _BITS[a.dtype.itemsize]
    bits = a.view(unsigned).astype(signed)
    sign = 1 << (8 * a.dtype.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def _show(mask, **arrays) -> str:
    where = np.argwhere(mask)[:8]
    rows = [f"  at {tuple(int(i) for i in w)}: " + ", ".join(f"{k}={a[tuple(w)]!r}" for k, a in arrays.items()) for w in where]
    return f"{int(np.count_nonzero(mask))} of {mask.size} elements differ:\n" + "\n".join(rows)


def _check_nans(got, want, **context) -> np.ndarray:
    got_nan, want_nan = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
    bad = got_nan != want_nan
    assert not bad.any(), "NaN where the reference has none, or a number where it has NaN: " + _show(
        bad, got=got, want=want, **context
    )
    return got_nan


def assert_same(got: np.ndarray, want: np.ndarray, **context) -> None:
    """Bit-for-bit equality (signed zeros distinguished); a NaN matches any NaN."""
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    nan = _check_nans(got, want, **context)
    unsigned = _BITS[got.dtype.itemsize][0]
    bad = (got.view(unsigned) != want.view(unsigned)) & ~nan
    assert not bad.any(), _show(bad, got=got, want=want, **context)


def assert_within_ulps(got: np.ndarray, want: np.ndarray, ulps: int = 1, **context) -> None:
    """At most `ulps` representable values of the output type apart; a NaN matches any NaN."""
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    nan = _check_nans(got, want, **context)
    bad = (np.abs(_ordered(got) - _ordered(want)) > ulps) & ~nan
    assert not bad.any(), f"more than {ulps} ulp apart: " + _show(bad, got=got, want=want, **context)


def assert_faithful(got: np.ndarray, exact: np.ndarray, **context) -> None:
    """Each value is one of the two values of got's type around `exact` (itself if representable),
    with exact's sign (so signed zeros and infinities too); NaN exactly where `exact` is NaN."""
    assert got.shape == exact.shape, f"shape {got.shape}, expected {exact.shape}"
    nan = _check_nans(got, exact, **context)
    nearest = exact.astype(np.float64).astype(got.dtype)  # itself one of the two (faithful)
    g = got.astype(np.float64).astype(exact.dtype)
    n = nearest.astype(np.float64).astype(exact.dtype)
    adjacent = np.abs(_ordered(got) - _ordered(nearest)) == 1
    between = (np.minimum(g, n) <= exact) & (exact <= np.maximum(g, n))
    ok = (_ordered(got) == _ordered(nearest)) | (adjacent & between)
    ok &= np.signbit(got.astype(np.float32)) == np.signbit(exact)
    bad = ~ok & ~nan
    assert not bad.any(), "not faithfully rounded: " + _show(bad, got=got, exact=exact, **context)


@pytest.fixture(params=["onnx-reference", "onnxruntime"])
def dql_reference(request):
    """Each reference in turn: ONNX's reference evaluator, then onnxruntime."""
    return run_onnx_reference if request.param == "onnx-reference" else run_onnxruntime


@pytest.fixture
def dql_evaluator():
    return run_onnx_reference


@pytest.fixture
def dql_check():
    """The helpers above, for test modules (conftest is not imported by name)."""

    class Check:
        same = staticmethod(assert_same)
        within_ulps = staticmethod(assert_within_ulps)
        faithful = staticmethod(assert_faithful)
        spec_product = staticmethod(spec_product)

    return Check


@pytest.fixture
def dq_threads():
    """`dq_threads(n, min_parallel=None)` sets dequant.ops' thread count (and the size from which
    it splits) for one test; both are restored afterwards."""
    runtime = DEFAULT
    saved = runtime.get_num_threads(), runtime.min_parallel

    def set_threads(n: int, min_parallel: int | None = None) -> None:
        runtime.set_num_threads(n)
        if min_parallel is not None:
            runtime.min_parallel = min_parallel

    yield set_threads
    runtime.set_num_threads(saved[0])
    runtime.min_parallel = saved[1]
