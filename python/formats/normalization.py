"""onnxruntime's layer normalizations that exporters write beside quantized weights:
`SimplifiedLayerNormalization` (RMS norm; onnxruntime registers it in the default domain, and
some exporters write it as com.microsoft), com.microsoft `SkipSimplifiedLayerNormalization`
and `SkipLayerNormalization` (a residual add fused with the norm), as standard ONNX.

Each follows onnxruntime's CPU kernels (layer_norm_impl.cc, skip_layer_norm.cc): the sum, mean
and mean square in f32 (inputs of other float types are widened first and the outputs rounded
back, as the kernels do), `y = x / sqrt(mean(x^2) + epsilon) * gamma`, and for the non-simplified
form `y = (x - mean) / sqrt(mean(x^2) - mean^2 + epsilon) * gamma + beta` (the kernel's variance,
not ONNX LayerNormalization's `mean((x - mean)^2)`). Arithmetic: docs/semantics.md#layer-norms.
"""

from __future__ import annotations

import numpy as np
import onnx

from .rewrites import MS, REWRITES, FormatError, Graph
from .emit import FLOAT, Emit, attr, elem_type, rank


def _to_f32(e: Emit, x: str) -> str:
    return x if elem_type(e.graph, x) == FLOAT else e.cast(x, FLOAT)


def _from_f32(e: Emit, y: str, like: str, out: str) -> str:
    """y (f32) as the element type of `like`, into `out`."""
    t = elem_type(e.graph, like)
    if t == FLOAT:
        return e.op("Identity", y, out=out)
    if t is not None:
        return e.op("Cast", y, out=out, to=t)
    return e.op("CastLike", y, like, out=out)


def _output(node: onnx.NodeProto, i: int) -> str:
    return node.output[i] if len(node.output) > i else ""


def _normalise(e: Emit, x: str, axes: list[int], epsilon: float, *, centred: bool):
    """(y before gamma, mean or None, 1 / rms): over `axes` of f32 x, as onnxruntime's kernels."""
    square = e.reduce_mean(e.op("Mul", x, x), axes)
    eps = e.const(np.float32(epsilon), "epsilon")
    if centred:
        mean = e.reduce_mean(x, axes)
        rms = e.op("Sqrt", e.op("Add", e.op("Sub", square, e.op("Mul", mean, mean)), eps))
        return e.op("Div", e.op("Sub", x, mean), rms), mean, rms
    rms = e.op("Sqrt", e.op("Add", square, eps))
    return e.op("Div", x, rms), None, rms


def simplified_layer_normalization(node: onnx.NodeProto, graph: Graph) -> list:
    """Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale; inv_std_var = 1 / that
    root (f32, the normalised dims kept as 1)."""
    e = Emit(node, graph)
    if len(node.input) < 2 or not node.input[1]:
        raise FormatError(node, "takes inputs X and scale")
    axis = attr(node, "axis", -1)
    if axis >= 0:
        r = rank(graph, node.input[0])
        if r is None:
            raise FormatError(node, f"axis {axis} counts from the first dim and the model does not state X's rank; "
                                    "a negative axis is taken")  # fmt: skip
        axis -= r
    if attr(node, "stash_type", 1) != 1:
        raise FormatError(node, "stash_type must be 1 (float): onnxruntime's CPU kernel computes in float")
    x = _to_f32(e, node.input[0])
    y, _, rms = _normalise(e, x, list(range(axis, 0)), attr(node, "epsilon", 1e-5), centred=False)
    _from_f32(e, e.op("Mul", y, _to_f32(e, node.input[1])), node.input[1], node.output[0])
    if _output(node, 1):
        e.op("Reciprocal", rms, out=node.output[1])
    return e.nodes


def _skip(node: onnx.NodeProto, graph: Graph, *, centred: bool) -> list:
    """output = norm(input + skip + bias) * gamma (+ beta); input_skip_bias_sum = that sum."""
    e = Emit(node, graph)
    inputs = list(node.input) + [""] * (5 - len(node.input))
    if not inputs[0] or not inputs[1] or not inputs[2]:
        raise FormatError(node, "takes inputs input, skip and gamma")
    beta, bias = (inputs[3], inputs[4]) if centred else ("", inputs[3])
    if _output(node, 1) and not centred:
        raise FormatError(node, "output 'mean' of the simplified (RMS) form is not computed by onnxruntime's kernel")
    s = e.op("Add", _to_f32(e, inputs[0]), _to_f32(e, inputs[1]))
    if bias:
        s = e.op("Add", s, _to_f32(e, bias))
    y, mean, rms = _normalise(e, s, [-1], attr(node, "epsilon", 1e-12), centred=centred)
    y = e.op("Mul", y, _to_f32(e, inputs[2]))
    if beta:
        y = e.op("Add", y, _to_f32(e, beta))
    _from_f32(e, y, inputs[0], node.output[0])
    if _output(node, 1):
        e.op("Identity", mean, out=node.output[1])
    if _output(node, 2):
        e.op("Reciprocal", rms, out=node.output[2])
    if _output(node, 3):
        _from_f32(e, s, inputs[0], node.output[3])
    return e.nodes


def skip_simplified_layer_normalization(node: onnx.NodeProto, graph: Graph) -> list:
    return _skip(node, graph, centred=False)


def skip_layer_normalization(node: onnx.NodeProto, graph: Graph) -> list:
    return _skip(node, graph, centred=True)


REWRITES[("", "SimplifiedLayerNormalization")] = simplified_layer_normalization
REWRITES[(MS, "SimplifiedLayerNormalization")] = simplified_layer_normalization
REWRITES[(MS, "SkipSimplifiedLayerNormalization")] = skip_simplified_layer_normalization
REWRITES[(MS, "SkipLayerNormalization")] = skip_layer_normalization
