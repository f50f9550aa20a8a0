"""`dq-to-quant` numerically: upstream's lowering of the quant form against ours of the dq op.

Each case is one `dq.onnx_dequantize_linear` with constant scale and zero point, compiled twice:
(a) `dequant.jit` of the op (scale and zero point passed as arrays: the same op, our lowering);
(b) `dq-to-quant`, upstream `lower-quant-ops` (+ `convert-elementwise-to-linalg`: the per-layer form
    is elementwise arith on tensors), `canonicalize`, then the jit's own dq-to-llvm.
Both run on the same random storage values, every value of the storage type likely.

What upstream computes (LowerQuantOps, as its output IR shows): y = (T(q) - T(zp)) * T(scale), T the
expressed type (the op's output type): storage and zero point converted to T, subtracted in T, the
scale rounded to T. docs/semantics.md#arithmetic: q - zp exactly in integers, one conversion to f32, one f32 product, one
rounding to the output type. They agree bit for bit
- for f32 outputs: every 4/8/16-bit difference converts exactly, an int32 has zero point 0 so
  T(q) - 0 is the one conversion we make, and the scale is the same f32;
- for f16/bf16 outputs with a scale of the output type and 4/8-bit storage: q, zp and q - zp
  (|q - zp| <= 255) are exact in f16 and bf16, and scale * (q - zp) is exact in f32, so both round
  the exact product once.
Elsewhere they differ, and (b) is held to upstream's formula evaluated in numpy, exactly:
- an f32 scale with an f16/bf16 output is rounded to the output type before the product (two
  roundings): within 2 ulps of ours for scales in the normal range, checked too;
- 16-bit storage with f16/bf16 outputs is rounded before the subtraction, so q - zp cancels
  (q = 30001, zp = 30000 is 0 in f16): no bound relative to ours;
- int32 storage with an f16 output overflows to inf beyond 65504 before scaling.
(a) is held to the formula of docs/semantics.md#arithmetic in numpy, so both sides have a reference written from a spec.
"""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

import dequant

STORAGE = {
    "i4": (ml_dtypes.int4, -8, 7), "ui4": (ml_dtypes.uint4, 0, 15),
    "i8": (np.int8, -128, 127), "ui8": (np.uint8, 0, 255),
    "i16": (np.int16, -32768, 32767), "ui16": (np.uint16, 0, 65535),
    "i32": (np.int32, -(2**31), 2**31 - 1),
}  # fmt: skip
SIGNLESS = {"ui4": "i4", "ui8": "i8", "ui16": "i16"}
FLOATS = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
UPSTREAM_LOWERING = "builtin.module(dq-to-quant,func.func(lower-quant-ops,convert-elementwise-to-linalg),canonicalize)"

# granularity: (x shape, scale shape, attributes)
GRANULARITIES = {
    "per_tensor": ((5, 7), (), ""),
    "per_axis": ((5, 7), (7,), "axis = 1 : i64"),
    "per_axis_0": ((6, 3, 2), (6,), "axis = 0 : i64"),
    "blocked": ((4, 12), (4, 3), "axis = 1 : i64, block_size = 4 : i64"),
    "blocked_0": ((6, 2, 3), (2, 2, 3), "axis = 0 : i64, block_size = 3 : i64"),
}

# (storage, output, scale type, granularity, zero point?)
EXACT = [
    ("i8", "f32", "f32", "per_tensor", True), ("i8", "f32", "f32", "per_axis", True), ("i8", "f32", "f32", "blocked", True),
    ("ui8", "f32", "f32", "per_tensor", True), ("ui8", "f32", "f32", "per_axis_0", True), ("ui8", "f32", "f32", "blocked", True),
    ("i4", "f32", "f32", "per_axis", True), ("i4", "f32", "f32", "blocked_0", True),
    ("ui4", "f32", "f32", "per_tensor", True), ("ui4", "f32", "f32", "blocked", True),
    ("i16", "f32", "f32", "per_axis", True), ("i16", "f32", "f32", "blocked", True), ("ui16", "f32", "f32", "per_tensor", True),
    ("i32", "f32", "f32", "per_tensor", False), ("i32", "f32", "f32", "per_axis", False), ("i32", "f32", "f32", "blocked", False),
    ("i8", "f16", "f16", "per_axis", True), ("i8", "f16", "f16", "blocked", True), ("ui4", "f16", "f16", "per_tensor", True),
    ("ui8", "bf16", "bf16", "per_tensor", True), ("ui8", "bf16", "bf16", "blocked_0", True), ("i4", "bf16", "bf16", "blocked", True), ("i4", "f32", "f32", "per_axis", False),
]  # fmt: skip
ROUNDED_SCALE = [
    ("i8", "f16", "f32", "per_tensor", True), ("ui8", "f16", "f32", "per_axis", True),
    ("i4", "bf16", "f32", "per_axis_0", True), ("ui8", "bf16", "f32", "per_tensor", True),
]  # fmt: skip
ROUNDED_STORAGE = [
    ("i16", "f16", "f16", "per_tensor", True), ("i16", "f16", "f16", "blocked", True),
    ("ui16", "bf16", "bf16", "per_axis", True), ("i32", "f16", "f32", "per_tensor", False),
]  # fmt: skip


# --- the two compilations -------------------------------------------------------------------------


def _type(shape, elem: str) -> str:
    return f"tensor<{''.join(f'{n}x' for n in shape)}{elem}>"


def _literal(a: np.ndarray) -> str:
    if a.ndim == 0:
        return f"{float(a):.17e}" if a.dtype.kind == "f" or a.dtype in FLOATS.values() else str(int(a))
    return "[" + ", ".join(_literal(v) for v in a) + "]"


def dq_op(case, x: str, s: str, z: str | None) -> str:
    """The `dq.onnx_dequantize_linear` line of `case` on SSA values x, s, z."""
    storage, out, scale, g, _ = case
    xs, ss, attrs = GRANULARITIES[g]
    attrs = ", ".join(a for a in (attrs, f"output_dtype = {out}" if out != scale else "") if a)
    types = [_type(xs, storage), _type(ss, scale)] + ([_type(ss, storage)] if z else [])
    operands = ", ".join(v for v in (x, s, z) if v)
    return (
        f'%y = "dq.onnx_dequantize_linear"({operands}) {{{attrs}}} : ({", ".join(types)}) -> {_type(xs, out)}'
    )


def ours(case):
    """(a): the dq op, scale and zero point as arguments, through dequant.jit."""
    storage, out, scale, g, has_zp = case
    xs, ss, _ = GRANULARITIES[g]
    args = [f"%x: {_type(xs, storage)}", f"%s: {_type(ss, scale)}"] + ([f"%z: {_type(ss, storage)}"] if has_zp else [])
    text = (
        f"func.func @f({', '.join(args)}) -> {_type(xs, out)} {{\n"
        f"  {dq_op(case, '%x', '%s', '%z' if has_zp else None)}\n"
        f"  return %y : {_type(xs, out)}\n}}"
    )
    return dequant.jit(text, "f")


def upstream(case, scale: np.ndarray, zp: np.ndarray | None):
    """(b): the dq op with constants, dq-to-quant, upstream lower-quant-ops, then the jit. Unsigned
    storage is passed as the signless tensor quant.scast takes: the function bitcasts it to the
    dq op's unsigned type, and that bitcast cancels the one dq-to-quant inserts (MLIR 22 does not
    bufferize tensor.bitcast)."""
    storage, out, scale_elem, g, _ = case
    xs, ss, _ = GRANULARITIES[g]
    signless = SIGNLESS.get(storage, storage)
    arg = "%arg" if signless != storage else "%x"
    lines = [f"func.func @f({arg}: {_type(xs, signless)}) -> {_type(xs, out)} {{"]
    if signless != storage:
        lines.append(f"  %x = tensor.bitcast %arg : {_type(xs, signless)} to {_type(xs, storage)}")
    lines.append(f"  %s = arith.constant dense<{_literal(scale)}> : {_type(ss, scale_elem)}")
    if zp is not None:
        lines.append(f"  %z = arith.constant dense<{_literal(zp)}> : {_type(ss, storage)}")
    lines.append("  " + dq_op(case, "%x", "%s", "%z" if zp is not None else None))
    lines.append(f"  return %y : {_type(xs, out)}\n}}")
    with dequant.context(), ir.Location.unknown():
        module = ir.Module.parse("\n".join(lines))
        dequant.run_pipeline(module, UPSTREAM_LOWERING)
        text = str(module)
    assert "dq." not in text and "quant." not in text, f"not lowered by upstream:\n{text}"
    return dequant.jit(text, "f")


# --- data and references --------------------------------------------------------------------------


def data(case):
    """Random storage values, scales 2^[-8, 2] of the scale type, zero points (for sub-channel
    types, ones that print non-negative: MLIR's quant parser asserts on negative ones, and
    dq-to-quant leaves such ops alone)."""
    storage, out, scale_elem, g, has_zp = case
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    dtype, lo, hi = STORAGE[storage]
    xs, ss, _ = GRANULARITIES[g]
    x = rng.integers(lo, hi, size=xs, endpoint=True, dtype=np.int64)
    scale = (2.0 ** rng.uniform(-8, 2, size=ss)).astype(FLOATS[scale_elem])
    zp = None
    if has_zp:
        zlo, zhi = (lo, hi) if not g.startswith("blocked") else (0, hi if lo < 0 else hi // 2)
        zp = rng.integers(zlo, zhi, size=ss, endpoint=True, dtype=np.int64)
        if g.startswith("per_axis") or g.startswith("blocked"):
            zp.flat[0] = zhi  # the extreme
    return x, scale, zp


def expand(case, a: np.ndarray) -> np.ndarray:
    """A scale or zero point broadcast to x's shape, as the granularity reads it."""
    xs, ss, attrs = GRANULARITIES[case[3]]
    if a.ndim == 0:
        return np.broadcast_to(a, xs)
    if "block_size" in attrs:
        axis = int(attrs.split("axis = ")[1].split(" ")[0])
        block = int(attrs.split("block_size = ")[1].split(" ")[0])
        return np.repeat(a, block, axis=axis)[tuple(slice(0, n) for n in xs)]
    axis = int(attrs.split("axis = ")[1].split(" ")[0])
    view = [1] * len(xs)
    view[axis] = -1
    return np.broadcast_to(a.reshape(view), xs)


def onnx_formula(case, x, scale, zp) -> np.ndarray:
    """docs/semantics.md#arithmetic: exact integer difference, one conversion to f32, one f32 product, one rounding."""
    d = x - (expand(case, zp) if zp is not None else 0)
    y = d.astype(np.float32) * expand(case, scale).astype(np.float32)
    with np.errstate(over="ignore"):
        return y.astype(FLOATS[case[1]])


def upstream_formula(case, x, scale, zp) -> np.ndarray:
    """lower-quant-ops: y = (T(q) - T(zp)) * T(scale) in the expressed type T (numpy rounds each
    f16/bf16 operation once: both operands' product and difference are exact in f32)."""
    t = FLOATS[case[1]]
    with np.errstate(over="ignore", invalid="ignore"):
        q = x.astype(np.float64).astype(t)
        z = (expand(case, zp) if zp is not None else np.zeros(x.shape)).astype(np.float64).astype(t)
        s = expand(case, scale).astype(np.float64).astype(t)
        return ((q - z).astype(t) * s).astype(t)


def arrays(case, x, scale, zp):
    """The arguments of (a) and of (b)."""
    storage = case[0]
    dtype = STORAGE[storage][0]
    a = [x.astype(dtype), scale] + ([zp.astype(dtype)] if zp is not None else [])
    signless = SIGNLESS.get(storage)
    if signless is None:
        return a, [x.astype(dtype)]
    bits = {"ui4": 4, "ui8": 8, "ui16": 16}[storage]
    same_bits = np.where(x >= 1 << (bits - 1), x - (1 << bits), x)
    return a, [same_bits.astype(STORAGE[signless][0])]


def _id(case) -> str:
    return "-".join(str(c) for c in case[:4]) + ("" if case[4] else "-nozp")


# --- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", EXACT, ids=_id)
def test_upstream_lowering_is_ours_bit_for_bit(case, dql_check):
    x, scale, zp = data(case)
    a_args, b_args = arrays(case, x, scale, zp)
    a, b = ours(case)(*a_args), upstream(case, scale, zp)(*b_args)
    dql_check.same(a, onnx_formula(case, x, scale, zp))
    dql_check.same(b, a)


@pytest.mark.parametrize("case", ROUNDED_SCALE, ids=_id)
def test_rounded_scale_within_two_ulps(case, dql_check):
    """An f32 scale with an f16/bf16 output: upstream rounds it to the output type first."""
    x, scale, zp = data(case)
    a_args, b_args = arrays(case, x, scale, zp)
    a, b = ours(case)(*a_args), upstream(case, scale, zp)(*b_args)
    dql_check.same(a, onnx_formula(case, x, scale, zp))
    dql_check.same(b, upstream_formula(case, x, scale, zp))
    dql_check.within_ulps(b, a, 2)


@pytest.mark.parametrize("case", ROUNDED_STORAGE, ids=_id)
def test_rounded_storage_is_upstreams_formula(case, dql_check):
    """16-bit (and int32) storage with an f16/bf16 output: upstream rounds q and zp to the output
    type before subtracting; no bound relative to ours, so each side is held to its own formula."""
    x, scale, zp = data(case)
    a_args, b_args = arrays(case, x, scale, zp)
    a, b = ours(case)(*a_args), upstream(case, scale, zp)(*b_args)
    dql_check.same(a, onnx_formula(case, x, scale, zp))
    dql_check.same(b, upstream_formula(case, x, scale, zp))


def test_rounded_storage_cancels():
    """The documented divergence on one value: i16 q = 30001, zp = 30000, f16: ONNX gives the
    scale, upstream 0 (both round to 30000 in f16)."""
    case = ("i16", "f16", "f16", "per_tensor", True)
    x = np.full(GRANULARITIES["per_tensor"][0], 30001, np.int64)
    scale, zp = np.array(0.5, np.float16), np.array(30000, np.int64)
    a_args, b_args = arrays(case, x, scale, zp)
    assert (ours(case)(*a_args) == np.float16(0.5)).all()
    assert (upstream(case, scale, zp)(*b_args) == 0).all()

