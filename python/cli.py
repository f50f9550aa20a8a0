"""dequant-opt: an mlir-opt for the dq dialect.

Reads a file (or stdin), verifies it (IRDL structure and the dq spec rules), runs passes given
as flags in command-line order or as `--pass-pipeline`, and prints the result. Upstream passes
are accepted by their mlir-opt flag (`--canonicalize`, `--cse=...`), dq passes and pipelines by
theirs. Diagnostics print as `file:line:col: error: ...`; `--verify-diagnostics` checks them
against `// expected-error {{...}}` markers instead.
"""

from __future__ import annotations

import argparse
import os
import sys

from mlir import ir

from dequant import context, dialect
from dequant.passes import PASSES, PIPELINES

from . import aot, diagnostics
from .pipeline import PipelineError, build

SPLIT = "// -----"
TOOL_FLAGS = {
    "--help", "-h", "--output", "-o", "--pass-pipeline", "--split-input-file", "--verify-diagnostics",
    "--mlir-print-ir-after-all", "--mlir-print-debuginfo", "--mlir-print-op-generic", "--allow-unregistered-dialect",
    "--emit", "--header",
}  # fmt: skip


def parser() -> argparse.ArgumentParser:
    lines = ["dq passes:"]
    lines += [f"  --{p.name:<24} {p.description}" for p in PASSES.values()]
    lines += ["dq pipelines:"]
    lines += [f"  --{p.name:<24} {p.description}" for p in PIPELINES.values()]
    lines += ["", "Any other --<pass>[=<options>] names an upstream MLIR pass, as in mlir-opt."]
    p = argparse.ArgumentParser(
        prog="dequant-opt",
        description="MLIR optimizer driver for the dq dialect (like mlir-opt).",
        epilog="\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--pass-pipeline", help="a textual pipeline, e.g. 'builtin.module(func.func(dq-to-linalg),canonicalize)'")
    p.add_argument("--split-input-file", action="store_true", help="split the input at '// -----' and process each chunk")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* markers")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (to stderr)")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations in the output")
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print ops in the generic form")
    p.add_argument("--allow-unregistered-dialect", action="store_true", help="accept ops of unknown dialects")
    p.add_argument("--emit", choices=("mlir", "object"), default="mlir",
                   help="output: MLIR text (default), or a native object (after the passes, dq-to-llvm lowers "
                        "the rest; needs -o; writes a C header beside it)")  # fmt: skip
    p.add_argument("--header", help="with --emit=object: where to write the C header (default: the output with .h)")
    return p


def split_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    """Separate pass flags (in order, as pipeline elements) from the tool's own arguments."""
    passes, rest = [], []
    for arg in argv:
        name = arg.split("=", 1)[0]
        if arg.startswith("--") and name not in TOOL_FLAGS and len(arg) > 2:
            body = arg[2:]
            if "=" in body and "{" not in body:
                key, options = body.split("=", 1)
                body = f"{key}{{{options}}}"
            passes.append(body)
        else:
            rest.append(arg)
    return passes, rest


def chunks(text: str, split: bool) -> list[tuple[str, int]]:
    """The input's chunks, each padded with newlines so line numbers match the file."""
    if not split:
        return [(text, 0)]
    out, start = [], 0
    lines = text.split("\n")
    for n, line in enumerate(lines + [SPLIT]):
        if line.strip() == SPLIT:
            out.append(("\n" * start + "\n".join(lines[start:n]), start))
            start = n + 1
    return out


def emit_object(module: ir.Module, args) -> None:
    """Lower what is left to LLVM, write the object to -o and its C header."""
    sigs = None if aot.is_llvm(module) else aot.signatures(module)
    if sigs is not None:
        build("dq-to-llvm", module.context).run(module.operation)
    aot.emit_object(module, args.output)
    header = args.header or os.path.splitext(args.output)[0] + ".h"
    if sigs is None:
        if args.header:
            raise ValueError("--header needs the tensor-level module: let --emit=object run dq-to-llvm")
        return
    with open(header, "w", encoding="utf-8") as f:
        f.write(aot.header(sigs, os.path.basename(header)))


def process(text: str, name: str, args, pipeline: str | None) -> tuple[str | None, list[str], bool]:
    """Parse, verify, transform and print one chunk: (output, diagnostics lines, ok)."""
    ctx = context()
    ctx.allow_unregistered_dialects = args.allow_unregistered_dialect
    rename = {"-": name}
    with ctx, ir.Location.unknown(), diagnostics.Collector(ctx, rename) as collected:
        output = None
        try:
            module = ir.Module.parse(text)
            if dialect.verify(module.operation) and pipeline is not None:
                pm = build(pipeline, ctx)
                if args.mlir_print_ir_after_all:
                    pm.enable_ir_printing(print_after_all=True)
                pm.run(module.operation)
            if args.emit == "object" and not collected.diags:
                emit_object(module, args)
                return None, [], True
            if not any(d.severity == "error" for d in collected.diags):  # remarks and warnings print too
                output = module.operation.get_asm(
                    enable_debug_info=args.mlir_print_debuginfo,
                    print_generic_op_form=args.mlir_print_op_generic,
                    assume_verified=True,
                )
        except ir.MLIRError as e:
            collected.add_error(e)
            if not e.error_diagnostics:  # e.g. a custom-syntax parse failure with no diagnostic
                collected.diags.append(diagnostics.Diag("error", None, None, None, str(e).strip()))
        except (PipelineError, ValueError, OSError) as e:
            collected.diags.append(diagnostics.Diag("error", None, None, None, str(e)))
    diags = collected.diags
    if args.verify_diagnostics:
        problems = diagnostics.verify(diags, diagnostics.expectations(text), name)
        return output, problems, not problems
    errors = any(d.severity == "error" for d in diags)
    return output, [d.render() for d in diags], not errors


def main(argv: list[str] | None = None) -> int:
    pass_flags, rest = split_flags(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(rest)
    if pass_flags and args.pass_pipeline:
        print("dequant-opt: error: give passes as flags or as --pass-pipeline, not both", file=sys.stderr)
        return 1
    pipeline = args.pass_pipeline or (",".join(pass_flags) if pass_flags else None)
    if args.emit == "object" and (args.output == "-" or args.split_input_file):
        print("dequant-opt: error: --emit=object needs -o FILE and no --split-input-file", file=sys.stderr)
        return 1
    name = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except OSError as e:
        print(f"dequant-opt: error: cannot open input '{args.input}': {e.strerror}", file=sys.stderr)
        return 1
    outputs, ok = [], True
    for chunk, _ in chunks(text, args.split_input_file):
        output, messages, chunk_ok = process(chunk, name, args, pipeline)
        for m in messages:
            print(m, file=sys.stderr)
        ok &= chunk_ok
        if output is not None:
            outputs.append(output)
    result = f"\n{SPLIT}\n".join(o.rstrip("\n") for o in outputs) + "\n" if outputs else ""
    if args.emit == "object":
        pass
    elif args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
