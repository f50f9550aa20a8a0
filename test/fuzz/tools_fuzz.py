"""Mutation fuzzing of the two command-line tools, `dequant-opt` and `dequant-import-onnx`.

`OptFuzzer` (kind "opt"): inputs are the lit tests' MLIR files (test/**/*.mlir, not Output/ nor
fuzz/), each mutated 0-5 times by: bit flips, byte inserts and deletes, truncation, splices from
other files, line duplication/deletion/swaps, `// -----` markers added or removed, and token
swaps and replacements (element types, numbers, tensor dims, op names, attribute names and
values, strings, SSA names, `expected-*` markers) from pools of valid and invalid spellings.
Flags: the file's own RUN-line flags or a random mix of dq passes and pipelines
(`dequant.passes.PASSES`, `PIPELINES`), upstream passes (with options, and as `--pass-pipeline`
with nesting), `--split-input-file`, `--verify-diagnostics`, `--mlir-print-op-generic`,
`--mlir-print-debuginfo`, `--mlir-print-ir-after-all`, `--allow-unregistered-dialect`,
`--emit=object -o FILE`, `-o FILE`, and input through stdin.

`ImportFuzzer` (kind "import"): inputs are ONNX models built with onnx.helper (`import_corpus`):
DequantizeLinear nodes of every type each opset 10-25 allows, per-tensor, per-axis and blocked,
with initializers (small, and large enough for dense_resource), Constant nodes (value,
value_float, value_floats), graph inputs with symbolic dims, QuantizeLinear -> DequantizeLinear
chains, several nodes with odd/duplicate/empty names, other ops and domains, an If node with a
subgraph, external data, and the QDQ models of test_import_onnx.py (onnxruntime's
quantize_static of its float network). Each is mutated 0-3 times at the protobuf level (any
field: ints, enums, strings, bytes, repeated fields, sub-messages; and targeted: dims negative or
huge, data types, attribute types and values, raw_data truncated or extended, inputs removed or
renamed, names duplicated, opset and IR versions, external-data locations) or at the byte level
after serialization. When the import succeeds, its output is also read back by dequant-opt
(it must verify), and sometimes lowered with --dq-to-llvm.

Every case runs in-process (`dequant.cli.main(argv)`, `dequant.onnx_importer.main(argv)`) in the
worker, with file descriptors 1 and 2 captured. A case's finding, checked in this order:
an exception escaping main (a traceback in the real tool), a "Traceback" printed on stderr,
"internal error" on stderr, an exit status other than 0 or 1 (SystemExit included), exit 1
without an `error:` line, exit 0 with an `error:` line. The supervisor adds signals and hangs.

Reproduce: `python test/fuzz/run.py --repro opt:SEED:INDEX --save DIR` writes the input to DIR,
prints the command line and runs the real console script on it. A case id is reproducible for
the same checkout (the corpus is the repository's test files).
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np

sys.path[:0] = [p for p in (os.path.dirname(os.path.abspath(__file__)),) if p not in sys.path]
import fuzz_harness as harness  # noqa: E402

harness.ensure_path()

ERROR_LINE = re.compile(r"^(?:dequant-opt|dequant-import-onnx|dequant-iree|<unknown>:\d+|<stdin>(?::\d+){0,2}|\S+?(?::\d+){1,2}): error: ", re.M)


def pick(rng, items, p=None):
    return items[int(rng.choice(len(items), p=p))]


# --- running a tool in-process and judging the outcome ---------------------------------------------


@dataclasses.dataclass
class Outcome:
    status: int | None
    stdout: bytes
    stderr: bytes
    escaped: str = ""  # the traceback of an exception that escaped main

    @property
    def first_stderr_line(self) -> str:
        for line in self.stderr.decode("utf-8", "replace").splitlines():
            if line.strip():
                return line.strip()[:300]
        return ""


def run_main(main, argv: list, workdir: str, stdin: bytes | None = None) -> Outcome:
    """`main(argv)` with stdout/stderr captured at the file-descriptor level; SystemExit and
    escaping exceptions recorded as the real console script would end."""
    out_path, err_path = os.path.join(workdir, "case.out"), os.path.join(workdir, "case.err")
    status, escaped = None, ""
    with harness.captured(out_path, err_path, stdin=stdin):
        try:
            status = main(argv)
            status = 0 if status is None else status
        except SystemExit as e:
            code = e.code
            if code is None:
                status = 0
            elif isinstance(code, int):
                status = code
            else:
                print(code, file=sys.stderr)
                status = 1
        except BaseException:  # noqa: BLE001 - escaping main is the finding
            escaped = traceback.format_exc()
            status = 1
    with open(out_path, "rb") as f:
        stdout = f.read()
    with open(err_path, "rb") as f:
        stderr = f.read()
    return Outcome(status, stdout, stderr, escaped)


def judge(o: Outcome) -> str | None:
    """The finding of one run (module docstring), or None."""
    err = o.stderr.decode("utf-8", "replace")
    if o.escaped:
        last = o.escaped.strip().splitlines()
        where = next((l.strip() for l in reversed(last) if l.strip().startswith("File ")), "")
        where = re.sub(r'File ".*/([^/]+)", line \d+, in (\S+)', r"\1:\2", where)
        return f"traceback: {last[-1][:200]} (at {where})"
    if "Traceback (most recent call last)" in err:
        tail = [l for l in err.splitlines() if l.strip()][-1]
        return f"a traceback on stderr: {tail[:200]}"
    m = re.search(r"^.*internal error.*$", err, re.M)
    if m:
        return f"internal error: {m.group(0)[:200]}"
    if o.status not in (0, 1):
        return f"exit status {o.status} (first stderr line: {o.first_stderr_line[:150]})"
    if o.status == 1 and not ERROR_LINE.search(err):
        return f"exit status 1 without an error: line (first stderr line: {o.first_stderr_line[:150]!r})"
    if o.status == 0 and ERROR_LINE.search(err):
        return f"exit status 0 with an error: line: {ERROR_LINE.search(err).group(0)}{err[ERROR_LINE.search(err).end():].splitlines()[0][:150]}"
    return None


def _console(name: str, module: str) -> list:
    found = shutil.which(name)
    return [found] if found else [sys.executable, "-m", module]


def _rewrite(argv: list, old: str, new: str) -> list:
    return [a.replace(old, new) if isinstance(a, str) else a for a in argv]


# --- dequant-opt -----------------------------------------------------------------------------------

ELEMENT_TYPES = ["i2", "ui2", "i4", "ui4", "si4", "i8", "ui8", "si8", "i16", "ui16", "i32", "ui32", "si32", "i64", "i1",
                 "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f4E2M1FN", "f8E8M0FNU", "f6E2M3FN", "f16", "bf16",
                 "f32", "f64", "index", "complex<f32>", "tf32", "none"]  # fmt: skip
NUMBERS = ["0", "1", "-1", "2", "3", "4", "7", "8", "15", "16", "32", "127", "128", "255", "256", "-128", "2147483647",
           "2147483648", "-2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
           "-9223372036854775808", "18446744073709551616", "99999999999999999999999", "0x7FFF", "0x8000", "1.5", "-0.0",
           "1.0e+38", "3.4e39", "1.0e-45", "nan", "0.0"]  # fmt: skip
DIMS = ["?", "0", "1", "2", "3", "4", "5", "7", "8", "16", "33", "128", "1000000", "2147483648", "4611686018427387904"]
OP_NAMES = ['"dq.onnx_dequantize_linear"', '"dq.onednn_dynamic_dequantize"', '"dq.ngraph_dequantize"',
            '"dq.pmx_dequantize_linear"', '"dq.dequantize"', '"dq.unpack"', '"dq.nope"', '"arith.constant"',
            '"func.return"', '"tensor.empty"', '"quant.dcast"', '"linalg.generic"']  # fmt: skip
ATTR_NAMES = ["axis", "block_size", "output_dtype", "qtype", "group_shape", "axes", "type", "quant_data_type",
              "group_size", "quant_axis", "has_zeropoint", "float_zeropoint", "scale_map", "zero_point_map",
              "zero_point_mode", "unpack", "quant_method", "sym_visibility", "bogus"]  # fmt: skip
ATTR_VALUES = ["1 : i64", "0 : i64", "-1 : i64", "-2 : i64", "5 : i64", "9223372036854775807 : i64", "-9223372036854775808 : i64",
               "1 : i32", "1", "true", "false", "unit", '"int4"', '"int8"', '"per_group"', '"per_channel"', '"per_tensor"',
               '"add"', '"subtract"', '"int4x4"', '"none"', '""', "f16", "bf16", "f32", "f64", "i8", "f8E8M0FNU",
               "array<i64: 1, 2>", "array<i64: 0, 0>", "array<i64>", "array<i64: -1>", "array<i64: 1, 1, 1>",
               "array<i32: 1>", "[1, 2]", "dense<1> : tensor<2xi64>",
               "affine_map<(d0, d1) -> (d0, d1 floordiv 32)>", "affine_map<(d0, d1) -> (d0 floordiv 0, d1)>",
               "affine_map<(d0, d1) -> (d0 + 1, 0)>", "affine_map<(d0, d1) -> (d1)>", "affine_map<(d0, d1) -> (d0 mod 4, d1)>",
               "affine_map<(d0)[s0] -> (s0)>", "affine_map<(d0, d1) -> (0, 0)>", "affine_map<(d0, d1) -> (1, d1)>",
               "affine_map<(d0, d1) -> (d0 floordiv -2, d1)>", "{a = 1}", "@f", "#dq<x>"]  # fmt: skip
STRINGS = ['""', '"x"', '"per_tensor"', '"int4"', '"\\00"', '"\\ff"', '"' + "a" * 200 + '"', '"😀"', '"%0"', '"expected-error"']
TOKEN_CLASSES = {
    "type": (rb"(?<![\w.])(?:[su]?i\d+|bf16|f16|f32|f64|f8E\w+|f4E2M1FN|index)(?![\w])", ELEMENT_TYPES),
    "number": (rb"(?<![\w.%#@])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w])", NUMBERS),
    "dim": (rb"(?<=[<x])(?:\d+|\?)(?=x)", DIMS),
    "op": (rb'"(?:dq|arith|func|tensor|linalg|quant|scf|memref)\.\w+"', OP_NAMES),
    "attr-name": (rb"\b(?:" + b"|".join(a.encode() for a in ATTR_NAMES[:-2]) + rb")(?=\s*=)", ATTR_NAMES),
    "attr-value": (rb"(?<==\s)[^,{}\n]+?(?=\s*[,}])", ATTR_VALUES),
    "string": (rb'"[^"\n]{0,80}"', STRINGS),
    "ssa": (rb"%[\w]+", ["%0", "%x", "%arg0", "%arg9", "%s", "%undefined"]),
    "expected": (rb"expected-(?:error|remark|note|warning)", ["expected-error", "expected-remark", "expected-note", "expected-warning", "expected-nothing"]),
}
UPSTREAM = ["canonicalize", "cse", "symbol-dce", "inline", "sccp", "loop-invariant-code-motion", "lower-quant-ops",
            "convert-elementwise-to-linalg", "linalg-fuse-elementwise-ops", "one-shot-bufferize", "eliminate-empty-tensors",
            "convert-linalg-to-loops", "lower-affine", "convert-scf-to-cf", "canonicalize=max-iterations=2",
            "one-shot-bufferize=bufferize-function-boundaries", "cse{}"]  # fmt: skip
BOGUS_PASSES = ["dq-to-linalgg", "dq-normalize=foo=1", "canonicalise", "no-such-pass", "cse=", "dq-to-llvm{x}", "func.func(",
                "builtin.module(dq-to-linalg", "convert-linalg-to-loops=bogus=1"]  # fmt: skip
NEWLINE = b"\n"
INTERESTING_BYTES = b"{}()<>[]:,%@\"=#!^x?-0123456789 \n/\\\x00\xff\xc3"


def opt_corpus() -> list[tuple[str, bytes]]:
    """(path relative to the repository, contents) of every lit test input, sorted."""
    root = os.path.join(harness.REPO, "test")
    paths = []
    for path in glob.glob(os.path.join(root, "**", "*.mlir"), recursive=True):
        rel = os.path.relpath(path, harness.REPO)
        parts = rel.split(os.sep)
        if "Output" in parts or "fuzz" in parts:
            continue
        paths.append(rel)
    out = []
    for rel in sorted(paths):
        with open(os.path.join(harness.REPO, rel), "rb") as f:
            out.append((rel, f.read()))
    return out


def run_flags(text: bytes) -> list[list[str]]:
    """The dequant-opt flags of each RUN line of a lit test (%s, %t, redirections dropped)."""
    lines, current = [], ""
    for line in text.decode("utf-8", "replace").splitlines():
        m = re.match(r"\s*//\s*RUN:\s?(.*)$", line)
        if not m:
            continue
        current += m.group(1)
        if current.endswith("\\"):
            current = current[:-1]
            continue
        lines.append(current)
        current = ""
    flags = []
    for line in lines:
        for segment in line.split("|"):
            try:
                words = shlex.split(segment)
            except ValueError:
                continue
            if words and words[0] == "not":
                words = words[1:]
            if not words or words[0] != "dequant-opt":
                continue
            kept, skip = [], False
            for w in words[1:]:
                if skip:
                    skip = False
                    continue
                if w in ("-o", "--header"):
                    skip = True
                    continue
                if w.startswith("--") and "%" not in w:
                    kept.append(w)
            flags.append(kept)
    return flags


@dataclasses.dataclass
class OptCase:
    source: str
    data: bytes
    flags: list
    mutations: list
    stdin: bool = False
    output: str = ""  # "" stdout, "file", "object"

    def describe(self) -> str:
        how = " < stdin" if self.stdin else ""
        return f"{self.source}{how} flags={' '.join(self.flags) or '(none)'} mutations=[{'; '.join(self.mutations)}] ({len(self.data)} bytes)"


def mutate_bytes(rng, data: bytes, corpus: list) -> tuple[bytes, str]:
    """One mutation of MLIR text; (new data, what was done)."""
    kind = pick(rng, ["flip", "insert", "delete", "truncate", "splice", "dup-line", "del-line", "swap-lines",
                      "split-marker", "token", "token", "token", "token", "token-swap"])  # fmt: skip
    n = len(data)
    if kind == "flip" and n:
        i = int(rng.integers(n))
        b = bytearray(data)
        b[i] ^= 1 << int(rng.integers(8))
        return bytes(b), f"flip byte {i}"
    if kind == "insert":
        i = int(rng.integers(n + 1))
        ins = bytes([INTERESTING_BYTES[int(rng.integers(len(INTERESTING_BYTES)))] for _ in range(int(rng.integers(1, 4)))])
        return data[:i] + ins + data[i:], f"insert {ins!r} at {i}"
    if kind == "delete" and n:
        i = int(rng.integers(n))
        k = int(rng.integers(1, 16))
        return data[:i] + data[i + k :], f"delete {k} bytes at {i}"
    if kind == "truncate" and n:
        i = int(rng.integers(n))
        return data[:i], f"truncate at {i}"
    if kind == "splice":
        src, other = corpus[int(rng.integers(len(corpus)))]
        if other:
            a = int(rng.integers(len(other)))
            piece = other[a : a + int(rng.integers(1, 400))]
            i = int(rng.integers(n + 1))
            j = min(n, i + int(rng.integers(0, 200)))
            return data[:i] + piece + data[j:], f"splice {len(piece)} bytes of {os.path.basename(src)} at {i}"
    lines = data.split(b"\n")
    if kind == "dup-line":
        i = int(rng.integers(len(lines)))
        return b"\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :]), f"duplicate line {i + 1}"
    if kind == "del-line" and len(lines) > 1:
        i = int(rng.integers(len(lines)))
        return b"\n".join(lines[:i] + lines[i + 1 :]), f"delete line {i + 1}"
    if kind == "swap-lines" and len(lines) > 1:
        i, j = (int(v) for v in rng.integers(len(lines), size=2))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines), f"swap lines {i + 1} and {j + 1}"
    if kind == "split-marker":
        markers = [k for k, l in enumerate(lines) if l.strip() == b"// -----"]
        if markers and rng.random() < 0.5:
            k = markers[int(rng.integers(len(markers)))]
            return b"\n".join(lines[:k] + lines[k + 1 :]), f"remove the split marker of line {k + 1}"
        i = int(rng.integers(len(lines) + 1))
        return b"\n".join(lines[:i] + [b"// -----"] + lines[i:]), f"split marker at line {i + 1}"
    if kind == "token-swap":
        cls = pick(rng, list(TOKEN_CLASSES))
        found = list(re.finditer(TOKEN_CLASSES[cls][0], data))
        if len(found) >= 2:
            a, b = (found[int(i)] for i in rng.choice(len(found), size=2, replace=False))
            if a.start() > b.start():
                a, b = b, a
            if a.end() <= b.start():
                out = data[: a.start()] + b.group(0) + data[a.end() : b.start()] + a.group(0) + data[b.end() :]
                return out, f"swap {cls} {a.group(0)[:30]!r} and {b.group(0)[:30]!r}"
    # token replacement (also the fallback of the others)
    for _ in range(4):
        cls = pick(rng, list(TOKEN_CLASSES))
        pattern, pool = TOKEN_CLASSES[cls]
        found = list(re.finditer(pattern, data))
        if found:
            m = found[int(rng.integers(len(found)))]
            new = pick(rng, pool).encode()
            line = data.count(NEWLINE, 0, m.start()) + 1
            return data[: m.start()] + new + data[m.end() :], f"{cls} {m.group(0)[:30]!r} -> {new[:30]!r} at line {line}"
    return data + b"\n", "append a newline"


def random_flags(rng, passes: list, pipelines: list, has_split: bool) -> list:
    flags = []
    for _ in range(int(rng.choice([0, 1, 1, 2, 3]))):
        r = rng.random()
        if r < 0.55:
            flags.append("--" + pick(rng, passes))
        elif r < 0.65:
            flags.append("--" + pick(rng, pipelines))
        elif r < 0.95:
            flags.append("--" + pick(rng, UPSTREAM))
        else:
            flags.append("--" + pick(rng, BOGUS_PASSES))
    if flags and rng.random() < 0.2:  # as one --pass-pipeline, dq passes nested under func.func sometimes
        names = [f[2:] for f in flags]
        elements = [f"func.func({n})" if rng.random() < 0.3 and "=" not in n else n.replace("=", "{", 1) + ("}" if "=" in n else "") for n in names]
        flags = [f"--pass-pipeline=builtin.module({','.join(elements)})"]
    if has_split and rng.random() < 0.6:
        flags.append("--split-input-file")
    if rng.random() < 0.15:
        flags.append("--verify-diagnostics")
    for flag, p in (("--mlir-print-op-generic", 0.15), ("--mlir-print-debuginfo", 0.08), ("--mlir-print-ir-after-all", 0.04),
                    ("--allow-unregistered-dialect", 0.08)):  # fmt: skip
        if rng.random() < p:
            flags.append(flag)
    order = rng.permutation(len(flags))
    return [flags[int(i)] for i in order]


class OptFuzzer:
    """dequant-opt fuzzing in a worker (fuzz_harness.py)."""

    def __init__(self, workdir: str = ""):
        from dequant import cli
        from dequant.passes import PASSES, PIPELINES

        self.cli = cli
        self.workdir = workdir or tempfile.mkdtemp(prefix="dequant-fuzz-opt-")
        self.corpus = opt_corpus()
        self.passes, self.pipelines = sorted(PASSES), sorted(PIPELINES)

    def make(self, seed: int, index: int) -> OptCase:
        rng = np.random.default_rng([seed, index, 0x0B7])
        source, data = self.corpus[int(rng.integers(len(self.corpus)))]
        has_split = b"// -----" in data
        runs = run_flags(data)
        if runs and rng.random() < 0.45:
            flags = list(pick(rng, runs))
            if rng.random() < 0.3:
                flags += random_flags(rng, self.passes, self.pipelines, False)[:1]
        else:
            flags = random_flags(rng, self.passes, self.pipelines, has_split)
        mutations = []
        for _ in range(int(rng.choice([0, 1, 1, 2, 2, 3, 5]))):
            data, what = mutate_bytes(rng, data, self.corpus)
            mutations.append(what)
        case = OptCase(source, data, flags, mutations)
        r = rng.random()
        if r < 0.07 and "--split-input-file" not in flags:
            case.output = "object"
        elif r < 0.2:
            case.output = "file"
        case.stdin = rng.random() < 0.05
        return case

    def describe(self, seed: int, index: int) -> str:
        return self.make(seed, index).describe()

    def argv(self, case: OptCase, directory: str) -> list:
        path = os.path.join(directory, "input.mlir")
        argv = ["-" if case.stdin else path] + list(case.flags)
        if case.output == "object":
            argv += ["--emit=object", "-o", os.path.join(directory, "out.o")]
        elif case.output == "file":
            argv += ["-o", os.path.join(directory, "out.mlir")]
        return argv

    def run(self, seed: int, index: int) -> dict:
        case = self.make(seed, index)
        for name in ("out.o", "out.h", "out.mlir"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.workdir, name))
        with open(os.path.join(self.workdir, "input.mlir"), "wb") as f:
            f.write(case.data)
        o = run_main(self.cli.main, self.argv(case, self.workdir), self.workdir, stdin=case.data if case.stdin else None)
        finding = judge(o)
        record = {"class": f"exit-{o.status}", "finding": finding, "status": o.status, "stderr": o.first_stderr_line}
        if finding:
            record["detail"] = (o.escaped or o.stderr.decode("utf-8", "replace"))[-1500:]
        return record

    def repro(self, seed: int, index: int, save: str | None = None, verbose: bool = True) -> int:
        case = self.make(seed, index)
        directory = save or tempfile.mkdtemp(prefix="dequant-fuzz-repro-")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "input.mlir"), "wb") as f:
            f.write(case.data)
        argv = self.argv(case, directory)
        command = _console("dequant-opt", "dequant.cli") + argv
        print(f"case: {case.describe()}")
        print("command: " + " ".join(shlex.quote(a) for a in command) + (f" < {shlex.quote(os.path.join(directory, 'input.mlir'))}" if case.stdin else ""))
        run = subprocess.run(command, input=case.data if case.stdin else None, capture_output=True, timeout=600)
        o = Outcome(run.returncode, run.stdout, run.stderr)
        print(f"exit status: {run.returncode}\nstderr:\n{run.stderr.decode('utf-8', 'replace')[-3000:]}")
        finding = judge(o) or (f"killed by signal {-run.returncode}" if run.returncode < 0 else None)
        print(f"finding: {finding}" if finding else "no finding")
        return 1 if finding else 0


# --- dequant-import-onnx ---------------------------------------------------------------------------

# DequantizeLinear's T1 by the opset that introduced each type (docs/semantics.md#onnx-types-and-versions)
T1_SINCE = {"INT8": 10, "UINT8": 10, "INT32": 10, "FLOAT8E4M3FN": 19, "FLOAT8E4M3FNUZ": 19, "FLOAT8E5M2": 19,
            "FLOAT8E5M2FNUZ": 19, "INT16": 21, "UINT16": 21, "INT4": 21, "UINT4": 21, "FLOAT4E2M1": 23, "INT2": 25, "UINT2": 25}  # fmt: skip
T2_SINCE = {"FLOAT": 10, "FLOAT16": 19, "BFLOAT16": 19, "FLOAT8E8M0": 24}
OPSETS = [10, 11, 12, 13, 17, 18, 19, 20, 21, 22, 23, 24, 25]
INT_POOL = [0, 1, -1, 2, 3, 7, 10, 13, 16, 19, 21, 23, 24, 25, 26, 100, 1024, 1025, 2**31 - 1, -(2**31), 2**32, 2**40, 2**62, -(2**62), 2**63 - 1, -(2**63)]
STRING_POOL = ["", "x", "s", "z", "y", "w", "DequantizeLinear", "QuantizeLinear", "Constant", "com.microsoft", "ai.onnx", "a/b:c.d",
               "é", "1abc", "%0", "a" * 300, "weights.bin", "missing.bin", "../weights.bin", "/dev/null", "value", "axis",
               "block_size", "output_dtype", "location", "offset", "length"]  # fmt: skip
FLOAT_POOL = [0.0, -0.0, float("nan"), float("inf"), 1e-45, 3.4e38, -1.0, 0.25]


def _np_dtype(name: str):
    import ml_dtypes

    return {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16, "UINT16": np.uint16, "INT32": np.int32,
            "INT4": ml_dtypes.int4, "UINT4": ml_dtypes.uint4, "INT2": ml_dtypes.int2, "UINT2": ml_dtypes.uint2,
            "FLOAT8E4M3FN": ml_dtypes.float8_e4m3fn, "FLOAT8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
            "FLOAT8E5M2": ml_dtypes.float8_e5m2, "FLOAT8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
            "FLOAT4E2M1": ml_dtypes.float4_e2m1fn, "FLOAT": np.float32, "FLOAT16": np.float16,
            "BFLOAT16": ml_dtypes.bfloat16, "FLOAT8E8M0": ml_dtypes.float8_e8m0fnu}[name]  # fmt: skip


def _values(rng, type_name: str, shape, zero: bool = False) -> np.ndarray:
    import ml_dtypes

    dtype = np.dtype(_np_dtype(type_name))
    shape = tuple(shape)
    if zero:
        return np.zeros(shape, dtype)
    if type_name in ("FLOAT", "FLOAT16", "BFLOAT16"):
        return (rng.uniform(0.01, 2.0, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)
    if type_name == "FLOAT8E8M0":
        return rng.integers(120, 135, size=shape, dtype=np.uint8).view(dtype)
    if type_name.startswith("FLOAT"):
        return rng.integers(0, 16 if type_name == "FLOAT4E2M1" else 256, size=shape, dtype=np.uint8).view(dtype)
    info = ml_dtypes.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max), size=shape, endpoint=True).astype(dtype)


def import_corpus() -> list[tuple[str, bytes]]:
    """(name, serialized ModelProto) of the base models (deterministic, seed-independent)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(20240917)
    out = []

    def add(name, nodes, inputs, inits, opset, outputs=None, ir_version=None, extra_opsets=()):
        graph = helper.make_graph(nodes, name, inputs, outputs or [helper.make_empty_tensor_value_info(o) for n in nodes for o in n.output[:1]
                                                                     if n.op_type == "DequantizeLinear"], initializer=inits)  # fmt: skip
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), *extra_opsets],
                                  ir_version=ir_version or (7 if opset < 13 else 10 if opset < 23 else 11))  # fmt: skip
        out.append((name, model.SerializeToString()))

    def dq_node(name, inputs, **attrs):
        return helper.make_node("DequantizeLinear", inputs, [f"{name}_y"], name=name, **attrs)

    # one node per (opset, x type, scale type, granularity), initializers
    for opset in OPSETS:
        xs = [t for t, v in T1_SINCE.items() if v <= opset]
        ss = [t for t, v in T2_SINCE.items() if v <= opset]
        for k in range(3):
            xt, st = pick(rng, xs), pick(rng, ss)
            shape = [int(d) for d in rng.integers(1, 7, size=int(rng.integers(0, 4)))]
            gran = "per_tensor" if opset < 13 or not shape else pick(rng, ["per_tensor", "per_axis"] + (["blocked"] if opset >= 21 else []))
            attrs, s_shape = {}, pick(rng, [(), (1,)])
            if gran != "per_tensor":
                axis = int(rng.integers(-len(shape), len(shape)))
                attrs["axis"] = axis
                if gran == "per_axis":
                    s_shape = (shape[axis],)
                else:
                    b = int(rng.integers(1, 5))
                    attrs["block_size"] = b
                    s_shape = tuple(-(-d // b) if i == axis % len(shape) else d for i, d in enumerate(shape))
            if st == "FLOAT8E8M0" or (opset >= 23 and rng.random() < 0.3):
                attrs["output_dtype"] = getattr(TensorProto, pick(rng, ["FLOAT", "FLOAT16", "BFLOAT16"]))
            zero = xt in ("INT32",) or xt.startswith("FLOAT")
            inits = [numpy_helper.from_array(_values(rng, xt, shape), "x"), numpy_helper.from_array(_values(rng, st, s_shape), "s")]
            inputs = ["x", "s"]
            if rng.random() < 0.6:
                inits.append(numpy_helper.from_array(_values(rng, xt, s_shape, zero=zero), "z"))
                inputs.append("z")
            add(f"dq{opset}_{xt}_{st}_{gran}_{k}", [dq_node(f"dq{opset}.{k}", inputs, **attrs)], [], inits, opset)
    # graph inputs with symbolic dims, a scale argument, Constant nodes
    for opset in (13, 19, 21, 23, 25):
        x = helper.make_tensor_value_info("x", TensorProto.INT8, ["N", 4, "C"])
        s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])
        nodes = [helper.make_node("Constant", [], ["z"], name="zp", value=numpy_helper.from_array(np.arange(4, dtype=np.int8), "z")),
                 dq_node("dq_args", ["x", "s", "z"], axis=1)]  # fmt: skip
        add(f"graph_inputs_{opset}", nodes, [x, s], [], opset)
        nodes = [helper.make_node("Constant", [], ["s1"], value_float=0.25), helper.make_node("Constant", [], ["s4"], value_floats=[0.5, 1, 2, 4]),
                 helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(_values(rng, "UINT8", (3, 4)), "w")),
                 dq_node("c1", ["w", "s1"]), dq_node("c4", ["w", "s4"], axis=1)]  # fmt: skip
        add(f"constants_{opset}", nodes, [], [], opset)
    # QuantizeLinear -> DequantizeLinear (x typed by shape inference), other ops, odd and repeated names
    inits = [numpy_helper.from_array(np.float32(0.1), "qs"), numpy_helper.from_array(np.uint8(128), "qz"),
             numpy_helper.from_array(_values(rng, "INT4", (64, 40)), "big_w"),
             numpy_helper.from_array(_values(rng, "INT8", (40, 64)), "big_w8"),
             numpy_helper.from_array(_values(rng, "FLOAT", (40,)), "s40"), numpy_helper.from_array(_values(rng, "FLOAT", (64,)), "s64"),
             numpy_helper.from_array(_values(rng, "INT4", (40,)), "z40")]  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", ["a", "qs", "qz"], ["qa"], name="q/a"),
             helper.make_node("DequantizeLinear", ["qa", "qs", "qz"], ["da"], name="dq/a"),
             helper.make_node("Relu", ["da"], ["r"], name="relu"),
             helper.make_node("DequantizeLinear", ["big_w", "s40", "z40"], ["dw"], name="dq:w", axis=1),
             helper.make_node("DequantizeLinear", ["big_w8", "s64"], ["dw8"], name="dq:w", axis=-1),
             helper.make_node("DequantizeLinear", ["big_w8", "s64"], ["dw9"], name="", axis=1),
             helper.make_node("MatMul", ["r", "dw"], ["m"], name="1matmul"),
             helper.make_node("DequantizeLinear", ["big_w8", "s64"], ["ms"], name="ms", domain="com.microsoft")]  # fmt: skip
    add("qdq_chain", nodes, [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 64])], inits, 21,
        outputs=[helper.make_tensor_value_info("m", TensorProto.FLOAT, None)], extra_opsets=[helper.make_opsetid("com.microsoft", 1)])
    then = helper.make_graph([dq_node("inner", ["x", "s"])], "then", [], [helper.make_empty_tensor_value_info("inner_y")])
    nodes = [helper.make_node("If", ["cond"], ["o"], name="if", then_branch=then, else_branch=then), dq_node("outer", ["x", "s"])]
    add("if_subgraph", nodes, [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [numpy_helper.from_array(np.int8([1, 2]), "x"), numpy_helper.from_array(np.float32(2), "s")], 21)
    # the QDQ models of test_import_onnx.py: onnxruntime's quantize_static of its float network
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            out.extend(_quantized_models())
    except Exception as e:  # noqa: BLE001 - an onnxruntime without quantization: the rest still runs
        print(f"import corpus: no quantize_static models ({type(e).__name__}: {e})", file=sys.stderr)
    return out


def _quantized_models() -> list:
    import logging

    import onnx
    from onnxruntime.quantization import QuantFormat, quantize_static

    import test_import_onnx as T

    logging.getLogger().setLevel(logging.ERROR)
    out = []
    with tempfile.TemporaryDirectory() as d:
        fp = os.path.join(d, "float.onnx")
        onnx.save(T.float_model(np.random.default_rng(1)), fp)
        for name, options in T.STATIC.items():
            path = os.path.join(d, f"{name}.onnx")
            quantize_static(fp, path, T.Calibration(np.random.default_rng(2)), quant_format=QuantFormat.QDQ, **options)
            out.append((f"ort_{name}", onnx.load(path).SerializeToString()))
    return out


def _fields(message, path=""):
    """(message, field descriptor, path) for every set field under `message`, and the unset
    scalar fields of messages that have some set."""
    found = []
    for field, value in message.ListFields():
        found.append((message, field, f"{path}.{field.name}"))
        if field.type == field.TYPE_MESSAGE:
            items = value if field.is_repeated else [value]
            for i, item in enumerate(items):
                found.extend(_fields(item, f"{path}.{field.name}[{i}]" if field.is_repeated else f"{path}.{field.name}"))
    return found


def _scalar(rng, field):
    t = field.type
    if t == field.TYPE_ENUM:
        return pick(rng, [v.number for v in field.enum_type.values])
    if t in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return max(-(2**31), min(2**31 - 1, pick(rng, INT_POOL)))
    if t in (field.TYPE_INT64, field.TYPE_SINT64, field.TYPE_SFIXED64):
        return pick(rng, INT_POOL)
    if t in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return abs(max(-(2**31), min(2**31 - 1, pick(rng, INT_POOL))))
    if t in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return min(abs(pick(rng, INT_POOL)), 2**64 - 1)
    if t in (field.TYPE_FLOAT, field.TYPE_DOUBLE):
        return pick(rng, FLOAT_POOL)
    if t == field.TYPE_BOOL:
        return bool(rng.random() < 0.5)
    if t == field.TYPE_STRING:
        return pick(rng, STRING_POOL)
    if t == field.TYPE_BYTES:
        return bytes(rng.integers(0, 256, size=int(rng.integers(0, 16)), dtype=np.uint8))
    return None


def mutate_field(rng, model) -> str:
    """Change one field anywhere in the model (any type); what was done."""
    fields = _fields(model)
    message, field, path = fields[int(rng.integers(len(fields)))]
    if field.type == field.TYPE_MESSAGE:
        if field.is_repeated:
            items = getattr(message, field.name)
            if len(items) and rng.random() < 0.5:
                i = int(rng.integers(len(items)))
                del items[i]
                return f"delete {path}[{i}]"
            if len(items):
                items.add().CopyFrom(items[int(rng.integers(len(items)))])
                return f"duplicate an element of {path}"
        message.ClearField(field.name)
        return f"clear {path}"
    if field.is_repeated:
        items = getattr(message, field.name)
        r = rng.random()
        if len(items) and r < 0.3:
            i = int(rng.integers(len(items)))
            del items[i]
            return f"delete {path}[{i}]"
        if len(items) and r < 0.6:
            i = int(rng.integers(len(items)))
            value = _scalar(rng, field)
            items[i] = value
            return f"{path}[{i}] = {value!r:.60}"
        value = _scalar(rng, field)
        items.append(value)
        return f"append {value!r:.60} to {path}"
    if field.type == field.TYPE_BYTES:
        old = getattr(message, field.name)
        r = rng.random()
        if r < 0.4 and old:
            k = int(rng.integers(len(old)))
            setattr(message, field.name, old[:k])
            return f"truncate {path} to {k} bytes"
        if r < 0.7:
            extra = bytes(rng.integers(0, 256, size=int(rng.integers(1, 9)), dtype=np.uint8))
            setattr(message, field.name, old + extra)
            return f"extend {path} by {len(extra)} bytes"
    value = _scalar(rng, field)
    setattr(message, field.name, value)
    return f"{path} = {value!r:.60}"


def mutate_targeted(rng, model) -> str:
    """A mutation aimed at what the importer reads."""
    g = model.graph
    kind = pick(rng, ["dims", "data_type", "raw_data", "node_input", "attribute", "opset", "ir_version", "names",
                      "value_info", "op_type", "external"])  # fmt: skip
    inits = list(g.initializer)
    if kind == "dims" and inits:
        t = inits[int(rng.integers(len(inits)))]
        if t.dims and rng.random() < 0.8:
            i = int(rng.integers(len(t.dims)))
            t.dims[i] = pick(rng, [-1, -4, 0, 1, 2, 3, 5, 1024, 2**31, 2**40, 2**62, -(2**62)])
            return f"initializer {t.name} dims[{i}] = {t.dims[i]}"
        t.dims.append(pick(rng, [1, 2, 0, -1]))
        return f"initializer {t.name} dims += {t.dims[-1]}"
    if kind == "data_type" and inits:
        t = inits[int(rng.integers(len(inits)))]
        t.data_type = int(pick(rng, list(range(0, 27)) + [-1, 99, 2**31 - 1]))
        return f"initializer {t.name} data_type = {t.data_type}"
    if kind == "raw_data" and inits:
        t = inits[int(rng.integers(len(inits)))]
        raw = t.raw_data
        if raw and rng.random() < 0.5:
            k = int(rng.integers(len(raw)))
            t.raw_data = raw[:k]
            return f"initializer {t.name} raw_data truncated to {k} bytes"
        t.raw_data = raw + bytes(int(rng.integers(1, 9)))
        return f"initializer {t.name} raw_data extended"
    nodes = list(g.node)
    if kind == "node_input" and nodes:
        n = nodes[int(rng.integers(len(nodes)))]
        r = rng.random()
        if n.input and r < 0.35:
            i = int(rng.integers(len(n.input)))
            del n.input[i]
            return f"node {n.name!r} input {i} removed"
        if n.input and r < 0.7:
            i = int(rng.integers(len(n.input)))
            n.input[i] = pick(rng, ["", "nowhere", n.output[0] if n.output else "", *[t.name for t in inits][:3]])
            return f"node {n.name!r} input {i} = {n.input[i]!r}"
        n.input.append(pick(rng, ["", "x", "s", "extra"]))
        return f"node {n.name!r} input += {n.input[-1]!r}"
    if kind == "attribute" and nodes:
        from onnx import AttributeProto, helper, numpy_helper

        n = nodes[int(rng.integers(len(nodes)))]
        r = rng.random()
        if n.attribute and r < 0.3:
            a = n.attribute[int(rng.integers(len(n.attribute)))]
            a.type = pick(rng, [v.number for v in AttributeProto.AttributeType.DESCRIPTOR.values])
            return f"node {n.name!r} attribute {a.name} type = {a.type}"
        if n.attribute and r < 0.5:
            i = int(rng.integers(len(n.attribute)))
            name = n.attribute[i].name
            del n.attribute[i]
            return f"node {n.name!r} attribute {name} removed"
        name = pick(rng, ["axis", "block_size", "output_dtype", "value", "value_float", "value_floats", "saturate", "bogus", "axis"])
        value = pick(rng, [0, 1, -1, 2, -3, 7, 2**40, -(2**63), 1.5, "int8", [1, 2], b"\x00", numpy_helper.from_array(np.int8([1, 2])),
                           *range(0, 27)])  # fmt: skip
        for a in list(n.attribute):
            if a.name == name and rng.random() < 0.7:
                n.attribute.remove(a)
        n.attribute.append(helper.make_attribute(name, value))
        return f"node {n.name!r} attribute {name} = {value!r:.40}"
    if kind == "opset":
        r = rng.random()
        if model.opset_import and r < 0.6:
            o = model.opset_import[int(rng.integers(len(model.opset_import)))]
            o.version = pick(rng, [0, 1, 9, 10, 12, 13, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 30, 1000, -1])
            return f"opset {o.domain!r} version = {o.version}"
        if model.opset_import and r < 0.8:
            o = model.opset_import[int(rng.integers(len(model.opset_import)))]
            o.domain = pick(rng, ["", "ai.onnx", "com.microsoft", "bogus"])
            return f"opset domain = {o.domain!r}"
        o = model.opset_import.add()
        o.domain, o.version = pick(rng, ["", "ai.onnx"]), pick(rng, [10, 21, 25])
        return f"opset {o.domain!r} {o.version} added"
    if kind == "ir_version":
        model.ir_version = pick(rng, [0, 1, 3, 7, 8, 9, 10, 11, 12, 99, -1])
        return f"ir_version = {model.ir_version}"
    if kind == "names" and (nodes or inits):
        r = rng.random()
        if len(nodes) >= 2 and r < 0.4:
            a, b = (nodes[int(i)] for i in rng.choice(len(nodes), size=2, replace=False))
            a.name = b.name
            return f"node name {b.name!r} duplicated"
        if inits and r < 0.7:
            t = inits[int(rng.integers(len(inits)))]
            t.name = pick(rng, [i.name for i in inits] + [o for n in nodes for o in n.output] + [i.name for i in g.input] + [""])
            return f"initializer renamed {t.name!r}"
        if nodes:
            n = nodes[int(rng.integers(len(nodes)))]
            n.name = pick(rng, STRING_POOL)
            return f"node renamed {n.name!r:.40}"
    if kind == "value_info":
        infos = list(g.input) + list(g.output) + list(g.value_info)
        if infos:
            v = infos[int(rng.integers(len(infos)))]
            tt = v.type.tensor_type
            r = rng.random()
            if r < 0.4:
                tt.elem_type = int(pick(rng, list(range(0, 27)) + [99]))
                return f"value {v.name!r} elem_type = {tt.elem_type}"
            if r < 0.6:
                v.type.ClearField("tensor_type")
                return f"value {v.name!r} type cleared"
            d = tt.shape.dim.add()
            if rng.random() < 0.5:
                d.dim_value = pick(rng, [-1, 0, 1, 3, 2**40])
            else:
                d.dim_param = pick(rng, ["N", "", "?"])
            return f"value {v.name!r} dim added"
    if kind == "op_type" and nodes:
        n = nodes[int(rng.integers(len(nodes)))]
        if rng.random() < 0.5:
            n.op_type = pick(rng, ["DequantizeLinear", "QuantizeLinear", "Constant", "Identity", "dequantizelinear"])
            return f"node {n.name!r} op_type = {n.op_type}"
        n.domain = pick(rng, ["", "ai.onnx", "com.microsoft", "ai.onnx.ml"])
        return f"node {n.name!r} domain = {n.domain!r}"
    if kind == "external" and inits:
        from onnx import TensorProto

        t = inits[int(rng.integers(len(inits)))]
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for key, value in (("location", pick(rng, ["weights.bin", "missing.bin", "", "../weights.bin", "sub/../weights.bin", "/dev/null"])),
                           ("offset", str(pick(rng, [0, 1, 16, -1, 2**40]))), ("length", str(pick(rng, [0, 1, 4, 64, -1, 2**40])))):
            if rng.random() < 0.85:
                e = t.external_data.add()
                e.key, e.value = key, value
        t.ClearField("raw_data")
        return f"initializer {t.name} external: {[(e.key, e.value) for e in t.external_data]}"
    return mutate_field(rng, model)


def mutate_model(rng, model, data: bytes, counts: list, targeted: float) -> tuple[list, bytes]:
    """Mutate `model` (a ModelProto parsed from `data`) a number of times drawn from `counts`,
    each targeted (`mutate_targeted`) with probability `targeted`, else any field; (what was
    done, the serialized result: `data` if protobuf cannot write it)."""
    mutations = []
    for _ in range(int(rng.choice(counts))):
        try:
            what = mutate_targeted(rng, model) if rng.random() < targeted else mutate_field(rng, model)
        except (ValueError, TypeError, IndexError) as e:  # a value protobuf refuses: none applied
            what = f"(refused: {type(e).__name__})"
        mutations.append(what)
    try:
        data = model.SerializeToString()
    except Exception as e:  # noqa: BLE001 - protobuf cannot write it: keep the unmutated bytes
        mutations.append(f"(not serializable: {type(e).__name__}; unmutated)")
    return mutations, data


@dataclasses.dataclass
class ImportCase:
    source: str
    data: bytes
    mutations: list
    output: bool = False  # -o FILE
    verify: bool = True  # read the output back with dequant-opt
    lower: bool = False  # and lower it with --dq-to-llvm

    def describe(self) -> str:
        return f"{self.source} mutations=[{'; '.join(self.mutations)}] ({len(self.data)} bytes){' -o FILE' if self.output else ''}"


class ImportFuzzer:
    """dequant-import-onnx fuzzing in a worker (fuzz_harness.py)."""

    def __init__(self, workdir: str = ""):
        import onnx

        from dequant import cli, onnx_importer

        self.onnx, self.cli, self.importer = onnx, cli, onnx_importer
        self.workdir = workdir or tempfile.mkdtemp(prefix="dequant-fuzz-import-")
        self.corpus = import_corpus()
        self.weights = bytes(np.random.default_rng(7).integers(0, 256, size=4096, dtype=np.uint8))

    def make(self, seed: int, index: int) -> ImportCase:
        rng = np.random.default_rng([seed, index, 0x1A1])
        source, data = self.corpus[int(rng.integers(len(self.corpus)))]
        model = self.onnx.ModelProto()
        model.ParseFromString(data)
        mutations, data = mutate_model(rng, model, data, [0, 1, 1, 2, 2, 3], 0.6)
        if rng.random() < 0.2:  # byte-level
            b = bytearray(data)
            for _ in range(int(rng.integers(1, 4))):
                r = rng.random()
                if r < 0.5 and b:
                    i = int(rng.integers(len(b)))
                    b[i] ^= 1 << int(rng.integers(8))
                    mutations.append(f"flip byte {i}")
                elif r < 0.75 and b:
                    i = int(rng.integers(len(b)))
                    del b[i : i + int(rng.integers(1, 8))]
                    mutations.append(f"delete bytes at {i}")
                elif b:
                    i = int(rng.integers(len(b)))
                    b[i:i] = bytes(rng.integers(0, 256, size=int(rng.integers(1, 8)), dtype=np.uint8))
                    mutations.append(f"insert bytes at {i}")
            if rng.random() < 0.2 and b:
                k = int(rng.integers(len(b)))
                del b[k:]
                mutations.append(f"truncate at {k}")
            data = bytes(b)
        return ImportCase(source, data, mutations, output=rng.random() < 0.2, verify=True, lower=rng.random() < 0.15)

    def describe(self, seed: int, index: int) -> str:
        return self.make(seed, index).describe()

    def prepare(self, case: ImportCase, directory: str) -> list:
        """Write the model (and a weights file for external data) into `directory`; the argv."""
        with open(os.path.join(directory, "model.onnx"), "wb") as f:
            f.write(case.data)
        with open(os.path.join(directory, "weights.bin"), "wb") as f:
            f.write(self.weights)
        argv = [os.path.join(directory, "model.onnx")]
        if case.output:
            argv += ["-o", os.path.join(directory, "out.mlir")]
        return argv

    def run(self, seed: int, index: int) -> dict:
        case = self.make(seed, index)
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.workdir, "out.mlir"))
        o = run_main(self.importer.main, self.prepare(case, self.workdir), self.workdir)
        finding = judge(o)
        record = {"class": f"exit-{o.status}", "finding": finding, "status": o.status, "stderr": o.first_stderr_line}
        if finding:
            record["detail"] = (o.escaped or o.stderr.decode("utf-8", "replace"))[-1500:]
            return record
        if o.status == 0 and case.verify:  # the imported module must be valid dq IR
            text = o.stdout
            if case.output:
                with open(os.path.join(self.workdir, "out.mlir"), "rb") as f:
                    text = f.read()
            path = os.path.join(self.workdir, "imported.mlir")
            with open(path, "wb") as f:
                f.write(text)
            argv = [path, "-o", os.path.join(self.workdir, "lowered.mlir")] + (["--dq-to-llvm"] if case.lower else [])
            v = run_main(self.cli.main, argv, self.workdir)
            problem = judge(v) or (f"dequant-opt {' '.join(argv[3:])} rejects the imported module: {v.first_stderr_line}" if v.status else None)
            if problem:
                record["finding"] = f"reading the import back: {problem}"
                record["detail"] = (v.escaped or v.stderr.decode("utf-8", "replace"))[-1500:]
            record["class"] += "-verified" if not problem else ""
        return record

    def repro(self, seed: int, index: int, save: str | None = None, verbose: bool = True) -> int:
        case = self.make(seed, index)
        directory = save or tempfile.mkdtemp(prefix="dequant-fuzz-repro-")
        os.makedirs(directory, exist_ok=True)
        argv = self.prepare(case, directory)
        command = _console("dequant-import-onnx", "dequant.onnx_importer") + argv
        print(f"case: {case.describe()}")
        print("command: " + " ".join(shlex.quote(a) for a in command))
        run = subprocess.run(command, capture_output=True, timeout=600)
        o = Outcome(run.returncode, run.stdout, run.stderr)
        print(f"exit status: {run.returncode}\nstderr:\n{run.stderr.decode('utf-8', 'replace')[-3000:]}")
        finding = judge(o) or (f"killed by signal {-run.returncode}" if run.returncode < 0 else None)
        if not finding and run.returncode == 0 and case.verify:
            path = os.path.join(directory, "imported.mlir")
            with open(path, "wb") as f:
                f.write(run.stdout if not case.output else open(argv[-1], "rb").read())
            opt = _console("dequant-opt", "dequant.cli") + [path, "-o", os.devnull] + (["--dq-to-llvm"] if case.lower else [])
            print("then: " + " ".join(shlex.quote(a) for a in opt))
            back = subprocess.run(opt, capture_output=True, timeout=600)
            print(f"exit status: {back.returncode}\nstderr:\n{back.stderr.decode('utf-8', 'replace')[-3000:]}")
            o2 = Outcome(back.returncode, back.stdout, back.stderr)
            finding = judge(o2) or (f"killed by signal {-back.returncode}" if back.returncode < 0 else None)
            if not finding and back.returncode:
                finding = "dequant-opt rejects the imported module"
        print(f"finding: {finding}" if finding else "no finding")
        return 1 if finding else 0
