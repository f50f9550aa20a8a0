"""pyproject.toml's package data names files that exist: a pattern that matches nothing ships
nothing and hides a missing file."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_data_pattern_matches_a_file():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = config["package-dir"]
    for package, patterns in config["package-data"].items():
        for pattern in patterns:
            assert sorted((ROOT / dirs[package]).glob(pattern)), f"package data {package}: {pattern!r} matches no file"
