"""What the kernel tests share: an ONNX model of one MatMul per weight form, the dq stage run on
it for a CPU (the module tagged by hand: routes read the module's tags, never the host), the
dispatches it made, iree-compile for that CPU and IREE's runtime. As IREE's `mmt4d_test` checks
each tile function against a reference, each test file checks one kernel of passes/kernels/
against a numpy model written from its documented arithmetic (docs/semantics.md), never from
the code. Each MatMul is one dispatch (two with x's own) of the kernel built for its form alone;
a kernel's forms share one module because an iree-compile costs about the same whatever the
module holds (1.3 s of CPU for one MatMul, 1.7 s for four).

What of dq's internals the tests rely on, all here: the tag names of dq-target-features (`CPUS`),
the stage's pipeline less dq-target-features and the kernel pass's option (`stage`), and the
executable names the kernels give themselves (`kernel_name`, `x_dispatch_name`: each kernel's
`name()` spells its static parameters), by which a test tells which kernel the stage chose, and
the CPU flags Linux lists (`linux_cpu_flags`, for the features numpy's table does not name).
Everything else goes through `dequant.iree` (import_onnx, run_stage and its Summary, COMPILE,
TARGETS).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from requires import needs_iree  # noqa: F401 (the kernel tests read it from here)

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

U = 2.0**-24  # f32's unit roundoff


@dataclass(frozen=True)
class Cpu:
    """An iree-compile target CPU: the dq tags a module for it carries (dq-target-features'
    names), what its code needs of the host (numpy's CPU feature groups), said in words."""

    tags: tuple
    needs: tuple
    what: str


CPUS = {
    "haswell": Cpu((), ("X86_V3",), "AVX2 and FMA"),
    # AVX-VNNI is not in numpy's table either: "avx_vnni" is Linux's flag
    "alderlake": Cpu(("dq.avx2", "dq.avxvnni"), ("X86_V3", "avx_vnni"), "AVX2, FMA and AVX-VNNI (vpdpbusd on 256 bits)"),
    "skylake-avx512": Cpu(("dq.avx512bw",), ("AVX512_SKX",), "AVX-512 (F, CD, BW, DQ, VL)"),
    "cascadelake": Cpu(("dq.avx512bw", "dq.avx512vnni"), ("AVX512_CLX",), "AVX-512 VNNI (vpdpbusd)"),
    # AMX is not in numpy's table: "amx_int8" and "amx_tile" are Linux's /proc/cpuinfo flags
    "sapphirerapids": Cpu(("dq.avx512bw", "dq.avx512vnni", "dq.amxint8"), ("AVX512_SPR", "amx_tile", "amx_int8"), "AVX-512 FP16 and AMX-INT8 (tdpbusd) on Linux"),
}


def _host_features() -> dict:
    """numpy's table of this host's CPU features (the one dq-target-features reads)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return features


def skip_unless_host_runs(cpu: str) -> None:
    """Skip the test, naming what is missing, where this host cannot run code compiled for `cpu`."""
    from dequant.passes.target_features import linux_cpu_flags

    flags = linux_cpu_flags()
    lacking = [f for f in CPUS[cpu].needs if not (_host_features().get(f) or f in flags)]
    if lacking:
        pytest.skip(f"code for {cpu} needs {CPUS[cpu].what}, which this host lacks ({', '.join(lacking)})")


# --- weight-only MatMuls ---------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    """One MatMul y = x @ DequantizeLinear(w): 4- or 8-bit weights [K, N], signed or not, block
    along K (> 0; 0: a scale per column; -1: one scale), a zero point or not; x [rows, K]
    (rows None: known at run time)."""

    bits: int
    signed: bool
    block: int
    zero_point: bool
    k: int
    n: int
    rows: int | None = None

    @property
    def dtype(self):
        return {(4, True): ml_dtypes.int4, (4, False): ml_dtypes.uint4, (8, True): np.int8, (8, False): np.uint8}[self.bits, self.signed]

    @property
    def kblock(self) -> int:
        """The block along K as the kernels read it (a scale per column or per tensor: K)."""
        return self.block if self.block > 0 else self.k

    def __str__(self) -> str:
        block = {0: "col", -1: "tensor"}.get(self.block, f"b{self.block}")
        return f"{'i' if self.signed else 'u'}{self.bits}-{block}{'-z' if self.zero_point else ''}-k{self.k}-n{self.n}-m{self.rows or 'dyn'}"


@dataclass(frozen=True)
class Weights:
    """A form's constants as integers: q, z int64 [K, N] and [K / block, N] (0 without a zero
    point), s f32 [K / block, N], block as the kernels read it."""

    q: np.ndarray
    s: np.ndarray
    z: np.ndarray
    block: int

    def exact(self) -> np.ndarray:
        """(q - z) * s [K, N] in float64: exact (a 9-bit integer times an f32)."""
        return (self.q - np.repeat(self.z, self.block, axis=0)) * np.repeat(self.s.astype(np.float64), self.block, axis=0)

    def onnx(self) -> np.ndarray:
        """DequantizeLinear's f32 output [K, N]: q - z exact, converted exactly, times s rounded once."""
        return self.exact().astype(np.float32)


def weight_only_model(path, forms: list, seed: int = 0) -> list:
    """One ONNX model, graph `g`, with one MatMul per form: y<i> = x<i> @ DequantizeLinear(w<i>)
    (x<i> its own input, so K and rows differ by form). The Weights of each form."""
    rng = np.random.default_rng(seed)
    nodes, inits, inputs, outputs, weights = [], [], [], [], []
    for i, f in enumerate(forms):
        info = ml_dtypes.iinfo(f.dtype)
        q = rng.integers(info.min, info.max, (f.k, f.n), endpoint=True)
        shape, attrs = {0: ((f.n,), {"axis": 1}), -1: ((), {})}.get(f.block, ((f.k // max(f.block, 1), f.n), {"axis": 0, "block_size": f.block}))
        s = (rng.random(shape) * 0.1 + 0.01).astype(np.float32)
        z = rng.integers(info.min, info.max, shape, endpoint=True) if f.zero_point else np.zeros(shape, np.int64)
        inits += [numpy_helper.from_array(q.astype(f.dtype), f"w{i}"), numpy_helper.from_array(s, f"s{i}")]
        if f.zero_point:
            inits.append(numpy_helper.from_array(z.astype(f.dtype), f"z{i}"))
        nodes += [helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}"] + ([f"z{i}"] if f.zero_point else []), [f"wf{i}"], **attrs),
                  helper.make_node("MatMul", [f"x{i}", f"wf{i}"], [f"y{i}"])]  # fmt: skip
        rows = f.rows or f"M{i}"
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [rows, f.k]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [rows, f.n]))
        kb = f.k // f.kblock
        weights.append(Weights(q, np.broadcast_to(s.reshape(-1, f.n) if s.ndim else s, (kb, f.n)).astype(np.float32),
                               np.broadcast_to(z.reshape(-1, f.n) if z.ndim else z, (kb, f.n)).astype(np.int64), f.kblock))  # fmt: skip
    save(path, nodes, inits, inputs, outputs)
    return weights


def save(path, nodes, inits, inputs, outputs) -> None:
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, inits), opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


# --- the stage, the dispatches it made, the compiled module -----------------------------------


def stage(path, cpu: str, int8_activations: bool = False, tags: tuple = ()):
    """The dq stage on the model at `path` for `cpu`: the module tagged by hand as
    dq-target-features tags one for that CPU (so the stage's pipeline runs without it: even no
    tag is the test's, not the host's), and `tags` too (`dq.avx2`: the AVX2 routes), int8
    activations by the kernel pass's option. (The text iree-compile takes, the stage's Summary.)"""
    from dequant import iree
    from dequant.passes import PIPELINES

    text = iree.import_onnx(path, "llvm-cpu", cpu)  # the ONNX rewrites for that CPU (python/iree.py)
    end = "\n}) : () -> ()\n"  # the module's own closing line, in generic form (ops inside are indented)
    assert text.count(end) == 1
    tags = ", ".join(CPUS[cpu].tags + tuple(tags))
    text = text.replace(end, f"\n}}) {{{tags}}} : () -> ()\n" if tags else end)
    kernels = "torch-onnx-dq-matmul-iree-cpu"
    elements = [e for e in PIPELINES[iree.PIPELINE].elements.split(",") if e != "dq-target-features"]
    assert kernels in elements
    if int8_activations:
        elements[elements.index(kernels)] = kernels + "{int8-activations=true}"
    return iree.run_stage(text, ",".join(elements))


def entry_points(text: str) -> list:
    """The executable each flow.dispatch of `text` runs, in order."""
    return re.findall(r'"flow\.dispatch"\([^)]*\) \{entry_points = \[@(\w+)::@\w+\]', text)


def dispatches(matmuls: int, want) -> object:
    """A `check` for `built`: every one of the model's `matmuls` MatMuls fused, no
    DequantizeLinear left (a QDQ MatMul's x included), and the module's dispatches exactly the
    executables `want`, no other."""

    def check(text: str, summary) -> None:
        assert summary.fused == matmuls and summary.left == 0, summary
        assert sorted(entry_points(text)) == sorted(want)

    return check


def kernel_name(kernel: str, f: Form, lanes: int = 16, unsigned_x: bool = False) -> str:
    """The executable name of `kernel` ("f32", "int8", "digits", "qdq") built for form f: each
    kernel's `name()` spells its static parameters (passes/kernels/__init__.py)."""
    z = "_z" if f.zero_point else ""
    kind = f"{'i' if f.signed else 'u'}{f.bits}"
    if kernel == "qdq":
        return f"dq_matmul_qdq_{'u8' if unsigned_x else 'i8'}_{kind}_k{f.k}_n{f.n}{z}"
    prefix = {"f32": "dq_matmul_", "int8": "dq_matmul_x8_", "digits": "dq_matmul_digits_"}[kernel]
    name = f"{prefix}{kind}_k{f.k}_n{f.n}_b{f.kblock}{z}_l{lanes}"
    return name + ("_anyrows" if kernel == "digits" and f.rows is None else "")


def x_dispatch_name(kernel: str, f: Form) -> str:
    """The dispatch writing what `kernel` ("int8", "digits") reads of x."""
    if kernel == "int8":
        return f"dq_quantize_rows_k{f.k}_b{f.kblock}"
    xblock = next(d for d in (32, 24, 16, 8) if f.kblock % d == 0)
    return f"dq_digits_rows_k{f.k}_b{xblock}"


def built(tmp_path_factory, name: str, cpu: str, model, check, int8_activations: bool = False, tags: tuple = ()) -> tuple:
    """(model(path): the test's arrays, g) for the model `model` writes at `path`, staged for
    `cpu` (`stage`, with `tags`), `check(text, summary)` asserting what the stage made, then compiled by
    iree-compile for `cpu` with the stage's llvm-cpu flags and loaded in IREE's runtime (one
    thread): g(*xs) the module's function `g`, a list of arrays. Skipped where the host cannot
    run the code. The stage and iree-compile run once a session: the first pytest-xdist worker
    to get here makes the module, the others wait for it and load it (each module is most of
    its file's time)."""
    import fcntl

    from dequant import iree

    import iree.runtime as rt

    skip_unless_host_runs(cpu)
    own = tmp_path_factory.mktemp(name)
    made = model(own / "m.onnx")  # the same arrays in every worker (fixed seeds)
    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared
    vmfb = shared / f"kernels-{name}.vmfb"
    with open(shared / f"kernels-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not vmfb.exists():
            text, summary = stage(own / "m.onnx", cpu, int8_activations, tags)
            check(text, summary)
            (own / "stage.mlir").write_text(text)
            flags = [f for f in iree.TARGETS["llvm-cpu"].flags if not f.startswith("--iree-llvmcpu-target-cpu=")]
            run = subprocess.run([sys.executable, "-m", iree.COMPILE, str(own / "stage.mlir"), *flags, *iree.COMMON_FLAGS,
                                  f"--iree-llvmcpu-target-cpu={cpu}", "-o", str(own / "m.vmfb")], capture_output=True, text=True)  # fmt: skip
            assert run.returncode == 0, run.stderr[-3000:]
            os.replace(own / "m.vmfb", vmfb)
    ctx = rt.SystemContext(config=rt.Config("local-sync"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb.read_bytes()))
    g = ctx.modules.module["g"]

    def call(*xs):
        got = g(*xs)
        return [np.asarray(v) for v in (got if isinstance(got, (list, tuple)) else [got])]

    return made, call


# --- what the exact kernels are held to -------------------------------------------------------


def f32_sum_bound(x: np.ndarray, w: np.ndarray, terms: int) -> np.ndarray:
    """The error of `terms` roundings of a running f32 sum of the products x @ w: each rounding
    is at most U times the partial sum, itself at most sum |x w| (so, with f32 FMAs, K terms give
    (K - 1) U / (1 - (K - 1) U) sum |x w| <= K U sum |x w| for K U < 1/2), with the float64
    reference's own K 2^-53 sum |x w|."""
    size = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64))
    return (terms * U + x.shape[-1] * 2.0**-53) * size
