"""Dequantize numpy arrays with compiled kernels, one function per spec op.

Each call checks the arrays against the op's spec rules (ValueError naming the rule, before any
native call), then runs a kernel compiled once per signature (element types, ranks, attributes):
its dims are dynamic, so one kernel serves every shape. The kernel writes into `out` (allocated
when not given) in destination-passing style. `bind` does the checks once and returns a callable
that reruns the kernel on the same arrays (like ONNX Runtime's IO binding).
"""

from __future__ import annotations

import functools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from mlir import ir
from mlir.dialects import bufferization, func

from dequant.dialect import OPS, ngraph, onednn, onnx, pmx
from dequant.dialect.opdef import OpDef, create
from dequant.dialect.signature import Signature, Tensor, check
from dequant.dialect.types import ELEMS, from_dtype

_KERNELS: dict = {}
_PLANS: dict = {}


def _tensor(a: np.ndarray) -> Tensor:
    return Tensor(from_dtype(a.dtype).name, tuple(a.shape))


def _kernel_shape(is_data: bool, t: Tensor) -> tuple:
    """A kernel operand's dims: None (dynamic), or 1 for a unit dim of a scale or zero point."""
    return tuple(None if is_data or d != 1 else 1 for d in t.shape)


def _kernel(opdef: OpDef, operands: dict, attrs: dict, result: Tensor):
    """The compiled kernel for this signature (cached)."""
    from dequant import context

    from .jit import Kernel

    # Dims are dynamic, except scale and zero point dims of size 1: granularity is read from
    # them (a one-element scale is per-tensor), so they stay static and part of the key.
    shapes = {n: _kernel_shape(n == opdef.operands[0], t) for n, t in operands.items() if t is not None}
    key = (opdef.name, tuple((n, t.elem, shapes[n]) if t else (n, None) for n, t in operands.items()),
           tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items())), result.elem, result.rank)  # fmt: skip
    if key in _KERNELS:
        return _KERNELS[key]
    ctx = context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        dyn = ir.ShapedType.get_dynamic_size()

        def ttype(t: Tensor, shape: tuple):
            return ir.RankedTensorType.get([dyn if d is None else d for d in shape], ir.Type.parse(t.elem))

        in_types = [ttype(t, shapes[n]) for n, t in operands.items() if t is not None]
        in_types.append(ttype(result, (None,) * result.rank))
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("kernel", (in_types, [in_types[-1]]))
            with ir.InsertionPoint(f.add_entry_block()):
                args = list(f.arguments)
                values, k = [], 0
                for t in operands.values():
                    values.append(args[k] if t is not None else None)
                    k += t is not None
                y = create(opdef, values, attrs, in_types[-1])
                r = bufferization.materialize_in_destination(in_types[-1], y, args[-1])
                func.ReturnOp([r])
        kernel = Kernel(module, "kernel")
    kernel._context = ctx
    _KERNELS[key] = kernel
    return kernel


def run(opdef: OpDef, arrays: dict, attrs: dict, result_elem: str, result_shape: tuple, out=None) -> np.ndarray:
    """Check `arrays` against `opdef`'s rules, then dequantize natively into `out`."""
    if getattr(_binding, "active", False):
        for n, a in arrays.items():
            if a is not None and not (isinstance(a, np.ndarray) and a.flags.c_contiguous):
                raise ValueError(f"bind: {n} must be a C-contiguous numpy array (it is read in place)")
    arrays = {n: (None if a is None else np.asarray(a, order="C")) for n, a in arrays.items()}
    # Everything but values is decided by dtypes, shapes and attributes: one lookup per call.
    key = (opdef.name, result_elem, tuple(result_shape),
           tuple(None if a is None else (a.dtype, a.shape) for a in arrays.values()),
           tuple(tuple(v) if isinstance(v, list) else v for v in attrs.values()))  # fmt: skip
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= 4096:  # bounded: many distinct shapes must not grow memory forever
            _PLANS.clear()
        plan = _PLANS[key] = _plan(opdef, arrays, attrs, result_elem, result_shape)
    verdict, form, sig = plan["verdict"], plan["form"], plan["sig"]
    if not verdict and opdef.value_rules:
        values = {n: arrays[n] for n in opdef.value_operands if arrays.get(n) is not None}
        if values:
            verdict = check(list(opdef.value_rules), Signature(sig.operands, sig.result, attrs, values))
    if verdict:
        raise ValueError(f"{opdef.name}: {verdict}")
    dtype = np.dtype(ELEMS[result_elem].dtype)
    if out is None:
        out = np.empty(sig.result.shape, dtype)
    elif out.dtype != dtype or out.shape != sig.result.shape or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {dtype} array of shape {list(sig.result.shape)}")
    kernel = plan.get("kernel")
    if kernel is None:  # compiled once the arrays passed every rule
        kernel = plan["kernel"] = _kernel(opdef, sig.operands, attrs, sig.result)
    inputs = [a for a in arrays.values() if a is not None]
    chunks = _row_chunks(form, out.shape, _threads)
    if getattr(_binding, "active", False):
        jobs = [(inputs, out)] if len(chunks) < 2 else _jobs(form, inputs, out, chunks)
        if any(not np.may_share_memory(p, a) for parts, _ in jobs for p, a in zip(parts, inputs)):
            jobs = [(inputs, out)]  # a row range is a copy: one thread, reading the arrays in place
        return Bound([kernel.bind(*job) for job in jobs], out)
    if len(chunks) < 2:
        kernel.call_into(inputs, out)
    else:
        _parallel([functools.partial(kernel.call_into, *job) for job in _jobs(form, inputs, out, chunks)])
    return out


def _parallel(calls: list) -> None:
    """Run the calls at once: the calling thread takes the first, the pool the others."""
    pending = [_pool().submit(c) for c in calls[1:]]
    calls[0]()
    for p in pending:
        p.result()


def _jobs(form, inputs: list, out: np.ndarray, chunks: list) -> list:
    return [([_rows(form, i, a, b, e) for i, a in enumerate(inputs)], out[b:e]) for b, e in chunks]


_binding = threading.local()  # .active: run() returns a Bound (set by bind, in this thread only)


class Bound:
    """One op on fixed arrays, checked and compiled once: each call recomputes `out` from the
    arrays' current contents with no per-call checks (see `bind`)."""

    def __init__(self, calls: list, out: np.ndarray):
        self._calls, self.out = calls, out

    def __call__(self) -> np.ndarray:
        if len(self._calls) == 1:
            self._calls[0]()
        else:
            _parallel(self._calls)
        return self.out


def bind(op, *args, **kwargs) -> Bound:
    """Like ONNX Runtime's IO binding: `bind(onnx_dequantize_linear, x, s, zp, out=y)` checks
    the arrays against the op's rules and compiles once, and returns a callable that reruns the
    kernel into `out` (allocated if not given) as one native call per thread. The arrays are kept
    alive and read in place: change their values, not their shapes or dtypes, between calls.
    Value rules (e.g. a zero point's range) are checked at bind time only. The thread split is
    fixed at bind time."""
    _binding.active = True
    try:
        return op(*args, **kwargs)
    finally:
        _binding.active = False


def _plan(opdef: OpDef, arrays: dict, attrs: dict, result_elem: str, result_shape: tuple) -> dict:
    """The type/shape verdict, canonical form and signature for arrays of these dtypes and
    shapes (the kernel is added once a call passes every rule)."""
    operands = {n: (None if a is None else _tensor(a)) for n, a in arrays.items()}
    sig = Signature(operands, Tensor(result_elem, tuple(result_shape)), attrs, {})
    verdict = opdef.check_types(sig)
    return {"verdict": verdict, "form": None if verdict else opdef.canonical(sig), "sig": sig}


def set_num_threads(n: int | None = None) -> None:
    """Threads for large arrays (default, or None: the available cores)."""
    global _threads, _executor
    _threads = max(1, int(n)) if n else _cores()
    if _executor is not None:
        _executor.shutdown()
        _executor = None


def get_num_threads() -> int:
    return _threads


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_threads = _cores()
_executor = None
# Output elements below which one thread is faster: waking a pool thread costs 30-100 us on the
# 2-core benchmark machine; 2 threads lost at 1M elements (73 -> 95 us, int8), broke even at 2M
# and won at 4M (246 -> 207 us; float8 434 -> 262 us).
MIN_PARALLEL = 3 << 20


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=_threads, thread_name_prefix="dequant")
    return _executor


def _row_chunks(form, shape: tuple, threads: int) -> list:
    """Split output dim 0 into up to `threads` row ranges, at multiples of every block that
    dim 0 is read through (int4x4 packing, blocks/groups along dim 0)."""
    if threads < 2 or not shape or int(np.prod(shape)) < MIN_PARALLEL:
        return []
    unit = 4 if form.unpack == "int4x4" else 1
    for entry in (form.scale_map or ()) + (form.zero_point_map or ()):
        if entry[0] == "block" and entry[1] == 0:
            unit = math.lcm(unit, entry[2])
    units = -(-shape[0] // unit)
    n = min(threads, units)
    if n < 2:
        return []
    bounds = [min(shape[0], (units * i // n) * unit) for i in range(n + 1)]
    return [(b, e) for b, e in zip(bounds, bounds[1:]) if e > b]


def _rows(form, index: int, a: np.ndarray, b: int, e: int) -> np.ndarray:
    """The part of operand `index` (0 data, 1 scale, 2 zero point) that output rows [b, e)
    read, as a contiguous array."""
    if index == 0:
        return a[b // 4 : -(-e // 4)] if form.unpack == "int4x4" else a[b:e]
    entries = form.scale_map if index == 1 else (form.zero_point_map or form.scale_map)
    for p, entry in enumerate(entries):
        if entry[0] in ("dim", "block") and entry[1] == 0:
            k = entry[2] if entry[0] == "block" else 1
            part = a[(slice(None),) * p + (slice(b // k, -(-e // k)),)]
            return part if p == 0 else np.ascontiguousarray(part)
    return a


def onnx_dequantize_linear(x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=None, out=None):
    """ONNX DequantizeLinear (opset 24): y = (x - x_zero_point) * x_scale.

    `output_dtype` is a numpy/ml_dtypes dtype (float32, float16, bfloat16) or None for the
    scale's type."""
    x, x_scale = np.asarray(x), np.asarray(x_scale)
    out_elem = None if output_dtype is None else from_dtype(output_dtype).name
    attrs = {"axis": int(axis), "block_size": int(block_size), "output_dtype": out_elem}
    arrays = {"x": x, "x_scale": x_scale, "x_zero_point": x_zero_point}
    result_elem = onnx.result_elem(from_dtype(x_scale.dtype).name, out_elem)
    return run(OPS[onnx.NAME], arrays, attrs, result_elem, x.shape, out)


def onednn_dynamic_dequantize(src, scales, zps=None, *, qtype="per_tensor", axis=1, out=None):
    """oneDNN Graph DynamicDequantize: f32 output = (src - zps) * scales."""
    src = np.asarray(src)
    arrays = {"input": src, "scales": scales, "zps": zps}
    return run(OPS[onednn.NAME], arrays, {"qtype": qtype, "axis": int(axis)}, "f32", src.shape, out)


def ngraph_dequantize(input, scale, zero_point, *, type, axes, out=None):
    """nGraph Dequantize: output (of element `type`, a numpy/ml_dtypes dtype) =
    (input - zero_point) * scale, with scale and zero point indexed by the `axes` coordinates."""
    input = np.asarray(input)
    t = from_dtype(type).name
    arrays = {"input": input, "scale": scale, "zero_point": zero_point}
    return run(OPS[ngraph.NAME], arrays, {"type": t, "axes": sorted(axes) if isinstance(axes, set) else list(axes)}, t, input.shape, out)


def pmx_dequantize_linear(X, Scale, ZeroPoint=None, *, quant_data_type, quant_axis=1, group_size=128,
                          has_zeropoint=False, float_zeropoint=False, quant_method="", out=None):  # fmt: skip
    """OpenPPL (ppl.pmx) DequantizeLinear; int4 X is int16 packing four values along dim 0."""
    X, Scale = np.asarray(X), np.asarray(Scale)
    attrs = {"quant_data_type": quant_data_type, "quant_method": quant_method, "quant_axis": int(quant_axis),
             "group_size": int(group_size), "has_zeropoint": bool(has_zeropoint), "float_zeropoint": bool(float_zeropoint)}  # fmt: skip
    arrays = {"X": X, "Scale": Scale, "ZeroPoint": ZeroPoint}
    result_elem = from_dtype(Scale.dtype).name
    return run(OPS[pmx.NAME], arrays, attrs, result_elem, pmx.unpacked_shape(X.shape, quant_data_type), out)
