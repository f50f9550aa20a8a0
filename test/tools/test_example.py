"""`python -m dequant.example`: the quick start's main job, and every way to misuse it ends in
one `error:` line and exit status 2 (never a traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def example(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dequant.example", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_shipped_example_runs_from_any_directory(tmp_path):
    r = example(cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "running the shipped example" in r.stdout
    assert r.stdout.count(" OK") == 4 and "all functions match the reference" in r.stdout


def test_help(tmp_path):
    r = example("--help", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m dequant.example")


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.mlir", None, "error: cannot read {p}: No such file or directory"),
        ("garbage.onnx", b"garbage\n", "error: {p} is not an MLIR module: {p}:1:1: custom op 'garbage' is unknown"),
        ("binary.mlir", b"\xff\xfe\x00", "error: cannot read {p}: 'utf-8' codec can't decode"),
        ("no_op.mlir", b"func.func @f() {\n  return\n}\n", "error: {p} has no function around one dq.onnx_dequantize_linear op to run"),
        (
            "bad_op.mlir",
            b'func.func @f(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<4xf16> {\n'
            b'  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xi8>, tensor<f32>) -> tensor<4xf16>\n'
            b"  return %y : tensor<4xf16>\n}\n",
            "error: {p}:2:8: 'dq.onnx_dequantize_linear' op the output type is",
        ),
    ],
)
def test_unusable_input_is_one_error_line(tmp_path, name, content, message):
    p = tmp_path / name
    if content is not None:
        p.write_bytes(content)
    r = example(str(p), cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith(message.format(p=p)), r.stderr
    assert "Traceback" not in r.stderr


REPO_EXAMPLES = Path(__file__).resolve().parents[2] / "python" / "examples"


def test_path_finds_the_shipped_examples_from_any_directory(tmp_path):
    r = example("--path", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    where = Path(r.stdout.strip())
    assert where.is_absolute() and sorted(p.name for p in where.iterdir() if p.is_file()) == ["int4_matmul.onnx", "onnx_dequantize.mlir"]
    for name in ("onnx_dequantize.mlir", "int4_matmul.onnx"):
        r = example("--path", name, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert Path(r.stdout.strip()).read_bytes() == (REPO_EXAMPLES / name).read_bytes()


def test_path_of_an_example_feeds_dequant_opt(tmp_path):
    mlir = example("--path", "onnx_dequantize.mlir", cwd=tmp_path).stdout.strip()
    r = subprocess.run([sys.executable, "-m", "dequant.cli", "--dq-to-linalg", mlir], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "linalg.generic" in r.stdout and "dq.onnx_dequantize_linear" not in r.stdout


def test_path_of_an_unknown_example_is_one_error_line(tmp_path):
    r = example("--path", "nope.mlir", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "error: no shipped example named 'nope.mlir'; the examples are: int4_matmul.onnx, onnx_dequantize.mlir\n"
