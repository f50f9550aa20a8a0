"""The examples in the docstrings (each op function of `dequant.ops`, `dequant.Packed`, ...) run
as written and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

# The modules with docstring examples (the op functions' docstrings, written in dialect/<op>.py,
# reach doctest through dequant.ops.__test__).
MODULES = ["dequant.ops", "dequant.packed"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} has no docstring example: this test would pass on nothing"
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} fail (run python -m doctest -v on it)"


def test_every_op_function_has_an_example():
    from dequant import ops

    for name in ops.__test__:
        doc = getattr(ops, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"ops.{name}'s docstring has no {section} section"
