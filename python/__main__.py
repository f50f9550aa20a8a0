"""`python -m dequant`: the front door. What dequant installs, one line each, and how to start."""

from __future__ import annotations

import argparse
import sys

import dequant

TOOLS = {
    "dequant-opt": "an mlir-opt for the dq dialect: verify dq IR, run dq and MLIR passes, emit native objects",
    "dequant-import-onnx": "import an ONNX model's DequantizeLinear nodes as dq IR ([onnx] extra)",
    "dequant-iree": "compile an ONNX model to an IREE module, dq's stage lowering its dequantize ops ([iree] extra)",
}
START = {
    "python -m dequant.example": "compile the shipped example to native code, run it, check it against numpy",
    "python -m dequant.example --path": "where the shipped examples are (.mlir and .onnx inputs for the tools)",
    "python -m dequant.generate DIR": "compile an onnxruntime-genai int4 model and decode with it ([genai] extra)",
}


def overview() -> str:
    width = max(map(len, [*TOOLS, *START])) + 2
    lines = [dequant.__doc__.splitlines()[0], "", "Tools (each takes --help):"]
    lines += [f"  {name:<{width}}{what}" for name, what in TOOLS.items()]
    lines += ["", "Start here:"]
    lines += [f"  {command:<{width}}{what}" for command, what in START.items()]
    lines += ['  dequant-opt --dq-to-linalg "$(python -m dequant.example --path onnx_dequantize.mlir)"']
    lines += ["", "From Python: import dequant (dequant.ops, dequant.jit, dequant.import_onnx); help(dequant)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dequant", description="List dequant's tools and how to start.", epilog=overview(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.parse_args(argv)
    print(overview())
    return 0


if __name__ == "__main__":
    sys.exit(main())
