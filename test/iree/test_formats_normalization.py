"""SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization and SkipLayerNormalization
rewritten by dequant.formats (python/formats/normalization.py), against onnxruntime's own
kernels on the model as written.

Tolerance: the rewrite computes the same f32 arithmetic as the kernels, but the mean square is
summed in another order (and IREE may vectorize it), so rtol 1e-5 with atol 1e-6 x max |y|.
"""

from __future__ import annotations


import numpy as np
import pytest
from requires import needs_iree
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")
from formats_check import model, run_iree, run_ort, rewritten, to_f16  # noqa: E402

from dequant import formats  # noqa: E402

F = TensorProto.FLOAT
MS = "com.microsoft"


def close(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * float(np.abs(want).max()))


def simplified(domain="", d=64, eps=1e-5, inv=False, axis=-1, shape=("B", "S")):
    gamma = np.random.default_rng(1).standard_normal(d).astype(np.float32)
    outs = ["y", "inv"] if inv else ["y"]
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], outs, domain=domain, epsilon=eps, axis=axis)
    o = [("y", F, [*shape, d])] + ([("inv", F, [*shape, 1])] if inv else [])
    return model([node], [("x", F, [*shape, d])], o, [numpy_helper.from_array(gamma, "gamma")])


def skip(op, d=64, bias=False, beta=False, outs=("y", "", "", "sum"), eps=None):
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "gamma")]
    inputs = ["x", "skip", "gamma"]
    if op == "SkipLayerNormalization":
        inputs.append("beta" if beta else "")
        if beta:
            inits.append(numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "beta"))
    if bias:
        inputs.append("bias")
        inits.append(numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "bias"))
    kw = {} if eps is None else {"epsilon": eps}
    node = helper.make_node(op, inputs, list(outs), domain=MS, **kw)
    o = [(n, F, ["B", "S", 1 if n in ("mean", "inv") else d]) for n in outs if n]
    return model([node], [("x", F, ["B", "S", d]), ("skip", F, ["B", "S", d])], o, inits)


def feeds_for(m, shape, seed=0):
    rng = np.random.default_rng(seed)
    return {i.name: (rng.standard_normal(shape) * 3 + 0.5).astype(np.float32) for i in m.graph.input}


@pytest.mark.parametrize("shape", [(1, 1, 64), (2, 7, 64), (3, 5, 64)])
@pytest.mark.parametrize("eps, inv", [(1e-5, False), (1e-6, True), (0.5, False)])
def test_simplified_layer_norm_as_onnxruntime(shape, eps, inv):
    m = simplified(eps=eps, inv=inv)
    f = feeds_for(m, shape)
    for got, want in zip(run_ort(rewritten(m), f), run_ort(m, f), strict=True):
        close(got, want)


def test_simplified_layer_norm_over_the_last_two_dims():
    """axis -2 (and 1 of a model stating rank 3): the mean square over the last two dims, gamma [S, D]."""
    for axis in (-2, 1):
        gamma = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
        node = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"], axis=axis)
        m = model([node], [("x", F, ["B", 5, 8])], [("y", F, ["B", 5, 8])], [numpy_helper.from_array(gamma, "gamma")])
        f = feeds_for(m, (3, 5, 8))
        close(run_ort(rewritten(m), f)[0], run_ort(m, f)[0])


@pytest.mark.parametrize("op", ["SkipSimplifiedLayerNormalization", "SkipLayerNormalization"])
@pytest.mark.parametrize("bias, beta, eps", [(False, False, None), (True, False, 1e-6), (True, True, 1e-5), (False, True, None)])
@pytest.mark.parametrize("shape", [(1, 1, 64), (2, 6, 64)])
def test_skip_layer_norms_as_onnxruntime(op, bias, beta, eps, shape):
    outs = ("y", "", "inv", "sum") if op == "SkipSimplifiedLayerNormalization" else ("y", "mean", "inv", "sum")
    m = skip(op, bias=bias, beta=beta, outs=outs, eps=eps)
    f = feeds_for(m, shape, seed=shape[1])
    got, want = run_ort(rewritten(m), f), run_ort(m, f)
    assert len(got) == len(want) == len([o for o in outs if o])
    for g, w in zip(got, want, strict=True):
        close(g, w)


def test_skip_layer_norm_output_only():
    m = skip("SkipSimplifiedLayerNormalization", outs=("y",))
    f = feeds_for(m, (2, 3, 64))
    close(run_ort(rewritten(m), f)[0], run_ort(m, f)[0])


def test_refused_forms_name_the_node_and_the_rule():
    m = skip("SkipSimplifiedLayerNormalization", outs=("y", "mean"))
    with pytest.raises(formats.FormatError, match=r"SkipSimplifiedLayerNormalization node 'y': output 'mean'"):
        formats.normalise(m)
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"], stash_type=0)
    m = model([node], [("x", F, ["B", 8]), ("gamma", F, [8])], [("y", F, ["B", 8])])
    with pytest.raises(formats.FormatError, match="stash_type must be 1"):
        formats.normalise(m)
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"], axis=1)
    m = model([node], [("x", F, None), ("gamma", F, [8])], [("y", F, ["B", 8])])
    del m.graph.input[0].type.tensor_type.shape.dim[:]
    m.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(formats.FormatError, match="axis 1 counts from the first dim"):
        formats.normalise(m)


@needs_iree
def test_norms_compiled_by_iree(tmp_path):
    """The default-domain SimplifiedLayerNormalization that stops iree-import-onnx ("No Op
    registered ... domain_version of 22"), then the skip forms: compiled by the stage, dynamic
    batch and sequence, against onnxruntime's kernels."""
    import onnx

    cases = [  # (model, onnxruntime's model: it registers SimplifiedLayerNormalization in "" only)
        (simplified(), None, [(1, 1, 64), (2, 5, 64)]),
        (simplified(domain=MS), simplified(), [(3, 2, 64)]),
        (skip("SkipSimplifiedLayerNormalization", bias=True), None, [(1, 1, 64), (2, 4, 64)]),
        (skip("SkipLayerNormalization", bias=True, beta=True), None, [(2, 3, 64)]),
    ]
    for i, (m, ref, shapes) in enumerate(cases):
        path = str(tmp_path / f"m{i}.onnx")
        onnx.save(m, path)
        for shape in shapes:
            f = feeds_for(m, shape)
            for g, w in zip(run_iree(path, f), run_ort(ref or m, f), strict=True):
                close(g, w)


@pytest.mark.parametrize("make", [lambda: simplified(), lambda: skip("SkipSimplifiedLayerNormalization", bias=True, outs=("y", "", "inv", "sum")),
                                  lambda: skip("SkipLayerNormalization", bias=True, beta=True)], ids=["simplified", "skip-simplified", "skip"])  # fmt: skip
def test_norms_f16_as_onnxruntime(make):
    """f16 inputs and weights: computed in f32 and rounded back, as the kernels do (one f16
    rounding apart at most)."""
    m, f = to_f16(make(), feeds_for(make(), (2, 3, 64)))
    for got, want in zip(run_ort(rewritten(m), f), run_ort(m, f), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3 * float(np.abs(want.astype(np.float32)).max()))


@pytest.mark.parametrize("opset", [14, 17])
def test_norms_at_older_opsets(opset):
    for m in (simplified(), skip("SkipLayerNormalization", bias=True, beta=True)):
        m.opset_import[0].version = opset
        f = feeds_for(m, (2, 3, 64))
        for got, want in zip(run_ort(rewritten(m), f), run_ort(m, f), strict=True):
            close(got, want)
