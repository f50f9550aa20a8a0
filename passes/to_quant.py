"""dq-to-quant: dq ops with constant scales and zero points become upstream `quant.scast` +
`quant.dcast` on a `!quant.uniform` type (per-layer, per-axis or sub-channel).

    %y = "dq.onnx_dequantize_linear"(%x, %scale, %zp) {axis = 1 : i64} : (tensor<4x2xi8>, ...) -> tensor<4x2xf32>
  becomes
    %q = quant.scast %x : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8:f32:1, {5.0e-01:3, 2.5e-01:1}>>
    %y = quant.dcast %q : tensor<4x2x!quant.uniform<i8:f32:1, {...}>> to tensor<4x2xf32>

Every dq op is read through its canonical form (dialect/canonical.py), so the four spec ops and
`dq.dequantize` convert alike. The expressed type is the op's output type; unsigned storage
(`ui8`) is `tensor.bitcast` to the signless tensor `quant.scast` takes, with a `u8` quant type.
The quant types are built with the bindings' `quant.Uniform*Type.get`. An op the quant type cannot
express is left as is, with a remark at its location saying why: float8/float4 or packed int4x4
storage, a zero point added after scaling, a scale or zero point that is not an `arith.constant`,
a scale that is not finite, positive and within the expressed type's range, a zero point outside
the storage range, ragged blocks, or sub-channel scales that the expressed type (which holds them)
cannot represent exactly.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import quant, tensor

from dequant import dialect
from dequant.dialect import constants
from dequant.dialect.elements import ELEMENTS

from . import Pass
from .queries import erase_dead
from .remarks import emit_remarks


def laid_out(values: np.ndarray, reads: tuple, rank: int) -> tuple[np.ndarray, dict] | str:
    """`values` (a scale or zero point read through `reads`) laid out along the data dims: an
    array of the data's rank (size 1 along dims it does not vary along) and {data dim: block size}."""
    for p in reversed(range(len(reads))):
        if reads[p].dim is None:
            values = np.take(values, 0, axis=p)  # only index 0 is read
    kept = [r for r in reads if r.dim is not None]
    dims = [r.dim for r in kept]
    if len(set(dims)) != len(dims):
        return "a scale or zero point reads one dim twice"
    values = np.transpose(values, np.argsort(dims))
    shape = [1] * rank
    for d, n in zip(sorted(dims), values.shape):
        shape[d] = n
    values = values.reshape(shape)
    return values, {r.dim: r.block for r in kept if shape[r.dim] != 1}


def quant_type(storage, expressed, scales: np.ndarray, zps: np.ndarray, blocks: dict):
    """The per-layer, per-axis or sub-channel `!quant.uniform` type (typed builders)."""
    flags = quant.QuantizedType.FLAG_SIGNED if storage.signed else 0
    st = ir.IntegerType.get_signless(storage.bits)
    et = expressed.ir_type()
    if not blocks:
        return quant.UniformQuantizedType.get(flags, st, et, float(scales.flat[0]), int(zps.flat[0]), storage.min, storage.max)
    if len(blocks) == 1 and set(blocks.values()) == {1}:
        (d,) = blocks
        return quant.UniformQuantizedPerAxisType.get(
            flags, st, et, [float(s) for s in scales.reshape(-1)], [int(z) for z in zps.reshape(-1)], d, storage.min, storage.max
        )
    dims = sorted(blocks)
    signless = ELEMENTS[f"i{storage.bits}"]
    return quant.UniformQuantizedSubChannelType.get(
        flags, st, et, constants.attribute(scales, expressed),
        constants.attribute(_as_signless(zps, storage), signless), dims, [blocks[d] for d in dims],
        storage.min, storage.max,
    )  # fmt: skip


def _as_signless(zps: np.ndarray, storage) -> np.ndarray:
    """Unsigned zero points as the signless values of the same bits (what the type holds)."""
    if storage.signed:
        return zps
    return np.where(zps > (storage.max >> 1), zps - (1 << storage.bits), zps)


def plan(op, d, sig):
    """(the quantized tensor type, the storage Element) of a verified dq op, or why it has none."""
    form = d.canonical(sig)
    x_name, scale_name, zp_name = (d.role(r) for r in ("data", "scale", "zero_point"))
    x, y = sig.operands[x_name], sig.result
    storage = ELEMENTS[x.elem]
    if form.unpack != "none":
        return f"packed {form.unpack} storage has no quant.uniform storage type"
    if storage.kind != "int":
        return f"{x_name} is {x.elem}: quant.uniform storage types are integers"
    if form.zero_point_mode != "subtract":
        return "a zero point added after scaling is not a quant.uniform zero point (an integer subtracted before)"
    values = d.by_role(op)
    scale = constants.read(values["scale"])
    if scale is None:
        return f"{scale_name} is not an arith.constant dense tensor"
    zp = None
    if values["zero_point"] is not None:
        zp = constants.read(values["zero_point"])
        if zp is None:
            return f"{zp_name} is not an arith.constant dense tensor"
    rank = x.rank
    laid = laid_out(np.asarray(scale, np.float64), form.scale_map, rank)
    if isinstance(laid, str):
        return laid
    scales, blocks = laid
    if zp is None:
        zps = np.zeros(scales.shape, np.int64)
    else:
        laid = laid_out(np.asarray(zp, np.int64), form.zp_map, rank)
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
    import ml_dtypes  # on first use: start-up (docs/development.md#imports)

    expressed = ELEMENTS[y.elem]
    info = ml_dtypes.finfo(expressed.dtype)
    low, high = float(info.smallest_subnormal), float(info.max)
    bad = scales[~(np.isfinite(scales) & (scales >= low) & (scales <= high))]
    if bad.size:
        return (
            f"{scale_name} {bad.flat[0]:g} is outside the quant.uniform scale range for the expressed "
            f"type {y.elem}: [{low:g}, {high:g}]"
        )
    bad = zps[(zps < storage.min) | (zps > storage.max)]
    if bad.size:
        return f"{zp_name} {int(bad.flat[0])} is outside the storage range [{storage.min}, {storage.max}] of {x.elem}"
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
        printed = _as_signless(zps, storage)
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
    element = quant_type(storage, expressed, scales, zps, blocks)
    dims = [ir.ShapedType.get_dynamic_size() if s is None else s for s in x.shape]
    return ir.RankedTensorType.get(dims, element), storage


def rewrite(op, qtype, storage) -> None:
    """Replace `op` by `quant.scast` (after a `tensor.bitcast` for unsigned storage) + `quant.dcast`.
    The bindings have no builders for quant ops: they are created generically, with typed results."""
    x, dropped = op.operands[0], list(op.operands)[1:]
    with ir.InsertionPoint(op), op.location:
        if not storage.signed:
            x = tensor.bitcast(ir.RankedTensorType.get(qtype.shape, ir.IntegerType.get_signless(storage.bits)), x)
        q = ir.Operation.create("quant.scast", results=[qtype], operands=[x]).result
        y = ir.Operation.create("quant.dcast", results=[op.results[0].type], operands=[q]).result
    op.results[0].replace_all_uses_with(y)
    op.erase()
    erase_dead(dropped)


def run(root) -> bool:
    found = dialect.verified(root)
    if found is None:
        return False
    plans = [(op, plan(op, d, sig)) for op, d, sig in found]
    emit_remarks(root, [(op, f"not converted to quant: {p}") for op, p in plans if isinstance(p, str)])
    for op, p in plans:
        if not isinstance(p, str):
            rewrite(op, *p)
    return True


PASS = Pass("dq-to-quant", "Rewrite dq ops with constant scales into upstream quant.scast + quant.dcast", run)
