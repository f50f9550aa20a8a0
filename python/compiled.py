"""`dequant.jit`: a function of an MLIR module compiled to native code, called on numpy arrays.

The arrays are checked against the function's types and, for each dq op whose operands include
function arguments, against the op's spec rules (a ValueError naming the rule) before the native
call: a bad array never reaches native code. The arrays are read, never written (docs/abi.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from dequant import context, dialect
from dequant.dialect.elements import ELEMENTS
from dequant.dialect.signature import Signature, Tensor, show

from . import guards
from .kernel import Kernel, descriptor, find_function, mark_packed, packed_descriptor, take
from .packed import Packed


@dataclass
class _OpCheck:
    """A dq op of the entry whose operands include entry arguments: checked per call."""

    opdef: object
    signature: Signature
    args: dict  # operand name -> argument index
    form: object  # the canonical form compiled, from the op's types


class CompiledFunction:
    """`entry` of a module, compiled once; call it with numpy/ml_dtypes arrays."""

    def __init__(self, text: str, entry: str, opt_level: int = 3, packed: bool = False):
        ctx = context()
        with ctx, ir.Location.unknown():
            guards.check(text)
            module = ir.Module.parse(text)
            f = find_function(module, entry)
            if packed:
                mark_packed(module, entry)
            found = dialect.verified(module.operation)
            if found is None:
                raise ValueError(f"'{entry}' has dq ops that break their spec (see the diagnostics)")
            self.checks = _op_checks(f, found)
            self.kernel = Kernel(module, entry, opt_level)
        self.entry = entry
        self.inputs, self.results = self.kernel.signature.inputs, self.kernel.signature.results
        self.packed = self.kernel.signature.packed

    def check(self, arrays: list) -> None:
        """Raise ValueError if `arrays` do not fit the function and its dq ops' rules."""
        if len(arrays) != len(self.inputs):
            raise ValueError(f"'{self.entry}' takes {len(self.inputs)} arrays, got {len(arrays)}")
        for i, (a, t, packed) in enumerate(zip(arrays, self.inputs, self.packed)):
            want = ELEMENTS[t.elem].dtype
            if packed != isinstance(a, Packed):
                how = "a dequant.Packed" if packed else "an array, one element per byte (or compile with packed=True)"
                raise ValueError(f"argument {i} ({t.elem}) takes {how}, got {type(a).__name__}")
            if a.dtype != want:
                raise ValueError(f"argument {i}: expected dtype {want} ({t.elem}), got {a.dtype}")
            if a.ndim != t.rank or any(d is not None and d != s for d, s in zip(t.shape, a.shape)):
                raise ValueError(f"argument {i}: expected shape {show(t.shape)}, got {list(a.shape)}")
        for c in self.checks:
            operands, values = dict(c.signature.operands), dict(c.signature.values)
            for name, index in c.args.items():
                operands[name] = Tensor(operands[name].elem, tuple(arrays[index].shape))
                if c.opdef.value_rules and name == c.opdef.role("zero_point"):
                    a = arrays[index]
                    values[name] = a.unpack() if isinstance(a, Packed) else a
            sig = Signature(operands, c.signature.result, c.signature.attrs, values)
            message = c.opdef.check(sig)
            if message:
                raise ValueError(f"{c.opdef.name}: {message}")
            if c.opdef.canonical(sig) != c.form:  # e.g. a one-element scale where `?` was compiled
                raise ValueError(
                    f"{c.opdef.name}: these shapes select another granularity than the one compiled from the "
                    "function's types (a dynamic dim is never read as 1): give such dims a static size"
                )

    def __call__(self, *arrays):
        arrays = [a if isinstance(a, Packed) else _contiguous(np.asarray(a)) for a in arrays]
        self.check(arrays)
        return self._native(arrays)

    def _native(self, arrays: list):
        """The native call on checked arrays; the results as new arrays."""
        args, results, alive = self.kernel.pack([packed_descriptor(a) if isinstance(a, Packed) else descriptor(a) for a in arrays])
        self.kernel.fn(args)
        del alive
        owned = {(a.data if isinstance(a, Packed) else a).ctypes.data for a in arrays}
        out = [take(getattr(results, f"r{i}"), t, owned) for i, t in enumerate(self.results)]
        self.kernel.raise_failures()
        return out[0] if len(out) == 1 else tuple(out)


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else a.copy(order="C")


def jit(module_or_text, entry: str, *, opt_level: int = 3, packed: bool = False) -> CompiledFunction:
    """Compile `entry` of a module (or its text) to native code; the module is copied, not changed.

    Returns a callable taking numpy/ml_dtypes arrays, one per argument, and returning the
    results as new arrays. A sub-byte argument (i4, ui4, f4E2M1FN, i2, ui2) takes one element per
    byte (an ml_dtypes array), or, marked `{dq.packed}` in the IR or with `packed=True` (every
    sub-byte argument), a `dequant.Packed` read in place. See docs/abi.md."""
    text = module_or_text if isinstance(module_or_text, str) else str(module_or_text)
    return CompiledFunction(text, entry, opt_level, packed)


def _op_checks(f, found: list) -> list[_OpCheck]:
    """The verified dq ops [(op, OpDef, Signature)] that read arguments of `f`, as per-call checks."""
    args = {a: i for i, a in enumerate(f.regions[0].blocks[0].arguments)}
    checks = []
    for op, d, sig in found:
        fed = {name: args[v] for name, v in zip(d.operand_names, op.operands) if isinstance(v, ir.BlockArgument) and v in args}
        if fed:
            checks.append(_OpCheck(d, sig, fed, d.canonical(sig)))
    return checks
