"""Run the shipped example: compile each function of an .mlir file of ONNX dequantize ops,
run it on random data and check the numbers against a numpy reference written from the spec.

    python -m dequant.example                   # the example shipped with the package
    python -m dequant.example my_ops.mlir       # any file of functions around one ONNX op each
    python -m dequant.example --path [NAME]     # where the shipped examples are (or one of them)

Exit status: 0 when every function matches the reference, 1 on a mismatch, 2 when the input
cannot be used (the message says why; never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources

import numpy as np
from mlir import ir

import dequant
from dequant.diagnostics import Collector
from dequant.dialect import onnx
from dequant.dialect.signature import tensor_of
from dequant.dialect.elements import ELEMENTS
from dequant.dialect.attributes import text as attr_text

TOLERANCE = {"f32": 0.0, "f16": 2.0**-10, "bf16": 2.0**-7}


def reference(x, s, z, axis: int, block_size: int, out_dtype) -> np.ndarray:
    """y = (x - zero_point) * scale, from the ONNX text: scale replicated along `axis`."""
    r = x.ndim
    a = axis + r if axis < 0 else axis

    def spread(t):
        if t.ndim == 0 or (t.ndim == 1 and t.size == 1 and block_size == 0):
            return t.reshape(())
        if block_size == 0:
            return t.reshape([-1 if i == a else 1 for i in range(r)])
        return np.repeat(t, block_size, axis=a).take(np.arange(x.shape[a]), axis=a)

    d = x.astype(np.float64) - (spread(z).astype(np.float64) if z is not None else 0.0)
    return (d.astype(np.float32) * spread(s).astype(np.float32)).astype(out_dtype)


def random_array(rng, elem: str, shape) -> np.ndarray:
    e = ELEMENTS[elem]
    if e.kind == "int":
        return rng.integers(e.min, e.max + 1, shape).astype(e.dtype)
    if elem == "f8E8M0FNU":  # powers of two near 1
        return (2.0 ** rng.integers(-4, 4, shape)).astype(e.dtype)
    return rng.uniform(-4, 4, shape).astype(e.dtype)


EXAMPLES = resources.files("dequant") / "examples"
SHIPPED = EXAMPLES / "onnx_dequantize.mlir"


class ExampleError(Exception):
    """The input cannot be run as an example (unreadable, not MLIR, no ONNX dequantize op)."""


def run_file(path: str) -> bool:
    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        raise ExampleError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    rng = np.random.default_rng(2026)
    ok = True
    with dequant.context(), ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            first = (str(e).splitlines()[1:2] or [str(e)])[0].strip().removeprefix("error: ")
            first = first.replace('"-"', path, 1)
            raise ExampleError(f"{path} is not an MLIR module: {first}") from None
        funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
        runnable = []
        for f in funcs:
            found = [op for op in dequant.dialect.dq_ops(f.operation) if op.name == onnx.NAME]
            name = attr_text(f.attributes["sym_name"])
            if len(found) != 1 or len(f.regions[0].blocks) == 0:
                print(f"{name:<16} skipped: the example runs functions around exactly one {onnx.NAME}")
                continue
            runnable.append((f, name, found[0]))
        if not runnable:
            raise ExampleError(f"{path} has no function around one {onnx.NAME} op to run")
        for f, name, dq in runnable:
            with Collector(module.context, rename={"-": path}) as found:
                ok_op = dequant.verify(dq)
            if not ok_op:
                first = next(d for d in found.diags if d.severity == "error")
                raise ExampleError(f"{first.where()}: {first.message}")
            sig = onnx.OP.signature(dq)
            shapes = [tuple(d if d is not None else 24 + 8 * i for i, d in enumerate(tensor_of(a.type).shape)) for a in f.arguments]
            if sig.operands["x"].shape[0] is None:  # per-axis on a dynamic dim: scale follows x
                shapes[1] = shapes[2] = (shapes[0][0],)
            args = [random_array(rng, tensor_of(a.type).elem, shp) for a, shp in zip(f.arguments, shapes)]
            got = dequant.jit(text, name)(*args)
            want = reference(args[0], args[1], args[2] if len(args) > 2 else None, sig.attrs["axis"], sig.attrs["block_size"], got.dtype)
            err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.maximum(1.0, np.abs(want.astype(np.float64)))))
            tol = TOLERANCE[sig.result.elem]
            good = err <= tol
            ok &= good
            print(f"{name:<16} {onnx.granularity(sig):<10} {sig.operands['x'].elem:>9} -> {sig.result.elem:<5} "
                  f"shape {list(got.shape)!s:<10} max rel err {err:.3g} (tolerance {tol:g})  {'OK' if good else 'MISMATCH'}")  # fmt: skip
    return ok


def print_path(name: str) -> int:
    """Print where the shipped examples are (package data: found from any directory)."""
    names = sorted(f.name for f in EXAMPLES.iterdir() if f.is_file())
    if name and name not in names:
        print(f"error: no shipped example named '{name}'; the examples are: {', '.join(names)}", file=sys.stderr)
        return 2
    print(os.path.abspath(EXAMPLES / name if name else EXAMPLES))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dequant.example",
        description="Compile each function of an .mlir file of ONNX DequantizeLinear ops "
        "(dq.onnx_dequantize_linear) to native code, run it on random data and compare it "
        "with a numpy reference written from the ONNX text.",
        epilog="Exit status: 0 all match, 1 a mismatch, 2 unusable input.",
    )
    parser.add_argument("file", nargs="?", help="the .mlir file (default: the example shipped with dequant)")
    parser.add_argument("--path", nargs="?", const="", metavar="NAME",
                        help="print the absolute path of the shipped examples' directory, or of the example NAME, "
                             "and exit (e.g. dequant-opt \"$(python -m dequant.example --path onnx_dequantize.mlir)\")")  # fmt: skip
    args = parser.parse_args(argv)
    if args.path is not None:
        return print_path(args.path)
    if args.file is None:
        with resources.as_file(SHIPPED) as shipped:
            print(f"running the shipped example {shipped}")
            return main([str(shipped)])
    try:
        ok = run_file(args.file)
    except ExampleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("all functions match the reference" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
