"""Every code block of README.md and docs/usage.md runs as written, from any directory, so the docs
cannot drift from the code.

Each document's blocks run in order, each in a fresh process, in one temporary directory outside
the clone that holds nothing of it: a block reaches the shipped examples as a user would
(`python -m dequant.example --path NAME`, or the package's data), and what it writes lands in the
temporary directory, never in the repository.
- ```sh blocks run under `bash -euo pipefail`;
- ```python blocks run under this Python;
- ```mlir blocks are complete modules: `dequant-opt` must parse and verify them;
- ```text and ```c blocks show output, commands or declarations and are not run.
An HTML comment right before a block, `<!-- readme-test: skip: <reason> -->`, skips it (the
reason is the test's skip reason), and `<!-- readme-test: needs <module> -->` runs it only where
that Python module is importable (skipped with a reason otherwise).

Also: the README's quick start line 2 is the line `.ci/run` runs, and every relative link of
README.md and docs/*.md names a file that exists (and a heading of it, for `#anchor`s).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCUMENTS = [README, ROOT / "docs" / "usage.md"]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
MARKER = re.compile(r"<!-- readme-test: (skip: (?P<reason>.*?)|needs (?P<module>[\w.]+)) -->\s*$")
RUNNABLE = {"sh", "python", "mlir"}
SHOWN = {"text", "c", ""}


@dataclass
class Block:
    doc: Path
    lang: str
    code: str
    line: int
    skip: str | None
    needs: str | None

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}-line{self.line}-{self.lang}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        line = text.count("\n", 0, m.start()) + 1
        found.append(Block(doc, m.group(1), m.group(2), line, marker and marker.group("reason"), marker and marker.group("module")))
    return found


BLOCKS = [b for doc in DOCUMENTS for b in blocks(doc)]


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory):
    """One empty directory per document, outside the clone."""
    dirs = {}
    for doc in DOCUMENTS:
        d = tmp_path_factory.mktemp(doc.stem)
        assert not d.resolve().is_relative_to(ROOT), f"{d} is inside the clone"
        dirs[doc] = d
    return dirs


def test_every_block_has_a_known_language():
    for b in BLOCKS:
        assert b.lang in RUNNABLE | SHOWN, f"{b.where}: a ```{b.lang} block: use sh, python, mlir (run) or text, c (shown)"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang in RUNNABLE], ids=lambda b: b.id)
def test_block_runs_as_written(block, workdirs):
    if block.skip:
        pytest.skip(f"{block.where}: {block.skip}")
    if block.needs and importlib.util.find_spec(block.needs) is None:
        pytest.skip(f"{block.where}: needs the Python module {block.needs}, which is not installed")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)  # the package as installed, not the clone's sources
    if block.lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c", block.code]
    elif block.lang == "python":
        cmd = [sys.executable, "-c", block.code]
    else:
        opt = shutil.which("dequant-opt", path=env["PATH"])
        cmd = [opt, "-"] if opt else [sys.executable, "-m", "dequant.cli", "-"]
    cwd = workdirs[block.doc]
    r = subprocess.run(cmd, cwd=cwd, env=env, input=block.code if block.lang == "mlir" else None, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{block.where} ({block.lang}) failed with {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def test_quick_start_line_2_is_what_ci_runs():
    """The README promises that its quick start's second line is CI's test command."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marker = [i for i, line in enumerate(ci) if line.strip() == "# README quick start, line 2:"]
    assert len(marker) == 1, ".ci/run: no single '# README quick start, line 2:' comment before the command"
    command = ci[marker[0] + 1].strip()
    text = README.read_text(encoding="utf-8")
    quick = text[text.index("## Quick start") :]
    first = next(b for b in blocks(README) if b.line > text.count("\n", 0, len(text) - len(quick)))
    lines = [line.strip() for line in first.code.splitlines() if line.strip()]
    assert len(lines) == 2, f"{first.where}: the quick start is two command lines, found {len(lines)}"
    assert lines[1] == command, f"{first.where}: line 2 is\n  {lines[1]}\nbut .ci/run runs\n  {command}"


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(doc: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    anchors = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda d: str(d.relative_to(ROOT)))
def test_links_resolve(doc):
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{target}: no {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading '#{anchor}' in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: broken links:\n  " + "\n  ".join(broken)
