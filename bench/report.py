"""Where a benchmark writes its results: bench/results/<name>-<date>.md and .json (docs/development.md,
"Benchmarks": each committed run a dated file)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess


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


def _lscpu() -> dict:
    """lscpu's fields (name -> value), or {} where it cannot run."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, v in (ln.split(":", 1) for ln in text.splitlines() if ":" in ln)}


def vendor() -> str:
    """The CPU's vendor in a file name: "amd", "intel" or "cpu" (lscpu's Vendor ID)."""
    return VENDORS.get(_lscpu().get("Vendor ID", ""), "cpu")


VENDORS = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}


def cpu() -> tuple[str, str]:
    """(the CPU's model name, its AVX-512, VNNI and AMX flags or "AVX2, no AVX-512"), from lscpu:
    what a result names (docs/development.md, "Benchmarks")."""
    fields = _lscpu()
    if not fields:
        return "unknown CPU", ""
    flags = fields.get("Flags", "").split()
    wanted = [f for f in flags if f.startswith(("avx512", "amx")) or "vnni" in f]
    return fields.get("Model name", "unknown CPU"), " ".join(wanted) or ("AVX2, no AVX-512" if "avx2" in flags else "no AVX2")


def cpu_line() -> str:
    """One line naming the CPU, its core count and flags, for a result's header."""
    name, flags = cpu()
    return f"CPU: {name}, {os.cpu_count()} cores; flags: {flags}."
