"""Diagnostics: rendering MLIR's as `file:line:col: severity: message`, collecting them, and the
`expected-*` convention of --verify-diagnostics. Passes emit their remarks with
dequant.passes.remarks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir

SEVERITIES = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


@dataclass
class Diag:
    severity: str
    file: str | None
    line: int | None
    col: int | None
    message: str
    notes: list = field(default_factory=list)

    def where(self) -> str:
        if self.file is None:
            return "<unknown>:0"
        return f"{self.file}:{self.line}:{self.col}"

    def render(self) -> str:
        lines = [f"{self.where()}: {self.severity}: {self.message}"]
        lines += [n.render() for n in self.notes]
        return "\n".join(lines)


def file_location(loc: ir.Location):
    """(file, line, col) of the first file location inside `loc`, or Nones."""
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_name():
        return file_location(loc.child_loc)
    if loc.is_a_callsite():
        return file_location(loc.callee)
    if loc.is_a_fused():
        for inner in loc.locations:
            found = file_location(inner)
            if found[0] is not None:
                return found
    return None, None, None


CURRENT_OP = re.compile(r'see current operation: (?:%\S+ = )?"?([A-Za-z_][\w.$]*)"?')


def from_info(d, rename: dict | None = None) -> Diag:
    """A `Diag` from an `ir.Diagnostic` or `ir.DiagnosticInfo`; `rename` maps buffer names. A
    message of IRDL's structural verifier ("op expects ...") gets the op's name, which MLIR puts
    only in the "see current operation" note."""
    file, line, col = file_location(d.location)
    if file is not None and rename:
        file = rename.get(file, file)
    message = d.message if hasattr(d, "message") else str(d)
    notes = [from_info(n, rename) for n in d.notes]
    if message.startswith("op "):
        named = next((m.group(1) for n in notes for m in [CURRENT_OP.search(n.message)] if m), None)
        if named:
            message = f"'{named}' {message}"
    return Diag(SEVERITIES[d.severity], file, line, col, message, notes)


class Collector:
    """Collects the diagnostics a context emits while attached (use as a context manager)."""

    def __init__(self, context: ir.Context, rename: dict | None = None):
        self.context, self.rename, self.diags = context, rename, []

    def __enter__(self):
        self.handler = self.context.attach_diagnostic_handler(self._handle)
        return self

    def _handle(self, d) -> bool:
        # Called from C++: an exception escaping it would terminate the process (found by fuzzing:
        # a diagnostic naming an op whose name is not UTF-8 cannot become a Python str).
        try:
            self.diags.append(from_info(d, self.rename))
        except Exception:  # noqa: BLE001
            severity = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning"}.get(d.severity, "remark")
            self.diags.append(Diag(severity, None, None, None, "MLIR reported a diagnostic whose text is not valid UTF-8 (a name or string in the input holds other bytes)"))
        return True

    def __exit__(self, *exc):
        self.handler.detach()

    def add_error(self, e: ir.MLIRError) -> None:
        """Add the diagnostics an MLIRError carries."""
        self.diags.extend(from_info(d, self.rename) for d in e.error_diagnostics)


EXPECTED = re.compile(r"expected-(error|warning|note|remark)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")


@dataclass
class Expected:
    severity: str
    line: int
    text: str
    seen: bool = False


def expectations(text: str) -> list[Expected]:
    """The `// expected-<severity> [@+N|@-N|@above|@below] {{message}}` markers of `text`."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if "//" not in line:
            continue
        for severity, offset, message in EXPECTED.findall(line[line.index("//") :]):
            target = number
            if offset == "above":
                target -= 1
            elif offset == "below":
                target += 1
            elif offset:
                target += int(offset)
            out.append(Expected(severity, target, message))
    return out


def verify(diags: list[Diag], expected: list[Expected], file: str) -> list[str]:
    """Match produced diagnostics with expectations; the mismatches as error lines."""
    problems = []
    produced = []
    for d in diags:
        produced.append(d)
        produced.extend(n for n in d.notes if any(e.severity == "note" for e in expected))
    for d in produced:
        match = next(
            (e for e in expected if not e.seen and e.severity == d.severity and e.line == d.line and e.text in d.message),
            None,
        )
        if match is None:
            problems.append(f"{d.where()}: error: unexpected {d.severity}: {d.message}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            problems.append(f'{file}:{e.line}: error: expected {e.severity} "{e.text}" was not produced')
    return problems
