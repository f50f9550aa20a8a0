"""What the IREE stage's tests of `dequant-iree` share: running the command, and what one
`error:` line for bad input means."""

from __future__ import annotations

import subprocess
import sys


def dequant_iree(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dequant.iree", *args], capture_output=True, text=True)


def one_error_line(run: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 1, no traceback, and exactly one `error:` line, which holds `words`."""
    assert run.returncode == 1, run.stderr
    errors = [ln for ln in run.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and errors[0].startswith("dequant-iree: error: "), run.stderr
    assert "Traceback" not in run.stderr and "File \"" not in run.stderr, run.stderr
    for w in words:
        assert w in errors[0], errors[0]
