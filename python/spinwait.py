"""Native spin-waits of the worker pool: a worker that waits for its job on an atomic flag.

A worker of `runtime.WorkerPool` waits in native code, without the GIL: it polls a *slot* (one
cache line: the state word, then a kernel's packed entry point and its packed argument array) with
a pause instruction between polls, for a budget of polls, and runs a posted job itself. Only when
the budget runs out does it go to sleep on a Python lock: waking a thread that sleeps costs a call
far more than a spinning worker takes to start its range (docs/performance.md#workers-that-spin).

States of a slot (word 0), and who moves them:
- IDLE -> POSTED: the caller posts a job (`post`, a compare-and-swap);
- POSTED -> RUNNING: the worker takes the job (a compare-and-swap), runs it, then RUNNING -> DONE;
- POSTED -> IDLE: the caller takes its job back (`take`, a compare-and-swap) when it has run its
  own range and the worker has not started: a worker that runs late (its core busy with another
  process) then costs the call no more than running both ranges in the caller;
- DONE -> IDLE: the caller, seeing DONE (`wait`);
- IDLE -> SLEEPING: the worker, when its budget runs out (a compare-and-swap: if the caller
  posted first, the worker runs the job instead);
- SLEEPING -> POSTED or STOP: the caller, who must then wake the worker's lock (`post` returns
  SLEEPING to say so);
- IDLE -> STOP: the caller stopping an idle worker.

The helpers are built with typed builders, compiled once per pool with an ExecutionEngine, and
called through ctypes (which releases the GIL) on argument arrays made once per slot.
"""

from __future__ import annotations

import ctypes
import platform
import time

from mlir import ir
from mlir.dialects import arith, cf, func, llvm
from mlir.execution_engine import ExecutionEngine

from dequant import context

from .pipeline import build

IDLE, POSTED, DONE, SLEEPING, STOP, RUNNING = 0, 1, 2, 3, 4, 5
SLOT_WORDS = 8  # one 64-byte cache line: no other data shares the line the worker polls
STATE, FUNCTION, ARGUMENTS = 0, 1, 2  # words of a slot
YIELD_POLLS = 1024  # a worker's polls between two sched_yield calls (docs/performance.md#workers-that-spin)
# The pause between polls, per architecture: it tells the core this is a spin-wait (it saves
# power and frees the sibling hyper-thread); elsewhere the loop polls without one.
PAUSE = {"x86_64": ("llvm.x86.sse2.pause", None), "AMD64": ("llvm.x86.sse2.pause", None), "aarch64": ("llvm.aarch64.hint", 1), "arm64": ("llvm.aarch64.hint", 1)}  # fmt: skip


def _i64(v: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), v)


def _word(slot: ir.Value, index: int) -> ir.Value:
    """The address of word `index` of a slot."""
    if index == 0:
        return slot
    i64 = ir.IntegerType.get_signless(64)
    return llvm.getelementptr(llvm.PointerType.get(), slot, [], [index], i64, 0)


def _load(slot: ir.Value, index: int, ordering=None) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    if ordering is None:
        return llvm.load(i64, _word(slot, index), alignment=8)
    return llvm.load(i64, _word(slot, index), alignment=8, ordering=ordering)


def _store(value: ir.Value, slot: ir.Value, index: int) -> None:
    llvm.store(value, _word(slot, index), alignment=8, ordering=llvm.AtomicOrdering.release)


def _cas(slot: ir.Value, expected: int, new: ir.Value | int) -> tuple:
    """(the state found, whether it was `expected` and is now `new`): a sequentially consistent
    compare-and-swap on the state word."""
    new = _i64(new) if isinstance(new, int) else new
    pair = llvm.cmpxchg(slot, _i64(expected), new, llvm.AtomicOrdering.seq_cst, llvm.AtomicOrdering.seq_cst)
    i64, i1 = ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(1)
    return llvm.extractvalue(i64, pair, [0]), llvm.extractvalue(i1, pair, [1])


def _pause(machine: str) -> None:
    found = PAUSE.get(machine)
    if found is None:
        return
    name, operand = found
    args = [] if operand is None else [arith.constant(ir.IntegerType.get_signless(32), operand)]
    llvm.call_intrinsic(None, name, args, [], [])


def _equal(a: ir.Value, b: int) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.eq, a, _i64(b))


def _countdown(poll: ir.Block, left: ir.Value, out: ir.Block, machine: str) -> None:
    """Pause, then poll again with one poll less, or branch to `out` once none is left."""
    _pause(machine)
    fewer = arith.subi(left, _i64(1))
    cf.cond_br(_equal(fewer, 0), [], [fewer], out, poll)


def _function(name: str, inputs: list):
    i64 = ir.IntegerType.get_signless(64)
    f = func.FuncOp(name, ir.FunctionType.get(inputs, [i64]))
    return f, f.add_entry_block()


def _worker(machine: str) -> None:
    """worker(slot, budget) -> SLEEPING or STOP: poll for a job, run each, until `budget` polls
    in a row found none (then IDLE -> SLEEPING) or the caller posted STOP. Every YIELD_POLLS
    polls it calls sched_yield: a worker sharing its core with the caller (the other cores busy)
    then hands it the core within microseconds instead of holding it for a time slice."""
    ptr, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(64)
    f, entry = _function("dq_spin_worker", [ptr, i64])
    slot, budget = entry.arguments
    region = f.body
    poll = region.blocks.append(i64)
    idle, timeout, run, finish = (region.blocks.append() for _ in range(4))
    left = poll.arguments[0]
    with ir.InsertionPoint(entry):
        cf.br([budget], poll)
    with ir.InsertionPoint(poll):
        state = _load(slot, STATE, llvm.AtomicOrdering.acquire)
        other, claim = region.blocks.append(), region.blocks.append()
        cf.cond_br(_equal(state, POSTED), [], [], claim, other)
    with ir.InsertionPoint(claim):  # the caller may take the job back first: then poll on
        _, claimed = _cas(slot, POSTED, RUNNING)
        cf.cond_br(claimed, [], [budget], run, poll)
    with ir.InsertionPoint(other):
        cf.cond_br(_equal(state, STOP), [], [], finish, idle)
    with ir.InsertionPoint(idle):  # every YIELD_POLLS polls, give the core to a thread waiting for it
        yielding, spin = region.blocks.append(), region.blocks.append()
        due = _equal(arith.andi(left, _i64(YIELD_POLLS - 1)), 0)
        cf.cond_br(due, [], [], yielding, spin)
    with ir.InsertionPoint(yielding):
        func.CallOp([ir.IntegerType.get_signless(32)], ir.FlatSymbolRefAttr.get("sched_yield"), [])
        cf.br([], spin)
    with ir.InsertionPoint(spin):
        _countdown(poll, left, timeout, machine)
    with ir.InsertionPoint(timeout):
        _, slept = _cas(slot, IDLE, SLEEPING)
        asleep = region.blocks.append()
        cf.cond_br(slept, [], [budget], asleep, poll)  # not IDLE: a job (or STOP, or DONE) came
    with ir.InsertionPoint(asleep):
        func.ReturnOp([_i64(SLEEPING)])
    with ir.InsertionPoint(run):
        fn = llvm.inttoptr(ptr, _load(slot, FUNCTION))
        args = llvm.inttoptr(ptr, _load(slot, ARGUMENTS))
        llvm.call(None, [fn, args], [], [])  # the kernel's packed entry: void(void **args)
        _store(_i64(DONE), slot, STATE)
        cf.br([budget], poll)
    with ir.InsertionPoint(finish):
        func.ReturnOp([_i64(STOP)])


def _post() -> None:
    """post(slot, what) -> the state found: POSTED or STOP into an IDLE or SLEEPING slot (the
    caller wakes the worker's lock when SLEEPING comes back)."""
    ptr, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(64)
    f, entry = _function("dq_spin_post", [ptr, i64])
    slot, what = entry.arguments
    region = f.body
    asleep, done = region.blocks.append(), region.blocks.append()
    with ir.InsertionPoint(entry):
        found, posted = _cas(slot, IDLE, what)
        cf.cond_br(posted, [], [], done, asleep)
    with ir.InsertionPoint(asleep):  # the worker went to sleep: it reads the state when woken
        _store(what, slot, STATE)
        cf.br([], done)
    with ir.InsertionPoint(done):
        func.ReturnOp([found])


def _take() -> None:
    """take(slot, unused) -> 1 if the posted job was not started and is the caller's again
    (POSTED -> IDLE), else 0 (the worker runs or ran it)."""
    ptr, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(64)
    f, entry = _function("dq_spin_take", [ptr, i64])
    slot = entry.arguments[0]
    with ir.InsertionPoint(entry):
        _, taken = _cas(slot, POSTED, IDLE)
        func.ReturnOp([arith.extui(i64, taken)])


def _wait(machine: str) -> None:
    """wait(slot, budget) -> 1 once the job is DONE (the slot is then IDLE again), 0 after
    `budget` polls that found it running."""
    ptr, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(64)
    f, entry = _function("dq_spin_wait", [ptr, i64])
    slot, budget = entry.arguments
    region = f.body
    poll = region.blocks.append(i64)
    idle, finished, timeout = (region.blocks.append() for _ in range(3))
    with ir.InsertionPoint(entry):
        cf.br([budget], poll)
    with ir.InsertionPoint(poll):
        state = _load(slot, STATE, llvm.AtomicOrdering.acquire)
        cf.cond_br(_equal(state, DONE), [], [], finished, idle)
    with ir.InsertionPoint(idle):
        _countdown(poll, poll.arguments[0], timeout, machine)
    with ir.InsertionPoint(finished):
        _store(_i64(IDLE), slot, STATE)
        func.ReturnOp([_i64(1)])
    with ir.InsertionPoint(timeout):
        func.ReturnOp([_i64(0)])


def module(machine: str | None = None) -> ir.Module:
    """The helpers as a func/cf/llvm module (in the current context)."""
    machine = platform.machine() if machine is None else machine
    with ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            func.FuncOp("sched_yield", ir.FunctionType.get([], [ir.IntegerType.get_signless(32)]), visibility="private")
            _worker(machine)
            _post()
            _take()
            _wait(machine)
    return m


_CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # an engine's packed wrapper: void(void **args)


class _Packed:
    """A packed native call of two int64 arguments and an int64 result, its argument array made
    once: each call sets the cells and calls."""

    def __init__(self, engine: ExecutionEngine, name: str, first: int):
        address = engine.raw_lookup(name)
        if not address:
            raise RuntimeError(f"no packed entry '{name}' in the spin-wait helpers")
        self._fn = _CALL(address)
        self._cells = (ctypes.c_int64 * 3)(first, 0, 0)  # first argument (the slot), second, result
        base = ctypes.addressof(self._cells)
        self._args = (ctypes.c_void_p * 3)(base, base + 8, base + 16)
        self._address = ctypes.addressof(self._args)

    def __call__(self, second: int) -> int:
        cells = self._cells
        cells[1] = second
        self._fn(self._address)
        return cells[2]


class Helpers:
    """The compiled helpers (one engine) and the polls a second lasts (measured when built)."""

    def __init__(self):
        self._context = context()
        with self._context:
            m = module()
            build("convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts", self._context).run(m.operation)
            self.engine = ExecutionEngine(m, opt_level=2)
        self._module = m
        self.polls_per_second = self._calibrate()

    def slot(self) -> "Slot":
        return Slot(self)

    def _calibrate(self) -> float:
        """Polls per second of `wait` on a job that never finishes (the fastest of five runs of
        2,000 polls): what turns a budget in seconds into polls on this core."""
        s = Slot(self)
        s.words[STATE] = POSTED
        n, best = 2000, float("inf")
        for _ in range(5):
            start = time.perf_counter()
            s.wait(n)
            best = min(best, time.perf_counter() - start)
        return n / max(best, 1e-9)


class Slot:
    """One worker's slot: a cache line of int64 words and the helpers' calls bound to it."""

    def __init__(self, helpers: Helpers):
        self._buffer = (ctypes.c_int64 * (2 * SLOT_WORDS))()  # a line's worth of slack to align
        base = ctypes.addressof(self._buffer)
        self.address = -(-base // 64) * 64
        first = (self.address - base) // 8
        self.words = memoryview(self._buffer).cast("B").cast("q")[first : first + SLOT_WORDS]
        self.helpers = helpers  # keeps the engine (the code the worker runs) alive
        self.work = _Packed(helpers.engine, "dq_spin_worker", self.address)
        self.post = _Packed(helpers.engine, "dq_spin_post", self.address)
        self.take = _Packed(helpers.engine, "dq_spin_take", self.address)
        self.wait = _Packed(helpers.engine, "dq_spin_wait", self.address)
