"""onnxruntime's attention contrib ops that onnxruntime-genai's model builder writes into LLMs:
com.microsoft `GroupQueryAttention` (every layer) and `RotaryEmbedding` (where rotary is not
done inside the attention), and ONNX `RotaryEmbedding` (opset 23), as standard ONNX.

GroupQueryAttention follows onnxruntime's CPU kernel (group_query_attention.cc,
gqa_attention_base.h); per batch row b, with S new tokens and the past buffer's length P:

- the row's past length `p[b] = 0` for a first prompt (`S == total_sequence_length`), else
  `seqlens_k[b] + 1 - S`; new token s sits at position `p[b] + s` (also its rotary position,
  unless `position_ids` are given);
- present = past padded with zeros to `T = max(total_sequence_length, P)`, the S new (rotated)
  keys or values scattered in at `p[b] + s` (entries after a row's `p[b] + S` are what its past
  buffer held there, where onnxruntime writes 0: nothing reads them);
- scores `scale * Q K^T` (GQA: query head n reads kv head `n / (num_heads / kv_num_heads)`),
  `softcap * tanh(x / softcap)`, keys `t <= p[b] + s` (and `t > p[b] + s - local_window_size`)
  kept, the rest the lowest float; a softmax, with a 0 logit (`smooth_softmax`) or the head's
  `head_sink` logit beside the row, dropped after it; times V.

Refused, each with a FormatError naming the node and the rule: quantized KV caches
(`k_scale`/`v_scale`, `k_quant_type`/`v_quant_type`), `q_norm_weight`/`k_norm_weight`,
`query_seqlens`, `attention_bias` of unstated heads, `qk_output` and the `output_qk` output, `causal` other than 1,
`sliding_window_cache`, `local_window_size` 0, `do_rotary` without cos/sin caches. Past and present
sharing one buffer (`past_present_share_buffer`, present as long as past) needs the two to be the
same memory, which an ONNX graph cannot say: onnxruntime decides it from the bound buffers'
addresses, so here past and present are always separate tensors, present as long as
`max(total_sequence_length, P)` (what onnxruntime computes for separate buffers).
Arithmetic and exactness: docs/semantics.md#attention.

The builder's LongRoPE models (Phi-3 128K, Phi-4-mini) choose their cos/sin caches with an `If` on
the total length, each branch one Constant per cache (short and long). Where every reader of the
choice is a rotary here, the `If` goes: each reader gathers its rows from both caches and picks
them with a `Where` on the condition (`_cache_choice`), and the `If`, read by nothing more, is
dropped: IREE would read its condition back to the host at every call, and the caches are never
copied (docs/iree.md#model-formats).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .rewrites import MS, REWRITES, FormatError, Graph
from .emit import FLOAT, INT64, Emit, attr, elem_type, rank

GQA_INPUTS = ("query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length", "cos_cache",
              "sin_cache", "position_ids", "attention_bias", "head_sink", "k_scale", "v_scale", "q_norm_weight",
              "k_norm_weight", "query_seqlens")  # fmt: skip


def _static_dim(graph: Graph, name: str, axis: int, _depth: int = 0) -> int | None:
    """A dim of a value where the model states it; for the last dim also followed back through
    its producer (MatMulNBits' N, a MatMul by a constant, a bias Add, Cast), as the genai builder
    states no shape for the QKV projection GroupQueryAttention reads."""
    t = graph.constants.get(name)
    if t is not None:
        return int(t.dims[axis])
    choice = _cache_choice(graph, name)
    if choice is not None and len({c.shape[axis] for c in choice[1:]}) == 1:
        return int(choice[1].shape[axis])
    g = graph.model.graph
    for v in (*g.input, *g.value_info, *g.output):
        if v.name == name and v.type.tensor_type.HasField("shape"):
            dims = v.type.tensor_type.shape.dim
            if len(dims) > abs(axis) - (axis < 0) and dims[axis].HasField("dim_value"):
                return dims[axis].dim_value
    producers = graph.__dict__.setdefault("_producers", {o: n for n in g.node for o in n.output})
    node = producers.get(name)
    if axis != -1 or node is None or _depth > 64 or node.output[0] != name:
        return None
    if node.op_type == "MatMulNBits":
        return attr(node, "N")
    if node.op_type == "MatMul" and len(node.input) == 2 and node.input[1] in graph.constants:
        return _static_dim(graph, node.input[1], -1)
    if node.op_type in ("Add", "Sub", "Mul", "Cast", "Identity"):
        found = [_static_dim(graph, i, -1, _depth + 1) for i in node.input if i]
        found = [d for d in found if d is not None and d != 1]
        return found[0] if found else None
    return None


# Where a rotary reads its cos/sin caches: (domain, op type) -> their input positions.
_CACHE_READERS = {(MS, "GroupQueryAttention"): (7, 8), (MS, "RotaryEmbedding"): (2, 3), ("", "RotaryEmbedding"): (1, 2)}


def _gathers_rows(node: onnx.NodeProto, i: int) -> bool:
    """Whether input i of `node` is a cos/sin cache the rewrites here read by a Gather of rows."""
    key = ("" if node.domain == "ai.onnx" else node.domain, node.op_type)
    if i not in _CACHE_READERS.get(key, ()):
        return False
    if key == (MS, "GroupQueryAttention"):
        return attr(node, "do_rotary", 0) == 1
    return key != ("", "RotaryEmbedding") or (len(node.input) > 3 and bool(node.input[3]))  # position_ids


def _subgraph_reads(node: onnx.NodeProto) -> set:
    """Every value name the subgraphs of a node read (their nodes' inputs, their outputs)."""
    names = set()
    for a in node.attribute:
        for g in (*([a.g] if a.HasField("g") else []), *a.graphs):
            names |= {o.name for o in g.output}
            for n in g.node:
                names |= set(n.input) | _subgraph_reads(n)
    return names


def _branch_constants(g: onnx.GraphProto) -> list | None:
    """The arrays a branch outputs, where it is only Constant nodes of a `value`, else None."""
    values = {}
    for n in g.node:
        if n.op_type != "Constant" or n.domain not in ("", "ai.onnx") or [a.name for a in n.attribute] != ["value"] or len(n.output) != 1:
            return None
        try:
            values[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        except Exception:  # noqa: BLE001 - a tensor onnx cannot read: not a choice this reads
            return None
    outs = [values.get(o.name) for o in g.output]
    return None if any(v is None for v in outs) else outs


def _cache_choice(graph: Graph, name: str) -> tuple | None:
    """(condition, then cache, else cache) where `name` is an output of an `If` that chooses
    between constant cos/sin caches (2-D, one type, one row width) and every reader of its
    outputs, in the top-level graph only, gathers rows of them in a rewrite here; else None."""
    found = graph.__dict__.setdefault("_cache_choices", {})
    if name in found:
        return found[name]
    found[name] = None
    g = graph.model.graph
    node = graph._producers.get(name)
    if node is None or node.op_type != "If" or node.domain not in ("", "ai.onnx") or len(node.input) != 1:
        return None
    branches = {a.name: _branch_constants(a.g) for a in node.attribute if a.name in ("then_branch", "else_branch")}
    then, other = branches.get("then_branch"), branches.get("else_branch")
    if then is None or other is None or len(then) != len(node.output) or len(other) != len(node.output):
        return None
    if any(t.ndim != 2 or t.dtype != o.dtype or t.shape[1] != o.shape[1] or t.dtype.kind != "f" or not t.size or not o.size
           for t, o in zip(then, other)):  # fmt: skip
        return None
    outs = set(node.output)
    if outs & {v.name for v in g.output} or any(outs & _subgraph_reads(n) for n in g.node if n is not node):
        return None
    if not all(_gathers_rows(n, i) for n in g.node for i, v in enumerate(n.input) if v in outs):
        return None
    for out, t, o in zip(node.output, then, other):
        found[out] = (node.input[0], t, o)
    return found[name]


def _rows(e: Emit, cache: str, at: str) -> str:
    """Rows `at` of a cos/sin cache: a Gather; for an `If`'s choice of two caches, the rows of
    each (positions clamped to its length: the cache not chosen may be the shorter) and a `Where`
    on its condition, a choice of the rows read, not of the caches."""
    choice = _cache_choice(e.graph, cache)
    if choice is None:
        return e.op("Gather", cache, at, axis=0)
    cond, *caches = choice
    producer = e.graph._producers[cache]
    if producer not in e.graph.folded:  # read through: dropped once nothing reads it (formats.normalise)
        e.graph.folded.append(producer)
    names = e.graph.__dict__.setdefault("_cache_constants", {})
    rows = []
    for i, c in enumerate(caches):
        if (cache, i) not in names:
            names[(cache, i)] = e.graph.constant(f"{cache}_{('then', 'else')[i]}", c)
        rows.append(e.op("Gather", names[(cache, i)], e.op("Min", at, e.ints(c.shape[0] - 1)), axis=0))
    return e.op("Where", cond, *rows)


class _Floats:
    """Scalars of the attention's float type: known from a stated value, else cast like `like`."""

    def __init__(self, e: Emit, names: list[str]):
        self.e = e
        self.like = next((n for n in names if n and elem_type(e.graph, n) is not None), names[0])
        t = elem_type(e.graph, self.like)
        self.dtype = None if t is None else helper.tensor_dtype_to_np_dtype(t)

    def __call__(self, value: float) -> str:
        return self.e.scalar(value, self.like)

    def lowest(self) -> str:
        return self(float(np.finfo(self.dtype if self.dtype is not None else np.float32).min))


def _rotate(e: Emit, x: str, cos: str, sin: str, half, rotary, head: int | None, interleaved: bool) -> str:
    """x [B, N, S, H] rotated by cos/sin [B, 1, S, R/2] over its first R = rotary dims, as
    onnxruntime's RunRotaryEmbedding: non-interleaved `(x1 cos - x2 sin, x2 cos + x1 sin)` with
    x1, x2 the halves; interleaved the same on the pairs (x[2i], x[2i + 1])."""
    whole = isinstance(rotary, int) and rotary == head
    xr = x if whole else e.slice(x, 0, rotary, -1)
    if interleaved:
        pairs = e.op("Reshape", xr, e.ints(0, 0, 0, -1, 2))
        x1, x2 = e.slice(pairs, 0, 1, 4), e.slice(pairs, 1, 2, 4)
        cos, sin = e.unsqueeze(cos, [-1]), e.unsqueeze(sin, [-1])
    else:
        x1, x2 = e.slice(xr, 0, half, -1), e.slice(xr, half, rotary, -1)
    y1 = e.op("Sub", e.op("Mul", x1, cos), e.op("Mul", x2, sin))
    y2 = e.op("Add", e.op("Mul", x2, cos), e.op("Mul", x1, sin))
    if interleaved:
        y = e.op("Reshape", e.op("Concat", y1, y2, axis=4), e.ints(0, 0, 0, -1))
    else:
        y = e.op("Concat", y1, y2, axis=-1)
    return y if whole else e.op("Concat", y, e.slice(x, rotary, np.iinfo(np.int64).max, -1), axis=-1)


def _rotary_dims(e: Emit, cos: str):
    """(R / 2, R) from the cache's last dim: ints where it is stated, else 1-element int64 tensors."""
    half = _static_dim(e.graph, cos, -1)
    if half is not None:
        return half, 2 * half
    h = e.dim(cos, -1)
    return h, e.op("Mul", h, e.ints(2))


def group_query_attention(node: onnx.NodeProto, graph: Graph) -> list:
    e = Emit(node, graph)
    ins = dict(zip(GQA_INPUTS, list(node.input) + [""] * (len(GQA_INPUTS) - len(node.input)), strict=False))
    if len(node.input) > len(GQA_INPUTS):
        raise FormatError(node, f"takes at most {len(GQA_INPUTS)} inputs")
    for name in ("k_scale", "v_scale", "q_norm_weight", "k_norm_weight", "query_seqlens"):
        if ins[name]:
            raise FormatError(node, f"input '{name}' is not taken")
    if len(node.output) > 3 and node.output[3]:
        raise FormatError(node, "output 'output_qk' is not taken")
    rules = {"qk_output": (0, 0), "causal": (1, 1), "sliding_window_cache": (0, 0),
             "k_quant_type": (b"NONE", "NONE"), "v_quant_type": (b"NONE", "NONE")}  # fmt: skip
    for name, (default, shown) in rules.items():
        if attr(node, name, default) not in (default, shown):
            raise FormatError(node, f"{name} must be {shown}")
    nq, nkv = attr(node, "num_heads"), attr(node, "kv_num_heads")
    if not nq or not nkv or nq % nkv:
        raise FormatError(node, "num_heads must be a positive multiple of kv_num_heads")
    query, key, value, past_k, past_v = (ins[n] for n in ("query", "key", "value", "past_key", "past_value"))
    if bool(key) != bool(value):
        raise FormatError(node, "takes key and value together (or neither: packed QKV)")
    if bool(past_k) != bool(past_v):
        raise FormatError(node, "takes past_key and past_value together")
    if not ins["seqlens_k"] or not ins["total_sequence_length"]:
        raise FormatError(node, "takes inputs seqlens_k and total_sequence_length")
    rotary = attr(node, "do_rotary", 0) == 1
    cos, sin = ins["cos_cache"], ins["sin_cache"]
    if rotary and not (cos and sin):
        raise FormatError(node, "do_rotary needs cos_cache and sin_cache")
    group, window = nq // nkv, attr(node, "local_window_size", -1)
    bias, bias_heads = ins["attention_bias"], None
    if bias:
        bias_heads = _static_dim(graph, bias, 1)
        if bias_heads not in (1, nq):
            raise FormatError(node, "attention_bias must be stated as [B or 1, num_heads or 1, S, total_sequence_length]")
    if window == 0:
        raise FormatError(node, "local_window_size 0 attends to no key (onnxruntime's kernel writes zeros); -1 or >= 1 is taken")
    softcap, scale = attr(node, "softcap", 0.0), attr(node, "scale", 0.0)
    f = _Floats(e, [cos, past_k, query, key])
    i64 = e.ints

    # Heads: [B, S, N * H] -> [B, N, S, H].
    def heads(x: str, n: int) -> str:
        return e.op("Transpose", e.op("Reshape", x, i64(0, 0, n, -1)), perm=[0, 2, 1, 3])

    if key:
        q, k, v = heads(query, nq), heads(key, nkv), heads(value, nkv)
    else:
        q, k, v = e.split(heads(query, nq + 2 * nkv), [nq, nkv, nkv], 1)
    head = _static_dim(graph, past_k, -1) if past_k else None
    if head is None:
        width = _static_dim(graph, query, -1)
        head = None if width is None else width // (nq if key else nq + 2 * nkv)

    # Past lengths p[b] and the new tokens' positions p[b] + s.
    zero, one = e.const(np.array(0, np.int64)), e.const(np.array(1, np.int64))
    seq = e.dim(query, 1)
    total = e.op("Reshape", e.cast(ins["total_sequence_length"], INT64), i64(1))
    past_len = e.op("Sub", e.op("Add", e.cast(ins["seqlens_k"], INT64), i64(1)), seq)
    p = e.unsqueeze(e.op("Where", e.op("Equal", seq, total), i64(0), past_len), [1])  # [B, 1]
    steps = e.unsqueeze(e.op("Range", zero, e.squeeze(seq, [0]), one), [0])  # [1, S]
    positions = e.op("Add", p, steps)  # [B, S]

    if rotary:
        at = e.cast(ins["position_ids"], INT64) if ins["position_ids"] else positions
        c, s = (e.unsqueeze(_rows(e, cache, at), [1]) for cache in (cos, sin))  # [B, 1, S, R/2]
        half, dims = _rotary_dims(e, cos)
        interleaved = attr(node, "rotary_interleaved", 0) == 1
        q, k = (_rotate(e, x, c, s, half, dims, head, interleaved) for x in (q, k))

    # present [B, Nkv, T, H], T = max(total, P): past's first p[b] entries, then the new ones.
    present_names = [node.output[i] if len(node.output) > i and node.output[i] else None for i in (1, 2)]
    if past_k:
        p_buf = e.dim(past_k, 2)
        # Past padded to T, the new entries scattered in at (b, n, p[b] + s): a copy and a small
        # scatter (a Gather of every entry, and zeroing what follows each row, were 3-30x slower
        # through IREE). Entries from p[b] + S on keep what the past buffer held there, or 0 past it
        # (onnxruntime writes 0): only rows shorter than the buffer have any, and nothing reads them.
        # The padding, max(total - P, 0), is the length of positions P to total: a shape, where a
        # Max of the two is a device value IREE reads back to the host before each layer's
        # present can be allocated (docs/iree.md#a-decode-step).
        after = e.slice(e.op("Range", zero, e.squeeze(total, [0]), one), p_buf, total, 0)
        pads = e.op("Concat", i64(0, 0, 0, 0, 0, 0), e.dim(after, 0), i64(0), axis=0)
        shape = e.op("Concat", e.dim(query, 0), i64(nkv), seq, i64(1), axis=0)  # [B, Nkv, S, 1]
        batch = e.op("Reshape", e.op("Range", zero, e.squeeze(e.dim(query, 0), [0]), one), i64(-1, 1, 1, 1))
        heads_at = e.const(np.arange(nkv, dtype=np.int64).reshape(1, nkv, 1, 1))
        where = [e.op("Expand", x, shape) for x in (batch, heads_at, e.unsqueeze(positions, [1, 3]))]
        index = e.op("Concat", *where, axis=-1)  # [B, Nkv, S, 3]
        kv = [e.op("ScatterND", e.op("Pad", past, pads), index, new, out=out)
              for past, new, out in ((past_k, k, present_names[0]), (past_v, v, present_names[1]))]  # fmt: skip
        k, v = kv
        t_len = e.dim(k, 2)
        t = e.unsqueeze(e.op("Range", zero, e.squeeze(t_len, [0]), one), [0])  # [1, T]
    else:
        t, t_len = steps, seq
        for new, out in ((k, present_names[0]), (v, present_names[1])):
            if out:
                e.op("Identity", new, out=out)

    # Scores [B, Nkv, G * S, T] (row g * S + s: query head kv * G + g), masked, softmax, times V.
    scores = e.op("MatMul", e.op("Reshape", q, i64(0, nkv, -1, 0)), e.op("Transpose", k, perm=[0, 1, 3, 2]))
    if scale:
        alpha = f(float(np.float32(scale)))
    elif head is not None:
        alpha = f(float(np.float32(1) / np.sqrt(np.float32(head))))
    else:
        alpha = e.op("CastLike", e.op("Reciprocal", e.op("Sqrt", e.cast(e.dim(q, -1), FLOAT))), f.like)
    scores = e.op("Mul", scores, alpha)
    if softcap > 0:
        cap = f(float(np.float32(softcap)))
        scores = e.op("Mul", e.op("Tanh", e.op("Div", scores, cap)), cap)
    if bias:  # after softcap, as the kernel adds it; its last dim padded from total to T
        bias = e.op("Pad", bias, e.op("Concat", i64(0, 0, 0, 0, 0, 0, 0), e.op("Sub", t_len, e.dim(bias, 3)), axis=0))
        if bias_heads == nq:
            bias = e.op("Reshape", bias, i64(0, nkv, -1, 0))
        elif group > 1:
            bias = e.op("Tile", bias, i64(1, 1, group, 1))
        scores = e.op("Add", scores, bias)
    query_at = e.unsqueeze(positions, [2])  # [B, S, 1]
    keep = e.op("LessOrEqual", t, query_at)  # [B, S, T]
    if window > 0:  # the window's keys include the query's own: t > q - local_window_size
        keep = e.op("And", keep, e.op("Greater", t, e.op("Sub", query_at, i64(window))))
    keep = e.unsqueeze(keep, [1])
    if group > 1:
        keep = e.op("Tile", keep, i64(1, 1, group, 1))  # [B, 1, G * S, T]
    scores = e.op("Where", keep, scores, f.lowest())
    sink = None
    if ins["head_sink"]:  # [Nq] -> [1, Nkv, G * S, 1]
        sink = e.op("Reshape", ins["head_sink"], i64(1, nkv, group, 1))
        sink = e.op("Reshape", e.op("Expand", sink, e.op("Concat", i64(1, nkv, group), seq, axis=0)), i64(0, 0, -1, 1))
    elif attr(node, "smooth_softmax", 0) == 1:
        sink = f(0.0)
    # The softmax as the kernel computes it, the sink's logit joining the max and the sum; its
    # product by the reciprocal of the sum taken after the product by V, where IREE does not
    # compute the row's reductions again per tile of keys (docs/semantics.md#attention).
    if e.opset >= 18:
        top = e.op("ReduceMax", scores, i64(-1), keepdims=1)
    else:
        top = e.op("ReduceMax", scores, keepdims=1, axes=[-1])
    if sink is not None:
        top = e.op("Max", top, sink)
    num = e.op("Exp", e.op("Sub", scores, top))
    den = e.op("ReduceSum", num, i64(-1), keepdims=1) if e.opset >= 13 else e.op("ReduceSum", num, keepdims=1, axes=[-1])
    if sink is not None:
        den = e.op("Add", den, e.op("Exp", e.op("Sub", sink, top)))
    out = e.op("Mul", e.op("MatMul", num, v), e.op("Reciprocal", den))  # [B, Nkv, G * S, H]
    out = e.op("Transpose", e.op("Reshape", out, i64(0, nq, -1, 0)), perm=[0, 2, 1, 3])
    e.op("Reshape", out, i64(0, 0, -1), out=node.output[0])
    return e.nodes


def _rotary_layout(e: Emit, node: onnx.NodeProto, x: str, cos: str) -> tuple[int, int, object, object]:
    """RotaryEmbedding's (layout rank, num_heads, R / 2, R), or a FormatError."""
    layout = rank(e.graph, x)
    if layout not in (3, 4):
        raise FormatError(node, "input must be 3-D [B, S, N * H] or 4-D [B, N, S, H], of a rank the model states or its producers give")
    half, dims = _rotary_dims(e, cos)
    rotary = attr(node, "rotary_embedding_dim", 0)
    if rotary and not isinstance(half, int):
        raise FormatError(node, "rotary_embedding_dim needs cos/sin caches of a stated last dim")
    if rotary and rotary != dims:
        raise FormatError(node, f"rotary_embedding_dim {rotary} must be twice the cos cache's last dim {half}")
    heads = attr(node, "num_heads", 0)
    if layout == 3 and not heads and not isinstance(dims, int):
        raise FormatError(node, "a 3-D input needs num_heads or cos/sin caches of a stated last dim")
    return layout, heads, half, dims


def _rotary_apply(e: Emit, node: onnx.NodeProto, x: str, c: str, s: str, layout: int, heads: int, half, dims) -> list:
    """x rotated by the caches' rows for its tokens, c and s [B or 1, S, R / 2], into the node's output."""
    axis = 2 if layout == 3 else 1  # the heads' axis, where cos/sin broadcast: [B, S, 1, R/2] or [B, 1, S, R/2]
    c, s = e.unsqueeze(c, [axis]), e.unsqueeze(s, [axis])
    interleaved = attr(node, "interleaved", 0) == 1
    if layout == 4:
        e.op("Identity", _rotate(e, x, c, s, half, dims, _static_dim(e.graph, x, -1), interleaved), out=node.output[0])
        return e.nodes
    width = _static_dim(e.graph, x, -1)
    head = width // heads if width is not None and heads else (dims if not heads else None)
    split = e.op("Reshape", x, e.ints(0, 0, heads or -1, -1 if heads else dims))  # [B, S, N, H]
    e.op("Reshape", _rotate(e, split, c, s, half, dims, head, interleaved), e.ints(0, 0, -1), out=node.output[0])
    return e.nodes


def rotary_embedding(node: onnx.NodeProto, graph: Graph) -> list:
    """com.microsoft RotaryEmbedding: input [B, S, N * H] or [B, N, S, H], position_ids [B, S]
    or a one-element start (positions `start + s`), cos/sin caches [max position + 1, R / 2];
    rotated as in GroupQueryAttention (onnxruntime's rotary_embedding.cc)."""
    e = Emit(node, graph)
    if len(node.input) < 4 or not all(node.input[:4]):
        raise FormatError(node, "takes inputs input, position_ids, cos_cache and sin_cache")
    x, position_ids, cos, sin = node.input[:4]
    if attr(node, "is_packed_batching", 0) != 0:
        raise FormatError(node, "is_packed_batching must be 0")
    if attr(node, "scale", 1.0) != 1.0:
        raise FormatError(node, "scale must be 1")
    layout, heads, half, dims = _rotary_layout(e, node, x, cos)
    form = rank(graph, position_ids)
    if form not in (1, 2):
        raise FormatError(node, "position_ids must be 2-D [B, S] or a 1-element start, of a rank the model states or its producers give")
    if form == 1:  # positions start + s
        zero, one = e.const(np.array(0, np.int64)), e.const(np.array(1, np.int64))
        steps = e.op("Range", zero, e.squeeze(e.dim(x, 1 if layout == 3 else 2), [0]), one)
        at = e.unsqueeze(e.op("Add", e.cast(e.op("Reshape", position_ids, e.ints(1)), INT64), steps), [0])  # [1, S]
    else:
        at = e.cast(position_ids, INT64)
    c, s = (_rows(e, cache, at) for cache in (cos, sin))
    return _rotary_apply(e, node, x, c, s, layout, heads, half, dims)


def rotary_embedding_23(node: onnx.NodeProto, graph: Graph) -> list:
    """ONNX RotaryEmbedding (opset 23), which IREE 3.13 does not legalize: X [B, S, N * H] (with
    num_heads) or [B, N, S, H]; cos/sin caches [max position + 1, R / 2] read at position_ids
    [B, S], or without position_ids [B, S, R / 2] already. The same rotation as onnxruntime's."""
    e = Emit(node, graph)
    if len(node.input) < 3 or not all(node.input[:3]):
        raise FormatError(node, "takes inputs X, cos_cache and sin_cache")
    x, cos, sin = node.input[:3]
    position_ids = node.input[3] if len(node.input) > 3 else ""
    layout, heads, half, dims = _rotary_layout(e, node, x, cos)
    if layout == 3 and not heads:
        raise FormatError(node, "a 3-D X needs num_heads")
    if position_ids:
        at = e.cast(position_ids, INT64)
        c, s = (_rows(e, cache, at) for cache in (cos, sin))
    else:
        c, s = cos, sin
    return _rotary_apply(e, node, x, c, s, layout, heads, half, dims)


REWRITES[(MS, "GroupQueryAttention")] = group_query_attention
REWRITES[(MS, "RotaryEmbedding")] = rotary_embedding
REWRITES[("", "RotaryEmbedding")] = rotary_embedding_23
