"""QDQ MatMuls of two activations as f32 MatMuls of their codes (python/qdq_activation_matmuls.py),
and QDQ pairs around layout ops dropped (python/qdq_layout.py): an attention's Q K^T as
quantize_static writes it, K's codes transposed through a DequantizeLinear / QuantizeLinear pair;
a MaxPool between such a pair.

The layout rewrite is exact: onnxruntime computes the rewritten model's output bit for bit as
the original's. The MatMul rewrite computes y = (f32(d) * sa) * sb with d the integer sum of
(aq - za)(bq - zb): checked against that sum in int64 (numpy) at K on the 2^24 bound with codes
at their extremes, and left beyond it. Through dequant-iree for an AVX2 CPU (haswell): the
model's output is the numpy integer arithmetic, requantized, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from qdq_reference import compiled, quantize, save  # noqa: E402

from dequant import qdq_activation_matmuls, qdq_layout  # noqa: E402
from dequant.passes.target_features import AVX2, AVX512VNNI  # noqa: E402

F32 = np.float32
HASWELL = ("--iree-llvmcpu-target-cpu=haswell",)
# aq uint8, bq int8 (per tensor), y requantized to uint8
INIT = {"sa": F32(0.05), "za": np.uint8(0), "sb": F32(0.03), "zb": np.int8(-3), "sy": F32(0.7), "zy": np.uint8(100)}


def attention_model(path, *, heads=2, m=16, k=32, requantized=True, edit=None, init=None) -> str:
    """x [heads, m, k] f32: A = DQ(Q(x, sa, za)), K's codes Q(x, sb, zb) transposed through a
    QDQ pair (DQ, Transpose, Q), y = MatMul(A, DQ(K^T codes)) [heads, m, m], then (`requantized`)
    Q(y, sy, zy) and its DQ; `edit(nodes, init)` changes the graph before it is saved."""
    init = dict(INIT, **(init or {}))
    nodes = [helper.make_node("QuantizeLinear", ["x", "sa", "za"], ["aq"]), helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["ad"]),
             helper.make_node("QuantizeLinear", ["x", "sb", "zb"], ["kq"]), helper.make_node("DequantizeLinear", ["kq", "sb", "zb"], ["kd"]),
             helper.make_node("Transpose", ["kd"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("QuantizeLinear", ["kt", "sb", "zb"], ["bq"]), helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["bd"]),
             helper.make_node("MatMul", ["ad", "bd"], ["yf" if requantized else "y"])]  # fmt: skip
    if requantized:
        nodes += [helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    if edit is not None:
        edit(nodes, init)
    return save(path, nodes, [heads, m, k], [heads, m, m], init)


def integer_reference(x: np.ndarray, init: dict = INIT) -> np.ndarray:
    """y = (f32(d) * sa) * sb of x, d = sum_k (aq - za)(bq - zb) in int64."""
    a = quantize(x, init["sa"], init["za"]) - int(init["za"])
    b = quantize(x, init["sb"], init["zb"]) - int(init["zb"])
    d = np.einsum("hmk,hnk->hmn", a, b)
    return (d.astype(F32) * init["sa"]) * init["sb"]


def ops(model: onnx.ModelProto) -> list:
    return [n.op_type for n in model.graph.node]


def test_layout_pair_moves_the_codes(tmp_path):
    """DQ, Transpose, Q of one scale and zero point: the Transpose moves K's codes, both nodes
    go, and onnxruntime computes the same output on the rewritten model, bit for bit."""
    path = attention_model(tmp_path / "m.onnx")
    model = onnx.load(path)
    assert qdq_layout.rewrite(model) == 1
    onnx.checker.check_model(model, full_check=True)
    transpose = next(n for n in model.graph.node if n.op_type == "Transpose")
    assert list(transpose.input) == ["kq"] and list(transpose.output) == ["bq"]
    assert ops(model).count("QuantizeLinear") == 3 and ops(model).count("DequantizeLinear") == 3
    x = (np.random.default_rng(0).standard_normal((2, 16, 32)) * 4).astype(F32)
    np.testing.assert_array_equal(onnxruntime_reference.run(model, {"x": x})[0], onnxruntime_reference.run(path, {"x": x})[0])


def _rescaled(nodes, init):  # the QuantizeLinear after the Transpose of another scale
    init["sb2"] = F32(0.031)
    next(n for n in nodes if n.output == ["bq"]).input[1] = "sb2"
    next(n for n in nodes if n.output == ["bd"]).input[1] = "sb2"


def _also_read(nodes, init):  # the transposed values read by another node too
    nodes.append(helper.make_node("Relu", ["kt"], ["also"]))


def _huge(nodes, init):  # a scale whose (q - z) * s overflows
    init["sb"] = F32(1e37)


@pytest.mark.parametrize("edit", [_rescaled, _also_read, _huge], ids=lambda f: f.__name__.strip("_"))
def test_layout_pairs_the_rewrite_leaves(tmp_path, edit):
    """A pair of two scales is no identity, nor one whose codes times the scale could overflow
    (1e37 * 130 > f32's largest); a layout op read by more than the QuantizeLinear keeps its
    float values."""
    assert qdq_layout.rewrite(onnx.load(attention_model(tmp_path / "m.onnx", edit=edit))) == 0


def maxpool_model(path, s=F32(0.05), z=np.uint8(3)) -> str:
    """x [1, 8, 9, 9] f32 -> Q -> DQ -> MaxPool (3 x 3, stride 2, pads 1) -> Q -> DQ -> y, one
    scale and zero point."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]), helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             helper.make_node("MaxPool", ["d"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["p", "s", "z"], ["pq"]), helper.make_node("DequantizeLinear", ["pq", "s", "z"], ["y"])]  # fmt: skip
    return save(path, nodes, [1, 8, 9, 9], [1, 8, 5, 5], {"s": s, "z": z})


def test_maxpool_pair_picks_among_the_codes(tmp_path):
    """DQ, MaxPool, Q of one positive scale: the MaxPool reads the codes (the largest code's value
    is the largest value), both nodes go, and onnxruntime computes the rewritten model's output bit
    for bit as the original's, padded windows and saturated codes among them; a negative scale
    (DQ decreasing) is left alone."""
    path = maxpool_model(tmp_path / "m.onnx")
    model = onnx.load(path)
    assert qdq_layout.rewrite(model, qdq_layout.SELECTIONS) == 1
    onnx.checker.check_model(model, full_check=True)
    pool = next(n for n in model.graph.node if n.op_type == "MaxPool")
    assert list(pool.input) == ["q"] and list(pool.output) == ["pq"] and ops(model).count("QuantizeLinear") == 1
    for scale in (1, 40):  # x / s within the codes, and most codes saturated
        x = (np.random.default_rng(scale).standard_normal((1, 8, 9, 9)) * scale).astype(F32)
        np.testing.assert_array_equal(onnxruntime_reference.run(model, {"x": x})[0], onnxruntime_reference.run(path, {"x": x})[0])
    assert qdq_layout.rewrite(onnx.load(maxpool_model(tmp_path / "n.onnx", s=F32(-0.05)))) == 0


@pytest.mark.parametrize("k", [64, 506])
def test_matmul_is_the_integer_sum(tmp_path, k):
    """The MatMul of two dequantized activations becomes Cast, Sub (each operand), MatMul, Mul,
    Mul, its DequantizeLinears gone; onnxruntime's f32 MatMul of the rewritten model is the
    integer arithmetic bit for bit, at K = 506 too, the longest the bound takes (506 * 255 * 130
    <= 2^24: uint8 codes 255 from za = 0, int8 ones 130 from zb = -3), where x's codes at their
    extremes make partial sums up to that."""
    path = attention_model(tmp_path / "m.onnx", k=k, requantized=False)
    model = onnx.load(path)
    qdq_layout.rewrite(model)
    assert qdq_activation_matmuls.rewrite(model) == 1
    onnx.checker.check_model(model, full_check=True)
    assert ops(model)[-7:] == ["Cast", "Sub", "Cast", "Sub", "MatMul", "Mul", "Mul"] and "DequantizeLinear" not in ops(model)
    rng = np.random.default_rng(k)
    extremes = [np.full((2, 16, k), F32(100)), np.where(rng.random((2, 16, k)) < 0.5, F32(-100), F32(100))]
    for x in [(rng.standard_normal((2, 16, k)) * 4).astype(F32), *extremes]:
        np.testing.assert_array_equal(onnxruntime_reference.run(model, {"x": x})[0], integer_reference(x))


def _constant_b(nodes, init):  # B a DequantizeLinear of constant codes: dq's weight kernels' MatMul
    init["bc"] = np.ones((2, 32, 16), np.int8)
    next(n for n in nodes if n.output == ["bd"]).input[0] = "bc"


def _per_axis(nodes, init):  # A dequantized with a scale per head
    init["sa2"] = np.array([0.05, 0.06], F32)
    next(n for n in nodes if n.output == ["ad"]).input[1] = "sa2"
    next(n for n in nodes if n.output == ["ad"]).attribute.append(helper.make_attribute("axis", 0))


@pytest.mark.parametrize("edit, k", [(_constant_b, 32), (_per_axis, 32), (None, 507)], ids=["constant-b", "per-axis", "past-the-bound"])
def test_matmuls_the_rewrite_leaves(tmp_path, edit, k):
    """B constant, a scale per axis, and K = 507, where the codes could sum past what f32 holds
    exactly (507 * 255 * 130 > 2^24)."""
    model = onnx.load(attention_model(tmp_path / "m.onnx", k=k, edit=edit))
    assert qdq_activation_matmuls.rewrite(model) == 0


def test_runs_on_avx2_cpus():
    """AVX2 CPUs, AVX-512 VNNI ones (tagged both) included; not a CPU dq has no kernels for."""
    assert qdq_activation_matmuls.wanted((AVX2,)) and qdq_activation_matmuls.wanted((AVX2, AVX512VNNI)) and not qdq_activation_matmuls.wanted(())


@needs_iree
def test_through_dequant_iree_is_the_integer_arithmetic(tmp_path):
    """The requantized model through dequant-iree for haswell: no DequantizeLinear or integer
    contraction reaches IREE, and the output is the integer arithmetic (numpy), requantized and
    dequantized, bit for bit."""
    from dequant import iree as stage

    path = attention_model(tmp_path / "m.onnx", heads=4, m=32, k=64)
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    assert "onnx.DequantizeLinear" not in staged and "onnx.MatMulInteger" not in staged and "onnx.Cast" in staged
    f = compiled(path, *HASWELL)
    for x in [(np.random.default_rng(3).standard_normal((4, 32, 64)) * 4).astype(F32)]:
        want = (quantize(integer_reference(x), INIT["sy"], INIT["zy"]) - int(INIT["zy"])).astype(F32) * INIT["sy"]
        np.testing.assert_array_equal(f(x), want)
