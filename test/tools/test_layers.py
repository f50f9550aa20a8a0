"""Layers point down: `dialect/` (the package dequant.dialect) imports no other part of dequant;
`passes/` (dequant.passes) imports dequant.dialect and itself; the runtime and tools (`python/`,
the package dequant) import both. Checked twice:
- on the source: every import of every module of dialect/ and passes/ (top-level or inside a
  function, absolute or relative, `importlib.import_module` of a constant name), read with `ast`;
- on a fresh interpreter: `import dequant.passes` loads no module of python/ but the package's
  `__init__` (so no numpy kernels, no runtime), and `import dequant` still gives `dequant.ops`,
  `dequant.jit`, ... on first use (PEP 562).
And no import cycle among dequant's modules (every package, the same walk of the source): module
A imports B imports ... A. The registries' discovery (`importlib.import_module` of the names
`pkgutil` finds, in dequant.dialect and dequant.passes) is not an import the walk reads.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIRS = {"dequant.dialect": ROOT / "dialect", "dequant.passes": ROOT / "passes", "dequant": ROOT / "python"}
LAYERS = {"dequant.dialect": 0, "dequant.passes": 1, "dequant": 2}  # an import may only go to a layer <= its own


def package_of(module: str) -> str | None:
    """The layer's package holding `module` (a dotted name), or None outside dequant."""
    for package in LAYERS:  # the sub-packages first
        if module == package or module.startswith(package + "."):
            return package
    return None


def is_module(name: str) -> bool:
    """Whether the dotted `name` is a module or package of dequant's source tree."""
    package = package_of(name)
    if package is None:
        return False
    path = DIRS[package].joinpath(*name[len(package) :].split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, imported module) for every import in `source`, the text of `module`; `from P import
    n` imports P.n when that is a module, else P. Relative imports are resolved."""
    here = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if is_module(sub) else base))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):  # fmt: skip
            found.append((node.lineno, node.args[0].value))
    return found


def upward(source: str, module: str, is_package: bool = False) -> list[str]:
    """The imports of `module` that reach a higher layer, as "line: name"."""
    own = LAYERS[package_of(module)]
    out = []
    for line, name in imports(source, module, is_package):
        target = package_of(name)
        if target is not None and LAYERS[target] > own:
            out.append(f"{line}: {name}")
    return list(dict.fromkeys(out))  # one line per module, though it imports several names


def modules():
    for package in ("dequant.dialect", "dequant.passes"):
        for path in sorted(DIRS[package].glob("*.py")):
            is_package = path.stem == "__init__"
            yield (package if is_package else f"{package}.{path.stem}"), path, is_package


MODULES = list(modules())


@pytest.mark.parametrize("module, path, is_package", MODULES, ids=[m for m, _, _ in MODULES])
def test_imports_point_down(module, path, is_package):
    bad = upward(path.read_text(), module, is_package)
    assert not bad, f"{path.relative_to(ROOT)} imports a higher layer: " + ", ".join(bad)


def test_the_walk_sees_every_module():
    names = {m for m, _, _ in MODULES}
    assert {"dequant.dialect", "dequant.dialect.unpack", "dequant.passes", "dequant.passes.to_linalg"} <= names
    assert len(names) > 40


def every_module() -> dict:
    """Every module of dequant's source tree, sub-packages included: dotted name -> (path, is_package)."""
    found = {}
    for package, root in DIRS.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if package == "dequant" and parts[0] in ("dialect", "passes"):
                continue  # not in the source tree; DIRS maps the sub-packages apart
            is_package = parts[-1] == "__init__"
            found[".".join([package] + parts[: -1 if is_package else None])] = (path, is_package)
    return found


def import_graph(sources: dict) -> dict:
    """module -> {modules of `sources` it imports}; `sources`: name -> (text, is_package). An import
    of a name inside a module (`from dequant import context`) is an import of that module."""
    graph = {}
    for module, (text, is_package) in sources.items():
        graph[module] = set()
        for _, name in imports(text, module, is_package):
            while name and name not in sources:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].add(name)
    return graph


def cycles(graph: dict) -> list[list[str]]:
    """The import cycles of `graph`: its strongly connected components of more than one module,
    each sorted (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


# Cycles still in the tree (each a sorted list of modules): none; a new one fails the test.
KNOWN_CYCLES: list = []


def test_no_import_cycle():
    found = cycles(import_graph({m: (path.read_text(), is_package) for m, (path, is_package) in every_module().items()}))
    new = [c for c in found if c not in KNOWN_CYCLES]
    assert not new, "import cycles: " + "; ".join(" <-> ".join(c) for c in new)
    assert found == KNOWN_CYCLES, "a known cycle is gone: take it out of KNOWN_CYCLES"


def test_the_cycle_walk_sees_every_package():
    names = every_module()
    assert {"dequant.ops", "dequant.formats.matmul_nbits", "dequant.passes.kernels.routes", "dequant.dialect.unpack"} <= set(names)


# The cycle walk, on modules written for the purpose.
CYCLES = [
    ({"dequant.a": "from . import b", "dequant.b": "def f():\n    from .a import g"}, [["dequant.a", "dequant.b"]]),
    ({"dequant.a": "import dequant.b", "dequant.b": "from dequant.c import x", "dequant.c": "from dequant import a"},
     [["dequant.a", "dequant.b", "dequant.c"]]),
    ({"dequant.p": "from .m import f", "dequant.p.m": "from dequant.p import g"}, [["dequant.p", "dequant.p.m"]]),
    ({"dequant.a": "from . import b\nimport numpy", "dequant.b": "from dequant.dialect import c", "dequant.dialect.c": ""}, []),
    ({"dequant.a": "from . import b", "dequant.b": "from . import c", "dequant.c": "import dequant.z"}, []),
]  # fmt: skip


@pytest.mark.parametrize("sources, want", CYCLES)
def test_the_cycle_walk_finds_a_cycle(sources, want, monkeypatch):
    packages = {m for m in sources if any(n.startswith(m + ".") for n in sources)}
    monkeypatch.setattr(sys.modules[__name__], "is_module", lambda name: name in sources)
    assert cycles(import_graph({m: (s, m in packages) for m, s in sources.items()})) == want


# The walk itself, on imports written for the purpose: each names the line it should flag.
FLAGGED = [
    ("dequant.passes.p", "from dequant.diagnostics import emit_remarks", "1: dequant.diagnostics"),
    ("dequant.passes.p", "def f():\n    from dequant.packed import pack", "2: dequant.packed"),
    ("dequant.passes.p", "from ..packed import Packed", "1: dequant.packed"),
    ("dequant.passes.p", "from .. import ops", "1: dequant.ops"),
    ("dequant.passes.p", "from dequant import context", "1: dequant"),
    ("dequant.passes.p", "import dequant.runtime", "1: dequant.runtime"),
    ("dequant.passes.p", "import importlib\nimportlib.import_module('dequant.kernel')", "2: dequant.kernel"),
    ("dequant.dialect.d", "from dequant.passes import queries", "1: dequant.passes.queries"),
    ("dequant.dialect.d", "from ..passes.queries import made_by", "1: dequant.passes.queries"),
    ("dequant.dialect", "from ..passes import PASSES", "1: dequant.passes"),
]
ALLOWED = [
    ("dequant.passes.p", "from dequant import dialect\nfrom dequant.dialect import unpack\nfrom . import Pass"),
    ("dequant.passes.p", "from .queries import made_by\nfrom ..dialect.walking import walk\nimport numpy, mlir.ir"),
    ("dequant.dialect.d", "from . import canonical\nfrom .elements import ELEMENTS\nfrom mlir import ir"),
]


@pytest.mark.parametrize("module, source, want", FLAGGED)
def test_the_walk_flags_an_upward_import(module, source, want):
    assert upward(source, module, is_package="." not in module.removeprefix("dequant.")) == [want]


@pytest.mark.parametrize("module, source", ALLOWED)
def test_the_walk_allows_a_downward_import(module, source):
    assert upward(source, module) == []


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_importing_the_passes_loads_no_runtime():
    out = run("""
        import sys
        import dequant.passes
        print(*sorted(m for m in sys.modules if m.split(".")[0] == "dequant"))
    """).split()
    assert "dequant.passes.to_linalg" in out  # the passes were imported
    for gone in ("dequant.ops", "dequant.runtime", "dequant.kernel"):
        assert gone not in out
    assert [m for m in out if package_of(m) == "dequant" and m != "dequant"] == []


def test_dequant_opt_starts_without_what_the_stage_does_not_use():
    """`import dequant.cli` (every dequant-opt start) loads neither linalg's nor llvm's Python
    dialect module (100 ms of import: the passes take them from passes/lazy.py), nor the kernels'
    runtime (--emit=object only), nor importlib.metadata (--version only), nor ml_dtypes (1 s of
    import with ml_dtypes 0.7.0 on a 2-core AVX2 host: the element table loads it on the first
    dtype of its own, dialect/elements.py). Neither does the IREE stage's `import dequant.iree`."""
    for module in ("dequant.cli", "dequant.iree"):
        out = run(f"""
            import sys
            import {module}
            print(*sorted(sys.modules))
        """).split()
        assert "dequant.passes.to_linalg" in out
        for gone in ("mlir.dialects.linalg", "mlir.dialects.llvm", "dequant.runtime", "dequant.kernel", "importlib.metadata",
                     "ml_dtypes"):  # fmt: skip
            assert gone not in out, (module, gone)


def test_the_package_gives_its_names_on_first_use():
    out = run("""
        import sys
        import dequant
        assert "dequant.ops" not in sys.modules
        print(dequant.ops.onnx_dequantize_linear.__name__)
        print(dequant.jit.__module__, dequant.import_onnx.__module__, dequant.Packed.__module__, dequant.pack.__module__)
        print(dequant.runtime.__name__, dequant.kernel.__name__, dequant.diagnostics.__name__)
        print(dequant.verify.__module__, dequant.register_dialect.__module__, type(dequant.context()).__name__)
        from dequant import *
        print(sorted(n for n in dequant.__all__ if n not in dir(dequant)))
        try:
            dequant.no_such_name
        except AttributeError as e:
            print("AttributeError", e)
    """).splitlines()
    assert out == [
        "onnx_dequantize_linear",
        "dequant.compiled dequant.onnx_importer dequant.packed dequant.packed",
        "dequant.runtime dequant.kernel dequant.diagnostics",
        "dequant.dialect dequant.dialect Context",
        "[]",
        "AttributeError module 'dequant' has no attribute 'no_such_name'",
    ]
