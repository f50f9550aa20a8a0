"""Any nesting depth of any construct ends in an `error:` line or a normal run, never a signal:
`dequant-opt` on texts nesting each construct MLIR's parser recurses on, 100,000 deep (three of
them also through the IREE stage's `--torch-onnx-to-iree`) (each a child process: a stack overflow kills
it). The depths that crashed before the guard counted angle brackets: 20,000 `tuple<`."""

from __future__ import annotations

import subprocess
import sys

import pytest

N = 100_000
TEXTS = {
    "regions": "func.func @f() {" + "scf.execute_region {" * N + "scf.yield" + "}" * N + "return }",
    "generic-regions": '"builtin.module"() ({' + '"test.op"() ({' * N + "}) : () -> ()" * N + "}) : () -> ()",
    "brackets": "func.func @f() { %c = arith.constant dense<" + "[" * N + "1" + "]" * N + "> : tensor<1xi32> return }",
    "tuple-types": "func.func @f(%x: " + "tuple<" * N + "i8" + ">" * N + ") { return }",
    "torch-types": "func.func @f(%x: !torch.vtensor<[2],si8>, %y: " + "tuple<" * N + "!torch.vtensor<[2],si8>" + ">" * N + ") { return }",
    "parentheses": "#m = affine_map<(d0) -> (" + "(" * N + "d0" + ")" * N + ")>\nfunc.func @f() attributes {m = #m} { return }",
    "negations": "#m = affine_map<(d0) -> (" + "-" * N + "d0)>\nfunc.func @f() attributes {m = #m} { return }",
    "dictionaries": "func.func @f() attributes {a = " + "{b = " * N + "1" + "}" * N + "} { return }",
    "arrays": "func.func @f() attributes {a = " + "[" * N + "1" + "]" * N + "} { return }",
    "locations": "func.func @f() { return } loc(" + "callsite(" * N + '"a"' + ' at "b")' * N + ")",
    "unclosed": "func.func @f() {" + "(" * N,
}


STAGE = ["--allow-unregistered-dialect", "--torch-onnx-to-iree"]
CASES = [(name, []) for name in TEXTS] + [("torch-types", STAGE), ("negations", STAGE), ("generic-regions", STAGE)]


@pytest.mark.parametrize("name, flags", CASES, ids=[f"{n}{'-stage' if f else ''}" for n, f in CASES])
def test_deep_nesting_is_an_error_or_a_run(tmp_path, name, flags):
    path = tmp_path / "deep.mlir"
    path.write_text(TEXTS[name])
    run = subprocess.run([sys.executable, "-m", "dequant.cli", str(path), "-o", str(tmp_path / "out.mlir"), *flags],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode in (0, 1), f"{name}: status {run.returncode}: {run.stderr[-500:]}"
    assert "Traceback" not in run.stderr
    if run.returncode:
        assert "error:" in run.stderr.splitlines()[0], run.stderr[:500]
