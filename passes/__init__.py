"""Passes of the dq toolkit, one module per pass, and the named pipelines built from them.

A module defining `PASS` (a `Pass`) or `PIPELINES` (`Pipeline`s) is registered by being here: a
new pass is one new module. `dequant-opt --help` lists them; python/pipeline.py runs them.

Every module is imported with the package, so each takes `mlir.dialects.linalg` and
`mlir.dialects.llvm` from passes/lazy.py, which imports them on first use: start-up
(docs/development.md#imports; test/tools/test_layers.py checks it).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Pass:
    """A Python-written pass: `run(op)` transforms `op` in place and returns False on failure
    (after emitting its diagnostics at the ops' locations)."""

    name: str  # command-line spelling, e.g. "dq-to-linalg"
    description: str  # one line
    run: Callable[..., bool]
    # Its options as a pipeline spells them (`name{int8-activations=true}`), each with its
    # default (a bool); given ones reach `run` as keywords (int8-activations: int8_activations).
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Pipeline:
    """A named pipeline: a textual pass list that may name dq passes and upstream passes."""

    name: str
    description: str
    elements: str


def _discover() -> tuple[dict[str, Pass], dict[str, Pipeline]]:
    passes, pipelines = {}, {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if isinstance(getattr(module, "PASS", None), Pass):
            passes[module.PASS.name] = module.PASS
        for p in getattr(module, "PIPELINES", ()):
            pipelines[p.name] = p
    return passes, pipelines


PASSES, PIPELINES = _discover()
