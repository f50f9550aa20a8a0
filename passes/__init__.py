"""Passes of the dq toolkit, one module per pass, and the named pipelines built from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Pass:
    """A Python-written pass: `run(op)` transforms `op` in place and returns False on failure
    (after emitting its diagnostics at the ops' locations)."""

    name: str  # command-line spelling, e.g. "dq-to-linalg"
    description: str  # one line
    run: Callable[[object], bool]


@dataclass(frozen=True)
class Pipeline:
    """A named pipeline: a textual pass list that may name dq passes and upstream passes."""

    name: str
    description: str
    elements: str


def _registry():
    from . import bf16_stores, byte_storage, c_interface, fold_nibbles, from_quant, nontemporal, normalize, strip_mine, to_linalg, to_llvm, to_quant

    passes = {p.PASS.name: p.PASS for p in (normalize, to_linalg, byte_storage, fold_nibbles, c_interface, strip_mine, nontemporal, bf16_stores, to_quant, from_quant)}
    pipelines = {to_llvm.PIPELINE.name: to_llvm.PIPELINE}
    return passes, pipelines


PASSES, PIPELINES = _registry()
