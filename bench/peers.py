"""Peers of the kernel benchmark (bench/bench.py) that are optional extras: IREE, OpenVINO, JAX/XLA.

Each `*_runner(case, a, model)` returns `(run, result)` for one case at one size: `run()` is the
timed call (inputs already placed where the peer reads them, as a user keeping them there would),
`result()` the output as a numpy array for the equality check before timing. A case a peer cannot
run raises bench.NA with the reason (not installed, a type it refuses, a compile error).

- IREE 3.13: the case's one-node ONNX model through `iree-import-onnx` and `iree-compile`
  (llvm-cpu, `--iree-llvmcpu-target-cpu=host`), run by the local-task runtime (all cores). IREE
  alone, without dq's stage. IREE's compiler runs in child processes (its MLIR Python bindings
  cannot load beside dequant's), the runtime in this process. Inputs are device arrays made once.
- OpenVINO: the same model, CPU plugin, `INFERENCE_PRECISION_HINT` f32 and all cores, input and
  output tensors sharing the numpy arrays' memory (the output written in place).
- JAX/XLA: `jax.jit` of the ONNX formula `(x - zero_point) * scale` with the scale and zero point
  broadcast as the case's granularity says, inputs placed with `jax.device_put`, the call waited
  for with `block_until_ready`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

ONNX_INPUTS = ("x", "x_scale", "x_zero_point")
SUB_BYTE = {np.dtype(t) for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.float4_e2m1fn, ml_dtypes.int2, ml_dtypes.uint2)}


class NA(Exception):
    """An implementation cannot run a case; the message says why (bench.py's NA too)."""


def _na(message: str) -> NA:
    return NA(message)


def _inputs(case, a: dict) -> list:
    if case.op != "onnx":
        raise _na("the peer is given the case's ONNX model: not an ONNX op")
    return [np.asarray(a[k], order="C") for k in ONNX_INPUTS if a.get(k) is not None]  # (ascontiguousarray makes a 0-d array 1-d)


# --- IREE ---------------------------------------------------------------------------------------


def iree_runner(case, a: dict, model):
    try:
        import iree.runtime as rt
    except ImportError:
        raise _na("IREE is not installed (pip install 'dequant[iree]')") from None
    inputs = _inputs(case, a)
    if any(v.dtype in SUB_BYTE or v.dtype.type.__module__.startswith("ml_dtypes") for v in inputs):
        raise _na("IREE's runtime takes no ml_dtypes array (4-bit, float8, bfloat16) from Python")
    with tempfile.TemporaryDirectory() as tmp:
        path, mlir, vmfb = (os.path.join(tmp, n) for n in ("m.onnx", "m.mlir", "m.vmfb"))
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        for cmd in (["iree.compiler.tools.import_onnx", path, "-o", mlir],
                    ["iree.compiler.tools.scripts.iree_compile", mlir, "--iree-hal-target-device=local",
                     "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "-o", vmfb]):  # fmt: skip
            run = subprocess.run([sys.executable, "-m", *cmd], capture_output=True, text=True)
            if run.returncode:
                errors = [ln for ln in run.stderr.splitlines() if "error" in ln] or run.stderr.strip().splitlines()[-1:]
                raise _na(f"IREE refuses the model: {(errors or ['?'])[0].strip()[:160]}")
        with open(vmfb, "rb") as f:
            data = f.read()
    config = rt.Config("local-task")
    ctx = rt.SystemContext(config=config)
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, data))
    fn = ctx.modules.module[model.graph.name]
    args = [rt.asdevicearray(config.device, v) for v in inputs]

    def run():
        return fn(*args)

    run._keep = (ctx, args)
    return run, lambda: np.asarray(run())


# --- OpenVINO -----------------------------------------------------------------------------------


def openvino_runner(case, a: dict, model, out: np.ndarray, threads: int):
    try:
        import openvino as ov
    except ImportError:
        raise _na("OpenVINO is not installed (pip install openvino)") from None
    inputs = _inputs(case, a)
    if any(v.dtype.type.__module__.startswith("ml_dtypes") for v in inputs) or out.dtype.type.__module__.startswith("ml_dtypes"):
        raise _na("OpenVINO's Python tensors take no ml_dtypes array (4-bit, float8, bfloat16)")
    core = ov.Core()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        try:
            compiled = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads})
        except Exception as e:  # its own errors: unsupported types or ops
            raise _na(f"OpenVINO {ov.__version__} refuses the model: {str(e).strip().splitlines()[0][:160]}") from None
    request = compiled.create_infer_request()
    for i, v in enumerate(inputs):
        request.set_input_tensor(i, ov.Tensor(v, shared_memory=True))
    request.set_output_tensor(0, ov.Tensor(out, shared_memory=True))

    def run():
        request.infer()

    run._keep = (compiled, request, inputs)

    def result():
        run()
        return out.copy()

    return run, result


# --- JAX ----------------------------------------------------------------------------------------


def jax_runner(case, a: dict):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        raise _na("JAX is not installed (pip install jax)") from None
    inputs = _inputs(case, a)
    if any(v.dtype in SUB_BYTE for v in inputs):
        raise _na("a jitted formula takes no 4-bit array (XLA on CPU has no int4 buffers from numpy)")
    axis, block = case.attrs["axis"], case.attrs["block_size"]
    out_dtype = case.out_dtype

    def broadcast(v, x):
        """A scale or zero point against x: a 1-D one along `axis`, a blocked one repeated."""
        if v.ndim == 1 and x.ndim > 1:  # per-axis
            v = v.reshape([-1 if d == axis else 1 for d in range(x.ndim)])
        return jnp.repeat(v, block, axis=axis) if block else v

    def fn(x, s, z=None):
        d = x.astype(jnp.float32)
        if z is not None:
            d = d - broadcast(z, x).astype(jnp.float32)
        return (d * broadcast(s, x).astype(jnp.float32)).astype(out_dtype)

    jitted = jax.jit(fn)
    args = [jax.device_put(v) for v in inputs]

    def run():
        return jitted(*args).block_until_ready()

    return run, lambda: np.asarray(run())
