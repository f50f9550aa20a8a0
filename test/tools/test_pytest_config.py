"""The project's pytest configuration (pyproject.toml): a run prints why each test was skipped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_skip_reasons_are_printed(tmp_path):
    (tmp_path / "test_skips.py").write_text("import pytest\n\ndef test_a():\n    pytest.skip('the widget is not installed')\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(PYPROJECT), str(tmp_path / "test_skips.py")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SKIPPED [1] " in r.stdout and "test_skips.py:4: the widget is not installed" in r.stdout, r.stdout
