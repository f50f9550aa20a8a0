"""Native code never reads out of bounds, and a failed run-time check is an error, not a crash:
a kernel called past the Python checks with a scale shorter than the dim it is read along reports
the failed check (passes/checks.py), writes nothing and returns; Python raises a ValueError.
Each case runs in a child process, so a regression that crashed would fail the test, not pytest."""

import subprocess
import sys
import textwrap


def run_isolated(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=300)


def test_short_scale_is_reported_not_read_past():
    run = run_isolated(
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
        try:
            k._native([x, np.ones(3, np.float32)])  # past the Python checks, on purpose
        except ValueError as e:
            print("native:", e, flush=True)
        print("alive", flush=True)
        """
    )
    assert run.returncode == 0, run.stderr
    assert "checked: dq.onnx_dequantize_linear: per-axis x_scale must have dim(axis)" in run.stdout
    assert "native: native shape check failed: dim 0 of the scale does not match output dim 1" in run.stdout
    assert "alive" in run.stdout


def test_checks_inside_the_function_are_reported():
    """An operand the Python checks cannot see (made inside the function, here by tensor.cast and
    for the canonical op) is checked natively: a ValueError, not an abort."""
    run = run_isolated(
        """
        import numpy as np, dequant
        src = '''func.func @cast(%x: tensor<4x8xi8>, %s: tensor<3xf32>) -> tensor<4x8xf32> {
          %c = tensor.cast %s : tensor<3xf32> to tensor<?xf32>
          %y = "dq.onnx_dequantize_linear"(%x, %c) {axis = 1 : i64} : (tensor<4x8xi8>, tensor<?xf32>) -> tensor<4x8xf32>
          return %y : tensor<4x8xf32>
        }
        func.func @canonical(%x: tensor<?x?xi8>, %s: tensor<?xf32>) -> tensor<?x?xf32> {
          %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1 floordiv 4)>, zero_point_map = affine_map<(d0, d1) -> (d1 floordiv 4)>} : (tensor<?x?xi8>, tensor<?xf32>) -> tensor<?x?xf32>
          return %y : tensor<?x?xf32>
        }'''
        for name, args in [("cast", (np.ones((4, 8), np.int8), np.ones(3, np.float32))),
                           ("canonical", (np.ones((2, 16), np.int8), np.ones(3, np.float32)))]:
            try:
                dequant.jit(src, name)(*args)
                print(name, "no error")
            except ValueError as e:
                print(name, "raised:", e)
        """
    )
    assert run.returncode == 0, run.stderr
    assert "cast raised: native shape check failed: dim 0 of the scale does not match output dim 1" in run.stdout
    assert "canonical raised: native shape check failed: dim 0 of the scale does not match output dim 1" in run.stdout


def test_dynamic_x_with_a_static_result_is_checked():
    """x of another length than the static result: reported instead of writing part of it (x
    shorter) or past it (x longer)."""
    run = run_isolated(
        """
        import numpy as np, dequant
        src = '''func.func @f(%x: tensor<?xi8>, %s: tensor<f32>) -> tensor<16xf32> {
          %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?xi8>, tensor<f32>) -> tensor<16xf32>
          return %y : tensor<16xf32>
        }'''
        k = dequant.jit(src, "f")
        print(k(np.arange(16, dtype=np.int8), np.float32(2))[-1])
        for n in (8, 4096):
            try:
                k._native([np.ones(n, np.int8), np.array(2, np.float32)])
                print(n, "no error")
            except ValueError as e:
                print(n, "raised:", e)
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "30.0"
    assert "8 raised: native shape check failed: dim 0 of x does not match output dim 0" in run.stdout
    assert "4096 raised: native shape check failed: dim 0 of x does not match output dim 0" in run.stdout


def test_check_failed_in_a_pool_worker_is_raised_by_the_caller():
    """A kernel run natively by the pool's worker (a job's `native`) reports its failed check in
    the worker's thread; the caller raises it after the split call, and the next call is clean
    (the job's Python call fails the test: a worker, not the caller, must run it)."""
    run = run_isolated(
        """
        import ctypes, time, numpy as np, dequant
        from dequant.kernel import descriptor
        from dequant.runtime import WorkerPool
        src = '''func.func @f(%x: tensor<?x?xi8>, %s: tensor<?xf32>) -> tensor<?x?xf32> {
          %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64} : (tensor<?x?xi8>, tensor<?xf32>) -> tensor<?x?xf32>
          return %y : tensor<?x?xf32>
        }'''
        kernel = dequant.jit(src, "f").kernel
        x = np.ones((4, 64), np.int8)

        class Job:
            def __init__(self, scale):
                self.args, self.results, self.alive = kernel.pack([descriptor(x), descriptor(scale)])
                self.native = (kernel.fn_address, ctypes.addressof(self.args), kernel)
            def __call__(self):
                raise AssertionError("a worker runs this job natively")

        pool = WorkerPool(2)
        slow = lambda: time.sleep(0.2)  # the caller's range: the worker starts its job meanwhile
        try:
            pool.run([slow, Job(np.ones(3, np.float32))])  # past the Python checks, on purpose
            print("no error")
        except ValueError as e:
            print("worker:", e, flush=True)
        print("pending", kernel.pending)
        pool.run([slow, Job(np.ones(64, np.float32))])
        print("clean", flush=True)
        """
    )
    assert run.returncode == 0, run.stderr
    assert "worker: native shape check failed: dim 0 of the scale does not match output dim 1" in run.stdout
    assert "pending 0" in run.stdout
    assert "clean" in run.stdout
