"""Packed sub-byte data (docs/semantics.md#packed-sub-byte-data): `dequant.Packed` and `pack`
against onnx's own packing, and every dequantize of packed data against references that never
see dequant's unpacking: ONNX DequantizeLinear through onnx's reference evaluator on a model
whose initializers onnx packed itself (TensorProto raw_data), opset 25 for int2/uint2; oneDNN's
s4/u4 against the formula. Also: the kernels read the bytes in place (no allocation of the
logical size on the call path), through dequant.ops, bind, row splits and dequant.jit."""

from __future__ import annotations

import tracemalloc

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import dequant
from dequant import Packed, ops
from dequant.runtime import Runtime
from exact import assert_exact

SUB_BYTE = {
    "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4, "float4e2m1": ml_dtypes.float4_e2m1fn,
    "int2": ml_dtypes.int2, "uint2": ml_dtypes.uint2,
}  # fmt: skip
SHAPES = [(), (1,), (7,), (2, 5), (4, 64), (3, 5, 3), (2, 3, 4, 6)]


def values(rng, dtype, shape) -> np.ndarray:
    """Random values of a sub-byte type, every bit pattern possible (float4: all 16)."""
    if np.dtype(dtype) == np.dtype(ml_dtypes.float4_e2m1fn):
        return rng.integers(0, 16, shape).astype(np.uint8).view(dtype)
    info = ml_dtypes.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)


def onnx_bytes(a: np.ndarray) -> np.ndarray:
    """The packed bytes onnx writes for `a` (its TensorProto raw_data)."""
    return np.frombuffer(numpy_helper.from_array(a).raw_data, np.uint8)


# --- the Packed type ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_pack_is_onnxs_packing_and_unpack_inverts_it(name, shape):
    rng = np.random.default_rng([len(name), len(shape)])
    a = values(rng, SUB_BYTE[name], shape)
    p = dequant.pack(a)
    assert p.data.dtype == np.uint8 and np.array_equal(p.data, onnx_bytes(a))
    assert p.shape == a.shape and p.dtype == a.dtype and p.nbytes == -(-a.size * p.element.bits // 8)
    back = p.unpack()
    assert back.dtype == a.dtype and back.shape == a.shape
    assert np.array_equal(back.view(np.uint8) & 0xF, a.view(np.uint8) & 0xF) if name == "float4e2m1" else np.array_equal(back, a)


@pytest.mark.parametrize("name", ["int4", "uint4", "int2"])
def test_from_onnx_reads_raw_and_int32_data_without_unpacking(name):
    a = values(np.random.default_rng(3), SUB_BYTE[name], (3, 5))
    t = numpy_helper.from_array(a, "w")
    p = Packed.from_onnx(t)
    assert np.array_equal(p.data, onnx_bytes(a)) and p.shape == (3, 5)
    t32 = TensorProto(name="w", data_type=t.data_type, dims=[3, 5])  # onnx.proto: int32_data holds the packed bytes
    t32.int32_data.extend(onnx_bytes(a).astype(np.int32).tolist())
    assert np.array_equal(Packed.from_onnx(t32).data, p.data)


def test_packed_constructor_checks_its_parts():
    with pytest.raises(ValueError, match="Packed data: 15 i4 elements take 8 packed bytes, got 7"):
        Packed(np.zeros(7, np.uint8), ml_dtypes.int4, (3, 5))
    with pytest.raises(ValueError, match="Packed dtype must be int4, uint4, float4_e2m1fn, int2 or uint2"):
        Packed(np.zeros(4, np.uint8), np.int8, (4,))
    with pytest.raises(ValueError, match="1-D array of bytes"):
        Packed(np.zeros((2, 4), np.uint8), ml_dtypes.int4, (4, 4))
    p = Packed(bytes([0x21, 0x03]), ml_dtypes.int4, (3,))  # from an immutable bytes object, no copy
    assert np.array_equal(p.unpack(), np.array([1, 2, 3], ml_dtypes.int4))


@pytest.mark.parametrize("shape", [(2.7, 8), (2, 8.0), (True, 16), ("2", 8), 16, None], ids=str)
def test_packed_shape_must_be_integers(shape):
    """Issue 36.4: a shape of floats, bools or strings, or not a sequence, is refused; (2.7, 8)
    was read as (2, 8)."""
    with pytest.raises(ValueError, match="Packed shape must be a sequence of integers"):
        Packed(np.zeros(8, np.uint8), ml_dtypes.int4, shape)
    assert Packed(np.zeros(8, np.uint8), ml_dtypes.int4, (np.int64(2), 8)).shape == (2, 8)


@pytest.mark.parametrize("field, value", [("shape", (1 << 16,)), ("shape", (1 << 12, 1 << 16)), ("data", np.zeros(1, np.uint8)),
                                          ("dtype", np.dtype(np.int8)), ("element", None)])  # fmt: skip
def test_packed_fields_cannot_be_set(field, value):
    """Issue 36.2: a Packed's fields are checked against each other once, and cannot be set
    after: `p.shape = (1 << 16,)` on 2 bytes read 33,918 values past the buffer, (1 << 12, 1 << 16)
    killed the process, a new dtype reached MLIR. The Packed still computes what it did."""
    x = np.array([1, -2, 3, -4], ml_dtypes.int4)
    p = dequant.pack(x)
    with pytest.raises(AttributeError, match=f"Packed is a fixed value: its {field} cannot be set"):
        setattr(p, field, value)
    with pytest.raises(AttributeError, match=f"its {field} cannot be deleted"):
        delattr(p, field)
    assert_exact(ops.onnx_dequantize_linear(p, np.float32(2)), x.astype(np.float32) * 2)
    assert p.shape == (4,) and p.data.size == 2


@pytest.mark.parametrize("entry", [256, -1, 1 << 20])
def test_from_onnx_refuses_int32_data_that_is_not_a_byte(entry):
    """Issue 36.4: int32_data holds one packed byte per entry; one outside 0-255 was wrapped."""
    t = TensorProto(name="w", data_type=TensorProto.INT4, dims=[4])
    t.int32_data.extend([0x21, entry])
    with pytest.raises(ValueError, match=f"tensor 'w': int32_data holds one packed byte per entry \\(0 to 255\\), got {entry} at index 1"):
        Packed.from_onnx(t)


# --- ONNX DequantizeLinear on packed data, against onnx.reference ------------------------------------


def onnx_reference(x, scale, zp, opset, **attrs) -> np.ndarray:
    """onnx's reference evaluator on a model whose inputs are initializers packed by onnx."""
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (("x", x), ("s", scale), ("z", zp)) if v is not None]
    node = helper.make_node("DequantizeLinear", [t.name for t in inits], ["y"], **attrs)
    out = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.asarray(scale).dtype), None)
    model = helper.make_model(helper.make_graph([node], "g", [], [out], inits), opset_imports=[helper.make_opsetid("", opset)])
    (y,) = ReferenceEvaluator(model).run(None, {})
    return y


GRANULARITIES = [
    ("per-tensor", (5, 7), {}, ()),
    ("per-axis-0", (5, 7), {"axis": 0}, (5,)),
    ("per-axis-last-odd", (4, 7), {"axis": 1}, (7,)),
    ("blocked-last", (6, 64), {"axis": 1, "block_size": 32}, (6, 2)),
    ("blocked-ragged", (3, 10), {"axis": 1, "block_size": 4}, (3, 3)),
    ("blocked-first", (8, 6), {"axis": 0, "block_size": 3}, (3, 6)),
    ("rank-3-odd-rows", (2, 3, 5), {"axis": -1, "block_size": 2}, (2, 3, 3)),
]


def onnx_case(name, granularity) -> tuple:
    """(x, scale, zero point or None, attrs, onnx's reference output) of a packed type's case."""
    _, shape, attrs, sshape = granularity
    dtype = SUB_BYTE[name]
    rng = np.random.default_rng([len(name), len(granularity[0])])
    x = values(rng, dtype, shape)
    scale = (rng.uniform(0.5, 1, sshape) * np.exp2(rng.integers(-6, 6, sshape))).astype(np.float32)
    zp = None if name == "float4e2m1" else values(rng, dtype, sshape)
    return x, scale, zp, attrs, onnx_reference(x, scale, zp, 25 if name in ("int2", "uint2") else 23, **attrs)


@pytest.mark.parametrize("granularity", GRANULARITIES, ids=lambda g: g[0])
@pytest.mark.parametrize("name", ["int4", "uint4", "float4e2m1", "int2", "uint2"])
def test_onnx_packed_against_the_reference(name, granularity):
    x, scale, zp, attrs, want = onnx_case(name, granularity)
    packed_zp = None if zp is None else dequant.pack(zp)
    assert_exact(ops.onnx_dequantize_linear(dequant.pack(x), scale, zp, **attrs), want)
    assert_exact(ops.onnx_dequantize_linear(dequant.pack(x), scale, packed_zp, **attrs), want)
    assert_exact(ops.onnx_dequantize_linear(x, scale, zp, **attrs), want)  # one element per byte


@pytest.mark.parametrize("name", ["int2", "uint2"])
def test_opset_25_two_bit_types_unpacked(name):
    rng = np.random.default_rng(25)
    x, zp = values(rng, SUB_BYTE[name], (4, 9)), values(rng, SUB_BYTE[name], (4,))
    scale = rng.random(4).astype(np.float32)
    assert_exact(ops.onnx_dequantize_linear(x, scale, zp, axis=0), onnx_reference(x, scale, zp, 25, axis=0))


# --- oneDNN s4/u4 packed and not, against the formula ------------------------------------------------


def _s32_zps(rng, shape) -> np.ndarray:
    """s32 zero points over the whole range, the extremes included: 15 - (-2^31) overflows i32
    (a packed source once gave the wrong sign there; found by fuzzing)."""
    z = rng.integers(-(2**31), 2**31, shape, dtype=np.int64).astype(np.int32)
    z.flat[:4] = [-(2**31), 2**31 - 1, 0, -1]
    return z


@pytest.mark.parametrize("zp_type", [None, ml_dtypes.int4, ml_dtypes.uint4, np.int32], ids=["none", "s4", "u4", "s32"])
@pytest.mark.parametrize("src_type", [ml_dtypes.int4, ml_dtypes.uint4], ids=["s4", "u4"])
def test_onednn_4bit_sources(src_type, zp_type):
    rng = np.random.default_rng(4)
    src = values(rng, src_type, (6, 8))
    scales = rng.random((3, 8)).astype(np.float32)
    zps = None if zp_type is None else (values(rng, zp_type, (3, 8)) if zp_type is not np.int32 else _s32_zps(rng, (3, 8)))
    d = src.astype(np.int64) - (np.repeat(zps.astype(np.int64), 2, axis=0) if zps is not None else 0)
    want = d.astype(np.float32) * np.repeat(scales, 2, axis=0)
    kw = dict(qtype="per_group", group_shape=[2, 1])
    assert_exact(ops.onednn_dynamic_dequantize(src, scales, zps, **kw), want)
    packed_zps = dequant.pack(zps) if zps is not None and zps.dtype != np.int32 else zps
    assert_exact(ops.onednn_dynamic_dequantize(dequant.pack(src), scales, packed_zps, **kw), want)


def test_onednn_packed_bf16_groups_of_odd_width():
    """Packed s4 with bf16 scales, groups 14 wide (7 bytes: 7-lane bf16 vectors, which LLVM once
    promoted through a __truncsfbf2 call the JIT cannot resolve; found by fuzzing)."""
    rng = np.random.default_rng(7)
    src = values(rng, ml_dtypes.int4, (4, 8, 5, 14))
    scales = rng.random((4, 2, 5, 1)).astype(ml_dtypes.bfloat16)
    want = (src.astype(np.float32) * np.repeat(np.repeat(scales.astype(np.float32), 4, axis=1), 14, axis=3)).astype(ml_dtypes.bfloat16)
    got = ops.onednn_dynamic_dequantize(dequant.pack(src), scales, qtype="per_group", group_shape=[1, 4, 1, 14])
    assert_exact(got, want)


# --- in place: bind, threads, jit, no allocation ----------------------------------------------------


def test_bind_reads_the_current_packed_bytes():
    rng = np.random.default_rng(6)
    x = values(rng, ml_dtypes.int4, (8, 64))
    p = dequant.pack(x)
    s = rng.random((8, 2)).astype(np.float32)
    call = ops.bind(ops.onnx_dequantize_linear, p, s, axis=1, block_size=32)
    assert_exact(call(), onnx_reference(x, s, None, 21, axis=1, block_size=32))
    x2 = values(rng, ml_dtypes.int4, (8, 64))
    p.data[:] = dequant.pack(x2).data  # new values in the same bytes
    assert_exact(call(), onnx_reference(x2, s, None, 21, axis=1, block_size=32))


@pytest.mark.parametrize("cols", [64, 33, 2], ids=["even", "odd", "one-byte-rows"])
def test_row_splits_start_on_whole_bytes(cols):
    """Rows of an odd count of 4-bit elements do not all start on a byte: threads split at rows
    that do."""
    runtime = Runtime(3)
    runtime.min_parallel = 1
    rng = np.random.default_rng(cols)
    x = values(rng, ml_dtypes.int4, (31, cols))
    s = rng.random(31).astype(np.float32)
    got = ops.function("onnx_dequantize_linear", runtime)(dequant.pack(x), s, axis=0)
    assert_exact(got, onnx_reference(x, s, None, 21, axis=0))


SPLIT_ZERO_POINTS = [
    ("per-axis-0", (31, 6), {"axis": 0}, (31,)),  # zero point rows of 1 element: splits at even rows
    ("per-axis-1", (9, 7), {"axis": 1}, (7,)),  # read whole by every part
    ("blocked-last-odd", (9, 20), {"axis": 1, "block_size": 4}, (9, 5)),
    ("blocked-first", (30, 3), {"axis": 0, "block_size": 3}, (10, 3)),
]


@pytest.mark.parametrize("granularity", SPLIT_ZERO_POINTS, ids=lambda g: g[0])
@pytest.mark.parametrize("name", ["int4", "uint2"])
def test_row_splits_with_packed_zero_points(name, granularity):
    """A packed zero point read along the rows is split with the rows, at rows where each part's
    zero point starts on a whole byte; the call is split (3 native calls) and exact."""
    _, shape, attrs, zshape = granularity
    dtype = SUB_BYTE[name]
    runtime = Runtime(3)
    runtime.min_parallel = 1
    rng = np.random.default_rng(len(shape) + zshape[0])
    x, zp = values(rng, dtype, shape), values(rng, dtype, zshape)
    s = (rng.random(zshape) + 0.5).astype(np.float32)
    call = ops.bind(ops.function("onnx_dequantize_linear", runtime), dequant.pack(x), s, dequant.pack(zp), **attrs)
    assert len(call._calls) == 3
    assert_exact(call(), onnx_reference(x, s, zp, 25 if name == "uint2" else 21, **attrs))


WHOLE_TILES = [
    ("per-tensor", (3, 512), {}, ()),
    ("per-axis-last", (3, 512), {"axis": 1}, (512,)),
    ("blocked-32", (3, 512), {"axis": 1, "block_size": 32}, (3, 16)),
    ("blocked-128", (3, 512), {"axis": 1, "block_size": 128}, (3, 4)),
]


@pytest.mark.parametrize("nontemporal", [False, True], ids=["cached", "nontemporal"])
@pytest.mark.parametrize("multishift", [False, True], ids=["byte-fields", "multishift"])
@pytest.mark.parametrize("granularity", WHOLE_TILES, ids=lambda g: g[0])
@pytest.mark.parametrize("name", ["int4", "uint4", "float4e2m1", "int2", "uint2"])
def test_fields_both_ways(name, granularity, multishift, nontemporal, monkeypatch):
    """Rows of whole tiles, so the vector loops (not only LLVM's remainders) compute every value:
    the fields cut in bytes and interleaved (any host), and by vpmultishiftqb (AVX-512 VBMI hosts,
    dq-target-features' dq.avx512vbmi), through both entry points, exact against onnx."""
    from dequant.passes import target_features

    if multishift and not target_features.host_has_avx512vbmi():
        pytest.skip("the host has no AVX-512 VBMI: vpmultishiftqb is never emitted")
    monkeypatch.setattr(target_features, "host_has_avx512vbmi", lambda: multishift)
    x, scale, zp, attrs, want = onnx_case(name, granularity)
    runtime = Runtime(1)
    runtime.nontemporal_min_bytes = 0 if nontemporal else 1 << 62
    f = ops.function("onnx_dequantize_linear", runtime)
    assert_exact(f(dequant.pack(x), scale, None if zp is None else dequant.pack(zp), **attrs), want)


def test_jit_packed_arguments():
    src = """func.func @f(%x: tensor<?x?xui4>, %s: tensor<?xf32>, %z: tensor<?xui4>) -> tensor<?x?xf32> {
      %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64} : (tensor<?x?xui4>, tensor<?xf32>, tensor<?xui4>) -> tensor<?x?xf32>
      return %y : tensor<?x?xf32>
    }"""
    rng = np.random.default_rng(8)
    x, z = values(rng, ml_dtypes.uint4, (5, 9)), values(rng, ml_dtypes.uint4, (9,))
    s = rng.random(9).astype(np.float32)
    want = onnx_reference(x, s, z, 21, axis=1)
    assert_exact(dequant.jit(src, "f", packed=True)(dequant.pack(x), s, dequant.pack(z)), want)
    marked = src.replace("%x: tensor<?x?xui4>,", "%x: tensor<?x?xui4> {dq.packed},")
    assert_exact(dequant.jit(marked, "f")(dequant.pack(x), s, z), want)
    with pytest.raises(ValueError, match=r"argument 0 \(ui4\) takes a dequant.Packed"):
        dequant.jit(marked, "f")(x, s, z)


@pytest.mark.parametrize("hint", ["whole", "partial", None])
@pytest.mark.parametrize("cols", [8, 9])
def test_rows_hint_is_correct_for_either_parity(hint, cols):
    """The `dq.rows` hint (dialect/unpack.py) only chooses which code is compiled for the case
    the caller does not expect: a kernel hinted "whole" still reads rows that are not whole bytes
    (each element at its linear index), one hinted "partial" still reads whole ones (as one row
    of the tensor), and both the data and a packed zero point are read right."""
    attr = "{dq.packed}" if hint is None else f'{{dq.packed, dq.rows = "{hint}"}}'
    src = f"""func.func @f(%x: tensor<?x?xi4> {attr}, %s: tensor<?xf32>, %z: tensor<?xi4> {attr}) -> tensor<?x?xf32> {{
      %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {{axis = 1 : i64}} : (tensor<?x?xi4>, tensor<?xf32>, tensor<?xi4>) -> tensor<?x?xf32>
      return %y : tensor<?x?xf32>
    }}"""
    rng = np.random.default_rng(cols)
    x, z = values(rng, ml_dtypes.int4, (5, cols)), values(rng, ml_dtypes.int4, (cols,))
    s = rng.random(cols).astype(np.float32)
    got = dequant.jit(src, "f")(dequant.pack(x), s, dequant.pack(z))
    assert_exact(got, onnx_reference(x, s, z, 21, axis=1))


def test_numpy_api_kernels_follow_the_rows():
    """dequant.ops keys its kernels on each packed operand's rows (whole bytes or not) and hints
    the kernel: one compiled kernel per parity, each right."""
    runtime = Runtime()
    rng = np.random.default_rng(11)
    for cols in (8, 9, 10, 11):
        x = values(rng, ml_dtypes.uint4, (3, cols))
        s = rng.random(cols).astype(np.float32)
        got = ops.function("onnx_dequantize_linear", runtime)(dequant.pack(x), s, axis=1)
        assert_exact(got, onnx_reference(x, s, None, 21, axis=1))
    assert len(runtime.kernels) == 2


def test_no_allocation_of_the_logical_size():
    """The kernel reads the packed bytes in place: with `out=` given, a call allocates nothing
    near the logical size (one element per byte would be 8 MiB here; tracemalloc sees numpy's
    allocations)."""
    rng = np.random.default_rng(9)
    x = values(rng, ml_dtypes.int4, (1024, 8192))
    p = dequant.pack(x)
    s = rng.random((1024, 256)).astype(np.float32)
    out = np.empty(x.shape, np.float32)
    ops.onnx_dequantize_linear(p, s, axis=1, block_size=32, out=out)  # compile first
    tracemalloc.start()
    ops.onnx_dequantize_linear(p, s, axis=1, block_size=32, out=out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < x.size // 64, f"{peak} bytes allocated on the call path"
    assert_exact(out, onnx_reference(x, s, None, 21, axis=1, block_size=32))


def test_import_keeps_4_and_2_bit_initializers_packed():
    rng = np.random.default_rng(10)
    x = values(rng, ml_dtypes.int2, (6, 40))
    s = rng.random((6, 5)).astype(np.float32)
    z = values(rng, ml_dtypes.int2, (6, 5))
    inits = [numpy_helper.from_array(a, k) for k, a in (("x", x), ("s", s), ("z", z))]
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq", axis=1, block_size=8)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 40])
    model = helper.make_model(helper.make_graph([node], "g", [], [out], inits), opset_imports=[helper.make_opsetid("", 25)])
    module = dequant.import_onnx(model)
    text = str(module)
    assert '"dq.unpack"' in text and "tensor<60xi8>" in text  # 240 2-bit values in 60 bytes
    assert_exact(dequant.jit(text, "dq")(), ReferenceEvaluator(model).run(None, {})[0])


@pytest.mark.parametrize("columns", [1, 3, 8])
def test_per_channel_along_packed_columns_of_any_width(columns):
    """A per-channel scale along packed int4 columns is read as [bytes, fields] when the columns
    fill whole bytes; one column (a 1-element scale, found by fuzzing) or an odd width is read
    element by element. Expected: x * scale, exact in f32."""
    rng = np.random.default_rng(columns)
    x = rng.integers(0, 16, size=(5, columns)).astype(ml_dtypes.uint4)
    s = (rng.random(columns) + 0.5).astype(np.float32)
    want = x.astype(np.float32) * s
    got = ops.onednn_dynamic_dequantize(dequant.pack(x), s, qtype="per_channel", axis=-1)
    assert_exact(got, want)
    assert_exact(ops.onnx_dequantize_linear(dequant.pack(x), s, axis=1), want)
