"""Differential fuzzing of the numpy API: `dequant.ops.onnx_dequantize_linear`,
`onednn_dynamic_dequantize`, `ngraph_dequantize` and `pmx_dequantize_linear`.

What it generates (case = pure function of (seed, index), `make_case`):
- an op, its storage/scale/zero-point/output types (every type each op takes), a granularity
  (ONNX per-tensor with scalar/[1] scale and zero point mixed, per-axis on every axis of ranks
  1-4 spelled positive or negative, blocked with ragged last blocks and empty axes; oneDNN
  per_tensor of any rank of ones, per_channel, per_group with `group_shape`; nGraph any set of
  axes given as a set, list, tuple or array; OpenPPL int8 and int4x4, groups on axis 0/1,
  per-tensor and per-channel, integer and float zero points), ranks 0-4, shapes with 0-size
  dims, unit dims, odd sizes; values over each type's whole range, float8 every bit pattern,
  scales with zeros, infinities, NaN and subnormals;
- in a tenth of the ONNX cases (and every case of the `wide` campaign, `make_wide_case`), a block
  of WIDE_BLOCKS (tiles of an odd count of vectors, prime blocks) over a tiny dim (1-7) or one to
  two blocks, mostly with a bf16 output or scale (`gen_onnx_wide`);
- in about a third of the cases one mutation that usually breaks a rule: a wrong dtype (dq types
  and others: int64, bool, complex, ...), a wrong shape, an odd attribute value (out of range,
  float, bool, string, huge, wrong type), a missing or extra operand, an unknown keyword, a
  non-zero int32/float8 zero point, Python scalars and lists, swapped operands, and `out=` of the
  wrong dtype or shape, non-contiguous, read-only, not an array, or overlapping an input;
- how the call is made: `dequant.ops.<op>` (default runtime), a private `Runtime(threads)` with
  `min_parallel` as low as 1 (row splits on small arrays) and in a quarter of those every call
  through the `_nt` entry (non-temporal stores), or `dequant.ops.bind` called twice with the
  inputs' values changed in between; with or without `out=`;
- where the arrays live: the heap, between random canary bytes (also unaligned), against a
  PROT_NONE guard page (before or after: a read or write out of bounds is a SIGSEGV), on pages
  made read-only (a write to an input is a SIGSEGV), non-contiguous views (strided, reversed,
  Fortran order), read-only flags, numpy scalars.

What it checks:
- `spec_check` (written here from docs/semantics.md, not from the code) decides whether the call
  is valid. Invalid: the call raises ValueError or TypeError, made no native call (the kernel
  call is counted), and left every input, the canaries and `out` byte for byte unchanged.
- Valid: the result has the right dtype and shape (is `out` when given) and matches an
  independent reference: ONNX's `onnx.reference.ReferenceEvaluator` (DequantizeLinear-25) for
  ONNX, the numpy references of test/numeric (`test_onednn.reference`, `test_ngraph.reference`,
  `test_pmx.reference`) for the others, and `onednn_per_group` below (docs/semantics.md#onednn-granularity)
  for oneDNN per_group. f32/f64 results bit for bit (a NaN matches any NaN). f16/bf16: for ONNX
  conftest.py's rule (within 1 ulp of the reference evaluator and faithfully rounded to the exact
  product, `spec_product`); for the others bit for bit, as their numeric tests hold them:
  docs/semantics.md#arithmetic rounds twice (an f32 product, then the output type), which those
  references compute exactly. Inputs and canaries unchanged; guard pages never touched.

Reproduce a case: `python test/fuzz/run.py --repro ops:SEED:INDEX [--save DIR]` prints the case and
what it found; `--save` writes the arrays (case.npz) and a standalone script (repro.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import importlib.util
import math
import mmap
import operator
import os
import sys
import traceback

import ml_dtypes
import numpy as np

sys.path[:0] = [p for p in (os.path.dirname(os.path.abspath(__file__)),) if p not in sys.path]
import fuzz_harness as harness  # noqa: E402

harness.ensure_path()

# --- element types, written from docs/semantics.md#element-types (not the product's table) -------

DT = {
    "i2": np.dtype(ml_dtypes.int2), "ui2": np.dtype(ml_dtypes.uint2), "i4": np.dtype(ml_dtypes.int4),
    "ui4": np.dtype(ml_dtypes.uint4), "i8": np.dtype(np.int8), "ui8": np.dtype(np.uint8), "i16": np.dtype(np.int16),
    "ui16": np.dtype(np.uint16), "i32": np.dtype(np.int32), "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz), "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz), "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu), "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
}  # fmt: skip
NAME_OF = {d: n for n, d in DT.items()}
OTHER_DTYPES = [np.dtype(t) for t in (np.int64, np.uint32, np.uint64, np.bool_, np.complex64, np.longdouble)]
INTS = ("i2", "ui2", "i4", "ui4", "i8", "ui8", "i16", "ui16", "i32")
MINIFLOATS = ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f4E2M1FN")
OPS = ("onnx_dequantize_linear", "onednn_dynamic_dequantize", "ngraph_dequantize", "pmx_dequantize_linear")
OPERANDS = {
    "onnx_dequantize_linear": ("x", "x_scale", "x_zero_point"),
    "onednn_dynamic_dequantize": ("src", "scales", "zps"),
    "ngraph_dequantize": ("input", "scale", "zero_point"),
    "pmx_dequantize_linear": ("X", "Scale", "ZeroPoint"),
}
ATTRS = {  # name -> (kind, default, required)
    "onnx_dequantize_linear": {"axis": ("i64", 1, False), "block_size": ("i64", 0, False), "output_dtype": ("type", None, False)},
    "onednn_dynamic_dequantize": {"qtype": ("str", "per_tensor", False), "axis": ("i64", 1, False), "group_shape": ("i64_list", None, False)},
    "ngraph_dequantize": {"type": ("type", None, True), "axes": ("i64_set", (), False)},
    "pmx_dequantize_linear": {"quant_data_type": ("str", None, True), "quant_method": ("str", "", False),
                              "quant_axis": ("i64", 1, False), "group_size": ("i64", 128, False),
                              "has_zeropoint": ("bool", False, False), "float_zeropoint": ("bool", False, False)},
}  # fmt: skip
ONNX_T1 = INTS + MINIFLOATS
ONNX_T2 = ("f32", "f16", "bf16", "f8E8M0FNU")
ONNX_T3 = ("f32", "f16", "bf16")


def _load(name: str, filename: str):
    """A module of test/numeric under a private name (conftest is not importable by name)."""
    path = os.path.join(harness.REPO, "test", "numeric", filename)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- cases -----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    op: str
    arrays: dict  # operand name -> np.ndarray (logical values) or None (absent); order = the op's
    attrs: dict  # keyword arguments (a missing key: not given)
    layouts: dict  # operand name -> layout (see Memory.place); "out" -> out's layout or None
    api: str  # "call" (dequant.ops), "runtime" (a private Runtime), "bind"
    threads: int = 0  # for api runtime/bind-on-runtime: the Runtime's threads (0: dequant.ops)
    min_parallel: int = 0
    nontemporal: bool = False  # the Runtime's calls all take the `_nt` entry (non-temporal stores)
    mutation: str = ""  # what was changed to (probably) break a rule
    extra: dict = dataclasses.field(default_factory=dict)  # extra kwargs / positional (mutations)
    values: object = None  # OpenPPL int4: the nibbles X packs (the reference reads them)


def describe(c: Case) -> str:
    def arr(v):
        if v is None:
            return "None"
        if isinstance(v, np.ndarray):
            return f"{NAME_OF.get(v.dtype, v.dtype.name)}{list(v.shape)}"
        return repr(v)[:40]

    parts = [f"{c.op}("]
    parts.append(", ".join(f"{k}={arr(v)}" + (f"@{c.layouts[k]}" if c.layouts.get(k, "heap") != "heap" else "") for k, v in c.arrays.items()))
    for k, v in c.attrs.items():
        parts.append(f", {k}={_show_attr(v)}")
    for k, v in c.extra.items():
        parts.append(f", {k}={arr(v) if isinstance(v, np.ndarray) else _show_attr(v)}")
    if c.layouts.get("out"):
        parts.append(f", out={c.layouts['out']}")
    parts.append(")")
    runtime = f"Runtime({c.threads}) min_parallel={c.min_parallel}" + (" nontemporal" if c.nontemporal else "")
    how = {"call": "dequant.ops", "runtime": runtime, "bind": "bind on " + (runtime if c.threads else "dequant.ops")}[c.api]
    return "".join(parts) + f" via {how}" + (f"; mutation: {c.mutation}" if c.mutation else "")


def _show_attr(v) -> str:
    if isinstance(v, np.dtype):
        return f"dtype({v.name})"
    if isinstance(v, type):
        return v.__name__
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()})"
    return repr(v)


def rng_for(seed: int, index: int, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([seed, index, salt, 0x0F5])


def pick(rng, items, p=None):
    return items[int(rng.choice(len(items), p=p))]


def rand_shape(rng, rank: int, max_elems: int = 3000, zero_p: float = 0.05) -> list:
    dims = []
    for _ in range(rank):
        r = rng.random()
        dims.append(1 if r < 0.25 else int(rng.integers(2, 8)) if r < 0.7 else int(rng.integers(8, 33)) if r < 0.95 else int(rng.integers(33, 200)))
    while math.prod(dims) > max_elems:
        i = int(np.argmax(dims))
        dims[i] = max(1, dims[i] // 2)
    if dims and rng.random() < zero_p:
        dims[int(rng.integers(rank))] = 0
    return dims


def rand_rank(rng, low: int = 0) -> int:
    ranks, p = [0, 1, 2, 3, 4], np.array([0.08, 0.22, 0.34, 0.2, 0.16])
    p[:low] = 0
    return int(rng.choice(ranks, p=p / p.sum()))


def rand_values(rng, name: str, shape, role: str = "data") -> np.ndarray:
    """Values of dq type `name` (or another numpy dtype) for an operand of `role`."""
    shape = tuple(shape)
    dtype = DT.get(name, None) if isinstance(name, str) else np.dtype(name)
    if name in INTS or (dtype is not None and dtype.kind in "iu"):
        info = ml_dtypes.iinfo(dtype)
        lo, hi = max(int(info.min), -(1 << 62)), min(int(info.max), 1 << 62)
        a = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
        flat = a.reshape(-1)
        if flat.size >= 2 and rng.random() < 0.5:
            flat[:2] = [lo, hi]
        return a.astype(dtype)
    if name in MINIFLOATS:
        bits = rng.integers(0, 16 if name == "f4E2M1FN" else 256, size=shape, dtype=np.uint8)
        return bits.view(DT[name])
    if name == "f8E8M0FNU":
        e = rng.integers(127 - 24, 127 + 24, size=shape, dtype=np.int64)
        special = rng.random(shape) < 0.05
        e = np.where(special, rng.choice([0, 1, 254, 255], size=shape), e)
        return e.astype(np.uint8).view(DT[name])
    if name in ("f16", "bf16", "f32", "f64") or (dtype is not None and dtype.kind == "f"):
        return rand_floats(rng, shape, dtype, top=4 if role == "zero_point" else 2)
    if dtype is not None and dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype is not None and dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j).astype(dtype)
    raise ValueError(f"no values for {name!r}")


def rand_floats(rng, shape, dtype, top: int = 2, special_p: float = 0.03) -> np.ndarray:
    shape = tuple(shape)
    mag = np.exp2(rng.uniform(top - 16, top, size=shape)) * rng.choice([-1.0, 1.0], size=shape)
    if rng.random() < 0.3:  # exact powers of two sometimes
        mag = np.exp2(np.round(np.log2(np.abs(mag)))) * np.sign(mag)
    if rng.random() < 0.5:
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 6e-8, 3.0e38, 65504.0, 1e-300], np.float64)
        mask = rng.random(shape) < special_p
        mag = np.where(mask, rng.choice(specials, size=shape), mag)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return mag.astype(dtype)


def as_type_attr(rng, name: str):
    """A dtype attribute spelled as a dtype, a type, or a string."""
    d = DT[name]
    return pick(rng, [d, d.type, d.name])


def _divisors(n: int) -> list:
    return [g for g in range(2, n + 1) if n % g == 0]


def gen_onnx(rng) -> Case:
    x_t = pick(rng, ONNX_T1)
    s_t = pick(rng, ONNX_T2, p=[0.4, 0.2, 0.2, 0.2])
    out_t = pick(rng, ONNX_T3) if (s_t == "f8E8M0FNU" or rng.random() < 0.3) else None
    gran = pick(rng, ["per_tensor", "per_axis", "blocked"], p=[0.3, 0.35, 0.35])
    r = rand_rank(rng, 0 if gran == "per_tensor" else 1)
    shape = rand_shape(rng, r)
    attrs: dict = {}
    if gran == "per_tensor":
        s_shape = pick(rng, [(), (1,)])
        z_shape = pick(rng, [(), (1,), s_shape])
        if rng.random() < 0.3:
            attrs["axis"] = int(rng.integers(-6, 6))
    else:
        a = int(rng.integers(-r, r))
        if (a % r) == 1 and r >= 2 and rng.random() < 0.5:
            pass  # the default axis 1
        else:
            attrs["axis"] = a
        d = shape[a]
        if gran == "per_axis":
            if d == 1 and rng.random() < 0.7:
                shape[a] = d = int(rng.integers(2, 9))
            s_shape = (d,)
        else:
            if d == 0:
                s = pick(rng, [0, 1])
                b = int(rng.integers(1, 9))
            elif rng.random() < 0.6:
                b = pick(rng, [1, 2, 3, 4, 5, 7, 8, 16, 32, d, d + 3])
                s = -(-d // b)
            else:  # any (S, B) ONNX's range allows
                s = int(rng.integers(1, d + 1))
                low = -(-d // s)
                high = (-(-d // (s - 1)) - 1) if s > 1 else low + 20
                b = int(rng.integers(low, max(low, min(high, low + 10)) + 1))
            attrs["block_size"] = b
            s_shape = tuple(s if i == a % r else n for i, n in enumerate(shape))
        z_shape = s_shape
    if gran != "blocked" and rng.random() < 0.15:
        attrs["block_size"] = 0
    if out_t is not None:
        attrs["output_dtype"] = as_type_attr(rng, out_t)
    x = rand_values(rng, x_t, shape)
    scale = rand_values(rng, s_t, s_shape, "scale")
    zp = onnx_zero_point(rng, x_t, z_shape) if rng.random() < 0.55 else None
    return Case("onnx_dequantize_linear", {"x": x, "x_scale": scale, "x_zero_point": zp}, attrs, {}, "call")


def onnx_zero_point(rng, x_t: str, shape) -> np.ndarray:
    """A valid ONNX zero point of x's type: zeros for int32 and the minifloats (-0.0 is zero)."""
    if x_t == "i32" or x_t in MINIFLOATS:
        zp = np.zeros(shape, DT[x_t])
        if x_t in MINIFLOATS and x_t != "f4E2M1FN" and zp.size and rng.random() < 0.3:
            zp = (-zp.astype(np.float32)).astype(DT[x_t])
        return zp
    return rand_values(rng, x_t, shape, "zero_point")


# Blocks whose tiles are an odd count of vectors (48, 80, 112, 240 bf16 values: 3, 5, 7, 15 of 16
# lanes; 96: 3 pairs; 160 f16 values: 5 permutes of 32) and prime blocks longer than a non-temporal
# tile (17, 37): what dq-vectorize once failed to compile (issue 36.3)
WIDE_BLOCKS = [17, 37, 48, 80, 96, 112, 160, 240]
WIDE_SHARE = 0.1  # of the ops campaign's ONNX cases


def gen_onnx_wide(rng) -> Case:
    """ONNX blocked in one of WIDE_BLOCKS, mostly along the last axis, the blocked dim tiny (1-7:
    the block wider than the data) or one to two blocks; mostly a bf16 output or scale."""
    x_t = pick(rng, ONNX_T1)
    s_t = pick(rng, ["bf16", "f32", "f16", "f8E8M0FNU"], p=[0.4, 0.3, 0.15, 0.15])
    out_t = "bf16" if s_t != "bf16" and rng.random() < 0.75 else pick(rng, ONNX_T3) if s_t == "f8E8M0FNU" else None
    r = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 4)) for _ in range(r)]
    a = -1 if rng.random() < 0.7 else int(rng.integers(-r, r))
    b = pick(rng, WIDE_BLOCKS)
    shape[a] = d = int(rng.integers(1, 8)) if rng.random() < 0.6 else int(rng.integers(b - 2, 2 * b + 20))
    s_shape = tuple(-(-d // b) if i == a % r else n for i, n in enumerate(shape))
    attrs = {"axis": a, "block_size": b}
    if out_t is not None:
        attrs["output_dtype"] = as_type_attr(rng, out_t)
    x, scale = rand_values(rng, x_t, shape), rand_values(rng, s_t, s_shape, "scale")
    zp = onnx_zero_point(rng, x_t, s_shape) if rng.random() < 0.4 else None
    return Case("onnx_dequantize_linear", {"x": x, "x_scale": scale, "x_zero_point": zp}, attrs, {}, "call")


def gen_onednn(rng) -> Case:
    src_t = pick(rng, ["i8", "ui8", "i4", "ui4"])
    s_t = pick(rng, ["f32", "f16", "bf16"])
    z_t = pick(rng, [None, "i8", "ui8", "i32"] if src_t in ("i8", "ui8") else [None, "i4", "ui4", "i32"])
    qtype = pick(rng, ["per_tensor", "per_channel", "per_group"])
    r = rand_rank(rng, 1 if qtype == "per_channel" else 0)
    shape = rand_shape(rng, r)
    attrs: dict = {}
    if qtype == "per_tensor":
        if rng.random() < 0.6:
            attrs["qtype"] = "per_tensor"
        s_shape = (1,) * int(rng.integers(0, 4))
        if rng.random() < 0.3:
            attrs["axis"] = int(rng.integers(-9, 9))
    elif qtype == "per_channel":
        attrs["qtype"] = qtype
        a = int(rng.integers(-r, r))
        if not ((a % r) == 1 and r >= 2 and rng.random() < 0.5):
            attrs["axis"] = a
        s_shape = (shape[a],)
    else:
        attrs["qtype"] = qtype
        groups = []
        for d in shape:
            if rng.random() < 0.5:
                groups.append(1)
            elif d == 0:
                groups.append(int(rng.integers(1, 5)))
            else:
                groups.append(pick(rng, _divisors(d) or [1]))
        attrs["group_shape"] = pick(rng, [list(groups), tuple(groups), np.array(groups, np.int64)])
        s_shape = tuple(d // g for d, g in zip(shape, groups))
    src = rand_values(rng, src_t, shape)
    scales = rand_values(rng, s_t, s_shape, "scale")
    zps = None if z_t is None else rand_values(rng, z_t, s_shape, "zero_point")
    return Case("onednn_dynamic_dequantize", {"src": src, "scales": scales, "zps": zps}, attrs, {}, "call")


def gen_ngraph(rng) -> Case:
    in_t = pick(rng, ["i8", "ui8", "i32"])
    out_t = pick(rng, ["f16", "bf16", "f32", "f64"])
    r = rand_rank(rng)
    shape = rand_shape(rng, r)
    axes = sorted(int(a) for a in range(r) if rng.random() < 0.45)
    attrs: dict = {"type": as_type_attr(rng, out_t)}
    if axes or rng.random() < 0.5:
        shuffled = list(rng.permutation(axes).astype(int)) if axes else []
        attrs["axes"] = pick(rng, [set(axes), [int(a) for a in shuffled], tuple(axes), np.array(axes, np.int64)])
    p_shape = tuple(shape[a] for a in axes)
    x = rand_values(rng, in_t, shape)
    top = -14 if in_t == "i32" else -4
    scale = rand_floats(rng, p_shape, DT[out_t], top=top + 4)
    zp = rand_values(rng, in_t, p_shape, "zero_point")
    return Case("ngraph_dequantize", {"input": x, "scale": scale, "zero_point": zp}, attrs, {}, "call")


def gen_pmx(rng) -> Case:
    pmx_pack = _pmx_pack()
    qdt = pick(rng, ["int8", "int4"])
    gran = pick(rng, ["group", "tensor", "channel"], p=[0.5, 0.25, 0.25])
    r = rand_rank(rng, 1 if (qdt == "int4" or gran != "tensor") else 0)
    qa = pick(rng, [0, 1]) if r >= 2 else 0
    if gran == "group" and r == 1:
        qa = 0
    y = rand_shape(rng, r, max_elems=2000)
    if qdt == "int4":
        y[0] = 4 * max(0, -(-y[0] // 4))
    attrs: dict = {"quant_data_type": qdt}
    if gran == "group":
        d = y[qa]
        choices = [4, 8, 2, 1, 128, 3, 16, 64]
        g = pick(rng, choices)
        if d % g:  # make the grouped dim a multiple of g
            y[qa] = d = g * max(1, d // g)
            if qdt == "int4" and qa == 0 and d % 4:
                y[0] = d = g * 4 * max(1, d // (4 * g))
        if math.prod(y) > 8000:
            g = pick(rng, [1, 2, 4])
            y[qa] = d = g * 4
        if g != 128 or rng.random() < 0.5:
            attrs["group_size"] = g
        if qa != 1 or rng.random() < 0.5:
            attrs["quant_axis"] = qa
        s_shape = tuple(n // g if i == qa else n for i, n in enumerate(y))
    else:
        attrs["group_size"] = 0
        if rng.random() < 0.3:
            attrs["quant_axis"] = qa
        if gran == "tensor":
            s_shape = pick(rng, [(), (1,), (1,) * max(1, r)])
        else:
            s_shape = pick(rng, [(y[0],), (y[0],) + (1,) * (r - 1)])
    s_t = pick(rng, ["f32", "f16"])
    zp_kind = pick(rng, ["none", "int", "f16", "f32"])
    scale = rand_floats(rng, s_shape, DT[s_t], top=2)
    zp = None
    if zp_kind != "none":
        attrs["has_zeropoint"] = True
        if zp_kind == "int":
            zp = rand_values(rng, "i8", s_shape, "zero_point")
            if rng.random() < 0.3:
                attrs["float_zeropoint"] = False
        else:
            zp = rand_floats(rng, s_shape, DT[zp_kind], top=4)
            attrs["float_zeropoint"] = pick(rng, [True, np.True_])
    elif rng.random() < 0.3:
        attrs["has_zeropoint"] = False
    if rng.random() < 0.15:
        attrs["quant_method"] = pick(rng, ["", "weight_only", "awq", "😀"])
    values = None
    if qdt == "int8":
        x = rand_values(rng, "i8", y)
    else:
        values = rng.integers(0, 16, size=tuple(y), dtype=np.int64)
        x = pmx_pack.pack_int4x4(values)
    return Case("pmx_dequantize_linear", {"X": x, "Scale": scale, "ZeroPoint": zp}, attrs, {}, "call", values=values)


GENERATORS = {"onnx_dequantize_linear": gen_onnx, "onednn_dynamic_dequantize": gen_onednn,
              "ngraph_dequantize": gen_ngraph, "pmx_dequantize_linear": gen_pmx}  # fmt: skip


_PMX_PACK = None


def _pmx_pack():
    global _PMX_PACK
    if _PMX_PACK is None:
        _PMX_PACK = _load("dequant_fuzz_pmx_pack", "pmx_pack.py")
    return _PMX_PACK


# --- mutations -----------------------------------------------------------------------------------

ODD_ATTR_VALUES = [-1, 0, 1, 2, 5, -7, 1 << 31, (1 << 63) - 1, 1 << 63, -(1 << 63), -(1 << 64), 0.5, 1.0, True, False,
                   "1", "per_axis", "", None, [1], (), np.int64(3), np.float32(2), np.dtype(np.float64), np.int8,
                   "float32", "nope", np.uint8(1), 1 + 0j]  # fmt: skip


def mutate(rng, c: Case) -> None:
    """Apply one change that usually breaks a rule (spec_check decides)."""
    names = list(c.arrays)
    kind = pick(rng, ["dtype", "shape", "attr", "attr", "drop", "extra", "kwarg", "zp-value", "out", "out", "python", "swap",
                      "bind-noncontig"])  # fmt: skip
    if kind == "dtype":
        n = pick(rng, [n for n in names if c.arrays[n] is not None])
        a = c.arrays[n]
        new = pick(rng, list(DT) + OTHER_DTYPES)
        c.arrays[n] = rand_values(rng, new, a.shape, "scale" if n == names[1] else "data")
        c.mutation = f"{n} dtype {a.dtype.name} -> {c.arrays[n].dtype.name}"
    elif kind == "shape":
        n = pick(rng, [n for n in names if c.arrays[n] is not None])
        a = c.arrays[n]
        s = list(a.shape)
        how = pick(rng, ["grow", "shrink", "add", "drop"])
        if how == "grow" and s:
            i = int(rng.integers(len(s)))
            s[i] += int(rng.integers(1, 3))
        elif how == "shrink" and s and max(s) > 0:
            i = int(np.argmax(s))
            s[i] -= 1
        elif how == "add" or not s:
            s.insert(int(rng.integers(len(s) + 1)), int(pick(rng, [1, 2, 3])))
        else:
            s.pop(int(rng.integers(len(s))))
        if c.op == "pmx_dequantize_linear" and n == "X" and c.values is not None:
            c.values = None  # a reshaped int4 X has no nibble table: the case is judged by its rules only
        c.arrays[n] = rand_values(rng, NAME_OF.get(a.dtype, a.dtype), s, "scale" if n == names[1] else "data")
        c.mutation = f"{n} shape {list(a.shape)} -> {s}"
    elif kind == "attr":
        name = pick(rng, list(ATTRS[c.op]) + ["axis"])
        value = pick(rng, ODD_ATTR_VALUES)
        if name in c.attrs or rng.random() < 0.7:
            old = c.attrs.get(name, "<absent>")
            c.attrs[name] = value
            c.mutation = f"{name} {_show_attr(old)} -> {_show_attr(value)}"
        else:
            c.attrs.pop(name, None)
            c.mutation = f"{name} removed"
    elif kind == "drop":
        n = pick(rng, names)
        c.arrays[n] = None
        c.mutation = f"{n} omitted"
    elif kind == "extra":
        c.extra["__positional__"] = np.zeros(2, np.float32)
        c.mutation = "a fourth positional array"
    elif kind == "kwarg":
        c.extra[pick(rng, ["foo", "axis_", "dtype", "zero_point_mode", names[0]])] = 1
        c.mutation = f"unexpected keyword {list(c.extra)[-1]}"
    elif kind == "zp-value":
        n = names[2]
        z = c.arrays[n]
        if z is None:
            z = np.zeros(c.arrays[names[1]].shape if c.arrays[names[1]] is not None else (), c.arrays[names[0]].dtype)
        if z.size:
            z = z.copy()
            flat = z.reshape(-1)
            k = int(rng.integers(z.size))
            if z.dtype.kind in "iu" or z.dtype in (DT["i2"], DT["ui2"], DT["i4"], DT["ui4"]):
                flat[k] = np.array(1 if int(flat[k]) != 1 else 0).astype(z.dtype)
            else:
                flat[k] = pick(rng, [1.0, np.nan, 0.5, -2.0])
        c.arrays[n] = z
        c.mutation = f"{n} non-zero value"
    elif kind == "out":
        c.layouts["out"] = pick(rng, ["wrong-dtype", "wrong-shape", "noncontig", "ro_flag", "overlap", "list", "scalar"])
        c.mutation = f"out {c.layouts['out']}"
    elif kind == "python":
        n = pick(rng, names[1:])
        a = c.arrays[n]
        if a is None:
            a = c.arrays[names[1]]
        c.arrays[n] = a.astype(np.float64).tolist() if a is not None and a.dtype.kind == "f" else (a.tolist() if a is not None else 1.0)
        if not isinstance(c.arrays[n], list):
            c.arrays[n] = [c.arrays[n]]
        c.layouts[n] = "python"
        c.mutation = f"{n} as a Python list"
    elif kind == "swap":
        i, j = 0, pick(rng, [1, 2])
        c.arrays[names[i]], c.arrays[names[j]] = c.arrays[names[j]], c.arrays[names[i]]
        if c.arrays[names[0]] is None:
            c.arrays[names[0]] = np.zeros((2,), np.int8)
        c.mutation = f"{names[i]} and {names[j]} swapped"
    else:
        c.api = "bind"
        n = pick(rng, [n for n in names if c.arrays[n] is not None])
        c.layouts[n] = "noncontig"
        c.mutation = f"bind with a non-contiguous {n}"


INPUT_LAYOUTS = ["heap", "heap", "canary", "guard_after", "guard_before", "ro_pages", "noncontig", "ro_flag", "unaligned"]
SUB_BYTE = ("i2", "ui2", "i4", "ui4", "f4E2M1FN")
PACKED_LAYOUTS = ["packed:heap", "packed:guard_after", "packed:guard_before", "packed:ro_pages", "packed:canary"]
OUT_LAYOUTS = ["heap", "canary", "guard_after", "guard_before", "unaligned"]


def make_case(seed: int, index: int) -> Case:
    """Case `index` of campaign `seed`: a pure function of both. Draws added since the first
    campaigns come from a second generator (`side`), so that the cases they do not touch stay as
    they were."""
    rng, side = rng_for(seed, index), rng_for(seed, index, 2)
    op = pick(rng, OPS)
    c = GENERATORS[op](rng)
    if op == "onnx_dequantize_linear" and side.random() < WIDE_SHARE:
        c = gen_onnx_wide(side)
    return _called(rng, side, c, mutate_p=0.35)


def make_wide_case(seed: int, index: int) -> Case:
    """Case `index` of a `wide` campaign (`gen_onnx_wide`), valid, half of those on a private
    Runtime through the `_nt` entry."""
    rng = rng_for(seed, index)
    return _called(rng, rng, gen_onnx_wide(rng), mutate_p=0.0, nontemporal_p=0.5)


def _called(rng, side, c: Case, mutate_p: float, nontemporal_p: float = 0.25) -> Case:
    """`c` with its arrays' layouts, how it is called (`api`, threads, `_nt`), `out=`, and with
    probability `mutate_p` a mutation."""
    for n, a in c.arrays.items():
        if a is None:
            continue
        layout = pick(rng, INPUT_LAYOUTS)
        if a.ndim == 0 and rng.random() < 0.3:
            layout = "scalar"
        if NAME_OF.get(a.dtype) in SUB_BYTE and rng.random() < 0.4:  # dequant.Packed, read in place
            layout = pick(rng, PACKED_LAYOUTS)
        c.layouts[n] = layout
    c.api = pick(rng, ["call", "runtime", "bind"], p=[0.4, 0.35, 0.25])
    if c.api == "bind":
        for n in c.layouts:
            if c.layouts[n] == "noncontig":
                c.layouts[n] = "heap"
        if rng.random() < 0.6:
            c.threads = pick(rng, [1, 2, 3, 4, 7])
    elif c.api == "runtime":
        c.threads = pick(rng, [1, 2, 3, 4, 7])
    if c.threads:
        c.min_parallel = pick(rng, [1, 1, 2, 5, 64, 1000])
    c.layouts["out"] = pick(rng, OUT_LAYOUTS) if rng.random() < 0.5 else None
    if rng.random() < mutate_p:
        mutate(rng, c)
    c.nontemporal = bool(c.threads) and side.random() < nontemporal_p
    return c


# --- the rules, from docs/semantics.md -------------------------------------------------------------


class Invalid(Exception):
    """The call breaks a rule: it must raise ValueError or TypeError."""


class Ambiguous(Exception):
    """The documentation leaves the outcome open: either an error or a correct result."""


def _i64(name, v) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise Invalid(f"{name} must be an integer, got {v!r}")
    try:
        i = operator.index(v)
    except TypeError:
        raise Invalid(f"{name} must be an integer, got {v!r}") from None
    if not -(1 << 63) <= i < (1 << 63):
        raise Invalid(f"{name} does not fit in i64")
    return i


def attr_values(op: str, attrs: dict) -> dict:
    """The attributes' values with defaults (docs/semantics.md#python-api-conventions); Invalid
    for a value not of the attribute's kind."""
    out = {}
    for name, (kind, default, required) in ATTRS[op].items():
        v = attrs.get(name)
        if v is None:
            if required:
                raise Invalid(f"{name} is required")
            out[name] = default
            continue
        if kind == "i64":
            out[name] = _i64(name, v)
        elif kind == "bool":
            if not isinstance(v, (bool, np.bool_)):
                raise Invalid(f"{name} must be a bool")
            out[name] = bool(v)
        elif kind == "str":
            if not isinstance(v, str):
                raise Invalid(f"{name} must be a string")
            out[name] = v
        elif kind == "type":
            try:
                d = np.dtype(v)
            except (TypeError, ValueError):
                raise Invalid(f"{name}: not a dtype") from None
            if d not in NAME_OF:
                raise Invalid(f"{name}: {d} is no dq type")
            out[name] = NAME_OF[d]
        else:
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise Invalid(f"{name} must be a sequence of integers")
            items = [_i64(name, i) for i in v]
            if kind == "i64_set":
                if len(set(items)) != len(items):
                    raise Invalid(f"{name} repeats an axis")
                items = sorted(items)
            out[name] = items
    return out


@dataclasses.dataclass
class T:
    """An operand as the rules see it."""

    elem: str
    shape: tuple
    value: np.ndarray

    @property
    def rank(self):
        return len(self.shape)


def spec_check(c: Case, given: dict, out, bind: bool) -> tuple[dict, str]:
    """(attribute values, output dq type) of a valid call; raises Invalid or Ambiguous."""
    names = OPERANDS[c.op]
    if "__positional__" in c.extra:
        raise Invalid("too many arrays")
    unknown = [k for k in c.extra if k != "__positional__"] + [k for k in c.attrs if k not in ATTRS[c.op]]
    if unknown:
        raise Invalid(f"unknown keyword {unknown[0]}")
    ops = {}
    for n in names:
        v = given[n]
        if v is None:
            if n == names[2] and c.op != "ngraph_dequantize":
                ops[n] = None
                continue
            raise Invalid(f"{n} missing")
        if _is_packed(v):
            a = c.arrays[n]
            ops[n] = T(NAME_OF[a.dtype], tuple(a.shape), a)
            continue
        if bind and not isinstance(v, np.generic) and not (isinstance(v, np.ndarray) and v.flags.c_contiguous):
            raise Invalid(f"bind: {n} not a C-contiguous array")
        a = np.asarray(v)
        if a.dtype not in NAME_OF:
            raise Invalid(f"{n} dtype {a.dtype} is no dq type")
        ops[n] = T(NAME_OF[a.dtype], tuple(a.shape), a)
    attrs = attr_values(c.op, c.attrs)
    out_elem, out_shape = RULES[c.op](ops, attrs)
    check_out(out, out_elem, out_shape, given)
    return attrs, out_elem


def _is_packed(v) -> bool:
    return type(v).__name__ == "Packed" and hasattr(v, "data")


def check_out(out, out_elem, out_shape, given) -> None:
    """docs/semantics.md#python-api-conventions, `out=`."""
    if out is None:
        return
    if not isinstance(out, np.ndarray):
        raise Invalid("out is not an array")
    if out.dtype != DT[out_elem] or tuple(out.shape) != tuple(out_shape) or not out.flags.c_contiguous:
        raise Invalid("out of the wrong dtype, shape or layout")
    if not out.flags.writeable:
        raise Invalid("out is read-only")
    for n, v in given.items():
        if _is_packed(v):
            v = v.data
        if isinstance(v, np.ndarray) and np.may_share_memory(out, v):
            if v.flags.c_contiguous:
                raise Invalid(f"out overlaps {n}")
            raise Ambiguous(f"out overlaps the non-contiguous {n} (which is copied before the call)")


def rules_onnx(o: dict, a: dict):
    x, s, z = o["x"], o["x_scale"], o["x_zero_point"]
    if x.elem not in ONNX_T1 or s.elem not in ONNX_T2:
        raise Invalid("x not T1 or x_scale not T2")
    if z is not None and z.elem != x.elem:
        raise Invalid("x_zero_point type differs from x")
    out = a["output_dtype"]
    if out is not None and out not in ONNX_T3:
        raise Invalid("output_dtype not T3")
    if out is None and s.elem == "f8E8M0FNU":
        raise Invalid("e8m0 scale without output_dtype")
    b, r = a["block_size"], x.rank
    if b < 0:
        raise Invalid("negative block_size")
    gran = "blocked" if b > 0 else "per_tensor" if (s.rank == 0 or s.shape == (1,)) else "per_axis"
    if gran == "blocked" and s.rank != r:
        raise Invalid("blocked scale rank")
    if gran != "blocked" and s.rank > 1:
        raise Invalid("scale rank > 1 without block_size")
    if gran != "per_tensor":
        if not -r <= a["axis"] <= r - 1:
            raise Invalid("axis out of range")
        ax = a["axis"] % r
        if gran == "per_axis" and s.shape[0] != x.shape[ax]:
            raise Invalid("per-axis scale length")
        if gran == "blocked":
            if any(i != ax and si != d for i, (d, si) in enumerate(zip(x.shape, s.shape))):
                raise Invalid("blocked scale dims")
            d, si = x.shape[ax], s.shape[ax]
            if not (d == 0 and si == 0):
                low = math.ceil(d / si) if si else math.inf
                high = math.ceil(d / (si - 1)) - 1 if si > 1 else math.inf
                if not low <= b <= high:
                    raise Invalid("block_size out of ONNX's range")
    if z is not None:
        if not (gran == "per_tensor" and (z.rank == 0 or z.shape == (1,))) and z.shape != s.shape:
            raise Invalid("zero point shape")
        if (x.elem == "i32" or x.elem in MINIFLOATS) and np.any(np.asarray(z.value, np.float64) != 0):
            raise Invalid("non-zero int32/float8/float4 zero point")
    return out or s.elem, x.shape


def rules_onednn(o: dict, a: dict):
    x, s, z = o["src"], o["scales"], o["zps"]
    if x.elem not in ("i8", "ui8", "i4", "ui4") or s.elem not in ("f32", "f16", "bf16"):
        raise Invalid("src or scales type")
    if z is not None and z.elem not in (("i8", "ui8", "i32") if x.elem in ("i8", "ui8") else ("i4", "ui4", "i32")):
        raise Invalid("zps type")
    q, g, r = a["qtype"], a["group_shape"], x.rank
    if q not in ("per_tensor", "per_channel", "per_group"):
        raise Invalid("qtype")
    if (q == "per_group") != (g is not None):
        raise Invalid("group_shape with a qtype other than per_group, or per_group without it")
    for t in (s, z):
        if t is None:
            continue
        if q == "per_tensor" and any(d != 1 for d in t.shape):
            raise Invalid("per_tensor with more than one element")
        if q == "per_channel":
            if not -r <= a["axis"] <= r - 1:
                raise Invalid("axis out of range")
            if t.rank != 1 or t.shape[0] != x.shape[a["axis"] % r]:
                raise Invalid("per_channel shape")
        if q == "per_group":
            if len(g) != r or any(k < 1 for k in g) or any(k > 1 and n % k for n, k in zip(x.shape, g)):
                raise Invalid("group_shape")
            if t.shape != tuple(n // k for n, k in zip(x.shape, g)):
                raise Invalid("per_group shape")
    if q == "per_channel" and not -r <= a["axis"] <= r - 1:
        raise Invalid("axis out of range")
    return s.elem, x.shape


def rules_ngraph(o: dict, a: dict):
    x, s, z, t = o["input"], o["scale"], o["zero_point"], a["type"]
    if t not in ("f16", "bf16", "f32", "f64"):
        raise Invalid("type")
    if z.elem != x.elem or x.elem not in ("i8", "ui8", "i32") or s.elem != t:
        raise Invalid("element types")
    axes = a["axes"]
    if any(not 0 <= k < x.rank for k in axes):
        raise Invalid("axis out of range")
    if s.shape != z.shape or s.shape != tuple(x.shape[k] for k in axes):
        raise Invalid("scale/zero point shape")
    return t, x.shape


def rules_pmx(o: dict, a: dict):
    x, s, z = o["X"], o["Scale"], o["ZeroPoint"]
    q = a["quant_data_type"]
    if q not in ("int8", "int4") or x.elem != {"int8": "i8", "int4": "i16"}[q]:
        raise Invalid("quant_data_type / X type")
    if q == "int4" and x.rank == 0:
        raise Invalid("int4 X of rank 0")
    if s.elem not in ("f32", "f16"):
        raise Invalid("Scale type")
    has, flt = a["has_zeropoint"], a["float_zeropoint"]
    if has != (z is not None) or (flt and not has):
        raise Invalid("has_zeropoint / ZeroPoint / float_zeropoint")
    if z is not None:
        if z.elem not in (("f16", "f32") if flt else ("i8",)):
            raise Invalid("ZeroPoint type")
        if z.shape != s.shape:
            raise Invalid("ZeroPoint shape")
    y = (4 * x.shape[0],) + x.shape[1:] if q == "int4" else x.shape
    qa, g = a["quant_axis"], a["group_size"]
    if qa not in (0, 1) or g < 0:
        raise Invalid("quant_axis / group_size")
    if g:
        if qa >= len(y) or y[qa] % g:
            raise Invalid("group")
        if s.shape != tuple(n // g if i == qa else n for i, n in enumerate(y)):
            raise Invalid("grouped Scale shape")
    elif not all(d == 1 for d in s.shape):
        if not (y and s.rank in (1, len(y)) and s.shape[0] == y[0] and all(d == 1 for d in s.shape[1:])):
            raise Invalid("Scale neither per-tensor nor per-channel")
    return s.elem, y


RULES = {"onnx_dequantize_linear": rules_onnx, "onednn_dynamic_dequantize": rules_onednn,
         "ngraph_dequantize": rules_ngraph, "pmx_dequantize_linear": rules_pmx}  # fmt: skip


# --- references ----------------------------------------------------------------------------------



def reference_block_size(x, attrs) -> int:
    """The block size given to the references: a block longer than the blocked dim reads one
    scale for the whole dim, as a block of the dim's length does, and the references repeat each
    scale block_size times (2^63 - 1 does not fit in memory)."""
    b = attrs["block_size"]
    if b <= 0:
        return b
    d = np.shape(x)[attrs["axis"] % np.ndim(x)]
    return min(b, max(d, 1))

class References:
    """The independent references (loaded once per worker)."""

    def __init__(self):
        self.conftest = _load("dequant_fuzz_conftest", "conftest.py")
        self.onednn = _load("dequant_fuzz_test_onednn", "test_onednn.py")
        self.ngraph = _load("dequant_fuzz_test_ngraph", "test_ngraph.py")
        self.pmx = _load("dequant_fuzz_test_pmx", "test_pmx.py")
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator

        self.TensorProto, self.helper, self.Evaluator = TensorProto, helper, ReferenceEvaluator

    def onnx(self, x, scale, zp, attrs, out_elem):
        """DequantizeLinear-25 by the reference evaluator. Per-tensor scales and zero points are
        given as scalars (the same values: the evaluator's own per-tensor reading)."""
        h, TP = self.helper, self.TensorProto
        b = reference_block_size(x, attrs)
        per_tensor = b == 0 and (scale.ndim == 0 or scale.shape == (1,))
        if per_tensor:
            scale = scale.reshape(())
            zp = None if zp is None else zp.reshape(())
        if zp is not None and NAME_OF[x.dtype] in MINIFLOATS:
            zp = None  # zero (a rule); the evaluator ignores it but fails on an empty one
        arrays = {"x": x, "x_scale": scale}
        if zp is not None:
            arrays["x_zero_point"] = zp
        inputs = [h.make_tensor_value_info(k, h.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in arrays.items()]
        node_attrs = {"axis": 1 if per_tensor else attrs["axis"], "block_size": b}
        if attrs["output_dtype"] is not None:
            node_attrs["output_dtype"] = h.np_dtype_to_tensor_dtype(DT[out_elem])
        node = h.make_node("DequantizeLinear", list(arrays), ["y"], **node_attrs)
        graph = h.make_graph([node], "dq", inputs, [h.make_tensor_value_info("y", h.np_dtype_to_tensor_dtype(DT[out_elem]), x.shape)])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 25)])
        with np.errstate(all="ignore"):
            (y,) = self.Evaluator(model).run(None, arrays)
        return np.asarray(y).reshape(x.shape)

    def run(self, c: Case, values: dict, attrs: dict, out_elem: str) -> np.ndarray:
        names = OPERANDS[c.op]
        x, s, z = (None if values[n] is None else np.asarray(values[n]) for n in names)
        with np.errstate(all="ignore"):
            if c.op == "onnx_dequantize_linear":
                return self.onnx(x, s, z, attrs, out_elem)
            if c.op == "onednn_dynamic_dequantize":
                if attrs["qtype"] == "per_group":
                    group_reference = getattr(self.onednn, "group_reference", None)
                    if group_reference is not None:
                        return group_reference(x, s, z, list(attrs["group_shape"]), s.dtype)
                    return onednn_per_group(x, s, z, attrs["group_shape"])
                y = self.onednn.reference(x, s, z, qtype=attrs["qtype"], axis=attrs["axis"])
                return np.asarray(y, np.float32).astype(s.dtype)
            if c.op == "ngraph_dequantize":
                return self.ngraph.reference(x, s, z, type=DT[out_elem], axes=attrs["axes"])
            q = attrs["quant_data_type"]
            if q == "int4":
                v = c.values if c.values is not None else unpack_int4x4(x)
            else:
                v = x
            return self.pmx.reference(v, s, z, quant_data_type=q, quant_axis=attrs["quant_axis"],
                                      group_size=attrs["group_size"], float_zeropoint=attrs["float_zeropoint"])  # fmt: skip

    def compare(self, op: str, got: np.ndarray, want: np.ndarray, c: Case, values: dict, attrs: dict) -> str | None:
        """None if `got` passes; else what differs."""
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"result {got.dtype}{list(got.shape)}, reference {want.dtype}{list(want.shape)}"
        if op == "onnx_dequantize_linear" and got.dtype in (DT["f16"], DT["bf16"]):
            ct = self.conftest
            names = OPERANDS[op]
            try:
                ct.assert_within_ulps(got, want, 1)
                with np.errstate(all="ignore"):
                    exact = ct.spec_product(values[names[0]], values[names[1]], values[names[2]],
                                            axis=attrs["axis"], block_size=reference_block_size(values[names[0]], attrs))  # fmt: skip
                    ct.assert_faithful(got, exact)
            except AssertionError as e:
                return str(e).splitlines()[0] + " " + " ".join(str(e).splitlines()[1:3])
            return None
        return bits_differ(got, want)


def bits_differ(got: np.ndarray, want: np.ndarray) -> str | None:
    """None when equal bit for bit (signed zeros distinguished), a NaN matching any NaN."""
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    gn, wn = np.isnan(g64), np.isnan(w64)
    carrier = np.dtype(f"uint{8 * got.dtype.itemsize}")
    bad = (gn != wn) | ((got.view(carrier) != want.view(carrier)) & ~gn & ~wn)
    if not bad.any():
        return None
    where = [tuple(int(i) for i in w) for w in np.argwhere(bad)[:3]]
    shown = ", ".join(f"at {w}: got {got[w]!r} want {want[w]!r}" for w in where)
    return f"{int(bad.sum())} of {bad.size} elements differ from the reference ({shown})"


def pack_bytes(values: np.ndarray, rng=None) -> np.ndarray:
    """docs/semantics.md#packed-sub-byte-data: element j of the flattened tensor in bits
    (j mod k) * w .. of byte j // k (k = 8 / w); the padding bits of the last byte random (they
    are ignored when read) when `rng` is given."""
    w = {"i2": 2, "ui2": 2, "i4": 4, "ui4": 4, "f4E2M1FN": 4}[NAME_OF[values.dtype]]
    k = 8 // w
    flat = values.reshape(-1).view(np.uint8).astype(np.uint16) & ((1 << w) - 1)
    n = -(-flat.size // k)
    padded = np.zeros(n * k, np.uint16)
    padded[: flat.size] = flat
    if rng is not None and padded.size > flat.size:
        padded[flat.size :] = rng.integers(0, 1 << w, size=padded.size - flat.size)
    data = np.zeros(n, np.uint16)
    for j in range(k):
        data |= padded[j::k] << (j * w)
    return data.astype(np.uint8)


def unpack_int4x4(X) -> np.ndarray:
    """docs/semantics.md#openppl-int4x4-packing: nibble k (bits 4k..4k+3) of X[i, ...] is row 4i+k."""
    u = np.asarray(X).view(np.uint16).astype(np.int64)
    rows = np.stack([(u >> (4 * k)) & 0xF for k in range(4)], axis=1)
    return rows.reshape((4 * u.shape[0],) + u.shape[1:])


def onednn_per_group(src, scales, zps, group_shape) -> np.ndarray:
    """oneDNN per_group from docs/semantics.md#onednn-granularity: element i of a grouped dim
    reads group floor(i / G); d = src - zps exact (i64), one conversion to f32, one f32
    multiplication, one rounding to the scales' type."""
    src = np.asarray(src)
    d = src.astype(np.int64)

    def expand(v):
        v = np.asarray(v)
        for axis, g in enumerate(group_shape):
            v = np.repeat(v, g, axis=axis)
        return v.reshape(src.shape)

    if zps is not None:
        d = d - expand(np.asarray(zps).astype(np.int64))
    s32 = expand(np.asarray(scales).astype(np.float32))
    return (d.astype(np.float32) * s32).astype(np.asarray(scales).dtype)


# --- memory: where the arrays live ----------------------------------------------------------------

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_NONE, PROT_READ, PROT_RW = 0, mmap.PROT_READ, mmap.PROT_READ | mmap.PROT_WRITE


class Block:
    """A buffer holding one array (and maybe another overlapping it), with bytes around it that
    must not change: (readable region start, end) of `mem` snapshot before the call."""

    def __init__(self, mem, lo: int, hi: int, address: int | None = None, ro_pages: tuple | None = None):
        self.mem, self.lo, self.hi, self.address, self.ro_pages = mem, lo, hi, address, ro_pages

    def snapshot(self) -> bytes:
        if isinstance(self.mem, np.ndarray):
            return self.mem.tobytes(order="A")
        return bytes(memoryview(self.mem)[self.lo : self.hi])

    def protect(self, prot: int) -> None:
        if self.ro_pages:
            start, length = self.ro_pages
            if _libc.mprotect(self.address + start, length, prot):
                raise OSError(ctypes.get_errno(), "mprotect")


class Memory:
    """The arrays of one case, placed as their layouts say; checks that nothing but `out` changed."""

    def __init__(self, rng):
        self.rng = rng
        self.blocks: list = []  # (role, Block)
        self.out_region = None  # (block, start, end): bytes of the block that are out's

    def _mmap(self, nbytes: int, guard: str):
        data_pages = max(1, -(-nbytes // PAGE))
        mm = mmap.mmap(-1, (data_pages + 2) * PAGE)
        holder = (ctypes.c_char * len(mm)).from_buffer(mm)
        address = ctypes.addressof(holder)
        del holder
        fill = self.rng.integers(0, 256, size=data_pages * PAGE, dtype=np.uint8).tobytes()
        mm[PAGE : PAGE + data_pages * PAGE] = fill
        for page in (0, (data_pages + 1) * PAGE):
            if _libc.mprotect(address + page, PAGE, PROT_NONE):
                raise OSError(ctypes.get_errno(), "mprotect")
        start = PAGE if guard == "before" else PAGE + data_pages * PAGE - nbytes
        return mm, address, start, (PAGE, PAGE + data_pages * PAGE)

    def place(self, values: np.ndarray, layout: str, role: str):
        """An array (or object) with `values` in the given layout."""
        if layout == "python":
            return values
        values = np.asarray(values)
        if layout.startswith("packed:") and NAME_OF.get(values.dtype) not in SUB_BYTE:
            layout = layout.split(":", 1)[1]  # a mutation changed the dtype: plain
        if layout.startswith("packed:"):
            from dequant import Packed

            data = self.place(pack_bytes(values, self.rng), layout.split(":", 1)[1], role)
            return Packed(data, values.dtype, values.shape)
        if layout == "scalar":
            return values[()] if values.ndim == 0 else values.copy()
        nbytes = values.nbytes
        if layout in ("heap", "ro_flag"):
            a = values.copy()
            if layout == "ro_flag":
                a.setflags(write=False)
            self.blocks.append((role, Block(a, 0, nbytes)))
            return a
        if layout in ("canary", "unaligned"):
            pre = 64 + (1 if layout == "unaligned" and values.itemsize > 1 else 0)
            buf = bytearray(self.rng.integers(0, 256, size=pre + nbytes + 64, dtype=np.uint8).tobytes())
            a = np.frombuffer(buf, values.dtype, count=values.size, offset=pre).reshape(values.shape)
            a[...] = values
            self.blocks.append((role, Block(buf, 0, len(buf))))
            return a
        if layout in ("guard_after", "guard_before", "ro_pages"):
            mm, address, start, (lo, hi) = self._mmap(nbytes, "before" if layout == "guard_before" else "after")
            a = np.frombuffer(mm, values.dtype, count=values.size, offset=start).reshape(values.shape)
            a[...] = values
            block = Block(mm, lo, hi, address, (lo, hi - lo) if layout == "ro_pages" else None)
            block.protect(PROT_READ)
            self.blocks.append((role, block))
            return a
        if layout == "noncontig":
            how = int(self.rng.integers(3))
            if values.ndim == 0:
                base = a = values.copy()
            elif how == 0:
                base = np.empty(values.shape[:-1] + (2 * values.shape[-1] + 1,), values.dtype)
                base.reshape(-1).view(np.uint8)[:] = self.rng.integers(0, 256, size=base.nbytes, dtype=np.uint8)
                a = base[..., 1::2]
                a[...] = values
            elif how == 1:
                base = values[::-1].copy()
                a = base[::-1]
            else:
                base = a = np.asfortranarray(values)
            self.blocks.append((role, Block(base, 0, base.nbytes)))
            return a
        raise ValueError(f"unknown layout {layout}")

    def place_out(self, layout: str, dtype, shape, inputs: dict):
        """`out` in `layout` (valid ones, and the mutations' wrong ones)."""
        shape = tuple(shape)
        if layout == "list":
            return np.zeros(shape).tolist()
        if layout == "scalar":
            return np.zeros((), dtype)[()]
        if layout == "wrong-dtype":
            dtype = pick(self.rng, [d for d in (DT["f32"], DT["f16"], DT["bf16"], DT["f64"], np.dtype(np.int32)) if d != dtype])
        if layout == "wrong-shape":
            shape = shape + (1,) if self.rng.random() < 0.5 or not shape else shape[:-1] + (shape[-1] + 1,)
        if layout == "overlap":
            arrays = [(n, a) for n, a in inputs.items() if isinstance(a, np.ndarray) and a.size and a.flags.c_contiguous and a.base is None]
            nbytes = math.prod(shape) * dtype.itemsize
            if arrays and nbytes:
                n, a = arrays[int(self.rng.integers(len(arrays)))]
                shift = int(self.rng.integers(0, max(1, min(nbytes, a.nbytes)))) // a.itemsize * a.itemsize
                buf = bytearray(max(nbytes, shift + a.nbytes) + 64)
                out = np.frombuffer(buf, dtype, count=math.prod(shape), offset=0).reshape(shape)
                twin = np.frombuffer(buf, a.dtype, count=a.size, offset=shift).reshape(a.shape)
                twin[...] = a
                inputs[n] = twin  # the input now lives inside out's memory
                self.blocks = [(r, b) for r, b in self.blocks if r != n]
                self.blocks.append((n, Block(buf, 0, len(buf))))
                self.out_region = None
                return out
            layout = "heap"
        if layout == "noncontig":
            base = np.zeros(shape + (2,), dtype)
            return base[..., 0]
        if layout == "ro_flag":
            a = np.zeros(shape, dtype)
            a.setflags(write=False)
            return a
        values = np.zeros(shape, dtype)
        values.reshape(-1).view(np.uint8)[:] = self.rng.integers(0, 256, size=values.nbytes, dtype=np.uint8)
        place = layout if layout in OUT_LAYOUTS + ["wrong-dtype", "wrong-shape"] else "heap"
        if place in ("wrong-dtype", "wrong-shape"):
            place = "canary"
        out = self.place(values, place, "out")
        role, block = self.blocks[-1]
        start = (np.asarray(out).__array_interface__["data"][0] - _address_of(block)) if out.size else 0
        self.out_region = (block, start, start + out.nbytes)
        return out

    def snapshot(self) -> list:
        return [(role, b, b.snapshot()) for role, b in self.blocks]

    def changed(self, before: list, out_written: bool) -> list:
        """Roles whose memory changed: an input's buffer, or the bytes around `out` (or out
        itself when it must not have been written)."""
        bad = []
        for role, b, old in before:
            new = b.snapshot()
            if new == old:
                continue
            if role == "out" and out_written and self.out_region is not None:
                block, s, e = self.out_region
                lo = s - b.lo
                hi = e - b.lo
                if new[:lo] == old[:lo] and new[hi:] == old[hi:]:
                    continue
                bad.append("bytes around out")
                continue
            bad.append(role)
        return bad

    def unprotect(self):
        for _, b in self.blocks:
            b.protect(PROT_RW)

    def protect(self):
        for _, b in self.blocks:
            b.protect(PROT_READ)


def _address_of(block: Block) -> int:
    if block.address is not None:
        return block.address
    mem = block.mem
    if isinstance(mem, np.ndarray):
        return mem.__array_interface__["data"][0]
    return ctypes.addressof((ctypes.c_char * len(mem)).from_buffer(mem))


# --- running a case --------------------------------------------------------------------------------


class Fuzzer:
    """The ops fuzzer in a worker (fuzz_harness.py): one `run` per case."""

    kind, make = "ops", staticmethod(make_case)

    def __init__(self, workdir: str = ""):
        import dequant
        from dequant import ops
        from dequant.runtime import NONTEMPORAL_MIN_BYTES, Runtime

        self.dequant, self.ops, self.Runtime = dequant, ops, Runtime
        self.nontemporal_min_bytes = NONTEMPORAL_MIN_BYTES
        self.workdir = workdir
        self.refs = References()
        self.runtimes: dict = {}
        self.native_calls = 0
        template = getattr(ops, "CallTemplate", None)
        if template is not None and hasattr(template, "call"):  # count native calls (none for a bad call)
            original = template.call
            fuzzer = self

            def counted(self_, *args, **kwargs):
                fuzzer.native_calls += 1
                return original(self_, *args, **kwargs)

            template.call = counted

    def describe(self, seed: int, index: int) -> str:
        return describe(self.make(seed, index))

    def function(self, c: Case):
        if not c.threads:
            return getattr(self.ops, c.op)
        rt = self.runtimes.get(c.threads)
        if rt is None:
            rt = self.runtimes[c.threads] = self.Runtime(c.threads)
        rt.min_parallel = c.min_parallel
        rt.nontemporal_min_bytes = 0 if c.nontemporal else self.nontemporal_min_bytes
        return self.ops.function(c.op, rt)

    def run(self, seed: int, index: int, verbose: bool = False) -> dict:
        c = self.make(seed, index)
        if self.workdir:
            with harness.captured(os.path.join(self.workdir, "case.out"), os.path.join(self.workdir, "case.err")):
                return self.execute(c, seed, index, verbose)
        return self.execute(c, seed, index, verbose)

    def execute(self, c: Case, seed: int, index: int, verbose: bool = False) -> dict:
        rng = rng_for(seed, index, 1)
        memory = Memory(rng)
        names = OPERANDS[c.op]
        given = {n: (None if c.arrays[n] is None else memory.place(c.arrays[n], c.layouts.get(n, "heap"), n)) for n in names}
        out_layout = c.layouts.get("out")
        try:  # the expected output type and shape, to make `out`
            spec_attrs, out_elem = spec_check(c, given, None, False)
            out_dtype, out_shape = DT[out_elem], _out_shape(c, given)
        except (Invalid, Ambiguous):
            out_dtype, out_shape = DT["f32"], np.shape(c.arrays[names[0]]) if isinstance(c.arrays[names[0]], np.ndarray) else ()
        out = None if out_layout is None else memory.place_out(out_layout, out_dtype, out_shape, given)
        bind = c.api == "bind"
        try:
            spec_attrs, out_elem = spec_check(c, given, out, bind)
            verdict, reason = "valid", ""
        except Invalid as e:
            verdict, reason = "invalid", str(e)
        except Ambiguous as e:
            verdict, reason = "ambiguous", str(e)
        values = {n: (None if c.arrays[n] is None else _values_of(c, n, given[n])) for n in names}
        record = {"class": verdict if not c.mutation else f"{verdict}-mutated", "finding": None}
        if verbose:
            print(f"case: {describe(c)}\nrules: {verdict}{': ' + reason if reason else ''}", flush=True)
        fn = self.function(c)
        positional = [given[n] for n in names]
        if "__positional__" in c.extra:
            positional.append(c.extra["__positional__"])
        kwargs = dict(c.attrs)
        kwargs.update({k: v for k, v in c.extra.items() if k != "__positional__"})
        before = memory.snapshot()
        self.native_calls = 0
        result = error = None
        try:
            if bind:
                bound = self.ops.bind(fn, *positional, out=out, **kwargs)
                result = bound()
            else:
                result = fn(*positional, out=out, **kwargs)
        except Exception as e:  # noqa: BLE001 - judged below
            error = e
        if verbose:
            print(f"call: {'raised ' + type(error).__name__ + ': ' + str(error) if error else 'returned ' + _brief(result)}", flush=True)
        problems = []
        if error is not None:
            message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
            if verdict == "valid":
                problems.append(f"a valid call raised {message}")
            elif not isinstance(error, (ValueError, TypeError)):
                problems.append(f"a bad call raised {message} (not ValueError/TypeError)")
            if "native" in str(error) or self.native_calls:
                problems.append(f"an error came after a native call ({self.native_calls} calls): {message}")
            changed = memory.changed(before, out_written=False)
            if changed:
                problems.append(f"a failed call wrote {', '.join(changed)}")
        else:
            if verdict == "invalid":
                problems.append(f"a bad call was accepted ({reason})")
            else:
                problems += self.check_result(c, result, out, values, memory, before, spec_attrs, out_elem)
                if bind and not problems:
                    problems += self.rebind(c, bound, given, out, memory, spec_attrs, out_elem, rng)
        record["finding"] = problems[0] if problems else None
        if problems:
            record["detail"] = "\n".join(problems[1:] + ([f"rules: {verdict} {reason}"] if reason else []))
        memory.unprotect()
        return record

    def check_result(self, c, result, out, values, memory, before, attrs, out_elem) -> list:
        problems = []
        if out is not None and result is not out:
            problems.append("the result is not the given out")
        if not isinstance(result, np.ndarray):
            return problems + [f"the result is a {type(result).__name__}"]
        try:
            want = self.refs.run(c, values, attrs, out_elem)
        except Exception as e:  # noqa: BLE001 - the reference could not run this case
            raise RuntimeError(f"reference failed: {type(e).__name__}: {e}") from e
        diff = self.refs.compare(c.op, np.asarray(result), want, c, values, attrs)
        if diff:
            problems.append(diff)
        changed = memory.changed(before, out_written=True)
        if changed:
            problems.append(f"the call wrote {', '.join(changed)}")
        return problems

    def rebind(self, c, bound, given, out, memory, attrs, out_elem, rng) -> list:
        """New values in the bound arrays (shapes, dtypes and zero-point rules kept), call again."""
        names = OPERANDS[c.op]
        memory.unprotect()
        changed_names = []
        for n in names[:2]:
            a = given[n]
            if _is_packed(a) and a.size:
                new = rand_values(rng, NAME_OF[c.arrays[n].dtype], c.arrays[n].shape)
                a.data[...] = pack_bytes(new)
                c.arrays[n] = new
                changed_names.append(n)
                continue
            if not isinstance(a, np.ndarray) or not a.flags.writeable or not a.size:
                continue
            if c.op == "pmx_dequantize_linear" and n == "X" and c.values is not None:
                c.values = rng.integers(0, 16, size=c.values.shape, dtype=np.int64)
                a[...] = _pmx_pack().pack_int4x4(c.values) if c.values.size else a
            else:
                a[...] = rand_values(rng, NAME_OF[a.dtype], a.shape, "scale" if n == names[1] else "data")
            changed_names.append(n)
        memory.protect()
        values = {n: (None if given[n] is None else _values_of(c, n, given[n])) for n in names}
        before = memory.snapshot()
        try:
            result = bound()
        except Exception as e:  # noqa: BLE001
            return [f"the second bound call raised {type(e).__name__}: {e}"]
        problems = self.check_result(c, result, out, values, memory, before, attrs, out_elem)
        return [f"second bound call (new values in {', '.join(changed_names)}): {p}" for p in problems]

    def repro(self, seed: int, index: int, save: str | None = None, verbose: bool = True) -> int:
        c = self.make(seed, index)
        if save:
            save_case(c, f"{self.kind}:{seed}:{index}", save)
        r = self.execute(c, seed, index, verbose=True)
        print(f"finding: {r['finding']}" if r["finding"] else "no finding")
        if r.get("detail"):
            print(r["detail"])
        return 1 if r["finding"] else 0


class WideFuzzer(Fuzzer):
    """The `wide` campaign: ONNX blocks wider than the data, of odd vector counts or prime, mostly
    bf16, half through the `_nt` entry (`make_wide_case`). CI runs a fixed count of its cases
    (test_fuzz.py), so that these shapes are drawn every run whatever the ops campaign's budget
    reaches."""

    kind, make = "wide", staticmethod(make_wide_case)


def _values_of(c: Case, name: str, given) -> np.ndarray:
    """What the call computes from: a copy of the array given, the logical values of a Packed."""
    if _is_packed(given):
        return np.array(c.arrays[name], copy=True)
    return np.array(np.asarray(given), copy=True)


def _out_shape(c: Case, given: dict) -> tuple:
    names = OPERANDS[c.op]
    x = c.arrays[names[0]] if _is_packed(given[names[0]]) else np.asarray(given[names[0]])
    if c.op == "pmx_dequantize_linear" and c.attrs.get("quant_data_type") == "int4" and x.ndim:
        return (4 * x.shape[0],) + x.shape[1:]
    return x.shape


def _brief(v) -> str:
    if isinstance(v, np.ndarray):
        return f"{v.dtype}{list(v.shape)}"
    return type(v).__name__


def save_case(c: Case, case_id: str, directory: str) -> None:
    """case.npz (the arrays) and repro.py (a standalone call) in `directory`."""
    os.makedirs(directory, exist_ok=True)
    arrays = {n: a for n, a in c.arrays.items() if isinstance(a, np.ndarray)}
    np.savez(os.path.join(directory, "case.npz"), **{n: np.frombuffer(a.tobytes(), np.uint8) for n, a in arrays.items()})
    lines = [
        f'"""Case {case_id}: {describe(c)}"""',
        "import os, ml_dtypes, numpy as np",
        "from dequant import ops",
        "from dequant.runtime import Runtime",
        "here = os.path.dirname(os.path.abspath(__file__))",
        "npz = np.load(os.path.join(here, 'case.npz'))",
    ]
    for n, a in arrays.items():
        dt = NAME_OF.get(a.dtype, a.dtype.name)
        numpy_dtype = f"np.dtype({a.dtype.name!r})" if a.dtype.name in np.sctypeDict else f"ml_dtypes.{_ml_name(a.dtype)}"
        lines.append(f"{n} = npz[{n!r}].view({numpy_dtype}).reshape({tuple(a.shape)!r})  # {dt}")
    for n, a in c.arrays.items():
        if a is not None and not isinstance(a, np.ndarray):
            lines.append(f"{n} = {a!r}")
    fn = f"ops.{c.op}" if not c.threads else f"ops.function({c.op!r}, Runtime({c.threads}))"
    if c.threads:
        lines.append(f"f = {fn}\nf.runtime.min_parallel = {c.min_parallel}")
        if c.nontemporal:
            lines.append("f.runtime.nontemporal_min_bytes = 0  # every call through the `_nt` entry")
        fn = "f"
    args = ", ".join(n if c.arrays[n] is not None else "None" for n in OPERANDS[c.op])
    kw = ", ".join(f"{k}={_py(v)}" for k, v in list(c.attrs.items()) + [(k, v) for k, v in c.extra.items() if k != "__positional__"])
    call = f"{fn}({args}{', ' + kw if kw else ''})"
    if c.api == "bind":
        call = f"ops.bind({fn}, {args}{', ' + kw if kw else ''})()"
    lines.append(f"# layouts in the fuzzer: {c.layouts}; mutation: {c.mutation or 'none'}")
    lines.append(f"print({call})")
    with open(os.path.join(directory, "repro.py"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _ml_name(d: np.dtype) -> str:
    return {DT[k]: v for k, v in {"i2": "int2", "ui2": "uint2", "i4": "int4", "ui4": "uint4", "f8E4M3FN": "float8_e4m3fn",
            "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E5M2": "float8_e5m2", "f8E5M2FNUZ": "float8_e5m2fnuz",
            "f4E2M1FN": "float4_e2m1fn", "f8E8M0FNU": "float8_e8m0fnu", "bf16": "bfloat16"}.items()}[d]  # fmt: skip


def _py(v) -> str:
    if isinstance(v, np.dtype):
        return f"ml_dtypes.{_ml_name(v)}" if v in (DT[k] for k in ("bf16", "f8E8M0FNU")) else f"np.{v.name}"
    if isinstance(v, type):
        return f"ml_dtypes.{v.__name__}" if v.__module__.startswith("ml_dtypes") else f"np.{v.__name__}"
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()!r})"
    if isinstance(v, np.generic):
        return f"np.{type(v).__name__}({v.item()!r})"
    return repr(v)
