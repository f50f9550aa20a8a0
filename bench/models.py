"""Benchmark: whole quantized models through IREE + dq against the routes a user would pick instead.

    python bench/models.py [--quick] [--only NAME ...] [--routes ROUTE ...] [--out DIR]
    python bench/models.py --merge RUN.json ... [--out DIR]    (one table of several runs)

The models (test/iree/iree_models.py builds them with onnx.helper, opset 21, random weights):
- decoder-M1, decoder-M16 (sym, asym): a Llama-style decoder layer with TinyLlama's dims (hidden
  2048, 32 heads, MLP 5632) for 1 and 16 tokens, quantized by onnxruntime's
  `MatMulNBitsQuantizer` in QDQ format (int4 blocked-32 along K; asym: uint4 with zero points);
- decoder-dynamic-M1, -M16 (sym): the same layer with its sequence length a run-time dim, as
  exporters write decoders, run at 1 and 16 tokens;
- decoder-qdynamic-M1, -M16 (full mode only): the same layer by `quantize_dynamic` (int8 weights,
  activations quantized at run time: DynamicQuantizeLinear + MatMulInteger);
- mobilenet (1x3x224x224), resnet (ResNet-18, 1x3x224x224), transformer (a BERT-style block,
  seq 128, hidden 256): quantized by onnxruntime's `quantize_static` in QDQ format, int8 weights;
  mobilenet per-channel with uint8 activations, resnet per-tensor with int8 activations,
  transformer per-channel with uint8 activations;
- mobilenet-qop, resnet-qop, transformer-qop: the same, by `quantize_static` in QOperator format
  (QLinearConv, QLinearMatMul, com.microsoft QLinearAdd / QGemm / ...: dequant.formats rewrites
  them to QDQ before IREE's importer; IREE alone does not compile them); mobilenetv3-qop: a
  MobileNetV3-Small-style classifier (hard-swish, squeeze-and-excite: QLinearSigmoid, QLinearMul)
  likewise, per channel, uint8 activations (and, full mode only, mobilenetv3: the same in QDQ
  format); transformer-dynamic: the block by `quantize_dynamic`
  (int8 weights, activations quantized at run time); transformer-dynamic-base (full mode only):
  the same at BERT-base dims (seq 128, hidden 768, 12 heads, ffn 3072);
- full mode only: resnet50 (ResNet-50-style bottlenecks, 1x3x224x224, QDQ as resnet);
  decoder-qdynamic-M1, -M16 (the decoder layer by `quantize_dynamic`);
`--quick` builds two models at small dims (QUICK: a smoke test of every route, not a measurement;
test/iree checks every format at small dims).

Routes, each compiled or loaded once, then timed in one process, interleaved round by round
(in each round, each route, after SETTLE_S of idle time, runs twice untimed, then `--calls` timed
calls; the median of all timed calls is reported; IREE's runtime on local-task, all cores;
onnxruntime's default thread pool):
- iree: IREE 3.13 alone on the quantized model as it is (iree-import-onnx, iree-compile for the
  host CPU at -O3, as `dequant-iree` compiles);
- iree+dq: `dequant.iree.compile_onnx` (the stage between IREE's importer and iree-compile; on
  CNNs its QDQ convolutions as int8 MatMuls for dq's kernel where it takes them, the others in
  float with IREE's im2col, docs/iree.md#qdq-convolutions);
- iree+dq int8 (decoder models only): the same with `int8_activations=True` (dq's matmul kernel
  quantizes x to int8 per block of K, as onnxruntime's MatMulNBits does: approximate; needs
  AVX-512 VNNI, else reported as not compiling);
- iree float: IREE alone on the float model;
- ort: onnxruntime's default session on the quantized model (it fuses QDQ into integer kernels
  and, for MatMulNBits, quantizes the activations: approximate);
- ort u8u8: the same with `session.x64quantprecision` (onnxruntime's uint8 x uint8 kernels for
  its int8 weights: on a CPU without VNNI its default uint8 x int8 kernels saturate,
  docs/semantics.md#onnxruntime-on-avx2-hosts; what a user who needs its exact answers runs there;
  a model with int8 activations, whose weights the option refuses, runs without it);
- ort exact: onnxruntime with graph optimizations disabled (the QDQ graph as written), its
  integer kernels exact on any x86 CPU (dequant.check.onnxruntime_session): the reference every
  route's error is reported against (max |y - ref| / max |ref|);
- ort float: onnxruntime's default session on the float model (error against the float model
  itself is not reported: a float model is not the quantized one); every other route's output
  is also measured against it (`from float`: the max distance relative to the float output's
  magnitude, averaged over FLOAT_INPUTS random inputs; reported for IREE + dq and onnxruntime's
  default session: whether dq lands further from the float model than onnxruntime does).
For the IREE routes the dispatch count comes from iree-compile's
`--iree-scheduling-dump-statistics-format=json`. A route that does not compile is reported with
the first line of its error. iree+dq off by more than EXACT (decoder) stops the benchmark with
status 1. Writes <out>/models-<date>.md and .json when --out is given (models-avx2-<date> on a host
without AVX-512 VNNI, models-amx-<date> on one with AMX's int8 tiles).

`--isa avx2|avxvnni|avx512vnni` runs every route as on a CPU with fewer instruction sets than this
one (Linux with CPUID faulting and a C compiler): the script runs again with bench/cpuid_mask.c
LD_PRELOAD'ed, so onnxruntime, IREE's runtime and numpy see CPUID without AMX (avx512vnni), without
AVX-512 too (avxvnni) or without AVX-VNNI too (avx2), and the IREE routes compile for ISA_CPU's
CPU; the results file is models-as-<isa>-<vendor>-<date> (amd or intel: whose cores stand in).
The cores stay this CPU's: a stand-in for such a host, named so in the results, not one.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "iree"))
import iree_models  # noqa: E402
import report  # noqa: E402  (bench/, this script's folder)

from dequant import check  # noqa: E402
from dequant import iree as stage  # noqa: E402
from dequant.passes.target_features import host_has_amx_int8, host_has_avx512vnni  # noqa: E402

ROUTES = ["iree", "iree+dq", "iree+dq int8", "iree float", "ort", "ort u8u8", "ort exact", "ort float"]
# Idle time before each route's turn: onnxruntime's pool threads spin after a run
# (`session.intra_op.allow_spinning`, on by default), so a route timed right after it shares the two
# cores with them: the QDQ transformer block took 5.9 ms through IREE alone timed after the
# onnxruntime routes and 4.0 ms in a process without them.
SETTLE_S = 0.05
EXACT = 1e-5  # max error relative to the output's magnitude of a route computing the graph as written
FLOAT_INPUTS = 8  # random inputs whose distances from the float model's outputs `from float` averages
CPU_FLAGS = stage.TARGETS["llvm-cpu"].flags
# --isa -> the CPU the IREE routes compile for (iree-compile's and dq's kernels' target): LLVM's
# names for a CPU with those instruction sets (DQ_CPUID_MASK in bench/cpuid_mask.c says which go)
ISA_CPU = {"avx2": "haswell", "avxvnni": "alderlake", "avx512vnni": "icelake-server"}
MASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpuid_mask.c")


@dataclass
class Model:
    """One benchmark model: how to build its float graph and quantize it, and its input shape."""

    name: str
    build: object  # (path) -> float model path
    quantize: object  # (float_path, path) -> quantized model path
    x_shape: tuple
    exact: bool = False  # iree+dq must agree with ort exact within EXACT (weight-only models)
    int8: bool = False  # also the route iree+dq int8 (int8 activations)


def models(quick: bool) -> list[Model]:
    m = iree_models
    if quick:
        dec = dict(hidden=128, heads=4, mlp=256)
        cnn_size, tr = 64, dict(seq=16, hidden=64, heads=4, ffn=128)
    else:
        dec, cnn_size, tr = dict(hidden=2048, heads=32, mlp=5632), 224, dict(seq=128, hidden=256, heads=4, ffn=1024)
    out = []
    for seq in (1, 16):
        for sym in (True, False):
            out.append(Model(f"decoder-M{seq}-{'sym' if sym else 'asym'}", lambda p, s=seq: m.decoder_layer(p, s, **dec),
                             lambda f, p, s=sym: m.quantize_matmul_nbits(f, p, symmetric=s), (1, seq, dec["hidden"]), exact=True, int8=True))  # fmt: skip
    for seq in (1, 16):  # the layer as exporters write it: the sequence length a run-time dim
        out.append(Model(f"decoder-dynamic-M{seq}-sym", lambda p: m.decoder_layer(p, None, **dec),
                         lambda f, p: m.quantize_matmul_nbits(f, p, symmetric=True), (1, seq, dec["hidden"]), exact=True))  # fmt: skip
    x_img = (1, 3, cnn_size, cnn_size)
    out += [
        Model("mobilenet", lambda p: m.mobilenet(p, cnn_size), lambda f, p: m.quantize_static_file(f, p, x_img), x_img),
        Model("resnet", lambda p: m.resnet(p, cnn_size),
              lambda f, p: m.quantize_static_file(f, p, x_img, per_channel=False, activations="int8"), x_img),
        Model("transformer", lambda p: m.transformer_block(p, **tr),
              lambda f, p: m.quantize_static_file(f, p, (1, tr["seq"], tr["hidden"])), (1, tr["seq"], tr["hidden"])),
        # the same three in quantize_static's QOperator format (QLinearConv, QGemm, ...), and the
        # block by quantize_dynamic (DynamicQuantizeLinear + MatMulInteger)
        Model("mobilenet-qop", lambda p: m.mobilenet(p, cnn_size), lambda f, p: m.quantize_static_file(f, p, x_img, quant_format="QOperator"), x_img),
        Model("mobilenetv3-qop", lambda p: m.mobilenet_v3(p, cnn_size),
              lambda f, p: m.quantize_static_file(f, p, x_img, quant_format="QOperator"), x_img),
        Model("resnet-qop", lambda p: m.resnet(p, cnn_size),
              lambda f, p: m.quantize_static_file(f, p, x_img, per_channel=False, activations="int8", quant_format="QOperator"), x_img),
        Model("transformer-qop", lambda p: m.transformer_block(p, **tr),
              lambda f, p: m.quantize_static_file(f, p, (1, tr["seq"], tr["hidden"]), quant_format="QOperator"), (1, tr["seq"], tr["hidden"])),
        Model("transformer-dynamic", lambda p: m.transformer_block(p, **tr), m.quantize_dynamic_file, (1, tr["seq"], tr["hidden"])),
    ]  # fmt: skip
    if not quick:  # a BERT-base-dims encoder block by quantize_dynamic (sentence-transformers' *_avx512_vnni.onnx)
        out.append(Model("transformer-dynamic-base", lambda p: m.transformer_block(p, **BASE), m.quantize_dynamic_file, (1, BASE["seq"], BASE["hidden"])))
        for seq in (1, 16):  # the decoder layer by quantize_dynamic (transformers.js' q8 files)
            out.append(Model(f"decoder-qdynamic-M{seq}", lambda p, s=seq: m.decoder_layer(p, s, **dec), m.quantize_dynamic_file, (1, seq, dec["hidden"])))
        out.append(Model("resnet50", lambda p: m.resnet50(p, cnn_size),  # ResNet-50 style, QDQ as resnet
                         lambda f, p: m.quantize_static_file(f, p, x_img, per_channel=False, activations="int8"), x_img))
    # the QDQ form of mobilenetv3-qop (docs/iree.md#qdq-convolutions; --quick takes its route through mobilenetv3-qop)
    out.insert(out.index(next(o for o in out if o.name == "mobilenetv3-qop")),
               Model("mobilenetv3", lambda p: m.mobilenet_v3(p, cnn_size), lambda f, p: m.quantize_static_file(f, p, x_img), x_img))
    return [o for o in out if o.name in QUICK] if quick else out


BASE = dict(seq=128, hidden=768, heads=12, ffn=3072)
# Two models that together take every route of this script (CI runs --quick: a smoke test of the
# benchmark; each compiles two or three times): the weight-only decoder layer (IREE alone refused,
# the int8-activation route) and the QOperator CNN (dequant.formats, the convolution rewrites).
# test/iree runs the other formats' routes at small dims: the QDQ and dynamic transformer blocks.
QUICK = ("decoder-M1-sym", "mobilenetv3-qop")


def iree_compile(text: str, tmp: str, name: str, flags) -> tuple[bytes, int]:
    """iree-compile of `text` (a module iree-compile takes): the vmfb and its dispatch count."""
    source, out, stats = (os.path.join(tmp, f"{name}.{e}") for e in ("mlir", "vmfb", "json"))
    with open(source, "w", encoding="utf-8") as f:
        f.write(text)
    run = subprocess.run([sys.executable, "-m", stage.COMPILE, source, *flags, "-o", out, "--iree-scheduling-dump-statistics-format=json",
                          f"--iree-scheduling-dump-statistics-file={stats}"], capture_output=True, text=True)  # fmt: skip
    if run.returncode != 0:
        raise RuntimeError(stage.first_diagnostic(run.stderr, source))
    with open(stats) as f:
        dispatches = json.load(f)["stream-aggregate"]["execution"]["dispatch-count"]
    with open(out, "rb") as f:
        return f.read(), dispatches


def import_as_is(path: str, tmp: str) -> str:
    """IREE's ONNX importer on the model as it is (stage.import_onnx first rewrites the contrib-op
    formats, dequant.formats: the route "iree" is IREE alone)."""
    out = os.path.join(tmp, "as-is.mlir")
    run = subprocess.run([sys.executable, "-m", "iree.compiler.tools.import_onnx", path, "-o", out], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"iree-import-onnx: {stage.first_diagnostic(run.stderr)}")
    with open(out, encoding="utf-8") as f:
        return f.read()


def iree_function(vmfb: bytes, name: str):
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    f = ctx.modules.module[name]
    return lambda x: np.asarray(f(x))


def ort_function(path: str):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return lambda x: s.run(None, {"x": x})[0]


def ort_exact(path: str, optimized: bool = False):
    """optimized: the default session with EXACT_INTEGER_KERNELS alone (`ort u8u8`)."""
    s = check.onnxruntime_session(path, optimized, rewrite_weights=not optimized)
    return lambda x: s.run(None, {"x": x})[0]


@dataclass
class Result:
    compile_s: dict = field(default_factory=dict)
    dispatches: dict = field(default_factory=dict)
    failed: dict = field(default_factory=dict)
    error: dict = field(default_factory=dict)
    from_float: dict = field(default_factory=dict)  # max |y - y_float| / max |y_float| (ort float's output)
    ms: dict = field(default_factory=dict)


def prepare(model: Model, tmp: str, routes=None, cpu: str = "host") -> tuple[dict, Result]:
    """Every route of `model` (of `routes`, if given) that compiles, as a callable of x, and the
    Result so far; `ort exact`, every route's reference, always. The IREE routes compile for
    `cpu` (LLVM's name)."""
    float_path = model.build(os.path.join(tmp, f"{model.name}.float.onnx"))
    path = model.quantize(float_path, os.path.join(tmp, f"{model.name}.onnx"))
    graph = onnx.load(path, load_external_data=False).graph.name
    res, fns = Result(), {}
    sources = {
        "iree": lambda: import_as_is(path, tmp),
        "iree+dq": lambda: stage.run_stage(stage.import_onnx(path, "llvm-cpu", cpu), cpu=cpu)[0],
        "iree+dq int8": lambda: stage.run_stage(stage.import_onnx(path, "llvm-cpu", cpu), int8_activations=True, cpu=cpu)[0],
        "iree float": lambda: stage.import_onnx(float_path),
    }
    if not model.int8:
        del sources["iree+dq int8"]
    sources = {r: s for r, s in sources.items() if routes is None or r in routes}
    cpu_flag = [] if cpu == "host" else [f"--iree-llvmcpu-target-cpu={cpu}"]
    for route, source in sources.items():
        t = time.perf_counter()
        try:
            text = source()
            # as compile_onnx compiles
            flags = stage.compile_flags(text, extra_args=cpu_flag) if route.startswith("iree+dq") else [*CPU_FLAGS, *cpu_flag]
            vmfb, res.dispatches[route] = iree_compile(text, tmp, f"{model.name}-{route.replace(' ', '-')}", flags)
        except (RuntimeError, stage.IreeStageError) as e:
            res.failed[route] = str(e).splitlines()[0][:160]
            continue
        res.compile_s[route] = time.perf_counter() - t
        fns[route] = iree_function(vmfb, graph)
    ort_routes = {"ort": lambda: ort_function(path), "ort u8u8": lambda: ort_exact(path, optimized=True), "ort exact": lambda: ort_exact(path),
                  "ort float": lambda: ort_function(float_path)}  # fmt: skip
    fns.update({r: make() for r, make in ort_routes.items() if routes is None or r in routes or r in ("ort exact", "ort float")})
    return fns, res


def measure(model: Model, fns: dict, res: Result, rounds: int, calls: int, routes=None) -> None:
    x = np.random.default_rng(7).standard_normal(model.x_shape).astype(np.float32)
    ref = fns["ort exact"](x)
    # a single input's max distance from the float model is a lottery of which codes flip: a mean over several
    xs = [x, *(np.random.default_rng(8 + i).standard_normal(model.x_shape).astype(np.float32) for i in range(FLOAT_INPUTS - 1))]
    flts = [fns["ort float"](xi) for xi in xs]
    for route, fn in fns.items():
        if route != "ort float":
            ys = [fn(xi) for xi in xs]
            res.error[route] = float(np.abs(ys[0] - ref).max() / np.abs(ref).max())
            res.from_float[route] = float(np.mean([np.abs(y - f).max() / np.abs(f).max() for y, f in zip(ys, flts)]))
    timed = {r: fn for r, fn in fns.items() if routes is None or r in routes}
    times = {r: [] for r in timed}
    for _ in range(rounds):
        for route, fn in timed.items():
            time.sleep(SETTLE_S)
            fn(x), fn(x)
            for _ in range(calls):
                t = time.perf_counter()
                fn(x)
                times[route].append(time.perf_counter() - t)
    res.ms = {r: statistics.median(v) * 1e3 for r, v in times.items()}


def cell(res: Result, route: str) -> str:
    if route in res.failed:
        return "does not compile"
    ms = f"{res.ms[route]:.2f}" if route in res.ms else "-"
    err = f" ({res.error[route]:.1e})" if route in res.error else ""
    return ms + err


def table(results: dict) -> list[str]:
    lines = ["| model | " + " | ".join(ROUTES) + " | iree+dq / iree | iree+dq / ort | iree+dq / ort u8u8 | iree+dq int8 / ort | dispatches iree / +dq / float | from float iree+dq / ort |",
             "|---" * (len(ROUTES) + 7) + "|"]  # fmt: skip
    for name, res in results.items():
        ms = res.ms
        vs_iree = f"{ms['iree+dq'] / ms['iree']:.2f}x" if "iree" in ms and "iree+dq" in ms else "-"
        vs_ort = f"{ms['iree+dq'] / ms['ort']:.2f}x" if "iree+dq" in ms and "ort" in ms else "-"
        vs_u8u8 = f"{ms['iree+dq'] / ms['ort u8u8']:.2f}x" if "iree+dq" in ms and "ort u8u8" in ms else "-"
        int8_vs_ort = f"{ms['iree+dq int8'] / ms['ort']:.2f}x" if "iree+dq int8" in ms and "ort" in ms else "-"
        d = " / ".join(str(res.dispatches.get(r, "-")) for r in ("iree", "iree+dq", "iree float"))
        f = " / ".join(f"{res.from_float[r]:.1e}" if r in res.from_float else "-" for r in ("iree+dq", "ort"))
        lines.append(f"| {name} | " + " | ".join(cell(res, r) for r in ROUTES) + f" | {vs_iree} | {vs_ort} | {vs_u8u8} | {int8_vs_ort} | {d} | {f} |")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small dims, few calls: every route once over")
    p.add_argument("--only", nargs="*", default=None, help="model names (prefixes) to run")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--routes", nargs="*", default=None, choices=ROUTES, help="only these routes (one a process: none shares the cores)")
    p.add_argument("--out", default=None, help="directory for models-<date>.md/.json")
    p.add_argument("--merge", nargs="*", default=None, metavar="JSON",
                   help="no run: one table of the results of these runs' .json (e.g. one --routes a process)")
    p.add_argument("--isa", choices=list(ISA_CPU), default=None,
                   help="run as on a CPU with only these of this CPU's instruction sets (bench/cpuid_mask.c); with --merge: "
                        "the runs were")
    args = p.parse_args(argv)
    if args.isa and args.merge is None and os.environ.get("DQ_CPUID_MASK") != args.isa:
        return masked(args.isa, sys.argv if argv is None else [sys.argv[0], *argv])
    logging.disable(logging.WARNING)  # the quantizers' progress and pre-processing advice
    rounds = args.rounds or (2 if args.quick else 10)
    results, status = {}, 0
    for path in args.merge or ():
        with open(path, encoding="utf-8") as f:
            for name, fields in json.load(f).items():
                res = results.setdefault(name, Result())
                for key, value in fields.items():
                    getattr(res, key).update(value)
    for model in models(args.quick) if args.merge is None else ():
        if args.only and not any(model.name.startswith(o) for o in args.only):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            fns, res = prepare(model, tmp, args.routes, ISA_CPU.get(args.isa, "host"))
            measure(model, fns, res, rounds, args.calls, args.routes)
        results[model.name] = res
        print(table({model.name: res})[-1], flush=True)
        if model.exact and res.error.get("iree+dq", 0.0) > EXACT:
            print(f"{model.name}: iree+dq differs from the QDQ graph by {res.error['iree+dq']:.1e} (> {EXACT})", file=sys.stderr)
            status = 1
        if "iree+dq" in res.failed:
            print(f"{model.name}: iree+dq does not compile: {res.failed['iree+dq']}", file=sys.stderr)
            status = 1
    cpu = platform.processor() or platform.machine()
    lines = [f"# Whole models through IREE + dq and peers ({cpu}, {os.cpu_count()} cores{', quick' if args.quick else ''})", "",
             report.cpu_line(), "",
             *([f"Run as an {args.isa} CPU: CPUID without {MASKED[args.isa]} (bench/cpuid_mask.c), IREE for "
                f"`{ISA_CPU[args.isa]}`; the cores are this CPU's.", ""] if args.isa else []),
             *(["Each route timed in its own process (`--routes`), the runs merged (`--merge`).", ""] if args.merge else []),
             "Median ms per call (all cores); in brackets, the max error relative to the output's magnitude against",
             "`ort exact` (the quantized graph as written); `from float`: the same against `ort float` (the float",
             f"model's output), averaged over {FLOAT_INPUTS} inputs. `does not compile`: the route's compiler refused the model.", "",
             *table(results)]  # fmt: skip
    failed = {f"{n} {r}": why for n, res in results.items() for r, why in res.failed.items()}
    lines += ["", *(f"- {k}: {v}" for k, v in failed.items())] if failed else []
    print("\n".join(lines))
    if args.out:
        # one kind of result a host class (dq's VNNI kernels or its AVX2 ones; VNNI hosts with AMX,
        # whose tiles onnxruntime's int8 GEMMs take, apart): each keeps its latest
        kind = f"models-as-{args.isa}-{report.vendor()}" if args.isa else "models-amx" if host_has_amx_int8() else "models" if host_has_avx512vnni() else "models-avx2"
        report.write(args.out, kind, lines, {n: vars(r) for n, r in results.items()})
    return status


MASKED = {"avx512vnni": "AMX", "avxvnni": "AMX and AVX-512", "avx2": "AMX, AVX-512 and AVX-VNNI"}


def masked(isa: str, argv: list) -> int:
    """This script again in a process that sees CPUID without MASKED[isa] (bench/cpuid_mask.c,
    built with the system's C compiler); its status."""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        if "cpuid_fault" not in f.read().split():
            print("error: --isa needs Linux's CPUID faulting (cpuid_fault in /proc/cpuinfo), which this CPU or VM has not", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "cpuid_mask.so")
        try:
            build = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", MASK, "-o", lib], capture_output=True, text=True)
            why = None if build.returncode == 0 else (build.stderr.strip().splitlines() or ["failed"])[0]
        except OSError as e:
            why = f"no C compiler ({e.strerror})"
        if why:
            print(f"error: --isa: cannot build {MASK}: {why}", file=sys.stderr)
            return 2
        env = dict(os.environ, DQ_CPUID_MASK=isa, LD_PRELOAD=lib)
        return subprocess.run([sys.executable, *argv], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
