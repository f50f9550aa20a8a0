"""Every code block of README.md runs as written, so the README cannot drift from the code.

Blocks run in order, each in a fresh process, in one temporary directory that holds links to the
repository's top-level entries (so `python/examples/...` and `test/c/...` resolve, and files the
blocks write land in the temporary directory, not in the repository):
- ```sh blocks run under `bash -euo pipefail`;
- ```python blocks run under this Python;
- ```mlir blocks are complete modules: `dequant-opt` must parse and verify them;
- ```text and ```c blocks show output or declarations and are not run.
An HTML comment right before a block, `<!-- readme-test: skip: <reason> -->`, skips it (the
reason is the test's skip reason), and `<!-- readme-test: needs <module> -->` runs it only where
that Python module is importable (skipped with a reason otherwise).
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
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
MARKER = re.compile(r"<!-- readme-test: (skip: (?P<reason>.*?)|needs (?P<module>[\w.]+)) -->\s*$")
RUNNABLE = {"sh", "python", "mlir"}
SHOWN = {"text", "c", ""}


@dataclass
class Block:
    lang: str
    code: str
    line: int
    skip: str | None
    needs: str | None

    @property
    def id(self) -> str:
        return f"line{self.line}-{self.lang}"


def blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        line = text.count("\n", 0, m.start()) + 1
        found.append(Block(m.group(1), m.group(2), line, marker and marker.group("reason"), marker and marker.group("module")))
    return found


BLOCKS = blocks()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("readme")
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "build") and not entry.name.endswith(".egg-info"):
            (d / entry.name).symlink_to(entry)
    return d


def test_every_block_has_a_known_language():
    for b in BLOCKS:
        assert b.lang in RUNNABLE | SHOWN, f"README.md:{b.line}: a ```{b.lang} block: use sh, python, mlir (run) or text, c (shown)"


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang in RUNNABLE], ids=lambda b: b.id)
def test_block_runs_as_written(block, workdir):
    if block.skip:
        pytest.skip(f"README.md:{block.line}: {block.skip}")
    if block.needs and importlib.util.find_spec(block.needs) is None:
        pytest.skip(f"README.md:{block.line}: needs the Python module {block.needs}, which is not installed")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if block.lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c", block.code]
    elif block.lang == "python":
        cmd = [sys.executable, "-c", block.code]
    else:
        opt = shutil.which("dequant-opt", path=env["PATH"])
        cmd = [opt, "-"] if opt else [sys.executable, "-m", "dequant.cli", "-"]
    r = subprocess.run(cmd, cwd=workdir, env=env, input=block.code if block.lang == "mlir" else None, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"README.md:{block.line} ({block.lang}) failed with {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
