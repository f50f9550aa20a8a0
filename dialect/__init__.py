"""The `dq` dialect: IRDL definition (dq.irdl.mlir) and op semantics (one module per op)."""

from __future__ import annotations

from importlib import resources

from . import canonical, ngraph, onednn, onnx, pmx
from .opdef import OpDef

OPS: dict[str, OpDef] = {d.OP.name: d.OP for d in (onnx, onednn, ngraph, pmx, canonical)}
SPEC_OPS = tuple(name for name in OPS if name != canonical.NAME)


def definition() -> str:
    """The IRDL text of the dialect."""
    return resources.files(__package__).joinpath("dq.irdl.mlir").read_text()


def register(context) -> None:
    """Load the `dq` dialect into an `mlir.ir.Context` (once per context)."""
    from mlir import ir
    from mlir.dialects import irdl

    if context.is_registered_operation(canonical.NAME):
        return
    with context:
        irdl.load_dialects(ir.Module.parse(definition()))


def dq_ops(root) -> list:
    """The dq ops under `root` (an operation), in pre-order."""
    from mlir import ir

    found = []

    def visit(op):
        if op.name in OPS:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def verify(root) -> bool:
    """Check every dq op under `root` against its spec rules; errors go to the op locations."""
    results = [OPS[op.name].verify(op) for op in dq_ops(root)]
    return all(results)
