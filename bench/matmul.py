"""Benchmark: a weight-only int4 MatMul model through IREE + dq against the routes a user would
pick instead.

    python bench/matmul.py [--quick] [--out DIR]

The model: y = x @ DequantizeLinear(w int4 [K, N] blocked along K, block 32, f32 scales), x f32
[M, K], opset 21 (test/iree/iree_models.py builds it). For M = 1 and 16, K = 4096, N = 4096 and
11008 (`--quick`: K = N = 1024), in one process, interleaved round by round, the median of the
timed calls (each after SETTLE_S idle, one untimed call and a read of FLUSH: the weights out of
cache, no other route's threads spinning):
- iree+dq: `dequant.iree.compile_onnx` (iree-import-onnx, dq's torch-onnx-to-iree, iree-compile
  for the host CPU), run by IREE's runtime (local-task: all cores);
- ort default: onnxruntime's default session on the same file (it fuses DequantizeLinear +
  MatMul into MatMulNBits and quantizes the activations: approximate);
- ort exact: onnxruntime with graph optimizations disabled (the two ops as written);
- dq+numpy: `dequant.ops.onnx_dequantize_linear` then numpy's matmul (unfused).
Each route's output is compared with `onnx.reference` before timing; the max relative error is
reported (ort default's is its approximation), and a route other than ort default off by more
than f32 rounding (EXACT) stops the benchmark with status 1. Writes <out>/matmul-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "iree"))
import iree_models  # noqa: E402
import report  # noqa: E402  (bench/, this script's folder)

from dequant import check  # noqa: E402
from dequant import iree as stage  # noqa: E402
from dequant import ops  # noqa: E402

ROUTES = ["iree+dq", "ort default", "ort exact", "dq+numpy"]
EXACT = 1e-5  # max error relative to the output's magnitude of a route computing the model as written


def routes(path: str, vmfb: bytes) -> dict:
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    f = ctx.modules.module["g"]
    default = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    exact = check.onnxruntime_session(path)
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    w, s = inits["w"], inits["s"]
    return {
        "iree+dq": lambda x: np.asarray(f(x)),
        "ort default": lambda x: default.run(None, {"x": x})[0],
        "ort exact": lambda x: exact.run(None, {"x": x})[0],
        "dq+numpy": lambda x: x @ ops.onnx_dequantize_linear(w, s, axis=0, block_size=32),
    }


# Idle time before each route's turn: onnxruntime's and numpy's BLAS pool threads spin after a
# call, and a route called right after them shared the two cores with them (IREE + dq at M = 1,
# K = N = 1024: 2.3 ms right after numpy's matmul, 0.3 ms after a pause). After the pause each
# route runs once untimed (its own threads awake), then FLUSH bytes are read, so the timed call
# finds its weights out of cache, as a model's layers would.
SETTLE_S = 0.02
FLUSH = np.ones(64 << 20, np.uint8)  # twice this machine's 32 MiB L3


def timed(fns: dict, x: np.ndarray, rounds: int) -> dict:
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            time.sleep(SETTLE_S)
            fn(x)
            FLUSH.sum(dtype=np.uint64)
            t = time.perf_counter()
            fn(x)
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=None, help="where to write matmul-<date>.md/.json (default: a temporary directory)")
    args = p.parse_args(argv)
    shapes = [(1024, 1024)] if args.quick else [(4096, 4096), (4096, 11008)]
    out = args.out or tempfile.mkdtemp(prefix="dequant-matmul-")
    os.makedirs(out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, n in shapes:
            path = iree_models.int4_blocked_matmul(os.path.join(tmp, f"m{k}x{n}.onnx"), k, n, 32)
            t = time.perf_counter()
            vmfb = stage.compile_onnx(path)
            compile_s = time.perf_counter() - t
            fns = routes(path, vmfb)
            ref = ReferenceEvaluator(path)
            for m in (1, 16):
                x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
                want = ref.run(None, {"x": x})[0]
                errors = {r: float(np.abs(fn(x) - want).max() / np.abs(want).max()) for r, fn in fns.items()}
                wrong = [r for r in ROUTES if r != "ort default" and errors[r] > EXACT]
                if wrong:  # only the approximate route may differ beyond f32 rounding
                    print(f"M={m} K={k} N={n}: {', '.join(wrong)} differ from onnx.reference: {errors}", file=sys.stderr)
                    return 1
                ms = timed(fns, x, 5 if args.quick else 20)
                rows.append({"M": m, "K": k, "N": n, "ms": ms, "rel_error": errors, "iree_compile_s": compile_s})
                print(f"M={m} K={k} N={n}: " + ", ".join(f"{r} {ms[r]:.3f} ms" for r in ROUTES), flush=True)
    lines = [
        f"# int4 blocked-32 MatMul: IREE + dq and peers ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)",
        "",
        report.cpu_line(),
        "",
        "Median ms per call (all cores); in brackets, the max error relative to the output's magnitude vs onnx.reference.",
        "",
        "| M | K | N | " + " | ".join(ROUTES) + " | unfused / iree+dq | ort exact / iree+dq | iree+dq / ort default |",
        "|---" * (3 + len(ROUTES) + 3) + "|",
    ]
    for r in rows:
        ms, e = r["ms"], r["rel_error"]
        cells = " | ".join(f"{ms[k]:.3f} ({e[k]:.1e})" for k in ROUTES)
        ratios = f"{ms['dq+numpy'] / ms['iree+dq']:.2f}x | {ms['ort exact'] / ms['iree+dq']:.2f}x | {ms['iree+dq'] / ms['ort default']:.2f}x"
        lines.append(f"| {r['M']} | {r['K']} | {r['N']} | {cells} | {ratios} |")
    report.write(out, "matmul", lines, rows)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
