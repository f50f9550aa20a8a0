"""`python -m dequant.dialect`: print the dq dialect's IRDL, as generated from its OpDefs."""

from mlir import ir

from . import definition

with ir.Context(), ir.Location.unknown():
    print(definition())
