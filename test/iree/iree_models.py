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


def matmul_forms(path, k: int, n: int, forms: list, seed: int = 0, batch: bool = False) -> str:
    """One model with a MatMul per weight form: y<i> = x @ DequantizeLinear(w<i>), x f32 [M, K]
    (M dynamic; with `batch`, [B, M, K] with B dynamic too). A form is (dtype, block, zero
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
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, (["B"] if batch else []) + ["M", n]))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (["B"] if batch else []) + ["M", k])
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
