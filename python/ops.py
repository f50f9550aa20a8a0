"""Dequantize numpy arrays with compiled kernels: one function per spec op of the dialect.

`dequant.ops.<op>` (e.g. `onnx_dequantize_linear`) is made from the op's OpDef (dialect/): its
parameters are the op's operands then its attributes, with the spec defaults, and `out=`; its
docstring is the OpDef's. Each call checks the arrays against the op's rules (a ValueError
naming the rule, before any native call) and runs a kernel compiled once per canonical form and
element types: its dims are dynamic, so one kernel serves every shape. The kernel writes into `out`
(allocated when not given). What a call decides from dtypes, shapes and attributes is kept in a
`ShapePlan` (cached), and a call repeated on arrays of the same dtypes, shapes and strides and the same
attributes takes a `Prepared` call (cached by those): the type and shape rules' verdict is the
ShapePlan's, and per call only the value rules (where the spec has them), `out`'s writability and
overlap with the inputs are checked, the data pointers written into prebuilt descriptors, and the
native call(s) made (docs/performance.md, "Call overhead").

Each kernel has two entry points, `kernel` (stores through the cache) and `kernel_nt`
(non-temporal stores): a call moving at least `Runtime.nontemporal_min_bytes` (read + written)
takes `kernel_nt`, decided once for the whole call before its rows are split across threads.

`bind(op, *arrays, out=..., **attributes)` checks and compiles once and returns a `Bound`: a
callable rerunning the kernel on the same arrays, like ONNX Runtime's IO binding.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import math
import weakref
from array import array

import numpy as np
from mlir import ir
from mlir.dialects import bufferization, func

from dequant import context, dialect
from dequant.dialect import attributes, canonical, unpack
from dequant.dialect.elements import ELEMENTS, UnknownElementError, of_dtype, tensor_type
from dequant.dialect.opdef import OpDef
from dequant.dialect.signature import Signature, Tensor

from . import aliasing
from .kernel import POINTER_HEADER, POINTER_WORDS, SCALAR_HEADER, CompileError, Kernel, data_pointer, scalar_inline
from .packed import Packed
from .runtime import DEFAULT, Runtime

class OpFunction:
    """The numpy function of one spec op, on a `Runtime`."""

    def __init__(self, opdef: OpDef, runtime: Runtime = DEFAULT):
        self.opdef, self.runtime = opdef, runtime
        self.__name__ = self.__qualname__ = opdef.api
        self.__module__ = __name__
        self.__doc__ = opdef.doc
        self.__signature__ = _signature(opdef)
        self._names = opdef.operand_names
        self._names_set = frozenset(self._names)
        self._arity = len(self._names)

    def __repr__(self) -> str:
        return f"<dequant.ops.{self.opdef.api}: {self.opdef.summary}>"

    def prepare(self, *operands, **attrs) -> tuple[ShapePlan, list]:
        """(the ShapePlan for these arrays' dtypes and shapes and these attributes, the arrays)."""
        d = self.opdef
        names = d.operand_names
        if len(operands) > len(names):
            raise TypeError(f"{d.api}() takes {len(names)} arrays, got {len(operands)}")
        given = dict(zip(names, operands))
        for name in names[len(operands):]:
            if name in attrs:
                given[name] = attrs.pop(name)
        values = {}
        for a in d.attrs:
            try:
                values[a.name] = attributes.from_python(a, attrs.pop(a.name, None))
            except attributes.AttrError as e:
                raise ValueError(f"{d.api}: {e}") from None
        if attrs:
            raise TypeError(f"{d.api}() got an unexpected keyword argument {sorted(attrs)[0]!r}")
        arrays = [_array(d, o, given.get(o.name)) for o in d.operands]
        key = (d.name, tuple(None if a is None else (type(a), a.dtype, a.shape) for a in arrays), tuple(_hashable(v) for v in values.values()))
        plan = self.runtime.plans.get(key)
        if plan is None:
            try:
                plan = ShapePlan(self.runtime, d, arrays, values)
            except ValueError as e:
                raise ValueError(f"{e}{_hint(d, given, arrays)}") from None
            plan = self.runtime.plans.put(key, plan)
        return plan, arrays

    def __call__(self, *operands, out=None, **attrs) -> np.ndarray:
        if attrs and len(operands) < self._arity and not self._names_set.isdisjoint(attrs):
            operands, attrs = self._positional(operands, attrs)
        key = _call_key(self, operands, out, attrs)
        prepared = None
        if key is not None:
            prepared = self.runtime.calls.get(key)
            if prepared:
                return prepared(operands, out)
        plan, arrays = self.prepare(*operands, **attrs)
        result = plan.run(arrays, out)
        if key is not None and prepared is None:
            self.runtime.calls.put(key, Prepared.make(plan, arrays, operands, out))
        return result

    def _positional(self, operands: tuple, attrs: dict) -> tuple:
        """Operands given by keyword moved to their positions (None where absent)."""
        attrs = dict(attrs)
        rest = [attrs.pop(n, None) for n in self._names[len(operands):]]
        while rest and rest[-1] is None:
            rest.pop()
        return tuple(operands) + tuple(rest), attrs

    def bind(self, *operands, out=None, **attrs) -> Bound:
        """Check and compile once; a callable rerunning the op on these arrays into `out`."""
        for name, a in zip(self.opdef.operand_names, operands):
            if a is not None and not isinstance(a, (np.generic, Packed)) and not (isinstance(a, np.ndarray) and a.flags.c_contiguous):
                raise ValueError(f"bind: {name} must be a C-contiguous numpy array or a Packed (it is read in place)")
        plan, arrays = self.prepare(*operands, **attrs)
        return plan.bind(arrays, out)


def _call_key(f: OpFunction, operands: tuple, out, attrs: dict):
    """The key of a Prepared call: the function and, per array, its type, dtype, shape and strides
    (None for a Packed's data, contiguous by construction), out's, and the attributes as given;
    None when the call cannot be prepared (an operand neither an array, a numpy scalar, a Packed
    nor None)."""
    parts = [f]
    for a in operands:
        t = type(a)
        if t is np.ndarray:
            parts.append((a.dtype, a.shape, a.strides))
        elif a is None:
            parts.append(None)
        elif t is Packed:
            parts.append((t, a.dtype, a.shape))
        elif isinstance(a, np.generic):
            parts.append(t)
        else:
            return None
    if out is None:
        parts.append(None)
    elif type(out) is np.ndarray:
        parts.append((out.dtype, out.shape, out.strides))
    else:
        return None
    for name, v in attrs.items():
        t = type(v)
        if t is not int and t is not str:  # the common cases, compared as they are
            v = _frozen(v)
            if v is None:
                return None
        parts.append((name, t, v))
    return tuple(parts)


_INT_ONLY = frozenset((int,))


def _frozen(v):
    """A hashable key of attribute value `v` that equals another's only for values of the same
    types throughout (1, 1.0 and True are equal in Python, not to the spec's rules); None for a
    value of any other kind (the call is then not prepared)."""
    t = type(v)
    if v is None or t in (bool, int, float, str, type, np.dtype) or isinstance(v, np.generic):
        return (t, v)
    if t in (list, tuple, set, frozenset):
        if _INT_ONLY.issuperset(map(type, v)):  # axes, shapes: the common case, without recursion
            return (t, int, frozenset(v) if t in (set, frozenset) else tuple(v))
        items = [_frozen(e) for e in v]
        if any(e is None for e in items):
            return None
        return (t, frozenset(items) if t in (set, frozenset) else tuple(items))
    if t is np.ndarray and not v.dtype.hasobject:
        return (t, v.dtype, v.shape, v.tobytes())
    return None


def _signature(d: OpDef) -> inspect.Signature:
    P = inspect.Parameter
    params = [P(o.name, P.POSITIONAL_OR_KEYWORD, default=None if o.optional else P.empty) for o in d.operands]
    params += [P(a.name, P.KEYWORD_ONLY, default=P.empty if a.required else a.default) for a in d.attrs]
    params.append(P("out", P.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _hashable(v):
    return tuple(v) if isinstance(v, list) else v


def _array(d: OpDef, operand, value):
    """An operand as a C-contiguous array, or a Packed, of a dq element type; ValueError naming the
    operand otherwise."""
    if value is None:
        if not operand.optional:
            raise TypeError(f"{d.api}() missing required array {operand.name!r}")
        return None
    if isinstance(value, Packed):
        return value
    a = value if isinstance(value, np.ndarray) else np.asarray(value)
    try:
        of_dtype(a.dtype)
    except UnknownElementError:
        words = "a Python int or list is int64: " if a.dtype.kind in "iu" and not isinstance(value, (np.ndarray, np.generic)) else ""
        raise ValueError(f"{d.api}: {operand.name} has dtype {a.dtype}, which is not a dq element type "
                         f"({words}give a numpy or ml_dtypes array of the type the spec wants, e.g. np.int8)") from None  # fmt: skip
    return a if a.flags.c_contiguous else a.copy(order="C")


def _hint(d: OpDef, given: dict, arrays: list) -> str:
    """A hint when a rule failed on an operand given as a Python number or list (float64, int64)."""
    for o, a in zip(d.operands, arrays):
        v = given.get(o.name)
        if a is not None and v is not None and not isinstance(v, (np.ndarray, np.generic, Packed)) and a.dtype.kind in "fiu":
            return (f" ({o.name} was given as a Python {type(v).__name__}, which is {a.dtype}: pass a numpy value of the type "
                    f"the spec wants, e.g. np.float32({v!r}) or np.array(..., np.int8))")  # fmt: skip
    return ""


class ShapePlan:
    """One spec op on arrays of fixed dtypes and shapes with fixed attributes: the type and shape
    rules checked once, the canonical form, the kernel, the output, and prebuilt native calls."""

    def __init__(self, runtime: Runtime, opdef: OpDef, arrays: list, attrs: dict):
        self.runtime, self.opdef, self.attrs = runtime, opdef, attrs
        operands = {o.name: (None if a is None else Tensor(of_dtype(a.dtype).name, tuple(a.shape))) for o, a in zip(opdef.operands, arrays)}
        sig = Signature(operands, None, attrs)
        message = opdef.check_types(sig)
        if message:
            raise ValueError(f"{opdef.api}: {message}")
        self.result = opdef.result(sig)
        self.sig = Signature(operands, self.result, attrs)
        self.form = opdef.canonical(self.sig)
        self.out_dtype = ELEMENTS[self.result.elem].dtype
        self.out_shape = tuple(self.result.shape)
        zp = opdef.role("zero_point")
        self.zero_point_index = opdef.operand_names.index(zp) if opdef.value_rules and zp in operands and operands[zp] else None
        self._zero_point, self._value_rules = zp, opdef.value_rules
        if self.zero_point_index is not None and not self._reads_values():
            self.zero_point_index = None  # the value rules' verdict does not depend on the values
        unread = opdef.operand_names.index(zp) if zp and not self.form.reads_zero_point else None
        self.present = [i for i, a in enumerate(arrays) if a is not None and i != unread]  # what the kernel reads
        self.packed = [isinstance(arrays[i], Packed) for i in self.present]
        self.out_nbytes = math.prod(self.out_shape) * self.out_dtype.itemsize
        self.in_nbytes = [_nbytes(arrays[i]) for i in self.present]
        self.nbytes = sum(self.in_nbytes) + self.out_nbytes  # what a call reads and writes
        self.aliasing = aliasing.StoreAliasing.of(self._stepping(arrays), self.out_shape, self.out_dtype.itemsize)
        self._kernel = None  # a weak reference to the kernel (`kernel`)
        self._calls: dict = {}  # runtime settings -> Calls, built once

    def _stepping(self, arrays: list) -> list:
        """(pointer index, bytes, itemsize) of each array the kernel reads that steps through
        memory along the output's rows (`aliasing.StoreAliasing.of`): a scale or zero point, not
        packed, whose last dim is read one element per column along the output's last dim."""
        rank, found = len(self.out_shape), []
        for k, (i, packed) in enumerate(zip(self.present, self.packed)):
            a, role = arrays[i], self.opdef.operands[i].role
            reads = self.form.scale_map if role == "scale" else self.form.zp_map if role == "zero_point" else ()
            if (not packed and reads and a.ndim == len(reads) and reads[-1] == canonical.dim(rank - 1)
                    and a.shape[-1] == self.out_shape[-1] > 1):  # fmt: skip
                found.append((k, self.in_nbytes[k], a.dtype.itemsize))
        return found

    # --- checks made per call -----------------------------------------------------------------

    def _reads_values(self) -> bool:
        """Whether a value rule reads the zero point's values for this plan's types and
        attributes, asked once with a stand-in that records the read: a rule that returns before
        reading them (ONNX's, for x other than int32 or a float8) gives the same verdict for every
        zero point, and calls then skip it."""
        stand_in = _Unread(self._zero_point)
        sig = Signature(self.sig.operands, self.result, self.attrs, stand_in)
        for rule in self._value_rules:
            rule(sig)
        return stand_in.read

    def check_values(self, arrays) -> None:
        """The spec's value rules (a zero point's range) on the arrays given (operand order)."""
        i = self.zero_point_index
        if i is None or i >= len(arrays) or arrays[i] is None:
            return
        zp = arrays[i]
        sig = Signature(self.sig.operands, self.result, self.attrs, _Values(self._zero_point, zp))
        for rule in self._value_rules:
            message = rule(sig)
            if message:
                raise ValueError(f"{self.opdef.api}: {message}")

    def output(self, out, arrays: list) -> np.ndarray:
        """`out`, checked, or a new output array."""
        if out is None:
            return np.empty(self.out_shape, self.out_dtype)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"{self.opdef.api}: out must be a numpy array, got {type(out).__name__}")
        if out.dtype != self.out_dtype or out.shape != self.out_shape or not out.flags.c_contiguous:
            raise ValueError(f"{self.opdef.api}: out must be a C-contiguous {self.out_dtype} array of shape "
                             f"{list(self.out_shape)}, got {'' if out.flags.c_contiguous else 'a non-contiguous '}"
                             f"{out.dtype} {list(out.shape)}")  # fmt: skip
        if not out.flags.writeable:
            raise ValueError(f"{self.opdef.api}: out is read-only")
        for o, a in zip(self.opdef.operands, arrays):
            if a is not None and np.may_share_memory(out, a.data if isinstance(a, Packed) else a):
                raise _overlap(self.opdef, o.name)
        return out

    # --- native calls -------------------------------------------------------------------------

    def calls(self) -> Calls:
        """The native calls of this plan at the runtime's current settings (built once per
        settings: threads, `min_parallel`, `nontemporal_min_bytes`)."""
        runtime = self.runtime
        key = runtime.settings()
        found = self._calls.get(key)
        if found is None:
            kernel = self.kernel()
            chunks = row_chunks(self.form, self.out_shape, runtime.parallel_parts(self.nbytes), self._packed_rows())
            with self._compiling("kernel_nt"):  # compiled at its first use
                nontemporal = self.nbytes >= runtime.nontemporal_min_bytes and kernel.fn_nt is not None
            found = self._calls.setdefault(key, Calls(self, chunks, nontemporal, runtime.generation))
        else:  # built at these settings under an earlier generation (threads set back and forth)
            found.generation = runtime.generation
        return found

    def kernel(self):
        """The plan's kernel, from the runtime's kernel cache (compiled there by the first call that
        passes every check, and again if the cache let it go). A plan and its calls hold it
        weakly: the cache alone bounds how many kernels live (a `Bound` holds its own)."""
        found = self._kernel() if self._kernel is not None else None
        if found is None:
            operands = [self.sig.operands[self.opdef.operand_names[i]] for i in self.present]
            roles = [self.opdef.operands[i].role for i in self.present]
            with self._compiling("kernel"):
                found = kernel_for(self.runtime, operands, roles, self.packed, self.result, self.form)
            self._kernel = weakref.ref(found)
        return found

    @contextlib.contextmanager
    def _compiling(self, entry: str):
        """Any failure inside as a CompileError naming this plan's signature: the arrays passed
        every rule, so the compiler failing on them is dequant's bug (an MLIRError of a pass, an
        exception of the Python passes, LLVM's errors)."""
        try:
            yield
        except Exception as e:  # noqa: BLE001 - every failure here is the compiler's
            cause = str(e).strip().splitlines()[:3]
            raise CompileError(
                f"dequant failed to compile the `{entry}` entry point for {self.describe()}: {type(e).__name__}: "
                f"{' '.join(cause)}. The arrays passed every rule of the op: this is a bug in dequant; please "
                "report it with this message (the compiler's whole error is chained below)"
            ) from e

    def describe(self) -> str:
        """This plan's signature as a call: the op, each array's dtype and shape (packed or not),
        the attributes, e.g. `onnx_dequantize_linear(x: int4 packed [2, 4], x_scale: float32 [2, 1],
        axis=1, block_size=4, output_dtype=bf16)`."""
        packed = {self.opdef.operand_names[i] for i, p in zip(self.present, self.packed) if p}
        arrays = [f"{name}: {ELEMENTS[t.elem].dtype.name}{' packed' if name in packed else ''} {list(t.shape)}"
                  for name, t in self.sig.operands.items() if t is not None]  # fmt: skip
        return f"{self.opdef.api}({', '.join(arrays + [f'{k}={v}' for k, v in self.attrs.items()])})"

    def _packed_rows(self) -> list:
        """(elements of a row, elements per byte, output rows per row) of each packed operand a
        part reads from a row of its own (`row_chunks`): the data, and a zero point read along
        output dim 0. A packed zero point read along the columns only is read whole by every part."""
        rows = []
        for i, packed in zip(self.present, self.packed):
            name = self.opdef.operand_names[i]
            t = self.sig.operands[name]
            if not packed or not t.rank:
                continue
            role = self.opdef.operands[i].role
            if role == "data":
                rows.append((math.prod(t.shape[1:]), ELEMENTS[t.elem].per_byte, 1))
            elif self.form.zp_map and self.form.zp_map[0].dim == 0:
                rows.append((math.prod(t.shape[1:]), ELEMENTS[t.elem].per_byte, self.form.zp_map[0].block))
        return rows

    def run(self, arrays: list, out=None) -> np.ndarray:
        self.check_values(arrays)
        out = self.output(out, arrays)
        pointers, moved = [data_pointer(a) for a in self._inputs(arrays)] + [data_pointer(out)], None
        if self.aliasing is not None:
            pointers, moved = self.aliasing(pointers)
        self.calls().run(pointers)
        del moved
        return out

    def bind(self, arrays: list, out=None) -> Bound:
        self.check_values(arrays)
        out = self.output(out, arrays)
        inputs = self._inputs(arrays)
        calls = self.calls()
        pointers, copies = [data_pointer(a) for a in inputs] + [data_pointer(out)], []
        caught = self.aliasing.caught(pointers) if self.aliasing is not None else []
        if caught:  # fixed arrays: placed once, copied before each call
            pointers, copies = self.aliasing.place(pointers, caught)
        return Bound(self.runtime, calls, pointers, arrays, out, copies)

    def _inputs(self, arrays: list) -> list:
        """The arrays the kernel reads (a Packed's bytes), in argument order."""
        return [arrays[i].data if isinstance(arrays[i], Packed) else arrays[i] for i in self.present]


class _Values:
    """The values a value rule reads (`get`, as a dict's): a packed zero point is unpacked only
    if a rule reads it (unpacking on every call cost more than the kernel)."""

    __slots__ = ("name", "array")

    def __init__(self, name: str, array):
        self.name, self.array = name, array

    def get(self, name: str, default=None):
        if name != self.name:
            return default
        return self.array.unpack() if type(self.array) is Packed else self.array


class _Unread:
    """The values of `ShapePlan._reads_values`: records whether a rule asked for the zero point's
    (and answers that it is absent)."""

    __slots__ = ("name", "read")

    def __init__(self, name: str):
        self.name, self.read = name, False

    def get(self, name: str, default=None):
        self.read = self.read or name == self.name
        return default


def _nbytes(a) -> int:
    return a.data.nbytes if isinstance(a, Packed) else a.nbytes


def _overlap(d: OpDef, name: str) -> ValueError:
    return ValueError(f"{d.api}: out overlaps {name}: give an output that shares no memory with the inputs")


class Calls:
    """The native calls of a plan at one runtime setting: a CallTemplate per row range (one thread
    each), and the entry point, chosen once for the whole call on its bytes (read + written):
    `kernel_nt`, non-temporal stores, from `Runtime.nontemporal_min_bytes`, else `kernel`. An
    output not aligned to its element size (a numpy view can be) takes `kernel`."""

    def __init__(self, plan: ShapePlan, chunks: list, nontemporal: bool, generation: int):
        self.plan = plan
        self.templates = [CallTemplate(plan, b, e) for b, e in chunks] if chunks else [CallTemplate(plan, None, None)]
        self.nontemporal = nontemporal
        self.generation = generation
        self.runtime = plan.runtime
        self.align = plan.out_dtype.itemsize
        self.single = self.templates[0] if len(self.templates) == 1 else None

    def run(self, pointers: list) -> None:
        """One call on arrays at `pointers` (the inputs', then the output's). The local `kernel`
        keeps the kernel alive until the call returns, whatever the cache does meanwhile."""
        kernel = self.plan._kernel()
        if kernel is None:  # the runtime's cache let it go
            kernel = self.plan.kernel()
        fn = kernel.fn_nt if self.nontemporal and pointers[-1] % self.align == 0 else kernel.fn
        if self.single is not None:  # the common path, inline
            self.single.call(pointers, fn, kernel)
        else:
            self.runtime.pool.run([_Job(t, pointers, fn, kernel) for t in self.templates])

    def bound(self, pointers: list) -> list:
        kernel = self.plan.kernel()
        fn = kernel.fn_nt if self.nontemporal and pointers[-1] % self.align == 0 else kernel.fn
        return [t.bound(pointers, fn, kernel) for t in self.templates]


class _Job:
    """One row range of a split call: run by the caller (`__call__`) or natively by a worker of
    the pool (`native`)."""

    __slots__ = ("template", "pointers", "fn", "kernel")

    def __init__(self, template, pointers, fn, kernel):
        self.template, self.pointers, self.fn, self.kernel = template, pointers, fn, kernel

    def __call__(self):
        self.template.call(self.pointers, self.fn, self.kernel)

    @property
    def native(self) -> tuple:
        """(the entry point's address, the packed argument array's, the kernel) for a worker."""
        return self.kernel.address(self.fn), self.template.worker_arguments(self.pointers), self.kernel


class CallTemplate:
    """One native call of a plan on output rows [begin, end) (None: all rows). Its descriptors live
    in one flat int64 buffer with the packed argument array (pointers to pointers to each
    descriptor, the result's first): per call only each array's `allocated` and `aligned` words
    change, its data pointer plus the byte offset of the rows read."""

    def __init__(self, plan: ShapePlan, begin: int | None, end: int | None):
        tensors = [plan.sig.operands[plan.opdef.operand_names[i]] for i in plan.present] + [plan.result]
        roles = [plan.opdef.operands[i].role for i in plan.present] + ["out"]
        packed = plan.packed + [False]
        self.layout = [_part(plan.form, role, t, begin, end, p) for role, t, p in zip(roles, tensors, packed)]
        self.offsets = [offset for offset, _, _ in self.layout]
        self.result_words = 3 + 2 * plan.result.rank  # the result descriptor, written by the callee
        self._spare: list = []  # descriptor buffers not in use (a call takes one, then gives it back)
        self._worker = None  # the buffer of the pool's worker (used under the pool's lock only)

    def _buffer(self) -> tuple:
        """(the buffer, its words, the packed argument array's address, each array's `aligned`
        word, the pointers it was last patched with)."""
        sizes = [self.result_words] + [3 + 2 * len(shape) for _, shape, _ in self.layout]
        starts = [sum(sizes[:k]) for k in range(len(sizes))]
        n = len(sizes)
        table = sum(sizes)  # then n pointers to the descriptors, then n pointers to those pointers
        buf = (ctypes.c_int64 * (table + 2 * n))()
        words = memoryview(buf).cast("B").cast("q")
        base = ctypes.addressof(buf)
        for k in range(n):
            words[table + k] = base + 8 * starts[k]
            words[table + n + k] = base + 8 * (table + k)
        for start, (_, shape, strides) in zip(starts[1:], self.layout):
            words[start + 3 : start + 3 + len(shape)] = array("q", shape)
            words[start + 3 + len(shape) : start + 3 + 2 * len(shape)] = array("q", strides)
        return buf, words, base + 8 * (table + n), [s + 1 for s in starts[1:]], []

    def call(self, pointers: list, fn, kernel) -> None:
        """The native call `fn` of `kernel` on arrays at `pointers` (inputs', then the output's)."""
        try:
            entry = self._spare.pop()
        except IndexError:
            entry = self._buffer()
        _, words, packed, slots, last = entry
        if last != pointers:  # the arrays moved since this buffer's last call: patch the pointers
            for i, p, offset in zip(slots, pointers, self.offsets):
                words[i - 1] = words[i] = p + offset
            last[:] = pointers
        fn(packed)
        self._spare.append(entry)
        if kernel.pending:
            kernel.raise_failures()

    def worker_arguments(self, pointers: list) -> int:
        """The packed argument array of a call on arrays at `pointers` made by the pool's worker
        (its own buffer: the pool runs one split call at a time)."""
        if self._worker is None:
            self._worker = self._buffer()
        _, words, packed, slots, last = self._worker
        if last != pointers:
            for i, p, offset in zip(slots, pointers, self.offsets):
                words[i - 1] = words[i] = p + offset
            last[:] = pointers
        return packed

    def bound(self, pointers: list, fn, kernel):
        """A no-argument native call `fn` of `kernel` on arrays at `pointers` (its descriptors and
        the kernel kept)."""
        entry = self._buffer()
        _, words, packed, slots, _ = entry
        for i, p, offset in zip(slots, pointers, self.offsets):
            words[i - 1] = words[i] = p + offset
        address = kernel.address(fn)

        def call():
            fn(packed)
            if kernel.pending:
                kernel.raise_failures()

        call.keep = (self, entry)
        call.native = (address, packed, kernel)
        return call


class Prepared:
    """A call of one ShapePlan on arrays of fixed types, dtypes, shapes and strides with fixed
    attributes (the key of `Runtime.calls`), made after the full path has run once on them.
    The type and shape rules' verdict, the canonical form and the kernel are the ShapePlan's (a
    function of the key); per call it checks what the key does not fix: the value rules (a
    zero point's range), `out`'s writability and its overlap with the inputs (the bounds of
    C-contiguous arrays, as `np.may_share_memory` compares them); then it writes the data
    pointers into the prebuilt descriptors and calls. Pointers come from `kernel.data_pointer`,
    and a numpy scalar's from its own object where `kernel.scalar_inline` holds for its type
    (docs/performance.md, "Call overhead")."""

    __slots__ = ("plan", "calls", "direct", "kinds", "aliasing", "names", "in_nbytes", "out_nbytes", "out_shape", "out_dtype", "zero_point", "api")

    ARRAY, SCALAR, PACKED, INLINE = 0, 1, 2, 3  # INLINE: a scalar whose value is in its object

    def __init__(self, plan: ShapePlan, kinds: list):
        self.plan = plan
        self.calls = plan.calls()
        self.kinds = kinds  # (operand index, kind) per array the kernel reads
        # every pointer read in place (ndarrays, INLINE scalars): (operand index, whether an ndarray)
        self.direct = [(i, k == self.ARRAY) for i, k in kinds] if all(k in (self.ARRAY, self.INLINE) for _, k in kinds) else None
        self.names = [plan.opdef.operand_names[i] for i, _ in kinds]
        self.in_nbytes = plan.in_nbytes
        self.out_nbytes = plan.out_nbytes
        self.out_shape, self.out_dtype = plan.out_shape, plan.out_dtype
        self.zero_point = plan.zero_point_index is not None
        self.api = plan.opdef.api
        self.aliasing = plan.aliasing

    @classmethod
    def make(cls, plan: ShapePlan, arrays: list, operands: tuple, out) -> Prepared | bool:
        """The Prepared call for arrays like these, or False when such calls take the full path
        (an array that was not C-contiguous: it is copied)."""
        kinds = []
        for i in plan.present:
            a = operands[i]
            if type(a) is np.ndarray:
                if arrays[i] is not a:
                    return False
                kinds.append((i, cls.ARRAY))
            elif type(a) is Packed:
                kinds.append((i, cls.PACKED))
            else:
                kinds.append((i, cls.INLINE if scalar_inline(type(a)) else cls.SCALAR))
        return cls(plan, kinds)

    def __call__(self, operands: tuple, out, pointer=data_pointer, words=POINTER_WORDS, header=POINTER_HEADER, inline=SCALAR_HEADER):
        if self.zero_point:
            self.plan.check_values(operands)
        keep = None
        if self.direct is None:
            pointers, keep = [], []
            for i, kind in self.kinds:
                a = operands[i]
                if kind:
                    a = a.data if kind == 2 else np.asarray(a)
                    keep.append(a)  # alive until the call returns
                pointers.append(pointer(a))
        elif words is not None:  # kernel.data_pointer, inlined
            pointers = [words[(id(operands[i]) + header) >> 3] if array else id(operands[i]) + inline for i, array in self.direct]
        else:
            pointers = [pointer(operands[i]) if array else id(operands[i]) + inline for i, array in self.direct]
        if out is None:
            out = np.empty(self.out_shape, self.out_dtype)
            pointers.append(pointer(out))
        else:
            if not out.flags.writeable:
                raise ValueError(f"{self.api}: out is read-only")
            q = pointer(out) if words is None else words[(id(out) + header) >> 3]
            end, sizes, k = q + self.out_nbytes, self.in_nbytes, 0
            for p in pointers:
                if p < end and q < p + sizes[k]:
                    raise _overlap(self.plan.opdef, self.names[k])
                k += 1
            pointers.append(q)
        if self.aliasing is not None:
            pointers, moved = self.aliasing(pointers)  # moved: scratch copies, alive until the call returns
        calls = self.calls
        if calls.generation != calls.runtime.generation:  # the runtime's settings changed
            calls = self.calls = self.plan.calls()
        calls.run(pointers)
        del keep
        return out


def _part(form: canonical.Form, role: str, t: Tensor, begin, end, packed: bool = False) -> tuple:
    """(byte offset, shape, strides in elements) of the part of an operand that output rows
    [begin, end) read (the whole operand when begin is None). Packed data starts at the byte of
    its first element (row_chunks made that a whole byte)."""
    shape = list(t.shape)
    if begin is not None and shape:
        if role in ("data", "out"):
            k = canonical.INT4X4 if role == "data" and form.unpack == "int4x4" else 1
            first, last = begin // k, -(-end // k)
            stride0 = math.prod(shape[1:])
            offset = first * stride0
            shape[0] = last - first
        else:
            reads = form.scale_map if role == "scale" else form.zp_map
            offset = 0
            if reads and reads[0].dim == 0:  # dim 0 of the operand is read along output dim 0
                b = reads[0].block
                first, last = begin // b, -(-end // b)
                offset = first * math.prod(shape[1:])
                shape[0] = last - first
        e = ELEMENTS[t.elem]
        offset = offset * e.bits // 8 if packed else offset * e.dtype.itemsize
    else:
        offset = 0
    strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    return offset, tuple(shape), tuple(strides)


def row_chunks(form: canonical.Form, shape: tuple, parts: int, packed_rows=()) -> list:
    """Split output dim 0 into up to `parts` row ranges, at multiples of every block that dim 0 is
    read through (int4x4 packing, blocks/groups along dim 0) and, for each packed operand
    (`packed_rows`: the elements of one of its rows, its elements per byte, the output rows per
    row), at rows where its part starts on a whole byte; [] for one call."""
    if parts < 2 or not shape:
        return []
    unit = canonical.INT4X4 if form.unpack == "int4x4" else 1
    for row, per_byte, block in packed_rows:
        unit = math.lcm(unit, block * (per_byte // math.gcd(row, per_byte)))
    for r in form.scale_map + form.zp_map:
        if r.dim == 0:
            unit = math.lcm(unit, r.block)
    units = -(-shape[0] // unit)
    n = min(parts, units)
    if n < 2:
        return []
    bounds = [min(shape[0], (units * i // n) * unit) for i in range(n + 1)]
    return [(b, e) for b, e in zip(bounds, bounds[1:]) if e > b]


class Bound:
    """One op on fixed arrays, checked and compiled once: each call recomputes `out` from the
    arrays' current contents with no per-call checks (see `bind`)."""

    def __init__(self, runtime: Runtime, calls: Calls, pointers: list, arrays: list, out: np.ndarray, copies: list = ()):
        self._runtime, self._arrays, self.out = runtime, arrays, out
        self._pointers = pointers  # what the calls read (an operand's copy where `aliasing` moved it)
        self._copies = copies  # operands read from a copy out of 4K aliasing's way (`aliasing`), made per call
        self._calls = calls.bound(pointers)

    def __call__(self) -> np.ndarray:
        if self._copies:
            aliasing.copy(self._copies)
        if len(self._calls) == 1:
            self._calls[0]()
        else:
            self._runtime.pool.run(self._calls)
        return self.out


def kernel_for(runtime: Runtime, operands: list, roles: list, packed: list, result: Tensor, form: canonical.Form):
    """The compiled `dq.dequantize` kernel for these element types, layouts (packed or not) and
    canonical form (cached): dims are dynamic, except unit dims of scales and zero points, which
    the form reads at 0."""
    shapes = [tuple(None if role == "data" or d != 1 else 1 for d in t.shape) for t, role in zip(operands, roles)]
    rows = [_rows(t) if p else None for t, p in zip(operands, packed)]
    key = (tuple((t.elem, s, p, r) for t, s, p, r in zip(operands, shapes, packed, rows)), result.elem, result.rank, form)
    found = runtime.kernels.get(key)
    if found is None:
        found = runtime.kernels.put(key, _compile(operands, shapes, packed, rows, result, form))
    return found


def _rows(t: Tensor) -> str | None:
    """A packed operand's `dq.rows` hint (dialect/unpack.py): whether its rows are whole bytes, so
    that its kernel compiles the fast code for that case only (None for a scalar)."""
    if not t.shape:
        return None
    return unpack.WHOLE_ROWS if t.shape[-1] % (8 // ELEMENTS[t.elem].bits) == 0 else unpack.PARTIAL_ROWS


def _compile(operands: list, shapes: list, packed: list, rows: list, result: Tensor, form: canonical.Form):
    """kernel(x, scale[, zp], out) -> out, the dequantize written into `out`; packed operands
    marked `dq.packed` (their bytes are read in place), with their `dq.rows` hint. The module is
    built again, in a new context, if the `_nt` entry point is ever asked for."""
    def source():
        return _module(operands, shapes, packed, rows, result, form)

    return Kernel(source(), "kernel", nontemporal_source=source)


def _module(operands: list, shapes: list, packed: list, rows: list, result: Tensor, form: canonical.Form):
    """The module of `_compile`'s kernel, in a context of its own."""
    with context(), ir.Location.unknown():
        module = ir.Module.create()
        in_types = [tensor_type(s, t.elem) for t, s in zip(operands, shapes)]
        out_type = tensor_type((None,) * result.rank, result.elem)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("kernel", (in_types + [out_type], [out_type]))
            writable = [{"dq.packed": ir.UnitAttr.get(), **({unpack.ROWS: ir.StringAttr.get(r)} if r else {})} if p else {} for p, r in zip(packed, rows)]
            writable.append({"bufferization.writable": ir.BoolAttr.get(True)})
            f.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in writable])
            with ir.InsertionPoint(f.add_entry_block()):
                args = list(f.arguments)
                zp = args[2] if len(operands) == 3 else None
                y = canonical.build(args[0], args[1], zp, form, out_type)
                r = bufferization.materialize_in_destination(out_type, y, args[-1])
                func.ReturnOp([r])
    return module


# --- the functions ------------------------------------------------------------------------------


def spec_op(api_name: str) -> OpDef:
    """The OpDef whose numpy function is `api_name`; AttributeError if none."""
    for d in dialect.SPEC_OPS:
        if d.api == api_name:
            return d
    raise AttributeError(f"module 'dequant.ops' has no attribute {api_name!r}")


_FUNCTIONS = {d.api: OpFunction(d) for d in dialect.SPEC_OPS if d.api}


def __getattr__(name: str):  # PEP 562: one function per spec op of the dialect registry
    try:
        return _FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"module 'dequant.ops' has no attribute {name!r}") from None


def __dir__() -> list:
    return sorted(list(globals()) + list(_FUNCTIONS))


__test__ = {name: f.__doc__ for name, f in _FUNCTIONS.items()}  # their examples run under doctest
__all__ = sorted(_FUNCTIONS) + ["bind", "function", "set_num_threads", "get_num_threads", "OpFunction", "ShapePlan", "Bound"]


def function(name: str, runtime: Runtime = DEFAULT) -> OpFunction:
    """The numpy function of spec op `name` (e.g. "onnx_dequantize_linear") on `runtime`."""
    return OpFunction(spec_op(name), runtime)


def bind(op: OpFunction, *operands, out=None, **attrs) -> Bound:
    """Like ONNX Runtime's IO binding: `bind(ops.onnx_dequantize_linear, x, s, zp, out=y)` checks
    the arrays against the op's rules and compiles once, and returns a callable that reruns the
    kernel into `out` (allocated if not given) as one native call per thread. The arrays are kept
    alive and read in place: change their values, not their shapes or dtypes, between calls.
    Value rules (e.g. a zero point's range) are checked at bind time only; the thread split is
    fixed at bind time."""
    if not isinstance(op, OpFunction):
        raise TypeError(f"bind takes a dequant.ops function, got {op!r}")
    return op.bind(*operands, out=out, **attrs)


def set_num_threads(n: int | None = None) -> None:
    """Set the number of threads large calls are split over: a positive integer, or None for the
    available cores (the default)."""
    DEFAULT.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads large calls are split over (see `set_num_threads`)."""
    return DEFAULT.get_num_threads()

