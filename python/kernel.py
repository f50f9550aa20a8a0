"""Native code from MLIR: compile a function through dq-to-llvm and call it on numpy arrays.

ABI (docs/abi.md): each public function becomes `_mlir_ciface_<name>(results..., args...)`, every
tensor a memref descriptor (allocated, aligned, offset, sizes, strides) over plain memory:
unsigned and sub-byte elements as dq-storage-abi lays them out (one element per byte for sub-byte
types), f16/bf16/float8 as their bits. The caller's arrays are read-only to the kernel
(`bufferization.writable = false` on every argument the caller did not mark writable). A result
buffer is malloc'ed by the kernel, except one that is an argument's memory or a constant
(`allocated` is then the argument's pointer, or MLIR's 0xDEADBEEF marker of a global): `take`
copies every result and frees only what the kernel allocated.

Before any native call a Kernel has made sure that every symbol the code calls is defined
(`UnresolvedSymbolError` otherwise): an unresolved call would jump to address 0. Run-time shape
checks that fail (passes/checks.py) are recorded per thread and raised as a ValueError after the
call (`raise_failures`).
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import np_to_memref

from dequant.dialect.elements import ELEMENTS
from dequant.dialect.signature import Tensor, tensor_of
from dequant.dialect.walking import walk
from dequant.passes import checks
from dequant.passes.nontemporal_entries import SUFFIX as NONTEMPORAL_SUFFIX
from dequant.passes.packed_arguments import PACKED, packed_arguments
from dequant.passes.to_llvm import WITHOUT_NONTEMPORAL
from dequant.passes.queries import function_name, function_type, public_functions
from dequant.dialect.attributes import text

from .pipeline import build

GLOBAL_MARKER = 0xDEADBEEF  # `allocated` of a memref.get_global descriptor (MLIR's convention)
OPT_LEVELS = (0, 1, 2, 3)

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_DESCRIPTORS: dict = {}  # (rank, itemsize) -> ctypes struct class; a cache of immutable classes


class UnresolvedSymbolError(ValueError):
    """The compiled code calls a function no loaded library defines."""


class CompileError(RuntimeError):
    """A kernel for a valid signature failed to compile: a bug in dequant, not in the caller's
    input (which is refused before, with a ValueError naming the rule). The message names the
    signature; the compiler's own error is its `__cause__`."""


# An ndarray's data pointer read straight from its C struct: `PyArrayObject_fields.data` is the
# first field after the object header (numpy 1.x and 2.x), read through a view of the address space
# as 8-byte words (id() is the object's address): `a.ctypes.data` and `a.__array_interface__`
# build Python objects, which dominated a cached call on small arrays (docs/performance.md#call-overhead). It depends on numpy's struct layout and CPython's object header, so it is used only
# after `_peek_works` compared it with `a.ctypes.data` on arrays of several kinds (in this
# process, with this numpy); otherwise `data_pointer` is `a.ctypes.data`.
_HEADER = object.__basicsize__  # ob_refcnt, ob_type: 16 bytes on a 64-bit non-free-threaded CPython
_WORDS = memoryview((ctypes.c_uint64 * (1 << 44)).from_address(0)).cast("B").cast("Q") if ctypes.sizeof(ctypes.c_void_p) == 8 else None


def _peek_pointer(a: np.ndarray, _words=_WORDS, _header=_HEADER) -> int:
    return _words[(id(a) + _header) >> 3]


def _peek_works() -> bool:
    """Whether `_peek_pointer` agrees with `a.ctypes.data` on fresh arrays, views at an offset,
    0-d, empty and read-only arrays, ml_dtypes arrays and a subclass."""
    if _WORDS is None or _HEADER % 8:
        return False
    base = np.arange(64, dtype=np.float32)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    samples = [base, base[5:], base.reshape(8, 8)[3], np.empty(()), np.empty(0), np.zeros(7, ml_dtypes.bfloat16), frozen,
               np.frombuffer(bytearray(16), np.uint8)[1:], np.ma.masked_array([1, 2])]  # fmt: skip
    try:
        return all(_peek_pointer(a) == a.ctypes.data for a in samples)
    except Exception:  # noqa: BLE001 - any failure means: do not peek
        return False


PEEK = _peek_works()
# (words, header) for callers that inline the read: words[(id(a) + header) >> 3], when PEEK.
POINTER_WORDS, POINTER_HEADER = (_WORDS, _HEADER) if PEEK else (None, 0)


SCALAR_HEADER = _HEADER  # a scalar's value is at id(scalar) + SCALAR_HEADER where `scalar_inline`
_INLINE: dict = {}  # scalar type -> whether its value lives at id(scalar) + _HEADER


def scalar_inline(t: type) -> bool:
    """Whether a numpy (or ml_dtypes) scalar of type `t` holds its value in its own object right
    after the object header, where numpy's `scalar_value` and ml_dtypes' `PyCustomFloat` put it:
    then the value's address is id(scalar) + _HEADER, with no array built per call (a scalar is
    immutable, and the caller's reference keeps it alive through the call). Checked once per type
    against `np.asarray(scalar).tobytes()` on two values of different bytes; False for a type that
    is not its dtype's own scalar type (a subclass) or that fails the check."""
    found = _INLINE.get(t)
    if found is None:
        found = _INLINE[t] = _inline_works(t)
    return found


def _inline_works(t: type) -> bool:
    if _HEADER % 8:
        return False
    try:
        dtype = np.dtype(t)
        if dtype.type is not t or dtype.hasobject or dtype.itemsize == 0:
            return False
        values = [np.array(v).astype(dtype)[()] for v in (1, 2)]
        if any(type(v) is not t for v in values) or values[0].tobytes() == values[1].tobytes():
            return False
        return all(ctypes.string_at(id(v) + _HEADER, dtype.itemsize) == np.asarray(v).tobytes() for v in values)
    except Exception:  # noqa: BLE001 - any failure means: build an array per call
        return False


def data_pointer(a: np.ndarray) -> int:
    """The address of an ndarray's first element (read from the array's struct where the
    self-test passed, else `a.ctypes.data`)."""
    return _WORDS[(id(a) + _HEADER) >> 3] if PEEK else a.ctypes.data


def descriptor_type(rank: int, itemsize: int):
    """The ctypes struct of a ranked memref descriptor (one class per rank and element size)."""
    key = (rank, itemsize)
    found = _DESCRIPTORS.get(key)
    if found is None:
        ctype = np.ctypeslib.as_ctypes_type(np.dtype(f"uint{8 * itemsize}"))
        found = np_to_memref.make_zero_d_memref_descriptor(ctype) if rank == 0 else np_to_memref.make_nd_memref_descriptor(rank, ctype)
        found = _DESCRIPTORS.setdefault(key, found)
    return found


def itemsize(t: Tensor) -> int:
    """Bytes per element of a tensor as passed (one byte for sub-byte types)."""
    return ELEMENTS[t.elem].dtype.itemsize


def aligned_field(d) -> ctypes.c_void_p:
    """The `aligned` pointer field of descriptor `d`, as a settable c_void_p view."""
    return ctypes.c_void_p.from_buffer(d, type(d).aligned.offset)


def fill(d, pointer: int, shape: tuple, strides: tuple) -> None:
    """Point descriptor `d` at `pointer` with `shape` and `strides` (in elements)."""
    d.allocated = pointer
    aligned_field(d).value = pointer
    if shape:
        d.shape[:] = shape
        d.strides[:] = strides


def descriptor(a: np.ndarray):
    """A memref descriptor on a C-contiguous array (no copy)."""
    d = descriptor_type(a.ndim, a.dtype.itemsize)()
    fill(d, a.ctypes.data, a.shape, tuple(s // a.dtype.itemsize for s in a.strides))
    return d


def packed_descriptor(p):
    """A memref descriptor on a Packed: the logical sizes and row-major strides over its bytes."""
    d = descriptor_type(len(p.shape), 1)()
    strides = tuple(int(np.prod(p.shape[i + 1 :], dtype=np.int64)) for i in range(len(p.shape)))
    fill(d, p.data.ctypes.data, p.shape, strides)
    return d


@dataclass(frozen=True)
class FunctionSignature:
    name: str
    inputs: tuple  # Tensor per argument
    results: tuple  # Tensor per result
    packed: tuple = ()  # per argument: its sub-byte data is packed (`dq.packed`)
    nontemporal: bool = False  # dq-to-llvm gives it a `<name>_nt` entry point (it computes a dq op)


def signature(f) -> FunctionSignature:
    """The tensor signature of a `func.func`; ValueError for types that cannot cross the ABI."""
    name = function_name(f)
    ftype = function_type(f)

    def tensor(t, what):
        found = tensor_of(t)
        if found is None:
            raise ValueError(f"function '{name}': {what} is {t}: only ranked tensors of dq element types cross the native interface")
        return found

    inputs = tuple(tensor(t, f"argument {i}") for i, t in enumerate(ftype.inputs))
    results = tuple(tensor(t, f"result {i}") for i, t in enumerate(ftype.results))
    marked = set(packed_arguments(f))
    return FunctionSignature(name, inputs, results, tuple(i in marked for i in range(len(inputs))), _computes(f))


def _computes(f) -> bool:
    """Whether `f` holds a dq op or a linalg.generic: what dq-nontemporal-entries copies."""
    found = []

    def visit(o):
        if o.name.startswith("dq.") or o.name == "linalg.generic":
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    walk(f.operation, visit)
    return bool(found)


def mark_packed(module: ir.Module, entry: str | None = None) -> None:
    """Mark every sub-byte tensor argument of the public functions (or of `entry`) `dq.packed`."""
    for f in public_functions(module):
        if entry is not None and function_name(f) != entry:
            continue
        ftype = function_type(f)
        attrs = list(ir.ArrayAttr(f.attributes["arg_attrs"])) if "arg_attrs" in f.attributes else [ir.DictAttr.get({})] * len(ftype.inputs)
        new = []
        for t, a in zip(ftype.inputs, attrs):
            d = ir.DictAttr(a)
            entries = {d[i].name: d[i].attr for i in range(len(d))}
            found = tensor_of(t)
            if found is not None and found.elem in ELEMENTS and ELEMENTS[found.elem].sub_byte:
                entries[PACKED] = ir.UnitAttr.get()
            new.append(ir.DictAttr.get(entries))
        f.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


def find_function(module: ir.Module, entry: str):
    """The public func.func named `entry` with a body; ValueError otherwise."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and function_name(op) == entry:
            if not len(op.regions[0].blocks):
                raise ValueError(f"'{entry}' is a declaration: there is no body to compile")
            if "sym_visibility" in op.attributes:
                raise ValueError(f"'{entry}' is not public: only public functions get a native entry point")
            return op
    raise ValueError(f"no function '{entry}' in the module")


def external_symbols(module: ir.Module) -> list[str]:
    """The functions an LLVM-dialect module declares without defining them and calls (or takes
    the address of); a declaration nothing uses needs no definition."""
    declared = {
        text(op.attributes["sym_name"])
        for op in module.body.operations
        if op.operation.name == "llvm.func" and not len(op.regions[0].blocks)
    }
    used = []

    def visit(o):
        for key in ("callee", "global_name"):
            if key in o.attributes:
                name = ir.FlatSymbolRefAttr(o.attributes[key]).value
                if name in declared and name not in used:
                    used.append(name)
        return ir.WalkResult.ADVANCE

    walk(module.operation, visit)
    return used


class NotCompilableError(ValueError):
    """The ExecutionEngine would abort the process on this module."""


def check_compilable(module: ir.Module, object_file: bool = False) -> None:
    """NotCompilableError where the ExecutionEngine would abort the process on an LLVM-dialect
    module: a function defined with a linkage other than external (the engine looks up a wrapper
    of each defined function, which LLVM then cannot find, and aborts), or, for an object file,
    no function defined at all (nothing is compiled, and MLIR asserts that one object was)."""
    external = ir.Attribute.parse("#llvm.linkage<external>", module.context)
    defined = []
    for op in module.body.operations:
        if "sym_name" in op.attributes:
            try:
                ir.StringAttr(op.attributes["sym_name"]).value_bytes.decode("utf-8")
            except UnicodeDecodeError:
                raise NotCompilableError(f"symbol '{text(op.attributes['sym_name'])}' is not valid UTF-8: the ExecutionEngine looks symbols up by name") from None
        if op.operation.name != "llvm.func" or not op.regions[0].blocks:
            continue
        name = text(op.attributes["sym_name"])
        if "linkage" in op.attributes and op.attributes["linkage"] != external:
            raise NotCompilableError(f"function '{name}' is defined with {op.attributes['linkage']}: the ExecutionEngine compiles externally linked functions only")
        defined.append(name)
    if object_file and not defined:
        raise NotCompilableError("the module defines no function: there is nothing to compile into an object")


def check_symbols(module: ir.Module, provided: tuple = (), shared_libs: tuple = ()) -> None:
    """UnresolvedSymbolError naming each external function no library in this process defines
    and the engine does not provide."""
    libs = [_libc] + [ctypes.CDLL(p) for p in shared_libs]
    missing = [s for s in external_symbols(module) if s not in provided and not any(hasattr(lib, s) for lib in libs)]
    if missing:
        raise UnresolvedSymbolError(f"the compiled code calls {', '.join(missing)}, which no loaded library defines")


_REPORT = ctypes.CFUNCTYPE(None, ctypes.c_int64)


def _recorder(kernel: weakref.ref):
    """The report callback of `kernel`'s engines, holding the kernel weakly: an engine keeps what
    is registered with it alive, where the garbage collector cannot see, so a callback holding
    its kernel made a cycle that was never collected (every kernel and its JIT code lived as long
    as the process)."""

    def record(code: int) -> None:
        found = kernel()
        if found is not None:
            found._record(code)

    return record


class Kernel:
    """A compiled public function: its tensor signature and its C-interface entry point.

    `module` is lowered in place (dq-to-llvm unless it is already in the LLVM dialect)."""

    def __init__(self, module: ir.Module, entry: str, opt_level: int = 3, *, nontemporal_source=None):
        """`nontemporal_source`: a function returning a new module like `module` (unlowered, in a
        context of its own); the `_nt` entry point is then compiled from it at the first use of
        `fn_nt`, in a second engine, instead of with the kernel (the numpy API's kernels: most
        calls never need it, and it costs more than half the first compile; docs/performance.md).

        The kernel keeps no MLIR module or context: the engine's code needs neither, and a context
        held per kernel was 2.5 of its 3.4 MiB."""
        if opt_level not in OPT_LEVELS:
            raise ValueError(f"opt_level must be one of {OPT_LEVELS}, got {opt_level!r}")
        self.signature = signature(find_function(module, entry))
        self._entry, self._opt_level = entry, opt_level
        self._source = nontemporal_source if self.signature.nontemporal else None
        self._nt_lock = threading.Lock()
        pipeline = "dq-to-llvm" if self._source is None else WITHOUT_NONTEMPORAL
        with module.context, ir.Location.unknown():
            build(pipeline, module.context).run(module.operation)
        self._failed: dict = {}  # the codes calls reported (checks.py), by the ident of the calling thread
        self._failed_lock = threading.Lock()
        self.pending = 0  # codes recorded and not yet raised, in any thread: the calls' cheap test
        self._report = _REPORT(_recorder(weakref.ref(self)))
        self.engine = self._engine(module)
        address = self.engine.raw_lookup("_mlir_ciface_" + entry)  # void(void **packed)
        if not address:
            raise UnresolvedSymbolError(f"no entry point for '{entry}' in the compiled code")
        self.fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        self.fn_address = address  # what a native caller (the pool's spinning worker) calls
        self.fn_nt_address = None
        self._nt_engine = None if self._source is not None else self.engine  # the engine holding `_nt`
        self._fn_nt = None if self._source is not None else self._lookup_nt(self.engine)
        fields = [(f"r{i}", descriptor_type(t.rank, itemsize(t))) for i, t in enumerate(self.signature.results)]
        self.results_type = type("Results", (ctypes.Structure,), {"_fields_": fields})

    def _engine(self, module: ir.Module) -> ExecutionEngine:
        check_compilable(module)
        check_symbols(module, provided=(checks.REPORT,))
        engine = ExecutionEngine(module, opt_level=self._opt_level)
        engine.raw_register_runtime(checks.REPORT, ctypes.cast(self._report, ctypes.c_void_p))
        return engine

    def _lookup_nt(self, engine):
        # dq-nontemporal-entries' copy with non-temporal stores (None if the function computes no
        # dq op): same arguments, for calls whose data does not fit the cache (docs/performance.md)
        address = engine.raw_lookup("_mlir_ciface_" + self._entry + NONTEMPORAL_SUFFIX)
        self.fn_nt_address = address or None
        return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address) if address else None

    @property
    def nontemporal_engine(self):
        """The engine holding the `_nt` entry point (compiled here if lazy; the kernel's own engine
        otherwise), e.g. to disassemble it."""
        self.fn_nt
        return self._nt_engine

    @property
    def fn_nt(self):
        """The `_nt` entry point (non-temporal stores), or None; compiled here if lazy."""
        if self._source is not None:
            with self._nt_lock:
                if self._source is not None:
                    module = self._source()
                    with module.context, ir.Location.unknown():
                        build("dq-to-llvm", module.context).run(module.operation)
                    self._nt_engine = self._engine(module)
                    self._fn_nt = self._lookup_nt(self._nt_engine)
                    self._source = None
        return self._fn_nt

    def address(self, fn) -> int:
        """The native address of `fn`, this kernel's `fn` or `fn_nt` (what the pool's worker calls)."""
        return self.fn_address if fn is self.fn else self.fn_nt_address

    def _record(self, code: int) -> None:
        with self._failed_lock:
            self._failed.setdefault(threading.get_ident(), []).append(code)
            self.pending += 1

    def raise_failures(self, thread: int | None = None) -> None:
        """After a native call: the ValueError of the run-time checks it failed, if any (the
        kernel then wrote no result). `thread`: the ident of the thread that made the call (a
        worker of the pool; default: this thread). A caller may skip it while `pending` is 0."""
        if not self.pending:
            return
        with self._failed_lock:
            codes = self._failed.pop(threading.get_ident() if thread is None else thread, None)
            if codes:
                self.pending -= len(codes)
        if codes:
            raise ValueError("native shape check failed: " + "; ".join(dict.fromkeys(checks.message(c) for c in codes)))

    def pack(self, descriptors: list):
        """The packed argument array of a call (one pointer per slot, each to a pointer to a
        descriptor: results first, then arguments), the results struct, and what must stay alive."""
        results = self.results_type()
        structs = ([results] if self.signature.results else []) + list(descriptors)
        pointers = (ctypes.c_void_p * len(structs))(*[ctypes.addressof(d) for d in structs])
        packed = (ctypes.c_void_p * len(structs))(*[ctypes.addressof(pointers) + i * ctypes.sizeof(ctypes.c_void_p) for i in range(len(structs))])
        return packed, results, (structs, pointers)


def take(desc, t: Tensor, owned: set) -> np.ndarray:
    """A numpy copy of a returned memref. Frees its buffer if the kernel allocated it: not an
    argument's (`owned` holds the arguments' pointers and those already freed), not a global."""
    dtype = ELEMENTS[t.elem].dtype
    shape = tuple(desc.shape) if t.rank else ()
    strides = tuple(desc.strides) if t.rank else ()
    base = ctypes.cast(desc.aligned, ctypes.c_void_p).value or 0
    size = dtype.itemsize
    if all(shape):
        span = (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * size
        buf = (ctypes.c_char * span).from_address(base + desc.offset * size)
        flat = np.frombuffer(buf, dtype=np.dtype(f"uint{8 * size}"))
        out = np.lib.stride_tricks.as_strided(flat, shape, [s * size for s in strides]).copy().view(dtype)
    else:
        out = np.zeros(shape, dtype)
    allocated = ctypes.cast(desc.allocated, ctypes.c_void_p).value
    if allocated and allocated != GLOBAL_MARKER and allocated not in owned:
        _libc.free(allocated)
        owned.add(allocated)  # results sharing one buffer free it once
    return out
