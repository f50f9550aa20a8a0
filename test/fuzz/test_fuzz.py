"""The fuzzers under a fixed budget, as CI runs them (longer campaigns: run.py).

- DEQUANT_FUZZ_SECONDS: time per fuzzer (default 8: a smoke of each fuzzer, start-up
  included, that finds what a regression breaks at once; CI, at most 15 minutes on a 2-core
  host and near it, gives the four fuzzers about 35 s of one worker's time, and the campaigns of
  run.py find what a longer budget would);
- DEQUANT_FUZZ_STAGE_SECONDS: the stage fuzzer's time (default 12: its cases run IREE's tools in
  child processes, 0.1 s for a torch-form text to about 10 s for a compiled and run model);
- DEQUANT_FUZZ_WIDE_CASES: the count of `wide` cases (ONNX blocks wider than the data, of odd
  vector counts or prime, mostly bf16, half through `_nt`; default 24, about 10 s: a count, not a
  time, so that every run draws them);
- DEQUANT_FUZZ_SEED: the campaign's seed (default fixed, so that CI is reproducible: the same
  seed runs the same cases, from index 0, as many as the time allows).

Each test prints its count of cases (and the index range) to the terminal, even under `-q`, and
fails with the list of distinct findings: case ids (`python test/fuzz/run.py --repro ID`
reruns one) and descriptions. The harness itself is tested first on planted crashes and hangs.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path[:0] = [p for p in (os.path.dirname(os.path.abspath(__file__)),) if p not in sys.path]
import fuzz_harness as harness  # noqa: E402
from requires import iree_installed  # noqa: E402

SECONDS = float(os.environ.get("DEQUANT_FUZZ_SECONDS", "8"))
SEED = int(os.environ.get("DEQUANT_FUZZ_SEED", "20240917"))
STAGE_SECONDS = float(os.environ.get("DEQUANT_FUZZ_STAGE_SECONDS", "12"))
WIDE_CASES = int(os.environ.get("DEQUANT_FUZZ_WIDE_CASES", "24"))




def _show(capsys, text: str) -> None:
    with capsys.disabled():
        print("\n" + text, flush=True)


def test_harness_reports_planted_crashes_and_hangs():
    """Cases planted to pass, find, segfault, abort, exit and hang: each reported at its id."""
    report = harness.campaign("selftest", 1, cases=10, timeout=2)
    found = {f.id: f.what for f in report.findings}
    assert report.cases == 10, report.summary()
    assert set(found) == {f"selftest:1:{i}" for i in (3, 5, 6, 7, 8)}, report.summary()
    assert "SIGSEGV" in found["selftest:1:5"] and "SIGABRT" in found["selftest:1:6"]
    assert "status 3" in found["selftest:1:7"] and "hang" in found["selftest:1:8"]
    assert "native-looking message of case 5" in next(f.detail for f in report.findings if f.id == "selftest:1:5")


def test_cases_are_a_function_of_seed_and_index():
    import ops_fuzz
    import tools_fuzz

    import stage_fuzz

    opt = tools_fuzz.OptFuzzer()
    corpus = stage_fuzz.stage_corpus()
    assert [(n, d) for n, d, _ in corpus] == [(n, d) for n, d, _ in stage_fuzz.stage_corpus()]
    for i in range(0, 400, 7):
        assert ops_fuzz.describe(ops_fuzz.make_case(SEED, i)) == ops_fuzz.describe(ops_fuzz.make_case(SEED, i))
        assert ops_fuzz.describe(ops_fuzz.make_wide_case(SEED, i)) == ops_fuzz.describe(ops_fuzz.make_wide_case(SEED, i))
        assert opt.make(SEED, i) == opt.make(SEED, i)
    assert ops_fuzz.describe(ops_fuzz.make_case(SEED, 1)) != ops_fuzz.describe(ops_fuzz.make_case(SEED + 1, 1))


@pytest.mark.parametrize("kind", ["ops", "wide", "opt", "import", "stage"])
def test_fuzz(kind, capsys):
    if kind == "stage" and not iree_installed():
        pytest.skip("IREE is not installed (pip install 'dequant[iree]'): the stage fuzzer runs its tools")
    if kind == "wide":
        report = harness.campaign(kind, SEED, cases=WIDE_CASES)
    else:
        report = harness.campaign(kind, SEED, seconds=STAGE_SECONDS if kind == "stage" else SECONDS)
    _show(capsys, f"fuzz {kind}: {report.cases} cases (seed {SEED}, indexes {report.first}..{report.next - 1}, "
                  f"{report.seconds:.0f} s), {len(report.distinct())} distinct findings")  # fmt: skip
    assert report.cases > 0, report.summary()
    if report.findings:
        pytest.fail("fuzzing found:\n" + report.summary(limit=50), pytrace=False)
