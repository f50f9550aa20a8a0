"""GroupQueryAttention (and RotaryEmbedding) rewritten by dequant.formats
(python/formats/attention.py), against onnxruntime's own contrib kernels on the model as written:
the rewritten model through onnxruntime (many cases), and a few compiled by the stage and run by
IREE's runtime.

Tolerance: f32 attention is not bitwise (the kernel's GEMMs and softmax sum in their own order,
MLAS's rotary may fuse multiply-adds): rtol 1e-5 with atol 1e-5 x max |want| for onnxruntime;
2e-5 for IREE, whose dispatches reassociate further. Present key/value are copies of (rotated)
inputs and zeros: compared with the same tolerance (the rotation is arithmetic).
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
import pytest
from requires import needs_iree
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")
from formats_check import model, run_iree, run_ort, rewritten, to_f16  # noqa: E402

from dequant import formats  # noqa: E402

F, I32 = TensorProto.FLOAT, TensorProto.INT32
MS = "com.microsoft"


def close(got, want, rtol=1e-5, what=""):
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(float(np.abs(want).max()), 1e-30), err_msg=what)


def caches(max_len: int, half: int):
    """cos/sin caches as the genai builder writes them: [max_len, R/2], position * inverse frequency."""
    inv = 1.0 / (10000 ** (np.arange(half, dtype=np.float64) / half))
    angles = np.arange(max_len)[:, None] * inv[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def gqa(nq=4, nkv=2, head=16, packed=True, rotary=True, interleaved=False, rotary_half=None, past=True,
        softcap=0.0, window=-1, smooth=False, scale=0.0, head_sink=False, max_len=64, position_ids=False, bias=None):  # fmt: skip
    """A model of one GroupQueryAttention node in the form the genai builder writes, dims dynamic."""
    attrs = {"num_heads": nq, "kv_num_heads": nkv}
    if rotary:
        attrs |= {"do_rotary": 1, "rotary_interleaved": int(interleaved)}
    if softcap:
        attrs["softcap"] = softcap
    if window >= 0:
        attrs["local_window_size"] = window
    if smooth:
        attrs["smooth_softmax"] = 1
    if scale:
        attrs["scale"] = scale
    inputs = [("query", F, ["B", "S", (nq + 2 * nkv) * head if packed else nq * head])]
    names = ["query", "", ""]
    if not packed:
        inputs += [("key", F, ["B", "S", nkv * head]), ("value", F, ["B", "S", nkv * head])]
        names = ["query", "key", "value"]
    if past:
        inputs += [("past_key", F, ["B", nkv, "P", head]), ("past_value", F, ["B", nkv, "P", head])]
        names += ["past_key", "past_value"]
    else:
        names += ["", ""]
    inputs += [("seqlens_k", I32, ["B"]), ("total_sequence_length", I32, [])]
    names += ["seqlens_k", "total_sequence_length"]
    inits = []
    if rotary:
        cos, sin = caches(max_len, rotary_half or head // 2)
        inits = [numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache")]
        names += ["cos_cache", "sin_cache"]
    if position_ids:
        inputs.append(("position_ids", TensorProto.INT64, ["B", "S"]))
        names += [""] * (9 - len(names)) + ["position_ids"]
    if bias:  # "heads": [B, Nq, S, T]; "one": [1, 1, S, T]
        inputs.append(("attention_bias", F, ["B", nq, "S", "T"] if bias == "heads" else [1, 1, "S", "T"]))
        names += [""] * (10 - len(names)) + ["attention_bias"]
    if head_sink:
        names += [""] * (11 - len(names)) + ["head_sink"]
        inits.append(numpy_helper.from_array(np.random.default_rng(5).standard_normal(nq).astype(np.float32), "head_sink"))
    node = helper.make_node("GroupQueryAttention", names, ["output", "present_key", "present_value"], domain=MS, **attrs)
    outputs = [("output", F, ["B", "S", nq * head]), ("present_key", F, ["B", nkv, "T", head]),
               ("present_value", F, ["B", nkv, "T", head])]  # fmt: skip
    return model([node], inputs, outputs, inits)


def feeds(m, b, s, p, lengths=None, seed=0, position_offset=0):
    """Inputs for batch b, s new tokens, a past buffer of p. `lengths`: each row's valid length
    after this step (seqlens_k + 1); by default p + s for every row. A first prompt is p = 0."""
    rng = np.random.default_rng(seed)
    sizes = {"B": b, "S": s, "P": p, "T": p + s}
    shapes = {i.name: [d.dim_value or sizes[d.dim_param] for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    lengths = np.array(lengths if lengths is not None else [p + s] * b, np.int32)
    out = {}
    for name, shape in shapes.items():
        if name == "seqlens_k":
            out[name] = lengths - 1
        elif name == "total_sequence_length":
            out[name] = np.array(p + s if p else s, np.int32)
        elif name == "position_ids":
            out[name] = (np.arange(s)[None, :] + (lengths - s)[:, None] * (p > 0) + position_offset).astype(np.int64)
        else:
            out[name] = rng.standard_normal(shape).astype(np.float32)
    return out


def compare(m, f, got, want, rtol=1e-5, first_prompt_lengths=None):
    """Output rows a first prompt pads (s >= a row's length) are unspecified: left out. Present
    entries after a row's length (seqlens_k + 1; S for a first prompt) keep what that row's past
    buffer held (onnxruntime writes 0 there; nothing reads them): left out too. Where every row
    fills the present (rows of one length), present is compared whole."""
    names = [o.name for o in m.graph.output]
    batch, seq = want[0].shape[:2]  # output [B, S, Nq * H]
    lengths = np.full(batch, seq) if first_prompt_lengths is not None else f["seqlens_k"] + 1
    for name, g, w in zip(names, got, want, strict=True):
        if name == "output" and first_prompt_lengths is not None:
            for b, n in enumerate(first_prompt_lengths):
                close(g[b, :n], w[b, :n], rtol, f"{name} row {b}")
        elif name.startswith("present"):
            assert g.shape == w.shape, (name, g.shape, w.shape)
            for b, n in enumerate(lengths):
                close(g[b, :, :n], w[b, :, :n], rtol, f"{name} row {b}")
            if (lengths == w.shape[2]).all():
                close(g, w, rtol, name)
        else:
            close(g, w, rtol, name)


# (b, s, p, lengths): decode, decode with rows of other past lengths, a first prompt (past of 0),
# a first prompt with padded rows, a continued prompt (batch 1, as onnxruntime requires).
STEPS = {
    "decode": (1, 1, 7, None),
    "decode-batch": (3, 1, 9, None),
    "decode-padded": (3, 1, 9, [10, 6, 3]),
    "prompt": (1, 6, 0, None),
    "prompt-batch-padded": (3, 5, 0, [5, 3, 1]),
    "continued": (1, 4, 5, None),
}


def run_case(m, step, seed=0, **kw):
    b, s, p, lengths = STEPS[step]
    f = feeds(m, b, s, p, lengths, seed=seed, **kw)
    want = run_ort(m, f)
    got = run_ort(rewritten(m), f)
    compare(m, f, got, want, first_prompt_lengths=lengths if p == 0 else None)


@pytest.mark.parametrize("step", list(STEPS))
@pytest.mark.parametrize("interleaved", [False, True])
def test_gqa_as_the_genai_builder_writes_it(step, interleaved):
    """Packed QKV, do_rotary, past and present KV: the builder's form (-p int4 -e cpu)."""
    run_case(gqa(interleaved=interleaved), step)


@pytest.mark.parametrize("step", ["decode", "decode-padded", "prompt-batch-padded", "continued"])
@pytest.mark.parametrize(
    "options",
    [
        {"packed": False},
        {"rotary": False},
        {"rotary": False, "packed": False},
        {"nq": 6, "nkv": 1},
        {"nq": 3, "nkv": 3, "interleaved": True},
        {"softcap": 2.5},
        {"window": 3},
        {"window": 1, "interleaved": True},
        {"smooth": True},
        {"head_sink": True},
        {"scale": 0.3},
        {"head": 32, "rotary_half": 8},
        {"head": 32, "rotary_half": 8, "interleaved": True},
        {"softcap": 1.5, "window": 2, "smooth": True, "packed": False},
        {"position_ids": True},
        {"bias": "heads"},
        {"bias": "one", "softcap": 2.0, "window": 2},
        {"bias": "heads", "nq": 4, "nkv": 4, "packed": False},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()),
)
def test_gqa_options(step, options):
    run_case(gqa(**options), step, seed=len(options))


def test_gqa_without_past():
    """No past inputs (a model that only prefills): present is the new keys and values."""
    m = gqa(past=False)
    for b, s in ((1, 5), (2, 3)):
        f = feeds(m, b, s, 0)
        compare(m, f, run_ort(rewritten(m), f), run_ort(m, f))


def test_gqa_refused_forms_name_the_node_and_the_rule():
    m = gqa()
    m.graph.node[0].attribute.append(helper.make_attribute("qk_output", 1))
    with pytest.raises(formats.FormatError, match=r"GroupQueryAttention node 'output': qk_output must be 0"):
        formats.normalise(m)
    m = gqa()
    m.graph.node[0].input.extend(["", "bias"])
    with pytest.raises(formats.FormatError, match=r"attention_bias must be stated as \[B or 1, num_heads or 1"):
        formats.normalise(m)
    m = gqa()
    del m.graph.node[0].input[7:]
    with pytest.raises(formats.FormatError, match="do_rotary needs cos_cache and sin_cache"):
        formats.normalise(m)
    m = gqa(window=0)
    with pytest.raises(formats.FormatError, match="local_window_size 0 attends to no key"):
        formats.normalise(m)
    m = gqa(nq=3, nkv=2, rotary=False)
    with pytest.raises(formats.FormatError, match="num_heads must be a positive multiple of kv_num_heads"):
        formats.normalise(m)


@needs_iree
def test_gqa_compiled_by_iree(tmp_path):
    """The builder's form compiled once (dims dynamic), run for a prompt, decode steps of batch 1
    and 3 (rows of other lengths), and a continued prompt."""
    m = gqa()
    path = str(tmp_path / "gqa.onnx")
    onnx.save(m, path)
    import iree.runtime as rt

    from dequant import iree as stage

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, stage.compile_onnx(path)))
    for step in ("decode", "decode-padded", "prompt", "prompt-batch-padded", "continued"):
        b, s, p, lengths = STEPS[step]
        f = feeds(m, b, s, p, lengths, seed=1)
        got = ctx.modules.module["g"](*f.values())
        compare(m, f, [np.asarray(g) for g in got], run_ort(m, f), rtol=2e-5, first_prompt_lengths=lengths if p == 0 else None)


def decoder_layer(d=64, nq=4, nkv=2, head=16, max_len=64):
    """A tiny decoder layer as the genai builder writes one: SimplifiedLayerNormalization (default
    domain), the QKV MatMul, seqlens_k and total_sequence_length from the attention mask,
    GroupQueryAttention (packed QKV, do_rotary, past KV), the output MatMul and
    SkipSimplifiedLayerNormalization returning the residual sum."""
    rng = np.random.default_rng(11)
    arr = lambda name, *shape: numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)  # noqa: E731
    cos, sin = caches(max_len, head // 2)
    inits = [arr("ln1", d), arr("wqkv", d, (nq + 2 * nkv) * head), arr("wo", nq * head, d), arr("ln2", d),
             numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache"),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"), numpy_helper.from_array(np.array(1, np.int64), "one")]  # fmt: skip
    nodes = [
        helper.make_node("SimplifiedLayerNormalization", ["x", "ln1"], ["h"], epsilon=1e-5),
        helper.make_node("MatMul", ["h", "wqkv"], ["qkv"]),
        helper.make_node("ReduceSum", ["attention_mask", "axis1"], ["lengths"], keepdims=0),
        helper.make_node("Sub", ["lengths", "one"], ["lengths_1"]),
        helper.make_node("Cast", ["lengths_1"], ["seqlens_k"], to=I32),
        helper.make_node("Shape", ["attention_mask"], ["mask_shape"]),
        helper.make_node("Gather", ["mask_shape", "one"], ["total64"], axis=0),
        helper.make_node("Cast", ["total64"], ["total"], to=I32),
        helper.make_node("GroupQueryAttention", ["qkv", "", "", "past_key", "past_value", "seqlens_k", "total", "cos_cache", "sin_cache"],
                         ["attn", "present_key", "present_value"], domain=MS, num_heads=nq, kv_num_heads=nkv, do_rotary=1),
        helper.make_node("MatMul", ["attn", "wo"], ["o"]),
        helper.make_node("SkipSimplifiedLayerNormalization", ["o", "x", "ln2"], ["y", "", "", "residual"], domain=MS, epsilon=1e-5),
    ]  # fmt: skip
    inputs = [("x", F, ["B", "S", d]), ("attention_mask", TensorProto.INT64, ["B", "T"]),
              ("past_key", F, ["B", nkv, "P", head]), ("past_value", F, ["B", nkv, "P", head])]  # fmt: skip
    outputs = [("y", F, ["B", "S", d]), ("residual", F, ["B", "S", d]),
               ("present_key", F, ["B", nkv, "T", head]), ("present_value", F, ["B", nkv, "T", head])]  # fmt: skip
    return model(nodes, inputs, outputs, inits)


@needs_iree
def test_decoder_layer_compiled_whole(tmp_path):
    """The layer compiled once with batch, sequence and past dynamic, then run as generation
    does: a prompt, decode steps feeding present back as past, and two rows of other lengths
    (the mask's zeros on the right of the shorter row's past), against onnxruntime at each step."""
    m = decoder_layer()
    path = str(tmp_path / "layer.onnx")
    onnx.save(m, path)
    import iree.runtime as rt

    from dequant import iree as stage

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, stage.compile_onnx(path)))
    rng = np.random.default_rng(0)
    for b, s, steps, short in ((1, 5, 3, 0), (2, 4, 2, 0), (2, 1, 2, 3)):
        past = np.zeros((b, 2, 0, 16), np.float32)
        kv = (past, past)
        mask = np.ones((b, 0), np.int64)
        for step in range(steps):
            n = s if step == 0 else 1
            mask = np.concatenate([mask, np.ones((b, n), np.int64)], axis=1)
            if short and step == 0:  # a decode step over a past of 6 whose row 1 holds `short` fewer
                kv = tuple(rng.standard_normal((b, 2, 6, 16)).astype(np.float32) for _ in range(2))
                mask = np.ones((b, 7), np.int64)
                mask[1, 6 - short : 6] = 0  # only the sum counts: row 1's past tail is never read
            f = {"x": rng.standard_normal((b, n, 64)).astype(np.float32), "attention_mask": mask, "past_key": kv[0], "past_value": kv[1]}
            want = run_ort(m, f)
            got = [np.asarray(g) for g in ctx.modules.module["g"](*f.values())]
            for name, g, w in zip(("y", "residual", "present_key", "present_value"), got, want, strict=True):
                if name.startswith("present"):  # each row up to its length (compare's docstring)
                    for row, n in enumerate(mask.sum(axis=1)):
                        close(g[row, :, :n], w[row, :, :n], 2e-5, f"{name} row {row}, b={b} step {step}")
                else:
                    close(g, w, 2e-5, f"{name}, b={b} step {step}")
            kv = (got[2], got[3])  # the stage's own cache carried on, as generation does


def rotary(layout=3, interleaved=False, heads=4, head=32, half=None, start=False, num_heads=True, max_len=64):
    """A model of one com.microsoft RotaryEmbedding node, B and S dynamic."""
    half = half or head // 2
    cos, sin = caches(max_len, half)
    attrs = {"interleaved": int(interleaved)}
    if num_heads:
        attrs["num_heads"] = heads
    if half != head // 2:
        attrs["rotary_embedding_dim"] = 2 * half
    shape = ["B", "S", heads * head] if layout == 3 else ["B", heads, "S", head]
    node = helper.make_node("RotaryEmbedding", ["x", "position_ids", "cos_cache", "sin_cache"], ["y"], domain=MS, **attrs)
    inits = [numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache")]
    pos = ("position_ids", TensorProto.INT64, [1] if start else ["B", "S"])
    return model([node], [("x", F, shape), pos], [("y", F, shape)], inits)


def rotary_feeds(m, b, s, seed=0):
    rng = np.random.default_rng(seed)
    x = m.graph.input[0].type.tensor_type.shape.dim
    shape = [d.dim_value or {"B": b, "S": s}[d.dim_param] for d in x]
    start = len(m.graph.input[1].type.tensor_type.shape.dim) == 1 and not m.graph.input[1].type.tensor_type.shape.dim[0].dim_param
    pos = np.array([5]) if start else rng.integers(0, 64 - s, size=(b, 1)) + np.arange(s)[None, :]
    return {"x": rng.standard_normal(shape).astype(np.float32), "position_ids": pos.astype(np.int64)}


@pytest.mark.parametrize("layout", [3, 4])
@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("options", [{}, {"start": True}, {"half": 8}, {"num_heads": False}], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_rotary_embedding_as_onnxruntime(layout, interleaved, options):
    m = rotary(layout, interleaved, **options)
    for b, s in ((1, 1), (2, 5), (3, 2)):
        f = rotary_feeds(m, b, s, seed=b * s)
        close(run_ort(rewritten(m), f)[0], run_ort(m, f)[0], what=f"b={b} s={s}")


@needs_iree
def test_rotary_embedding_compiled_by_iree(tmp_path):
    for i, m in enumerate((rotary(3), rotary(4, interleaved=True, half=8))):
        path = str(tmp_path / f"rope{i}.onnx")
        onnx.save(m, path)
        for b, s in ((1, 1), (2, 5)):
            f = rotary_feeds(m, b, s, seed=i)
            close(run_iree(path, f)[0], run_ort(m, f)[0], 2e-5, f"model {i} b={b} s={s}")


def test_rotary_embedding_refused_forms():
    m = rotary()
    m.graph.node[0].attribute.append(helper.make_attribute("is_packed_batching", 1))
    with pytest.raises(formats.FormatError, match="RotaryEmbedding node 'y': is_packed_batching must be 0"):
        formats.normalise(m)
    m = rotary()
    m.graph.input[1].type.tensor_type.ClearField("shape")
    with pytest.raises(formats.FormatError, match="position_ids must be 2-D"):
        formats.normalise(m)
    m = rotary(half=8)
    m.graph.node[0].attribute[-1].i = 24
    with pytest.raises(formats.FormatError, match="rotary_embedding_dim 24 must be twice the cos cache's last dim 8"):
        formats.normalise(m)


def test_rotary_embedding_of_an_unstated_value():
    """The genai builder's RotaryEmbedding reads a MatMul of the normed hidden states, whose rank
    the model does not state: it is followed back through the MatMul and the norm."""
    rng = np.random.default_rng(3)
    cos, sin = caches(64, 16)
    inits = [numpy_helper.from_array(a, n) for a, n in ((cos, "cos_cache"), (sin, "sin_cache"),
             (rng.standard_normal(128).astype(np.float32), "ln"), (rng.standard_normal((128, 128)).astype(np.float32), "w"))]  # fmt: skip
    nodes = [helper.make_node("SimplifiedLayerNormalization", ["x", "ln"], ["h"]), helper.make_node("MatMul", ["h", "w"], ["q"]),
             helper.make_node("RotaryEmbedding", ["q", "position_ids", "cos_cache", "sin_cache"], ["y"], domain=MS, num_heads=4)]  # fmt: skip
    m = model(nodes, [("x", F, ["B", "S", 128]), ("position_ids", TensorProto.INT64, ["B", "S"])], [("y", F, ["B", "S", 128])], inits)
    f = {"x": rng.standard_normal((2, 3, 128)).astype(np.float32), "position_ids": np.array([[0, 1, 2], [4, 5, 6]], np.int64)}
    close(run_ort(rewritten(m), f)[0], run_ort(m, f)[0])


@pytest.mark.parametrize("step", ["decode-padded", "prompt-batch-padded", "continued"])
@pytest.mark.parametrize("options", [{}, {"softcap": 2.0, "smooth": True, "window": 3, "packed": False}], ids=["builder", "options"])
def test_gqa_f16_as_onnxruntime(step, options):
    """f16 (the builder's GPU models): onnxruntime's CPU kernel and the rewrite agree to f16
    rounding (atol 2e-3 of the largest output; they were equal on these cases)."""
    m = gqa(**options)
    b, s, p, lengths = STEPS[step]
    m, f = to_f16(m, feeds(m, b, s, p, lengths))
    compare(m, f, run_ort(rewritten(m), f), run_ort(m, f), rtol=2e-3, first_prompt_lengths=lengths if p == 0 else None)


@needs_iree
def test_gqa_f16_compiled_by_iree(tmp_path):
    """f16 through IREE: within an f16 rounding or two of onnxruntime (IREE rotates and sums in
    f16 where onnxruntime widens; max 2e-3 on outputs of magnitude 3-4)."""
    m = gqa()
    b, s, p, lengths = STEPS["decode-padded"]
    m, f = to_f16(m, feeds(m, b, s, p, lengths))
    path = str(tmp_path / "gqa16.onnx")
    onnx.save(m, path)
    compare(m, f, run_iree(path, f), run_ort(m, f), rtol=1e-3)


@needs_iree
def test_gqa_options_compiled_by_iree(tmp_path):
    """Separate Q/K/V, interleaved rotary, softcap, a local window, smooth softmax and an
    attention bias, compiled once and run for a decode step with rows of other lengths and a
    continued prompt."""
    m = gqa(packed=False, interleaved=True, softcap=2.0, window=3, smooth=True, bias="heads")
    path = str(tmp_path / "gqa.onnx")
    onnx.save(m, path)
    for step in ("decode-padded", "continued"):
        b, s, p, lengths = STEPS[step]
        f = feeds(m, b, s, p, lengths, seed=2)
        compare(m, f, run_iree(path, f), run_ort(m, f), rtol=2e-5)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("half", [8, 16])
def test_gqa_caches_as_inputs(interleaved, half):
    """cos/sin caches fed at run time (no constant to read R from) and no head size stated: R,
    the rotated part and the default scale 1/sqrt(H) found from the shapes when the graph runs."""
    m = gqa(head=32, rotary_half=half, interleaved=interleaved)
    cos, sin = (numpy_helper.to_array(t) for t in m.graph.initializer[:2])
    del m.graph.initializer[:2]
    m.graph.input.extend([helper.make_tensor_value_info(n, F, ["M", "R"]) for n in ("cos_cache", "sin_cache")])
    m.graph.input[1].type.tensor_type.shape.dim[3].dim_param = "H"  # past_key's head size unstated
    m.graph.input[2].type.tensor_type.shape.dim[3].dim_param = "H"
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "QKV"
    for step in ("decode-padded", "continued"):
        b, s, p, lengths = STEPS[step]
        rng = np.random.default_rng(3)
        f = {"query": rng.standard_normal((b, s, 8 * 32)).astype(np.float32),
             "past_key": rng.standard_normal((b, 2, p, 32)).astype(np.float32),
             "past_value": rng.standard_normal((b, 2, p, 32)).astype(np.float32),
             "seqlens_k": np.array(lengths or [p + s] * b, np.int32) - 1, "total_sequence_length": np.array(p + s, np.int32),
             "cos_cache": cos, "sin_cache": sin}  # fmt: skip
        compare(m, f, run_ort(rewritten(m), f), run_ort(m, f))


@pytest.mark.parametrize("opset", [14, 17])
def test_gqa_at_older_opsets(opset):
    """Exporters before the genai builder write opsets 14-17: ReduceMax/ReduceMean take axes as an
    attribute there, and Shape no start/end before 15."""
    for options in ({}, {"smooth": True, "window": 2}):
        m = gqa(**options)
        m.opset_import[0].version = opset
        run_case(m, "decode-padded")


def test_gqa_head_size_from_the_qkv_projection():
    """The genai builder states no head size (past is [B, Nkv, P, kv_cache_dim]) and no shape for
    the QKV projection: the head size comes from the projection's MatMulNBits (N), so the rotary
    covers whole heads without slicing, and the numbers are onnxruntime's."""
    nq, nkv, head, k = 4, 2, 16, 64
    n = (nq + 2 * nkv) * head
    rng = np.random.default_rng(4)
    cos, sin = caches(64, head // 2)
    inits = [numpy_helper.from_array(rng.integers(0, 256, (n, k // 32, 16)).astype(np.uint8), "w"),
             numpy_helper.from_array((rng.random(n * k // 32) * 0.02).astype(np.float32), "scales"),
             numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache")]  # fmt: skip
    nodes = [helper.make_node("MatMulNBits", ["x", "w", "scales"], ["qkv"], domain=MS, K=k, N=n, bits=4, block_size=32),
             helper.make_node("GroupQueryAttention", ["qkv", "", "", "past_key", "past_value", "seqlens_k", "total_sequence_length",
                              "cos_cache", "sin_cache"], ["output", "present_key", "present_value"], domain=MS, num_heads=nq,
                              kv_num_heads=nkv, do_rotary=1, scale=0.25)]  # fmt: skip
    inputs = [("x", F, ["B", "S", k]), ("past_key", F, ["B", nkv, "P", "H"]), ("past_value", F, ["B", nkv, "P", "H"]),
              ("seqlens_k", I32, ["B"]), ("total_sequence_length", I32, [])]  # fmt: skip
    outputs = [("output", F, ["B", "S", nq * head]), ("present_key", F, ["B", nkv, "T", "H"]), ("present_value", F, ["B", nkv, "T", "H"])]
    m = model(nodes, inputs, outputs, inits)
    r = rewritten(m, keep={(MS, "MatMulNBits")})
    ends = {t.name: numpy_helper.to_array(t) for t in r.graph.initializer}
    tails = [x for x in r.graph.node if x.op_type == "Slice" and np.iinfo(np.int64).max in ends.get(x.input[2], [])]
    assert not tails, "rotary over whole heads slices off no unrotated tail"
    f = {"x": rng.standard_normal((2, 1, k)).astype(np.float32), "past_key": rng.standard_normal((2, nkv, 5, head)).astype(np.float32),
         "past_value": rng.standard_normal((2, nkv, 5, head)).astype(np.float32), "seqlens_k": np.array([5, 3], np.int32),
         "total_sequence_length": np.array(6, np.int32)}  # fmt: skip
    compare(m, f, run_ort(r, f), run_ort(m, f))


def longrope(m: onnx.ModelProto, original: int, output: bool = False) -> onnx.ModelProto:
    """The model with its constant cos/sin caches chosen as the genai builder writes LongRoPE
    models (Phi-3 128K, Phi-4-mini): an If on total length > `original`, each branch one Constant
    per cache: the long caches (every position, other frequencies) or the short (`original` rows).
    `output`: the choice is also a graph output (a reader the rewrite does not know)."""
    cos, sin = (numpy_helper.to_array(t) for t in m.graph.initializer[:2])
    del m.graph.initializer[:2]
    length = "total_sequence_length" if any(i.name == "total_sequence_length" for i in m.graph.input) else "length"
    if length == "length":
        m.graph.input.append(helper.make_tensor_value_info(length, I32, []))
    long_angles = np.arange(cos.shape[0])[:, None] * 0.37 / (10000 ** (np.arange(cos.shape[1]) / cos.shape[1]))[None, :]
    choices = {"long": (np.cos(long_angles).astype(np.float32), np.sin(long_angles).astype(np.float32)),
               "short": (cos[:original], sin[:original])}  # fmt: skip

    def branch(which):
        c, s = choices[which]
        nodes = [helper.make_node("Constant", [], [f"{n}_{which}"], value=numpy_helper.from_array(a, f"{n}_{which}"))
                 for n, a in (("cos", c), ("sin", s))]  # fmt: skip
        return helper.make_graph(nodes, which, [], [helper.make_tensor_value_info(f"{n}_{which}", F, list(c.shape)) for n in ("cos", "sin")])

    m.graph.initializer.append(numpy_helper.from_array(np.array(original, np.int32), "original"))
    m.graph.node.insert(0, helper.make_node("If", ["use_long"], ["cos_cache", "sin_cache"], then_branch=branch("long"), else_branch=branch("short")))
    m.graph.node.insert(0, helper.make_node("Greater", [length, "original"], ["use_long"]))
    m.graph.value_info.extend([helper.make_tensor_value_info(n, F, ["max_sequence_length", "head_dim / 2"]) for n in ("cos_cache", "sin_cache")])
    if output:
        m.graph.output.append(helper.make_tensor_value_info("cos_cache", F, ["M", "R"]))
    return m


@pytest.mark.parametrize("step", ["prompt", "decode", "decode-batch", "decode-padded", "continued"])
def test_gqa_longrope_cache_choice(step):
    """The builder's LongRoPE caches (partial rotary, as Phi-4-mini: 24 of each head's 64 pairs'
    halves): the If goes, each rotary's rows are gathered from both caches and picked by a Where;
    onnxruntime's numbers on either side of the original length (8: totals 6 and 8 read the short
    caches, 9 and 10 the long ones)."""
    m = longrope(gqa(head=64, rotary_half=24), original=8)
    assert not [n for n in rewritten(m).graph.node if n.op_type == "If"]
    run_case(m, step)


def test_longrope_cache_choice_read_elsewhere_stays():
    """An If whose caches something else also reads (here a graph output) is left to IREE as it is."""
    m = longrope(gqa(), original=8, output=True)
    assert [n.op_type for n in formats.normalise(copy.deepcopy(m))[0].graph.node].count("If") == 1
    for step in ("decode", "continued"):
        b, s, p, lengths = STEPS[step]
        f = feeds(m, b, s, p, lengths)
        want = run_ort(m, f)
        got = run_ort(rewritten(m), f)
        close(got[-1], want[-1], what="cos_cache")
        compare(gqa(), f, got[:-1], want[:-1])  # the attention's own outputs


@pytest.mark.parametrize("start", [False, True])
def test_rotary_embedding_longrope_cache_choice(start):
    """com.microsoft RotaryEmbedding reading the LongRoPE choice: the If goes, onnxruntime's numbers."""
    m = longrope(rotary(start=start), original=8)
    assert not [n for n in rewritten(m).graph.node if n.op_type == "If"]
    for b, s, length in ((1, 1, 6), (2, 5, 20)):
        pos = np.array([length - s]) if start else np.tile(np.arange(length - s, length), (b, 1))  # the last s positions
        f = rotary_feeds(m, b, s, seed=s) | {"position_ids": pos.astype(np.int64), "length": np.array(length, np.int32)}
        close(run_ort(rewritten(m), f)[0], run_ort(m, f)[0], what=f"b={b} s={s} length={length}")


def rotary_23(layout=3, interleaved=False, heads=4, head=32, half=None, gathered=False, max_len=64):
    """A model of one ONNX RotaryEmbedding (opset 23; IREE 3.13 fails to legalize it), B and S
    dynamic; `gathered`: no position_ids, the caches fed as [B, S, R / 2]."""
    half = half or head // 2
    attrs = {"interleaved": int(interleaved)} | ({"num_heads": heads} if layout == 3 else {})
    if half != head // 2:
        attrs["rotary_embedding_dim"] = 2 * half
    shape = ["B", "S", heads * head] if layout == 3 else ["B", heads, "S", head]
    inputs, inits = [("x", F, shape)], []
    if gathered:
        inputs += [("cos_cache", F, ["B", "S", half]), ("sin_cache", F, ["B", "S", half])]
        names = ["x", "cos_cache", "sin_cache"]
    else:
        cos, sin = caches(max_len, half)
        inits = [numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache")]
        inputs.append(("position_ids", TensorProto.INT64, ["B", "S"]))
        names = ["x", "cos_cache", "sin_cache", "position_ids"]
    node = helper.make_node("RotaryEmbedding", names, ["y"], **attrs)
    return model([node], inputs, [("y", F, shape)], inits, opset=23)


def rotary_23_feeds(m, b, s, seed=0):
    rng = np.random.default_rng(seed)
    sizes = {"B": b, "S": s}
    shapes = {i.name: [d.dim_value or sizes[d.dim_param] for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    f = {"x": rng.standard_normal(shapes["x"]).astype(np.float32)}
    if "position_ids" in shapes:
        f["position_ids"] = (rng.integers(0, 64 - s, size=(b, 1)) + np.arange(s)[None, :]).astype(np.int64)
    else:
        angles = rng.random(shapes["cos_cache"]) * 6
        f |= {"cos_cache": np.cos(angles).astype(np.float32), "sin_cache": np.sin(angles).astype(np.float32)}
    return f


@pytest.mark.parametrize("layout", [3, 4])
@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("options", [{}, {"half": 8}, {"gathered": True}], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_onnx_rotary_embedding_as_onnxruntime(layout, interleaved, options):
    m = rotary_23(layout, interleaved, **options)
    for b, s in ((1, 1), (2, 5)):
        f = rotary_23_feeds(m, b, s, seed=b * s)
        close(run_ort(rewritten(m), f)[0], run_ort(m, f)[0], what=f"b={b} s={s}")


@needs_iree
def test_onnx_rotary_embedding_compiled_by_iree(tmp_path):
    m = rotary_23(3, half=8)
    path = str(tmp_path / "rope23.onnx")
    onnx.save(m, path)
    for b, s in ((1, 1), (2, 5)):
        f = rotary_23_feeds(m, b, s)
        close(run_iree(path, f)[0], run_ort(m, f)[0], 2e-5, f"b={b} s={s}")
