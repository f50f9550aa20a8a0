"""What dequant-opt does for the memory of a large input (python/cli.py): as a command, glibc's
malloc keeps what the process frees for its next allocations (`reuse_freed_memory`), and the
input's text is freed once parsed, so the passes and the printer reuse its memory."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from dequant import cli

KEEPS = """
import sys
from dequant import cli
if sys.argv[1] == "on":
    cli.reuse_freed_memory()
def rss():
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS:")).split()[1]) << 10
base = rss()
x = b"x" * (256 << 20)
del x
print(rss() - base > 200 << 20)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or sys.platform != "linux", reason="glibc's malloc on Linux")
def test_freed_memory_stays_for_reuse():
    """256 MiB freed: returned to the system by default, kept after reuse_freed_memory."""
    kept = {}
    for setting in ("off", "on"):
        run = subprocess.run([sys.executable, "-c", KEEPS, setting], capture_output=True, text=True, check=True)
        kept[setting] = run.stdout.strip()
    assert kept == {"off": "False", "on": "True"}


class Text(bytes):
    """A text that says when it is freed."""

    def __del__(self):
        FREED.append(bytes(self))


FREED = []


def test_the_text_is_freed_once_parsed():
    text = b"func.func @f() {\n  return\n}\n"
    texts = [Text(text)]
    printer, messages, ok = cli.process(texts, "t.mlir", cli.parser().parse_args(["t.mlir"]), "canonicalize")
    assert ok and not texts and not messages
    assert FREED == [text]  # while the module lives on in its printer
    assert printer is not None
