"""Dequantize numpy arrays with compiled kernels: one function per spec op of the dialect.

`dequant.ops.<op>` (e.g. `onnx_dequantize_linear`) is made from the op's OpDef (dialect/): its
parameters are the op's operands then its attributes, with the spec defaults, and `out=`; its
docstring is the OpDef's. Each call checks the arrays against the op's rules (a ValueError
naming the rule, before any native call) and runs a kernel compiled once per canonical form and
element types: its dims are dynamic, so one kernel serves every shape. The kernel writes into `out`
(allocated when not given). What a call decides from dtypes, shapes and attributes is kept in a
`Plan` (cached), so a repeated call only checks values (where the spec has value rules), `out`,
and makes the native call(s).

`bind(op, *arrays, out=..., **attributes)` checks and compiles once and returns a `Bound`: a
callable rerunning the kernel on the same arrays, like ONNX Runtime's IO binding.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from dequant import dialect
from dequant.dialect import attributes, canonical
from dequant.dialect.elements import ELEMENTS, UnknownElementError, of_dtype
from dequant.dialect.opdef import OpDef
from dequant.dialect.signature import Signature, Tensor

from .kernel import aligned_field, descriptor_type, fill
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

    def __repr__(self) -> str:
        return f"<dequant.ops.{self.opdef.api}: {self.opdef.summary}>"

    def prepare(self, *operands, **attrs) -> tuple[Plan, list]:
        """(the Plan for these arrays' dtypes and shapes and these attributes, the arrays)."""
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
                plan = Plan(self.runtime, d, arrays, values)
            except ValueError as e:
                raise ValueError(f"{e}{_hint(d, given, arrays)}") from None
            plan = self.runtime.plans.put(key, plan)
        return plan, arrays

    def __call__(self, *operands, out=None, **attrs) -> np.ndarray:
        plan, arrays = self.prepare(*operands, **attrs)
        return plan.run(arrays, out)

    def bind(self, *operands, out=None, **attrs) -> Bound:
        """Check and compile once; a callable rerunning the op on these arrays into `out`."""
        for name, a in zip(self.opdef.operand_names, operands):
            if a is not None and not isinstance(a, (np.generic, Packed)) and not (isinstance(a, np.ndarray) and a.flags.c_contiguous):
                raise ValueError(f"bind: {name} must be a C-contiguous numpy array or a Packed (it is read in place)")
        plan, arrays = self.prepare(*operands, **attrs)
        return plan.bind(arrays, out)


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


class Plan:
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
        self.present = [i for i, a in enumerate(arrays) if a is not None]
        self.packed = [isinstance(arrays[i], Packed) for i in self.present]
        self.kernel = None  # compiled by the first call that passes every check
        self._calls: dict = {}  # thread settings -> [CallTemplate], built once

    # --- checks made per call -----------------------------------------------------------------

    def check_values(self, arrays: list) -> None:
        if self.zero_point_index is None:
            return
        name = self.opdef.operand_names[self.zero_point_index]
        zp = arrays[self.zero_point_index]
        sig = Signature(self.sig.operands, self.result, self.attrs, {name: zp.unpack() if isinstance(zp, Packed) else zp})
        for rule in self.opdef.value_rules:
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
                raise ValueError(f"{self.opdef.api}: out overlaps {o.name}: give an output that shares no memory with the inputs")
        return out

    # --- native calls -------------------------------------------------------------------------

    def templates(self) -> list:
        """The native calls of this plan at the runtime's current thread settings (built once)."""
        key = (self.runtime.get_num_threads(), self.runtime.min_parallel)
        found = self._calls.get(key)
        if found is None:
            if self.kernel is None:
                operands = [self.sig.operands[self.opdef.operand_names[i]] for i in self.present]
                roles = [self.opdef.operands[i].role for i in self.present]
                self.kernel = kernel_for(self.runtime, operands, roles, self.packed, self.result, self.form)
            data = self.sig.operands[self.opdef.role("data")]
            packed_rows = self.packed[0] and data.rank and ELEMENTS[data.elem].per_byte
            splittable = not any(self.packed[1:])  # a packed zero point is read whole
            chunks = row_chunks(self.form, self.out_shape, *key, packed_row=(data.shape[1:], packed_rows)) if splittable else []
            found = [CallTemplate(self, b, e) for b, e in chunks] if chunks else [CallTemplate(self, None, None)]
            found = self._calls.setdefault(key, found)
        return found

    def run(self, arrays: list, out=None) -> np.ndarray:
        self.check_values(arrays)
        out = self.output(out, arrays)
        inputs = [arrays[i] for i in self.present]
        templates = self.templates()
        if len(templates) == 1:
            templates[0].call(inputs, out)
        else:
            self.runtime.pool.run([_Job(t, inputs, out) for t in templates])
        return out

    def bind(self, arrays: list, out=None) -> Bound:
        self.check_values(arrays)
        out = self.output(out, arrays)
        inputs = [arrays[i] for i in self.present]
        return Bound(self.runtime, [t.bound(inputs, out) for t in self.templates()], arrays, out)


class _Job:
    __slots__ = ("template", "inputs", "out")

    def __init__(self, template, inputs, out):
        self.template, self.inputs, self.out = template, inputs, out

    def __call__(self):
        self.template.call(self.inputs, self.out)


class CallTemplate:
    """One native call of a plan on output rows [begin, end) (None: all rows): the descriptor
    shapes and strides, and each array's byte offset; per call only the data pointers change."""

    def __init__(self, plan: Plan, begin: int | None, end: int | None):
        self.kernel = plan.kernel
        tensors = [plan.sig.operands[plan.opdef.operand_names[i]] for i in plan.present] + [plan.result]
        roles = [plan.opdef.operands[i].role for i in plan.present] + ["out"]
        packed = plan.packed + [False]
        self.layout = [_part(plan.form, role, t, begin, end, p) for role, t, p in zip(roles, tensors, packed)]
        self.itemsizes = [ELEMENTS[t.elem].dtype.itemsize for t in tensors]
        self._spare: list = []  # descriptor sets not in use (a call takes one, then gives it back)

    def _descriptors(self):
        try:
            return self._spare.pop()
        except IndexError:
            ds = [descriptor_type(len(shape), size)() for (_, shape, _), size in zip(self.layout, self.itemsizes)]
            for d, (_, shape, strides) in zip(ds, self.layout):
                fill(d, 0, shape, strides)
            packed, results, alive = self.kernel.pack(ds)
            return [(d, aligned_field(d)) for d in ds], packed, results, alive

    def _point(self, ds, arrays: list) -> None:
        for (d, aligned), a, (offset, _, _) in zip(ds, arrays, self.layout):
            pointer = (a.data if isinstance(a, Packed) else a).ctypes.data + offset
            d.allocated = pointer
            aligned.value = pointer

    def call(self, inputs: list, out: np.ndarray) -> None:
        entry = self._descriptors()
        ds, packed, results, _ = entry
        self._point(ds, inputs + [out])
        self.kernel.fn(packed)
        self._spare.append(entry)
        self.kernel.raise_failures()

    def bound(self, inputs: list, out: np.ndarray):
        """A no-argument native call on these arrays (its descriptors kept)."""
        entry = self._descriptors()
        ds, packed, _, _ = entry
        self._point(ds, inputs + [out])
        fn, kernel = self.kernel.fn, self.kernel

        def call():
            fn(packed)
            kernel.raise_failures()

        call.keep = (self, entry, inputs, out)
        return call


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


def row_chunks(form: canonical.Form, shape: tuple, threads: int, min_parallel: int, packed_row=((), 0)) -> list:
    """Split output dim 0 into up to `threads` row ranges, at multiples of every block that
    dim 0 is read through (int4x4 packing, blocks/groups along dim 0) and, for packed data
    (`packed_row`: the dims of a row, elements per byte), at rows that start on a whole byte; []
    for one call (fewer than `min_parallel` output elements)."""
    if threads < 2 or not shape or math.prod(shape) < min_parallel:
        return []
    unit = canonical.INT4X4 if form.unpack == "int4x4" else 1
    row, per_byte = packed_row
    if per_byte:
        unit = math.lcm(unit, per_byte // math.gcd(math.prod(row), per_byte))
    for r in form.scale_map + form.zp_map:
        if r.dim == 0:
            unit = math.lcm(unit, r.block)
    units = -(-shape[0] // unit)
    n = min(threads, units)
    if n < 2:
        return []
    bounds = [min(shape[0], (units * i // n) * unit) for i in range(n + 1)]
    return [(b, e) for b, e in zip(bounds, bounds[1:]) if e > b]


class Bound:
    """One op on fixed arrays, checked and compiled once: each call recomputes `out` from the
    arrays' current contents with no per-call checks (see `bind`)."""

    def __init__(self, runtime: Runtime, calls: list, arrays: list, out: np.ndarray):
        self._runtime, self._calls, self._arrays, self.out = runtime, calls, arrays, out

    def __call__(self) -> np.ndarray:
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
    key = (tuple((t.elem, s, p) for t, s, p in zip(operands, shapes, packed)), result.elem, result.rank, form)
    found = runtime.kernels.get(key)
    if found is None:
        found = runtime.kernels.put(key, _compile(operands, shapes, packed, result, form))
    return found


def _compile(operands: list, shapes: list, packed: list, result: Tensor, form: canonical.Form):
    """kernel(x, scale[, zp], out) -> out, the dequantize written into `out`; packed operands
    marked `dq.packed` (their bytes are read in place)."""
    from mlir import ir
    from mlir.dialects import bufferization, func

    from dequant import context
    from dequant.dialect.elements import tensor_type

    from .kernel import Kernel

    ctx = context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        in_types = [tensor_type(s, t.elem) for t, s in zip(operands, shapes)]
        out_type = tensor_type((None,) * result.rank, result.elem)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("kernel", (in_types + [out_type], [out_type]))
            writable = [{"dq.packed": ir.UnitAttr.get()} if p else {} for p in packed]
            writable.append({"bufferization.writable": ir.BoolAttr.get(True)})
            f.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in writable])
            with ir.InsertionPoint(f.add_entry_block()):
                args = list(f.arguments)
                zp = args[2] if len(operands) == 3 else None
                y = canonical.build(args[0], args[1], zp, form, out_type)
                r = bufferization.materialize_in_destination(out_type, y, args[-1])
                func.ReturnOp([r])
        return Kernel(module, "kernel", context=ctx)


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
__all__ = sorted(_FUNCTIONS) + ["bind", "set_num_threads", "get_num_threads", "OpFunction", "Plan", "Bound"]


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

