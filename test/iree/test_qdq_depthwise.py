"""QDQ depthwise convolutions through dq's depthwise kernel (python/qdq_depthwise.py,
passes/kernels/depthwise.py): one QDQ depthwise Conv through dequant-iree equal, bit for bit, to
its integer arithmetic in numpy (written from the ONNX spec: QuantizeLinear, an int64 depthwise
convolution of the codes, the f32 scale, bias and QuantizeLinear) and within one step of
onnxruntime on the QDQ graph as written; which Convs the rewrite takes.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from qdq_reference import compiled, quantize, save  # noqa: E402

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dequant import qdq_conv_matmuls, qdq_depthwise  # noqa: E402
from dequant.passes.target_features import AVX2, AVX512VNNI, host_has_avx2, host_has_avx512vnni  # noqa: E402

F32 = np.float32
HASWELL = ("--iree-llvmcpu-target-cpu=haswell",)


def depthwise_model(path, c: int, k: int, stride: int, size: int, pads, *, per_channel: bool, x_type=np.uint8, y_type=np.uint8,
                    bias: bool = True, dilations=None, seed: int = 0, sy=F32(0.05)) -> str:  # fmt: skip
    """x [1, c, size, size] f32 -> Q -> DQ -> Conv (`group` = c, k x k, `stride`, `pads`; int8
    weights per tensor or per channel, with zero points; an int32 bias) -> Q -> DQ -> y."""
    rng = np.random.default_rng(seed)
    zx = x_type(rng.integers(-20, 20) if x_type == np.int8 else rng.integers(100, 150))
    sw = (rng.uniform(0.002, 0.02, c) if per_channel else rng.uniform(0.002, 0.02, ())).astype(F32)
    zw = rng.integers(-5, 5, c if per_channel else ()).astype(np.int8)
    zy = np.array(y_type(3 if y_type == np.int8 else 120))
    init = {"sx": F32(0.037), "zx": np.array(zx), "w": rng.integers(-128, 128, (c, 1, k, k)).astype(np.int8), "sw": sw, "zw": zw,
            "bq": rng.integers(-5000, 5000, c).astype(np.int32), "sb": F32(0.037) * sw.reshape(-1)[0], "sy": F32(sy), "zy": zy}  # fmt: skip
    attrs = dict(group=c, kernel_shape=[k, k], strides=[stride, stride], pads=list(pads), **({"dilations": dilations} if dilations else {}))
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["bq", "sb"], ["bd"]),
        helper.make_node("Conv", ["xd", "wd", *(["bd"] if bias else [])], ["yc"], **attrs),
        helper.make_node("QuantizeLinear", ["yc", "sy", "zy"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]),
    ]
    (t, l, b, r), span = pads, (dilations or [1, 1])[0] * (k - 1) + 1
    out = [1, c, (size + t + b - span) // stride + 1, (size + l + r - span) // stride + 1]
    return save(path, nodes, [1, c, size, size], out, init)


def integer_reference(path: str, x: np.ndarray) -> np.ndarray:
    """The QDQ depthwise Conv of depthwise_model as integers: d = the convolution of (xq - zx)
    and (wq - zw) per channel in int64 (x padded with 0 after the subtraction, as the Conv pads
    its dequantized input), y = f32(sx * sw) * f32(d) + f32(bq * sb), then QuantizeLinear and
    DequantizeLinear."""
    model = onnx.load(path)
    v = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    a = {x.name: helper.get_attribute_value(x) for x in conv.attribute}
    k, s, (t, l, b, r) = a["kernel_shape"][0], a["strides"][0], a["pads"]
    xq = quantize(x, v["sx"], v["zx"]) - int(v["zx"])
    wq = v["w"].astype(np.int64) - v["zw"].astype(np.int64).reshape(-1, 1, 1, 1)
    xp = np.pad(xq[0], [(0, 0), (t, b), (l, r)])
    ho, wo = (xp.shape[1] - k) // s + 1, (xp.shape[2] - k) // s + 1
    d = np.zeros((wq.shape[0], ho, wo), np.int64)
    for i in range(k):
        for j in range(k):
            d += wq[:, 0, i, j].reshape(-1, 1, 1) * xp[:, i : i + s * (ho - 1) + 1 : s, j : j + s * (wo - 1) + 1 : s]
    scale = (v["sx"] * v["sw"]).astype(F32).reshape(-1, 1, 1)
    y = (scale * d.astype(F32)).astype(F32)
    if len(conv.input) > 2:
        y = (y + (v["bq"].astype(F32) * v["sb"]).astype(F32).reshape(-1, 1, 1)).astype(F32)
    return ((quantize(y, v["sy"], v["zy"]) - int(v["zy"])).astype(F32) * v["sy"])[None]


def exact(path, x: np.ndarray) -> np.ndarray:
    """onnxruntime on the QDQ graph as written (no QDQ fusion into integer kernels)."""
    return onnxruntime_reference.session(path).run(None, {"x": x})[0]


def taken(path, tags) -> int:
    model, count = qdq_conv_matmuls.rewrite(onnx.load(str(path)), tags)
    return sum(n.op_type == qdq_depthwise.OP and n.domain == qdq_depthwise.DOMAIN for n in model.graph.node)


def inputs(shape) -> list:
    """x drawn normal, and large (most codes saturate)."""
    rng = np.random.default_rng(5)
    return [rng.standard_normal(shape).astype(F32), (rng.standard_normal(shape) * 30).astype(F32)]


# (channels, kernel, stride, size, pads, per channel, x's type, y's type, bias): MobileNet's 3 x 3
# of strides 1 and 2, a 5 x 5 of stride 2 with uneven pads (MobileNetV3's), int8 codes in and out
# and no bias, a width that leaves a partial column tile (TILE = 4)
CONVS = {
    "3x3-s1-per-channel-uint8": (32, 3, 1, 14, (1, 1, 1, 1), True, np.uint8, np.uint8, True),
    "3x3-s2-per-tensor-uint8": (16, 3, 2, 15, (1, 1, 1, 1), False, np.uint8, np.uint8, True),
    "5x5-s2-uneven-pads": (24, 5, 2, 17, (1, 2, 2, 1), True, np.uint8, np.uint8, True),
    "3x3-s1-int8-no-bias": (8, 3, 1, 11, (1, 1, 1, 1), True, np.int8, np.int8, False),
}


@needs_iree
@pytest.mark.parametrize("cpu", ["host-vnni", "haswell"])
@pytest.mark.parametrize("name", list(CONVS))
def test_depthwise_through_the_kernel_is_the_integer_arithmetic(tmp_path, name, cpu):
    """One QDQ depthwise Conv through dequant-iree becomes one dispatch of dq's depthwise kernel
    (for the host with VNNI, 16 lanes where C is a multiple of 16; for haswell, AVX2, 8), its output equal, bit for bit, to the integer
    arithmetic in numpy, and within one step of onnxruntime on the QDQ graph as written (its f32
    sum may round across a step)."""
    from dequant import iree as stage

    if cpu == "host-vnni" and not host_has_avx512vnni():
        pytest.skip("the host lacks AVX-512 VNNI")
    if cpu == "haswell" and not host_has_avx2():
        pytest.skip("the host lacks AVX2")
    c, k, s, size, pads, per_channel, x_type, y_type, bias = CONVS[name]
    path = depthwise_model(tmp_path / "m.onnx", c, k, s, size, pads, per_channel=per_channel, x_type=x_type, y_type=y_type, bias=bias)
    assert taken(path, (AVX512VNNI,)) == 1 and taken(path, (AVX2,)) == 1
    flags = HASWELL if cpu == "haswell" else ()
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", *(("haswell",) if flags else ())))
    assert staged.count("entry_points = [@dq_depthwise") == 1 and "onnx.Conv" not in staged
    if cpu == "host-vnni":  # AVX-512's 16 lanes where C takes them (the staged text is the host's)
        assert bool(re.search(r"_l16(_rcp)?::", staged)) == (c % 16 == 0)
    f = compiled(path, *flags)
    for x in inputs((1, c, size, size)):
        got, want = f(x), integer_reference(path, x)
        np.testing.assert_array_equal(got, want)
        assert np.abs(got - exact(path, x)).max() <= F32(0.05) * 1.0001


def test_depthwise_convs_the_kernel_does_not_take_are_left(tmp_path):
    """Left for dequant.depthwise's slices: channels not a multiple of 8, dilations, a CPU with
    neither tag, a Conv read by something else than its QuantizeLinear."""
    args = dict(per_channel=True)
    assert taken(depthwise_model(tmp_path / "a.onnx", 16, 3, 1, 8, (1, 1, 1, 1), **args), (AVX2,)) == 1
    assert taken(depthwise_model(tmp_path / "b.onnx", 12, 3, 1, 8, (1, 1, 1, 1), **args), (AVX2,)) == 0
    assert taken(depthwise_model(tmp_path / "c.onnx", 16, 3, 1, 8, (2, 2, 2, 2), dilations=[2, 2], **args), (AVX2,)) == 0
    path = depthwise_model(tmp_path / "d.onnx", 16, 3, 1, 8, (1, 1, 1, 1), **args)
    assert taken(path, ()) == 0
    model = onnx.load(path)
    model.graph.output.append(helper.make_tensor_value_info("yc", TensorProto.FLOAT, None))
    assert qdq_conv_matmuls.rewrite(model, (AVX2,))[1] == 0


def test_node_has_the_dequant_domain(tmp_path):
    """The rewritten model declares the `dequant` domain, states the node's output type (ONNX's
    shape inference does not know the node) and passes onnx's checker; the codes reach it NHWC,
    unpadded (the node's `pads`: the kernel reads the padding as zx), and leave it NHWC."""
    path = depthwise_model(tmp_path / "m.onnx", 16, 3, 2, 15, (1, 1, 1, 1), per_channel=True)
    model, count = qdq_conv_matmuls.rewrite(onnx.load(path), (AVX2,))
    assert count == 1
    onnx.checker.check_model(model)
    assert any(o.domain == qdq_depthwise.DOMAIN for o in model.opset_import)
    node = next(n for n in model.graph.node if n.op_type == qdq_depthwise.OP)
    out = next(v for v in model.graph.value_info if v.name == node.output[0])
    assert [d.dim_value for d in out.type.tensor_type.shape.dim] == [1, 8, 8, 16]
    before = next(n for n in model.graph.node if n.output[0] == node.input[0])
    assert before.op_type == "Transpose" and list(before.attribute[0].ints) == qdq_depthwise.NHWC
    assert not any(n.op_type == "Pad" for n in model.graph.node)
    assert next(list(a.ints) for a in node.attribute if a.name == "pads") == [1, 1, 1, 1]


@needs_iree
@pytest.mark.skipif(not host_has_avx2(), reason="the host lacks AVX2 (the kernel's target here: haswell)")
def test_bias_added_to_the_rounded_product(tmp_path):
    """y = s * f32(d) rounded, then + b rounded, never one FMA (IREE marks the kernel's fmul and
    fadd `contract`): a depthwise Conv whose channel c has one tap w0[c] (the centre) and x codes
    zx + 1, so d = w0[c] at every pixel, and a bias making fl(fl(s * w0) + b) an exact tie of the
    codes that fl(s * w0 + b), fused, rounds above (the cases of test/kernels/test_requantize.py).
    Its output is the integer arithmetic (numpy, `integer_reference`), the tie's even code."""
    sw, c = F32(8.184809), 40
    s = np.float64(sw) / 2  # f32(sx * sw), sx = 0.5
    w0s, bqs = [], []
    for w0 in range(1, 128):
        rounded = np.float64(np.float32(s * w0))
        t = 0.5 + 2 * (len(w0s) % 50)
        bq = (t - rounded) * 2.0**16  # b = bq * 2^-16 exactly (bq even, below 2^25)
        if np.float32(s * w0 + (t - rounded)) > np.float32(t) and bq == int(bq) and abs(bq) < 2**25:
            w0s.append(w0)
            bqs.append(int(bq))
    assert len(w0s) >= c
    w = np.zeros((c, 1, 3, 3), np.int8)
    w[:, 0, 1, 1] = w0s[:c]
    init = {"sx": F32(0.5), "zx": np.uint8(3), "w": w, "sw": np.full(c, sw, F32), "zw": np.zeros(c, np.int8),
            "bq": np.array(bqs[:c], np.int32), "sb": F32(2.0**-16), "sy": F32(1), "zy": np.array(np.uint8(20))}  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=0), helper.make_node("DequantizeLinear", ["bq", "sb"], ["bd"]),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["yc"], group=c, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["yc", "sy", "zy"], ["yq"]), helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]  # fmt: skip
    path = save(tmp_path / "m.onnx", nodes, [1, c, 8, 8], [1, c, 8, 8], init)
    assert taken(path, (AVX2,)) == 1
    x = np.full((1, c, 8, 8), F32(0.5))  # xq = 4 = zx + 1
    got, want = compiled(path, *HASWELL)(x), integer_reference(path, x)
    assert (want % 2 == 0).all()  # the ties' even codes
    np.testing.assert_array_equal(got, want)


@needs_iree
@pytest.mark.skipif(not host_has_avx2(), reason="the host lacks AVX2 (the kernel's target here: haswell)")
def test_quotients_past_two_to_the_31_saturate(tmp_path):
    """sy = 2^-40 and no bias: |y / sy| passes 2^31 from the sums alone wherever d is not 0,
    so the stage cannot bound the quotient (passes/kernels/qdq.py's `quotient_bound`) and the
    AVX2 kernel caps it before its conversion (no `_bd`; vcvtps2dq's overflow, INT_MIN, would
    saturate to 0): the codes at both ends of the range, bit for bit the integer arithmetic."""
    from dequant import iree as stage

    path = depthwise_model(tmp_path / "m.onnx", 16, 3, 1, 12, (1, 1, 1, 1), per_channel=True, bias=False, sy=F32(2.0**-40))
    staged = stage.prepare(stage.import_onnx(path, "llvm-cpu", "haswell"))
    assert re.search(r"entry_points = \[@dq_depthwise_\w+_rcp::", staged)
    f = compiled(path, *HASWELL)
    for x in inputs((1, 16, 12, 12)):
        got = f(x)
        np.testing.assert_array_equal(got, integer_reference(path, x))
        assert got.min() < 0 < got.max()  # (q - zy) * sy: codes 0 and 255 both
