"""dq-round-bf16: each f32 -> bf16 `arith.truncf` made exact by rounding in integer ops first.

IREE 3.13's CPU codegen emulates bf16 in f32 (`iree-convert-bf16-arith-to-f32`): a `truncf` to
bf16 whose result is widened again in the same dispatch (a bf16 DequantizeLinear output read by
a Cast to float, fused into one dispatch) becomes the identity, so the value is never rounded to
bf16 (765 of 768 values differed from onnx.reference). This pass rounds the f32 value to the
nearest bf16 (ties to even) on its bits before the `truncf`:

    r = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000     (NaN kept as it is)

so the `truncf` is exact, and dropping it changes nothing. Integer ops are not folded away. An
overflow rounds to infinity, as a bf16 conversion does. For the torch-onnx-to-iree pipeline.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from . import Pass
from .queries import ops_named


def _element(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


def _like(t: ir.Type, element: ir.Type) -> ir.Type:
    return ir.VectorType.get(ir.VectorType(t).shape, element) if isinstance(t, ir.VectorType) else element


def _const(t: ir.Type, value: int) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(t, ir.VectorType):
        return arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(i32, value)))
    return arith.constant(i32, value)


def rounded(x: ir.Value) -> ir.Value:
    """The f32 value `x` rounded to the nearest bf16 value (ties to even), still f32."""
    ti = _like(x.type, ir.IntegerType.get_signless(32))
    bits = arith.bitcast(ti, x)
    lsb = arith.andi(arith.shrui(bits, _const(ti, 16)), _const(ti, 1))
    r = arith.andi(arith.addi(arith.addi(bits, _const(ti, 0x7FFF)), lsb), _const(ti, -65536))
    nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    return arith.select(nan, x, arith.bitcast(x.type, r))


def run(root) -> bool:
    for op in ops_named(root, "arith.truncf"):
        x = op.operands[0]
        if not isinstance(_element(op.results[0].type), ir.BF16Type) or not isinstance(_element(x.type), ir.F32Type):
            continue
        with ir.InsertionPoint(op), op.location:
            op.operands[0] = rounded(x)
    return True


PASS = Pass("dq-round-bf16", "Round f32 to bf16 in integer ops before each truncf (IREE emulates bf16 in f32 and drops the truncf)", run)
