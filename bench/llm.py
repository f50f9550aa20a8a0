"""Benchmark: a whole int4 LLM (onnxruntime-genai's builder) decoding greedily, IREE + dq against onnxruntime.

    python bench/llm.py [--model DIR] [--prompt-tokens 64] [--new-tokens 32] [--rounds 3] [--out bench/results]
    python bench/llm.py --quick        # the committed tiny Llama (test/models/genai/llama): a smoke test

The model: by default SmolLM2-135M's dims (a Llama: hidden 576, 30 layers, 9 heads / 3 KV heads,
vocab 49152) with random weights, made by onnxruntime-genai's builder (`-p int4 -e cpu`:
MatMulNBits blocked-32 at accuracy_level 4, GroupQueryAttention, ...) through
test/models/make_genai_models.py on the first run, into CACHE (needs torch, transformers,
tokenizers and onnxruntime-genai; see that script), or any builder folder given as --model.

Routes, each in its own process (one runtime's threads never share the cores with another's), on
the same prompt (--prompt-tokens ids), greedy, --new-tokens tokens; --rounds rounds, in each a
fresh process per route runs a warm-up then one timed decoding, the routes interleaved:
- iree+dq: `dequant.iree.compile_onnx` (compiled once, before), run by IREE's runtime (local-task,
  all cores) through `dequant.generate.greedy`: the KV cache stays in IREE's buffers;
- ort: onnxruntime's default session (all optimizations; MatMulNBits at the model's accuracy_level
  4 quantizes activations to int8: approximate), the same loop (plain `run`, numpy in and out);
- ort no-spin: the same with its pool's threads sleeping between calls
  (`session.intra_op.allow_spinning` 0): on a loaded machine the default's spinning threads
  compete with the work (72.8 against 32.1 ms a token at load 11 on 2 cores);
- ort exact: onnxruntime with every MatMulNBits at accuracy_level 0 and no graph optimizations
  (the graph as written): the reference of the tokens;
- genai: onnxruntime-genai's own generator (greedy; its KV buffer shared between past and
  present), when installed. Its prefill is `append_tokens` plus the first `generate_next_token`.
Prefill: the prompt's call up to its first token (median over rounds). Decode: the median time of
one later call (one token with the KV cache). Writes <out>/llm-<date>-<HHMM>.md and .json, naming
the CPU and its AVX-512 / VNNI flags (lscpu).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import report

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MAKE = os.path.join(ROOT, "test", "models", "make_genai_models.py")
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "dequant", "genai")
ROUTES = ["iree+dq", "ort", "ort no-spin", "ort exact", "genai"]
GOAL = 1.25  # iree+dq within this factor of ort, prefill and decode (issue 42)


def bench_model(name: str = "smollm2") -> str:
    """The benchmark model's folder in CACHE, made by the builder on the first run."""
    folder = os.path.join(CACHE, name)
    if not os.path.exists(os.path.join(folder, "genai_config.json")):
        print(f"making the benchmark model {name} into {folder} (onnxruntime-genai's builder; minutes)", file=sys.stderr)
        run = subprocess.run([sys.executable, MAKE, "--bench", name, "-o", folder])
        if run.returncode != 0:
            sys.exit(f"cannot make the benchmark model: {MAKE} needs torch (pip install torch==2.13.0, a CPU wheel), "
                     "transformers, tokenizers and onnxruntime-genai")  # fmt: skip
    return folder


def exact_folder(folder: str, tmp: str) -> str:
    """A copy of the model folder with every MatMulNBits at accuracy_level 0."""
    from dequant import check

    os.makedirs(tmp, exist_ok=True)
    for f in os.listdir(folder):
        if f.endswith((".json", ".txt", ".model")):
            shutil.copy(os.path.join(folder, f), os.path.join(tmp, f))
    check.exact_model(os.path.join(folder, "model.onnx"), tmp)
    return tmp


def run_route(route: str, folder: str, vmfb: str, prompt: list, new: int, rounds: int) -> dict:
    """In this process: `rounds` timed greedy runs of one route (after a warm-up)."""
    from dequant import generate

    model = generate.GenaiModel.load(folder)
    prefill, decode, tokens = [], [], None
    if route == "genai":
        import onnxruntime_genai as og

        gm = og.Model(folder)
        for r in range(rounds + 1):
            params = og.GeneratorParams(gm)
            params.set_search_options(do_sample=False, max_length=len(prompt) + new)
            g = og.Generator(gm, params)
            t = time.perf_counter()
            g.append_tokens(prompt)
            g.generate_next_token()
            times, out = [time.perf_counter() - t], [int(g.get_next_tokens()[0])]
            while not g.is_done() and len(out) < new:
                t = time.perf_counter()
                g.generate_next_token()
                times.append(time.perf_counter() - t)
                out.append(int(g.get_next_tokens()[0]))
            if r:
                prefill.append(times[0])
                decode += times[1:]
            tokens = out
        return {"prefill_s": prefill, "decode_s": decode, "tokens": tokens}
    if route == "iree+dq":
        with open(vmfb, "rb") as f:
            step = generate.iree_step(model, f.read())
    else:
        import onnxruntime as ort

        so = ort.SessionOptions()
        if route == "ort exact":
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if route == "ort no-spin":
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        step = generate.ort_step(model, ort.InferenceSession(model.path, so, providers=["CPUExecutionProvider"]))
    for r in range(rounds + 1):
        out = generate.greedy(model, step, prompt, new, stop_at_eos=False)
        if r:
            prefill.append(out.prefill_s)
            decode += out.decode_s
        tokens = out.tokens
    return {"prefill_s": prefill, "decode_s": decode, "tokens": tokens}


def child(route: str, folder: str, vmfb: str, prompt: list, new: int, rounds: int) -> dict:
    """run_route in a child process: its result, or {"failed": the first line of its error}."""
    args = json.dumps([route, folder, vmfb, prompt, new, rounds])
    code = f"import json, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); import llm; print(json.dumps(llm.run_route(*json.loads(sys.argv[1]))))"
    run = subprocess.run([sys.executable, "-c", code, args], capture_output=True, text=True)
    if run.returncode != 0:
        lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
        return {"failed": lines[-1][:200] if lines else f"exit {run.returncode}"}
    return json.loads(run.stdout.splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="a builder's model folder (default: SmolLM2-135M's dims, made on the first run)")
    p.add_argument("--quick", action="store_true", help="the committed tiny Llama, few tokens: a smoke test of every route")
    p.add_argument("--prompt-tokens", type=int, default=None)
    p.add_argument("--new-tokens", type=int, default=None)
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--routes", nargs="*", default=ROUTES, choices=ROUTES)
    p.add_argument("--vmfb", default=None, help="the iree+dq module, compiled already (default: compiled, cached beside the model)")
    p.add_argument("--out", default=None, help="directory for llm-<date>-<HHMM>.md/.json")
    p.add_argument("iree_args", nargs="*", help="more iree-compile flags for iree+dq (after --)")
    args = p.parse_args(argv)
    folder = os.path.join(ROOT, "test", "models", "genai", "llama") if args.quick else (args.model or bench_model())
    n_prompt, new, rounds = args.prompt_tokens or (8 if args.quick else 64), args.new_tokens or (8 if args.quick else 32), args.rounds or (1 if args.quick else 3)

    from dequant import generate

    model = generate.GenaiModel.load(folder)
    prompt = [int(i) for i in np.random.default_rng(0).integers(3, model.vocab_size, n_prompt)]
    results, notes, load = {}, [], os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        vmfb = os.path.join(tmp, "model.vmfb")
        if "iree+dq" in args.routes:
            t = time.perf_counter()
            try:  # cached beside the benchmark model; the committed model's folder stays clean
                extra = {"extra_args": tuple(args.iree_args)} if args.iree_args else {}
                data = generate.cached_vmfb(model.path, args.vmfb or (vmfb if args.quick else None), **extra)
                with open(vmfb, "wb") as f:
                    f.write(data)
                notes.append(f"iree+dq compile (or cache load): {time.perf_counter() - t:.1f} s")
            except Exception as e:  # the stage's error: reported as the route's
                results["iree+dq"] = {"failed": str(e).splitlines()[0][:200]}
        exact = exact_folder(folder, os.path.join(tmp, "exact")) if "ort exact" in args.routes else None
        if "genai" in args.routes and importlib.util.find_spec("onnxruntime_genai") is None:
            results["genai"] = {"failed": "onnxruntime-genai is not installed"}
        # Round by round, each route in a fresh process per round: a machine whose load changes
        # during the run slows every route alike.
        raw = {}
        for _ in range(rounds):
            for route in args.routes:
                if route in results:
                    continue
                got = child(route, exact if route == "ort exact" else folder, vmfb, prompt, new, 1)
                if "failed" in got:
                    results[route] = got
                    continue
                r = raw.setdefault(route, {"prefill_s": [], "decode_s": [], "tokens": got["tokens"]})
                r["prefill_s"] += got["prefill_s"]
                r["decode_s"] += got["decode_s"]
        for route, r in raw.items():
            if route not in results:
                results[route] = {"prefill_ms": statistics.median(r["prefill_s"]) * 1e3,
                                  "decode_ms": statistics.median(r["decode_s"]) * 1e3, "tokens": r["tokens"]}  # fmt: skip
            print(f"{route}: {results[route]}", file=sys.stderr, flush=True)

    ref = results.get("ort exact", {}).get("tokens")
    name, flags = report.cpu()
    lines = [f"# Whole int4 LLM, greedy decoding: IREE + dq and onnxruntime ({name}, {os.cpu_count()} cores)", "",
             f"Model: {os.path.basename(os.path.abspath(folder))} ({model.layers} layers, vocab {model.vocab_size}), made by "
             f"onnxruntime-genai's builder, int4; prompt {n_prompt} tokens, {new} new tokens, {rounds} timed rounds.",
             f"CPU flags: {flags}.", "",
             "| route | prefill ms | decode ms / token | tokens / s | / ort prefill | / ort decode | tokens = ort exact |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    ort_res = results.get("ort", {})
    for route in args.routes:
        r = results[route]
        if "failed" in r:
            lines.append(f"| {route} | {r['failed']} | | | | | |")
            continue
        vs = [f"{r[k] / ort_res[k]:.2f}x" if k in ort_res else "-" for k in ("prefill_ms", "decode_ms")]
        first = next((i for i, (a, b) in enumerate(zip(r["tokens"], ref or [])) if a != b), None)
        same = "-" if ref is None else "yes" if first is None else f"no, from token {first}"
        lines.append(f"| {route} | {r['prefill_ms']:.2f} | {r['decode_ms']:.2f} | {1e3 / r['decode_ms']:.1f} | {vs[0]} | {vs[1]} | {same} |")
    notes.append(f"load average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores")
    if args.vmfb:
        notes.append(f"iree+dq: the module given by --vmfb ({args.vmfb})")
    lines += ["", *(f"- {n}" for n in notes), f"- goal: iree+dq within {GOAL}x of ort on prefill and decode (issue 42)"]
    print("\n".join(lines))
    if args.out:
        data = {"model": folder, "prompt_tokens": n_prompt, "new_tokens": new, "rounds": rounds, "results": results}
        report.write(args.out, "llm", lines, data, minute=True)
    return 1 if "failed" in results.get("iree+dq", {}) else 0


if __name__ == "__main__":
    sys.exit(main())
