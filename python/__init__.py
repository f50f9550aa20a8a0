"""dequant: one home for every flavour of dequantize, as an MLIR dialect, passes and a JIT."""

from __future__ import annotations

from mlir import ir

from dequant.dialect import register as register_dialect
from dequant.dialect import verify
from dequant.jit import jit  # noqa: E402  (binds the function over the submodule name)


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


def import_onnx(model, context: ir.Context | None = None) -> ir.Module:
    """One function per DequantizeLinear node of an ONNX model (a path or an onnx.ModelProto);
    needs the onnx package (`pip install 'dequant[onnx]'`). See `dequant.import_onnx`."""
    from .import_onnx import import_onnx as run

    globals()["import_onnx"] = _import_onnx  # importing the submodule bound its name over this function
    return run(model, context)


_import_onnx = import_onnx


__all__ = ["context", "register_dialect", "run_pipeline", "jit", "verify", "import_onnx"]
