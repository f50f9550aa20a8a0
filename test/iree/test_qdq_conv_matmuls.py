"""QDQ convolutions as QDQ MatMuls of their im2col'd codes, for dq's int8 kernel (python/qdq_conv_matmuls.py):
one QDQ Conv through dequant-iree equal, bit for bit, to the Conv's integer arithmetic in numpy
(written from the ONNX spec: QuantizeLinear, an int64 convolution of the codes, the f32 scale, bias
and QuantizeLinear); which Convs it takes (any number of output channels, a CPU whose tags take
the kernel); the model's input quantized into NHWC codes by dq's kernel, code for code ONNX's
QuantizeLinear; QDQ ResNet-style models against onnxruntime on the QDQ graph.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from requires import needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402
from qdq_reference import compiled, quantize, save  # noqa: E402

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnx.reference.op_run import OpRun  # noqa: E402

import iree_models  # noqa: E402

from dequant import iree as stage  # noqa: E402
from dequant import qdq_conv_matmuls, qdq_layout  # noqa: E402
from dequant.passes.target_features import AVX2, AVX512VNNI, host_has_avx2, host_has_avx512vnni  # noqa: E402
from dequant.passes.torch_onnx_to_dq_iree import MIN_INTEGER_MACS  # noqa: E402

F32 = np.float32
HASWELL = ("--iree-llvmcpu-target-cpu=haswell",)


def conv_model(path, c: int, cout: int, k: int, stride: int, size: int, *, per_channel: bool, x_type=np.int8, seed: int = 0,
               kernel: tuple | None = None, strides: tuple | None = None, pads: tuple | None = None, hw: tuple | None = None,
               pool: tuple | None = None, y_type=np.int8) -> str:
    """x [1, c, size, size] f32 -> Q -> DQ -> Conv (k x k, `stride`, pads k // 2; int8 weights per
    tensor or per output channel, with zero points; an int32 bias) -> Q -> DQ -> y. `kernel` (kh,
    kw), `strides` (sh, sv), `pads` (top, left, bottom, right) and `hw` (x's height and width), where
    given, in place of those. `pool` (k, stride, pads): y is then DQ, MaxPool (k x k), Q, DQ of the
    Conv's codes, as quantize_static writes a MaxPool. `y_type`: the output codes' type."""
    rng = np.random.default_rng(seed)
    (kh, kw), (sh, sv) = kernel or (k, k), strides or (stride, stride)
    pads, (h, w) = pads or (k // 2,) * 4, hw or (size, size)
    zx = x_type(rng.integers(-20, 20) if x_type == np.int8 else rng.integers(100, 150))
    sw = (rng.uniform(0.002, 0.02, cout) if per_channel else rng.uniform(0.002, 0.02, ())).astype(F32)
    zw = rng.integers(-5, 5, cout if per_channel else ()).astype(np.int8)
    init = {
        "sx": F32(0.037), "zx": np.array(zx), "w": rng.integers(-128, 128, (cout, c, kh, kw)).astype(np.int8), "sw": sw, "zw": zw,
        "bq": rng.integers(-5000, 5000, cout).astype(np.int32), "sb": F32(0.037) * sw.reshape(-1)[0], "sy": F32(0.21), "zy": np.array(y_type(3)),
    }  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["bq", "sb"], ["bd"]),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["yc"], kernel_shape=[kh, kw], strides=[sh, sv], pads=list(pads)),
        helper.make_node("QuantizeLinear", ["yc", "sy", "zy"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]),
    ]
    ho, wo = (h + pads[0] + pads[2] - kh) // sh + 1, (w + pads[1] + pads[3] - kw) // sv + 1
    if pool is not None:
        pk, ps, pp = pool
        nodes[-1].output[0] = "yd"
        nodes += [helper.make_node("MaxPool", ["yd"], ["yp"], kernel_shape=[pk, pk], strides=[ps, ps], pads=[pp] * 4),
                  helper.make_node("QuantizeLinear", ["yp", "sy", "zy"], ["pq"]), helper.make_node("DequantizeLinear", ["pq", "sy", "zy"], ["y"])]  # fmt: skip
        ho, wo = (ho + 2 * pp - pk) // ps + 1, (wo + 2 * pp - pk) // ps + 1
    return save(path, nodes, [1, c, h, w], [1, cout, ho, wo], init)


def taps(x: np.ndarray, kernel, strides, pads, fill, axes=(2, 3)) -> list:
    """x padded by `pads` (top, left, bottom, right) with `fill` along its height and width
    `axes`, cut into the strided views under each of its kh x kw taps, tap-major: windows of the
    convolution's or the pool's output positions (ONNX's floor rounding)."""
    (kh, kw), (sh, sv), (top, left, bottom, right) = kernel, strides, pads
    widths = [(0, 0)] * x.ndim
    widths[axes[0]], widths[axes[1]] = (top, bottom), (left, right)
    xp = np.pad(x, widths, constant_values=fill)
    ho, wo = (xp.shape[axes[0]] - kh) // sh + 1, (xp.shape[axes[1]] - kw) // sv + 1
    views = []
    for i in range(kh):
        for j in range(kw):
            at = [slice(None)] * x.ndim
            at[axes[0]], at[axes[1]] = slice(i, i + sh * (ho - 1) + 1, sh), slice(j, j + sv * (wo - 1) + 1, sv)
            views.append(xp[tuple(at)])
    return views


def integer_reference(path: str, x: np.ndarray) -> np.ndarray:
    """The QDQ Conv of conv_model as integers: d = the convolution of (xq - zx) and (wq - zw) in
    int64 (x padded with 0 after the subtraction, as the Conv pads its dequantized input), y =
    f32(sx * sw) * f32(d) + f32(bq * sb), then QuantizeLinear and DequantizeLinear."""
    model = onnx.load(path)
    v = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    a = {x.name: helper.get_attribute_value(x) for x in conv.attribute}
    xq = quantize(x, v["sx"], v["zx"]) - int(v["zx"])
    wq = v["w"].astype(np.int64) - v["zw"].astype(np.int64).reshape(-1, 1, 1, 1)
    kw = a["kernel_shape"][1]
    d = sum(np.einsum("oc,chw->ohw", wq[:, :, t // kw, t % kw], view[0]) for t, view in enumerate(taps(xq, a["kernel_shape"], a["strides"], a["pads"], 0)))
    scale = (v["sx"] * v["sw"]).astype(F32).reshape(-1, 1, 1)
    b = (v["bq"].astype(F32) * v["sb"]).astype(F32).reshape(-1, 1, 1)
    y = (scale * d.astype(F32) + b).astype(F32)
    return ((quantize(y, v["sy"], v["zy"]) - int(v["zy"])).astype(F32) * v["sy"])[None]


def exact(path, x: np.ndarray) -> np.ndarray:
    """onnxruntime on the QDQ graph as written (no QDQ fusion into integer kernels)."""
    return onnxruntime_reference.session(path).run(None, {"x": x})[0]


class Im2col(OpRun):
    """The stage's dequant.Im2col node (python/qdq_conv_matmuls.py), as its docstring defines it,
    for onnx.reference: x [N, H, W, C] padded with zx, each output position's taps tap-major,
    the rows padded with zx to `columns`."""

    op_domain = "dequant"

    def _run(self, x, zx, kernel_shape=None, strides=None, pads=None, columns=None):
        rows = np.concatenate(taps(x, kernel_shape, strides, pads, zx, axes=(1, 2)), axis=3)
        rows = rows.reshape(-1, kernel_shape[0] * kernel_shape[1] * x.shape[3])
        return (np.pad(rows, [(0, 0), (0, columns - rows.shape[1])], constant_values=zx),)


class NhwcMaxPool(OpRun):
    """The stage's dequant.NhwcMaxPool node (python/qdq_conv_matmuls.py), ONNX's MaxPool on NHWC
    codes, for onnx.reference: each window's largest code, the padding no value (the type's
    lowest, which a window's codes in x are at least)."""

    op_domain = "dequant"

    def _run(self, x, kernel_shape=None, strides=None, pads=None):
        return (np.max(taps(x, kernel_shape, strides, pads, np.iinfo(x.dtype).min, axes=(1, 2)), axis=0),)


class NhwcQuantizeLinear(OpRun):
    """The stage's dequant.NhwcQuantizeLinear node (python/qdq_conv_matmuls.py), ONNX's
    QuantizeLinear of an NCHW image, its codes NHWC, for onnx.reference."""

    op_domain = "dequant"

    def _run(self, x, scale, zero_point=None):
        zero_point = np.uint8(0) if zero_point is None else zero_point
        return (quantize(x, scale, zero_point).astype(zero_point.dtype).transpose(0, 2, 3, 1),)


def rewritten(model, x: np.ndarray) -> np.ndarray:
    """onnx.reference on a rewritten model (its dequant.Im2col, dequant.NhwcMaxPool and
    dequant.NhwcQuantizeLinear nodes by `Im2col`, `NhwcMaxPool` and `NhwcQuantizeLinear`;
    onnxruntime does not know them)."""
    return ReferenceEvaluator(model, new_ops=[Im2col, NhwcMaxPool, NhwcQuantizeLinear]).run(None, {"x": x})[0]


def run(path, *flags) -> tuple:
    """The compiled model's function and the stage's Summary."""
    summaries = []
    return compiled(path, *flags, report=summaries.append), summaries[0]


def taken(path, tags) -> int:
    return qdq_conv_matmuls.rewrite(onnx.load(str(path)), tags)[1]


# (input channels, output channels, kernel, stride, size, per channel, x's type): the stem's 7 x 7
# of 3 channels (K = 147, padded to 160), 3 x 3 of strides 1 and 2, a 1 x 1 of stride 2, and 24
# output channels (no whole workgroup: 1.5 groups of 16 with VNNI, 3 of 8 with AVX2)
CONVS = {
    "stem-7x7-s2-per-tensor": (3, 64, 7, 2, 32, False, np.int8),
    "3x3-s1-per-channel-uint8": (16, 64, 3, 1, 16, True, np.uint8),
    "3x3-s2-per-tensor": (32, 128, 3, 2, 17, False, np.int8),
    "1x1-s2-per-channel": (64, 64, 1, 2, 32, True, np.int8),
    "3x3-s1-24-channels-uint8": (16, 24, 3, 1, 16, True, np.uint8),
}


def inputs(shape) -> list:
    """x drawn normal, and large (most codes saturate)."""
    rng = np.random.default_rng(5)
    return [rng.standard_normal(shape).astype(F32), (rng.standard_normal(shape) * 30).astype(F32)]


@needs_iree
@pytest.mark.parametrize("cpu", ["host-vnni", "haswell"])
@pytest.mark.parametrize("name", list(CONVS))
def test_conv_through_the_int8_kernel_is_the_integer_arithmetic(tmp_path, name, cpu):
    """One QDQ Conv through dequant-iree becomes one dispatch of dq's QDQ MatMul kernel (VNNI; AVX2
    for haswell), its output equal, bit for bit, to the integer arithmetic in numpy, and within
    one step of onnxruntime on the QDQ graph as written (its f32 sum may round across a step)."""
    if cpu == "host-vnni" and not host_has_avx512vnni():
        pytest.skip("the host lacks AVX-512 VNNI")
    if cpu == "haswell" and not host_has_avx2():
        pytest.skip("the host lacks AVX2")
    c, cout, k, s, size, per_channel, x_type = CONVS[name]
    path = conv_model(tmp_path / "m.onnx", c, cout, k, s, size, per_channel=per_channel, x_type=x_type)
    assert taken(path, (AVX512VNNI,)) == 1 and taken(path, (AVX2,)) == 1
    f, summary = run(path, *(HASWELL if cpu == "haswell" else ()))
    assert summary.fused == 1
    for x in inputs((1, c, size, size)):
        got, want = f(x), integer_reference(path, x)
        np.testing.assert_array_equal(got, want)
        assert np.abs(got - exact(path, x)).max() <= F32(0.21) * 1.0001


@needs_iree
@pytest.mark.parametrize("seed", range(4))
def test_im2col_of_any_window_is_the_integer_arithmetic(tmp_path, seed):
    """Convolutions of random windows (rectangular taps, strides 1 to 3 each way, pads 0 to the
    taps' size less one on each side, channel counts of no particular multiple, x not square)
    through dequant-iree: dq's im2col dispatch writes the rows the kernel sums, the output bit for
    bit the integer arithmetic in numpy."""
    if not host_has_avx2():
        pytest.skip("the host lacks AVX2 (dq's QDQ kernels)")
    rng = np.random.default_rng(100 + seed)
    kh, kw, sh, sv = (int(v) for v in rng.integers(1, 6, 2).tolist() + rng.integers(1, 4, 2).tolist())
    pads = tuple(int(rng.integers(0, t)) if t > 1 else 0 for t in (kh, kw, kh, kw))
    c, h, w = int(rng.integers(1, 21)), int(rng.integers(kh + 2, 15)), int(rng.integers(kw + 2, 15))
    x_type = (np.int8, np.uint8)[seed % 2]
    rows = ((h + pads[0] + pads[2] - kh) // sh + 1) * ((w + pads[1] + pads[3] - kw) // sv + 1)
    cout = -(-MIN_INTEGER_MACS // (rows * -(-kh * kw * c // 16) * 16))  # enough for the rewrite to take it
    path = conv_model(tmp_path / "m.onnx", c, cout, 0, 0, 0, per_channel=bool(seed % 2), x_type=x_type, seed=seed, kernel=(kh, kw), strides=(sh, sv), pads=pads, hw=(h, w))
    f, summary = run(path)
    assert summary.fused == 1, (kh, kw, sh, sv, pads, c, h, w, cout)
    for x in inputs((1, c, h, w)):
        np.testing.assert_array_equal(f(x), integer_reference(path, x))


@needs_iree
@pytest.mark.parametrize("pool, y_type", [((3, 2, 1), np.int8), ((3, 2, 1), np.uint8), ((2, 2, 0), np.int8), ((3, 1, 1), np.uint8)],
                         ids=["k3-s2-p1-int8", "k3-s2-p1-uint8", "k2-s2-p0-int8", "k3-s1-p1-uint8"])  # fmt: skip
def test_maxpool_of_nhwc_codes_is_the_integer_arithmetic(tmp_path, pool, y_type):
    """A QDQ MaxPool after a rewritten Conv (72 channels: a vector of 64 and the rest; int8 and
    uint8 codes, compared as such) through dequant-iree: the pair dropped (dequant.qdq_layout), the
    pool a dispatch of dq's max pooling kernel on the Conv's NHWC codes, the output bit for bit the
    Conv's integer arithmetic in numpy pooled (the padding no value)."""
    if not host_has_avx2():
        pytest.skip("the host lacks AVX2 (dq's QDQ kernels)")
    path = conv_model(tmp_path / "m.onnx", 16, 72, 3, 1, 16, per_channel=True, x_type=np.uint8, pool=pool, y_type=y_type)
    text = stage.prepare(stage.import_onnx(path, "llvm-cpu"))
    assert "@dq_maxpool_" in text and "onnx.MaxPool" not in text
    f, _ = run(path)
    k, s, p = pool
    for x in inputs((1, 16, 16, 16)):
        want = np.max(taps(integer_reference(path, x), (k, k), (s, s), (p,) * 4, -np.inf), axis=0)
        np.testing.assert_array_equal(f(x), want)


def identity_conv_model(path, c: int, h: int, w: int, x_type, sx: float) -> str:
    """x [1, c, h, w] f32 -> Q (sx, zx) -> DQ -> a 1 x 1 Conv of 64 output channels, channel o
    the input's o mod c (weights 1 and 0, scale 1) -> Q -> DQ, the output's scale and zero point
    x's: y[o] = (xq[o mod c] - zx) * sx, so every code of x's QuantizeLinear is in y."""
    zx = x_type(7 if x_type == np.int8 else 131)
    weights = (np.arange(64)[:, None] % c == np.arange(c)[None, :]).astype(np.int8).reshape(64, c, 1, 1)
    init = {"sx": F32(sx), "zx": np.array(zx), "w": weights, "sw": F32(1), "zw": np.int8(0)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd"], ["yc"], kernel_shape=[1, 1]),
        helper.make_node("QuantizeLinear", ["yc", "sx", "zx"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "sx", "zx"], ["y"]),
    ]
    return save(path, nodes, [1, c, h, w], [1, 64, h, w], init)


@needs_iree
@pytest.mark.parametrize("c, h, w, x_type, sx", [(3, 24, 24, np.uint8, 0.25), (3, 24, 24, np.int8, 0.037), (1, 20, 29, np.int8, 0.25),
                                                 (4, 25, 21, np.uint8, 0.011), (8, 16, 37, np.int8, 1e-35)],
                         ids=["c3-uint8-ties", "c3-int8", "c1-tail-int8", "c4-tail-uint8", "c8-tail-divided"])  # fmt: skip
def test_input_quantizelinear_becomes_nhwc_codes(tmp_path, c, h, w, x_type, sx):
    """The QuantizeLinear of a model's f32 image (C <= 8) before a rewritten Conv through
    dequant-iree: one dispatch of dq's NHWC quantize kernel (its division as a split reciprocal
    where kernels/reciprocal.py allows it, else divided: a scale of 1e-35), and every code ONNX's
    QuantizeLinear (ties to even: the scale 0.25 makes x / sx halves exactly; saturation; -0; W
    not a multiple of the kernel's 8 pixels)."""
    if not host_has_avx2():
        pytest.skip("the host lacks AVX2 (dq's QDQ kernels)")
    path = identity_conv_model(tmp_path / "m.onnx", c, h, w, x_type, sx)
    text = stage.prepare(stage.import_onnx(path, "llvm-cpu"))
    assert f"@dq_quantize_nhwc_{'u8' if x_type == np.uint8 else 'i8'}_n1_c{c}_h{h}_w{w}" + ("_rcp" if sx != 1e-35 else "") + "::" in text
    f, _ = run(path)
    v = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    rng = np.random.default_rng(c * 100 + w)
    halves = ((rng.integers(-300, 300, (1, c, h, w)) + F32(0.5)) * F32(sx)).astype(F32)
    picks = [rng.standard_normal((1, c, h, w)).astype(F32) * F32(40 * sx), halves]
    special = picks[0].copy()
    special.reshape(-1)[:4] = [-0.0, 0.0, 1e30, -1e30]
    info, zx = np.iinfo(x_type), int(v["zx"])
    for x in picks + [special]:
        with np.errstate(over="ignore"):  # x / 1e-35 overflows to inf, which saturates
            codes = np.clip(np.rint(x / v["sx"]), info.min - zx, info.max - zx)  # QuantizeLinear less zx, saturated before any cast
        want = (codes.astype(F32) * v["sx"])[:, np.arange(64) % c]
        np.testing.assert_array_equal(f(x), want)


def test_convs_the_kernel_does_not_take_are_left(tmp_path):
    """Any number of output channels is taken (48 and 96: no multiple of VNNI's 64 columns), but
    not on a CPU with neither tag, nor a Conv read by something else than a QuantizeLinear, nor
    weights a DequantizeLinear refuses: the Conv stays."""
    assert taken(conv_model(tmp_path / "a.onnx", 16, 48, 3, 1, 16, per_channel=True), (AVX512VNNI,)) == 1
    path = conv_model(tmp_path / "b.onnx", 16, 96, 3, 1, 16, per_channel=True)
    assert taken(path, (AVX512VNNI,)) == 1 and taken(path, (AVX2,)) == 1
    assert taken(path, ()) == 0
    model = onnx.load(path)
    model.graph.output.append(helper.make_tensor_value_info("yc", TensorProto.FLOAT, None))
    assert qdq_conv_matmuls.rewrite(model, (AVX2,))[1] == 0
    model = onnx.load(path)  # per-channel weights along an axis out of range: left for the importer's error
    next(n for n in model.graph.node if n.output[0] == "wd").attribute[0].i = 4
    assert qdq_conv_matmuls.rewrite(model, (AVX2,))[1] == 0


def test_rewritten_model_computes_the_conv(tmp_path):
    """The rewritten model under onnx.reference (a float MatMul of the im2col'd, dequantized codes)
    against the Conv as written: within one output step, equal but for rare roundings of the
    two f32 sums, and no Conv left; padding (the stem's 7 x 7) reads zx, which dequantizes to 0."""
    path = conv_model(tmp_path / "m.onnx", 3, 64, 7, 2, 32, per_channel=False)
    model, count = qdq_conv_matmuls.rewrite(onnx.load(path), (AVX512VNNI,))
    assert count == 1 and not any(n.op_type == "Conv" for n in model.graph.node)
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node].count("Im2col") == 1
    for x in inputs((1, 3, 32, 32)):
        got, want = rewritten(model, x), exact(path, x)
        assert np.abs(got - want).max() <= F32(0.21) * 1.0001 and np.mean(got != want) <= 0.01


@needs_iree
def test_resnet_through_the_int8_kernel(tmp_path, per_channel=True):
    """The ResNet-18-style model at 64 x 64 (int8 activations; weights per channel: per tensor,
    test_iree.py's whole-model test): its 20 convolutions taken by dq's kernel, the output as far
    from onnxruntime on the QDQ graph as written as onnxruntime's own integer kernels are (deep
    networks carry a flipped requantization forward,
    docs/semantics.md#qdq-convolutions-as-int8-matmuls)."""
    if not host_has_avx512vnni():
        pytest.skip("the host lacks AVX-512 VNNI")
    logging.disable(logging.WARNING)
    path = iree_models.quantize_static_file(iree_models.resnet(tmp_path / "f.onnx", 64, 10), tmp_path / "m.onnx", (1, 3, 64, 64),
                                            per_channel=per_channel, activations="int8")  # fmt: skip
    f, summary = run(path)
    assert summary.fused == 20
    fused = onnxruntime_reference.session(path, optimized=True)
    for x in inputs((1, 3, 64, 64))[:1] + [np.random.default_rng(s).standard_normal((1, 3, 64, 64)).astype(F32) for s in (1, 2)]:
        want = exact(path, x)
        ours, theirs = np.abs(f(x) - want).max(), np.abs(fused.run(None, {"x": x})[0] - want).max()
        assert ours <= max(theirs, 0.03 * np.abs(want).max())


def test_resnet_codes_stay_nhwc_between_convolutions(tmp_path):
    """The ResNet-18-style model rewritten: no Transpose reads a Transpose, the NCHW views of the
    convolutions' NHWC codes moved past the pairs and residual Adds (fewer Transposes than
    rewritten Convs); onnx.reference on the rewritten model as far from the QDQ graph as written as
    its own integer kernels are (the float MatMuls sum in another order than the Convs)."""
    logging.disable(logging.WARNING)
    path = iree_models.quantize_static_file(iree_models.resnet(tmp_path / "f.onnx", 64, 10), tmp_path / "m.onnx", (1, 3, 64, 64),
                                            per_channel=False, activations="int8")  # fmt: skip
    model = onnx.load(path)
    assert qdq_layout.rewrite(model, qdq_layout.SELECTIONS) == 1  # the MaxPool on codes, as the stage writes it
    model, count = qdq_conv_matmuls.rewrite(model, (AVX512VNNI,))
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node].count("NhwcMaxPool") == 1
    producers = {o: n for n in model.graph.node for o in n.output}
    transposes = [n for n in model.graph.node if n.op_type == "Transpose"]
    assert count == 20 and len(transposes) < count
    assert not any(producers.get(n.input[0]) is not None and producers[n.input[0]].op_type == "Transpose" for n in transposes)
    fused = onnxruntime_reference.session(path, optimized=True)
    for x in [np.random.default_rng(s).standard_normal((1, 3, 64, 64)).astype(F32) for s in range(3)]:
        want = exact(path, x)
        ours, theirs = np.abs(rewritten(model, x) - want).max(), np.abs(fused.run(None, {"x": x})[0] - want).max()
        assert ours <= max(theirs, 0.03 * np.abs(want).max())
