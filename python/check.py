"""`dequant-iree --check`: the compiled module's error, output by output, against exact references.

The module runs on inputs made from the model's input types (or given ones, an .npz by input
name) and each output is compared with:
- exact: the graph computed as written. The ONNX reference evaluator for a model of standard ops;
  for one with onnxruntime's contrib ops (MatMulNBits, GroupQueryAttention, ...), onnxruntime
  with graph optimizations off and every MatMulNBits at accuracy_level 0 (float activations: its
  default on CPU, 4, quantizes them to int8);
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
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        s = ort.InferenceSession(exact_model(model_path, tmp), so, providers=["CPUExecutionProvider"])
        return s.run(names, inputs), default, "onnxruntime, accuracy_level 0, no optimizations"


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
