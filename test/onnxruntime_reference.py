"""onnxruntime as a reference: its CPU kernels on a model as written, shared by the suites.

`session` turns graph optimizations off (unless `optimized`: then its QDQ fusions into integer
kernels), so no node is fused, folded or rewritten: each node is computed by its own kernel, as
the graph says (onnxruntime's contrib ops by their kernels); its integer kernels exact on an AVX2
host too (dequant.check.onnxruntime_session). `run` adds one intra-op thread, so a reduction sums
in the same order on every run. Warnings off (a test model's unused initializers and the like).
test/conftest.py puts this folder on sys.path.
"""

from __future__ import annotations

import os

import numpy as np
import onnx

from dequant.check import onnxruntime_session


def session(model: onnx.ModelProto | str | os.PathLike, optimized: bool = False, threads: int = 0):
    """onnxruntime's session on `model` (a ModelProto or a path)."""
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else os.fspath(model)
    return onnxruntime_session(source, optimized, threads)


def run(model: onnx.ModelProto | str | os.PathLike, feeds: dict) -> list[np.ndarray]:
    """The outputs of `model` on `feeds` (input name -> array), one thread."""
    return session(model, threads=1).run(None, feeds)
