"""Native execution: compile a function through dq-to-llvm and call it on numpy arrays.

ABI: each tensor argument and result is a memref descriptor on a C-contiguous array. Narrow
types travel as ml_dtypes arrays, one element per byte for 4-bit types (dq-byte-storage).
Arrays are checked against the function's types and, for dq ops fed by arguments, against the
op's spec rules, before any native call: a bad array is a ValueError, never a native fault.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import np_to_memref

from dequant import dialect
from dequant.dialect.signature import Signature, Tensor, tensor_of
from dequant.dialect.types import ELEMS

CARRIERS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


_DESCRIPTORS: dict = {}


def descriptor_type(rank: int, itemsize: int):
    """The ctypes struct of a ranked memref descriptor (cached: one class per rank and size)."""
    key = (rank, itemsize)
    if key not in _DESCRIPTORS:
        ctype = np.ctypeslib.as_ctypes_type(CARRIERS[itemsize])
        if rank == 0:
            _DESCRIPTORS[key] = np_to_memref.make_zero_d_memref_descriptor(ctype)
        else:
            _DESCRIPTORS[key] = np_to_memref.make_nd_memref_descriptor(rank, ctype)
    return _DESCRIPTORS[key]


def descriptor(a: np.ndarray):
    """A memref descriptor on a C-contiguous array (no copy)."""
    d = descriptor_type(a.ndim, a.dtype.itemsize)()
    ptr = a.ctypes.data
    d.allocated = ptr
    ctypes.c_void_p.from_buffer(d, type(d).aligned.offset).value = ptr
    if a.ndim:
        d.shape[:] = a.shape
        d.strides[:] = [s // a.dtype.itemsize for s in a.strides]
    return d


@dataclass
class _OpCheck:
    """A dq op of the entry whose operands include entry arguments: checked per call."""

    opdef: object
    signature: Signature
    args: dict  # operand name -> argument index
    form: object  # the canonical form compiled, from the op's types


class Kernel:
    """A compiled function; call it with numpy arrays, get numpy arrays back."""

    def __init__(self, module: ir.Module, entry: str, opt_level: int = 3):
        from .pipeline import build

        self.entry = entry
        f = _find(module, entry)
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        self.inputs = [_tensor_or_fail(t, f"argument {i}") for i, t in enumerate(ftype.inputs)]
        self.results = [_tensor_or_fail(t, f"result {i}") for i, t in enumerate(ftype.results)]
        self.checks = _op_checks(f)
        if not dialect.verify(module.operation):
            raise ValueError(f"'{entry}' has dq ops that break their spec (see the diagnostics)")
        build("dq-to-llvm", module.context).run(module.operation)
        self._module = module
        self.engine = ExecutionEngine(module, opt_level=opt_level)
        address = self.engine.raw_lookup("_mlir_ciface_" + entry)  # the packed wrapper: void(void**)
        self._fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        self._result_struct = type(
            "Results",
            (ctypes.Structure,),
            {"_fields_": [(f"r{i}", descriptor_type(t.rank, _itemsize(t))) for i, t in enumerate(self.results)]},
        )

    def check(self, arrays: list[np.ndarray]) -> None:
        """Raise ValueError if `arrays` do not fit the function and its dq ops' rules."""
        if len(arrays) != len(self.inputs):
            raise ValueError(f"'{self.entry}' takes {len(self.inputs)} arrays, got {len(arrays)}")
        for i, (a, t) in enumerate(zip(arrays, self.inputs)):
            want = np.dtype(ELEMS[t.elem].dtype)
            if a.dtype != want:
                raise ValueError(f"argument {i}: expected dtype {want} ({t.elem}), got {a.dtype}")
            if a.ndim != t.rank or any(d is not None and d != s for d, s in zip(t.shape, a.shape)):
                raise ValueError(f"argument {i}: expected shape {_show(t.shape)}, got {list(a.shape)}")
        for c in self.checks:
            operands = dict(c.signature.operands)
            values = dict(c.signature.values)
            for name, index in c.args.items():
                operands[name] = Tensor(operands[name].elem, tuple(arrays[index].shape))
                if name in c.opdef.value_operands:
                    values[name] = arrays[index]
            sig = Signature(operands, c.signature.result, c.signature.attrs, values)
            message = c.opdef.check(sig)
            if message:
                raise ValueError(f"{c.opdef.name}: {message}")
            if c.opdef.canonical(sig) != c.form:  # e.g. a one-element scale where `?` was compiled
                raise ValueError(
                    f"{c.opdef.name}: these shapes select another granularity than the one compiled from the "
                    "function's types (a dynamic dim is never read as 1): give such dims a static size"
                )

    def _pack(self, arrays: list[np.ndarray]):
        """The results struct and the packed arguments of a call of the C-interface wrapper (each
        slot points to a pointer to a descriptor), and what must stay alive while they are used."""
        results = self._result_struct()
        structs = ([results] if self.results else []) + [descriptor(a) for a in arrays]
        pointers = [ctypes.c_void_p(ctypes.addressof(d)) for d in structs]
        packed = (ctypes.c_void_p * len(pointers))(*[ctypes.addressof(p) for p in pointers])
        return results, packed, (structs, pointers)

    def _invoke(self, arrays: list[np.ndarray]):
        """Call the wrapper once. ctypes releases the GIL for the call, so threads may run kernels
        in parallel."""
        results, packed, _alive = self._pack(arrays)
        self._fn(packed)
        return results

    def __call__(self, *arrays):
        arrays = [np.asarray(a, order="C") for a in arrays]
        self.check(arrays)
        results = self._invoke(arrays)
        inputs = {a.ctypes.data for a in arrays}
        out = [_take(getattr(results, f"r{i}"), t, inputs) for i, t in enumerate(self.results)]
        return out[0] if len(out) == 1 else tuple(out)

    def bind(self, arrays: list[np.ndarray], out: np.ndarray):
        """A no-argument callable running the kernel on these checked arrays into `out`, with its
        descriptors and packed arguments built once: a call is one ctypes call (GIL released)."""
        arrays = list(arrays)
        results, packed, alive = self._pack(arrays + [out])
        fn, where = self._fn, out.ctypes.data

        def call() -> None:
            fn(packed)
            self._written(results.r0, out, where, arrays)

        call._keep = (self, arrays, out, alive, packed)
        return call

    def call_into(self, arrays: list[np.ndarray], out: np.ndarray) -> None:
        """Call a destination-passing kernel (last argument `out`, returned) on checked arrays."""
        self._written(self._invoke(list(arrays) + [out]).r0, out, out.ctypes.data, arrays)

    def _written(self, result, out: np.ndarray, where: int, arrays: list[np.ndarray]) -> None:
        """Copy the result into `out` (at address `where`) if bufferization did not write in place."""
        if result.allocated != where:
            out[...] = _take(result, self.results[0], {a.ctypes.data for a in arrays})


def jit(module_or_text, entry: str, *, opt_level: int = 3) -> Kernel:
    """Compile `entry` of a module or its text; the module is copied, not changed."""
    from dequant import context

    text = module_or_text if isinstance(module_or_text, str) else str(module_or_text)
    ctx = context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        kernel = Kernel(module, entry, opt_level)
    kernel._context = ctx
    return kernel


def _find(module: ir.Module, entry: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == entry:
            return op
    raise ValueError(f"no function '{entry}' in the module")


def _tensor_or_fail(t, what: str) -> Tensor:
    tensor = tensor_of(t)
    if tensor is None or tensor.elem not in ELEMS:
        raise ValueError(f"{what}: only ranked tensors of dq element types are supported, got {t}")
    return tensor


def _itemsize(t: Tensor) -> int:
    return np.dtype(ELEMS[t.elem].dtype).itemsize


def _show(shape) -> list:
    return ["?" if d is None else d for d in shape]


def _op_checks(f) -> list[_OpCheck]:
    args = {a: i for i, a in enumerate(f.regions[0].blocks[0].arguments)}
    checks = []
    for op in dialect.dq_ops(f.operation):
        d = dialect.OPS[op.name]
        fed = {}
        for name, v in zip(d.operands, op.operands):
            if isinstance(v, ir.BlockArgument) and v in args:
                fed[name] = args[v]
        if fed and d.canonical is not None:
            try:
                sig = d.signature(op)
            except Exception:  # a malformed op is reported by the verifier
                continue
            if d.check(sig) is None:
                checks.append(_OpCheck(d, sig, fed, d.canonical(sig)))
    return checks


def _take(desc, t: Tensor, inputs: set) -> np.ndarray:
    """A numpy copy of a returned memref; frees the buffer the kernel allocated (not an
    argument's, not one already freed: both are in `inputs`)."""
    dtype = np.dtype(ELEMS[t.elem].dtype)
    shape = tuple(desc.shape) if t.rank else ()
    strides = tuple(desc.strides) if t.rank else ()
    base = ctypes.cast(desc.aligned, ctypes.c_void_p).value or 0
    size = dtype.itemsize
    nbytes = (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * size if all(shape) else 0
    if nbytes:
        buf = (ctypes.c_char * nbytes).from_address(base + desc.offset * size)
        flat = np.frombuffer(buf, dtype=CARRIERS[size])
        view = np.lib.stride_tricks.as_strided(flat, shape, [s * size for s in strides])
        out = view.copy().view(dtype)
    else:
        out = np.zeros(shape, dtype)
    if desc.allocated and desc.allocated not in inputs:
        _libc.free(desc.allocated)
        inputs.add(desc.allocated)  # results sharing one buffer free it once
    return out
