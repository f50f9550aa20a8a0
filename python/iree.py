"""dq as a stage of IREE's ONNX pipeline: an ONNX model to an IREE module (vmfb).

    iree-import-onnx m.onnx -o - | iree-opt --mlir-print-op-generic \\
      | dequant-opt --allow-unregistered-dialect --torch-onnx-to-iree \\
      | iree-compile - --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu -o m.vmfb

`compile_onnx` and the `dequant-iree` command do the same in one step. IREE alone rejects a
blocked DequantizeLinear ("failed to legalize operation 'torch.operator'"); after the dq stage
(passes/to_iree.py) every DequantizeLinear is linalg IREE compiles, a MatMul of int4 blocked
weights is one dispatch reading them packed, and everything else is IREE's own ONNX lowering.
`dequant-iree` prints one summary line on stderr (what the stage took, what it left to IREE
and why; `-q` silences it) and, for any bad input, one `error:` line: the first real diagnostic
of the tool that failed. Scope and measured results: docs/iree.md. Needs the `iree` extra (`pip install dequant[iree]`:
iree-base-compiler, iree-base-runtime and onnx, version 3.13).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from mlir import ir

from dequant.passes import PIPELINES
from dequant.passes.target_features import TARGET_CPU, TARGET_CPU_FEATURES, cpu_tags
from dequant.passes.torch_onnx_to_dq import onnx_type_name

from . import check, context, diagnostics, guards
from .pipeline import build

PIPELINE = "torch-onnx-to-iree"
KERNEL_PASS = "torch-onnx-dq-matmul-iree-cpu"
INT8_OPTION = "int8-activations=true"  # the kernel pass's option (docs/iree.md#int8-activations-opt-in-approximate)


@dataclass(frozen=True)
class Target:
    """An IREE backend the stage prepares for: the dq pipeline and the iree-compile flags."""

    pipeline: str
    flags: tuple
    conv_flags: tuple = ()  # added where the module has a convolution
    no_conv_flags: tuple = ()  # added where it has none


# -O3 for the CPU: faster than the default level on the fused int4 MatMul
# (docs/iree.md#the-int4-matmul-fused-contraction). A stack limit of 128 KB per dispatch, not
# IREE's 32 KB: the genai builder's LLMs fuse the embedding's gather into the first RMS norm, which
# needs more from SmolLM2's size on (docs/iree.md#onnxruntime-genai-models). The GPU chips are
# defaults a user overrides with their own --iree-*-target=.
TARGETS = {
    "llvm-cpu": Target(PIPELINE, ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                                  "--iree-llvmcpu-target-cpu=host", "--iree-opt-level=O3", "--iree-llvmcpu-stack-allocation-limit=131072"),
                       # im2col + IREE's matmul codegen: 0.6-0.8x the time of its direct convolutions,
                       # f32 and int8 (docs/iree.md#qdq-convolutions)
                       ("--iree-global-opt-use-im2col-for-convs",),
                       # an attention's P @ V stays a batch matmul, its V not transposed into it
                       # (docs/iree.md#transpose-propagation)
                       ("--iree-global-opt-propagate-transposes=false",)),
    "cuda": Target("torch-onnx-to-iree-gpu", ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80")),
    "rocm": Target("torch-onnx-to-iree-gpu", ("--iree-hal-target-device=hip", "--iree-rocm-target=gfx942")),
    "vulkan-spirv": Target("torch-onnx-to-iree-spirv", ("--iree-hal-target-device=vulkan", "--iree-vulkan-target=ampere")),
}  # fmt: skip


# From O1 on IREE strips `cf.assert`, which carries dq's run-time shape checks
# (passes/checks_to_assert.py); kept, a mismatched dim is an error of the call.
COMMON_FLAGS = ("--iree-opt-strip-assertions=false",)


def compile_flags(text: str, target: str = "llvm-cpu", extra_args=()) -> list:
    """iree-compile's flags for the stage's `text`: the target's flags, COMMON_FLAGS and, where the
    text has a convolution, the target's conv_flags, else its no_conv_flags; less those the user's
    `extra_args` set again (same option name), then `extra_args`."""
    t = TARGETS[target]
    given = {a.split("=", 1)[0] for a in extra_args}
    convs = t.conv_flags if '<{name = "onnx.Conv"}>' in text else t.no_conv_flags
    return [f for f in (*t.flags, *COMMON_FLAGS, *convs) if f.split("=", 1)[0] not in given] + list(extra_args)
OPT, COMPILE = "iree.compiler.tools.scripts.iree_opt", "iree.compiler.tools.scripts.iree_compile"


class IreeStageError(RuntimeError):
    """A model the IREE stage cannot take: the importer, the dq passes or iree-compile failed.
    The message is one line (the first real diagnostic of the tool that failed, never its
    traceback), then notes: what dq left to IREE, when IREE then failed."""


@dataclass
class Summary:
    """What the dq stage took of one imported model and what it left to IREE."""

    nodes: int  # DequantizeLinear nodes in the imported model
    left: int  # still DequantizeLinear after the stage (IREE's to lower, or to refuse)
    fused: int  # MatMuls that now read their weights quantized
    remarks: list = field(default_factory=list)  # "location: why" of each node left, in order
    cpu_note: str | None = None  # why the target CPU's features are not known (no AVX2 or AVX-512 route)
    dynamic: tuple = (0, 0)  # (MatMulIntegers given dq's integer kernel, MatMulIntegers in the model)

    def reasons(self) -> list:
        """The distinct reasons a node was left, each with its count, first seen first."""
        counts: dict = {}
        for r in self.remarks:
            why = r.split(_LEFT, 1)[-1]
            counts[why] = counts.get(why, 0) + 1
        return [f"{why}{f' (x{n})' if n > 1 else ''}" for why, n in counts.items()]

    def line(self) -> str:
        return self._line() + (f"; {self.cpu_note}" if self.cpu_note else "")

    def _line(self) -> str:
        taken, total = self.dynamic
        dynamic = f"; {taken} of {total} MatMulInteger to dq's integer kernel" if total else ""
        if not self.nodes:
            return "dq stage: no DequantizeLinear in the model" + (dynamic if total else "; it is IREE's alone")
        return self._dequantize_line() + dynamic

    def _dequantize_line(self) -> str:
        text = f"dq stage: {self.nodes - self.left} of {self.nodes} DequantizeLinear to dq, {self.fused} MatMul(s) fused"
        lowered = self.left - len(self.remarks)
        if lowered > 0:
            text += f"; {lowered} left to IREE, which lowers them itself"
        if self.remarks:
            reasons = self.reasons()
            more = f"; and {len(reasons) - 3} more reasons" if len(reasons) > 3 else ""
            text += f"; {len(self.remarks)} left to IREE: " + "; ".join(reasons[:3]) + more
        return text

    def notes(self) -> str:
        """Lines naming each node dq left, for a failure of IREE on one of them."""
        return "\n".join(f"note: dq left this DequantizeLinear to IREE: {r}" for r in self.remarks)


_LEFT = "DequantizeLinear not converted to dq: "
_UNKNOWN_ELEMENT = re.compile(r"Unknown ONNX tensor element type: (-?\d+)")


def first_diagnostic(stderr: str, source: str | None = None) -> str:
    """The first real diagnostic of one of IREE's tools: the exception of a Python traceback
    (its class without the module path), else the first `error:` line (a temporary `source`
    path shortened to its line and column), else the first line."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    if not lines:
        return "(no message)"
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        frames = [i for i, ln in enumerate(lines) if ln.startswith("  File ")]
        after = [ln for ln in lines[frames[-1] + 1 if frames else 0 :] if not ln.startswith("  ")]  # the exception: not code
        name, _, message = " ".join(after or lines[-1:]).partition(": ")
        message = " ".join(message.split())  # a message of several lines, as one
        unknown = _UNKNOWN_ELEMENT.search(message)
        if unknown:
            code = int(unknown.group(1))
            return (f"the model holds ONNX element type {code} ({onnx_type_name(code) or 'unknown'}), which IREE 3.13's "
                    "ONNX importer does not read (it reads no float4, int2 or uint2 tensor)")  # fmt: skip
        return f"{name.rsplit('.', 1)[-1]}: {message}" if message else name
    line = next((ln for ln in lines if ": error: " in ln), lines[0])
    if source:
        line = line.replace(source + ":", "stage.mlir:")
    return line.strip()


def _tool(module: str, args: list, what: str, source: str | None = None) -> None:
    """Run one of IREE's tools (`python -m <module>`) in a child process: IREE's compiler has
    its own MLIR Python bindings, which cannot load in a process that loaded dequant's."""
    if not installed():
        raise ImportError(INSTALL_HINT)
    run = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, errors="replace")
    if run.returncode != 0:
        raise IreeStageError(f"{what}: {first_diagnostic(run.stderr, source)}")


INSTALL_HINT = "the IREE stage needs IREE's compiler and its ONNX importer: pip install 'dequant[iree]'"


def installed() -> bool:
    """Whether IREE's compiler can be run (find_spec of a submodule raises when `iree` is absent)."""
    try:
        return importlib.util.find_spec("iree.compiler") is not None
    except ImportError:
        return False


def _normalised(model: str | os.PathLike, tmp: str, target: str | None = None, cpu: str = "host", cpu_features: str = "") -> str:
    """The path of the model with its formats normalised (dequant.formats) and, for llvm-cpu, its
    QDQ convolutions that dq's int8 kernel takes on that CPU as QDQ MatMuls
    (dequant.qdq_conv_matmuls), its QDQ Gemms as QDQ MatMuls (dequant.qdq_gemms), and its QDQ
    depthwise convolutions as nodes of dq's depthwise kernel
    (dequant.qdq_depthwise), the activations after those kernels as tables of codes
    (dequant.qdq_tables), the others in float (dequant.qdq_convs), the depthwise ones of these as
    sums of shifted slices (dequant.depthwise), and on a QDQ model without them its activations'
    tables and QDQ pairs in f32 (dequant.qdq_convs); on AVX2 CPUs (and VNNI ones), its QDQ pairs
    around layout ops and MaxPools dropped (dequant.qdq_layout), its QDQ MatMuls of two
    activations as f32 MatMuls of their codes (dequant.qdq_activation_matmuls) and its Softmaxes
    of codes as nodes of dq's softmax kernel (dequant.qdq_softmax); written into
    `tmp`; or the model's own path where none changes it."""
    import onnx  # with dequant.formats, on first use: an optional dependency (docs/development.md#imports)

    from . import depthwise, formats, qdq_activation_matmuls, qdq_conv_matmuls, qdq_convs, qdq_gemms, qdq_layout, qdq_softmax, qdq_tables

    try:
        proto = onnx.load(os.fspath(model), load_external_data=False)
    except Exception as e:  # protobuf's DecodeError and friends: not a model
        raise IreeStageError(f"cannot read '{os.fspath(model)}' as an ONNX model: {e}") from None
    formats_needed = formats.needs_rewrite(proto)
    if not formats_needed and not (target == "llvm-cpu" and (qdq_convs.applies(proto) or qdq_convs.has_pairs(proto))):
        return os.fspath(model)
    try:
        onnx.load_external_data_for_model(proto, os.path.dirname(os.path.abspath(model)))
    except Exception as e:  # onnx's ValidationError, OSError: a location outside the folder, a missing file
        raise IreeStageError(f"cannot read the external data of '{os.fspath(model)}': {e}") from None
    try:
        if formats_needed:
            proto, _ = formats.normalise(proto)
    except formats.FormatError as e:
        raise IreeStageError(str(e)) from None
    tags = cpu_tags(cpu, cpu_features)[0] if target == "llvm-cpu" else ()
    kernels = qdq_conv_matmuls.kernel(tags) is not None
    if kernels:  # QDQ Gemms as QDQ MatMuls for dq's int8 kernel
        qdq_gemms.rewrite(proto)
    convs = target == "llvm-cpu" and qdq_convs.applies(proto)
    if convs or (target == "llvm-cpu" and qdq_convs.has_pairs(proto)):  # without QDQ convolutions: the pairs alone
        if convs:
            if qdq_activation_matmuls.wanted(tags):  # MaxPools of codes, before the convolutions around them are rewritten
                qdq_layout.rewrite(proto, qdq_layout.SELECTIONS)
            qdq_conv_matmuls.rewrite(proto, tags)
        if kernels:  # activations as tables in the epilogues of dq's kernels
            qdq_tables.rewrite(proto)
        if qdq_activation_matmuls.wanted(tags):  # layout ops on codes; an attention's Q K^T and P V on them in f32, its softmax on them
            qdq_layout.rewrite(proto)
            qdq_activation_matmuls.rewrite(proto)
            qdq_softmax.rewrite(proto)
        proto, _, _ = qdq_convs.rewrite(proto, kernels)
        if convs:
            depthwise.rewrite(proto)
    path = os.path.join(tmp, "normalised.onnx")
    big = proto.ByteSize() > 1 << 30  # protobuf's 2 GB limit: the weights beside it
    onnx.save(proto, path, save_as_external_data=big, all_tensors_to_one_file=True, location="normalised.data")
    return path


def import_onnx(model: str | os.PathLike, target: str | None = None, cpu: str = "host", cpu_features: str = "") -> str:
    """The model imported by IREE's ONNX importer (`iree-import-onnx`), in generic form; its
    contrib-op formats normalised first (dequant.formats). `target`: the IREE backend the text is
    for (TARGETS); llvm-cpu also gives IREE the QDQ convolutions as int8 MatMuls for `cpu` with
    `cpu_features` (target_cpu) where dq's kernel takes them, else in float (dequant.qdq_convs)."""
    if not os.path.isfile(model):
        raise IreeStageError(f"cannot open '{os.fspath(model)}': {'not a file' if os.path.exists(model) else 'no such file'}")
    with tempfile.TemporaryDirectory() as tmp:
        imported, generic = os.path.join(tmp, "import.mlir"), os.path.join(tmp, "generic.mlir")
        model = _normalised(model, tmp, target, cpu, cpu_features)
        _tool("iree.compiler.tools.import_onnx", [os.fspath(model), "-o", imported], "iree-import-onnx")
        _tool(OPT, ["--mlir-print-op-generic", imported, "-o", generic], "iree-opt", imported)
        with open(generic, encoding="utf-8") as f:
            return f.read()


def target_cpu(flags) -> tuple[str, str]:
    """(CPU, CPU features) that iree-compile `flags` compile for: the last
    `--iree-llvmcpu-target-cpu=` (default host) and `--iree-llvmcpu-target-cpu-features=`."""
    cpu, features = "host", ""
    for f in flags:
        name, _, value = f.partition("=")
        if name == "--iree-llvmcpu-target-cpu":
            cpu = value
        elif name == "--iree-llvmcpu-target-cpu-features":
            features = value
    return cpu, features


def run_stage(text: str, pipeline: str = PIPELINE, *, int8_activations: bool = False, cpu: str = "host", cpu_features: str = "") -> tuple[str, Summary]:
    """Run the dq stage (dequant-opt --allow-unregistered-dialect --torch-onnx-to-iree) on an
    imported module's text: (the text iree-compile takes, the Summary). A DequantizeLinear dq
    leaves to IREE is a remark, kept in the summary; errors raise IreeStageError.
    `int8_activations`: the kernel pass with its option int8-activations=true (CPU pipeline
    only; approximate: dq's matmul kernel quantizes x to int8 per block,
    docs/semantics.md#int8-activations).
    `cpu`, `cpu_features`: the CPU iree-compile compiles for (`target_cpu`), whose features pick
    dq's kernel routes (dq-target-features): the host's only for "host"."""
    if int8_activations:
        if pipeline != PIPELINE:
            raise ValueError(f"int8 activations are for the llvm-cpu target (pipeline {PIPELINE}), not {pipeline}")
        passes = PIPELINES[PIPELINE].elements.split(",")  # a flat list of pass names
        pipeline = ",".join(f"{p}{{{INT8_OPTION}}}" if p == KERNEL_PASS else p for p in passes)
    ctx = context()
    ctx.allow_unregistered_dialects = True
    nodes, matmuls = text.count('"onnx.DequantizeLinear"'), text.count('"onnx.MatMul"')
    integers = text.count('"onnx.MatMulInteger"')
    with ctx, ir.Location.unknown(), diagnostics.Collector(ctx, {"-": "<torch form>"}) as collected:
        try:
            depth = guards.too_deep(text)
            if depth is not None:
                raise IreeStageError(f"the imported module nests {depth} deep; the dq stage takes at most {guards.MAX_NESTING}")
            guards.check(text)
            module = ir.Module.parse(text)
            if cpu != "host" or cpu_features:
                module.operation.attributes[TARGET_CPU] = ir.StringAttr.get(cpu)
                module.operation.attributes[TARGET_CPU_FEATURES] = ir.StringAttr.get(cpu_features)
            build(pipeline, ctx).run(module.operation)
        except ir.MLIRError as e:
            collected.add_error(e)
            if not e.error_diagnostics:
                collected.diags.append(diagnostics.Diag("error", None, None, None, str(e).strip()))
        except guards.ParserCrashError as e:
            raise IreeStageError(f"the dq stage refuses the module: {e}") from None
        errors = [d.render() for d in collected.diags if d.severity == "error"]
        if errors:
            more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
            raise IreeStageError(f"the dq stage failed: {errors[0].splitlines()[0]}{more}")
        out = module.operation.get_asm(assume_verified=True)
        remarks = [d.render().splitlines()[0] for d in collected.diags if d.severity == "remark" and _LEFT in d.render()]
    summary = Summary(nodes, out.count('"onnx.DequantizeLinear"'), matmuls - out.count('"onnx.MatMul"'), remarks, cpu_tags(cpu, cpu_features)[1],
                      (integers - out.count('"onnx.MatMulInteger"'), integers))  # fmt: skip
    return out, summary


def prepare(text: str, pipeline: str = PIPELINE, *, int8_activations: bool = False) -> str:
    """The text iree-compile takes (run_stage without the summary)."""
    return run_stage(text, pipeline, int8_activations=int8_activations)[0]


def _stage_model(model: str | os.PathLike, target: str, int8_activations: bool, extra_args=()) -> tuple[str, Summary]:
    """run_stage on an ONNX model for an IREE backend of TARGETS (ValueError for another, or for
    int8 activations on a target other than llvm-cpu), for the CPU the flags name."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    if int8_activations and target != "llvm-cpu":
        raise ValueError(f"int8 activations are for the llvm-cpu target, not {target}")
    cpu, features = target_cpu(compile_flags("", target, extra_args)) if target == "llvm-cpu" else ("host", "")
    return run_stage(import_onnx(model, target, cpu, features), TARGETS[target].pipeline, int8_activations=int8_activations, cpu=cpu, cpu_features=features)


def compile_onnx(model: str | os.PathLike, *, target: str = "llvm-cpu", extra_args=(), report=None, int8_activations: bool = False) -> bytes:
    """The IREE module (vmfb bytes) of an ONNX model, with the dq stage between IREE's importer
    and iree-compile. `target`: an IREE backend of TARGETS (llvm-cpu: the host CPU); `extra_args`:
    more iree-compile flags (one naming an option of the target's flags replaces it, e.g.
    `--iree-cuda-target=sm_90`); `report(summary)` is called with the stage's Summary before
    iree-compile runs. When iree-compile fails and dq left nodes to IREE, the error names them
    (their remarks). `int8_activations` (llvm-cpu on a host with AVX-512 VNNI only; opt-in,
    approximate): dq's matmul kernel quantizes x to int8 per row and block of K, as onnxruntime's
    MatMulNBits does at accuracy_level 4 (docs/semantics.md#int8-activations)."""
    text, summary = _stage_model(model, target, int8_activations, extra_args)
    if report is not None:
        report(summary)
    with tempfile.TemporaryDirectory() as tmp:
        source, out = os.path.join(tmp, "stage.mlir"), os.path.join(tmp, "module.vmfb")
        with open(source, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            _tool(COMPILE, [source, *compile_flags(text, target, extra_args), "-o", out], "iree-compile", source)
        except IreeStageError as e:
            if summary.remarks:
                raise IreeStageError(f"{e}\n{summary.notes()}") from None
            raise
        with open(out, "rb") as f:
            return f.read()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="dequant-iree", description="Compile an ONNX model to an IREE module, dq stage included.")
    p.add_argument("model", help="the ONNX model")
    p.add_argument("-o", "--output", help="the IREE module to write (.vmfb); optional with --check")
    p.add_argument("--target", default="llvm-cpu", choices=list(TARGETS), help="the IREE backend (default: llvm-cpu, the host CPU)")
    p.add_argument("--emit-mlir", action="store_true", help="write the text given to iree-compile instead of the module")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line of what the dq stage took and left")
    p.add_argument("--int8-activations", action="store_true",
                   help="approximate, llvm-cpu with AVX-512 VNNI: dq's matmul kernel quantizes x to int8 per block of K (onnxruntime's MatMulNBits accuracy_level 4)")
    p.add_argument("--check", action="store_true",
                   help="run the module and print, per output, its error against an exact reference and onnxruntime (dequant/check.py)")
    p.add_argument("--inputs", help="with --check: the inputs (.npz by input name) instead of made ones")
    p.add_argument("iree_args", nargs="*", help="more iree-compile flags (after --)")
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after `--` is iree-compile's, wherever the options stand (argparse gives a
    # `nargs="*"` positional only the words right after the model).
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    args.iree_args += argv[cut + 1 :]
    if not args.output and not args.check:
        p.error("the following arguments are required: -o/--output (or --check)")
    if args.check and (args.emit_mlir or args.target != "llvm-cpu"):
        p.error("--check runs the module on this CPU: not with --emit-mlir or another --target")

    def report(summary: Summary) -> None:
        if not args.quiet:
            print(f"dequant-iree: {summary.line()}", file=sys.stderr)

    try:
        if args.emit_mlir:
            text, summary = _stage_model(args.model, args.target, args.int8_activations, args.iree_args)
            report(summary)
            data = text.encode()
        else:
            data = compile_onnx(args.model, target=args.target, extra_args=args.iree_args, report=report, int8_activations=args.int8_activations)
        if args.output:
            with open(args.output, "wb") as f:
                f.write(data)
        if args.check:
            inputs = check.load_inputs(args.inputs) if args.inputs else None
            print("\n".join(check.check(args.model, data, inputs)))
    except ImportError as e:
        print(f"dequant-iree: error: {e if str(e) == INSTALL_HINT else INSTALL_HINT + f' ({e})'}", file=sys.stderr)
        return 1
    except (IreeStageError, ValueError) as e:
        print(f"dequant-iree: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"dequant-iree: error: cannot write '{args.output}': {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
