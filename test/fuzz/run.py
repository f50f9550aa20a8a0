"""Command line for fuzzing campaigns (CI runs short ones through test_fuzz.py).

    python test/fuzz/run.py --kind ops|wide|opt|import|stage|all [--seed S] (--seconds T | --cases N) [--start I]
    python test/fuzz/run.py --repro ops:S:I [--save DIR]      # rerun one case verbosely
    python test/fuzz                                           # the same (test/fuzz/__main__.py)

DEQUANT_FUZZ_CPU=haswell (an LLVM CPU name) makes the stage fuzzer compile for that CPU instead of
the host: an AVX2 host's routes, on any host that runs AVX2 code.

(`python -m test.fuzz` cannot work: `test` is the standard library's regression-test package.)

Each fuzzer runs its cases in one child process at a time (fuzz_harness.py) and prints its count of
cases, the count per case class, and every distinct finding with the ids of the cases that
showed it. `--json FILE` also writes the reports as JSON. The exit status is 1 if there was a
finding. `--repro` prints the case and runs it in this process: the ops fuzzer prints what the
rules say and what the call did (`--save DIR`: the arrays and a standalone repro.py); the tool
fuzzers write the input file(s) to DIR (default: a temporary directory), print the command
line and run the real console script on it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

sys.path[:0] = [p for p in (os.path.dirname(os.path.abspath(__file__)),) if p not in sys.path]
import fuzz_harness as harness  # noqa: E402

DEFAULT_SEED = 20240917


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python test/fuzz/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--kind", choices=[*harness.KINDS, "all"], default="all")
    p.add_argument("--seed", type=int, default=int(os.environ.get("DEQUANT_FUZZ_SEED", DEFAULT_SEED)))
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=float, help="time per fuzzer")
    budget.add_argument("--cases", type=int, help="cases per fuzzer")
    p.add_argument("--start", type=int, default=0, help="the first case index")
    p.add_argument("--timeout", type=float, default=harness.DEFAULT_TIMEOUT, help="seconds without progress: a hang")
    p.add_argument("--memory-mb", type=int, default=harness.DEFAULT_MEMORY_MB, help="the worker's address-space limit (0: none)")
    p.add_argument("--json", help="write the reports (with every finding) to this file")
    p.add_argument("--keep", help="keep the work files (results.jsonl, per-case output) in this directory")
    p.add_argument("--repro", metavar="ID", help="rerun case ID (kind:seed:index) verbosely")
    p.add_argument("--save", metavar="DIR", help="with --repro: write the case's inputs to DIR")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)

    if args.repro:
        kind, seed, index = harness.parse_id(args.repro)
        fuzzer = harness.fuzzer_class(kind)(args.save or "")
        return fuzzer.repro(seed, index, save=args.save, verbose=True)

    if args.seconds is None and args.cases is None:
        args.seconds = 60.0
    kinds = list(harness.KINDS) if args.kind == "all" else [args.kind]
    reports = []
    for kind in kinds:
        keep = os.path.join(args.keep, kind) if args.keep else None
        log = None if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
        report = harness.campaign(kind, args.seed, seconds=args.seconds, cases=args.cases, start=args.start,
                                  timeout=args.timeout, memory_mb=args.memory_mb, log=log, keep=keep)  # fmt: skip
        print(report.summary(limit=1000), flush=True)
        reports.append(report)
    total = sum(r.cases for r in reports)
    found = sum(len(r.distinct()) for r in reports)
    print(f"total: {total} cases, {found} distinct findings")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([dataclasses.asdict(r) for r in reports], f, indent=1)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
