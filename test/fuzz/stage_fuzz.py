"""Fuzzing of the IREE stage (`dequant-iree`, `dequant-opt --torch-onnx-to-iree`), kind "stage".

Base models (`stage_corpus`, onnx.helper, deterministic): DequantizeLinear in every form the stage
takes: a QDQ int8 CNN block (activations Q -> DQ uint8, per-channel int8 Conv weights, an int32
bias), a QDQ MatMul large enough for dq's integer kernel, int4/uint4 blocked MatMuls with and without zero points, float8 (e4m3fn, e5m2) per-axis
weights, bf16 and f16 outputs read by a Cast, a per-axis Gemm, weights shared by two MatMuls, one
initializer dequantized twice, a dynamic batch, int4 weights given as an input with dynamic K,
partial last blocks (K = 33, block 16, int4 and int8; K = 200, block 128, uint4 with zero points;
a Gemm transB=1 blocked along axis 1), and the forms issue 45's campaign found refused: odd N
and K with int4 zero points, an f16 scale read through a Cast; and a QDQ Softmax, requantized.

A case is one of (by its index's random draw):
- "model": a base model mutated 0-3 times at the protobuf level (tools_fuzz's mutations:
  attributes, dtypes, dims, initializer bytes, wiring, opsets, names, fields), then
  `dequant-iree --emit-mlir` (IREE's importer and iree-opt as child processes, the stage in the
  worker);
- "text": a base model's torch form (imported once per worker, cached) mutated 1-4 times as text
  (a vtensor type changed wherever it is written, dims and dtypes at one place, attribute
  names and values, ONNX op names, resource blobs cut or grown, and tools_fuzz's byte and token
  mutations), then `dequant-opt --allow-unregistered-dialect
  --torch-onnx-to-iree`;
- "valid": an unmutated base model, or a random weight-only MatMul or Gemm transB=1
  (`random_weights_model`: 4- or 8-bit weights per tensor, per column or blocked with partial
  blocks, odd and even K and N, zero points, f16/bf16 scales read through a Cast, one row or
  more), compiled by `dequant-iree` (iree-compile included), run by IREE's runtime on random
  inputs (x normal, or with a large common offset, one +-inf or one 1e38 per row: X_KINDS) and
  compared with onnx.reference: bit for bit for a dequantize alone, within f32 rounding of the
  output's magnitude (1e-5) where a MatMul, Gemm or Conv sums in another order, non-finite
  values where and as the reference's; the requantized Softmax within one code of it, in at
  most 1% of its values.

A finding: what tools_fuzz.judge finds (a traceback, exit status other than 0 or 1, exit 1 without
an `error:` line, exit 0 with one), a valid model the stage or IREE refuses, or other numbers
than the reference's. The supervisor adds signals and hangs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import subprocess
import sys
import tempfile
import zlib

import numpy as np

sys.path[:0] = [p for p in (os.path.dirname(os.path.abspath(__file__)),) if p not in sys.path]
import fuzz_harness as harness  # noqa: E402
import tools_fuzz  # noqa: E402

EXACT = 1e-5  # relative to the output's magnitude, where a sum runs in another order


def stage_corpus() -> list[tuple[str, bytes, bool | float]]:
    """(name, serialized ModelProto, exact) of the base models; `exact`: True for a dequantize
    alone (bit for bit), False for a sum (EXACT), or the step of a requantized output (`codes`)."""
    import ml_dtypes
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    rng = np.random.default_rng(20261128)
    out = []

    def add(name, nodes, inputs, outputs, inits, opset=21, exact=False):
        m = h.make_model(h.make_graph(nodes, "g", inputs, outputs, inits), opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 10
        onnx.checker.check_model(m)
        out.append((name, m.SerializeToString(), exact))

    def vi(name, t, shape):
        return h.make_tensor_value_info(name, t, shape)

    def scales(*shape):
        return (rng.random(shape) * 0.1 + 0.01).astype(np.float32)

    def ints(dtype, *shape):
        lo, hi = {ml_dtypes.int4: (-8, 8), ml_dtypes.uint4: (0, 16), np.int8: (-128, 128), np.uint8: (0, 256)}[dtype]
        return rng.integers(lo, hi, size=shape).astype(dtype)

    def matmul(name, k, n, block, dtype, zp, opset=21, rows="M"):
        blocks = -(-k // block)
        inits = [nh.from_array(ints(dtype, k, n), "w"), nh.from_array(scales(blocks, n), "s")]
        if zp:
            inits.append(nh.from_array(ints(dtype, blocks, n), "z"))
        nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"][: len(inits)], ["wf"], axis=0, block_size=block),
                 h.make_node("MatMul", ["x", "wf"], ["y"])]  # fmt: skip
        add(name, nodes, [vi("x", TP.FLOAT, [rows, k])], [vi("y", TP.FLOAT, [rows, n])], inits, opset)

    matmul("int4-blocked", 64, 32, 16, ml_dtypes.int4, False)
    matmul("int4-blocked-zp", 64, 16, 32, ml_dtypes.int4, True)
    matmul("uint4-blocked-zp", 32, 16, 16, ml_dtypes.uint4, True)
    matmul("int4-partial-block", 33, 16, 16, ml_dtypes.int4, True)
    matmul("int8-partial-block", 33, 8, 16, np.int8, False)
    # forms issue 45's campaign found refused: odd N and K with zero points (i4 tensors IREE's
    # CPU codegen read with masked loads), partial blocks longer than IREE's tiles
    matmul("int4-blocked-zp-odd-n", 64, 33, 32, ml_dtypes.int4, True, rows=8)
    matmul("uint4-partial-block-128", 200, 16, 128, ml_dtypes.uint4, True)
    matmul("int4-one-row", 128, 64, 32, ml_dtypes.int4, True, rows=1)  # the exact one-row route on VNNI hosts
    matmul("int4-any-rows", 128, 64, 32, ml_dtypes.uint4, False)  # the same, and more rows by the f32 body
    # QDQ int8 CNN block: y = relu(conv(DQ(Q(x)), DQ(w int8 per channel), DQ(bias int32)))
    c, o = 3, 4
    w, ws = ints(np.int8, o, c, 3, 3), scales(o)
    xs = np.float32(0.05)
    inits = [nh.from_array(w, "w"), nh.from_array(ws, "ws"), nh.from_array(np.array(xs, np.float32), "xs"),
             nh.from_array(np.array(128, np.uint8), "xz"), nh.from_array(rng.integers(-100, 100, o).astype(np.int32), "b"),
             nh.from_array((ws * xs).astype(np.float32), "bs")]  # fmt: skip
    nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             h.make_node("DequantizeLinear", ["w", "ws"], ["wf"], axis=0), h.make_node("DequantizeLinear", ["b", "bs"], ["bf"], axis=0),
             h.make_node("Conv", ["xf", "wf", "bf"], ["cv"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["cv"], ["y"])]  # fmt: skip
    add("qdq-cnn", nodes, [vi("x", TP.FLOAT, ["N", c, 8, 8])], [vi("y", TP.FLOAT, ["N", o, 8, 8])], inits)
    # QDQ MatMul of 8 x 256 @ 256 x 256 (2^19 multiply-adds): dq's integer kernel on VNNI hosts
    inits = [nh.from_array(ints(np.int8, 256, 256), "w"), nh.from_array(scales(256), "ws"),
             nh.from_array(np.array(2.0**-4, np.float32), "xs"), nh.from_array(np.array(128, np.uint8), "xz")]  # fmt: skip
    nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             h.make_node("DequantizeLinear", ["w", "ws"], ["wf"], axis=1), h.make_node("MatMul", ["xf", "wf"], ["y"])]  # fmt: skip
    add("qdq-matmul", nodes, [vi("x", TP.FLOAT, [8, 256])], [vi("y", TP.FLOAT, [8, 256])], inits)
    # QDQ Softmax over rows of 37 codes, requantized (dq's softmax kernel on AVX2 CPUs: whole steps
    # of 8 and a tail; docs/semantics.md#softmax-of-codes): within one code of onnx.reference
    step = np.float32(1 / 256)
    inits = [nh.from_array(np.array(0.07, np.float32), "xs"), nh.from_array(np.array(120, np.uint8), "xz"),
             nh.from_array(np.array(step, np.float32), "ys"), nh.from_array(np.array(0, np.uint8), "yz")]  # fmt: skip
    nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             h.make_node("Softmax", ["xf"], ["p"]), h.make_node("QuantizeLinear", ["p", "ys", "yz"], ["pq"]),
             h.make_node("DequantizeLinear", ["pq", "ys", "yz"], ["y"])]  # fmt: skip
    add("qdq-softmax", nodes, [vi("x", TP.FLOAT, [3, 37])], [vi("y", TP.FLOAT, [3, 37])], inits, exact=float(step))
    for name, dt in (("float8e4m3fn-per-axis", ml_dtypes.float8_e4m3fn), ("float8e5m2-per-axis", ml_dtypes.float8_e5m2)):
        inits = [nh.from_array((rng.standard_normal((32, 16)) * 4).astype(dt), "w"), nh.from_array(scales(16), "s")]
        nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1), h.make_node("MatMul", ["x", "wf"], ["y"])]
        add(name, nodes, [vi("x", TP.FLOAT, ["M", 32])], [vi("y", TP.FLOAT, ["M", 16])], inits)
    for name, out_t, x_t, dt, attrs in (("uint8-bf16-output", TP.BFLOAT16, TP.UINT8, np.uint8, {}),
                                        ("int8-f16-output", TP.FLOAT16, TP.INT8, np.int8, {}),
                                        ("float8e4m3fn-bf16-output-axis", TP.BFLOAT16, TP.FLOAT8E4M3FN, None, {"axis": 1})):  # fmt: skip
        s = scales(64) if attrs else np.array(0.1234567, np.float32)
        nodes = [h.make_node("DequantizeLinear", ["x", "s"], ["b"], output_dtype=out_t, **attrs), h.make_node("Cast", ["b"], ["y"], to=TP.FLOAT)]
        add(name, nodes, [vi("x", x_t, [4, 64])], [vi("y", TP.FLOAT, [4, 64])], [nh.from_array(s, "s")], opset=23, exact=True)
    inits = [nh.from_array(ints(np.int8, 16, 8), "w"), nh.from_array(scales(16), "s"), nh.from_array(np.zeros(16, np.float32), "c")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=0), h.make_node("Gemm", ["x", "wf", "c"], ["y"], transB=1)]
    add("int8-per-axis-gemm", nodes, [vi("x", TP.FLOAT, ["M", 8])], [vi("y", TP.FLOAT, ["M", 16])], inits)
    inits = [nh.from_array(ints(np.int8, 16, 40), "w"), nh.from_array(scales(16, 2), "s")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1, block_size=32), h.make_node("Gemm", ["x", "wf"], ["y"], transB=1)]
    add("int8-gemm-transb-partial-block", nodes, [vi("x", TP.FLOAT, ["M", 40])], [vi("y", TP.FLOAT, ["M", 16])], inits)
    inits = [nh.from_array(ints(ml_dtypes.int4, 96, 31), "w"), nh.from_array(np.array(0.0625, np.float16), "s")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wh"]), h.make_node("Cast", ["wh"], ["wf"], to=TP.FLOAT),
             h.make_node("MatMul", ["x", "wf"], ["y"])]  # fmt: skip
    add("int4-f16-scale-cast-odd-n", nodes, [vi("x", TP.FLOAT, ["M", 96])], [vi("y", TP.FLOAT, ["M", 31])], inits)
    inits = [nh.from_array(ints(ml_dtypes.int4, 33, 40), "w"), nh.from_array(scales(40), "s"), nh.from_array(ints(ml_dtypes.int4, 40), "z")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], axis=1), h.make_node("MatMul", ["x", "wf"], ["y"])]
    add("int4-per-column-zp-odd-k", nodes, [vi("x", TP.FLOAT, [1, 33])], [vi("y", TP.FLOAT, [1, 40])], inits)
    inits = [nh.from_array(ints(ml_dtypes.int4, 32, 32), "w"), nh.from_array(scales(2, 32), "s")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=0, block_size=16), h.make_node("MatMul", ["x", "wf"], ["h"]),
             h.make_node("MatMul", ["h", "wf"], ["y"])]  # fmt: skip
    add("shared-weights", nodes, [vi("x", TP.FLOAT, ["M", 32])], [vi("y", TP.FLOAT, ["M", 32])], inits)
    inits = [nh.from_array(ints(np.int8, 16, 16), "w"), nh.from_array(scales(16), "s"), nh.from_array(scales(16), "t")]
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["a"], axis=1), h.make_node("DequantizeLinear", ["w", "t"], ["b"], axis=0),
             h.make_node("MatMul", ["x", "a"], ["h"]), h.make_node("MatMul", ["h", "b"], ["y"])]  # fmt: skip
    add("weights-used-twice", nodes, [vi("x", TP.FLOAT, ["M", 16])], [vi("y", TP.FLOAT, ["M", 16])], inits)
    nodes = [h.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=16)]
    add("dynamic-dim-blocked-scale", nodes, [vi("x", TP.INT8, ["N", 32])], [vi("y", TP.FLOAT, ["N", 32])], [nh.from_array(scales(4, 2), "s")], exact=True)
    nodes = [h.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=0, block_size=16), h.make_node("MatMul", ["x", "wf"], ["y"])]
    add("int4-weights-input-dynamic-k", nodes, [vi("x", TP.FLOAT, ["M", "K"]), vi("w", TP.INT4, ["K", 16])], [vi("y", TP.FLOAT, ["M", 16])],
        [nh.from_array(scales(2, 16), "s")])  # fmt: skip
    return out


def random_weights_model(rng) -> tuple[str, bytes]:
    """(description, serialized ModelProto) of a random weight-only model: y = x @ DQ(w) (or
    Gemm transB=1 of w [N, K]) with w int4/uint4/int8/uint8 per tensor, per column or blocked along
    K (a partial last block, or only one, as often as not), odd or even K and N, a zero point or
    not, an f32, f16 or bf16 scale (the last two read through a Cast to float), one row, several
    or a dynamic count; tensors in raw_data or in the typed fields."""
    import ml_dtypes
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    dtype = tools_fuzz.pick(rng, [ml_dtypes.int4, ml_dtypes.uint4, np.int8, np.uint8])
    k = int(tools_fuzz.pick(rng, [8, 31, 33, 64, 65, 96, 127, 128, 200, 256]))
    n = int(tools_fuzz.pick(rng, [1, 7, 16, 31, 32, 33, 48, 64, 100, 500]))
    gran = tools_fuzz.pick(rng, ["tensor", "column", "block", "block"])
    block = int(tools_fuzz.pick(rng, [16, 32, 48, 64, 128])) if gran == "block" else 0
    gemm = rng.random() < 0.25
    zp = rng.random() < 0.6
    scale_t = tools_fuzz.pick(rng, [np.float32, np.float32, np.float16, ml_dtypes.bfloat16])
    rows = tools_fuzz.pick(rng, [1, 8, "M"])
    info = ml_dtypes.iinfo(dtype)
    w_shape, kax = ((n, k), 1) if gemm else ((k, n), 0)
    if gran == "block":
        shape = list(w_shape)
        shape[kax] = -(-k // block)
        attrs = {"axis": kax, "block_size": block}
    elif gran == "column":
        shape, attrs = [n], {"axis": 1 - kax}
    else:
        shape, attrs = [], {}
    inits = [nh.from_array(rng.integers(info.min, info.max, size=w_shape, endpoint=True).astype(dtype), "w"),
             nh.from_array((rng.random(shape) * 0.1 + 0.01).astype(scale_t), "s")]  # fmt: skip
    if zp:
        inits.append(nh.from_array(rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype), "z"))
    nodes = [h.make_node("DequantizeLinear", ["w", "s", "z"][: len(inits)], ["wd"], **attrs)]
    if scale_t != np.float32:
        nodes.append(h.make_node("Cast", ["wd"], ["wf"], to=TP.FLOAT))
    b = nodes[-1].output[0]
    nodes.append(h.make_node("Gemm", ["x", b], ["y"], transB=1) if gemm else h.make_node("MatMul", ["x", b], ["y"]))
    x, y = h.make_tensor_value_info("x", TP.FLOAT, [rows, k]), h.make_tensor_value_info("y", TP.FLOAT, [rows, n])
    what = (f"{np.dtype(dtype).name} [{k}, {n}] {gran}{f' {block}' if block else ''}{' zp' if zp else ''} "
            f"{np.dtype(scale_t).name} scale{' Gemm transB' if gemm else ''} rows {rows}")  # fmt: skip
    # A quarter of the models keep their tensors in the typed fields (int32_data), as
    # onnx.helper.make_tensor writes them, not raw_data; decided by the description, not by `rng`,
    # so the cases of earlier campaigns keep their ids.
    if zlib.crc32(what.encode()) % 4 == 0:
        floats = (TP.FLOAT, TP.FLOAT16, TP.BFLOAT16)
        inits = [h.make_tensor(t.name, t.data_type, t.dims, nh.to_array(t).astype(np.float32 if t.data_type in floats else np.int64).flatten().tolist())
                 for t in inits]  # fmt: skip
        what += " typed-fields"
    m = h.make_model(h.make_graph(nodes, "g", [x], [y], inits), opset_imports=[h.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return what, m.SerializeToString()


# x of a valid case: standard normal, or with a large common offset (values agree in their top
# bits: a sum that subtracts two large partial sums loses them), one +-inf per row, or one 1e38
# per row (finite products whose partial sums can overflow); each against onnx.reference.
X_KINDS = ["normal", "normal", "offset", "inf", "huge"]


# torch-form token classes: (pattern, replacements)
TORCH_TOKENS = {
    "dim": (rb"(?<=[\[,])(?:\d+|\?)(?=[\],])", ["?", "0", "1", "2", "3", "15", "16", "17", "33", "64", "4096", "2147483648", "-1"]),
    "dtype": (rb"(?<=\],)[a-zA-Z0-9]+(?=>)", ["si4", "ui4", "si8", "ui8", "si16", "si32", "si64", "f32", "f16", "bf16", "f64",
                                              "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f4E2M1FN", "si2", "ui2", "i1", "ui32", "none"]),
    "attr": (rb"(?<=torch\.onnx\.)(?:axis|block_size|output_dtype|to)(?= = )", ["axis", "block_size", "output_dtype", "saturate", "to", "bogus"]),
    "attr-value": (rb"(?<= = )-?\d+(?= : si64)", ["0", "1", "-1", "-2", "2", "5", "16", "17", "33", "999", "1", "10", "16", "17", "23",
                                                  "9223372036854775807", "-9223372036854775808"]),
    "onnx-op": (rb'"onnx\.\w+"', ['"onnx.DequantizeLinear"', '"onnx.MatMul"', '"onnx.Constant"', '"onnx.Cast"', '"onnx.QuantizeLinear"', '"onnx.Gemm"']),
    "blob": (rb'"0x[0-9A-F]{8}', ['"0x08000000', '"0x04000000', '"0x01000000', '"0x00000000', '"0x', '"0x0800']),
}


def mutate_torch(rng, data: bytes, corpus: list) -> tuple[bytes, str]:
    """One mutation of a torch-form text; (new data, what was done)."""
    r = rng.random()
    if r < 0.3:  # one vtensor type changed everywhere it is written, so the text still parses
        types = sorted(set(re.findall(rb"!torch\.vtensor<\[[^\]]*\],\w+>", data)))
        if types:
            old = types[int(rng.integers(len(types)))]
            cls = tools_fuzz.pick(rng, ["dim", "dtype"])
            pattern, pool = TORCH_TOKENS[cls]
            found = list(re.finditer(pattern, old))
            if found:
                m = found[int(rng.integers(len(found)))]
                new = old[: m.start()] + tools_fuzz.pick(rng, pool).encode() + old[m.end() :]
                return data.replace(old, new), f"retype {old.decode()} -> {new.decode()}"
    if r < 0.45:  # a resource blob cut or grown by whole bytes
        blobs = list(re.finditer(rb'"0x([0-9A-F]*)"', data))
        if blobs:
            m = blobs[int(rng.integers(len(blobs)))]
            k = int(rng.choice([-4, -2, 2, 4]))
            body = m.group(1)[:k] if k < 0 else m.group(1) + b"00" * (k // 2)
            return data[: m.start(1)] + body + data[m.end(1) :], f"blob at {m.start()} {'cut' if k < 0 else 'grown'} by {abs(k) // 2} bytes"
    if r < 0.8:
        cls = tools_fuzz.pick(rng, list(TORCH_TOKENS))
        pattern, pool = TORCH_TOKENS[cls]
        found = list(re.finditer(pattern, data))
        if found:
            m = found[int(rng.integers(len(found)))]
            new = tools_fuzz.pick(rng, pool).encode()
            return data[: m.start()] + new + data[m.end() :], f"{cls} {m.group(0)[:30]!r} -> {new[:30]!r} at {m.start()}"
    return tools_fuzz.mutate_bytes(rng, data, corpus)


@dataclasses.dataclass
class StageCase:
    kind: str  # model, text, valid
    source: str
    mutations: list
    data: bytes = b""  # the mutated model or text
    x: str = "normal"  # a valid case's x (X_KINDS)

    def describe(self) -> str:
        x = f" x={self.x}" if self.kind == "valid" else ""
        return f"{self.kind} {self.source} mutations=[{'; '.join(self.mutations)}]{x}"


class StageFuzzer:
    """The IREE stage's fuzzing in a worker (fuzz_harness.py)."""

    def __init__(self, workdir: str = ""):
        import onnx

        from dequant import cli
        from dequant import iree as stage

        self.onnx, self.cli, self.stage = onnx, cli, stage
        self.workdir = workdir or tempfile.mkdtemp(prefix="dequant-fuzz-stage-")
        os.makedirs(self.workdir, exist_ok=True)  # --repro --save DIR: DIR may not exist yet
        self.corpus = stage_corpus()
        self.texts: dict = {}  # name -> torch form, imported on first use

    def torch_form(self, index: int) -> bytes:
        name, data, _ = self.corpus[index]
        if name not in self.texts:
            cache = os.path.join(self.workdir, f"torch-{name}.mlir")
            if not os.path.exists(cache):
                path = os.path.join(self.workdir, f"base-{name}.onnx")
                with open(path, "wb") as f:
                    f.write(data)
                with open(cache, "w", encoding="utf-8") as f:
                    f.write(self.stage.import_onnx(path))
            with open(cache, "rb") as f:
                self.texts[name] = f.read()
        return self.texts[name]

    def make(self, seed: int, index: int) -> StageCase:
        rng = np.random.default_rng([seed, index, 0x57A])
        r = rng.random()
        which = int(rng.integers(len(self.corpus)))
        name, data, _ = self.corpus[which]
        if r < 0.08:
            return StageCase("valid", name, [], data, tools_fuzz.pick(rng, X_KINDS))
        if r < 0.16:
            what, data = random_weights_model(rng)
            return StageCase("valid", f"random: {what}", [], data, tools_fuzz.pick(rng, X_KINDS))
        if r < 0.4:
            model = self.onnx.ModelProto()
            model.ParseFromString(data)
            mutations, data = tools_fuzz.mutate_model(rng, model, data, [0, 1, 1, 2, 3], 0.7)
            return StageCase("model", name, mutations, data)
        case = StageCase("text", name, [])
        n = int(rng.choice([1, 1, 2, 3, 4]))
        text = self.torch_form(which)
        texts = [(f"torch-{n}", t) for n, t in self.texts.items()]
        for _ in range(n):
            text, what = mutate_torch(rng, text, texts)
            case.mutations.append(what)
        case.data = text
        return case

    def describe(self, seed: int, index: int) -> str:
        return self.make(seed, index).describe()

    def argv(self, case: StageCase, directory: str) -> tuple:
        """(main, argv) of the case's tool, its input written to `directory`."""
        if case.kind == "text":
            path = os.path.join(directory, "torch.mlir")
            with open(path, "wb") as f:
                f.write(case.data)
            return self.cli.main, [path, "--allow-unregistered-dialect", "--torch-onnx-to-iree", "-o", os.path.join(directory, "out.mlir")]
        path = os.path.join(directory, "model.onnx")
        with open(path, "wb") as f:
            f.write(case.data)
        # DEQUANT_FUZZ_CPU: compile for that CPU (an LLVM name, e.g. haswell: an AVX2 host's
        # routes on any host that runs its code), not the host
        cpu = ["--", f"--iree-llvmcpu-target-cpu={os.environ['DEQUANT_FUZZ_CPU']}"] if os.environ.get("DEQUANT_FUZZ_CPU") else []
        if case.kind == "model":
            return self.stage.main, [path, "--emit-mlir", "-o", os.path.join(directory, "out.mlir"), *cpu]
        return self.stage.main, [path, "-q", "-o", os.path.join(directory, "out.vmfb"), *cpu]

    def run(self, seed: int, index: int) -> dict:
        case = self.make(seed, index)
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.workdir, "out.vmfb"))
        main, argv = self.argv(case, self.workdir)
        o = tools_fuzz.run_main(main, argv, self.workdir)
        finding = tools_fuzz.judge(o)
        record = {"class": f"{case.kind}-exit-{o.status}", "finding": finding, "status": o.status, "stderr": o.first_stderr_line}
        if not finding and case.kind == "valid":
            finding = self.check_valid(case, o)
        if finding:
            record["finding"] = finding
            record["detail"] = (o.escaped or o.stderr.decode("utf-8", "replace"))[-1500:]
        return record

    def check_valid(self, case: StageCase, o) -> str | None:
        """A valid model must compile, run and give onnx.reference's numbers."""
        if o.status != 0:
            return f"a valid model is refused: {o.first_stderr_line[:200]}"
        exact = next((e for n, _, e in self.corpus if n == case.source), False)
        path = os.path.join(self.workdir, "model.onnx")
        with open(os.path.join(self.workdir, "out.vmfb"), "rb") as f:
            vmfb = f.read()
        feeds = inputs(self.onnx.load_from_string(case.data), np.random.default_rng(len(case.source)), case.x)
        if feeds is None:  # an int4 graph input: IREE's runtime takes no int4 array from numpy; compiled is all
            return None
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(path).run(None, feeds)[0]
        import iree.runtime as rt

        ctx = rt.SystemContext(config=rt.Config("local-sync"))
        ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
        try:
            got = np.asarray(ctx.modules.module["g"](*feeds.values()))
        except Exception as e:  # noqa: BLE001 - a run-time refusal of valid inputs is the finding
            return f"the compiled valid model fails to run: {str(e).splitlines()[0][:200]}"
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"result {got.dtype}{list(got.shape)}, the reference's {want.dtype}{list(want.shape)}"
        if exact is True:
            bad = int((got.view(np.uint8) != want.view(np.uint8)).sum())
            return f"{bad} bytes differ from onnx.reference (a dequantize alone is exact)" if bad else None
        return codes(got, want, exact) if exact else compare(got, want)

    def repro(self, seed: int, index: int, save: str | None = None, verbose: bool = True) -> int:
        case = self.make(seed, index)
        directory = save or tempfile.mkdtemp(prefix="dequant-fuzz-repro-")
        os.makedirs(directory, exist_ok=True)
        main, argv = self.argv(case, directory)
        console = ("dequant-opt", "dequant.cli") if main is self.cli.main else ("dequant-iree", "dequant.iree")
        command = tools_fuzz._console(*console) + argv
        print(f"case: {case.describe()}")
        print("command: " + " ".join(shlex.quote(a) for a in command))
        run = subprocess.run(command, capture_output=True, timeout=600)
        o = tools_fuzz.Outcome(run.returncode, run.stdout, run.stderr)
        print(f"exit status: {run.returncode}\nstderr:\n{run.stderr.decode('utf-8', 'replace')[-3000:]}")
        finding = tools_fuzz.judge(o) or (f"killed by signal {-run.returncode}" if run.returncode < 0 else None)
        if not finding and case.kind == "valid":
            self.workdir = directory
            finding = self.check_valid(case, o)
        print(f"finding: {finding}" if finding else "no finding")
        return 1 if finding else 0


def codes(got: np.ndarray, want: np.ndarray, step: float) -> str | None:
    """Why a requantized output of step `step` is not onnx.reference's: a value more than one code
    off, or more than 1% of them one code off (a quotient at a code's rounding boundary)."""
    off = np.abs(got.astype(np.float64) - want) / step
    if not np.isfinite(off).all() or off.max() > 1.001:
        return f"a value {off.max():.3g} codes off onnx.reference's"
    return f"{int((off > 0.5).sum())} values one code off onnx.reference's" if (off > 0.5).mean() > 0.01 else None


def compare(got: np.ndarray, want: np.ndarray) -> str | None:
    """Why a sum's result is not onnx.reference's: a non-finite value where the reference has
    another (inf of the same sign, NaN for NaN), or a finite one off by more than EXACT of the
    largest finite |reference|."""
    finite = np.isfinite(want)
    same = np.where(np.isnan(want), np.isnan(got), got == want)
    bad = int((~finite & ~same).sum() + (finite & ~np.isfinite(got)).sum())
    if bad:
        i = np.flatnonzero((~finite & ~same) | (finite & ~np.isfinite(got)))[0]
        return f"{bad} values non-finite where onnx.reference's are not the same (first: {got.flat[i]} against {want.flat[i]})"
    if not finite.any():
        return None
    err = float(np.abs(got[finite].astype(np.float64) - want[finite]).max()) / max(float(np.abs(want[finite]).max()), 1e-30)
    return f"max error {err:.2e} of the output's magnitude against onnx.reference (> {EXACT})" if err > EXACT else None


def inputs(model, rng, x: str = "normal") -> dict | None:
    """Random inputs of a base model's graph inputs (dynamic dims: 2, N 4 and K 32, the sizes
    the scales fit), or None for a model with an int4 input. A float input of a model without a
    QuantizeLinear is drawn as `x` says (X_KINDS; IREE's own quantize of inf is not the stage's)."""
    import ml_dtypes
    from onnx import helper

    feeds = {}
    for v in model.graph.input:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else {"K": 32, "N": 4}.get(d.dim_param, 2) for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        if dtype == ml_dtypes.int4:
            return None
        if dtype == np.float32:
            a = rng.standard_normal(shape)
            if x != "normal" and not any(n.op_type == "QuantizeLinear" for n in model.graph.node) and a.ndim >= 1 and a.size:
                rows = a.reshape(-1, a.shape[-1])
                if x == "offset":
                    rows += float(tools_fuzz.pick(rng, [1e3, -3e4, 1e5, 1e6]))
                else:
                    at = rng.integers(rows.shape[1], size=rows.shape[0])
                    rows[np.arange(rows.shape[0]), at] = np.where(rng.random(rows.shape[0]) < 0.5, -1, 1) * (np.inf if x == "inf" else 1e38)
            feeds[v.name] = a.astype(np.float32)
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            feeds[v.name] = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        else:  # a float8 input
            feeds[v.name] = (rng.standard_normal(shape) * 4).astype(dtype)
    return feeds
