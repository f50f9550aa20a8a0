"""What a test needs that a machine may lack, as pytest marks that skip with the reason: one
place per optional package (CPU features: dequant.guards and the test modules that need them)."""

from __future__ import annotations

import importlib.util

import pytest


def iree_installed() -> bool:
    """Whether IREE's compiler and runtime packages (the `iree` extra) are importable (find_spec
    of a submodule raises where its parent package is missing)."""
    try:
        return importlib.util.find_spec("iree.compiler") is not None and importlib.util.find_spec("iree.runtime") is not None
    except ImportError:
        return False


needs_iree = pytest.mark.skipif(not iree_installed(), reason="IREE is not installed (pip install 'dequant[iree]')")
