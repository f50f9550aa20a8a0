"""The QDQ kernels' requantize (passes/kernels/qdq.py, `Requantize.quantized`) at the codes'
rounding boundaries: saturate(roundeven(y / sy) + zy) with y / sy a true f32 division, as ONNX's
QuantizeLinear computes it (docs/semantics.md#the-integer-route-of-qdq-matmuls). Each case is one
QDQ MatMul whose x is all zero (xq = zx, so d = 0 and y = b exactly) followed by its bias Add and
a QuantizeLinear, the epilogue the kernel fuses: the codes of b chosen at every half-integer
boundary of b / sy, within a few ulps of it, and on it (ties), held to onnx.reference's
QuantizeLinear. Among them are values where y * f32(1 / sy) rounds to another code (asserted): a
kernel multiplying by the reciprocal alone fails here. The ordinary and negative scales' kernels
compute y / sy by the split reciprocal (fma(y, zh, y * zl): passes/kernels/reciprocal.py), the
scale whose reciprocal is subnormal (past its range) by a division.
"""

from __future__ import annotations

import numpy as np
import pytest

from . import harness
from .harness import needs_iree, save

from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the harness: skipped without onnx)

pytestmark = needs_iree

ROWS, K = 128, 16  # 128 x 16 x N multiply-adds: the stage takes a QDQ MatMul from 2^19
ZY = np.uint8(20)  # codes of b / sy from -20 to 235 unsaturated
# sy: an ordinary scale, and one whose reciprocal (about 2^-126.6) is subnormal;
# each with the codes n of b whose boundaries n + 0.5 are tried (the large scale's products of
# larger codes would overflow), b within so many ulps of each boundary (N of 2^19 / (ROWS * K) or more)
# and a negative one (ONNX does not forbid it)
SCALES = {"ordinary": np.float32(0.0371), "large": np.float32(1.5 * 2.0**126), "negative": np.float32(-0.0371)}
CODES = {"ordinary": range(-25, 240), "large": range(-2, 2), "negative": range(-25, 240)}
SPLIT = {"ordinary": "_rcp", "large": "", "negative": "_rcp"}  # the kernels' names: by the split reciprocal or a division
ULPS = {"ordinary": 6, "large": 40, "negative": 6}


def boundaries(scale: str) -> np.ndarray:
    """f32 values b near (n + 0.5) * sy for every n of CODES, each within ULPS ulps."""
    centres = np.float32((np.array(CODES[scale]) + 0.5) * np.float64(SCALES[scale]))
    return np.unique(np.concatenate([_step(centres, s) for s in range(-ULPS[scale], ULPS[scale] + 1)]))


def _step(v: np.ndarray, ulps: int) -> np.ndarray:
    """v moved by `ulps` ulps (f32)."""
    to = np.float32(np.inf) if ulps > 0 else np.float32(-np.inf)
    for _ in range(abs(ulps)):
        v = np.nextafter(v, to, dtype=np.float32)
    return v


def model(path) -> list:
    """One QDQ MatMul per scale on x<i> [ROWS, K], then Add b<i> and QuantizeLinear(sy, ZY)."""
    nodes, inits, inputs, outputs, bs = [], [], [], [], []
    for i, (scale, sy) in enumerate(SCALES.items()):
        b = boundaries(scale)
        n = b.size
        w = np.random.default_rng(i).integers(-128, 128, (K, n)).astype(np.int8)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(np.array(0.01, np.float32), f"sw{i}"),
                  numpy_helper.from_array(np.array(0.5, np.float32), f"sx{i}"), numpy_helper.from_array(np.array(3, np.uint8), f"zx{i}"),
                  numpy_helper.from_array(b, f"b{i}"), numpy_helper.from_array(np.array(sy), f"sy{i}"),
                  numpy_helper.from_array(np.array(ZY), f"zy{i}")]  # fmt: skip
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"sx{i}", f"zx{i}"], [f"xq{i}"]),
                  helper.make_node("DequantizeLinear", [f"xq{i}", f"sx{i}", f"zx{i}"], [f"xf{i}"]),
                  helper.make_node("DequantizeLinear", [f"w{i}", f"sw{i}"], [f"wf{i}"]),
                  helper.make_node("MatMul", [f"xf{i}", f"wf{i}"], [f"y0{i}"]),
                  helper.make_node("Add", [f"y0{i}", f"b{i}"], [f"yb{i}"]),
                  helper.make_node("QuantizeLinear", [f"yb{i}", f"sy{i}", f"zy{i}"], [f"y{i}"])]  # fmt: skip
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [ROWS, K]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.UINT8, [ROWS, n]))
        bs.append(b)
    save(path, nodes, inits, inputs, outputs)
    return bs


@pytest.fixture(scope="module", params=["cascadelake", "haswell"])
def built(request, tmp_path_factory):
    cpu = request.param
    avx2 = cpu == "haswell"
    # on AVX2 the sign-split form (the weights' pairs could saturate vpmaddubsw of x as it is)
    # on AVX2 `_bd`: |y / sy| stays below 2^30 for every x, so no cap before the conversion
    names = [f"dq_matmul_qdq{'_avx2s' if avx2 else ''}_u8_i8_k{K}_n{boundaries(s).size}_qu8_b{SPLIT[s]}{'_bd' if avx2 else ''}" for s in SCALES]
    bs, run = harness.built(tmp_path_factory, f"requantize-{cpu}", cpu, model, harness.dispatches(len(SCALES), names),
                            tags=("dq.avx2",) if avx2 else ())  # fmt: skip
    xs = [np.zeros((ROWS, K), np.float32) for _ in bs]  # xq = zx: d = 0, y = b
    return bs, run(*xs)


def reference(b: np.ndarray, sy: np.float32) -> np.ndarray:
    """onnx.reference's QuantizeLinear of b (uint8, zero point ZY)."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("QuantizeLinear", ["b", "sy", "zy"], ["y"])
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, list(b.shape))],
                              [numpy_helper.from_array(np.array(sy), "sy"), numpy_helper.from_array(np.array(ZY), "zy")])  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return ReferenceEvaluator(onnx.ModelProto.FromString(m.SerializeToString())).run(None, {"b": b})[0]


@pytest.mark.parametrize("scale", list(SCALES))
def test_requantize_at_rounding_boundaries(built, scale):
    bs, got = built
    i = list(SCALES).index(scale)
    b, sy, got = bs[i], SCALES[scale], got[i]
    want = np.broadcast_to(reference(b, sy), got.shape)
    np.testing.assert_array_equal(got.view(np.uint8), want)
    # the cases the product alone gets wrong, and exact ties, are among them
    q = b / sy  # f32 division, correctly rounded
    product = np.clip(np.rint(b * (np.float32(1) / sy)) + ZY, 0, 255)
    assert (product != np.clip(np.rint(q) + ZY, 0, 255)).any()
    if scale != "large":
        assert (q == np.floor(q) + np.float32(0.5)).sum() > 10  # ties, rounded to even


# --- the bias after the scaled sum: two roundings ---------------------------------------------

SW = np.float32(8.184809)  # s = f32(sx * sw) = sw / 2 (sx a power of two): w0 * s is rarely an f32
SY = np.float32(1.0)
P_ROWS = 1024  # P_ROWS x K x N from 2^19 multiply-adds: the stage takes the MatMul


def product_cases() -> tuple:
    """(w0 [N] int8, b [N] f32) of the columns where y = fl(fl(s * w0) + b) is an exact tie
    n + 0.5 of the codes (rounded to even n) and fl(s * w0 + b), the product and the sum fused
    into one rounding, rounds above it (to n + 1): every w0 of int8 but 0 whose product falls
    so, with n = 0, 2, 4, ..."""
    s = np.float64(SW) / 2
    w0s, bs = [], []
    for w0 in range(-128, 128):
        p = s * w0  # exact in float64
        rounded = np.float64(np.float32(p))
        t = 0.5 + 2 * (len(w0s) % 50)
        b = np.float32(t - rounded)
        if w0 and np.float64(b) == t - rounded and np.float32(p + np.float64(b)) > np.float32(t):
            w0s.append(w0)
            bs.append(b)
    return np.array(w0s, np.int8), np.array(bs, np.float32)


def one_matmul(path, w: np.ndarray, sw: np.float32, rows: int, b: np.ndarray | None, sy: np.float32, zy) -> None:
    """x [rows, K] -> Q(sx 0.5, zx 3) -> DQ -> MatMul(DQ(w, sw)) (-> Add b) -> Q(sy, zy): y of zy's
    type (uint8 or int8), [rows, N]."""
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.float32(sw), "sw"), numpy_helper.from_array(np.float32(0.5), "sx"),
             numpy_helper.from_array(np.uint8(3), "zx"), numpy_helper.from_array(np.float32(sy), "sy"), numpy_helper.from_array(np.array(zy), "zy")]  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "sw"], ["wf"]), helper.make_node("MatMul", ["xf", "wf"], ["y0"])]  # fmt: skip
    if b is not None:
        inits.append(numpy_helper.from_array(b, "b"))
        nodes.append(helper.make_node("Add", ["y0", "b"], ["yb"]))
    nodes.append(helper.make_node("QuantizeLinear", ["yb" if b is not None else "y0", "sy", "zy"], ["y"]))
    out = TensorProto.UINT8 if np.array(zy).dtype == np.uint8 else TensorProto.INT8
    save(path, nodes, inits, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, K])], [helper.make_tensor_value_info("y", out, [rows, w.shape[1]])])


def product_model(path) -> tuple:
    """x [P_ROWS, K] -> Q(sx 0.5, zx 3) -> DQ -> MatMul(DQ(w, SW)) -> Add b -> Q(SY, ZY): w's row 0
    holds the cases' w0 (the other rows 0), so x with xq - zx = 1 at k = 0 makes d = w0."""
    w0, b = product_cases()
    w = np.zeros((K, w0.size), np.int8)
    w[0] = w0
    one_matmul(path, w, SW, P_ROWS, b, SY, ZY)
    return w0, b


@pytest.mark.parametrize("cpu", ["cascadelake", "haswell"])
def test_bias_added_to_the_rounded_product(tmp_path_factory, cpu):
    """y = s * f32(d) rounded, then + b rounded (ONNX's MatMul then Add), never one FMA: at every
    case of `product_cases` the codes are the tie's even one, as ONNX's MatMul (of 0.5 and
    f32(w0 * sw): fl(s * w0)), Add and QuantizeLinear compute them, in numpy (IREE marks the
    kernel's fmul and fadd `contract`; fused, they came out one code higher)."""
    avx2 = cpu == "haswell"
    n = product_cases()[0].size
    assert n > 50
    # SY = 1: zh = 1, zl = 0; on AVX2 the vpmaddubsw form (one row of weights: no pair saturates)
    name = f"dq_matmul_qdq{'_avx2b' if avx2 else ''}_u8_i8_k{K}_n{n}_qu8_b_rcp" + ("_bd_f0" if avx2 else "")
    (w0, b), run = harness.built(tmp_path_factory, f"bias-product-{cpu}", cpu, product_model, harness.dispatches(1, [name]),
                                 tags=("dq.avx2",) if avx2 else ())  # fmt: skip
    x = np.zeros((P_ROWS, K), np.float32)
    x[:, 0] = 0.5  # xq = 4: xq - zx = 1
    (got,) = run(x)
    y = (np.float32(np.float64(SW) / 2) * w0.astype(np.float32)).astype(np.float32) + b  # two roundings, in numpy
    want = np.clip(np.rint(y / SY) + int(ZY), 0, 255)
    assert (np.rint(y / SY) % 2 == 0).all() and (y / SY == np.floor(y / SY) + np.float32(0.5)).all()  # every case an exact tie
    np.testing.assert_array_equal(got.view(np.uint8), np.broadcast_to(want, got.shape))


# --- y / sy far beyond the codes: the conversion's edges ---------------------------------------

# |y / sy| at each edge of the AVX2 epilogue's conversion (qdq.py's `rounded_words`, then packs
# that saturate): the i16 range, PACK_BOUND, 2^31 where vcvtps2dq overflows, and beyond
# (and a few codes within the range)
FAR = np.array([0.4, 7.5, 100.5, 255.4, 255.6, 32767, 32768, 32895, 65535, 65536, 65537, 2.0**31 - 128, 2.0**31, 2.0**31 + 256, 2.0**40, 1e30], np.float64)
FAR_ZY = {"u8": np.uint8(20), "i8": np.int8(-100)}  # i8: a negative zy, added with saturation


def far_values() -> np.ndarray:
    """b such that b / SY_FAR is each of +-FAR, a few ulps either side, and +-3.4e38, whose
    quotients overflow to +-inf: at least 2^19 / (ROWS * K) columns. Finite b only: an infinite
    y is NaN through the split reciprocal (docs/semantics.md#the-requantizes-division)."""
    centres = np.float32(np.concatenate([FAR, -FAR]) * np.float64(SY_FAR))
    b = np.concatenate([_step(centres, s) for s in range(-3, 4)] + [np.float32([3.4e38, -3.4e38])])
    return np.resize(b, max(b.size, 2**19 // (ROWS * K)))


SY_FAR = np.float32(0.0371)


def far_model(kind: str):
    def make(path) -> np.ndarray:
        """x [ROWS, K] -> Q -> DQ -> MatMul(DQ(w)) -> Add b -> QuantizeLinear(SY_FAR, FAR_ZY[kind])."""
        b = far_values()
        one_matmul(path, np.random.default_rng(5).integers(-128, 128, (K, b.size)).astype(np.int8), 0.01, ROWS, b, SY_FAR, FAR_ZY[kind])
        return b

    return make


@pytest.mark.parametrize("kind", list(FAR_ZY))
@pytest.mark.parametrize("cpu", ["cascadelake", "haswell"])
def test_requantize_far_beyond_the_codes(tmp_path_factory, cpu, kind):
    """Quotients y / sy past every edge of the epilogue's conversion saturate to the range's
    end on their side, as ONNX's QuantizeLinear says (x all zero: y = b; the kernel not
    `bounded`, b reaching 3.4e38, so on AVX2 it caps the quotient), in numpy:
    onnx.reference's QuantizeLinear converts to int32 before it saturates, so past 2^31 its
    codes wrap."""
    avx2 = cpu == "haswell"
    n = far_values().size
    name = f"dq_matmul_qdq{'_avx2s' if avx2 else ''}_u8_i8_k{K}_n{n}_q{kind}_b_rcp"
    b, run = harness.built(tmp_path_factory, f"requantize-far-{cpu}-{kind}", cpu, far_model(kind), harness.dispatches(1, [name]),
                           tags=("dq.avx2",) if avx2 else ())  # fmt: skip
    (got,) = run(np.zeros((ROWS, K), np.float32))
    info = np.iinfo(FAR_ZY[kind].dtype)
    q = b / SY_FAR  # f32 division, correctly rounded; inf past the largest f32
    with np.errstate(over="ignore"):
        want = np.clip(np.rint(q.astype(np.float64)) + int(FAR_ZY[kind]), info.min, info.max).astype(info.dtype)
    assert set(np.unique(want)) >= {info.min, info.max} and ((want > info.min) & (want < info.max)).any()  # both ends, and codes between
    np.testing.assert_array_equal(got.view(want.dtype), np.broadcast_to(want, got.shape))


# --- sums whose quotients pass 2^31: the bound sees d -----------------------------------------

SY_TINY = np.float32(2.0**-40)  # a power of two: y / sy exact; every d but 0 past 2^31 at s = 0.005


def tiny_model(path) -> tuple:
    """x [ROWS, K] -> Q(0.5, 3) -> DQ -> MatMul(DQ(w, 0.01)) -> QuantizeLinear(SY_TINY, 20), no
    bias: y / sy is past 2^31 wherever d is not 0, from the sums alone."""
    n = 2**19 // (ROWS * K)
    w = np.random.default_rng(6).integers(-128, 128, (K, n)).astype(np.int8)
    one_matmul(path, w, 0.01, ROWS, None, SY_TINY, ZY)
    return w


@pytest.mark.parametrize("cpu", ["cascadelake", "haswell"])
def test_requantize_of_sums_past_two_to_the_31(tmp_path_factory, cpu):
    """|y / sy| past 2^31 from d alone (no bias) saturates: the stage's bound on the quotient
    (`quotient_bound`) counts the sums, so on AVX2 the kernel keeps its cap (no `_bd`). x's
    codes at both ends of their range, and rows of zx (d = 0: the code zy)."""
    avx2 = cpu == "haswell"
    n = 2**19 // (ROWS * K)
    name = f"dq_matmul_qdq{'_avx2s' if avx2 else ''}_u8_i8_k{K}_n{n}_qu8_rcp"
    w, run = harness.built(tmp_path_factory, f"requantize-tiny-{cpu}", cpu, tiny_model, harness.dispatches(1, [name]),
                           tags=("dq.avx2",) if avx2 else ())  # fmt: skip
    xq = np.random.default_rng(7).choice(np.array([0, 255, 3], np.int64), (ROWS, K))
    xq[::4] = 3  # rows of zx
    (got,) = run(((xq - 3) * 0.5).astype(np.float32))  # exact codes: x / 0.5 + 3 = xq
    d = (xq - 3) @ w.astype(np.int64)  # exact
    y = np.float32(np.float32(0.5) * np.float32(0.01)) * d.astype(np.float32)  # s * float(d), f32
    with np.errstate(over="ignore"):
        want = np.clip(np.rint((y / SY_TINY).astype(np.float64)) + int(ZY), 0, 255).astype(np.uint8)
    assert {0, 255, int(ZY)} <= set(np.unique(want))
    np.testing.assert_array_equal(got.view(np.uint8), want)
