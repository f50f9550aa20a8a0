"""Activations between a DequantizeLinear and a QuantizeLinear as tables of codes (python/qdq_tables.py)
and their lookups: in the QDQ kernels' and the depthwise kernel's epilogues, else dq's lookup
kernel (passes/kernels/lookup.py).

The rewrite: which regions it takes and leaves; each table equal to onnxruntime's own
DequantizeLinear, activation and QuantizeLinear on all 256 codes (an evaluator apart from the
onnx.reference that makes the table); and the rewritten model onnxruntime's original one, bit
for bit. Through dequant-iree on an AVX2 host: a depthwise convolution's codes (the integer
arithmetic, in numpy) through the table onnxruntime computes, and a lookup no kernel takes (a
QDQ MatMul below the kernel's size; a squeeze-and-excitation gate of IREE's pool) equal to
onnxruntime's activation of IREE's codes.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from qdq_reference import compiled, quantize  # noqa: E402
from test_qdq_depthwise import depthwise_model, integer_reference  # noqa: E402

from dequant import qdq_conv_matmuls, qdq_tables  # noqa: E402
from dequant.passes.target_features import AVX2, host_has_avx2  # noqa: E402

F32 = np.float32
HASWELL = ("--iree-llvmcpu-target-cpu=haswell",)
TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
SMALL = {"Sigmoid": 1 / 256, "HardSigmoid": 1 / 256, "Tanh": 1 / 128}  # the output scale of activations within (-1, 1)


def activation(act: str, x: str, out: str) -> tuple:
    """(nodes, initializers) of activation `act` of x into out: an op type, or "GeluErf" (GELU as
    exporters write it, x * (1 + Erf(x / sqrt 2)) / 2: a region reading x twice)."""
    if act != "GeluErf":
        return [helper.make_node(act, [x], [out])], []
    consts = {"r2": F32(np.sqrt(2)), "one": F32(1), "half": F32(0.5)}
    nodes = [helper.make_node("Div", [x, "r2"], ["e1"]), helper.make_node("Erf", ["e1"], ["e2"]), helper.make_node("Add", ["e2", "one"], ["e3"]),
             helper.make_node("Mul", [x, "e3"], ["e4"]), helper.make_node("Mul", ["e4", "half"], [out])]  # fmt: skip
    return nodes, [numpy_helper.from_array(v, k) for k, v in consts.items()]


def matmul_model(path, act: str, *, m=64, k=256, n=128, codes=np.uint8, out=np.uint8, extra=None) -> str:
    """x [m, k] f32 -> Q -> DQ -> MatMul(int8 weights) -> Q (`codes`) -> DQ -> `act` -> Q (`out`)
    -> DQ -> y; `extra(nodes, inits)` edits the graph before it is saved."""
    rng = np.random.default_rng(0)
    zy = codes(120 if codes == np.uint8 else -8)
    za = out(3 if out == np.uint8 else -120)
    inits = {"wq": rng.integers(-127, 128, (k, n)).astype(np.int8), "sw": F32(0.02), "sx": F32(0.05), "zx": np.uint8(128),
             "sy": F32(0.3), "zy": np.array(zy), "sa": F32(SMALL.get(act, 0.25)), "za": np.array(za)}  # fmt: skip
    body, consts = activation(act, "yd", "a")
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "sw"], ["wd"]), helper.make_node("MatMul", ["xd", "wd"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["yd"]),
             *body, helper.make_node("QuantizeLinear", ["a", "sa", "za"], ["aq"]), helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["y"])]  # fmt: skip
    inits = [numpy_helper.from_array(np.asarray(v), name) for name, v in inits.items()] + consts
    if extra is not None:
        extra(nodes, inits)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    return str(path)


def region_table(act: str, sx, zx, sy, zy) -> np.ndarray:
    """onnxruntime's Q(act(DQ(c, sx, zx)), sy, zy) for every code c of zx's type, lowest first."""
    body, consts = activation(act, "xd", "a")
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in {"sx": F32(sx), "zx": np.asarray(zx), "sy": F32(sy), "zy": np.asarray(zy)}.items()]
    nodes = [helper.make_node("DequantizeLinear", ["c", "sx", "zx"], ["xd"]), *body, helper.make_node("QuantizeLinear", ["a", "sy", "zy"], ["q"])]
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("c", TYPES[np.asarray(zx).dtype.type], [256])],
                              [helper.make_tensor_value_info("q", TYPES[np.asarray(zy).dtype.type], [256])], inits + consts)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    info = np.iinfo(np.asarray(zx).dtype)
    c = np.arange(info.min, info.max + 1).astype(np.asarray(zx).dtype)
    return onnxruntime_reference.run(model, {"c": c})[0]


def ort_run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """onnxruntime on `model` as written (no graph optimization: its QDQ fusions compute otherwise)."""
    return onnxruntime_reference.run(model, {"x": x})[0]


def tables(model: onnx.ModelProto) -> list:
    """The rewritten model's Gathers' tables, in graph order."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return [values[n.input[0]] for n in model.graph.node if n.op_type == "Gather"]


ACTIVATIONS = [("HardSwish", np.uint8, np.uint8), ("Sigmoid", np.int8, np.uint8), ("Gelu", np.uint8, np.int8), ("GeluErf", np.int8, np.int8),
               ("Tanh", np.uint8, np.int8), ("HardSigmoid", np.int8, np.uint8), ("LeakyRelu", np.uint8, np.uint8)]  # fmt: skip


@pytest.mark.parametrize("act, codes, out", ACTIVATIONS, ids=lambda v: getattr(v, "__name__", v))
def test_table_is_onnxruntimes_activation(tmp_path, act, codes, out):
    """A QDQ MatMul's activation becomes one Gather after the MatMul's QuantizeLinear (Cast, and
    for int8 codes + 128), its table onnxruntime's for every code; the region, its
    DequantizeLinear and QuantizeLinear go; and onnxruntime computes the same output on the
    rewritten model as on the original."""
    original = onnx.load(matmul_model(tmp_path / "m.onnx", act, codes=codes, out=out))
    model, count = qdq_tables.rewrite(onnx.load(tmp_path / "m.onnx"))
    assert count == 1
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops[5:] == ["Cast", *(["Add"] if codes == np.int8 else []), "Gather", "DequantizeLinear"]
    v = {t.name: numpy_helper.to_array(t) for t in original.graph.initializer}
    (t,) = tables(model)
    np.testing.assert_array_equal(t, region_table(act, v["sy"], v["zy"], v["sa"], v["za"]))
    x = (np.random.default_rng(1).standard_normal((64, 256)) * 3).astype(F32)
    np.testing.assert_array_equal(ort_run(model, x), ort_run(original, x))


def test_layout_ops_move_the_tables_codes(tmp_path):
    """Between the kernel's codes and the activation, Reshapes and Transposes of codes (as
    qdq_conv_matmuls writes them) and of the dequantized values: the Gather goes right after the
    QuantizeLinear, and the layout ops move its codes (uint8 codes to int8 ones: the moved
    values' types stated before are gone)."""

    def transposed(nodes, inits):
        dq = next(n for n in nodes if n.output == ["yd"])
        dq.output[0] = "yd0"
        inits.append(numpy_helper.from_array(np.array([64, 2, 64], np.int64), "shape"))
        inits.append(numpy_helper.from_array(np.array([64, 128], np.int64), "back"))
        nodes.insert(nodes.index(dq) + 1, helper.make_node("Reshape", ["yd0", "shape"], ["yd1"]))
        nodes.insert(nodes.index(dq) + 2, helper.make_node("Transpose", ["yd1"], ["yd2"], perm=[1, 0, 2]))
        nodes.insert(nodes.index(dq) + 3, helper.make_node("Transpose", ["yd2"], ["yd3"], perm=[1, 0, 2]))
        nodes.insert(nodes.index(dq) + 4, helper.make_node("Reshape", ["yd3", "back"], ["yd"]))

    path = matmul_model(tmp_path / "m.onnx", "HardSwish", out=np.int8, extra=transposed)
    model, count = qdq_tables.rewrite(onnx.shape_inference.infer_shapes(onnx.load(path)))  # the moved values typed uint8
    assert count == 1
    onnx.checker.check_model(model, full_check=True)  # their types the table's, int8
    assert [n.op_type for n in model.graph.node][5:] == ["Cast", "Gather", "Reshape", "Transpose", "Transpose", "Reshape", "DequantizeLinear"]
    x = (np.random.default_rng(1).standard_normal((64, 256)) * 3).astype(F32)
    np.testing.assert_array_equal(ort_run(model, x), ort_run(onnx.load(path), x))


def _also_read(nodes, inits):
    """The activation's value read by another node too (a residual)."""
    nodes.insert(-1, helper.make_node("Add", ["a", "yd"], ["r"]))
    nodes[-1].input[0] = "aq"


def _per_channel(nodes, inits):
    """A constant of more than one element in the region: its values depend on the column."""
    inits.append(numpy_helper.from_array(np.linspace(0.5, 2, 128).astype(F32), "k"))
    act = next(n for n in nodes if n.output == ["a"])
    act.output[0] = "a0"
    nodes.insert(nodes.index(act) + 1, helper.make_node("Mul", ["a0", "k"], ["a"]))


def _not_a_kernels(nodes, inits):
    """The codes of a QuantizeLinear of a float Add (no kernel of dq's makes them), 64 x 128 of
    them: more than FEW_CODES."""
    assert 64 * 128 > qdq_tables.FEW_CODES
    q = next(n for n in nodes if n.output == ["yq"])
    nodes.insert(nodes.index(q), helper.make_node("Add", ["yf", "yf"], ["yf2"]))
    q.input[0] = "yf2"


def _activations_product(nodes, inits):
    """A MatMul of two activations (as attention's): no kernel of dq's takes it; 128 x 128 codes,
    more than FEW_CODES."""
    w = next(n for n in nodes if n.output == ["wd"])
    nodes.insert(0, helper.make_node("Transpose", ["x"], ["xt"]))
    nodes.insert(1, helper.make_node("QuantizeLinear", ["xt", "sx", "zx"], ["xtq"]))
    w.input[:] = ["xtq", "sx", "zx"]


def _softmax(nodes, inits):
    """An op not computed element by element in the region."""
    act = next(n for n in nodes if n.output == ["a"])
    nodes[nodes.index(act)] = helper.make_node("Softmax", ["yd"], ["a"])


def _output(nodes, inits):
    """The activation's value a graph output too."""
    nodes.append(helper.make_node("Identity", ["yd"], ["y2"]))


@pytest.mark.parametrize("edit", [_also_read, _per_channel, _not_a_kernels, _activations_product, _softmax], ids=lambda f: f.__name__.strip("_"))
def test_regions_the_rewrite_leaves(tmp_path, edit):
    square = edit is _activations_product  # x [128, 256] @ its transpose's codes [256, 128]
    path = matmul_model(tmp_path / "m.onnx", "HardSwish", extra=edit, **({"m": 128} if square else {}))
    model, count = qdq_tables.rewrite(onnx.load(path))
    assert count == 0 and not any(n.op_type == "Gather" for n in model.graph.node)


def test_a_value_the_graph_outputs_is_left(tmp_path):
    path = matmul_model(tmp_path / "m.onnx", "HardSwish", extra=_output)
    model = onnx.load(path)
    model.graph.output.append(helper.make_tensor_value_info("yd", TensorProto.FLOAT, [64, 128]))
    assert qdq_tables.rewrite(model)[1] == 0


def gate_model(path, act: str, c: int = 16, hw: int = 8) -> str:
    """A squeeze-and-excitation block as quantize_static writes it: x [1, c, hw, hw] -> Q -> DQ ->
    GlobalAveragePool -> Q -> DQ -> `act` -> Q -> DQ, the gate [1, c, 1, 1], and the block's
    DQ values times the gate -> Q -> DQ -> y."""
    init = {"sx": F32(0.05), "zx": np.uint8(128), "sp": F32(0.02), "zp": np.uint8(120), "sg": F32(1 / 256), "zg": np.uint8(0), "sy": F32(0.04), "zy": np.uint8(125)}
    body, consts = activation(act, "pd", "a")
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("GlobalAveragePool", ["xd"], ["p"]), helper.make_node("QuantizeLinear", ["p", "sp", "zp"], ["pq"]),
             helper.make_node("DequantizeLinear", ["pq", "sp", "zp"], ["pd"]), *body,
             helper.make_node("QuantizeLinear", ["a", "sg", "zg"], ["gq"]), helper.make_node("DequantizeLinear", ["gq", "sg", "zg"], ["gd"]),
             helper.make_node("Mul", ["xd", "gd"], ["m"]), helper.make_node("QuantizeLinear", ["m", "sy", "zy"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, hw, hw])],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in init.items()] + consts)  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    return str(path)


@pytest.mark.parametrize("act", ["Sigmoid", "HardSigmoid"])
def test_few_codes_of_irees_op_take_a_table(tmp_path, act):
    """A squeeze-and-excitation gate: the region after the QuantizeLinear of IREE's pool (16 codes)
    becomes one Gather there, its table onnxruntime's; onnxruntime computes the same output on the
    rewritten model as on the original."""
    path = gate_model(tmp_path / "m.onnx", act)
    model, count = qdq_tables.rewrite(onnx.load(path))
    assert count == 1
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops == ["QuantizeLinear", "DequantizeLinear", "GlobalAveragePool", "QuantizeLinear", "Cast", "Gather", "DequantizeLinear", "Mul", "QuantizeLinear", "DequantizeLinear"]
    v = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    (t,) = tables(model)
    np.testing.assert_array_equal(t, region_table(act, v["sp"], v["zp"], v["sg"], v["zg"]))
    for seed in range(4):
        x = (np.random.default_rng(seed).standard_normal((1, 16, 8, 8)) * 3).astype(F32)
        np.testing.assert_array_equal(ort_run(model, x), ort_run(onnx.load(path), x))


@pytest.mark.parametrize("more, tables", [(0, 1), (1, 0)])
def test_few_codes_are_at_most_few_codes(tmp_path, more, tables):
    """The same block with a gate of FEW_CODES codes takes the table; of one more, the region
    stays IREE's."""
    path = gate_model(tmp_path / "m.onnx", "Sigmoid", c=qdq_tables.FEW_CODES + more, hw=1)
    assert qdq_tables.rewrite(onnx.load(path))[1] == tables


def with_activation(path, act: str, sa, za) -> str:
    """The QDQ model at `path` (its output y = DQ(q)) with `act` after y, then Q(sa, za) and DQ."""
    model = onnx.load(path)
    g = model.graph
    dq = next(n for n in g.node if n.output == ["y"])
    dq.output[0] = "yd"
    body, consts = activation(act, "yd", "a")
    g.node.extend([*body, helper.make_node("QuantizeLinear", ["a", "sa", "za"], ["aq"]), helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["y"])])
    g.initializer.extend([numpy_helper.from_array(F32(sa), "sa"), numpy_helper.from_array(np.asarray(za), "za"), *consts])
    onnx.save(model, str(path))
    return str(path)


@needs_iree
@pytest.mark.skipif(not host_has_avx2(), reason="the host lacks AVX2 (the kernels' target here: haswell)")
def test_depthwise_epilogue_looks_up_the_table(tmp_path):
    """A QDQ depthwise Conv then HardSwish through dequant-iree: one dispatch of the depthwise
    kernel with the table (`_t`), no other; its output the Conv's integer arithmetic (numpy)
    through onnxruntime's table, bit for bit."""
    from dequant import iree as stage

    path = depthwise_model(tmp_path / "m.onnx", 32, 3, 1, 14, (1, 1, 1, 1), per_channel=True)
    path = with_activation(path, "HardSwish", 0.04, np.uint8(2))
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    assert staged.count("entry_points = [@dq_depthwise") == 1 and re.search(r"_b_t(_l16)?(_rcp)?::", staged) and "onnx.HardSwish" not in staged and "dq_lookup" not in staged
    v = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    table = region_table("HardSwish", v["sy"], v["zy"], v["sa"], v["za"])
    f = compiled(path, *HASWELL)
    for x in [np.random.default_rng(5).standard_normal((1, 32, 14, 14)).astype(F32)]:
        codes = quantize(integer_reference(path, x), v["sy"], v["zy"]) - np.iinfo(np.uint8).min
        want = (table[codes].astype(F32) - F32(v["za"])) * v["sa"]
        np.testing.assert_array_equal(f(x), want)


@needs_iree
@pytest.mark.skipif(not host_has_avx2(), reason="the host lacks AVX2 (the kernels' target here: haswell)")
def test_a_lookup_no_kernel_takes_is_dqs_lookup_kernel(tmp_path):
    """A QDQ MatMul below the kernel's size stays IREE's; its activation's table, written where
    the kernel would have taken it, becomes one dispatch of dq's lookup kernel: the model's output
    is onnxruntime's table of IREE's codes (those of the same model without the activation)."""
    from dequant import iree as stage

    m, k, n = 4, 32, 24  # 3072 multiply-adds: below MIN_INTEGER_MACS
    path = matmul_model(tmp_path / "m.onnx", "GeluErf", m=m, k=k, n=n, codes=np.int8)
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    assert f"entry_points = [@dq_lookup_{m * n}::" in staged and "dq_matmul" not in staged
    model = onnx.load(path)
    g = model.graph
    del g.node[6:]  # up to the MatMul's codes, dequantized
    g.node.append(helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]))
    onnx.save(model, str(tmp_path / "codes.onnx"))
    v = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    table = region_table("GeluErf", v["sy"], v["zy"], v["sa"], v["za"])
    x = (np.random.default_rng(1).standard_normal((m, k)) * 3).astype(F32)
    codes = quantize(compiled(str(tmp_path / "codes.onnx"), *HASWELL)(x), v["sy"], v["zy"]) + 128  # int8 codes, lowest first
    want = (table[codes].astype(F32) - F32(v["za"])) * v["sa"]
    np.testing.assert_array_equal(compiled(path, *HASWELL)(x), want)


@needs_iree
@pytest.mark.skipif(not host_has_avx2(), reason="the host lacks AVX2 (the kernels' target here: haswell)")
def test_a_gate_is_looked_up_by_dqs_lookup_kernel(tmp_path):
    """A squeeze-and-excitation gate through dequant-iree: its Sigmoid is one dispatch of dq's
    lookup kernel on the pool's 16 codes; the block's output is onnxruntime's table of IREE's
    pool codes, times the block's values and quantized as ONNX says (numpy)."""
    from dequant import iree as stage

    path = gate_model(tmp_path / "m.onnx", "Sigmoid")
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    assert "entry_points = [@dq_lookup_16::" in staged and "onnx.Sigmoid" not in staged
    model = onnx.load(path)
    g = model.graph
    del g.node[5:]  # up to the pool's codes, dequantized
    g.node[-1].output[0] = "y"
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 1, 1]))
    onnx.save(model, str(tmp_path / "codes.onnx"))
    v = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    table = region_table("Sigmoid", v["sp"], v["zp"], v["sg"], v["zg"])
    x = (np.random.default_rng(2).standard_normal((1, 16, 8, 8)) * 3).astype(F32)
    pool = quantize(compiled(str(tmp_path / "codes.onnx"), *HASWELL)(x), v["sp"], v["zp"])
    gate = (table[pool].astype(F32) - F32(v["zg"])) * v["sg"]
    block = (quantize(x, v["sx"], v["zx"]).astype(F32) - F32(v["zx"])) * v["sx"]
    want = (quantize(block * gate, v["sy"], v["zy"]).astype(F32) - F32(v["zy"])) * v["sy"]
    np.testing.assert_array_equal(compiled(path, *HASWELL)(x), want)


def test_conv_codes_take_tables_after_qdq_conv_matmuls(tmp_path):
    """After qdq_conv_matmuls (its depthwise node), the rewrite finds the node's codes through the
    Transpose back to NCHW and puts the table before it."""
    path = depthwise_model(tmp_path / "m.onnx", 16, 3, 1, 8, (1, 1, 1, 1), per_channel=True)
    path = with_activation(path, "HardSwish", 0.04, np.uint8(2))
    model, _ = qdq_conv_matmuls.rewrite(onnx.load(path), (AVX2,))
    model, count = qdq_tables.rewrite(model)
    assert count == 1
    ops = [n.op_type for n in model.graph.node]
    at = ops.index("QLinearDepthwiseConv")
    assert ops[at + 1 : at + 4] == ["Cast", "Gather", "Transpose"]
