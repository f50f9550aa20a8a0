"""What the verification rules see of an op: element types, shapes and attribute values.

The same rules check an op in IR (shapes from its tensor types, `None` for a dynamic dim) and
the numpy arrays given to the Python API (concrete shapes), so there is one source of truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .types import elem_name


@dataclass(frozen=True)
class Tensor:
    elem: str  # canonical element spelling, e.g. "i8", "f8E4M3FN"
    shape: tuple  # ints, None for a dynamic dim

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int | None:
        if any(d is None for d in self.shape):
            return None
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class Signature:
    operands: dict  # name -> Tensor | None (absent optional operand)
    result: Tensor | None
    attrs: dict  # name -> python value (int, str, bool, list, element spelling for types)
    values: dict = field(default_factory=dict)  # name -> numpy array, where the value is known


Rule = Callable[[Signature], "str | None"]


def tensor_of(type_) -> Tensor | None:
    """A `Tensor` from an MLIR ranked tensor type; None for anything else."""
    from mlir import ir

    if not isinstance(type_, ir.RankedTensorType):
        return None
    t = ir.RankedTensorType(type_)
    shape = tuple(None if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank))
    return Tensor(elem_name(t.element_type), shape)


def check(rules: list[Rule], sig: Signature) -> str | None:
    """The message of the first rule `sig` breaks, or None."""
    for rule in rules:
        message = rule(sig)
        if message:
            return message
    return None


def same(a, b) -> bool:
    """Two dims agree unless both are static and differ."""
    return a is None or b is None or a == b
