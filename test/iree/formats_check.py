"""What the tests of dequant.formats' companion-op rewrites share: a model of one node, the
reference (onnxruntime's own contrib kernel on the model as written, graph optimizations off),
the rewritten model run by onnxruntime (standard ONNX ops only), and the compiled one run by
IREE's runtime.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from pathlib import Path

import numpy as np
import onnx
from onnx import helper
from onnxruntime_reference import run as run_ort  # noqa: F401 - the reference, by its name here

OPSET = 21  # what onnxruntime-genai's model builder writes


def model(nodes, inputs, outputs, inits=(), opset: int = OPSET) -> onnx.ModelProto:
    """inputs/outputs: (name, ONNX elem type, shape with str dims dynamic)."""
    vi = lambda n, t, s: helper.make_tensor_value_info(n, t, s)  # noqa: E731
    g = helper.make_graph(nodes, "g", [vi(*i) for i in inputs], [vi(*o) for o in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10
    return m


def rewritten(m: onnx.ModelProto, keep=frozenset()) -> onnx.ModelProto:
    """The model normalised by dequant.formats: checked to hold only default-domain ops (and the
    (domain, op type)s in `keep`, which the test models have beside the op under test)."""
    from dequant import formats

    out, counts = formats.normalise(copy.deepcopy(m))
    assert counts, "nothing was rewritten"
    left = {(n.domain, n.op_type) for n in out.graph.node if n.domain not in ("", "ai.onnx")} - set(keep)
    assert not left, left
    onnx.checker.check_model(out)
    return out


@functools.lru_cache(maxsize=4)
def _compiled(digest: str, path: str) -> bytes:
    from dequant import iree as stage

    return stage.compile_onnx(path)


def run_iree(path: str, feeds: dict) -> list[np.ndarray]:
    """The model compiled by dequant.iree.compile_onnx (llvm-cpu; once for each contents of the
    file, the tests run one model at several shapes) and run by IREE's runtime."""
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    vmfb = _compiled(hashlib.sha256(Path(path).read_bytes()).hexdigest(), path)
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    got = ctx.modules.module["g"](*feeds.values())
    return [np.asarray(g) for g in (got if isinstance(got, (list, tuple)) else [got])]


def to_f16(m: onnx.ModelProto, feeds: dict, keep=("mean", "inv")) -> tuple[onnx.ModelProto, dict]:
    """The model with every f32 input, output (but those named in `keep`: the norms' statistics
    stay f32) and initializer f16, and its feeds so."""
    from onnx import TensorProto, numpy_helper

    m = copy.deepcopy(m)
    for v in (*m.graph.input, *m.graph.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT and v.name not in keep:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    for i, t in enumerate(m.graph.initializer):
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32:
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(a.astype(np.float16), t.name))
    return m, {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}
