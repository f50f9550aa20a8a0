"""Any nesting depth of any construct ends in an `error:` line or a normal run, never a signal:
`dequant-opt` on texts nesting each construct MLIR's parser recurses on, 100,000 deep (three of
them also through the IREE stage's `--torch-onnx-to-iree`) (each a child process: a stack overflow kills
it). The depths that crashed before the guard counted angle brackets: 20,000 `tuple<`. And
`guards.nesting` against a reading of its rules one character at a time."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from dequant import guards

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


def reference_depth(text: str) -> int:
    """The nesting `guards.nesting` documents, one character at a time: `{`, `[`, `(`, `<` open
    and `}`, `]`, `)`, `>` close (not the `>` of `->` or `>=`) outside strings and comments; a
    string runs from a quote not escaped by an odd run of backslashes to the next such quote, a
    comment from `//`, both at most to the line's end; or the longest run of minus signs outside
    them, whitespace between."""
    deepest = depth = run = backslashes = 0
    state = "code"  # or "string", "comment"
    for i, c in enumerate(text):
        if c == "-" and state == "code":
            run += 1
            deepest = max(deepest, run)
        elif c not in " \t\r\n":
            run = 0
        if c == "\n":
            state = "code"
        elif state == "comment":
            pass
        elif c == '"' and backslashes % 2 == 0:
            state = "string" if state == "code" else "code"
        elif state == "code":
            if c == "/" and text[i + 1 : i + 2] == "/":
                state = "comment"
            elif c in "{[(<":
                depth += 1
                deepest = max(deepest, depth)
            elif c in "}])" or (c == ">" and text[i - 1 : i] != "-" and text[i + 1 : i + 2] != "="):
                depth -= 1
        backslashes = backslashes + 1 if c == "\\" else 0
    return deepest


def test_nesting_matches_a_reference(monkeypatch):
    """Random texts of the characters the guard reads, with hex strings `"0x...` (a model's
    weights, whose contents it skips when nothing before them on their line can make them
    something other than a string), read in chunks of several sizes: the same depth as the
    reference. The thresholds are lowered so that short strings and lines take the skipping path."""
    monkeypatch.setattr(guards, "_BLOB_MIN", 3)
    monkeypatch.setattr(guards, "_PREFIX_MAX", 10)
    atoms = ["{", "}", "[", "]", "(", ")", "<", ">", "-", "->", ">=", '"', "\\", "/", "//", "\n", " ", "\t", "\r", "a", "0", "=", '"0x']
    rng, skipped = random.Random(20261129), 0
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 80)))
        monkeypatch.setattr(guards, "_CHUNK", rng.choice([3, 7, 64, 1 << 22]))
        want = reference_depth(text)
        assert guards.nesting(text) == want, text
        assert guards.nesting(text.encode()) == want, text
        skipped += len(guards._plain_strings(text.encode()))
    assert skipped > 300  # the skipping path ran (485 times)
