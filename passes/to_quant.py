"""dq-to-quant: dq ops with constant scales and zero points become upstream `quant.scast` +
`quant.dcast` on a `!quant.uniform` type (per-layer, per-axis or sub-channel).

    %y = "dq.onnx_dequantize_linear"(%x, %scale, %zp) {axis = 1 : i64} : (tensor<4x2xi8>, ...) -> tensor<4x2xf32>
  becomes
    %q = quant.scast %x : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8:f32:1, {5.0e-01:3, 2.5e-01:1}>>
    %y = quant.dcast %q : tensor<4x2x!quant.uniform<i8:f32:1, {...}>> to tensor<4x2xf32>

Every dq op is read through its canonical form (dialect/canonical.py), so the four spec ops and
`dq.dequantize` convert alike. The expressed type is the op's output type; unsigned storage
(`ui8`) is `tensor.bitcast` to the signless tensor `quant.scast` takes, with a `u8` quant type.
An op the quant type cannot express is left as is, with a remark at its location saying why:
float8/float4 or packed int4x4 storage, a zero point added after scaling, a scale or zero point
that is not an `arith.constant`, a scale that is not finite, positive and within the expressed
type's range, a zero point outside the storage range, ragged blocks, or sub-channel scales that
the expressed type (which holds them) cannot represent exactly.

The Python bindings can only emit errors, so a remark is emitted by upstream's
`transform.debug.emit_remark_at`, run by the transform interpreter on a copy of the function
(`emit_remarks`): a true remark-severity diagnostic at the op's location, seen by
`--verify-diagnostics` as `expected-remark`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from mlir import ir, passmanager, rewrite
from mlir.dialects import tensor

from dequant import dialect
from dequant.dialect import canonical
from dequant.dialect.opdef import constant_value
from dequant.dialect.signature import Signature
from dequant.dialect.types import ELEMS, elem_name

from . import Pass

REMARK_TAG = "dq.remark"  # marks an op, in the copy emit_remarks makes, with its remark's index


# --- what the op says, as a quant type -----------------------------------------------------------


def map_entries(m: ir.AffineMap) -> tuple | None:
    """The canonical entries ("dim", d), ("block", d, b), ("zero",) of a map, or None."""
    out = []
    for expr in m.results:
        if isinstance(expr, ir.AffineDimExpr):
            out.append(("dim", expr.position))
        elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0:
            out.append(("zero",))
        elif (
            isinstance(expr, ir.AffineFloorDivExpr)
            and isinstance(expr.lhs, ir.AffineDimExpr)
            and isinstance(expr.rhs, ir.AffineConstantExpr)
        ):
            out.append(("block", ir.AffineDimExpr(expr.lhs).position, ir.AffineConstantExpr(expr.rhs).value))
        else:
            return None
    return tuple(out)


def form_of(op, sig: Signature) -> canonical.Form | None:
    """The canonical form of a verified dq op (None if a `dq.dequantize` map is not canonical)."""
    d = dialect.OPS[op.name]
    if d.canonical is not None:
        return d.canonical(sig)
    scale_map, zero_point_map = (map_entries(sig.attrs[k]) for k in ("scale_map", "zero_point_map"))
    if scale_map is None or zero_point_map is None:
        return None
    return canonical.Form(scale_map, zero_point_map, sig.attrs["zero_point_mode"], sig.attrs["unpack"])


def blocked(values: np.ndarray, entries: tuple, rank: int) -> tuple[np.ndarray, dict] | str:
    """`values` (a scale or zero point read through `entries`) laid out along the data dims: an
    array of the data's rank (size 1 along dims it does not vary along) and {data dim: block size}."""
    for p in reversed(range(len(entries))):
        if entries[p][0] == "zero":
            values = np.take(values, 0, axis=p)  # only index 0 is read
    kept = [e for e in entries if e[0] != "zero"]
    dims = [e[1] for e in kept]
    if len(set(dims)) != len(dims):
        return "a scale or zero point reads one dim twice"
    values = np.transpose(values, np.argsort(dims))
    shape = [1] * rank
    for d, n in zip(sorted(dims), values.shape):
        shape[d] = n
    values = values.reshape(shape)
    return values, {e[1]: 1 if e[0] == "dim" else e[2] for e in kept if shape[e[1]] != 1}


def exact_values(value: ir.Value) -> np.ndarray | None:
    """`constant_value`, exact for the float types numpy cannot view (bf16, float8): for those it
    reads printed decimals (shortest for the type, not the value) and hex bit patterns as numbers,
    so MLIR's own folder widens the constant to f64 instead (NaN stays not finite)."""
    values = constant_value(value)
    t = ir.RankedTensorType(value.type)
    e = ELEMS.get(elem_name(t.element_type))
    if values is None or e is None or e.kind != "float" or e.name in ("f16", "f32", "f64"):
        return values
    wide = ir.RankedTensorType.get(t.shape, ir.F64Type.get(t.context))
    with t.context, ir.Location.unknown():
        module = ir.Module.parse(
            f"func.func @f() -> {wide} {{\n  %c = arith.constant {value.owner.attributes['value']}\n"
            f"  %w = arith.extf %c : {t} to {wide}\n  return %w : {wide}\n}}"
        )
        passmanager.PassManager.parse("builtin.module(func.func(canonicalize))").run(module.operation)
        folded = module.body.operations[0].regions[0].blocks[0].operations[0]
        if folded.name != "arith.constant":
            return None
        return constant_value(folded.result)


def _float(v: float) -> str:
    """A float literal the quant parser reads back to the same f64."""
    return f"{v:.17e}"


def _nested(scales: np.ndarray, zps: np.ndarray) -> str:
    if scales.ndim == 0:
        return f"{_float(float(scales))}:{int(zps)}"
    return "{" + ", ".join(_nested(s, z) for s, z in zip(scales, zps)) + "}"


def quant_type(storage, expressed: str, scales: np.ndarray, zps: np.ndarray, blocks: dict) -> str:
    """The `!quant.uniform` spelling of a per-layer, per-axis or sub-channel type."""
    st = f"{'i' if storage.signed else 'u'}{storage.bits}"
    if not blocks:
        return f"!quant.uniform<{st}:{expressed}, {_float(float(scales.flat[0]))}:{int(zps.flat[0])}>"
    if len(blocks) == 1 and set(blocks.values()) == {1}:
        (d,) = blocks
        pairs = ", ".join(f"{_float(float(s))}:{int(z)}" for s, z in zip(scales.reshape(-1), zps.reshape(-1)))
        return f"!quant.uniform<{st}:{expressed}:{d}, {{{pairs}}}>"
    dims = ", ".join(f"{d}:{b}" for d, b in sorted(blocks.items()))
    return f"!quant.uniform<{st}:{expressed}:{{{dims}}}, {_nested(scales, zps)}>"


def plan(op) -> tuple[ir.Type, object] | str:
    """(the quantized tensor type, the storage Elem) for a dq op, or why it has no quant form."""
    d = dialect.OPS[op.name]
    sig = d.signature(op)
    if d.check(sig):
        return "the op breaks its spec rules"
    form = form_of(op, sig)
    if form is None:
        return "scale_map or zero_point_map is not made of dims, dims floordiv constants and zeros"
    x_name, scale_name, zp_name = d.operands
    x, y = sig.operands[x_name], sig.result
    storage = ELEMS.get(x.elem)
    if form.unpack != "none":
        return f"packed {form.unpack} storage has no quant.uniform storage type"
    if storage is None or storage.kind != "int":
        return f"{x_name} is {x.elem}: quant.uniform storage types are integers"
    if form.zero_point_mode != "subtract":
        return "a zero point added after scaling is not a quant.uniform zero point (an integer subtracted before)"
    operands = dict(zip(d.operands, op.operands))
    scale = exact_values(operands[scale_name])
    if scale is None:
        return f"{scale_name} is not an arith.constant dense tensor"
    zp = None
    if zp_name in operands:
        zp = constant_value(operands[zp_name])
        if zp is None:
            return f"{zp_name} is not an arith.constant dense tensor"
    rank = x.rank
    laid = blocked(np.asarray(scale, np.float64), form.scale_map, rank)
    if isinstance(laid, str):
        return laid
    scales, blocks = laid
    if zp is None:
        zps = np.zeros(scales.shape, np.int64)
    else:
        laid = blocked(np.asarray(zp, np.float64), form.zero_point_map or form.scale_map, rank)
        if isinstance(laid, str):
            return laid
        zps, zp_blocks = laid
        if zp_blocks and not blocks:
            scales, blocks = np.broadcast_to(scales, zps.shape), zp_blocks
        elif zp_blocks != blocks and zp_blocks:
            return f"{zp_name} varies along other dims or blocks than {scale_name}"
        zps = np.broadcast_to(zps, scales.shape).astype(np.int64)
    return _checked_type(storage, y, scales, zps, blocks, x, scale_name, zp_name)


def _checked_type(storage, y, scales, zps, blocks, x, scale_name, zp_name):
    """The quantized tensor type, after the checks quant's type verifier would fail (its `get`
    asserts) or that it does not make; or why there is none."""
    expressed = ELEMS[y.elem]
    info = ml_dtypes.finfo(expressed.dtype)
    low, high = float(info.smallest_subnormal), float(info.max)
    bad = scales[~(np.isfinite(scales) & (scales >= low) & (scales <= high))]
    if bad.size:
        return (
            f"{scale_name} {bad.flat[0]:g} is outside the quant.uniform scale range for the expressed "
            f"type {y.elem}: [{low:g}, {high:g}]"
        )
    lo = -(1 << (storage.bits - 1)) if storage.signed else 0
    hi = (1 << (storage.bits - 1)) - 1 if storage.signed else (1 << storage.bits) - 1
    bad = zps[(zps < lo) | (zps > hi)]
    if bad.size:
        return f"{zp_name} {int(bad.flat[0])} is outside the storage range [{lo}, {hi}] of {x.elem}"
    for dim, b in blocks.items():
        size, n = x.shape[dim], scales.shape[dim]
        if size is not None and size != n * b and b == 1:
            return f"dim {dim} has {size} elements and {n} scales: quant.uniform needs one scale per index"
        if size is not None and size != n * b:
            return (
                f"ragged blocks: dim {dim} has {size} elements, not {n} blocks of {b}; "
                "quant.uniform sub-channel blocks must tile the dim"
            )
    if blocks and not (len(blocks) == 1 and set(blocks.values()) == {1}):
        printed = zps if storage.signed else np.where(zps > hi >> 1, zps - (1 << storage.bits), zps)
        if (printed < 0).any():  # held in the signless storage type and printed signed
            i = int(np.argmax(printed < 0))
            return (
                f"the sub-channel zero point {int(zps.flat[i])} prints as {int(printed.flat[i])}, and MLIR's quant "
                "parser asserts on negative sub-channel zero points: the type would not survive printing"
            )
        exact = scales.astype(expressed.dtype).astype(np.float64) == scales
        if not exact.all():
            v = float(scales[~exact].flat[0])
            return (
                f"{scale_name} {v!r} is not exactly representable in {y.elem}: a sub-channel quant.uniform "
                "holds its scales in the expressed type"
            )
    text = quant_type(storage, y.elem, scales, zps, blocks)
    try:
        element = ir.Type.parse(text)
    except ir.MLIRError as e:  # the quant parser's own verdict
        return f"quant.uniform rejects {text}: {e.error_diagnostics[0].message if e.error_diagnostics else e}"
    dims = [ir.ShapedType.get_dynamic_size() if s is None else s for s in x.shape]
    return ir.RankedTensorType.get(dims, element), storage


# --- the pattern ---------------------------------------------------------------------------------


def dq_to_quant(op, rewriter) -> bool | None:
    """A dq op with a quant form becomes `quant.scast` (+ `tensor.bitcast` for unsigned storage)
    and `quant.dcast`; others are left alone (their remarks are emitted by `run`)."""
    found = plan(op)
    if isinstance(found, str):
        return True
    qtype, storage = found
    x = op.operands[0]
    with rewriter.ip, op.location:
        if not storage.signed:
            signless = ir.RankedTensorType.get(qtype.shape, ir.IntegerType.get_signless(storage.bits))
            x = tensor.bitcast(signless, x)
        q = ir.Operation.create("quant.scast", results=[qtype], operands=[x]).result
        y = ir.Operation.create("quant.dcast", results=[op.results[0].type], operands=[q]).result
    rewriter.replace_op(op, [y])
    return None


def patterns(context) -> rewrite.RewritePatternSet:
    s = rewrite.RewritePatternSet(context)
    for name in dialect.OPS:
        s.add(name, dq_to_quant)
    return s


# --- remarks -------------------------------------------------------------------------------------


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def emit_remarks(root, remarks: list) -> None:
    """Emit `remarks` [(op, message)] as remark diagnostics at the ops' locations.

    The bindings offer only `Location.emit_error`, so upstream's `transform.debug.emit_remark_at`
    emits them: `root` (the op the pass runs on) is copied into a scratch module with each op
    tagged by its remark's index, and the transform interpreter runs one `emit_remark_at` each.
    The diagnostics reach the context's handlers; the IR under `root` is not changed."""
    if not remarks:
        return
    body = "\n".join(
        f"    %m{i} = transform.structured.match attributes {{{REMARK_TAG} = {i} : i64}} in %root"
        f" : (!transform.any_op) -> !transform.any_op\n"
        f"    transform.debug.emit_remark_at %m{i}, {_string(m)} : !transform.any_op"
        for i, (_, m) in enumerate(remarks)
    )
    script = (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
        f"{body}\n    transform.yield\n  }}\n}}"
    )
    with root.context, ir.Location.unknown():
        scratch = ir.Module.parse(script)
        i64 = ir.IntegerType.get_signless(64)
        for i, (op, _) in enumerate(remarks):
            op.attributes[REMARK_TAG] = ir.IntegerAttr.get(i64, i)
        try:
            root.clone(ip=ir.InsertionPoint.at_block_begin(scratch.body))
        finally:
            for op, _ in remarks:
                del op.attributes[REMARK_TAG]
        pm = passmanager.PassManager.parse("builtin.module(transform-interpreter)")
        pm.enable_verifier(False)  # the copy may call functions it does not hold
        pm.run(scratch.operation)


def run(op) -> bool:
    if not dialect.verify(op):
        return False
    remarks = []
    for found in dialect.dq_ops(op):
        why = plan(found)
        if isinstance(why, str):
            remarks.append((found, f"not converted to quant: {why}"))
    emit_remarks(op, remarks)
    rewrite.apply_patterns_and_fold_greedily(op, patterns(op.context).freeze())
    return True


PASS = Pass("dq-to-quant", "Rewrite dq ops with constant scales into upstream quant.scast + quant.dcast", run)
