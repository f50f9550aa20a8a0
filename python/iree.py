"""dq as a stage of IREE's ONNX pipeline: an ONNX model to an IREE module (vmfb).

    iree-import-onnx m.onnx -o - | iree-opt --mlir-print-op-generic \\
      | dequant-opt --allow-unregistered-dialect --torch-onnx-to-iree \\
      | iree-compile - --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu -o m.vmfb

`compile_onnx` and the `dequant-iree` command do the same in one step. IREE alone rejects a
blocked DequantizeLinear ("failed to legalize operation 'torch.operator'"); after the dq stage
(passes/to_iree.py) every DequantizeLinear is linalg IREE compiles, a MatMul of int4 blocked
weights is one dispatch reading them packed, and everything else is IREE's own ONNX lowering.
Scope and measured results: docs/iree.md. Needs the `iree` extra (`pip install dequant[iree]`:
iree-base-compiler, iree-base-runtime and onnx, version 3.13).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

from mlir import ir

from . import context, diagnostics, guards
from .pipeline import build

PIPELINE = "torch-onnx-to-iree"
TARGETS = ("llvm-cpu",)
DEFAULT_FLAGS = ("--iree-hal-target-device=local", "--iree-llvmcpu-target-cpu=host", "--iree-opt-level=O3")
OPT, COMPILE = "iree.compiler.tools.scripts.iree_opt", "iree.compiler.tools.scripts.iree_compile"


class IreeStageError(RuntimeError):
    """A model the IREE stage cannot take: the importer, the dq passes or iree-compile failed
    (the message holds their diagnostics)."""


def _tool(module: str, args: list, what: str) -> None:
    """Run one of IREE's tools (`python -m <module>`) in a child process: IREE's compiler has
    its own MLIR Python bindings, which cannot load in a process that loaded dequant's."""
    if importlib.util.find_spec("iree.compiler") is None:
        raise ImportError("the IREE stage needs IREE's compiler: pip install 'dequant[iree]'")
    run = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True)
    if run.returncode != 0:
        lines = [ln for ln in run.stderr.strip().splitlines() if ln.strip()] or ["(no message)"]
        raise IreeStageError(f"{what} failed: " + "\n".join(lines[-20:]))


def import_onnx(model: str | os.PathLike) -> str:
    """The model imported by IREE's ONNX importer (`iree-import-onnx`), in generic form."""
    with tempfile.TemporaryDirectory() as tmp:
        imported, generic = os.path.join(tmp, "import.mlir"), os.path.join(tmp, "generic.mlir")
        _tool("iree.compiler.tools.import_onnx", [os.fspath(model), "-o", imported], "iree-import-onnx")
        _tool(OPT, ["--mlir-print-op-generic", imported, "-o", generic], "iree-opt")
        with open(generic, encoding="utf-8") as f:
            return f.read()


def prepare(text: str, pipeline: str = PIPELINE) -> str:
    """Run the dq stage (dequant-opt --allow-unregistered-dialect --torch-onnx-to-iree) on an
    imported module's text; the text iree-compile takes. Remarks (a DequantizeLinear left to
    IREE, with why) are ignored; errors raise IreeStageError."""
    ctx = context()
    ctx.allow_unregistered_dialects = True
    with ctx, ir.Location.unknown(), diagnostics.Collector(ctx, {}) as collected:
        try:
            guards.check(text)
            module = ir.Module.parse(text)
            build(pipeline, ctx).run(module.operation)
        except ir.MLIRError as e:
            collected.add_error(e)
        except guards.ParserCrashError as e:
            raise IreeStageError(f"the dq stage refuses the module: {e}") from None
        errors = [d.render() for d in collected.diags if d.severity == "error"]
        if errors:
            raise IreeStageError("the dq stage failed:\n" + "\n".join(errors))
        return module.operation.get_asm(assume_verified=True)


def compile_onnx(model: str | os.PathLike, *, target: str = "llvm-cpu", flags: tuple = DEFAULT_FLAGS, extra_args=()) -> bytes:
    """The IREE module (vmfb bytes) of an ONNX model, with the dq stage between IREE's importer
    and iree-compile. `target`: the IREE backend (llvm-cpu); `flags`: iree-compile flags (by
    default the local device, the host CPU and -O3: measured 2-3x faster than the default level on
    the int4 MatMul, docs/iree.md); `extra_args`: more iree-compile flags."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    text = prepare(import_onnx(model))
    with tempfile.TemporaryDirectory() as tmp:
        source, out = os.path.join(tmp, "stage.mlir"), os.path.join(tmp, "module.vmfb")
        with open(source, "w", encoding="utf-8") as f:
            f.write(text)
        args = [source, f"--iree-hal-local-target-device-backends={target}", *flags, *extra_args, "-o", out]
        _tool(COMPILE, args, "iree-compile")
        with open(out, "rb") as f:
            return f.read()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="dequant-iree", description="Compile an ONNX model to an IREE module, dq stage included.")
    p.add_argument("model", help="the ONNX model")
    p.add_argument("-o", "--output", required=True, help="the IREE module to write (.vmfb)")
    p.add_argument("--emit-mlir", action="store_true", help="write the text given to iree-compile instead of the module")
    p.add_argument("iree_args", nargs="*", help="more iree-compile flags (after --)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.emit_mlir:
            data = prepare(import_onnx(args.model)).encode()
        else:
            data = compile_onnx(args.model, extra_args=args.iree_args)
        with open(args.output, "wb") as f:
            f.write(data)
    except (IreeStageError, ImportError, OSError, ValueError) as e:
        print(f"dequant-iree: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
