"""Benchmark: the dq stage's own time on a model's torch form against IREE's parse-and-print.

    python bench/stage.py [--sizes 10,100,1000] [--repeat 3] [--out DIR]

For each size (MB of weights): a chain of int4 MatMuls y = x @ W1 @ W2 ... (W [4096, 4096]
int4 blocked along K by 32 with f32 scales: 10.5 MB each; test/iree/iree_models.py's form), imported
once by `iree-import-onnx` and printed in generic form by `iree-opt` (the torch form the stage
reads). Then, interleaved round by round, each a child process reading the file and writing its
result to another:
- stage: `dequant-opt --allow-unregistered-dialect --torch-onnx-to-iree` (guard, parse, passes,
  weight repacking, print);
- iree-opt: `iree-opt --mlir-print-op-generic` (IREE's parse and print of the same text).
The median of `--repeat` rounds of each, and their ratio (the target: stage <= 2x iree-opt).
Writes <out>/stage-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D, BLOCK = 4096, 32
LAYER_MB = (D * D // 2 + D // BLOCK * D * 4) / 1e6


def model(path: str, layers: int) -> None:
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(layers):
        w = rng.integers(-8, 8, size=(D, D), dtype=np.int8).astype(ml_dtypes.int4)
        s = (rng.random((D // BLOCK, D), dtype=np.float32) * 0.01 + 0.001).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(s, f"s{i}")]
        nodes += [helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}"], [f"wf{i}"], axis=0, block_size=BLOCK),
                  helper.make_node("MatMul", [prev, f"wf{i}"], [f"h{i}"])]  # fmt: skip
        prev = f"h{i}"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", D])
    y = helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["M", D])
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, path)


def tool(module: str, *args: str) -> list:
    return [sys.executable, "-m", module, *args]


def timed(argv: list) -> float:
    began = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if run.returncode:
        sys.exit(f"{' '.join(argv[:4])} failed: {run.stderr[-2000:]}")
    return elapsed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10,100,1000", help="MB of weights, comma-separated")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = p.parse_args(argv)
    opt = "iree.compiler.tools.scripts.iree_opt"
    dequant_opt = shutil.which("dequant-opt")
    stage = [dequant_opt] if dequant_opt else tool("dequant.cli")
    rows = []
    for mb in (float(s) for s in args.sizes.split(",")):
        layers = max(1, round(mb / LAYER_MB))
        with tempfile.TemporaryDirectory() as tmp:
            onnx_path, imported, torch = (os.path.join(tmp, n) for n in ("m.onnx", "import.mlir", "torch.mlir"))
            model(onnx_path, layers)
            subprocess.run(tool("iree.compiler.tools.import_onnx", onnx_path, "-o", imported), check=True)
            subprocess.run(tool(opt, "--mlir-print-op-generic", imported, "-o", torch), check=True)
            os.remove(imported)
            text_mb = os.path.getsize(torch) / 1e6
            times = {"stage": [], "iree-opt": []}
            for _ in range(args.repeat):
                times["stage"].append(timed([*stage, "--allow-unregistered-dialect", "--torch-onnx-to-iree", torch, "-o", os.path.join(tmp, "s.mlir")]))
                times["iree-opt"].append(timed(tool(opt, "--mlir-print-op-generic", torch, "-o", os.path.join(tmp, "o.mlir"))))
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((layers * LAYER_MB, layers, text_mb, med["stage"], med["iree-opt"], med["stage"] / med["iree-opt"]))
            print(f"{rows[-1][0]:.0f} MB of weights ({layers} layers, {text_mb:.0f} MB of text): stage {med['stage']:.2f} s, "
                  f"iree-opt {med['iree-opt']:.2f} s, ratio {rows[-1][5]:.2f}", flush=True)  # fmt: skip
    today = datetime.date.today().isoformat()
    lines = [f"# The dq stage's time against iree-opt's parse and print ({today})", "",
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; `python bench/stage.py --sizes {args.sizes} "
             f"--repeat {args.repeat}`: medians of {args.repeat} interleaved rounds, each a child process (start-up included).", "",
             "| weights (MB) | MatMuls | torch form (MB) | stage (s) | iree-opt round trip (s) | stage / iree-opt |",
             "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    lines += [f"| {w:.0f} | {n} | {t:.0f} | {s:.2f} | {o:.2f} | {r:.2f} |" for w, n, t, s, o, r in rows]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"stage-{today}.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
