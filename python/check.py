"""`dequant-iree --check`: the compiled module's error, output by output, against exact references.

The module runs on inputs made from the model's input types (or given ones, an .npz by input
name) and each output is compared with:
- exact: the graph computed as written. The ONNX reference evaluator for a model of standard ops;
  for one with onnxruntime's contrib ops (MatMulNBits, GroupQueryAttention, ...), onnxruntime
  with graph optimizations off, every MatMulNBits at accuracy_level 0 (float activations: its
  default on CPU, 4, quantizes them to int8) and its integer kernels exact on AVX2 hosts too
  (EXACT_INTEGER_KERNELS);
- onnxruntime: its default session on the model as given.
A third column gives onnxruntime's own error against exact, so a user tells the quantization's
error (in both runs alike) from a runtime's approximation. Errors are max |y - ref| / max |ref|.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import numpy as np

# onnx, onnxruntime and IREE's runtime are imported where used: optional dependencies (docs/development.md#imports).

# Made inputs: the value of each symbolic dim by name (exporters' usual names), others DEFAULT_DIM.
# A KV cache's total length is the past plus the new tokens; its last dim is the head size, read
# from genai_config.json beside the model when there.
DIMS = {"batch_size": 1, "batch": 1, "sequence_length": 4, "past_sequence_length": 3, "total_sequence_length": 7}
DEFAULT_DIM = 2
ELEM = {1: np.float32, 10: np.float16, 11: np.float64, 6: np.int32, 7: np.int64, 9: np.bool_}


def _head_size(model_path: str) -> int | None:
    config = os.path.join(os.path.dirname(os.path.abspath(model_path)), "genai_config.json")
    if not os.path.exists(config):
        return None
    with open(config, encoding="utf-8") as f:
        return json.load(f)["model"]["decoder"].get("head_size")


def make_inputs(proto, model_path: str, dims: dict | None = None, seed: int = 0) -> dict:
    """Inputs for every graph input: floats standard normal, integer masks ones, other integers
    (token ids, indices) in [0, 8); symbolic dims from `dims`, DIMS, the head size, DEFAULT_DIM."""
    rng = np.random.default_rng(seed)
    known = {**DIMS, **(dims or {})}
    head = _head_size(model_path)
    inits = {t.name for t in proto.graph.initializer}
    out = {}
    for v in proto.graph.input:
        if v.name in inits:
            continue
        t = v.type.tensor_type
        if t.elem_type not in ELEM:
            raise ValueError(f"input '{v.name}': element type {t.elem_type} is not one --check makes; give --inputs")
        shape = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.dim_param in known:
                shape.append(known[d.dim_param])
            elif head and ("kv_cache" in d.dim_param or "head_size" in d.dim_param):
                shape.append(head)
            else:
                shape.append(DEFAULT_DIM)
        dtype = ELEM[t.elem_type]
        if np.issubdtype(dtype, np.floating):
            out[v.name] = rng.standard_normal(shape).astype(dtype)
        elif "mask" in v.name or dtype == np.bool_:
            out[v.name] = np.ones(shape, dtype)
        else:
            out[v.name] = rng.integers(0, 8, shape).astype(dtype)
    return out


# onnxruntime's uint8 x int8 integer kernels add pairs of products in int16 with saturation
# (vpmaddubsw) on an x86 CPU without VNNI, so they are not exact on AVX2 hosts; its uint8 x uint8
# and int8 x int8 kernels are. The ops that run them, by input index: (the activations' zero point,
# of their type, or None where the op quantizes float activations to uint8 itself; the weights;
# their zero point). docs/semantics.md#onnxruntime-on-avx2-hosts
U8S8_INPUTS = {
    "QLinearConv": (2, 3, 5), "QLinearMatMul": (2, 3, 5), "QGemm": (2, 3, 5),
    "MatMulInteger": (2, 1, 3), "ConvInteger": (2, 1, 3),
    "MatMulIntegerToFloat": (4, 1, 5), "DynamicQuantizeMatMul": (None, 1, 3),
}  # fmt: skip
# The session option by which onnxruntime does the same to the nodes it fuses QDQ into (its
# Avx2WeightS8ToU8Transformer, at its extended optimizations; it refuses int8 activations).
EXACT_INTEGER_KERNELS = ("session.x64quantprecision", "1")


def exact_integer_weights(proto) -> int:
    """Rewrites in place each constant int8 weight of a U8S8_INPUTS node with uint8 activations
    as uint8 (w + 128, its zero point + 128: the same w - z), which onnxruntime computes by its
    exact uint8 x uint8 kernels; returns how many nodes changed. Weights in external data stay
    (onnxruntime_session leaves a model with external data as it is)."""
    import onnx
    from onnx import TensorProto, numpy_helper

    nodes = [n for n in proto.graph.node if n.op_type in U8S8_INPUTS]
    if not nodes:
        return 0
    inits = {t.name: t for t in proto.graph.initializer}
    types = {t.name: t.data_type for t in proto.graph.initializer}
    try:
        inferred = onnx.shape_inference.infer_shapes(proto).graph
    except onnx.shape_inference.InferenceError:  # a model inference rejects: the graph's inputs' types only
        inferred = proto.graph
    types.update((v.name, v.type.tensor_type.elem_type) for v in (*inferred.input, *inferred.value_info))
    made: dict[str, str] = {}

    def shifted(name: str | None) -> str:
        """The uint8 copy of int8 initializer `name` (None: a zero point of 0)."""
        key = name or "__zero__"
        if key not in made:
            a = numpy_helper.to_array(inits[name]) if name else np.zeros((), np.int8)
            made[key] = f"{name or 'zero_point'}_u8"
            proto.graph.initializer.append(numpy_helper.from_array((a.astype(np.int16) + 128).astype(np.uint8), made[key]))
        return made[key]

    changed = 0
    for n in nodes:
        x_z_at, w_at, z_at = U8S8_INPUTS[n.op_type]
        w = inits.get(n.input[w_at]) if len(n.input) > w_at else None
        z_name = n.input[z_at] if len(n.input) > z_at else ""
        z = inits.get(z_name)
        x_z = n.input[x_z_at] if x_z_at is not None and len(n.input) > x_z_at else ""
        if x_z_at is not None and TensorProto.UINT8 not in (types.get(n.input[0]), types.get(x_z)):
            continue  # int8 activations (its int8 x int8 kernels) or a type not inferred here
        if w is None or w.data_type != TensorProto.INT8 or (z_name and (z is None or z.data_type != TensorProto.INT8)):
            continue
        inputs = list(n.input) + [""] * (z_at + 1 - len(n.input))
        inputs[w_at], inputs[z_at] = shifted(w.name), shifted(z_name or None)
        del n.input[:]
        n.input.extend(inputs)
        changed += 1
    return changed


def onnxruntime_session(source, optimized: bool = False, threads: int = 0, rewrite_weights: bool = True):
    """An onnxruntime CPU session on `source` (a path or a serialized model) whose integer kernels
    are exact on every x86 CPU: graph optimizations off unless `optimized` (then QDQ fused into its
    integer kernels), `threads` intra-op threads (0: its default), errors only in its log.
    `rewrite_weights=False`: onnxruntime's own rewrite only (EXACT_INTEGER_KERNELS), as a user
    sets it: optimized sessions only, and not QLinearMatMul of opset 21."""
    import onnx
    import onnxruntime as ort

    binary = isinstance(source, (bytes, bytearray))
    proto = onnx.load_from_string(bytes(source)) if binary else onnx.load(source, load_external_data=False)
    if rewrite_weights and not any(t.external_data for t in proto.graph.initializer) and exact_integer_weights(proto):
        source = proto.SerializeToString()

    def session(exact_integers: bool):
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.intra_op_num_threads = threads
        if not optimized:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if exact_integers:
            so.add_session_config_entry(*EXACT_INTEGER_KERNELS)
        return ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])

    try:
        return session(True)
    except Exception as e:  # onnxruntime's exception types share no base but Exception
        if "types are incompatible" not in str(e):
            raise
        return session(False)  # int8 activations: its uint8 weight rewrite refused them


def _contrib(proto) -> bool:
    return any(n.domain not in ("", "ai.onnx") for n in proto.graph.node)


def exact_model(model_path: str, tmp: str) -> str:
    """A copy of the model (in `tmp`, its data files beside it) with every MatMulNBits at
    accuracy_level 0: onnxruntime then computes it in float, as the graph is written."""
    import onnx

    proto = onnx.load(model_path, load_external_data=False)
    for n in proto.graph.node:
        if n.op_type == "MatMulNBits":
            levels = [a for a in n.attribute if a.name == "accuracy_level"]
            if levels:
                levels[0].i = 0
            else:
                n.attribute.append(onnx.helper.make_attribute("accuracy_level", 0))
    folder = os.path.dirname(os.path.abspath(model_path))
    for t in proto.graph.initializer:
        for e in t.external_data:
            if e.key == "location" and not os.path.exists(os.path.join(tmp, e.value)):
                shutil.copy(os.path.join(folder, e.value), os.path.join(tmp, e.value))
    path = os.path.join(tmp, os.path.basename(model_path))
    onnx.save(proto, path)
    return path


def _ort_refusal(e: Exception) -> str:
    """onnxruntime's reason, one line (its exceptions name the op it has no kernel for)."""
    return " ".join(str(e).split())[:200]


def reference_runs(model_path: str, inputs: dict) -> tuple[list, list | str, str]:
    """(exact outputs, onnxruntime default outputs or why it cannot run the model, what computed
    exact), in graph output order."""
    import onnx
    import onnxruntime as ort

    proto = onnx.load(model_path, load_external_data=False)
    names = [o.name for o in proto.graph.output]
    quiet = ort.SessionOptions()
    quiet.log_severity_level = 3  # errors only: not its warnings about the model's unused initializers
    try:
        default = ort.InferenceSession(model_path, quiet, providers=["CPUExecutionProvider"]).run(names, inputs)
    except Exception as e:  # onnxruntime's own exception types (NotImplemented, Fail, ...) share no base but Exception
        if _contrib(proto):
            raise RuntimeError(f"onnxruntime cannot run the model: {_ort_refusal(e)}") from None
        default = _ort_refusal(e)
    if not _contrib(proto):
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model_path).run(names, inputs), default, "onnx.reference"
    with tempfile.TemporaryDirectory() as tmp:
        s = onnxruntime_session(exact_model(model_path, tmp))
        return s.run(names, inputs), default, "onnxruntime, accuracy_level 0, no optimizations, exact integer kernels"


def run_module(vmfb: bytes, proto, inputs: dict) -> list:
    """The IREE module's outputs (numpy, in graph output order) on `inputs`."""
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    inits = {t.name for t in proto.graph.initializer}
    results = ctx.modules.module[proto.graph.name](*(inputs[v.name] for v in proto.graph.input if v.name not in inits))
    results = results if isinstance(results, (tuple, list)) else [results]
    return [np.array(r.to_host() if hasattr(r, "to_host") else r) for r in results]  # copies: see generate.iree_step


def error(y: np.ndarray, ref: np.ndarray) -> float:
    """max |y - ref| / max |ref| (the absolute error where ref is all zeros)."""
    y, ref = np.asarray(y, np.float64), np.asarray(ref, np.float64)
    if y.shape != ref.shape:
        return float("inf")
    if y.size == 0:
        return 0.0
    scale = np.abs(ref).max()
    return float(np.abs(y - ref).max() / (scale if scale > 0 else 1.0))


def check(model_path: str, vmfb: bytes, inputs: dict | None = None, dims: dict | None = None) -> list[str]:
    """The lines `dequant-iree --check` prints: a header, then one per output."""
    import onnx

    proto = onnx.load(model_path, load_external_data=False)
    inputs = inputs if inputs is not None else make_inputs(proto, model_path, dims)
    try:
        got = run_module(vmfb, proto, inputs)
        exact, default, how = reference_runs(model_path, inputs)
    except (KeyError, RuntimeError, ValueError) as e:  # a missing input; IREE's or onnxruntime's refusal
        raise ValueError(f"--check: the inputs do not run: {' '.join(str(e).split())[:300]}") from None
    shapes = ", ".join(f"{k} {'x'.join(map(str, v.shape)) or 'scalar'}" for k, v in inputs.items())
    lines = [f"check: inputs {shapes}", f"check: exact = {how}; error = max |y - ref| / max |ref|",
             f"check: {'output':<24} {'iree vs exact':>14} {'iree vs ort':>12} {'ort vs exact':>13}"]  # fmt: skip
    if isinstance(default, str):
        lines.insert(1, f"check: onnxruntime cannot run the model ({default}): its columns are n/a")
        default = [None] * len(got)
    for o, y, e, d in zip(proto.graph.output, got, exact, default):
        vs_ort, ort_exact = (f"{error(y, d):>12.2e}", f"{error(d, e):>13.2e}") if d is not None else (f"{'n/a':>12}", f"{'n/a':>13}")
        lines.append(f"check: {o.name:<24} {error(y, e):>14.2e} {vs_ort} {ort_exact}")
    return lines


def load_inputs(path: str) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}
