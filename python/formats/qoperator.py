"""QOperator: quantize_static's QOperator format (QLinearConv, QLinearMatMul and onnxruntime's
com.microsoft QLinear* ops, QGemm) and the dynamic contrib ops (DynamicQuantizeMatMul,
MatMulIntegerToFloat), rewritten to the QDQ form: onnxruntime's QDQ transformer in reverse.

Each QLinear node becomes DequantizeLinear of each quantized input (its scale and zero point), the
float op with the node's attributes, and QuantizeLinear of the result with the output's scale and
zero point, as quantize_static writes the same op in QDQ format; the int32 bias of QLinearConv
and QGemm is dequantized with zero point 0 and scale sx * sw (per channel where sw is), as
quantize_static quantized it. So one route (IREE's QDQ lowering and the dq stage) serves both
formats. MatMulInteger and ConvInteger (and DynamicQuantizeLinear) are standard ONNX that IREE
compiles itself; they are left as they are. Scope, refusals and agreement: docs/iree.md#model-formats
and docs/semantics.md#qoperator-and-dynamic-formats.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from .rewrites import MS, REWRITES, FormatError, Graph

_8BIT = {onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.INT8: np.int8}
# Ops whose output has the element type of their first input (for the zero point a contrib op
# leaves out: its output type is its input's).
_SAME_TYPE = {"MaxPool", "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Slice", "Gather",
              "Split", "Pad", "Resize", "Expand", "Concat", "Tile", "DepthToSpace", "SpaceToDepth"}  # fmt: skip


def _input(node: onnx.NodeProto, i: int) -> str:
    """The node's input i, or "" when it is absent."""
    return node.input[i] if i < len(node.input) else ""


def _attrs(node: onnx.NodeProto, drop=()) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute if a.name not in drop}


def _number(r, attrs: dict, name: str, default, kind=int):
    """Attribute `name` (or `default`) as `kind`; a value of another type (a tensor, a string) is
    the node's error."""
    value = attrs.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        r.fail(f"its attribute '{name}' must be {'an integer' if kind is int else 'a number'}")
    return kind(value)


def _elem_type(graph: Graph, name: str, depth: int = 0) -> int | None:
    """The ONNX element type of a value: a constant's, a graph input's or value_info's, or what
    the node making it gives (a quantizing op's zero point type); None when unknown."""
    t = graph.constants.get(name)
    if t is not None:
        return t.data_type
    g = graph.model.graph
    if "_qop_types" not in graph.__dict__:  # once per graph: the declared types, each value's node
        graph._qop_types = {v.name: v.type.tensor_type.elem_type for v in (*g.input, *g.value_info, *g.output) if v.type.tensor_type.elem_type}
        graph._qop_producers = {o: n for n in g.node for o in n.output}
    if name in graph._qop_types:
        return graph._qop_types[name]
    node = graph._qop_producers.get(name)
    if node is None or depth > 64:
        return None
    op = node.op_type
    if op == "DynamicQuantizeLinear" and name == node.output[0]:
        return onnx.TensorProto.UINT8
    if op == "QuantizeLinear":
        zp = _input(node, 2)
        return _elem_type(graph, zp, depth + 1) if zp else onnx.TensorProto.UINT8
    zp_index = {"QLinearConv": 7, "QLinearMatMul": 7, "QGemm": 8, "QLinearAdd": 7, "QLinearMul": 7, "QLinearSigmoid": 4,
                "QLinearLeakyRelu": 4, "QLinearAveragePool": 4, "QLinearGlobalAveragePool": 4, "QLinearSoftmax": 4,
                "QLinearConcat": 1}.get(op)  # fmt: skip
    if zp_index is not None:
        zp = _input(node, zp_index)
        if zp:
            return _elem_type(graph, zp, depth + 1)
        if op == "QGemm" and not _input(node, 7):
            return onnx.TensorProto.FLOAT
        return _elem_type(graph, node.input[0], depth + 1)
    if op in _SAME_TYPE and node.input:
        return _elem_type(graph, node.input[0], depth + 1)
    return None


def _type_name(t: int) -> str:
    return onnx.TensorProto.DataType.Name(t).lower()


class _Rewriter:
    """The rewrite of one node: its checks (each a FormatError naming the node) and the nodes it
    emits, in order."""

    def __init__(self, node: onnx.NodeProto, graph: Graph):
        self.node, self.graph, self.nodes = node, graph, []

    def fail(self, rule: str):
        raise FormatError(self.node, rule)

    def emit(self, op_type: str, inputs: list, outputs: list | None = None, **attrs) -> str:
        """Add a node of the default domain; its (first) output's name."""
        outputs = outputs or [self.graph.fresh(f"{self.node.output[0]}_{op_type.lower()}")]
        name = self.graph.fresh(f"{self.node.name or self.node.output[0]}_{op_type}")
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=name, **attrs))
        return outputs[0]

    # checks

    def scale(self, index: int, what: str, length: int | None = 1) -> np.ndarray | None:
        """Check the scale input `index`: no zero or non-finite value, one element (`length` 1),
        or 1 or `length` elements (`length` a channel count), any count (None). Its values where
        it is a constant."""
        name = _input(self.node, index)
        if not name:
            self.fail(f"{what} is missing")
        s = self.graph.value(name)
        if s is None:
            return None
        if s.dtype != np.float32:
            self.fail(f"{what} is {s.dtype}; the QOperator ops take float32 scales")
        if s.ndim > 1 or (length is not None and s.size not in (1, length)):
            want = "one element" if length == 1 else f"1 or {length} elements (one per channel)"
            self.fail(f"{what} has shape {list(s.shape)}; it must have {want}")
        if not np.all(np.isfinite(s)) or np.any(s == 0):
            bad = s.reshape(-1)[np.flatnonzero(~np.isfinite(s) | (s == 0))[0]]
            self.fail(f"{what} holds {bad}; a scale must be finite and nonzero")
        return s

    def zero_point(self, index: int, what: str, of: str, length: int | None = 1) -> np.ndarray | None:
        """Check the zero point input `index` of the quantized value `of`: 8-bit, of `of`'s
        element type where that is known, its values in that type's range, and as many as
        `length` allows (as for scales)."""
        name = _input(self.node, index)
        if not name:
            return None
        z = self.graph.value(name)
        want = _elem_type(self.graph, of) if of else None
        zt = _elem_type(self.graph, name)
        if want in _8BIT and zt is not None and zt != want:
            if z is not None and np.issubdtype(z.dtype, np.integer):
                info = np.iinfo(_8BIT[want])
                bad = z.reshape(-1)[(z.reshape(-1) < info.min) | (z.reshape(-1) > info.max)]
                if bad.size:
                    self.fail(f"{what} {bad[0]} is outside {_type_name(want)}'s range [{info.min}, {info.max}]")
            self.fail(f"{what} is {_type_name(zt)}; it must be {_type_name(want)}, the type of '{of}'")
        if zt is not None and zt not in _8BIT:
            self.fail(f"{what} is {_type_name(zt)}; the QOperator ops take int8 or uint8 zero points")
        if z is not None and (z.ndim > 1 or (length is not None and z.size not in (1, length))):
            want_n = "one element" if length == 1 else f"1 or {length} elements (one per channel)"
            self.fail(f"{what} has shape {list(z.shape)}; it must have {want_n}")
        return z

    # nodes

    def dequantize(self, x: str, scale: str, zp: str, axis: int | None = None) -> str:
        return self.emit("DequantizeLinear", [x, scale] + ([zp] if zp else []), **({} if axis is None else {"axis": axis}))

    def quantize(self, y: str, scale: str, zp: str, of: str) -> None:
        """QuantizeLinear of `y` into the node's output; a missing zero point is 0 of `of`'s type
        (the contrib ops' default), uint8 when that is unknown."""
        if not zp:
            t = _elem_type(self.graph, of) or onnx.TensorProto.UINT8
            zp = self.graph.constant(f"{self.node.output[0]}_zero_point", np.zeros((), _8BIT.get(t, np.uint8)))
        self.emit("QuantizeLinear", [y, scale, zp], [self.node.output[0]])

    def per_channel(self, scale_i: int, zp_i: int, channels: int, what: str) -> tuple[str, str, bool]:
        """The scale and zero point names of a weight quantized per tensor or per channel (1 or
        `channels` values each; one of the pair per tensor is broadcast to the other's length),
        and whether they are per channel (the DequantizeLinear then needs an axis)."""
        s = self.scale(scale_i, f"{what}_scale", channels)
        z = self.zero_point(zp_i, f"{what}_zero_point", self.node.input[scale_i - 1], channels)
        scale, zp = self.node.input[scale_i], _input(self.node, zp_i)
        if channels == 1 or all(v is None or v.size == 1 for v in (s, z)):
            if s is not None and s.ndim == 1:
                scale = self.graph.constant(f"{what}_scale", s.reshape(()))
            if z is not None and z.ndim == 1:
                zp = self.graph.constant(f"{what}_zero_point", z.reshape(()))
            return scale, zp, False
        if s is None or (zp and z is None):
            self.fail(f"{what}_scale and {what}_zero_point per channel must be constants")
        if s.size != channels:
            scale = self.graph.constant(f"{what}_scale", np.full(channels, s.reshape(-1)[0], np.float32))
        if z is not None and z.size != channels:
            zp = self.graph.constant(f"{what}_zero_point", np.full(channels, z.reshape(-1)[0], z.dtype))
        if self.graph.opset < 13:
            self.fail(f"{what} per channel needs DequantizeLinear's axis, opset 13 or later (the model's is {self.graph.opset})")
        return scale, zp, True

    def bias_scale(self, x_scale: str, w_scale: str, alpha: float = 1.0) -> np.ndarray:
        """The int32 bias's scale, f32(sx * sw) (per channel where sw is), as quantize_static
        quantized the bias; both scales constants."""
        sx, sw = self.graph.value(x_scale), self.graph.value(w_scale)
        if sx is None or sw is None:
            self.fail("an int32 bias needs constant input and weight scales")
        return (np.float32(sx.reshape(-1)[0]) * sw.astype(np.float32) * np.float32(alpha)).astype(np.float32)


def _rewrites(op_type: str, *domains: str):
    def register(fn):
        def rewrite(node: onnx.NodeProto, graph: Graph) -> list:
            r = _Rewriter(node, graph)
            fn(r, node)
            return r.nodes

        rewrite.__name__ = rewrite.__qualname__ = f"rewrite_{op_type}"
        rewrite.__doc__ = fn.__doc__
        for d in domains:
            REWRITES[(d, op_type)] = rewrite
        return fn

    return register


@_rewrites("QLinearConv", "")
def _qlinear_conv(r: _Rewriter, node):
    """QLinearConv(x, sx, zx, w, sw, zw, sy, zy[, B]) -> Q(Conv(DQ(x), DQ(w)[, DQ(B, sx*sw)]), sy, zy)."""
    w = r.graph.value(node.input[3])
    if w is None:
        r.fail("its weights (input 3) must be a constant")
    channels = w.shape[0]
    r.scale(1, "x_scale")
    r.zero_point(2, "x_zero_point", node.input[0])
    scale_w, zp_w, per_channel = r.per_channel(4, 5, channels, "w")
    r.scale(6, "y_scale")
    r.zero_point(7, "y_zero_point", "")
    x = r.dequantize(node.input[0], node.input[1], _input(node, 2))
    wf = r.dequantize(node.input[3], scale_w, zp_w, 0 if per_channel else None)
    inputs = [x, wf]
    if _input(node, 8):
        b = r.graph.value(node.input[8])
        if b is None or b.dtype != np.int32:
            r.fail("its bias (input 8) must be an int32 constant")
        if b.shape != (channels,):
            r.fail(f"its bias has shape {list(b.shape)}; it must have {channels} elements (one per output channel)")
        s = r.bias_scale(node.input[1], scale_w)
        bias_axis = {"axis": 0} if s.size > 1 else {}
        inputs.append(r.emit("DequantizeLinear", [node.input[8], r.graph.constant("bias_scale", s.reshape(-1) if s.size > 1 else s.reshape(())),
                                                  r.graph.constant("bias_zero_point", np.zeros(s.shape if s.size > 1 else (), np.int32))], **bias_axis))  # fmt: skip
    y = r.emit("Conv", inputs, **_attrs(node))
    r.quantize(y, node.input[6], node.input[7], node.input[0])


def _matmul_operands(r: _Rewriter, node, a: int, b: int, columns_axis_of_b: int | None) -> tuple[str, str, str, str]:
    """DQ(A) and DQ(B) of a QLinearMatMul or QGemm (A per tensor; B per tensor or per column
    of its last dim (`columns_axis_of_b` its axis, counted for a constant B), and the names of
    B's scale and zero point as broadcast."""
    r.scale(a + 1, "a_scale")
    r.zero_point(a + 2, "a_zero_point", node.input[a])
    bv = r.graph.value(node.input[b])
    if bv is not None:
        columns = bv.shape[columns_axis_of_b] if bv.ndim else 1
    else:
        sv = r.graph.value(node.input[b + 1])
        columns = sv.size if sv is not None else 1
    scale_b, zp_b, per_column = r.per_channel(b + 1, b + 2, columns, "b")
    axis = None
    if per_column:
        if bv is None:
            r.fail("b per column must be a constant")
        axis = columns_axis_of_b % bv.ndim
    aq = r.dequantize(node.input[a], node.input[a + 1], _input(node, a + 2))
    bq = r.dequantize(node.input[b], scale_b, zp_b, axis)
    return aq, bq, scale_b, zp_b


@_rewrites("QLinearMatMul", "")
def _qlinear_matmul(r: _Rewriter, node):
    """QLinearMatMul(a, sa, za, b, sb, zb, sy, zy) -> Q(MatMul(DQ(a), DQ(b)), sy, zy); b per
    tensor or per column."""
    r.scale(6, "y_scale")
    r.zero_point(7, "y_zero_point", "")
    aq, bq, _, _ = _matmul_operands(r, node, 0, 3, -1)
    r.quantize(r.emit("MatMul", [aq, bq]), node.input[6], node.input[7], node.input[0])


@_rewrites("QGemm", MS)
def _qgemm(r: _Rewriter, node):
    """QGemm(A, sa, za, B, sb, zb[, C][, sy, zy]) -> [Q](Gemm(DQ(A), DQ(B), DQ(C, sa*sb),
    alpha, beta=alpha)): onnxruntime's kernel computes alpha * sa * sb * (A'B' + C)."""
    attrs = _attrs(node)
    alpha = _number(r, attrs, "alpha", 1.0, float)
    trans_b = _number(r, attrs, "transB", 0)
    quantized_out = bool(_input(node, 7))
    if _input(node, 8) and not quantized_out:
        r.fail("y_zero_point without y_scale")
    if quantized_out:
        r.scale(7, "y_scale")
        if not _input(node, 8):
            r.fail("y_scale without y_zero_point (onnxruntime's kernel then writes floats divided by y_scale)")
        r.zero_point(8, "y_zero_point", "")
    aq, bq, scale_b, _ = _matmul_operands(r, node, 0, 3, 0 if trans_b else -1)
    inputs = [aq, bq]
    if _input(node, 6):
        c = r.graph.value(node.input[6])
        if c is None or c.dtype != np.int32:
            r.fail("its bias C (input 6) must be an int32 constant")
        s = r.bias_scale(node.input[1], scale_b)
        if s.size == 1:
            cf = r.emit("DequantizeLinear", [node.input[6], r.graph.constant("bias_scale", s.reshape(())),
                                             r.graph.constant("bias_zero_point", np.zeros((), np.int32))])  # fmt: skip
        else:  # per column: f32(C) * s broadcast over C's shape ((N,), (1, N), (M, N), (M, 1))
            cf = r.emit("Mul", [r.emit("Cast", [node.input[6]], to=onnx.TensorProto.FLOAT), r.graph.constant("bias_scale", s.reshape(-1))])
        inputs.append(cf)
    gemm = {k: v for k, v in attrs.items() if k in ("transA", "transB")}
    y = r.emit("Gemm", inputs, alpha=alpha, beta=alpha, **gemm) if quantized_out else None
    if quantized_out:
        r.quantize(y, node.input[7], node.input[8], node.input[0])
    else:
        r.emit("Gemm", inputs, [node.output[0]], alpha=alpha, beta=alpha, **gemm)


def _elementwise(float_op: str, inputs: int, **fixed):
    """A com.microsoft QLinear op of `inputs` quantized inputs (each x, scale, zero point), then
    the output's scale and zero point: Q(float_op(DQ(x)...), s, z)."""

    def rewrite(r: _Rewriter, node):
        xs = []
        for i in range(inputs):
            r.scale(3 * i + 1, f"input {i}'s scale")
            r.zero_point(3 * i + 2, f"input {i}'s zero point", node.input[3 * i])
            xs.append(r.dequantize(node.input[3 * i], node.input[3 * i + 1], _input(node, 3 * i + 2)))
        out = 3 * inputs
        r.scale(out, "the output's scale")
        r.zero_point(out + 1, "the output's zero point", node.input[0])
        attrs = {**fixed, **_attrs(node, ("channels_last", "opset"))}
        if _attrs(node).get("channels_last", 0):
            r.fail("channels_last = 1 is not taken (quantize_static writes 0)")
        r.quantize(r.emit(float_op, xs, **attrs), node.input[out], _input(node, out + 1), node.input[0])

    rewrite.__doc__ = f"{float_op} between DequantizeLinear and QuantizeLinear."
    return rewrite


for _op, _float, _n in (("QLinearAdd", "Add", 2), ("QLinearMul", "Mul", 2), ("QLinearSigmoid", "Sigmoid", 1),
                        ("QLinearLeakyRelu", "LeakyRelu", 1), ("QLinearAveragePool", "AveragePool", 1),
                        ("QLinearGlobalAveragePool", "GlobalAveragePool", 1)):  # fmt: skip
    _rewrites(_op, MS)(_elementwise(_float, _n))


@_rewrites("QLinearSoftmax", MS)
def _qlinear_softmax(r: _Rewriter, node):
    """Softmax between DQ and Q; the `opset` attribute's Softmax (before 13: over the dims from
    `axis` on, flattened) is the model's only where axis is the last dim."""
    attrs = _attrs(node)
    axis, opset = _number(r, attrs, "axis", -1), _number(r, attrs, "opset", 13)
    if (opset < 13) != (r.graph.opset < 13) and axis != -1:
        r.fail(f"axis {axis} of a Softmax of opset {opset} in a model of opset {r.graph.opset}: only axis -1 means the same in both")
    r.scale(1, "X_scale")
    r.zero_point(2, "x_zero_point", node.input[0])
    r.scale(3, "y_scale")
    r.zero_point(4, "y_zero_point", node.input[0])
    x = r.dequantize(node.input[0], node.input[1], _input(node, 2))
    r.quantize(r.emit("Softmax", [x], axis=axis), node.input[3], _input(node, 4), node.input[0])


@_rewrites("QLinearConcat", MS)
def _qlinear_concat(r: _Rewriter, node):
    """QLinearConcat(sy, zy, (x, s, z)...) -> Q(Concat(DQ(x)...), sy, zy)."""
    if (len(node.input) - 2) % 3 or len(node.input) < 5:
        r.fail(f"{len(node.input)} inputs; it takes the output's scale and zero point, then triples (x, scale, zero point)")
    r.scale(0, "Y_scale")
    r.zero_point(1, "Y_zero_point", "")
    xs = []
    for i in range(2, len(node.input), 3):
        r.scale(i + 1, f"input {i // 3}'s scale")
        r.zero_point(i + 2, f"input {i // 3}'s zero point", node.input[i])
        xs.append(r.dequantize(node.input[i], node.input[i + 1], node.input[i + 2]))
    r.quantize(r.emit("Concat", xs, **_attrs(node)), node.input[0], node.input[1], node.input[2])


def _integer_matmul_to_float(r: _Rewriter, a_q: str, a_zp: str, a_scale: str, node, b: int, b_scale: int, b_zp: int, bias: int):
    """MatMulInteger(a_q, B, a_zp, b_zp) (exact int32 sums), then f32 times a_scale * b_scale,
    plus the float bias: how onnxruntime's MatMulIntegerToFloat kernel computes."""
    bv = r.graph.value(node.input[b])
    columns = bv.shape[-1] if bv is not None and bv.ndim else None
    r.scale(b_scale, "b_scale", columns)
    r.zero_point(b_zp, "b_zero_point", node.input[b], columns)
    zb = _input(node, b_zp)
    inputs = [a_q, node.input[b]] + ([a_zp, zb] if zb else [a_zp] if a_zp else [])  # "": an input left out
    d = r.emit("Cast", [r.emit("MatMulInteger", inputs)], to=onnx.TensorProto.FLOAT)
    scale = r.emit("Mul", [a_scale, node.input[b_scale]])
    if _input(node, bias):
        r.emit("Add", [r.emit("Mul", [d, scale]), node.input[bias]], [node.output[0]])
    else:
        r.emit("Mul", [d, scale], [node.output[0]])


@_rewrites("DynamicQuantizeMatMul", MS)
def _dynamic_quantize_matmul(r: _Rewriter, node):
    """DynamicQuantizeMatMul(A, B, sb[, zb][, bias]) -> DynamicQuantizeLinear(A) (uint8, as the
    kernel quantizes A), MatMulInteger, the f32 scale, the bias."""
    a_q = r.graph.fresh(f"{node.output[0]}_a_quantized")
    a_s, a_z = r.graph.fresh(f"{node.output[0]}_a_scale"), r.graph.fresh(f"{node.output[0]}_a_zero_point")
    r.emit("DynamicQuantizeLinear", [node.input[0]], [a_q, a_s, a_z])
    _integer_matmul_to_float(r, a_q, a_z, a_s, node, 1, 2, 3, 4)


@_rewrites("MatMulIntegerToFloat", MS)
def _matmul_integer_to_float(r: _Rewriter, node):
    """MatMulIntegerToFloat(A, B, sa, sb[, za][, zb][, bias]) -> MatMulInteger, then the f32
    scale and the bias."""
    r.scale(2, "a_scale")
    r.zero_point(4, "a_zero_point", node.input[0])
    _integer_matmul_to_float(r, node.input[0], _input(node, 4), node.input[2], node, 1, 3, 5, 6)


def _domain_moved(r: _Rewriter, node):
    """com.microsoft's QuantizeLinear / DequantizeLinear: the standard op of the same name."""
    r.nodes.append(helper.make_node(node.op_type, list(node.input), list(node.output), name=node.name, **_attrs(node)))


_rewrites("QuantizeLinear", MS)(_domain_moved)
_rewrites("DequantizeLinear", MS)(_domain_moved)
