"""`linalg` and `llvm`: MLIR's Python dialect modules `mlir.dialects.linalg` and
`mlir.dialects.llvm`, each imported on the first read of one of its names.

Every module of dequant.passes is imported with the package (passes/__init__.py), and importing
these two is a cost of every dequant-opt start, also of the runs no pass of which uses them
(docs/development.md#imports). A pass imports them from here at its top
(`from .lazy import linalg`) and uses them as the modules; test/tools/test_layers.py checks that a
start loads neither.

Not `importlib.util.LazyLoader`: its stand-in module is in `sys.modules` from the start (so that
"not loaded" is told only by a private type), and Python 3.11's switches the stand-in to a plain
module before running it, so a second thread reading a name meanwhile finds none.
`importlib.import_module` waits for a load another thread has begun.
"""

from __future__ import annotations

import importlib


class LazyModule:
    """The module `name`, imported on the first read of one of its attributes."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name, self._module = name, None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (loaded)'}>"


linalg = LazyModule("mlir.dialects.linalg")
llvm = LazyModule("mlir.dialects.llvm")
