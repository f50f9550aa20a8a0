"""Where a benchmark writes its results: bench/results/<name>-<date>.md and .json (docs/development.md,
"Benchmarks": each committed run a dated file)."""

from __future__ import annotations

import datetime
import json
import os


def write(out: str, name: str, lines: list[str], data, minute: bool = False) -> str:
    """Write `lines` to <out>/<name>-<date>.md and `data` to <out>/<name>-<date>.json (values json
    cannot write as their str); <date> is today's YYYY-MM-DD, with -HHMM when `minute` (a
    benchmark run several times a day). Returns <out>/<name>-<date>."""
    now = datetime.datetime.now()
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"{name}-{now.strftime('%Y-%m-%d-%H%M' if minute else '%Y-%m-%d')}")
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, default=str)
    return stem
