"""The run-time side of the hook: counters, turning hot functions native, the records
behind the report.

Counters. ``builtins.__cuvil_bc__`` maps each counted function's key to an iterator
that its counter advances with ``next`` (see `decode/counting.py`): for ``key`` (one
tick a call) an `itertools` chain that yields None `threshold` times and then reaches a
`_Trigger`; for ``key@loop`` (one tick a loop iteration) the same with
`loop_threshold`. Both are C iterators, so a tick costs a dict lookup and a C call.

Hot. The trigger runs once: it replaces both counters by cheap ones that never trigger
again, notes the argument values of the call (the frame's parameters) and compiles,
on a background thread unless ``sync``. Compiling finds the function objects that run
this code (`gc.get_referrers`), gives each a `Dispatcher` over a copy of itself, and
compiles the observed signature. When that works, the function's ``__code__`` becomes a
trampoline with the same parameters that calls the dispatcher, so the function keeps
its identity, its defaults and any decorator already wrapped around it; other argument
types compile lazily, like `cuvil_bc.compile`, and unsupported ones run the copy (the
original code). When it does not, the function stays as it is and the report says why.
"""

from __future__ import annotations

import _thread
import builtins
import gc
import itertools
import operator
import os
import queue
import sys
import types
import warnings
from typing import Any, Sequence

from .. import originals
from ..counters import TABLE, TICK
from .options import Options
from .rewrite import FunctionInfo

#: sys.setswitchinterval while the background thread compiles (CPython's default: 5 ms).
COMPILE_SWITCH_INTERVAL = 0.0002

NATIVE = "__cuvil_bc_native__"  # builtins: key -> the dispatcher's function, for trampolines


class Record:
    """What the hook knows of one counted (or rejected) function."""

    def __init__(self, info: FunctionInfo) -> None:
        self.info = info
        # Calls through the counter: while cold, those taken from `cold` (an
        # itertools.repeat of `threshold` Nones: no int is made per call); after the
        # trigger, the count of `calls`.
        self.cold: Any = None
        self.threshold = 0
        self.calls: Any = None
        self.status = "interpreted"  # interpreted | native | unsupported
        self.reason = ""
        self.calls_before_native = 0
        self.dispatchers: list[Any] = []

    def calls_counted(self) -> int:
        cold = self.threshold - operator.length_hint(self.cold) if self.cold is not None else 0
        return cold + (int(repr(self.calls)[6:-1]) if self.calls is not None else 0)

    def row(self) -> dict[str, Any]:
        native = sum(int(d.stats["native_calls"]) for d in self.dispatchers)
        interpreted = sum(int(d.stats["interpreted_calls"]) for d in self.dispatchers)
        compile_ms = 1000.0 * sum(float(d.stats["compile_seconds"]) for d in self.dispatchers)
        before = self.calls_before_native if self.dispatchers else self.calls_counted()
        status, reason = self.status, self.reason
        if status == "native" and not any(d.signatures for d in self.dispatchers):
            # Swapped to the dispatcher, but no signature compiled (yet): say why not.
            failures = [f for d in self.dispatchers for f in d._failed.values()]
            status, reason = ("unsupported", failures[0]) if failures else ("interpreted", "")
        return {
            "module": self.info.module,
            "qualname": self.info.qualname,
            "status": status,
            "reason": reason,
            "calls_native": native,
            "calls_interpreted": before + interpreted,
            "compile_ms": round(compile_ms, 3),
        }


class Runtime:
    """The process's hook state (one instance: `RUNTIME`)."""

    def __init__(self) -> None:
        self.options = Options()
        self.records: dict[str, Record] = {}  # candidates
        #: Per module: its source and the functions that are not candidates (None: in
        #: the cache's report file). Only the report looks at them.
        self.rejected: list[tuple[str, list[tuple[Any, ...]] | None]] = []
        self.jobs: "queue.SimpleQueue[tuple[Record, types.CodeType, tuple[Any, ...] | None]]" = queue.SimpleQueue()
        self.worker_started = False
        self.lock = _thread.allocate_lock()
        self.warned: set[str] = set()
        if hasattr(os, "register_at_fork"):  # a forked child has no worker thread
            os.register_at_fork(after_in_child=self._forget_worker)
        self.table: dict[str, Any] = builtins.__dict__.setdefault(TABLE, {})
        self.native: dict[str, Any] = builtins.__dict__.setdefault(NATIVE, {})
        builtins.__dict__.setdefault(TICK, next)

    def _forget_worker(self) -> None:
        self.worker_started = False
        self.jobs = queue.SimpleQueue()
        self.lock = _thread.allocate_lock()

    def warn(self, message: str) -> None:
        """One warning per distinct message: the program goes on."""
        if message not in self.warned:
            self.warned.add(message)
            warnings.warn(f"cuvil_bc: {message}", RuntimeWarning, stacklevel=2)

    # -- counters ---------------------------------------------------------------------

    def register(self, candidates: Sequence[tuple[Any, ...]], source: str, rejected: list[Any] | None = None) -> None:
        """Set up the counters of a module's candidate functions (before its code runs):
        `FunctionInfo`s, or from the cache the same fields as plain tuples. `rejected`:
        the module's other functions, for the report (None: in the cache's report file)."""
        with self.lock:
            self.rejected.append((source, rejected))
            for fields in candidates:
                key = fields[0]
                if key in self.records and key in self.table:
                    continue  # the module is imported again (importlib.reload): keep counting
                record = Record(FunctionInfo(*fields))
                self.records[key] = record
                record.threshold = self.options.threshold
                record.cold = itertools.repeat(None, record.threshold)
                self.table[key] = itertools.chain(record.cold, _Trigger(self, record, by_call=True))
                loop = itertools.repeat(None, self.options.loop_threshold)
                self.table[key + "@loop"] = itertools.chain(loop, _Trigger(self, record, by_call=False))

    def on_hot(self, record: Record, frame: types.FrameType, by_call: bool) -> None:
        key = record.info.key
        if record.calls is not None:
            return  # the other counter got there first
        record.calls = itertools.count(1 if by_call else 0)  # (this call,) and later ones
        self.table[key] = record.calls
        self.table[key + "@loop"] = itertools.repeat(None)
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount]
        f_locals = frame.f_locals
        args: tuple[Any, ...] | None = tuple(f_locals[n] for n in names if n in f_locals)
        if len(args) != len(names):  # type: ignore[arg-type]
            args = None  # a parameter was deleted: compile lazily, on the next call
        job = (record, code, args)
        if self.options.sync:
            self.compile(*job)
            return
        if not self.worker_started:
            # The first time, load the compiler here. Imported from the worker, its
            # hundreds of file-system calls would each wait for this busy thread to
            # hand the GIL back (up to a switch interval each): seconds, not 0.1 s.
            from ..lower.jit import get_jit

            get_jit()
            self.worker_started = True
            _thread.start_new_thread(self._work, ())
        self.jobs.put(job)

    def _work(self) -> None:
        while True:
            record, code, args = self.jobs.get()
            # LLVM runs without the GIL; every return to Python waits for the program's
            # thread to let go of it. A short switch interval while compiling keeps
            # those waits short; the program's own setting is restored when idle.
            interval = sys.getswitchinterval()
            sys.setswitchinterval(min(interval, COMPILE_SWITCH_INTERVAL))
            ours = sys.getswitchinterval()
            try:
                self.compile(record, code, args)
            except BaseException as e:  # noqa: BLE001 (the worker must survive anything)
                self.fail(record, f"internal error while compiling: {type(e).__name__}: {e}")
            finally:
                if sys.getswitchinterval() == ours:  # unless the program changed it meanwhile
                    sys.setswitchinterval(interval)

    # -- compiling ------------------------------------------------------------------

    def fail(self, record: Record, reason: str) -> None:
        record.status, record.reason = "unsupported", reason
        if reason.startswith("internal"):
            self.warn(f"{record.info.module}.{record.info.qualname} runs interpreted: {reason}")

    def compile(self, record: Record, code: types.CodeType, args: tuple[Any, ...] | None) -> None:
        from ..dispatcher import Dispatcher, argument_key

        record.calls_before_native = record.calls_counted()
        functions = [f for f in gc.get_referrers(code) if isinstance(f, types.FunctionType) and f.__code__ is code]
        if not functions:
            self.fail(record, "its function object is gone")
            return
        # Functions made from this code differ at most in their defaults, and a trampoline
        # passes every argument explicitly: one dispatcher serves them all.
        copy = _copy(functions[0])
        dispatcher = Dispatcher(copy)
        if args is not None:
            native = dispatcher._compile_for(argument_key(args), args)
            if native is None:
                self.fail(record, dispatcher.failure(argument_key(args)) or "not compilable for these arguments")
                return
        tramp = trampoline(code, record.info.key)
        originals.register(tramp, copy)
        self.native[record.info.key] = dispatcher.function
        record.dispatchers.append(dispatcher)
        for func in functions:
            func.__code__ = tramp
        record.status, record.reason = "native", ""

    def rows(self) -> list[dict[str, Any]]:
        rows = [r.row() for r in list(self.records.values())]
        from .cache import load_rejected

        seen: set[str] = set()
        groups = [group if group is not None else (load_rejected(source) or []) for source, group in list(self.rejected)]
        for fields in (f for group in groups for f in group):
            info = FunctionInfo(*fields)
            if info.key in seen:
                continue
            seen.add(info.key)
            rows.append(
                {"module": info.module, "qualname": info.qualname, "status": "unsupported", "reason": info.reason,
                 "calls_native": 0, "calls_interpreted": 0, "compile_ms": 0.0}
            )
        return rows


class _Trigger:
    """The end of a cold counter: the first tick past the threshold starts compiling."""

    def __init__(self, runtime: Runtime, record: Record, by_call: bool) -> None:
        self.runtime = runtime
        self.record = record
        self.by_call = by_call  # the end of the call counter (else: of the loop counter)
        self.fired = False

    def __iter__(self) -> "_Trigger":
        return self

    def __next__(self) -> None:
        if not self.fired:
            self.fired = True
            try:
                self.runtime.on_hot(self.record, sys._getframe(1), self.by_call)
            except BaseException as e:  # noqa: BLE001 (never disturb the program)
                self.runtime.fail(self.record, f"internal error: {type(e).__name__}: {e}")
        return None


def _copy(func: types.FunctionType) -> types.FunctionType:
    """A function like `func`, keeping its code: what the dispatcher falls back to."""
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__qualname__ = func.__qualname__
    copy.__module__ = func.__module__
    copy.__doc__ = func.__doc__
    return copy


def trampoline(code: types.CodeType, key: str) -> types.CodeType:
    """Code with `code`'s parameters that passes them on to the native dispatcher."""
    params = list(code.co_varnames[: code.co_argcount])
    posonly = code.co_posonlyargcount
    signature = ", ".join(params[:posonly] + (["/"] if posonly else []) + params[posonly:])
    source = f"def _t({signature}):\n    return {NATIVE}[{key!r}]({', '.join(params)})\n"
    ns: dict[str, Any] = {}
    exec(compile(source, code.co_filename, "exec"), ns)
    tramp: types.CodeType = ns["_t"].__code__
    return tramp.replace(co_name=code.co_name, co_qualname=code.co_qualname, co_firstlineno=code.co_firstlineno)


RUNTIME = Runtime()
