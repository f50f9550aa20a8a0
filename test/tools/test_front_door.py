"""`python -m dequant`: the front door lists every console script dequant installs, one line each,
and how to run the shipped example; it works from any directory."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata


def front_door(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dequant", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_lists_every_installed_tool_once(tmp_path):
    r = front_door(cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    scripts = {e.name for e in metadata.distribution("dequant").entry_points if e.group == "console_scripts"}
    listed = re.findall(r"^  (dequant-[\w-]+) {2,}\S", r.stdout, re.M)
    assert sorted(listed) == sorted(scripts) and len(scripts) == 3


def test_says_how_to_run_the_shipped_example(tmp_path):
    r = front_door(cwd=tmp_path)
    assert re.search(r"^  python -m dequant\.example {2,}\S", r.stdout, re.M)
    assert re.search(r"^  python -m dequant\.example --path {2,}\S", r.stdout, re.M)


def test_help_and_a_bad_argument(tmp_path):
    r = front_door("--help", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m dequant") and "dequant-iree" in r.stdout
    r = front_door("bogus", cwd=tmp_path)
    assert r.returncode == 2 and "unrecognized arguments: bogus" in r.stderr and "Traceback" not in r.stderr
