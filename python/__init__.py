"""dequant: one home for every flavour of dequantize, as an MLIR dialect, passes and native code.

- `dequant.ops`: the numpy functions, one per spec op (`ops.onnx_dequantize_linear`, ...).
- `dequant.jit(module_or_text, entry)`: a function of a module compiled to native code.
- `dequant.import_onnx(model)`: the DequantizeLinear nodes of an ONNX model as dq functions.
- `dequant.Packed`, `dequant.pack`: sub-byte data packed as models store it (two 4-bit or four
  2-bit values per byte), read in place by `dequant.ops` and `dequant.jit`.
- `dequant.context()`, `register_dialect`, `verify`, `run_pipeline`: the dialect and its passes
  from MLIR's Python bindings.
- `dequant.CompileError` (a RuntimeError): `dequant.ops` failed to compile a kernel for arrays
  that passed every rule of the op, a bug in dequant to report.
"""

from __future__ import annotations

import importlib
import importlib.util

from mlir import ir

from .dialect import register as register_dialect
from .dialect import verify

# The runtime's names, imported on first use (PEP 562): the package is the parent of
# dequant.dialect and dequant.passes, and importing those must not load the numpy kernels or the
# runtime (test/tools/test_layers.py). name -> (submodule, its attribute; None: the submodule).
_LAZY = {
    "ops": ("ops", None),
    "jit": ("compiled", "jit"),
    "import_onnx": ("onnx_importer", "import_onnx"),
    "Packed": ("packed", "Packed"),
    "pack": ("packed", "pack"),
    "CompileError": ("kernel", "CompileError"),
}


def __getattr__(name: str):
    """The names of `_LAZY`, and any submodule (`dequant.runtime`), imported on first use."""
    module, attr = _LAZY.get(name, (name, None))
    if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{module}") is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = importlib.import_module(f"{__name__}.{module}")
    value = found if attr is None else getattr(found, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def context() -> ir.Context:
    """A new MLIR context with the `dq` dialect loaded."""
    ctx = ir.Context()
    register_dialect(ctx)
    return ctx


def run_pipeline(module: ir.Module, pipeline: str) -> None:
    """Run a textual pipeline (dq passes, upstream passes, named pipelines) on `module`;
    raises `mlir.ir.MLIRError` with the diagnostics on failure."""
    from .pipeline import build  # when called: layers (docs/development.md#imports)

    build(pipeline, module.context).run(module.operation)


__all__ = ["ops", "jit", "import_onnx", "Packed", "pack", "CompileError", "context", "register_dialect", "verify", "run_pipeline"]
