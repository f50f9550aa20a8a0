"""The fuzzing harness shared by every fuzzer: a supervisor (the parent) and a worker (one child
process running many cases in-process).

A fuzzer is a module with a class (`KINDS` names it) (see `ops_fuzz.py`, `tools_fuzz.py`):

- `Fuzzer(workdir)` prepares what every case needs (imports, a corpus), once per worker;
- `describe(seed, index) -> str` is a one-line description of case (seed, index);
- `run(seed, index) -> dict` runs the case and returns its record: `{"class": ..., "finding":
  None or a one-line description of what broke, "detail": text, ...}`;
- `repro(seed, index, save_dir, verbose) -> int` reruns one case verbosely (see run.py).

Every case is a pure function of (seed, index): its id `<kind>:<seed>:<index>` (e.g.
`opt:1:1234`) reproduces it (`python test/fuzz/run.py --repro opt:1:1234`), given the same
checkout (the tool fuzzers' corpus is the repository's test inputs).

The worker (`python fuzz_harness.py --worker KIND ...`) writes `<index>\\t<description>` to a progress
file before each case and one JSON line per finished case to a results file. The supervisor
(`campaign`) watches the child: a case that does not finish within `timeout` seconds is a hang
(the child is killed), a child that dies in a case (a signal, or an exit from native code) is a
crash of that case; either way a new child resumes at the next index. Native output (LLVM
assertion messages, "LLVM ERROR") is captured per case at the file-descriptor level, so a crash
is reported with what the process printed last.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KINDS = {"ops": ("ops_fuzz", "Fuzzer"), "wide": ("ops_fuzz", "WideFuzzer"), "opt": ("tools_fuzz", "OptFuzzer"),
         "import": ("tools_fuzz", "ImportFuzzer"), "stage": ("stage_fuzz", "StageFuzzer")}  # fmt: skip
SELFTEST = ("fuzz_harness", "SelfTest")  # kind "selftest": the supervisor's own test (test_fuzz.py)
DEFAULT_TIMEOUT = 30.0  # seconds without progress: a hang
DEFAULT_MEMORY_MB = 8192  # the worker's address-space limit (RLIMIT_AS): a runaway allocation fails
RECYCLE = 75  # a worker's exit status when it stops to be replaced (its address space grew past half the limit)


def ensure_path() -> None:
    """Make the fuzz modules and the numeric tests' helpers importable (flat module names)."""
    for p in (HERE, os.path.join(REPO, "test", "numeric")):
        if p not in sys.path:
            sys.path.insert(0, p)


def fuzzer_class(kind: str):
    ensure_path()
    module, name = SELFTEST if kind == "selftest" else KINDS[kind]
    return getattr(importlib.import_module(module), name)


def case_id(kind: str, seed: int, index: int) -> str:
    return f"{kind}:{seed}:{index}"


def parse_id(text: str) -> tuple[str, int, int]:
    kind, seed, index = text.split(":")
    if kind not in KINDS and kind != "selftest":
        raise ValueError(f"unknown fuzzer kind {kind!r} in case id {text!r} (one of {', '.join(KINDS)})")
    return kind, int(seed), int(index)


# --- what a case reports ---------------------------------------------------------------------------


@dataclasses.dataclass
class Finding:
    id: str
    what: str  # one line: the broken promise and the observation
    description: str  # the case: shapes, dtypes, attributes / file, mutations, flags
    detail: str = ""  # longer text: messages, stderr tail, traceback

    def signature(self) -> str:
        """What makes two findings the same: `what` with numbers, paths, quoted values and
        hex addresses blurred."""
        s = re.sub(r"0x[0-9a-fA-F]+", "0x_", self.what)
        s = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", s)
        s = re.sub(r"/[^\s:]+", "/_", s)
        s = re.sub(r"\d+", "N", s)
        return s[:200]


@dataclasses.dataclass
class Report:
    kind: str
    seed: int
    cases: int = 0
    seconds: float = 0.0
    findings: list = dataclasses.field(default_factory=list)
    classes: dict = dataclasses.field(default_factory=dict)  # case class -> count
    harness_errors: list = dataclasses.field(default_factory=list)  # the fuzzer's own failures
    first: int = 0
    next: int = 0  # the first index not run
    recycled: int = 0  # workers replaced because their memory grew

    def distinct(self) -> dict:
        """signature -> findings with that signature, first seen first."""
        out: dict = {}
        for f in self.findings:
            out.setdefault(f.signature(), []).append(f)
        return out

    def summary(self, limit: int = 20) -> str:
        lines = [f"{self.kind}: {self.cases} cases (indexes {self.first}..{self.next - 1}, seed {self.seed}) in "
                 f"{self.seconds:.0f} s; {len(self.findings)} findings, {len(self.distinct())} distinct"]  # fmt: skip
        if self.recycled:
            lines.append(f"  workers replaced for memory growth: {self.recycled}")
        if self.classes:
            lines.append("  cases by class: " + ", ".join(f"{k} {v}" for k, v in sorted(self.classes.items())))
        if self.harness_errors:
            lines.append(f"  {len(self.harness_errors)} cases the fuzzer itself could not check (not findings):")
            lines += [f"    {e}" for e in self.harness_errors[:5]]
        for i, (sig, fs) in enumerate(self.distinct().items()):
            if i == limit:
                lines.append(f"  ... {len(self.distinct()) - limit} more distinct findings")
                break
            f = fs[0]
            more = f" (+{len(fs) - 1} more: {', '.join(g.id for g in fs[1:4])}{' ...' if len(fs) > 4 else ''})" if len(fs) > 1 else ""
            lines.append(f"  FINDING {f.id}{more}: {f.what}")
            lines.append(f"      case: {f.description}")
            if f.detail:
                lines += ["      " + d for d in f.detail.strip().splitlines()[:6]]
        return "\n".join(lines)


# --- capturing a case's output ---------------------------------------------------------------------


@contextlib.contextmanager
def captured(out_path: str, err_path: str, stdin: bytes | None = None):
    """File descriptors 1 and 2 (and sys.stdout/sys.stderr, which write to them) redirected to
    two files for the duration; native writes (LLVM, MLIR) land there too. `stdin`: bytes that
    sys.stdin reads meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    saved_stdin = sys.stdin
    with open(out_path, "w+b") as out, open(err_path, "w+b") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sys.stdin = saved_stdin


def tail(path: str, limit: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


# --- the worker ------------------------------------------------------------------------------------


def limit_memory(mb: int) -> None:
    if mb > 0:
        limit = mb << 20
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _vm_mb() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") >> 20
    except (OSError, ValueError):
        return 0


def worker(kind: str, seed: int, start: int, stop: int | None, deadline: float | None, workdir: str, memory_mb: int = 0) -> int:
    """Run cases start, start+1, ... until `stop` (exclusive) or the wall-clock `deadline`
    (time.time()); progress and results in `workdir`. Returns RECYCLE, to be replaced by a new
    worker, once its address space passes half of `memory_mb` (in-process tool runs grow it case
    by case; the campaign summaries count the replacements), so that the limit is never what ends a case."""
    recycle_mb = memory_mb // 2 if memory_mb > 0 else 6144
    fuzzer = fuzzer_class(kind)(workdir)
    progress = os.open(os.path.join(workdir, "progress"), os.O_WRONLY | os.O_CREAT, 0o644)
    with open(os.path.join(workdir, "results.jsonl"), "a", encoding="utf-8") as results:
        index = start
        while (stop is None or index < stop) and (deadline is None or time.time() < deadline):
            try:
                description = fuzzer.describe(seed, index)
            except Exception as e:  # noqa: BLE001 - a generator bug is reported, not fatal
                description = f"(no description: {type(e).__name__}: {e})"
            record = f"{index}\t{description}".replace("\n", " ")[:2000].encode() + b"\n"
            os.ftruncate(progress, 0)
            os.pwrite(progress, record, 0)
            began = time.time()
            try:
                result = fuzzer.run(seed, index)
            except Exception:  # noqa: BLE001 - the fuzzer's own failure, reported as such
                result = {"class": "harness-error", "finding": None, "harness_error": traceback.format_exc(limit=8)}
            result.update(index=index, description=description, seconds=round(time.time() - began, 3))
            results.write(json.dumps(result) + "\n")
            results.flush()
            index += 1
            if _vm_mb() > recycle_mb:
                os.close(progress)
                return RECYCLE
    os.close(progress)
    return 0


# --- the supervisor --------------------------------------------------------------------------------


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def campaign(kind: str, seed: int, *, seconds: float | None = None, cases: int | None = None, start: int = 0,
             timeout: float = DEFAULT_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB, log=None,
             keep: str | None = None) -> Report:  # fmt: skip
    """Run fuzzer `kind` from case `start` for `seconds` or `cases` cases in child processes;
    the findings and counts. `log(text)` receives progress lines; `keep` a directory to keep
    the work files in (default: a temporary one, removed)."""
    if seconds is None and cases is None:
        raise ValueError("give seconds or cases")
    report = Report(kind, seed, first=start, next=start)
    began = time.time()
    deadline = began + seconds if seconds is not None else None
    stop = start + cases if cases is not None else None
    workdir = keep or tempfile.mkdtemp(prefix=f"dequant-fuzz-{kind}-")
    os.makedirs(workdir, exist_ok=True)
    results_path, progress_path = os.path.join(workdir, "results.jsonl"), os.path.join(workdir, "progress")
    read_upto = 0
    index = start
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    try:
        while (stop is None or index < stop) and (deadline is None or time.time() < deadline):
            for p in (progress_path,):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(p)
            argv = [sys.executable, os.path.join(HERE, "fuzz_harness.py"), "--worker", kind, str(seed), str(index),
                    "" if stop is None else str(stop), "" if deadline is None else repr(deadline), workdir, str(memory_mb)]  # fmt: skip
            child_err = open(os.path.join(workdir, "child.err"), "wb")
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=child_err, stderr=child_err, env=env,
                                     cwd=REPO, start_new_session=True)  # fmt: skip
            seen, since = None, time.time()
            hung = False
            while child.poll() is None:
                time.sleep(0.05)
                now = time.time()
                current = _progress(progress_path)
                if current != seen:
                    seen, since = current, now
                if now - since > timeout + (30 if current is None else 0):  # + start-up time
                    os.killpg(child.pid, signal.SIGKILL)
                    child.wait()
                    hung = True
                    break
            child_err.close()
            rc = child.returncode
            read_upto, done = _collect(results_path, read_upto, kind, seed, report)
            last = done[-1] if done else index - 1
            current = _progress(progress_path)
            if current is None and rc == 0:  # a replacement worker that started past the deadline
                break
            if current is None:  # the worker died before its first case
                raise RuntimeError(f"the {kind} worker failed to start (status {rc}):\n{tail(os.path.join(workdir, 'child.err'))}")
            started, description = current
            if hung:
                report.findings.append(Finding(case_id(kind, seed, started), f"hang: no result within {timeout:.0f} s",
                                               description, _case_output(workdir)))  # fmt: skip
                report.classes["hang"] = report.classes.get("hang", 0) + 1
                report.cases += 1
                index = started + 1
            elif started > last:  # the child died in a case
                what = f"the process was killed by {_signal_name(rc)}" if rc < 0 else f"the process exited with status {rc} in the middle of a case"
                cause = _crash_cause(os.path.join(workdir, "case.err"))
                what += f": {cause}" if cause else ""
                report.findings.append(Finding(case_id(kind, seed, started), what, description,
                                               _case_output(workdir) or tail(os.path.join(workdir, "child.err"))))  # fmt: skip
                report.classes["crash"] = report.classes.get("crash", 0) + 1
                report.cases += 1
                index = started + 1
            elif rc == RECYCLE:
                report.recycled += 1
                index = last + 1
                continue
            else:
                if rc != 0:
                    raise RuntimeError(f"the {kind} worker ended with status {rc}:\n{tail(os.path.join(workdir, 'child.err'))}")
                index = last + 1
                break  # the child stopped at the deadline or the stop index
            if log:
                log(f"{kind}: restarting after case {case_id(kind, seed, started)}")
        report.next = max(index, report.next)
    finally:
        report.seconds = time.time() - began
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return report


def _progress(path: str):
    """(index, description) of the case the worker is in, or None."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    if not text.endswith("\n") or "\t" not in text:
        return None
    index, description = text.rstrip("\n").split("\t", 1)
    return int(index), description


CRASH_LINE = re.compile(r"Assertion .*failed|LLVM ERROR:.*|terminate called.*|Fatal Python error:.*|UNREACHABLE.*|Segmentation fault.*|"
                        r"MemoryError.*|std::bad_alloc|double free.*|free\(\): .*|malloc\(\): .*|corrupted .*")


def _crash_cause(path: str) -> str:
    """The line of a crashed case's stderr that says why (an assertion, LLVM ERROR, ...), or ""."""
    found = CRASH_LINE.findall(tail(path, 20000))
    return found[-1].strip()[:200] if found else ""


def _case_output(workdir: str) -> str:
    parts = []
    for name in ("case.err", "case.out"):
        text = tail(os.path.join(workdir, name), 1500).strip()
        if text:
            parts.append(f"[{name}] {text}")
    return "\n".join(parts)


def _collect(path: str, offset: int, kind: str, seed: int, report: Report) -> tuple[int, list]:
    """Read result lines from `offset`; add them to the report; (new offset, indexes read)."""
    done = []
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return offset, done
    end = data.rfind(b"\n") + 1
    for line in data[:end].splitlines():
        r = json.loads(line)
        done.append(r["index"])
        report.cases += 1
        report.next = max(report.next, r["index"] + 1)
        cls = r.get("class", "?")
        report.classes[cls] = report.classes.get(cls, 0) + 1
        cid = case_id(kind, seed, r["index"])
        if r.get("harness_error"):
            report.harness_errors.append(f"{cid}: {r['harness_error'].strip().splitlines()[-1]}")
        if r.get("finding"):
            report.findings.append(Finding(cid, r["finding"], r.get("description", ""), r.get("detail", "")))
    return offset + end, done


class SelfTest:
    """Cases that pass, find something, crash (SIGSEGV, SIGABRT, os._exit) or hang, by index
    modulo 10: the supervisor must report each where it happened."""

    def __init__(self, workdir: str):
        self.workdir = workdir

    def describe(self, seed: int, index: int) -> str:
        return f"selftest case {index} ({self.behaviour(index)})"

    @staticmethod
    def behaviour(index: int) -> str:
        return {3: "finding", 5: "segv", 6: "abort", 7: "exit", 8: "hang"}.get(index % 10, "pass")

    def run(self, seed: int, index: int) -> dict:
        b = self.behaviour(index)
        with captured(os.path.join(self.workdir, "case.out"), os.path.join(self.workdir, "case.err")):
            print(f"native-looking message of case {index}", file=sys.stderr)
            if b == "segv":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif b == "abort":
                os.abort()
            elif b == "exit":
                os._exit(3)
            elif b == "hang":
                time.sleep(3600)
        return {"class": b, "finding": "planted finding" if b == "finding" else None}


if __name__ == "__main__":
    if len(sys.argv) == 9 and sys.argv[1] == "--worker":
        kind, seed, start, stop, deadline, workdir, memory = sys.argv[2:]
        limit_memory(int(memory))
        sys.exit(worker(kind, int(seed), int(start), int(stop) if stop else None, float(deadline) if deadline else None, workdir, int(memory)))
    sys.exit("usage: fuzz_harness.py --worker KIND SEED START STOP DEADLINE WORKDIR MEMORY_MB (run by the supervisor)")
