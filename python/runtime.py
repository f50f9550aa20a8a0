"""Runtime state of the numpy API, in objects: compiled kernels, plans, prepared calls, threads.

A `Runtime` owns a bounded cache of compiled kernels, a bounded cache of plans (one per op,
dtypes, shapes and attributes), a bounded cache of prepared calls (one per op, dtypes, shapes,
strides and attributes as given) and a `WorkerPool`. `dequant.ops` uses `DEFAULT`; a program may
make its own `Runtime` (e.g. with another thread count) and call `runtime.function(name)`.

Each call is decided whole, on the bytes it moves (read + written), before anything is split
(docs/performance.md):
- stores: from `nontemporal_min_bytes` the kernel's `_nt` entry point (non-temporal stores, no
  read for ownership, the cache left to other data), below it the entry storing through the cache;
- threads: `parallel_parts(bytes, seconds)` row ranges of dim 0, one per thread, at most the
  thread count: as many as give each range at least `min_parallel` bytes, or, if more, as many as
  the call's measured single-thread time pays for (each added thread saving `split_seconds`; a
  call from `PROBE_MIN_BYTES` is timed on one thread for its first `PROBES` calls when its bytes
  alone would not split it over every thread); the calling thread runs the first range, the
  pool the others, each as one native call (ctypes releases the GIL). The pool is safe across
  `fork()` (a child re-creates its threads on first use) and across `set_num_threads` while calls
  run (a call submits its ranges under a lock; a replaced executor finishes what it was given).
"""

from __future__ import annotations

import operator
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

# Bounds of the caches. A compiled kernel holds an ExecutionEngine with its module, measured at
# ~3.3 MiB: 32 kernels stay near 100 MiB whatever the inputs. A plan is small (checks, shapes,
# prebuilt call arguments), a prepared call smaller.
KERNEL_CACHE_SIZE = 32
PLAN_CACHE_SIZE = 1024
CALL_CACHE_SIZE = 1024
# Bytes (read + written) each thread must move for a call to be split: MEASURED (docs/performance.md).
MIN_PARALLEL = 8 << 20
# Bytes (read + written) from which a call takes the non-temporal entry point: MEASURED
# (docs/performance.md).
NONTEMPORAL_MIN_BYTES = 24 << 20
# Single-thread time each added thread must save for a call to be split by its measured time: the
# pool's round trip here is 45-70 us, and calls of 250 us or more ran faster split in two, those
# below 150 us slower: MEASURED (docs/performance.md).
SPLIT_SECONDS = 125e-6
# A call whose split its bytes do not settle is timed on one thread this many times first (the
# fastest counts), from this many bytes (read + written): below, no call took 250 us here.
PROBES = 3
PROBE_MIN_BYTES = 2 << 20


class LRUCache:
    """A thread-safe mapping of bounded size; the least recently used entry goes first."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key, value):
        """Store `value` unless another thread stored one first; the value kept."""
        with self._lock:
            kept = self._entries.setdefault(key, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return kept

    def __len__(self) -> int:
        return len(self._entries)

    def values(self) -> list:
        with self._lock:
            return list(self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class CallCache:
    """Prepared calls by key, read without a lock (one dict lookup on the hot path) and bounded
    (the oldest entry goes first when full)."""

    def __init__(self, size: int):
        self.size = size
        self._entries: dict = {}
        self._lock = threading.Lock()

    def get(self, key):
        """The entry of `key` or None; TypeError if `key` is unhashable."""
        return self._entries.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            while len(self._entries) >= self.size:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def thread_count(n) -> int:
    """`n` as a thread count (None: the available cores); TypeError/ValueError for anything else."""
    if n is None:
        return available_cores()
    if isinstance(n, bool):
        raise TypeError(f"the thread count must be an integer, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"the thread count must be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"the thread count must be at least 1, got {n}")
    return n


class WorkerPool:
    """Threads running all but the first of a call's native calls."""

    def __init__(self, threads: int):
        self._threads = threads
        self._executor: ThreadPoolExecutor | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()

    @property
    def threads(self) -> int:
        return self._threads

    def resize(self, threads: int) -> None:
        with self._lock:
            old, self._executor, self._threads = self._executor, None, threads
        if old is not None and self._pid == os.getpid():
            old.shutdown(wait=False)  # its pending work still runs

    def run(self, calls: list) -> None:
        """Run every call; the calling thread runs the first while the pool runs the others."""
        if len(calls) == 1:
            calls[0]()
            return
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's threads do not exist here
                self._executor, self._pid = None, os.getpid()
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=max(1, self._threads - 1), thread_name_prefix="dequant")
            pending = [self._executor.submit(c) for c in calls[1:]]
        try:
            calls[0]()
        finally:
            for p in pending:
                p.result()


class Runtime:
    """Kernels, plans and threads of the numpy API (see the module docstring)."""

    def __init__(self, threads: int | None = None, kernel_cache_size: int = KERNEL_CACHE_SIZE,
                 plan_cache_size: int = PLAN_CACHE_SIZE, call_cache_size: int = CALL_CACHE_SIZE):  # fmt: skip
        self.kernels = LRUCache(kernel_cache_size)
        self.plans = LRUCache(plan_cache_size)
        self.calls = CallCache(call_cache_size)
        self.pool = WorkerPool(thread_count(threads))
        self.generation = 0  # changes with every setting below: prepared calls then re-plan their split
        self._min_parallel = MIN_PARALLEL
        self._nontemporal_min_bytes = NONTEMPORAL_MIN_BYTES
        self._split_seconds = SPLIT_SECONDS

    @property
    def min_parallel(self) -> int:
        """Bytes (read + written) each thread's row range must move for a call to be split."""
        return self._min_parallel

    @min_parallel.setter
    def min_parallel(self, n: int) -> None:
        self._min_parallel = max(1, int(n))
        self.generation += 1

    @property
    def nontemporal_min_bytes(self) -> int:
        """Bytes (read + written) from which a call takes the non-temporal entry point."""
        return self._nontemporal_min_bytes

    @nontemporal_min_bytes.setter
    def nontemporal_min_bytes(self, n: int) -> None:
        self._nontemporal_min_bytes = max(0, int(n))
        self.generation += 1

    @property
    def split_seconds(self) -> float:
        """Single-thread time each added thread must save for a call to be split by its time."""
        return self._split_seconds

    @split_seconds.setter
    def split_seconds(self, seconds: float) -> None:
        self._split_seconds = max(0.0, float(seconds))
        self.generation += 1

    def settings(self) -> tuple:
        """What a call's native calls depend on besides its arrays: (threads, min_parallel,
        nontemporal_min_bytes, split_seconds)."""
        return self.pool.threads, self._min_parallel, self._nontemporal_min_bytes, self._split_seconds

    def parallel_parts(self, nbytes: int, seconds: float | None = None) -> int:
        """Row ranges (threads) for a call moving `nbytes` that took `seconds` on one thread (None:
        not timed): at most the threads; as many as give each at least `min_parallel` bytes, or,
        if more, the largest p whose p-th range saves `split_seconds` of the time
        (seconds / (p - 1) - seconds / p = seconds / (p * (p - 1)) >= split_seconds)."""
        threads = self.pool.threads
        parts = nbytes // self._min_parallel
        if seconds is not None:
            p = 1
            while p < threads and seconds >= self._split_seconds * p * (p + 1):
                p += 1
            parts = max(parts, p)
        return max(1, min(threads, parts))

    def times_calls(self, nbytes: int) -> bool:
        """Whether a call moving `nbytes` is timed on one thread first (its split chosen by its
        time): from PROBE_MIN_BYTES, when its bytes do not already split it over every thread."""
        return self.pool.threads > 1 and nbytes >= PROBE_MIN_BYTES and nbytes // self._min_parallel < self.pool.threads

    def set_num_threads(self, n: int | None = None) -> None:
        """Threads for large arrays: a positive integer, or None for the available cores."""
        self.pool.resize(thread_count(n))
        self.generation += 1

    def get_num_threads(self) -> int:
        """The number of threads large calls are split over."""
        return self.pool.threads

    def function(self, name: str):
        """The numpy function of spec op `name` (e.g. "onnx_dequantize_linear") on this runtime."""
        from .ops import OpFunction, spec_op

        return OpFunction(spec_op(name), self)


DEFAULT = Runtime()
