"""Bad or unusual input never crashes, and caller memory other than `out=` is never written.

One regression test per point found by the hostile-user campaign (issue 10); each would fail
before its fix. Cases that once killed the process run in a child process, so a regression fails
the test instead of ending pytest."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dequant
from dequant import ops
from dequant.runtime import KERNEL_CACHE_SIZE, Runtime


def run_isolated(script: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=timeout)


# --- 1, 3, 4, 15, 18: dequant.jit -------------------------------------------------------------------

FUNCTIONS = """
func.func @constant() -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func @add_into_argument(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = linalg.add ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
func.func @concat(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tensor.concat dim(0) %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
"""


def test_returning_a_constant_does_not_free_it():
    """The result buffer of a constant is a global (allocated = 0xDEADBEEF), not malloc'ed."""
    run = run_isolated(
        f"""
        import dequant
        f = dequant.jit({FUNCTIONS!r}, "constant")
        for _ in range(3):
            print(f().tolist())
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["[1.0, 2.0, 3.0]"] * 3


def test_jit_never_writes_the_callers_arrays():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    before = a.copy()
    y = dequant.jit(FUNCTIONS, "add_into_argument")(a)
    assert np.array_equal(y, 2 * before) and np.array_equal(a, before)
    a.flags.writeable = False  # a read-only input (it crashed when written)
    assert np.array_equal(dequant.jit(FUNCTIONS, "add_into_argument")(a), 2 * before)


def test_copies_need_no_runtime_library():
    """tensor.concat bufferizes to memref.copy into strided views: loops, not memrefCopy."""
    a, b = np.arange(8, dtype=np.float32).reshape(2, 4), np.ones((3, 4), np.float32)
    assert np.array_equal(dequant.jit(FUNCTIONS, "concat")(a, b), np.concatenate([a, b]))


@pytest.mark.parametrize("level", [4, -1, 2.5, "3"])
def test_jit_rejects_an_opt_level_llvm_has_not(level):
    with pytest.raises(ValueError, match="opt_level must be one of"):
        dequant.jit(FUNCTIONS, "constant", opt_level=level)


def test_jit_of_a_declaration_is_an_error():
    with pytest.raises(ValueError, match="'declared' is a declaration"):
        dequant.jit(FUNCTIONS, "declared")


def test_si4_synonym_runs():
    src = """func.func @f(%x: tensor<?x?xsi4>, %s: tensor<?xf32>, %z: tensor<?xsi4>) -> tensor<?x?xf32> {
      %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64} : (tensor<?x?xsi4>, tensor<?xf32>, tensor<?xsi4>) -> tensor<?x?xf32>
      return %y : tensor<?x?xf32>
    }"""
    x = np.array([[1, -2, 3], [7, -8, 0]], ml_dtypes.int4)
    z = np.array([1, 1, -1], ml_dtypes.int4)
    want = (x.astype(np.float32) - z.astype(np.float32)) * np.float32(0.5)
    assert np.array_equal(dequant.jit(src, "f")(x, np.full(3, 0.5, np.float32), z), want)


# --- 2, 8, 18: out= ---------------------------------------------------------------------------------


X, S = np.arange(-8, 8, dtype=np.int8).reshape(4, 4), np.float32(0.5)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.frombuffer(bytes(64), np.float32).reshape(4, 4),  # an immutable bytes buffer
        lambda: _read_only(np.zeros((4, 4), np.float32)),
    ],
    ids=["bytes", "read-only"],
)
def test_out_must_be_writable(make):
    out = make()
    with pytest.raises(ValueError, match="out is read-only"):
        ops.onnx_dequantize_linear(X, S, out=out)
    assert not out.any()


def test_read_only_memmap_out_is_refused(tmp_path):
    path = tmp_path / "y.bin"
    np.zeros((4, 4), np.float32).tofile(path)
    out = np.memmap(path, np.float32, "r", shape=(4, 4))
    with pytest.raises(ValueError, match="out is read-only"):
        ops.onnx_dequantize_linear(X, S, out=out)


def _read_only(a):
    a.flags.writeable = False
    return a


def test_out_overlapping_an_input_is_refused():
    scale = np.zeros(8, np.float32)  # out shares this memory below
    scale[:] = 1
    buf = np.zeros(32, np.float32)
    with pytest.raises(ValueError, match="out overlaps x_scale"):
        ops.onnx_dequantize_linear(np.ones((4, 8), np.int8), buf[:8], axis=1, out=buf.reshape(4, 8))


def test_out_must_be_an_array():
    with pytest.raises(TypeError, match="out must be a numpy array"):
        ops.onnx_dequantize_linear(X, S, out=[[0.0] * 4] * 4)


# --- 6, 12: threads ---------------------------------------------------------------------------------


def test_fork_after_a_threaded_call():
    """A child forked after a call that used the pool makes the same call (it hung)."""
    run = run_isolated(
        """
        import os, numpy as np
        from dequant import ops
        ops.set_num_threads(2)
        x, s = np.ones((4096, 1024), np.int8), np.ones(1024, np.float32)
        ops.onnx_dequantize_linear(x, s, axis=1)  # 4M elements: split over the pool
        pid = os.fork()
        if pid == 0:
            y = ops.onnx_dequantize_linear(x, s, axis=1)
            os._exit(0 if y.sum() == x.size else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        """,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "child 0" in run.stdout


def test_set_num_threads_during_a_call(dq_threads):
    dq_threads(2, min_parallel=1)
    x, s = np.ones((1024, 512), np.int8), np.ones(512, np.float32)
    errors = []

    def calls():
        try:
            for _ in range(200):
                assert ops.onnx_dequantize_linear(x, s, axis=1).sum() == x.size
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    worker = threading.Thread(target=calls)
    worker.start()
    for n in [1, 2, 3, 2] * 25:
        ops.set_num_threads(n)
    worker.join()
    assert not errors, errors[0]


def test_pool_raises_a_workers_exception_and_keeps_working():
    from dequant.runtime import WorkerPool

    pool = WorkerPool(3)
    ran = []

    def fail():
        raise ZeroDivisionError("in a worker")

    with pytest.raises(ZeroDivisionError, match="in a worker"):
        pool.run([lambda: ran.append(0), fail, lambda: ran.append(2)])
    assert sorted(ran) == [0, 2]  # every range ran before the exception was raised
    pool.run([lambda: ran.append(3), lambda: ran.append(4)])
    assert sorted(ran) == [0, 2, 3, 4]


def test_pool_shared_by_threads_calling_at_once():
    """Calls from several Python threads at once: one has the workers, the others run their
    ranges in their own thread; every range runs exactly once."""
    from dequant.runtime import WorkerPool

    pool = WorkerPool(2)
    counts = [0] * 8
    lock = threading.Lock()

    def bump(i):
        def f():
            with lock:
                counts[i] += 1
        return f

    def caller(i):
        for _ in range(500):
            pool.run([bump(2 * i), bump(2 * i + 1)])

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == [500] * 8


def test_pool_wakes_workers_that_went_to_sleep():
    """Workers spin for `spin_seconds` after a job, then sleep on a lock: with a budget of one
    poll, jobs posted while a worker spins, while it goes to sleep and once it sleeps (gaps of
    0 to 2 ms) each run exactly once, none is lost between the two (the compare-and-swap that
    decides who wakes whom), and the workers run some (the caller takes back only the jobs no
    worker has started when its own is done)."""
    from dequant.runtime import WorkerPool

    pool = WorkerPool(3, spin_seconds=0)
    counts = [0, 0, 0]
    runners = set()

    def bump(i, seconds=0.0):
        def f():
            time.sleep(seconds)
            counts[i] += 1
            runners.add(threading.get_ident())
        return f

    def calls():
        for k in range(300):
            pool.run([bump(0, (k % 2) * 2e-3), bump(1), bump(2)])
            time.sleep((k % 5) * 5e-4)

    caller = threading.Thread(target=calls, daemon=True)  # a lost wake-up fails, not hangs
    caller.start()
    caller.join(timeout=120)
    assert not caller.is_alive(), "a job posted to a sleeping worker never ran"
    assert counts == [300] * 3
    assert runners - {caller.ident}, "no worker ran a job"
    pool.spin_seconds = 1.0  # spinning workers: the same jobs, then `stop` ends their threads
    for _ in range(100):
        pool.run([bump(0, 1e-4), bump(1), bump(2)])
    assert counts == [400] * 3
    threads = [w.thread for w in pool._workers]
    pool.stop()
    assert threads and not any(t.is_alive() for t in threads)
    pool.run([bump(0), bump(1), bump(2)])  # new workers
    assert counts == [401] * 3


def test_pool_keeps_its_workers_across_resizes():
    """Fewer threads, then more again: the same worker threads (making one costs its first call
    about a millisecond)."""
    from dequant.runtime import WorkerPool

    pool = WorkerPool(3)
    pool.run([lambda: None] * 3)
    before = [w.thread for w in pool._workers]
    pool.resize(1)
    pool.run([lambda: None])
    pool.resize(3)
    pool.run([lambda: None] * 3)
    assert [w.thread for w in pool._workers] == before and all(t.is_alive() for t in before)
    pool.stop()


def test_pool_caller_runs_jobs_no_worker_started():
    """A job still posted when the caller's own is done is taken back and run by the caller:
    exactly once, whether or not a worker would have started it."""
    from dequant.runtime import WorkerPool

    pool = WorkerPool(2)
    ran = []
    for _ in range(200):
        pool.run([lambda: None, lambda: ran.append(threading.get_ident())])
    assert len(ran) == 200


def test_split_bound_call_with_sleeping_workers_matches_one_thread():
    """A split call whose worker went to sleep between calls (a budget of one poll) computes
    what one thread computes."""
    rt = Runtime(2)
    rt.min_parallel = 1  # split every call in two
    rt.pool.spin_seconds = 0
    one = Runtime(1)
    x = np.random.default_rng(0).integers(-128, 128, (64, 1000), dtype=np.int8)
    s = np.linspace(0.5, 2, 1000, dtype=np.float32)
    want = ops.function("onnx_dequantize_linear", one)(x, s, axis=1)
    out = np.empty_like(want)
    call = ops.bind(ops.function("onnx_dequantize_linear", rt), x, s, axis=1, out=out)
    for k in range(50):
        out.fill(np.nan)
        call()
        np.testing.assert_array_equal(out, want)
        time.sleep((k % 3) * 1e-3)


@pytest.mark.parametrize("n", [0, -3, 2.5, "4", True])
def test_set_num_threads_rejects_non_counts(n):
    with pytest.raises((TypeError, ValueError)):
        ops.set_num_threads(n)


# --- 13: bounded caches ----------------------------------------------------------------------------


def test_kernel_cache_is_bounded():
    runtime = Runtime(1)
    f = ops.function("onnx_dequantize_linear", runtime)
    x = np.ones((2, 256), np.int8)
    for b in range(2, 2 + KERNEL_CACHE_SIZE + 4):
        f(x, np.ones((2, -(-256 // b)), np.float32), axis=1, block_size=b)
    assert len(runtime.kernels) == KERNEL_CACHE_SIZE


def test_an_evicted_kernel_is_freed_and_its_calls_compile_it_again():
    """Issue 36.1: a kernel the cache lets go is freed, engine and all, though plans and prepared
    calls made with it live on (they hold it weakly, and compile it again when called); a bound
    call keeps its own. Each engine once held its kernel through the report callback registered
    with it, a cycle the garbage collector cannot see, and plans held their kernels: none was
    ever freed."""
    runtime = Runtime(1, kernel_cache_size=1)
    f = ops.function("onnx_dequantize_linear", runtime)
    x = np.arange(-64, 64, dtype=np.int8)
    s4, s8 = np.full(32, 0.5, np.float32), np.full(16, 0.25, np.float32)
    want4, want8 = x.astype(np.float32) * 0.5, x.astype(np.float32) * 0.25
    np.testing.assert_array_equal(f(x, s4, axis=0, block_size=4), want4)
    (first,) = runtime.kernels.values()
    bound = ops.bind(f, x, s4, axis=0, block_size=4)
    gone = weakref.ref(first)
    np.testing.assert_array_equal(f(x, s8, axis=0, block_size=8), want8)  # evicts the first kernel
    del first
    gc.collect()
    assert gone() is not None  # the bound call's
    del bound
    gc.collect()
    assert gone() is None
    np.testing.assert_array_equal(f(x, s4, axis=0, block_size=4), want4)  # prepared: compiles it again
    np.testing.assert_array_equal(f(x, s4.copy(), axis=0, block_size=4), want4)


def test_memory_stays_bounded_over_new_signatures():
    """Issue 36.1: resident memory does not grow with every new kernel signature. A child process
    on a runtime caching 2 kernels makes 150 signatures to warm up, then 150 new ones (1-D
    blocked, each block size its own kernel), and reads its resident size (Linux /proc) between:
    under 32 KB a signature. Measured: most of the one-time growth (allocator arenas, LLVM's and
    MLIR's state) comes in the first 150 signatures (205 -> 218 MiB), then 2-7 KB a signature
    (the attributes the runtime's MLIR context interns for good) up to 1,000 and beyond, 261 MiB
    after 4,096. It grew 3.3 MiB per signature when no kernel was freed, 1.0 MiB when plans held
    theirs."""
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("reads the resident size from /proc/self/statm (Linux)")
    r = run_isolated(
        """
        import gc, os
        import numpy as np
        from dequant import ops
        from dequant.runtime import Runtime
        def resident():
            gc.collect()
            return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        f = ops.function("onnx_dequantize_linear", Runtime(1, kernel_cache_size=2))
        x = np.ones(4096, np.int8)
        for b in range(1, 301):
            if b == 151:
                before = resident()
            f(x, np.ones(-(-4096 // b), np.float32), axis=0, block_size=b)
        print((resident() - before) // 2**10)
        """,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    grown = int(r.stdout.split()[-1])
    assert grown < 150 * 32, f"resident size grew by {grown} KiB over 150 new kernels"


# --- 36.3: the compiler's own failures ---------------------------------------------------------------


def _fail_vectorizing(monkeypatch):
    """dq-vectorize raising inside its run, as a pass that hits a bug would (the pass manager turns
    it into an MLIRError)."""
    from dequant.passes import vectorize

    def broken(*args, **kwargs):
        raise AssertionError("a bug in the vectorizer")

    monkeypatch.setattr(vectorize, "_tile", broken)


def _assert_compile_error(info, entry: str) -> None:
    """A CompileError (a RuntimeError) naming the entry point, the op, each array's dtype and shape
    and the attributes, saying it is a bug, chained to the compiler's error."""
    e = info.value
    assert isinstance(e, RuntimeError) and type(e) is dequant.CompileError
    message = str(e)
    for part in (f"`{entry}`", "onnx_dequantize_linear(", "x: uint16 [2, 96]", "x_scale: float32 [2, 2]", "axis=1",
                 "block_size=48", "output_dtype=bf16", "bug in dequant", "a bug in the vectorizer"):  # fmt: skip
        assert part in message, (part, message)
    assert type(e.__cause__).__name__ == "MLIRError" and "a bug in the vectorizer" in str(e.__cause__)


ARRAYS = (np.arange(192, dtype=np.uint16).reshape(2, 96), np.full((2, 2), 0.5, np.float32))
ATTRS = {"axis": 1, "block_size": 48, "output_dtype": ml_dtypes.bfloat16}


@pytest.mark.parametrize("bind", [False, True], ids=["call", "bind"])
def test_compiler_failure_is_a_compile_error(monkeypatch, bind):
    """Issue 36.3: a compiler failure on arrays that pass every rule reaches the caller as
    dequant.CompileError naming the signature, not as a raw MLIRError from a pass; the same through
    `bind`."""
    _fail_vectorizing(monkeypatch)
    f = ops.function("onnx_dequantize_linear", Runtime(1))
    with pytest.raises(dequant.CompileError) as info:
        ops.bind(f, *ARRAYS, **ATTRS) if bind else f(*ARRAYS, **ATTRS)
    _assert_compile_error(info, "kernel")


def test_compiler_failure_of_the_nontemporal_entry_is_a_compile_error(monkeypatch):
    """The `_nt` entry point, compiled at the first call that takes it, fails the same way."""
    runtime = Runtime(1)
    runtime.nontemporal_min_bytes = 0
    f = ops.function("onnx_dequantize_linear", runtime)
    f.prepare(*ARRAYS, **ATTRS)[0].kernel()  # the plain entry point compiled, the `_nt` one not yet
    _fail_vectorizing(monkeypatch)
    with pytest.raises(dequant.CompileError) as info:
        f(*ARRAYS, **ATTRS)
    _assert_compile_error(info, "kernel_nt")


def test_bad_input_is_refused_before_compiling(monkeypatch):
    """Arrays that break a rule get the rule's ValueError, never a CompileError: the rules are
    checked before anything compiles."""
    _fail_vectorizing(monkeypatch)
    f = ops.function("onnx_dequantize_linear", Runtime(1))
    with pytest.raises(ValueError, match="block_size 47 is out of the accepted range"):
        f(ARRAYS[0], ARRAYS[1], axis=1, block_size=47, output_dtype=ml_dtypes.bfloat16)


# --- 18: attributes from Python ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ops.onnx_dequantize_linear(X, np.ones(4, np.float32), axis=1 << 63), "axis must fit in a 64-bit"),
        (lambda: ops.onnx_dequantize_linear(X, np.ones(4, np.float32), axis=0.7), "axis must be an integer, got 0.7"),
        (lambda: ops.onnx_dequantize_linear(X, np.ones((4, 1), np.float32), block_size=-(1 << 64)), "block_size must fit"),
        (lambda: ops.ngraph_dequantize(X, S, np.int8(0), type=np.float32, axes=None), None),
        (lambda: ops.ngraph_dequantize(X, np.ones(4, np.float32), np.zeros(4, np.int8), type=np.float32, axes=0),
         "axes must be a set of integers, got 0"),
    ],
    ids=["axis-2^63", "axis-float", "block-size-huge", "axes-none", "axes-int"],
)
def test_attribute_errors_name_the_attribute(call, match):
    if match is None:  # axes=None is the default: empty, per-tensor
        assert np.array_equal(call(), X.astype(np.float32) * S)
        return
    with pytest.raises(ValueError, match=match):
        call()


def test_blocked_axis_of_length_zero_matches_the_reference():
    from onnx.reference import ReferenceEvaluator

    x, s = np.zeros((3, 0), np.int8), np.ones((3, 0), np.float32)
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=4)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [3, 0]),
                                            helper.make_tensor_value_info("s", TensorProto.FLOAT, [3, 0])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 0])])  # fmt: skip
    (want,) = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])).run(None, {"x": x, "s": s})
    got = ops.onnx_dequantize_linear(x, s, axis=1, block_size=4)
    assert got.shape == want.shape == (3, 0)


# --- 11, 16, 18: ONNX import ------------------------------------------------------------------------


def _model(inits, zp_name="z", opset=21, **attrs):
    node = helper.make_node("DequantizeLinear", ["x", "s", zp_name], ["y"], name="dq", **attrs)
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("n", [16, 2048], ids=["dense", "dense_resource"])
@pytest.mark.parametrize("dtype", [np.int32, ml_dtypes.float8_e4m3fn], ids=["int32", "float8"])
def test_nonzero_zero_point_is_refused_whatever_its_size(n, dtype):
    """From 1,025 elements an initializer becomes a dense_resource blob, which the verifier cannot
    read: the importer checks the rule on the values it reads itself."""
    x = np.zeros(n, dtype)
    z = np.zeros(n, dtype)
    z[-1] = 1
    inits = [numpy_helper.from_array(x, "x"), numpy_helper.from_array(np.ones(n, np.float32), "s"), numpy_helper.from_array(z, "z")]
    with pytest.raises(ValueError, match="zero_point must be absent or"):
        dequant.import_onnx(_model(inits, axis=0))


def test_import_errors_are_error_lines(tmp_path):
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    negative = tmp_path / "negative.onnx"
    t = numpy_helper.from_array(np.zeros(4, np.int8), "x")
    t.dims[:] = [-4]
    onnx.save(_model([t, numpy_helper.from_array(np.float32(1), "s"), numpy_helper.from_array(np.int8(0), "z")]), negative)
    external = tmp_path / "external.onnx"
    inits = [numpy_helper.from_array(np.zeros(4096, np.int8), "x"), numpy_helper.from_array(np.float32(1), "s"),
             numpy_helper.from_array(np.int8(0), "z")]  # fmt: skip
    onnx.save(_model(inits), external, save_as_external_data=True, location="weights.bin", size_threshold=1024)
    os.remove(tmp_path / "weights.bin")
    cases = {empty: "holds no ONNX model", negative: "negative dim", external: "cannot read the value of 'x'"}
    for path, words in cases.items():
        run = subprocess.run(["dequant-import-onnx", str(path)], capture_output=True, text=True)
        assert run.returncode == 1, (path, run.stderr)
        assert run.stderr.startswith("dequant-import-onnx: error:") and words in run.stderr, run.stderr
        assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "text, words",
    [
        ("func.func @f(%x: tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{1.0:7, 0.03:300}, {1.0, 2.0}}>>) { return }",
         "zero point 300 of a sub-channel"),
        ("#m = affine_map<(d0) -> (d0)>\nfunc.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
         "  %y = linalg.generic {indexing_maps = [#m, #m], iterator_types = [1]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {\n"
         "  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  } -> tensor<4xf32>\n  return %y : tensor<4xf32>\n}",
         "iterator_types element '1' is not a string"),
        ('func.func @f() {\n  return\n}\n{-#\n  dialect_resources: { builtin: { w: "0x08000000 }\n#-}\n',
         "string literal without a closing quote in a file-metadata block"),
        ('func.func @f() {\n  return\n}\n{-#\n  dialect_resources: { builtin: { w: "0x\\q08" } }\n#-}\n',
         "unknown escape in a string literal in a file-metadata block"),
        ("func.func @f() {\n  return\n}\n{-#\n  dialect_resources: { builtin: { w: $ } }\n#-}\n",
         "unexpected character '$' in a file-metadata block"),
        ("func.func @f() {\n  return\n}\n{-#\n  dialect_resources: { builtin: { w: @1 } }\n#-}\n",
         "'@' with no symbol name after it"),
        ("func.func @f() {\n  return\n}\n{-#\n  dialect_resources: { builtin: { w: . } }\n#-}\n",
         "'.' that is not an ellipsis"),
        # a `#-}` in a comment ends no block: the `$` after it is still inside
        ("func.func @f() {\n  return\n}\n{-#\n  // #-}\n  dialect_resources: { builtin: { w: $ } }\n#-}\n",
         "unexpected character '$' in a file-metadata block"),
    ],
)
def test_jit_refuses_text_mlir_parser_aborts_on(text, words):
    """MLIR 22's parser asserts on these (found by fuzzing); in a child process, so that a
    regression kills the child, not pytest."""
    out = _jit_in_child(text)
    assert "ValueError:" in out and words in out


def _jit_in_child(text: str) -> str:
    """What `dequant.jit(text, 'f')` printed in a child process that must exit normally: nothing,
    or the exception it raised ('ValueError: ...', else 'raised: ...')."""
    import subprocess
    import sys

    code = (f"import dequant\ntry:\n    dequant.jit({text!r}, 'f')\nexcept Exception as e:\n"
            "    print('ValueError:' if isinstance(e, ValueError) else 'raised:', e)\n")  # fmt: skip
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-500:]
    return run.stdout


@pytest.mark.parametrize(
    "text, words",
    [
        ("func.func @f() {\n  %x = $\n}\n{-#\n  dialect_resources: { builtin: { w: \"0x08000000\" } }\n#-}\n",
         "unexpected character"),  # before the block: the parser's own error
        # `{-#` in a string opens no block: the \q after it is the parser's own error
        ('func.func @f() attributes {s = "{-# \\q"} {\n  return\n}\n', "unknown escape in string literal"),
        ("func.func @f() {\n  return\n}\n// {-# $\n", None),  # nor in a comment: parsed
        # a valid escape in the block: the resource parser's own error (a blob is a plain hex string)
        ('func.func @f() {\n  return\n}\n{-#\n  dialect_resources: { builtin: { w: "0x04000000\\41" } }\n#-}\n',
         "expected hex string blob"),
    ],
)
def test_text_the_guard_lets_through(text, words):
    """A lexer error outside a file-metadata block, `{-#` in a string or a comment and a valid
    escape inside a block reach the parser, which reports its own error (no abort) or parses
    the text."""
    out = _jit_in_child(text)
    assert "file-metadata" not in out
    if words is None:
        assert out == "", out
    else:
        assert "Unable to parse" in out and words in out, out


# --- the kernels' temporaries are freed ------------------------------------------------------------


TEMPORARIES = {
    # a packed zero point unpacked (and packed x's rows viewed through a shape buffer): 64 KiB a call
    "packed_zero_point": """
        x = dequant.pack(rng.integers(-8, 8, (512, 4096)).astype(ml_dtypes.int4))
        s = rng.random((512, 128), dtype=np.float32)
        z = dequant.pack(rng.integers(-8, 8, (512, 128)).astype(ml_dtypes.int4))
        out = np.empty((512, 4096), np.float32)
        call = ops.bind(ops.onnx_dequantize_linear, x, s, z, axis=1, block_size=32, out=out)
    """,
    # packed rows of an odd length, unpacked into a byte each first (dq-to-linalg's flat_fields):
    # 256 KiB a call
    "packed_rows_not_whole_bytes": """
        x = dequant.pack(rng.integers(-8, 8, (64, 4095)).astype(ml_dtypes.int4))
        s = rng.random(4095, dtype=np.float32)
        out = np.empty((64, 4095), np.float32)
        call = ops.bind(ops.onnx_dequantize_linear, x, s, axis=1, out=out)
    """,
    # an f16 per-axis scale widened to f32 (dq-widen-scales-once): 64 KiB a call
    "widened_scale": """
        x = rng.integers(-128, 128, (64, 16384)).astype(np.int8)
        s = rng.random(16384, dtype=np.float32).astype(np.float16)
        out = np.empty((64, 16384), np.float16)
        call = ops.bind(ops.onnx_dequantize_linear, x, s, axis=1, out=out)
    """,
}


@pytest.mark.parametrize("case", sorted(TEMPORARIES))
def test_temporaries_are_freed(case):
    """A kernel's temporaries (a packed zero point unpacked each call, packed x's rows viewed
    through a shape buffer or unpacked when they are not whole bytes, a 16-bit scale widened once
    per call) are freed before it returns:
    bufferization allocated the first two and nothing freed them (64 KiB leaked per call until
    dq-free-temporaries); dq-widen-scales-once frees its own. Run in a child process, which reads
    its own resident size (Linux /proc) before and after 2000 bound calls."""
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("reads the resident size from /proc/self/statm (Linux)")
    r = run_isolated(
        """
        import os
        import ml_dtypes, numpy as np, dequant
        from dequant import ops
        rng = np.random.default_rng(0)
        """
        + TEMPORARIES[case]
        + """
        def resident():
            return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        call()
        before = resident()
        for _ in range(2000):
            call()
        print((resident() - before) // 2**20)
        """
    )
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) < 16, f"resident size grew by {r.stdout.split()[-1]} MiB over 2000 calls"
