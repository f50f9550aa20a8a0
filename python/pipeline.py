"""Textual pass pipelines that mix dq passes (Python) with upstream MLIR passes.

Upstream's parser knows only registered C++ passes, so the text is parsed here into a tree,
named pipelines are expanded, and one `PassManager` is built: upstream elements are added as
text, a dq pass as a Python pass that runs on every op of its anchor (e.g. each `func.func`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir, passmanager

from dequant.dialect.walking import walk
from dequant.passes import PASSES, PIPELINES


class PipelineError(ValueError):
    """A pipeline that does not parse or names an unknown pass (`unknown`: that name)."""

    def __init__(self, message: str, unknown: str | None = None):
        super().__init__(message)
        self.unknown = unknown


# Upstream passes a dq user is likely to name: candidates for "did you mean" (the bindings cannot
# list the registered passes). Unknown names are still checked against the real registry.
UPSTREAM_NAMES = (
    "canonicalize", "cse", "inline", "symbol-dce", "loop-invariant-code-motion", "sccp", "lower-quant-ops",
    "convert-elementwise-to-linalg", "linalg-fuse-elementwise-ops", "one-shot-bufferize", "eliminate-empty-tensors",
    "convert-linalg-to-loops", "convert-linalg-to-affine-loops", "lower-affine", "convert-scf-to-cf",
    "convert-vector-to-llvm", "expand-strided-metadata", "finalize-memref-to-llvm", "convert-arith-to-llvm",
    "convert-func-to-llvm", "convert-cf-to-llvm", "reconcile-unrealized-casts", "arith-expand",
    "transform-interpreter", "buffer-deallocation-pipeline", "convert-math-to-llvm", "test-lower-to-llvm",
)  # fmt: skip


@dataclass
class Element:
    name: str
    options: str = ""  # the text inside {...}, without braces
    children: list | None = None  # a nested pipeline `name(...)`, anchored on ops `name`
    text: str = field(default="", repr=False)

    def spelled(self) -> str:
        if self.children is not None:
            return f"{self.name}({','.join(c.spelled() for c in self.children)})"
        return f"{self.name}{{{self.options}}}" if self.options else self.name


def parse(text: str) -> list[Element]:
    """Parse `a,b{opt=1},func.func(c,d)` into elements."""
    pos = 0

    def skip():
        nonlocal pos
        while pos < len(text) and text[pos].isspace():
            pos += 1

    def elements(closing: str | None) -> list[Element]:
        nonlocal pos
        out = []
        while True:
            skip()
            if closing and pos < len(text) and text[pos] == closing and not out:
                return out
            start = pos
            while pos < len(text) and (text[pos].isalnum() or text[pos] in "-_."):
                pos += 1
            name = text[start:pos]
            if not name:
                raise PipelineError(f"expected a pass or op name at position {pos} of '{text}'")
            el = Element(name)
            skip()
            if pos < len(text) and text[pos] == "{":
                depth, begin = 0, pos
                while pos < len(text):
                    depth += {"{": 1, "}": -1}.get(text[pos], 0)
                    pos += 1
                    if depth == 0:
                        break
                if depth:
                    raise PipelineError(f"unbalanced '{{' in '{text}'")
                el.options = text[begin + 1 : pos - 1].strip()
            elif pos < len(text) and text[pos] == "(":
                pos += 1
                el.children = elements(")")
                skip()
                if pos >= len(text) or text[pos] != ")":
                    raise PipelineError(f"expected ')' at position {pos} of '{text}'")
                pos += 1
            out.append(el)
            skip()
            if pos < len(text) and text[pos] == ",":
                pos += 1
                continue
            if closing is None and pos < len(text):
                raise PipelineError(f"unexpected '{text[pos]}' at position {pos} of '{text}'")
            return out

    result = elements(None)
    return result


def expand(elements: list[Element]) -> list[Element]:
    """Replace named pipelines (e.g. dq-to-llvm) by their elements, recursively."""
    out = []
    for el in elements:
        if el.children is not None:
            out.append(Element(el.name, children=expand(el.children)))
        elif el.name in PIPELINES:
            out.extend(expand(parse(PIPELINES[el.name].elements)))
        else:
            out.append(el)
    return out


def _options(p, text: str) -> dict:
    """The keyword arguments of dq pass `p` from its options' text (`a=true b=false`, as mlir-opt
    spells them), or PipelineError."""
    out = {}
    for item in text.split():
        key, _, value = item.partition("=")
        if key not in p.options:
            known = ", ".join(p.options) or "none"
            raise PipelineError(f"pass '{p.name}' has no option '{key}' (its options: {known})")
        if value not in ("true", "false", "1", "0", ""):
            raise PipelineError(f"option '{key}' of pass '{p.name}' is true or false, not '{value}'")
        out[key.replace("-", "_")] = value in ("true", "1", "")
    return out


def _python_pass(p, anchor: str | None, options: dict | None = None):
    """A callable for `PassManager.add` running dq pass `p` on `anchor` ops (or the op itself),
    with `options` (keyword arguments of its `run`)."""

    def run(op, external):
        targets = [op]
        if anchor is not None:
            targets = []

            def visit(o):
                if o.name == anchor:
                    targets.append(o)
                    return ir.WalkResult.SKIP if hasattr(ir.WalkResult, "SKIP") else ir.WalkResult.ADVANCE
                return ir.WalkResult.ADVANCE

            walk(op, visit, ir.WalkOrder.PRE_ORDER)
        try:
            ok = all([p.run(t, **(options or {})) for t in targets])
        except Exception as e:  # a bug in a pass is a diagnostic, not a traceback through the driver
            op.location.emit_error(f"internal error in pass '{p.name}': {type(e).__name__}: {e}")
            ok = False
        if not ok:
            external.signal_pass_failure()

    run.__name__ = p.name.replace("-", "_")
    return run


# upstream's refusal of an op-specific pass (e.g. lower-quant-ops, on func.func) added at the top
_RESTRICTED = re.compile(r"Can't add pass '[^']*' restricted to '([\w.]+)'")

# dq passes run before an upstream pass that would kill the process on input it does not expect
# (found by fuzzing: one-shot-bufferize on a tensor of !quant.uniform, lower-quant-ops on a cast of
# !quant.any), on the same ops as that pass (nested under the same anchors).
GUARDS = {"one-shot-bufferize": "dq-check-lowerable", "lower-quant-ops": "dq-check-quant-lowerable"}


def _add(pm: passmanager.PassManager, elements: list[Element], prefix: list[str], context=None) -> None:
    """Add elements nested under the anchors `prefix` (ops inside the top-level module)."""
    upstream: list[str] = []

    def nested(texts: list[str]) -> str:
        text = ",".join(texts)
        for anchor in reversed(prefix):
            text = f"{anchor}({text})"
        return text

    def add(texts: list[str]) -> None:
        try:
            pm.add(nested(texts))
        except ValueError as e:  # upstream's message: "MLIR Textual PassPipeline Parser:1:1: error: ..."
            first = str(e).strip().splitlines()[0]
            restricted = _RESTRICTED.search(first)
            if restricted and len(texts) > 1:  # one of them op-specific: each on its own
                for t in texts:
                    add([t])
                return
            if restricted and not prefix:  # an op-specific pass at the top: nested on its ops, as mlir-opt does
                try:
                    pm.add(f"{restricted.group(1)}({texts[0]})")
                    return
                except ValueError:
                    pass
            raise PipelineError(first.split("error: ", 1)[-1], _unknown(texts, prefix, context)) from None

    def flush():
        if upstream:
            add(upstream)
            upstream.clear()

    for el in elements:
        if el.children is not None:
            if any(_has_python(c) for c in el.children):
                flush()
                _add(pm, el.children, prefix + [el.name], context)
            else:
                upstream.append(el.spelled())
        elif el.name in GUARDS:
            flush()
            p = PASSES[GUARDS[el.name]]
            pm.add(_python_pass(p, prefix[-1] if prefix else None), name=p.name, argument=p.name, description=p.description)
            upstream.append(el.spelled())
        elif el.name in PASSES:
            p = PASSES[el.name]
            if el.options and not p.options:
                raise PipelineError(f"pass '{el.name}' takes no options")
            options = _options(p, el.options)
            flush()
            pm.add(_python_pass(p, prefix[-1] if prefix else None, options), name=p.name, argument=p.name, description=p.description)
        else:
            upstream.append(el.spelled())
    flush()


def _unknown(texts: list[str], prefix: list[str], context) -> str | None:
    """The name of the first upstream pass among `texts` (nested under `prefix`) that does not
    parse on its own."""

    def leaves(elements, anchors):
        for el in elements:
            if el.children is None:
                yield el, anchors
            else:
                yield from leaves(el.children, anchors + [el.name])

    for text in texts:
        for el, anchors in leaves(parse(text), list(prefix)):
            nested = el.spelled()
            for anchor in reversed(anchors):
                nested = f"{anchor}({nested})"
            try:
                passmanager.PassManager("builtin.module", context=context).add(nested)
            except ValueError:
                return el.name
    return None


def _has_python(el: Element) -> bool:
    """Whether `el` holds a dq pass or an upstream pass with a guard (GUARDS)."""
    if el.children is not None:
        return any(_has_python(c) for c in el.children)
    return el.name in PASSES or el.name in GUARDS


def build(text: str, context: ir.Context | None = None) -> passmanager.PassManager:
    """A PassManager on `builtin.module` for a pipeline `builtin.module(...)` or a bare list."""
    elements = parse(text)
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].children is not None:
        elements = elements[0].children
    pm = passmanager.PassManager("builtin.module", context=context)
    _add(pm, expand(elements), [], context)
    return pm
