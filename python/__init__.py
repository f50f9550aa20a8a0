"""dequant: one home for every flavour of dequantize, as an MLIR dialect, passes and native code.

- `dequant.ops`: the numpy functions, one per spec op (`ops.onnx_dequantize_linear`, ...).
- `dequant.jit(module_or_text, entry)`: a function of a module compiled to native code.
- `dequant.import_onnx(model)`: the DequantizeLinear nodes of an ONNX model as dq functions.
- `dequant.Packed`, `dequant.pack`: sub-byte data packed as models store it (two 4-bit or four
  2-bit values per byte), read in place by `dequant.ops` and `dequant.jit`.
- `dequant.context()`, `register_dialect`, `verify`, `run_pipeline`: the dialect and its passes
  from MLIR's Python bindings.
"""

from __future__ import annotations

from mlir import ir

from . import ops
from .compiled import jit
from .dialect import register as register_dialect
from .dialect import verify
from .onnx_importer import import_onnx
from .packed import Packed, pack


def context() -> ir.Context:
    """A new MLIR context with the `dq` dialect loaded."""
    ctx = ir.Context()
    register_dialect(ctx)
    return ctx


def run_pipeline(module: ir.Module, pipeline: str) -> None:
    """Run a textual pipeline (dq passes, upstream passes, named pipelines) on `module`;
    raises `mlir.ir.MLIRError` with the diagnostics on failure."""
    from .pipeline import build

    build(pipeline, module.context).run(module.operation)


__all__ = ["ops", "jit", "import_onnx", "Packed", "pack", "context", "register_dialect", "verify", "run_pipeline"]
