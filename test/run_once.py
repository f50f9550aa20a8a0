"""What a pytest run builds once for all its xdist workers: a folder under the run's base
temporary directory (shared by the workers), filled by the first worker that asks while the others
wait on a lock. A module-scoped fixture is built once per worker that draws one of its tests, and
pytest-xdist's `loadgroup` cannot keep those tests on one worker under pytest 9 (it renames a
node's `_nodeid`, which pytest 9 no longer reads)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path


def folder(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name` of this run, made by `build(folder)` once (again only if it raised)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' base directories are siblings: pytest-of-<user>/pytest-N/gwK
    out, done = root / "run-once" / name, root / "run-once" / f"{name}.done"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(root / "run-once" / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            out.mkdir(exist_ok=True)
            build(out)
            done.touch()
    return out
