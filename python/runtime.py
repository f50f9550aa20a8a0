"""Runtime state of the numpy API, in objects: compiled kernels, plans, prepared calls, threads.

A `Runtime` owns a bounded cache of compiled kernels, a bounded cache of plans (one per op,
dtypes, shapes and attributes), a bounded cache of prepared calls (one per op, dtypes, shapes,
strides and attributes as given) and a `WorkerPool`. `dequant.ops` uses `DEFAULT`; a program may
make its own `Runtime` (e.g. with another thread count) and call `dequant.ops.function(name, runtime)`.

How a call chooses its entry point (non-temporal stores or not) and its threads, on the bytes it
moves: docs/performance.md, "One decision per call" and "Thread policy" (the one description).
The pool is safe across `fork()` (a child makes new workers on first use), across
`set_num_threads` while calls run (it keeps its workers; a call uses as many as it needs) and
across Python threads calling at once (one call at a time has the workers; another runs its
ranges in its own thread).
"""

from __future__ import annotations

import _thread
import ctypes
import operator
import os
import threading
from collections import OrderedDict

from . import spinwait

# Bounds of the caches. A compiled kernel is an ExecutionEngine, measured at ~1 MiB (1.9 MiB with
# the second engine of its non-temporal entry point); plans and prepared calls hold theirs weakly,
# so the kernel cache alone bounds them: 32 kernels stay under 64 MiB whatever the inputs. A plan
# and its prepared call take ~8 KB (checks, shapes, prebuilt call arguments).
KERNEL_CACHE_SIZE = 32
PLAN_CACHE_SIZE = 1024
CALL_CACHE_SIZE = 1024
# Bytes (read + written) each thread must move for a call to be split: docs/performance.md, "Thread policy".
MIN_PARALLEL = 2 << 20
# Bytes (read + written) from which a call takes the non-temporal entry point: MEASURED
# (docs/performance.md).
NONTEMPORAL_MIN_BYTES = 24 << 20
# How long a worker spins for its next job after one (then it sleeps on a lock): calls that follow
# each other within it find the worker awake (docs/performance.md, "Workers that spin").
SPIN_SECONDS = 100e-6


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
        # get(key): the entry of `key` or None; TypeError if `key` is unhashable. The dict's own
        # method, so that a lookup adds no Python frame to a cached call.
        self.get = self._entries.get

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


class _Worker:
    """A thread that runs one job at a time in native code (`spinwait`): it polls its slot for
    `spin` polls after each job, then sleeps on a lock until the next job wakes it. A job is a
    kernel's packed entry and argument array (`native`), or a Python callable, run through a ctypes
    callback (the pool's tests, and any caller without a kernel)."""

    def __init__(self, helpers, spin: int):
        self.slot = helpers.slot()
        self.spin = spin  # polls after a job before sleeping: the pool's `spin_seconds`
        self._wake = _thread.allocate_lock()
        self._wake.acquire()
        self._python = None  # (the ctypes callback, the exceptions it caught) of a Python job
        self._kernel = None  # the kernel of a native job: its failed checks are this thread's
        self.thread = threading.Thread(target=self._loop, name="dequant", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        slot, wake = self.slot, self._wake
        while slot.work(self.spin) != spinwait.STOP:
            wake.acquire()  # asleep: `post` found the slot SLEEPING and releases this lock

    def start(self, job) -> None:
        """Post `job`: its `native` (function address, packed arguments, kernel) or a Python callable."""
        native = getattr(job, "native", None)
        if native is None:
            errors: list = []

            def run(_args, job=job, errors=errors):
                try:
                    job()
                except BaseException as e:  # noqa: BLE001 - raised in the caller by `wait`
                    errors.append(e)

            callback = _PYTHON_JOB(run)
            self._python = (callback, errors)
            native = (ctypes.cast(callback, ctypes.c_void_p).value, 0, None)
        self._kernel = native[2]
        words = self.slot.words
        words[spinwait.FUNCTION], words[spinwait.ARGUMENTS] = native[0], native[1]
        self._post(spinwait.POSTED)

    def _post(self, what: int) -> None:
        if self.slot.post(what) == spinwait.SLEEPING:
            self._wake.release()

    def take_back(self) -> bool:
        """Whether the job posted was not started and is the caller's to run (then the worker
        never runs it)."""
        if self.slot.take(0):
            self._python = self._kernel = None
            return True
        return False

    def wait(self) -> BaseException | None:
        """Wait until the job ran (polling, yielding the core between rounds of `spin` polls);
        the exception a Python job raised, or the ValueError of the checks a kernel failed in this
        worker's thread, if any."""
        wait, spin = self.slot.wait, self.spin
        try:
            while not wait(spin):
                os.sched_yield()
        except BaseException:  # e.g. KeyboardInterrupt: the job still writes the caller's memory
            while not wait(spin):
                pass
            raise
        if self._python is not None:
            errors, self._python = self._python[1], None
            return errors[0] if errors else None
        kernel, self._kernel = self._kernel, None
        if kernel is not None and kernel.pending:
            try:
                kernel.raise_failures(self.thread.ident)
            except ValueError as e:
                return e
        return None

    def stop(self, join: bool = True) -> None:
        self._post(spinwait.STOP)
        if join:
            self.thread.join()


_PYTHON_JOB = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class WorkerPool:
    """Threads running all but the first of a call's native calls (the caller runs the first).

    Each worker waits for its job spinning in native code for `spin_seconds` after its last one,
    then sleeps on a lock (docs/performance.md, "Workers that spin"). One call at a time uses the
    workers; a call made while they are busy (from another Python thread) runs its ranges one
    after the other in its own thread. After a fork, a child makes new workers at its first split
    call (the parent's threads do not exist in it)."""

    def __init__(self, threads: int, spin_seconds: float = SPIN_SECONDS):
        self._threads = threads
        self._workers: list = []
        self._pid = os.getpid()
        self._lock = threading.Lock()  # guards the workers: one split call at a time
        self._helpers = None  # spinwait.Helpers, compiled at the first split call
        self.spin_seconds = spin_seconds

    @property
    def threads(self) -> int:
        return self._threads

    def __del__(self):
        # the workers' threads do not refer to the pool: stop them with it (a runtime dropped)
        if getattr(self, "_pid", None) == os.getpid():
            for w in self._workers:
                w.stop(join=False)

    def resize(self, threads: int) -> None:
        """Run later calls over `threads`. Workers beyond the new count are kept, asleep once
        their spin ends (a sleeping worker costs no CPU), for when the count grows again: making
        a worker costs its first call more than the call itself, which a program switching between
        one thread and more (the benchmark does, every round) paid at every switch
        (docs/performance.md#thread-policy)."""
        self._threads = threads

    def stop(self) -> None:
        """Stop every worker once idle (later split calls make new ones)."""
        if self._pid == os.getpid() and self._lock.acquire(blocking=False):
            try:
                while self._workers:
                    self._workers.pop().stop()
            finally:
                self._lock.release()

    def _polls(self) -> int:
        if self._helpers is None:
            self._helpers = spinwait.Helpers()
        return max(1, round(self.spin_seconds * self._helpers.polls_per_second))

    def run(self, calls: list) -> int:
        """Run every call; the calling thread runs the first while workers run the others. A
        call with a `native` attribute, (function address, packed argument array, kernel), is run
        by the worker natively; its kernel's failed checks are raised here. Returns the calls
        the caller ran besides the first: those no worker had started when the first was done
        (all of them when another thread's call had the workers)."""
        if len(calls) == 1:
            calls[0]()
            return 0
        if self._pid != os.getpid():  # a forked child: the parent's threads and lock states are gone
            self._workers, self._lock, self._pid = [], threading.Lock(), os.getpid()
        if not self._lock.acquire(blocking=False):  # another thread's call has the workers
            for c in calls:
                c()
            return len(calls) - 1
        try:
            spin = self._polls()
            while len(self._workers) < len(calls) - 1:
                self._workers.append(_Worker(self._helpers, spin))
            workers = self._workers[: len(calls) - 1]
            for w, c in zip(workers, calls[1:]):
                w.spin = spin
                w.start(c)
            errors = []
            try:
                calls[0]()
            except BaseException as e:  # noqa: BLE001 - raised once every range has run
                errors.append(e)
            started = []
            for w, c in zip(workers, calls[1:]):  # a job no worker has started: the caller runs it
                if w.take_back():
                    try:
                        c()
                    except BaseException as e:  # noqa: BLE001 - as above
                        errors.append(e)
                else:
                    started.append(w)
            for w in started:
                error = w.wait()
                if error is not None:
                    errors.append(error)
            if errors:
                raise errors[0]
            return len(calls) - 1 - len(started)
        finally:
            self._lock.release()


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

    def settings(self) -> tuple:
        """What a call's native calls depend on besides its arrays: (threads, min_parallel,
        nontemporal_min_bytes)."""
        return self.pool.threads, self._min_parallel, self._nontemporal_min_bytes

    def parallel_parts(self, nbytes: int) -> int:
        """Row ranges (threads) for a call moving `nbytes`: as many as the threads, each moving at
        least `min_parallel` bytes; 1 below twice that (the static cost model)."""
        return max(1, min(self.pool.threads, nbytes // self._min_parallel))

    def set_num_threads(self, n: int | None = None) -> None:
        """Threads for large arrays: a positive integer, or None for the available cores."""
        self.pool.resize(thread_count(n))
        self.generation += 1

    def get_num_threads(self) -> int:
        """The number of threads large calls are split over."""
        return self.pool.threads


DEFAULT = Runtime()
