"""ONNX models for the IREE stage tests, built with onnx.helper (and onnxruntime's quantizer).

Every model takes one f32 input "x" [M, K] (M dynamic) and returns "y"; the expected output is
always `onnx.reference.ReferenceEvaluator` on the same file, never dequant.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 21


def _save(nodes, inits, k: int, n: int, path, opset: int = OPSET) -> str:
    """A model y [M, N] = f(x [M, K]) (f32, M dynamic)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", k])
    return _save_graph(nodes, inits, x, helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", n]), path, opset)


def _save_graph(nodes, inits, x, y, path, opset: int) -> str:
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


def int4_blocked_matmul(path, k: int, n: int, block: int, *, zero_point: bool = False, unsigned: bool = False, seed: int = 0) -> str:
    """y = x @ DequantizeLinear(w int4/uint4 [K, N] blocked along K, f32 scales[, zero points])."""
    rng = np.random.default_rng(seed)
    lo, hi, dtype = (0, 16, ml_dtypes.uint4) if unsigned else (-8, 8, ml_dtypes.int4)
    w = rng.integers(lo, hi, size=(k, n)).astype(dtype)
    s = (rng.random((k // block, n)) * 0.1 + 0.01).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(s, "s")]
    inputs = ["w", "s"]
    if zero_point:
        z = rng.integers(lo, hi, size=(k // block, n)).astype(dtype)
        inits.append(numpy_helper.from_array(z, "z"))
        inputs.append("z")
    nodes = [helper.make_node("DequantizeLinear", inputs, ["wf"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]  # fmt: skip
    return _save(nodes, inits, k, n, path)


def matmul_forms(path, k: int, n: int, forms: list, seed: int = 0, batch: bool = False, rows: int | None = None) -> str:
    """One model with a MatMul per weight form: y<i> = x @ DequantizeLinear(w<i>), x f32 [M, K]
    (M dynamic, or `rows`; with `batch`, [B, M, K] with B dynamic too). A form is (dtype, block, zero
    point): dtype int4/uint4/int8/uint8 (ml_dtypes or numpy), block > 0 blocked along K, 0 a
    scale per column (axis 1), -1 one scale; zero point True/False."""
    rng = np.random.default_rng(seed)
    nodes, inits, outputs = [], [], []
    for i, (dtype, block, zero_point) in enumerate(forms):
        info = ml_dtypes.iinfo(dtype)
        w = rng.integers(info.min, info.max, size=(k, n), endpoint=True).astype(dtype)
        if block > 0:
            shape, attrs = (k // block, n), {"axis": 0, "block_size": block}
        elif block == 0:
            shape, attrs = (n,), {"axis": 1}
        else:
            shape, attrs = (), {}
        s = (rng.random(shape) * 0.1 + 0.01).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(s, f"s{i}")]
        inputs = [f"w{i}", f"s{i}"]
        if zero_point:
            inits.append(numpy_helper.from_array(rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype), f"z{i}"))
            inputs.append(f"z{i}")
        nodes += [helper.make_node("DequantizeLinear", inputs, [f"wf{i}"], **attrs), helper.make_node("MatMul", ["x", f"wf{i}"], [f"y{i}"])]
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, (["B"] if batch else []) + [rows or "M", n]))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (["B"] if batch else []) + [rows or "M", k])
    m = helper.make_model(helper.make_graph(nodes, "g", [x], outputs, inits), opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


def matmuls_of(path, k: int, weights: list) -> str:
    """One model with a MatMul per entry of `weights`: y<i> = x @ DequantizeLinear(w, s[, z]), x
    f32 [M, K] (M dynamic). An entry is (w [K, N] of an integer dtype (ml_dtypes or numpy), s f32
    [K / block, N] (blocked along K, axis 0), z [K / block, N] of w's dtype or None, block)."""
    nodes, inits, outputs = [], [], []
    for i, (w, s, z, block) in enumerate(weights):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(s, f"s{i}")]
        inputs = [f"w{i}", f"s{i}"] + ([f"z{i}"] if z is not None else [])
        if z is not None:
            inits.append(numpy_helper.from_array(z, f"z{i}"))
        nodes += [helper.make_node("DequantizeLinear", inputs, [f"wf{i}"], axis=0, block_size=block),
                  helper.make_node("MatMul", ["x", f"wf{i}"], [f"y{i}"])]  # fmt: skip
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, ["M", w.shape[1]]))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", k])
    m = helper.make_model(helper.make_graph(nodes, "g", [x], outputs, inits), opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


def float8_matmul(path, k: int, n: int, seed: int = 0) -> str:
    """y = x @ DequantizeLinear(w float8e4m3fn [K, N], per-column f32 scale)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((k, n)) * 4).astype(ml_dtypes.float8_e4m3fn)
    s = (rng.random(n) * 0.1 + 0.01).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]  # fmt: skip
    return _save(nodes, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(s, "s")], k, n, path)


def qdq_both_matmul(path, k: int, n: int, seed: int = 0) -> str:
    """Activations and weights both dequantized into one MatMul:
    y = DQ(Q(x, 0.05, 128 uint8)) @ DQ(w int8 [K, N], per-column scale, axis 1)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, size=(k, n)).astype(np.int8)
    s = (rng.random(n) * 0.01 + 0.001).astype(np.float32)
    inits = [
        numpy_helper.from_array(w, "w"), numpy_helper.from_array(s, "s"),
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"), numpy_helper.from_array(np.array(128, np.uint8), "xz"),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1),
        helper.make_node("MatMul", ["xf", "wf"], ["y"]),
    ]
    return _save(nodes, inits, k, n, path)


def qdq_matmul(path, m: int, k: int, n: int, *, activations=np.uint8, per_column: bool = True, weight_zero_point: bool = False,
               bias: bool = False, qdq_bias: bool = False, requantize=None, weight_scale: float | None = None, sy: float = 0.07,
               sx: float = 2.0**-4, weights: np.ndarray | None = None, seed: int = 0, opset: int = OPSET) -> str:
    """A QDQ MatMul of static rows, as quantize_static writes one: y [M, N] =
    DQ(Q(x, sx, zx)) @ DQ(w int8 [K, N], sw per column or per tensor[, zw]) (+ b). sx = 2^-4 by
    default, so x / sx is exact (a quantize by x * (1 / sx) gives the same codes); sw random, or every scale
    `weight_scale`. `requantize` (np.uint8 or np.int8): y is Q(that, sy, zy) of that type instead
    (sy = 0.07 by default, no power of two). `qdq_bias`: the bias as quantize_static writes it,
    DQ(Q(x @ w, 0.1, 128)) + DQ(b uint8, 0.01, 100). `weights`: w itself (int8 [K, N]), else random."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-128, 128, size=(k, n)).astype(np.int8)
    if weights is not None:
        w = np.asarray(weights, np.int8).reshape(k, n)
    sw = (rng.random(n if per_column else ()) * 0.01 + 0.001).astype(np.float32)
    if weight_scale is not None:
        sw = np.full_like(sw, weight_scale)
    zx = np.array(131 if activations == np.uint8 else -5, activations)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(sw, "sw"),
             numpy_helper.from_array(np.array(sx, np.float32), "sx"), numpy_helper.from_array(zx, "zx")]  # fmt: skip
    w_inputs = ["w", "sw"]
    if weight_zero_point:
        inits.append(numpy_helper.from_array(rng.integers(-20, 21, size=sw.shape).astype(np.int8), "zw"))
        w_inputs.append("zw")
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"]),
        helper.make_node("DequantizeLinear", w_inputs, ["wf"], **({"axis": 1} if per_column else {})),
        helper.make_node("MatMul", ["xf", "wf"], ["y0" if bias else "y"]),
    ]
    if bias and qdq_bias:
        inits += [numpy_helper.from_array(rng.integers(0, 256, size=n).astype(np.uint8), "bq"),
                  numpy_helper.from_array(np.array(0.01, np.float32), "sb"), numpy_helper.from_array(np.array(100, np.uint8), "zb"),
                  numpy_helper.from_array(np.array(0.1, np.float32), "s0"), numpy_helper.from_array(np.array(128, np.uint8), "z0")]  # fmt: skip
        nodes += [helper.make_node("QuantizeLinear", ["y0", "s0", "z0"], ["y0q"]), helper.make_node("DequantizeLinear", ["y0q", "s0", "z0"], ["y0f"]),
                  helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["b"]), helper.make_node("Add", ["y0f", "b"], ["y"])]  # fmt: skip
    elif bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b"))
        nodes.append(helper.make_node("Add", ["y0", "b"], ["y"]))
    out = TensorProto.FLOAT
    if requantize is not None:
        nodes[-1].output[0] = "yf"
        zy = np.array(120 if requantize == np.uint8 else -3, requantize)
        inits += [numpy_helper.from_array(np.array(sy, np.float32), "sy"), numpy_helper.from_array(zy, "zy")]
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"]))
        out = helper.np_dtype_to_tensor_dtype(zy.dtype)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])
    return _save_graph(nodes, inits, x, helper.make_tensor_value_info("y", out, [m, n]), path, opset)


def quantize_static_model(path, tmp_dir, k: int, n: int, seed: int = 0) -> str:
    """onnxruntime's `quantize_static` (QDQ format, int8 per-channel weights, uint8 activations)
    of a float model y = relu(x @ W1 + b1) @ W2."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((k, n)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(n).astype(np.float32) * 0.1
    w2 = rng.standard_normal((n, n)).astype(np.float32) * 0.2
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w2"], ["y"]),
    ]
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")]
    float_path = _save(nodes, inits, k, n, f"{tmp_dir}/float.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal((4, k)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(float_path, str(path), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)  # fmt: skip
    return str(path)


def qdq_conv_model(path, tmp_dir, channels: int = 16, size: int = 16, seed: int = 0) -> str:
    """onnxruntime's `quantize_static` (QDQ, int8 per-channel weights, uint8 activations) of a
    float CNN block y = relu(conv3x3(relu(conv3x3(x) + b1)) + b2), x [1, 3, size, size]."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(seed)
    c = channels
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c2"], ["y"])]  # fmt: skip
    inits = [numpy_helper.from_array((rng.standard_normal((c, 3, 3, 3)) * 0.3).astype(np.float32), "w1"),
             numpy_helper.from_array((rng.standard_normal(c) * 0.1).astype(np.float32), "b1"),
             numpy_helper.from_array((rng.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32), "w2"),
             numpy_helper.from_array((rng.standard_normal(c) * 0.1).astype(np.float32), "b2")]  # fmt: skip
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, size, size])
    float_path = _save_graph(nodes, inits, x, y, f"{tmp_dir}/conv-float.onnx", OPSET)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal((1, 3, size, size)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(float_path, str(path), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)  # fmt: skip
    return str(path)


def dequantize_linear_count(path) -> int:
    return sum(node.op_type == "DequantizeLinear" for node in onnx.load(str(path)).graph.node)


def dequantize_only(path, x_dtype, x_shape, scale, zero_point=None, *, opset: int = OPSET, output_dtype=None, **attrs) -> str:
    """y = DequantizeLinear(x, scale[, zero_point]) with x a graph input of `x_dtype` and the
    scale and zero point initializers (numpy arrays, any shape the spec allows)."""
    from onnx import helper as h

    inits = [numpy_helper.from_array(np.asarray(scale), "s")]
    inputs = ["x", "s"]
    if zero_point is not None:
        inits.append(numpy_helper.from_array(np.asarray(zero_point), "z"))
        inputs.append("z")
    if output_dtype is not None:
        attrs["output_dtype"] = h.np_dtype_to_tensor_dtype(np.dtype(output_dtype))
    out_type = h.np_dtype_to_tensor_dtype(np.dtype(output_dtype)) if output_dtype is not None else h.np_dtype_to_tensor_dtype(np.asarray(scale).dtype)
    x = h.make_tensor_value_info("x", h.np_dtype_to_tensor_dtype(np.dtype(x_dtype)), list(x_shape))
    y = h.make_tensor_value_info("y", out_type, list(x_shape))
    return _save_graph([h.make_node("DequantizeLinear", inputs, ["y"], **attrs)], inits, x, y, path, opset)


def dequantize_cast(path, x_dtype, x_shape, scale, zero_point=None, *, output_dtype, opset: int = 23, **attrs) -> str:
    """y = Cast(DequantizeLinear(x, scale[, zero_point], output_dtype), float): the dequantize's
    rounding to `output_dtype` must survive the widening Cast."""
    inits = [numpy_helper.from_array(np.asarray(scale), "s")]
    inputs = ["x", "s"]
    if zero_point is not None:
        inits.append(numpy_helper.from_array(np.asarray(zero_point), "z"))
        inputs.append("z")
    out = helper.np_dtype_to_tensor_dtype(np.dtype(output_dtype))
    nodes = [helper.make_node("DequantizeLinear", inputs, ["b"], output_dtype=out, **attrs),
             helper.make_node("Cast", ["b"], ["y"], to=TensorProto.FLOAT)]  # fmt: skip
    x = helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(np.dtype(x_dtype)), list(x_shape))
    return _save_graph(nodes, inits, x, helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x_shape)), path, opset)


def blocked_matmul(path, k: int, n: int, block: int, dtype, *, zero_point: bool = False, extra_bytes: int = 0, seed: int = 0) -> str:
    """y = x @ DequantizeLinear(w [K, N] of `dtype` (int4 or int8) blocked along K, f32 scales
    [ceil(K/B), N][, zero points]); `extra_bytes` appended to w's raw_data (the ONNX checker
    accepts them; onnx.reference reads the leading bytes)."""
    rng = np.random.default_rng(seed)
    lo, hi = (-8, 8) if dtype == ml_dtypes.int4 else (-128, 128)
    blocks = -(-k // block)
    w = numpy_helper.from_array(rng.integers(lo, hi, size=(k, n)).astype(dtype), "w")
    w.raw_data = w.raw_data + bytes(range(7, 7 + extra_bytes))
    inits = [w, numpy_helper.from_array((rng.random((blocks, n)) * 0.1 + 0.01).astype(np.float32), "s")]
    inputs = ["w", "s"]
    if zero_point:
        inits.append(numpy_helper.from_array(rng.integers(lo, hi, size=(blocks, n)).astype(dtype), "z"))
        inputs.append("z")
    nodes = [helper.make_node("DequantizeLinear", inputs, ["wf"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]  # fmt: skip
    return _save(nodes, inits, k, n, path)


def weights_matmul(path, k: int, n: int, dtype, *, block: int = 0, zero_point: bool = False, scale_dtype=np.float32, cast: bool = False,
                   gemm: bool = False, rows: int | None = None, seed: int = 0) -> str:
    """y [M, N] = x [M, K] @ DequantizeLinear(w) of integer weights of any `dtype` (int4, uint4,
    int8, uint8: ml_dtypes or numpy): `block` > 0 blocked along K (a partial last block when it
    does not divide K), 0 a scale per column, -1 one scale; scales of `scale_dtype` (f16: the
    dequantize's result is f16, then `cast` reads it through a Cast to float); `gemm`: w stored
    [N, K] and read by Gemm transB=1 (blocks along K = axis 1). M dynamic, or `rows`."""
    rng = np.random.default_rng(seed)
    info = ml_dtypes.iinfo(dtype)
    w_shape, kax = ((n, k), 1) if gemm else ((k, n), 0)
    w = rng.integers(info.min, info.max, size=w_shape, endpoint=True).astype(dtype)
    if block > 0:
        shape = list(w_shape)
        shape[kax] = -(-k // block)
        attrs = {"axis": kax, "block_size": block}
    elif block == 0:
        shape, attrs = [n], {"axis": 1 - kax}
    else:
        shape, attrs = [], {}
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array((rng.random(shape) * 0.1 + 0.01).astype(scale_dtype), "s")]
    inputs = ["w", "s"]
    if zero_point:
        inits.append(numpy_helper.from_array(rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype), "z"))
        inputs.append("z")
    nodes = [helper.make_node("DequantizeLinear", inputs, ["wf"], **attrs)]
    if cast:
        nodes.append(helper.make_node("Cast", ["wf"], ["wc"], to=TensorProto.FLOAT))
    b = nodes[-1].output[0]
    nodes.append(helper.make_node("Gemm", ["x", b], ["y"], transB=1) if gemm else helper.make_node("MatMul", ["x", b], ["y"]))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows or "M", k])
    return _save_graph(nodes, inits, x, helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows or "M", n]), path, OPSET)


def weights_input_matmul(path, n: int, block: int, blocks: int, seed: int = 0) -> str:
    """y = x @ DequantizeLinear(w, s) with the int4 weights w ["K", N] a graph input (K dynamic)
    and the scales [blocks, N] blocked along K an initializer: K is checked at run time."""
    rng = np.random.default_rng(seed)
    s = numpy_helper.from_array((rng.random((blocks, n)) * 0.1 + 0.01).astype(np.float32), "s")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", "K"])
    w = helper.make_tensor_value_info("w", TensorProto.INT4, ["K", n])
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]  # fmt: skip
    g = helper.make_graph(nodes, "g", [x, w], [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", n])], [s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


# --- whole models (bench/models.py; small dims in the tests) ---------------------------------------


class Graph:
    """A float ONNX graph built node by node: `op` adds a node and returns its output's name,
    `weight` adds a random initializer."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def _name(self, prefix: str) -> str:
        return f"{prefix}{len(self.nodes) + len(self.inits)}"

    def const(self, array, prefix: str = "c") -> str:
        name = self._name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape, scale: float | None = None) -> str:
        """Normal weights with He's fan-in scale (sqrt(2 / fan-in), fan-in all dims but the
        output's), so that activations keep their magnitude through ReLUs without batch norms."""
        fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
        scale = scale if scale is not None else np.sqrt(2.0 / fan_in)
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), "w")

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        out = self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def save(self, path, x_shape, y: str, y_shape, opset: int = OPSET) -> str:
        assert self.nodes[-1].output[0] == y, "the graph's output is its last node's"
        self.nodes[-1].output[0] = "y"
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))
        return _save_graph(self.nodes, self.inits, x, out, path, opset)

    # layers
    def conv(self, x: str, c_in: int, c_out: int, k: int = 1, stride: int = 1, groups: int = 1, relu: bool = True) -> str:
        w, b = self.weight((c_out, c_in // groups, k, k)), self.const(np.zeros(c_out, np.float32), "b")
        y = self.op("Conv", x, w, b, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups)
        return self.op("Relu", y) if relu else y

    def linear(self, x: str, k: int, n: int) -> str:
        return self.op("MatMul", x, self.weight((k, n)))

    def rms_norm(self, x: str, hidden: int) -> str:
        ms = self.op("ReduceMean", self.op("Mul", x, x), self.const(np.array([-1], np.int64)), keepdims=1)
        r = self.op("Reciprocal", self.op("Sqrt", self.op("Add", ms, self.const(np.float32(1e-5)))))
        return self.op("Mul", self.op("Mul", x, r), self.const(np.ones(hidden, np.float32)))


def mobilenet(path, size: int = 224, width: float = 1.0, classes: int = 1000) -> str:
    """A MobileNetV2-style float classifier: inverted residual blocks (1x1 expand, 3x3 depthwise,
    1x1 project), x [1, 3, size, size] -> y [1, classes]."""
    g = Graph(1)
    ch = lambda c: max(8, int(c * width))  # noqa: E731
    c = ch(32)
    h = g.conv("x", 3, c, 3, 2)
    for t, c_out, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            c_out_w = ch(c_out)
            e = g.conv(h, c, c * t) if t != 1 else h
            d = g.conv(e, c * t, c * t, 3, s if i == 0 else 1, groups=c * t)
            p = g.conv(d, c * t, c_out_w, relu=False)
            h = g.op("Add", h, p) if (i > 0 and c == c_out_w) else p
            c = c_out_w
    h = g.conv(h, c, 1280)
    h = g.op("Flatten", g.op("GlobalAveragePool", h))
    y = g.op("Gemm", h, g.weight((classes, 1280), 1 / np.sqrt(1280)), g.const(np.zeros(classes, np.float32), "b"), transB=1)
    return g.save(path, [1, 3, size, size], y, [1, classes])


def mobilenet_v3(path, size: int = 224, width: float = 1.0, classes: int = 1000) -> str:
    """A MobileNetV3-Small-style float classifier: inverted residual blocks with hard-swish or ReLU,
    squeeze-and-excite (GlobalAveragePool, 1x1 convs, Sigmoid, Mul) in some, x [1, 3, size, size]
    -> y [1, classes]."""
    g = Graph(5)
    ch = lambda c: max(8, int(c * width) // 8 * 8)  # noqa: E731
    hswish = lambda h: g.op("HardSwish", h)  # noqa: E731
    c = ch(16)
    h = hswish(g.conv("x", 3, c, 3, 2, relu=False))
    # (kernel, expanded, out, squeeze-excite, hard-swish, stride): MobileNetV3-Small's table
    for k, e, c_out, se, hs, s in ((3, 16, 16, 1, 0, 2), (3, 72, 24, 0, 0, 2), (3, 88, 24, 0, 0, 1), (5, 96, 40, 1, 1, 2),
                                   (5, 240, 40, 1, 1, 1), (5, 120, 48, 1, 1, 1), (5, 288, 96, 1, 1, 2), (5, 576, 96, 1, 1, 1)):  # fmt: skip
        e, c_out = ch(e), ch(c_out)
        act = hswish if hs else (lambda v: g.op("Relu", v))
        b = act(g.conv(h, c, e, relu=False)) if e != c else h
        b = act(g.conv(b, e, e, k, s, groups=e, relu=False))
        if se:
            r = g.conv(g.op("GlobalAveragePool", b), e, ch(e // 4))
            b = g.op("Mul", b, g.op("Sigmoid", g.conv(r, ch(e // 4), e, relu=False)))
        p = g.conv(b, e, c_out, relu=False)
        h = g.op("Add", h, p) if (s == 1 and c == c_out) else p
        c = c_out
    h = hswish(g.conv(h, c, ch(576), relu=False))
    h = g.op("Flatten", g.op("GlobalAveragePool", h))
    y = g.op("Gemm", h, g.weight((classes, ch(576)), 1 / np.sqrt(ch(576))), g.const(np.zeros(classes, np.float32), "b"), transB=1)
    return g.save(path, [1, 3, size, size], y, [1, classes])


def resnet(path, size: int = 224, classes: int = 1000, blocks: int = 2) -> str:
    """A ResNet-18-style float classifier (`blocks` basic blocks a stage: 2 is ResNet-18's, 1 a
    ResNet-10 with each of its ops), x [1, 3, size, size] -> y [1, classes]."""
    g = Graph(2)
    h = g.op("MaxPool", g.conv("x", 3, 64, 7, 2), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for c_out, s in [(c_out, s if i == 0 else 1) for c_out, s in ((64, 1), (128, 2), (256, 2), (512, 2)) for i in range(blocks)]:
        a = g.conv(g.conv(h, c, c_out, 3, s), c_out, c_out, 3, relu=False)
        skip = h if (s == 1 and c == c_out) else g.conv(h, c, c_out, 1, s, relu=False)
        h, c = g.op("Relu", g.op("Add", a, skip)), c_out
    h = g.op("Flatten", g.op("GlobalAveragePool", h))
    y = g.op("Gemm", h, g.weight((classes, 512), 1 / np.sqrt(512)), g.const(np.zeros(classes, np.float32), "b"), transB=1)
    return g.save(path, [1, 3, size, size], y, [1, classes])


def resnet50(path, size: int = 224, classes: int = 1000) -> str:
    """A ResNet-50-style float classifier (bottleneck blocks 3, 4, 6, 3: 1x1 reduce, 3x3, 1x1
    expand by 4; the stride on the 3x3), x [1, 3, size, size] -> y [1, classes]."""
    g = Graph(6)
    h = g.op("MaxPool", g.conv("x", 3, 64, 7, 2), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            a = g.conv(g.conv(g.conv(h, c, width), width, width, 3, s), width, 4 * width, relu=False)
            skip = g.conv(h, c, 4 * width, 1, s, relu=False) if i == 0 else h
            h, c = g.op("Relu", g.op("Add", a, skip)), 4 * width
    h = g.op("Flatten", g.op("GlobalAveragePool", h))
    y = g.op("Gemm", h, g.weight((classes, c), 1 / np.sqrt(c)), g.const(np.zeros(classes, np.float32), "b"), transB=1)
    return g.save(path, [1, 3, size, size], y, [1, classes])


def _attention(g: Graph, h: str, seq: int | None, hidden: int, heads: int, causal: bool) -> str:
    """Multi-head attention of h [1, seq, hidden]; seq None: known only at run time (h's dim 1)."""
    d = hidden // heads
    split = g.const(np.array([1, seq if seq else 0, heads, d], np.int64))  # 0: h's own dim
    q, k, v = (g.op("Transpose", g.op("Reshape", g.linear(h, hidden, hidden), split), perm=[0, 2, 1, 3]) for _ in range(3))
    scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2])), g.const(np.float32(1 / np.sqrt(d))))
    if causal and seq:
        scores = g.op("Add", scores, g.const(np.triu(np.full((seq, seq), -1e9, np.float32), 1)))
    elif causal:  # -1e9 above the diagonal of a [seq, seq] of ones, seq read from h
        n = g.op("Shape", h, start=1, end=2)
        ones = g.op("ConstantOfShape", g.op("Concat", n, n, axis=0), value=numpy_helper.from_array(np.ones(1, np.float32)))
        upper = g.op("Trilu", ones, g.const(np.array(1, np.int64)), upper=1)
        scores = g.op("Add", scores, g.op("Mul", upper, g.const(np.float32(-1e9))))
    a = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    a = g.op("Reshape", g.op("Transpose", a, perm=[0, 2, 1, 3]), g.const(np.array([1, seq if seq else 0, hidden], np.int64)))
    return g.linear(a, hidden, hidden)


def transformer_block(path, seq: int = 128, hidden: int = 256, heads: int = 4, ffn: int = 1024) -> str:
    """A BERT-style float encoder block: attention and a GELU MLP, each behind a residual and a
    LayerNormalization, x [1, seq, hidden] -> y [1, seq, hidden]."""
    g = Graph(3)
    ln = lambda x: g.op("LayerNormalization", x, g.const(np.ones(hidden, np.float32)), g.const(np.zeros(hidden, np.float32)), axis=-1)  # noqa: E731
    h = ln(g.op("Add", "x", _attention(g, "x", seq, hidden, heads, causal=False)))
    m = g.linear(g.op("Gelu", g.op("Add", g.linear(h, hidden, ffn), g.const(np.zeros(ffn, np.float32)))), ffn, hidden)
    y = ln(g.op("Add", h, m))
    return g.save(path, [1, seq, hidden], y, [1, seq, hidden])


def decoder_layer(path, seq: int | None = 1, hidden: int = 2048, heads: int = 32, mlp: int = 5632) -> str:
    """A Llama-style float decoder layer (TinyLlama's dims by default; RMSNorm, causal attention
    without rotary embeddings or a KV cache, SiLU-gated MLP), x [1, seq, hidden] -> y; seq None:
    the sequence length is known only at run time ("S"), as exporters write decoders."""
    g = Graph(4)
    h = g.op("Add", "x", _attention(g, g.rms_norm("x", hidden), seq, hidden, heads, causal=True))
    n = g.rms_norm(h, hidden)
    gate, up = g.linear(n, hidden, mlp), g.linear(n, hidden, mlp)
    act = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), up)
    y = g.op("Add", h, g.linear(act, mlp, hidden))
    return g.save(path, [1, seq or "S", hidden], y, [1, seq or "S", hidden])


def quantize_static_file(float_path, path, x_shape, *, per_channel: bool = True, activations: str = "uint8", samples: int = 4, seed: int = 0,
                         quant_format: str = "QDQ") -> str:  # fmt: skip
    """onnxruntime's `quantize_static` of a float model with one input "x" (int8 weights,
    `activations` uint8 or int8), calibrated on normal random inputs; `quant_format` "QDQ" or
    "QOperator" (QLinearConv, QLinearMatMul, com.microsoft QLinearAdd, QGemm, ...)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(seed)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal(x_shape).astype(np.float32)} for _ in range(samples)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(str(float_path), str(path), Reader(), quant_format=QuantFormat[quant_format], per_channel=per_channel,
                    activation_type=QuantType.QUInt8 if activations == "uint8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8)  # fmt: skip
    return str(path)


def quantize_dynamic_file(float_path, path, *, weights: str = "int8") -> str:
    """onnxruntime's `quantize_dynamic` of a float model: `weights` int8 or uint8 per tensor,
    activations quantized at run time (DynamicQuantizeLinear, MatMulInteger, ConvInteger)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(float_path), str(path), weight_type=QuantType.QInt8 if weights == "int8" else QuantType.QUInt8)
    return str(path)


def quantize_matmul_nbits(float_path, path, *, symmetric: bool, block: int = 32, qoperator: bool = False, **options) -> str:
    """onnxruntime's `MatMulNBitsQuantizer` of a float model in QDQ format: each MatMul's constant
    weights int4 (symmetric) or uint4 with zero points, blocked along K (needs `onnx-ir`). With
    `qoperator`, its default format: com.microsoft MatMulNBits nodes (`options`: more of the
    config's, e.g. bits, accuracy_level)."""
    from onnxruntime.quantization import QuantFormat
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    fmt = QuantFormat.QOperator if qoperator else QuantFormat.QDQ
    config = DefaultWeightOnlyQuantConfig(block_size=block, is_symmetric=symmetric, quant_format=fmt, op_types_to_quantize=("MatMul",), **options)
    q = MatMulNBitsQuantizer(onnx.load(str(float_path)), block_size=block, is_symmetric=symmetric, quant_format=fmt, algo_config=config)
    q.process()
    q.model.save_model_to_file(str(path))
    return str(path)


def _pack_codes(codes: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned `bits`-bit codes packed 8 / bits a byte along the last axis, low bits first (the
    last axis padded with zero codes to whole bytes)."""
    per = 8 // bits
    codes = np.pad(codes, [(0, 0)] * (codes.ndim - 1) + [(0, -codes.shape[-1] % per)])
    packed = np.zeros((*codes.shape[:-1], codes.shape[-1] // per), np.uint8)
    for i in range(per):
        packed |= (codes[..., i::per].astype(np.uint8) << (bits * i)).astype(np.uint8)
    return packed


def matmul_nbits(path, k: int, n: int, *, bits: int = 4, block: int = 32, zero_point: str | None = None, scale_type=np.float32,
                 g_idx: bool | str = False, bias: bool = False, accuracy_level: int = 0, opset: int = OPSET, rank: int = 2, seed: int = 0,
                 near_zero: bool = False) -> str:
    """One com.microsoft MatMulNBits written with onnx.helper from its spec: y = x @ dequant(B)^T
    (+ bias), x [M, K] (rank 3: [1, M, K]) of the scales' type; random codes and scales; zero
    points None (the default 2^(bits - 1)), "packed" (uint8 codes) or "float" (of the scales'
    type, fractional); `g_idx`: act-order, each block's rows scattered over K ("uneven": each row
    of K in a random block); `near_zero` (float zero points): codes 2^(bits - 1) - 1 or 2^(bits - 1)
    and zero points between them, the weights near their zero point (where a term taken off a sum
    would cancel)."""
    rng = np.random.default_rng(seed)
    blocks = -(-k // block)
    mid = 1 << (bits - 1)
    codes = rng.integers(mid - 1, mid + 1, size=(n, blocks * block)) if near_zero else rng.integers(0, 1 << bits, size=(n, blocks * block))
    codes[:, k:] = 0
    inits = [numpy_helper.from_array(_pack_codes(codes, bits).reshape(n, blocks, block * bits // 8), "B"),
             numpy_helper.from_array((rng.random(n * blocks) * 0.1 + 0.01).astype(scale_type), "scales")]  # fmt: skip
    inputs = ["x", "B", "scales", "", "", ""]
    if zero_point == "packed":
        inits.append(numpy_helper.from_array(_pack_codes(rng.integers(0, 1 << bits, size=(n, blocks)), bits).reshape(-1), "zp"))
    elif zero_point == "float":
        zp = mid - 1 + rng.random(n * blocks) if near_zero else rng.random(n * blocks) * ((1 << bits) - 1)
        inits.append(numpy_helper.from_array(zp.astype(scale_type), "zp"))
    if zero_point:
        inputs[3] = "zp"
    if g_idx:
        groups = rng.integers(0, blocks, size=k) if g_idx == "uneven" else rng.permutation(np.arange(k) // block)
        inits.append(numpy_helper.from_array(groups.astype(np.int32), "g_idx"))
        inputs[4] = "g_idx"
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(scale_type), "bias"))
        inputs[5] = "bias"
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("MatMulNBits", inputs, ["y"], domain="com.microsoft", K=k, N=n, bits=bits, block_size=block, accuracy_level=accuracy_level)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(scale_type))
    lead = [1] if rank == 3 else []
    x = helper.make_tensor_value_info("x", elem, [*lead, "M", k])
    y = helper.make_tensor_value_info("y", elem, [*lead, "M", n])
    m = helper.make_model(helper.make_graph([node], "g", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])  # fmt: skip
    m.ir_version = 10
    onnx.save(m, str(path))
    return str(path)


def gather_block_quantized(path, shape: tuple, *, storage: str = "uint8", bits: int = 4, block: int = 32, zero_point: bool = False,
                           gather_axis: int = 0, quantize_axis: int = 1, scale_type=np.float32, indices: tuple = ("B", "S"), seed: int = 0) -> str:
    """One com.microsoft GatherBlockQuantized written with onnx.helper from its spec: y =
    dequant(data)[x] along gather_axis, x int64 `indices` (names: dynamic dims); `shape` the
    logical table; storage "uint8" (bits 2, 4 or 8 packed along the last axis), "int4" or "uint4";
    random codes, scales and (with `zero_point`) zero points."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    rank = len(shape)
    qa = quantize_axis % rank
    blocks = -(-shape[qa] // block)
    sshape = tuple(blocks if a == qa else d for a, d in enumerate(shape))
    inits = []
    if storage == "uint8":
        codes = rng.integers(0, 1 << bits, size=shape)
        data = _pack_codes(codes, bits)
        zp = _pack_codes(rng.integers(0, 1 << bits, size=sshape), bits) if zero_point else None
    else:
        dtype = ml_dtypes.int4 if storage == "int4" else ml_dtypes.uint4
        info = ml_dtypes.iinfo(dtype)
        data = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        zp = rng.integers(info.min, info.max, size=sshape, endpoint=True).astype(dtype) if zero_point else None
    inits.append(numpy_helper.from_array(data, "data"))
    inits.append(numpy_helper.from_array((rng.random(sshape) * 0.1 + 0.01).astype(scale_type), "scales"))
    inputs = ["data", "x", "scales"]
    if zp is not None:
        inits.append(numpy_helper.from_array(zp, "zp"))
        inputs.append("zp")
    attrs = dict(gather_axis=gather_axis, quantize_axis=quantize_axis, block_size=block)
    if storage == "uint8":
        attrs["bits"] = bits
    node = helper.make_node("GatherBlockQuantized", inputs, ["y"], domain="com.microsoft", **attrs)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(scale_type))
    ga = gather_axis % rank
    out = [*shape[:ga], *indices, *shape[ga + 1:]]
    x = helper.make_tensor_value_info("x", TensorProto.INT64, list(indices))
    y = helper.make_tensor_value_info("y", elem, out)
    m = helper.make_model(helper.make_graph([node], "g", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])  # fmt: skip
    m.ir_version = 10
    onnx.save(m, str(path))
    return str(path)
