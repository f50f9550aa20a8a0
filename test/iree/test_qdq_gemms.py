"""QDQ Gemms as QDQ MatMuls (python/qdq_gemms.py): one QDQ Gemm through dequant-iree becomes one
dispatch of dq's int8 kernel, its output equal, bit for bit, to the integer arithmetic in numpy
(written from the ONNX spec: QuantizeLinear, an int64 product of the codes, the f32 scale and
bias, QuantizeLinear) and within one step of onnxruntime on the QDQ graph as written; which
Gemms it takes.
"""

from __future__ import annotations

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from qdq_reference import compiled, quantize, save  # noqa: E402

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dequant import qdq_gemms  # noqa: E402
from dequant.passes.target_features import host_has_avx2  # noqa: E402

F32 = np.float32


def gemm_model(path, m: int, k: int, n: int, *, trans_b: bool, per_column: bool, bias: str | None = "dq", seed: int = 0, **attrs) -> str:
    """x [m, k] f32 -> Q (uint8) -> DQ -> Gemm (int8 weights per tensor or per output column,
    with zero points; an int32 bias) -> Q -> DQ -> y [m, n]: quantize_static's classifier. The
    bias bq * sb as a DequantizeLinear ("dq", quantize_static's), as Mul(Cast<f32>(bq), sb)
    ("mul", dequant.formats' of a QOperator QGemm's per-column C), or none (None)."""
    rng = np.random.default_rng(seed)
    sw = (rng.uniform(0.002, 0.02, n) if per_column else rng.uniform(0.002, 0.02, ())).astype(F32)
    zw = rng.integers(-5, 5, n if per_column else ()).astype(np.int8)
    w = rng.integers(-128, 128, (n, k) if trans_b else (k, n)).astype(np.int8)
    init = {"sx": F32(0.037), "zx": np.array(np.uint8(128)), "w": w, "sw": sw, "zw": zw, "bq": rng.integers(-5000, 5000, n).astype(np.int32),
            "sb": (F32(0.037) * sw).astype(F32), "sy": F32(0.9), "zy": np.array(np.uint8(120))}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=0 if trans_b else 1),
        *([helper.make_node("DequantizeLinear", ["bq", "sb"], ["bd"], axis=0)] if bias == "dq" else
          [helper.make_node("Cast", ["bq"], ["bf"], to=TensorProto.FLOAT), helper.make_node("Mul", ["bf", "sb"], ["bd"])] if bias == "mul" else []),
        helper.make_node("Gemm", ["xd", "wd", *(["bd"] if bias else [])], ["yc"], transB=int(trans_b), **attrs),
        helper.make_node("QuantizeLinear", ["yc", "sy", "zy"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]),
    ]
    return save(path, nodes, [m, k], [m, n], init)


def integer_reference(path: str, x: np.ndarray) -> np.ndarray:
    """The QDQ Gemm of gemm_model as integers: d = (xq - zx) @ (wq - zw) in int64, y = f32(sx *
    sw) * f32(d) + f32(bq * sb), then QuantizeLinear and DequantizeLinear."""
    model = onnx.load(path)
    v = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    trans = any(a.name == "transB" and a.i for a in gemm.attribute)
    w = (v["w"].T if trans else v["w"]).astype(np.int64) - v["zw"].astype(np.int64)
    d = (quantize(x, v["sx"], v["zx"]) - int(v["zx"])) @ w
    y = ((v["sx"] * v["sw"]).astype(F32) * d.astype(F32)).astype(F32)
    if len(gemm.input) > 2:
        y = (y + (v["bq"].astype(F32) * v["sb"]).astype(F32)).astype(F32)
    return (quantize(y, v["sy"], v["zy"]) - int(v["zy"])).astype(F32) * v["sy"]


def taken(path) -> int:
    return qdq_gemms.rewrite(onnx.load(str(path)))[1]


# (rows, K, N, transB, per column, bias): the classifier's form (one row, per column, transB), and
# more rows, per tensor, without transB, without a bias (each from MIN_INTEGER_MACS multiply-adds);
# the classifier of a QOperator model (QGemm, its bias as dequant.formats writes it)
GEMMS = {
    "classifier": (1, 1280, 1000, True, True, "dq"),
    "rows-per-tensor": (33, 256, 96, False, False, "dq"),
    "no-bias": (8, 512, 200, True, True, None),
    "qgemm-bias": (1, 1280, 1000, True, True, "mul"),
}


@needs_iree
@pytest.mark.parametrize("name", list(GEMMS))
def test_gemm_through_the_int8_kernel_is_the_integer_arithmetic(tmp_path, name):
    """One QDQ Gemm through dequant-iree (this host's AVX2 or VNNI kernel): one dispatch of dq's
    int8 kernel and no Gemm left; the output bit for bit the integer arithmetic in numpy, and
    within one step of onnxruntime on the QDQ graph as written."""
    from dequant import iree as stage

    if not host_has_avx2():
        pytest.skip("the host lacks AVX2 (dq's int8 kernel needs AVX2 or AVX-512 VNNI)")
    m, k, n, trans_b, per_column, bias = GEMMS[name]
    path = gemm_model(tmp_path / "m.onnx", m, k, n, trans_b=trans_b, per_column=per_column, bias=bias)
    assert taken(path) == 1
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu"))
    assert staged.count("entry_points = [@dq_matmul_qdq") == 1 and "onnx.Gemm" not in staged
    f = compiled(path)
    rng = np.random.default_rng(3)
    for x in (rng.standard_normal((m, k)).astype(F32), (rng.standard_normal((m, k)) * 30).astype(F32)):
        got = f(x)
        np.testing.assert_array_equal(got, integer_reference(path, x))
        want = onnxruntime_reference.session(path).run(None, {"x": x})[0]
        assert np.abs(got - want).max() <= F32(0.9) * 1.0001


def test_gemms_it_leaves(tmp_path):
    """Left for IREE: fewer than MIN_INTEGER_MACS multiply-adds (dq's kernel would leave the
    MatMul), alpha or beta other than 1, transA, per-column scales along an axis out of range,
    weights that are not a constant's DequantizeLinear."""
    args = dict(trans_b=True, per_column=True)
    assert taken(gemm_model(tmp_path / "a.onnx", 16, 256, 256, **args)) == 1  # 2^20 multiply-adds
    assert taken(gemm_model(tmp_path / "b.onnx", 4, 256, 256, **args)) == 0  # 2^18
    assert taken(gemm_model(tmp_path / "c.onnx", 16, 256, 256, alpha=0.5, **args)) == 0
    assert taken(gemm_model(tmp_path / "d.onnx", 16, 256, 256, beta=2.0, **args)) == 0
    assert taken(gemm_model(tmp_path / "e.onnx", 256, 256, 256, transA=1, **args)) == 0
    model = onnx.load(gemm_model(tmp_path / "g.onnx", 16, 256, 256, **args))  # an axis out of range: left for the importer's error
    next(n for n in model.graph.node if n.output[0] == "wd").attribute[0].i = 2
    assert qdq_gemms.rewrite(model)[1] == 0
    model = onnx.load(gemm_model(tmp_path / "f.onnx", 16, 256, 256, **args))
    model.graph.input.append(helper.make_tensor_value_info("w", TensorProto.INT8, [256, 256]))  # the weights an input
    model.graph.initializer.remove(next(t for t in model.graph.initializer if t.name == "w"))
    assert qdq_gemms.rewrite(model)[1] == 0


def test_rewritten_model_computes_the_gemm(tmp_path):
    """The rewritten model under onnxruntime (a float MatMul of the dequantized operands, plus the
    bias) against the Gemm as written: within one output step, and the Gemm's DequantizeLinear
    nodes gone."""
    path = gemm_model(tmp_path / "m.onnx", 8, 512, 200, trans_b=True, per_column=True)
    model, count = qdq_gemms.rewrite(onnx.load(path))
    assert count == 1 and not any(n.op_type == "Gemm" for n in model.graph.node)
    assert sum(n.op_type == "DequantizeLinear" for n in model.graph.node) == 3  # x, the new weights, y
    onnx.checker.check_model(model)
    out = tmp_path / "rw.onnx"
    onnx.save(model, str(out))
    x = np.random.default_rng(0).standard_normal((8, 512)).astype(F32)
    got, want = (onnxruntime_reference.session(p).run(None, {"x": x})[0] for p in (str(out), path))
    assert np.abs(got - want).max() <= F32(0.9) * 1.0001
