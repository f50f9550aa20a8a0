"""What the verification rules see of an op: element types, shapes and attribute values.

The same rules check an op in IR (shapes from its tensor types, `None` for a dynamic dim) and
the numpy arrays given to the Python API (concrete shapes), so there is one source of truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mlir import ir

from .elements import name_of


@dataclass(frozen=True)
class Tensor:
    elem: str  # element name, e.g. "i8", "f8E4M3FN" (see elements.py)
    shape: tuple  # ints, None for a dynamic dim

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass
class Signature:
    operands: dict  # name -> Tensor | None (absent optional operand)
    result: Tensor | None
    attrs: dict  # name -> python value (int, str, bool, list, element name for types)
    values: dict = field(default_factory=dict)  # name -> numpy array, where the value is known


Rule = Callable[[Signature], "str | None"]


def tensor_of(type_) -> Tensor | None:
    """A `Tensor` from an MLIR ranked tensor type (None for anything else). An element type outside
    the dq table keeps its printed spelling, for the rules' messages (which reject it)."""
    if not isinstance(type_, ir.RankedTensorType):
        return None
    t = ir.RankedTensorType(type_)
    elem = name_of(t.element_type) or str(t.element_type)
    return Tensor(elem, tuple(None if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)))


def check(rules, sig: Signature) -> str | None:
    """The message of the first rule `sig` breaks, or None."""
    for rule in rules:
        message = rule(sig)
        if message:
            return message
    return None


def same(a, b) -> bool:
    """Two dims agree unless both are static and differ."""
    return a is None or b is None or a == b


def same_shape(a: tuple, b: tuple) -> bool:
    """Two shapes agree: equal ranks, every dim agreeing (`same`)."""
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def show(shape, braces: bool = False) -> str:
    """A shape as the messages print it: [4, ?, 2], or {4,?,2} as nGraph prints shapes."""
    dims = ["?" if d is None else str(d) for d in shape]
    return "{" + ",".join(dims) + "}" if braces else "[" + ", ".join(dims) + "]"
