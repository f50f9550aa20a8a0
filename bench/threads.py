"""Thread policies side by side, in one process: the runtime's against candidates.

    python bench/threads.py [--sizes 1M,4M,16M] [--cases a,b] [--rounds 10] [--out FILE]

Each policy is its own `dequant.runtime.Runtime` (its own kernels, plans and workers) and every
policy's calls of a case and size are timed in interleaved rounds (bench.interleaved), as a user
makes them: the unbound call with `out=` and a bound call in a loop. Policies:
- `static`: the default runtime (a thread per `MIN_PARALLEL` bytes moved; workers that spin for
  100 us after a job);
- `static_sleep`: the same split, workers that sleep after each job (`spin_seconds = 0`);
- `one`: one thread.
A candidate is added as another entry of `policies()`. Prints one line per case, size and call
with each policy's median (us) and its ratio to `one`, and writes them as JSON to --out.
bench/results/threads-2026-11-28.txt is its output from before the static rule, with the
runtime of that time (`timed`: each plan's split chosen by timing) beside it
(docs/performance.md, "Thread policy").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

from dequant import ops  # noqa: E402
from dequant.runtime import Runtime  # noqa: E402

CASES = ["onnx_i8_per_tensor", "onnx_u8_per_axis", "onnx_i4_block32_packed", "onnx_i16_per_axis",
         "onnx_i8_per_axis_bf16", "onednn_u8_per_channel", "pmx_int4x4_g128_zp"]  # fmt: skip


def policies() -> dict:
    sleep = Runtime()
    sleep.pool.spin_seconds = 0
    return {"static": Runtime(), "static_sleep": sleep, "one": Runtime(1)}


def _size(text: str) -> int:
    return int(text[:-1]) << (20 if text.endswith("M") else 10) if text[-1] in "MK" else int(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1M,4M,16M")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    known = {c.name: c for c in bench.cases()}
    missing = [c for c in args.cases.split(",") if c not in known]
    if missing:
        p.error(f"unknown cases {missing}; known: {sorted(known)}")
    runtimes = policies()
    budget = bench.Budget(seconds=0.15, min_reps=20, max_reps=2000, rounds=args.rounds)
    rng = np.random.default_rng(0)
    rows = []
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {bench._cpu()}, load {os.getloadavg()[0]:.1f}; "
          f"medians in us, (ratio to one thread)", flush=True)  # fmt: skip
    for name in args.cases.split(","):
        case = known[name]
        for n in map(_size, args.sizes.split(",")):
            a = case.make(rng, n // bench.COLS, bench.COLS)
            mine = case.prepare(a)
            out = np.empty(case.shape(n // bench.COLS, bench.COLS), case.out_dtype)
            fn, operands = case._call(mine)
            runners = {}
            for policy, rt in runtimes.items():
                f = ops.function(fn.opdef.api, rt)
                runners[f"{policy}"] = (lambda: None, lambda f=f: f(*operands, out=out, **case.attrs))
                bound = f.bind(*operands, out=out, **case.attrs)
                runners[f"{policy}_bound"] = (lambda: None, bound)
            stats = bench.interleaved(runners, budget)
            for call in ("", "_bound"):
                one = stats["one" + call]["median"]
                cells = {policy: stats[policy + call]["median"] for policy in runtimes}
                rows.append({"case": name, "elements": n, "call": call.strip("_") or "unbound", "median_s": cells,
                             "min_s": {policy: stats[policy + call]["min"] for policy in runtimes}})  # fmt: skip
                print(f"{name:24s} {n >> 20:>3d}M {call.strip('_') or 'unbound':8s} "
                      + "  ".join(f"{policy} {t * 1e6:8.1f} ({t / one:4.2f})" for policy, t in cells.items()), flush=True)
            del a, mine, out, runners
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"load": os.getloadavg(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
