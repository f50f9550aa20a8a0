"""Native code never reads out of bounds: a kernel called directly, past the Python checks,
with a scale shorter than the dims it is read along stops at its shape guard (cf.assert, abort
with a message) instead of reading past the buffer."""

import subprocess
import sys
import textwrap


def test_short_scale_aborts_with_message_instead_of_reading_past_it():
    script = textwrap.dedent(
        """
        import numpy as np, dequant
        src = '''func.func @f(%x: tensor<?x?xi8>, %s: tensor<?xf32>) -> tensor<?x?xf32> {
          %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64} : (tensor<?x?xi8>, tensor<?xf32>) -> tensor<?x?xf32>
          return %y : tensor<?x?xf32>
        }'''
        k = dequant.jit(src, "f")
        x = np.ones((4, 1 << 20), np.int8)
        try:
            k(x, np.ones(3, np.float32))
        except ValueError as e:
            print("checked:", e, flush=True)
        k._native([x, np.ones(3, np.float32)])  # bypass the checks on purpose
        print("NOT REACHED", flush=True)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "checked: dq.onnx_dequantize_linear: per-axis x_scale must have dim(axis)" in run.stdout
    assert "NOT REACHED" not in run.stdout
    assert run.returncode != 0
    assert "does not match the output dim 1" in run.stdout + run.stderr  # cf.assert prints with puts
