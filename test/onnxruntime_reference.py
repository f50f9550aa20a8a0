"""onnxruntime as a reference: its CPU kernels on a model as written, shared by the suites.

`run` turns graph optimizations off, so no node is fused, folded or rewritten: each node is
computed by its own kernel, as the graph says (onnxruntime's contrib ops by their kernels). One
intra-op thread, so a reduction sums in the same order on every run; warnings off (a test model's
unused initializers and the like). test/conftest.py puts this folder on sys.path.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort


def run(model: onnx.ModelProto | str | os.PathLike, feeds: dict) -> list[np.ndarray]:
    """The outputs of `model` (a ModelProto or a path) on `feeds` (input name -> array)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else os.fspath(model)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"]).run(None, feeds)
