"""The run-time side of the hook: counters, turning hot functions native, the records
behind the report.

Counters. Each counted function's code holds two `Counter` constants (see
`cuvil_bc/counters.py` and `decode/counting.py`): one ticked per call, one per loop
iteration. A counter is C (csrc/counter.c): a tick adds one to its `ticks` (which the
report reads), and the first tick past its `threshold` (or `loop_threshold`) calls
`Runtime._trigger`, once.

Hot. The trigger runs once per function (a loop counter's trigger in the function's
first call only re-arms the call counter for the next call: native code starts at a
call, so compiling a function that is called once would be all cost): it notes the
argument values of the call (the frame's parameters) and compiles, on a background thread unless ``sync``. Compiling
finds the function objects that run this code (`gc.get_referrers`), gives each a
`Dispatcher` over a copy of itself, and compiles the observed signature. When that
works, the function's ``__code__`` becomes a trampoline: its own code behind a prefix
that passes the parameters to the dispatcher (`decode/counting.trampoline`), so the
function keeps its identity, its defaults and any decorator already wrapped around it;
other argument types compile lazily, like `cuvil_bc.compile`, and unsupported ones run
the copy (the original code). When it does not, the function stays as it is and the
report says why.

Internal errors are reported with `cuvil_bc.warn.internal_warning`, which never raises
(under ``-W error`` it writes the warning to stderr instead): the program goes on.
"""

from __future__ import annotations

import _thread
import collections
import functools
import gc
import os
import sys
import time
import types
from _weakref import ref  # (`weakref` would cost each hooked program ~0.7 ms to import)

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

from ..counters import Counter, live, set_code
from ..typing import arguments
from ..warn import internal_warning
from .cost import Sampler, Verdict, compile_seconds
from .options import Options
from .rewrite import CHOSEN, FunctionInfo, class_call_reason, front_end_reason, typing_reason

_NEWLOCALS = 0x02  # (a module's code has not)

#: The reason of a function whose loops got hot in its first call, and which has not
#: been called again (see `Runtime.on_hot`).
ONCE = "not hot: called once (its loops ran hot, but native code would start at its next call)"
#: The reason of a hot function that is not compiled yet: the program had not run as
#: long as compiling it would keep the program waiting (see `Runtime.on_hot`).
NOT_YET = "not compiled: the program had not run as long as compiling would take"
#: The same for a script's module-level code, which runs once by nature.
MODULE_ONCE = "module-level code: its loops run natively only where on-stack replacement enters them"

#: sys.setswitchinterval while the background thread compiles (CPython's default: 5 ms).
COMPILE_SWITCH_INTERVAL = 0.0002

#: How long, from its start, a background compile keeps priority over the functions
#: queued for compiling (see cuvil_bc/priority.py): a compile of the program's kernels
#: takes 20-100 ms; one that takes longer shares the GIL with the program after that.
PRIORITY_BUDGET = 0.2

#: How long, at most, the interpreter's exit waits for the compiles under way to finish
#: (and be stored, for the next run to load): `EXIT_SHARE` of the time the program
#: ran, and `EXIT_WAIT` at most. See `Runtime._at_exit`.
EXIT_SHARE = 0.2
EXIT_WAIT = 0.25

#: A function's record, the work for the worker (compiling it, `Runtime.compile`, or
#: an entry for on-stack replacement, hook/osr.py), and the size of the code it
#: compiles in code units (what `Runtime._at_exit` estimates its time from).
Job = tuple["Record", "Callable[[], None]", int]


class Record:
    """What the hook knows of one counted (or rejected) function."""

    def __init__(self, info: FunctionInfo, source: str = "") -> None:
        self.info = info
        self.source = source  # the module's file
        self.hot = False  # the trigger has run
        self.call_counter: Counter | None = None
        self.loop_counter: Counter | None = None
        self.status = "interpreted"  # interpreted | native | unsupported
        self.reason = ""
        self.calls_before_native = 0
        self.dispatchers: list[Any] = []
        self.verdict: Verdict | None = None  # the cost model's, once native calls were timed
        self.samplers: list[Sampler] = []  # (their interpreted calls are counted)
        #: (function, its counted code, the trampoline): what `observed_changed` swaps.
        self.swapped: list[tuple["ref[types.FunctionType]", types.CodeType, types.CodeType]] = []
        self.gate = Gate(self)  # what its loops' exits ask (hook/osr.py)
        self.osr: Any = None  # its on-stack replacement so far (osr.State)

    def calls_counted(self) -> int:
        return self.call_counter.ticks if self.call_counter is not None else 0

    def saved_ns(self) -> int | None:
        """Time its native calls saved, as the cost model estimates it: (interpreted -
        native time a call) x native calls from interpreted code. None when its
        interpreted calls were not timed."""
        if self.verdict is None or self.status != "native":
            return None
        saved = self.verdict.saved_ns()
        return None if saved is None else saved * sum(int(d.stats["native_calls"]) for d in self.dispatchers)

    def row(self) -> dict[str, Any]:
        native = sum(int(d.stats["native_calls"]) for d in self.dispatchers)
        interpreted = sum(int(d.stats["interpreted_calls"]) for d in self.dispatchers)
        interpreted += sum(s.interpreted_calls for s in self.samplers)
        compile_ms = 1000.0 * sum(float(d.stats["compile_seconds"]) for d in self.dispatchers)
        before = self.calls_before_native if self.dispatchers else self.calls_counted()
        status, reason = self.status, self.reason
        if status == "native" and not any(d.signatures for d in self.dispatchers):
            # Swapped to the dispatcher, but no signature compiled (yet): say why not.
            failures = [f for d in self.dispatchers for f in d._failed.values()]
            status, reason = ("unsupported", failures[0]) if failures else ("interpreted", "no call since with arguments that compile")
        elif status == "interpreted" and not reason:
            # Every interpreted function says why: not hot yet, or its compile was
            # still queued or running (in the background) when the report was made.
            reason = "compiling when the program ended" if self.hot else "not hot: too few calls and loop iterations"
        osr = self.osr
        if osr is not None and osr.entered:
            native += sum(int(e.dispatcher.stats["native_calls"]) for e in osr.entries.values())
            compile_ms += 1000.0 * osr.compile_seconds
            if not self.dispatchers:
                status, reason = "native", ""
        elif osr is not None and status == "interpreted" and reason in (ONCE, MODULE_ONCE) and osr.refused:
            reason = f"{reason}; no on-stack replacement: {next(iter(osr.refused.values()))}"
        saved = self.saved_ns() if status == "native" else None
        deopts: collections.Counter[int] = collections.Counter()
        for d in self.dispatchers:
            deopts.update(d.deopt_lines)
        return {
            "module": self.info.module,
            "qualname": self.info.qualname,
            "file": self.source,
            "line": self.info.lineno,
            "status": status,
            "reason": reason,
            "calls_native": native,
            "calls_interpreted": before + interpreted,
            "compile_ms": round(compile_ms, 3),
            "calls_before_native": self.calls_before_native if self.dispatchers else None,
            # Estimated: (fastest interpreted call - fastest native call) x native calls
            # made from interpreted code. None when interpreted calls were not timed.
            "saved_ms": None if saved is None else round(saved / 1e6, 3),
            "native_ns": self.verdict.native_ns if self.verdict is not None else None,
            "interpreted_ns": self.verdict.interpreted_ns if self.verdict is not None else None,
            # Deoptimisations by the line whose guard failed (0: not known).
            "deopt_lines": {str(line): n for line, n in sorted(deopts.items())},
            # The native signatures: what `python -m cuvil_bc compile` builds ahead of time.
            "signatures": sorted({sig for d in self.dispatchers for sig in d.signatures}),
            # Frames that left a loop for native code (on-stack replacement, hook/osr.py).
            "osr_entries": osr.entered if osr is not None else 0,
        }


class Gate:
    """What the on-stack replacement stubs of a function's loops ask (decode/counting.py,
    hook/osr.py): ``gate[(offset, *stack)]`` from an exit, ``gate[exception]`` from its
    handler. Pickled (with code sent by value), it is NoneType, as a counter is: such
    code never reaches it."""

    __slots__ = ("record",)

    def __init__(self, record: Record) -> None:
        self.record = record

    def __getitem__(self, key: Any) -> Any:
        from . import osr

        return osr.ask(RUNTIME, self, key, sys._getframe(1))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type, (None,))


class Runtime:
    """The process's hook state (one instance: `RUNTIME`)."""

    def __init__(self) -> None:
        self.options = Options()
        self.program_dir = ""  # the report gives paths inside it relative to it
        self.records: dict[str, Record] = {}  # candidates
        #: Per module: its source and the functions that are not candidates (None: in
        #: the cache's report file). Only the report looks at them.
        self.rejected: list[tuple[str, list[tuple[Any, ...]] | None]] = []
        self.pending: collections.deque[Job] = collections.deque()  # for the worker
        self.worker_running = False
        self.busy = _thread.allocate_lock()  # held by the worker while it takes and does a job
        # When the process started, about: the hook starts once the interpreter's own
        # startup (~30 ms, on the CPU) is done, which a plain run's time includes too.
        self.started = time.monotonic() - time.process_time()
        self.closing = False  # the interpreter is exiting: no job starts any more
        self.in_hand: tuple[float, int] | None = None  # the worker's job: its start (time.monotonic) and size
        self.compiled = (0.0, 0)  # the seconds and code units of the jobs finished
        self.exit_registered = False
        self.worker_ident: int | None = None  # the worker thread's, while it runs
        #: While a worker thread starts: the program's switch interval and ours.
        self.handoff: tuple[float, float] | None = None
        self.compiler_loaded = False
        # Guards records, pending and worker_running. Reentrant: a signal handler can
        # run counted code (and import modules) while this thread holds it.
        self.lock = _thread.RLock()
        self.warned: set[str] = set()
        from .. import observe

        observe.listen(self)
        if hasattr(os, "register_at_fork"):
            # A lock held by another thread at a fork stays held in the child forever.
            os.register_at_fork(after_in_child=self._new_lock)

    def observed_changed(self, observed: bool) -> None:
        """A tracing tool started or stopped (see `observe.py`): native functions get
        their own counted code back while it watches, so it sees their lines and
        frames exactly as without the hook, and their trampolines once it is gone."""
        with self.lock:
            for record in self.records.values():
                for ref, code, tramp in record.swapped:
                    func = ref()
                    if func is None:
                        continue
                    have, want = (tramp, code) if observed else (code, tramp)
                    if func.__code__ is have:  # not if the program gave it other code since
                        set_code(func, want)

    def _new_lock(self) -> None:
        if self.lock.acquire(blocking=False):  # free, or held by this very thread
            self.lock.release()
        else:
            self.lock = _thread.RLock()

    # A fork copies only the thread that calls it. Had the worker been half way through
    # a compile (or an import: the compiler imports lazily), the child would inherit
    # that half: locks held forever, modules half initialised. So a fork waits for the
    # job the worker has in hand (at most the rest of one compile), and the child takes
    # over the jobs still pending: those functions are hot there too, and their
    # counters will not trigger again.
    # Registered once the compiler is loaded, after the compiler's own handlers
    # (compiler.py, dispatcher.py, lower/jit.py), so that this `before` runs first
    # (CPython runs them in reverse order: the worker may need the locks that
    # lower/jit.py's takes) and this `after_in_child` last.

    def _before_fork(self) -> None:
        self.busy.acquire()

    def _after_fork_in_parent(self) -> None:
        self.busy.release()

    def _after_fork_in_child(self) -> None:
        self.busy = _thread.allocate_lock()
        pending = list(self.pending)
        self.pending = collections.deque()
        self.worker_running = False  # the worker thread was not copied
        self.worker_ident = None
        self._handed_off()
        for job in pending:
            self._submit(job)

    def _at_exit(self) -> None:
        """The interpreter is exiting. The worker may finish the job in hand and those
        queued after it that the rate of this run's compiles says end within
        `EXIT_SHARE` of the time the program has run (`EXIT_WAIT` at most): what it
        finishes is stored in the native-code cache, and the next run loads it
        instead of loading the compiler to start it again (a function that gets hot
        as the program ends would otherwise cost every run ~0.1 s, for nothing). A job
        that would not end in time is not waited for: the wait would be lost, and paid
        again by every run. The other jobs are dropped.

        Past that (or at once), the job in hand is stopped: it gives up at its next
        phase (`cancel.py`), and is waited for. LLVM runs without the GIL; had it gone
        on while the interpreter tore down the modules and objects it uses, and the
        process's exit LLVM's own statics, it could fail an assertion or crash.
        Registered when the first worker starts; atexit runs it before the report is
        written (registered at the hook's start), which so shows the finished
        compiles."""
        now = time.monotonic()
        deadline = now + min(EXIT_WAIT, EXIT_SHARE * (now - self.started))
        with self.lock:
            self.closing = True
            waits = self._keep_what_ends_by(deadline)
        try:
            while waits and time.monotonic() < deadline:
                with self.lock:
                    if not self.worker_running:
                        break
                time.sleep(0.002)
        except BaseException:  # noqa: BLE001
            # (Ctrl-C, or a signal handler's exception, as the program exits: no
            # program code is left to reach it; stop waiting for what is for later)
            pass
        with self.lock:
            self.pending.clear()
            worker = self.worker_ident
        if worker is not None and "cuvil_bc.cancel" in sys.modules:
            sys.modules["cuvil_bc.cancel"].stop(worker)  # its job ends at its next phase
        while True:
            try:
                self.busy.acquire()
                self.busy.release()
                return
            except BaseException:  # noqa: BLE001
                # (a second Ctrl-C, or a signal handler's exception, as the program
                # exits: the wait is one compile phase at most, and going on meanwhile
                # is what the wait is for)
                continue

    def _keep_what_ends_by(self, deadline: float) -> bool:
        """Keep the queued jobs that, one after the other from the end of the job in
        hand, should end by `deadline` at the rate (seconds a code unit) of the jobs
        finished in this process; whether the worker has anything left to finish by
        then. (Under the lock.)"""
        rate = self.compile_rate()
        end = time.monotonic()
        if rate is not None and self.in_hand is not None:
            started, size = self.in_hand
            end = started + rate * size
        if rate is None or end > deadline:
            self.pending.clear()
            return False
        kept: collections.deque[Job] = collections.deque()
        for job in self.pending:
            end += rate * job[2]
            if end > deadline:
                break
            kept.append(job)
        self.pending = kept
        return self.in_hand is not None or bool(kept)

    def compile_rate(self) -> float | None:
        """Seconds a code unit, at the rate of the jobs finished in this process (None:
        none yet)."""
        seconds, units = self.compiled
        return seconds / units if units else None

    def warn(self, message: str) -> None:
        """One warning per distinct message: the program goes on."""
        if message not in self.warned:
            self.warned.add(message)
            internal_warning(f"cuvil_bc: {message}", stacklevel=2)

    # -- counters ---------------------------------------------------------------------

    def register(
        self, candidates: Sequence[tuple[Any, ...]], source: str, code: types.CodeType, rejected: list[Any] | None = None
    ) -> types.CodeType:
        """Set up the counters of a module's candidate functions (before its code runs)
        and return its `code` (with placeholders for them, as `decode/counting.py` writes
        it) calling them. `candidates`: `FunctionInfo`s, or from the cache the same
        fields as plain tuples. `rejected`: the module's other functions, for the report
        (None: in the cache's report file)."""
        counters: dict[str, Counter] = {}
        with self.lock:
            self.rejected.append((source, rejected))
            for fields in candidates:
                key = fields[0]
                record = self.records.get(key)
                if record is None or record.call_counter is None or record.loop_counter is None:
                    record = self._new_record(FunctionInfo(*fields), source)
                # else: the module is imported again (importlib.reload): keep counting
                counters[key] = record.call_counter  # type: ignore[assignment]
                counters[key + "@loop"] = record.loop_counter  # type: ignore[assignment]
                counters[key + "@osr"] = record.gate  # type: ignore[assignment]
        return live(code, counters)

    def _new_record(self, info: FunctionInfo, source: str = "") -> Record:
        record = Record(info, source)
        self.records[info.key] = record
        # (The tick after `threshold` of them triggers.)
        record.call_counter = Counter(self.options.threshold + 1, functools.partial(self._trigger, record, True))
        record.loop_counter = Counter(self.options.loop_threshold + 1, functools.partial(self._trigger, record, False))
        return record

    def _trigger(self, record: Record, by_call: bool) -> None:
        """Called by a counter (C) at its threshold, from the counted function's tick:
        frame 1 is that function's. A KeyboardInterrupt or SystemExit (Ctrl-C while a
        compile runs on the program's thread), or an exception that the program's own
        code raised meanwhile (a signal handler), is the program's: it propagates from
        the tick. Anything else is an internal error, which never disturbs the program."""
        try:
            from .signals import DeferredSignals

            with DeferredSignals():
                self.on_hot(record, sys._getframe(1), by_call)
        except Exception as e:  # noqa: BLE001
            from ..frames import handler_part, raised_by_program

            if raised_by_program(e):  # (a signal handler's, while the hook worked: the program's)
                e.__traceback__ = handler_part(e.__traceback__)
                raise
            self.fail(record, f"internal error: {type(e).__name__}: {e}")

    def on_hot(self, record: Record, frame: types.FrameType, by_call: bool) -> None:
        if record.hot:
            return  # the other counter got there first
        if not by_call and record.call_counter is not None and record.call_counter.ticks <= 1:
            # Its loops got hot in its first call. Native code starts at a call, or
            # where a loop runs long enough for on-stack replacement to pay (osr.py):
            # for a function that is called once (a `main()`, a setup step) compiling
            # it for its next call would be all cost (the front end alone costs ~40 ms
            # to load). Its next call, if any, triggers.
            if record.reason not in (ONCE, MODULE_ONCE):
                record.reason = ONCE if frame.f_code.co_flags & _NEWLOCALS else MODULE_ONCE
                record.call_counter.left = 1
            from .. import observe

            if not observe.observed():  # (a tool would see every call the timing makes)
                from . import osr

                osr.own_code(Gate)
                osr.on_loop_hot(self, record)
            return
        # (At once: what follows may let the GIL go, to a thread whose tick of the same
        # function would otherwise submit it a second time.)
        record.hot = True
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount]
        from ..frames import local_values

        f_locals = local_values(frame)
        args: tuple[Any, ...] | None = tuple(f_locals[n] for n in names if n in f_locals)
        if len(args) != len(names):  # type: ignore[arg-type]
            args = None  # a parameter was deleted: compile lazily, on the next call
        refused = arguments.refused(args) if args is not None else ""
        if not refused and self.options.cache and args is not None and _in_cache(code, frame.f_globals, args):
            # Native code from the cache loads in milliseconds, without the compiler:
            # no reason to wait for the worker, or to load the front end (~50 ms) to
            # ask whether it compiles (it did).
            record.reason = ""
            self.compile(record, code, args)
            return
        if not refused and not self.options.sync:
            ran = time.monotonic() - self.started
            needed = compile_seconds(self.compile_rate(), len(code.co_code) // 2, self.compiler_loaded)
            if ran < needed:
                # Compiling (the front end's checks included) would keep the program
                # waiting longer than it has run so far: a program about to end would
                # pay for it all (a 30 ms program took 0.2 s). Asked again when, at
                # the rate its counters ticked since the process started, the program
                # will have run that long (a function that started late asks too
                # early, which costs an ask, never too late).
                record.reason = NOT_YET
                for counter in (record.call_counter, record.loop_counter):
                    if counter is not None and counter.left <= 0:
                        counter.left = max(1, int(counter.ticks * (needed - ran) / max(ran, 1e-3)))
                record.hot = False
                return
        record.reason = ""
        if not refused:
            # Only now the front end, then type inference for these arguments: most
            # counted functions never get this far, and one that cannot compile is
            # given up before LLVM loads (~45 ms). Once it is loaded, the worker's
            # compile types the function anyway: typing it here as well would make
            # the program wait a few ms for nothing.
            try:
                refused = class_call_reason(code, frame.f_globals, frame.f_builtins) or front_end_reason(code)
                if not refused and args is not None and not self.compiler_loaded:
                    from ..decode.counting import without_counters

                    refused = typing_reason(types.FunctionType(without_counters(code), frame.f_globals), args)
            except Exception as e:  # noqa: BLE001 (never break the program)
                from ..frames import raised_by_program

                if raised_by_program(e):
                    raise  # (a signal handler's: `_trigger` passes it on)
                refused = f"internal error in the front end: {type(e).__name__}: {e}"
        if self.options.sync or refused:
            # (Giving up is quick, and takes as long in the worker, which holds the
            # GIL for it too: done here, the counters go at once.)
            if not refused:
                self.load_compiler()  # (so that the next hot function is not typed twice)
            self.compile(record, code, args, refused)
            return
        self.load_compiler()
        self.submit(record, functools.partial(self.compile, record, code, args, refused), len(code.co_code) // 2)

    def load_compiler(self) -> None:
        """Load the compiler on the program's thread, the first time, before the worker
        needs it."""
        if not self.compiler_loaded:
            # The first time, load the compiler here. Imported from the worker, its
            # hundreds of file-system calls would each wait for this busy thread to
            # hand the GIL back (up to a switch interval each): seconds, not 0.1 s.
            # (Also, the compiler's at-fork handlers are then registered before ours,
            # so that in a child they have repaired its locks when our worker starts.)
            from .. import compiler, dispatcher  # noqa: F401
            from ..lower.jit import get_jit

            get_jit()
            self.compiler_loaded = True
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(
                    before=self._before_fork, after_in_parent=self._after_fork_in_parent, after_in_child=self._after_fork_in_child
                )

    def submit(self, record: Record, compile: Callable[[], None], units: int) -> None:
        """Queue `compile` (of `units` code units of `record`'s function) for the
        worker. Meanwhile the ticks of the function's counters wait while the worker
        holds the GIL for it (priority.py): running the function interpreted, the
        program's thread took the GIL from the compile at every switch interval, and
        the compile took up to three times as long."""
        _waiting(record, True)
        self._submit((record, compile, units))

    def _submit(self, job: Job) -> None:
        with self.lock:
            if self.closing:
                return  # (the interpreter is exiting: what gets hot now is for no one)
            self.pending.append(job)
            if self.worker_running:
                return
            self.worker_running = True
            if not self.exit_registered:
                import atexit

                atexit.register(self._at_exit)
                self.exit_registered = True
        # The new thread waits for the GIL until this one lets it go: at the program's
        # switch interval (CPython's default, 5 ms) every compile started that much
        # late. Until the thread runs, the interval is the compile's.
        saved = sys.getswitchinterval()
        sys.setswitchinterval(min(saved, COMPILE_SWITCH_INTERVAL))
        self.handoff = (saved, sys.getswitchinterval())
        try:
            _thread.start_new_thread(self._work, ())
        except BaseException:
            self._handed_off()
            with self.lock:
                self.worker_running = False
            raise

    def _handed_off(self) -> None:
        """Give the program its switch interval back once the worker thread runs (or
        failed to start, or was not copied by a fork), unless it set its own meanwhile."""
        handoff, self.handoff = self.handoff, None
        if handoff is not None and sys.getswitchinterval() == handoff[1]:
            restore_switch_interval(handoff[0])

    def _work(self) -> None:
        """Compile the pending jobs, then end: a thread left idle would make the
        process multi-threaded for good, and CPython warns at every fork (os.fork,
        multiprocessing) of a multi-threaded process, where plain CPython would not."""
        self.worker_ident = _thread.get_ident()
        self._handed_off()
        while True:
            with self.busy:  # a fork waits for this job (see `_before_fork`)
                with self.lock:
                    if not self.pending:  # (at exit, `_at_exit` keeps those it waits for)
                        self.worker_running = False
                        self.worker_ident = None
                        return
                    job = self.pending.popleft()
                self._do(job)

    def _do(self, job: Job) -> None:
        # LLVM runs without the GIL; every return to Python waits for the program's
        # thread to let go of it. A short switch interval while compiling keeps those
        # waits short; the program's own setting is restored when idle.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, COMPILE_SWITCH_INTERVAL))
        ours = sys.getswitchinterval()
        from .. import priority
        from ..cancel import Cancelled

        started, finished = time.monotonic(), False
        with self.lock:
            self.in_hand = (started, job[2])
        try:
            with priority.claimed(PRIORITY_BUDGET):
                job[1]()
            finished = True
        except Cancelled:
            pass  # the interpreter is exiting: the report says the function was compiling
        except BaseException as e:  # noqa: BLE001 (the worker must survive anything)
            self.fail(job[0], f"internal error while compiling: {type(e).__name__}: {e}")
        finally:
            with self.lock:
                self.in_hand = None
                if finished:
                    seconds, units = self.compiled
                    self.compiled = (seconds + time.monotonic() - started, units + job[2])
                # (another job of the same function, a loop's entry and then its calls,
                # keeps them waiting)
                if not any(queued[0] is job[0] for queued in self.pending):
                    _waiting(job[0], False)
            if sys.getswitchinterval() == ours:  # unless the program changed it meanwhile
                restore_switch_interval(interval)

    # -- compiling ------------------------------------------------------------------

    def fail(self, record: Record, reason: str) -> None:
        record.status, record.reason = "interpreted" if reason in CHOSEN else "unsupported", reason
        if reason.startswith("internal"):
            self.warn(f"{record.info.module}.{record.info.qualname} runs interpreted: {reason}")

    def compile(self, record: Record, code: types.CodeType, args: tuple[Any, ...] | None, refused: str = "") -> None:
        from .. import observe
        from ..counters import NativeCall
        from ..decode.counting import trampoline, without_counters

        record.calls_before_native = record.calls_counted()
        # (all of them, by a heap scan: a copy of a module-level function may be the
        # one that got hot, and would otherwise go on counting)
        functions = [f for f in gc.get_referrers(code) if isinstance(f, types.FunctionType) and f.__code__ is code]
        if not functions:
            self.fail(record, "its function object is gone")
            return
        # Decided either way: the functions stop counting (their calls and loops
        # would tick for the rest of the run). The copy that the dispatcher falls back
        # to, and the trampoline's body, are the code as written.
        plain = without_counters(code)
        if refused:  # (without loading the compiler and LLVM: ~65 ms)
            self.fail(record, refused)
            self._swap(functions, code, plain)
            return
        from ..dispatcher import Dispatcher, argument_key

        # Functions made from this code differ at most in their defaults, and a trampoline
        # passes every argument explicitly: one dispatcher serves them all.
        copy = _copy(functions[0], plain)
        dispatcher = Dispatcher(copy, cache=self.options.cache)
        if args is not None:
            native = dispatcher._compile_for(argument_key(args), args)
            if native is None:
                self.fail(record, dispatcher.failure(argument_key(args)) or "not compilable for these arguments")
                self._swap(functions, code, plain)
                return
        # The first calls are timed (hook/cost.py): native calls from then on, unless
        # they are slower than the code as written.
        call = NativeCall(None)
        tramp = trampoline(plain, call)
        call.function = sampler = Sampler(
            dispatcher.function, copy, functools.partial(self.sampled, record, call, tramp, dispatcher), lambda: dispatcher.reruns
        )
        record.samplers.append(sampler)
        from .. import originals

        originals.register(tramp, copy)  # code that calls `func` compiles `copy`
        record.dispatchers.append(dispatcher)
        with self.lock:
            record.swapped += [(ref(func), plain, tramp) for func in functions]
            watched = observe.observed()
            # A tool is watching: the code as written until it stops (observed_changed).
            self._swap(functions, code, plain if watched else tramp)
        record.status, record.reason = "native", ""

    def sampled(self, record: Record, call: Any, tramp: types.CodeType, dispatcher: Any, verdict: Verdict) -> None:
        """The sampler's verdict on a new native function (`call` is what its
        trampoline `tramp` calls): native from now on, or back to the code as written.
        Native, the trampoline calls the dispatcher's C entry itself (one Python call
        less than through the dispatcher's function)."""
        try:
            record.verdict = verdict
            sampler = call.function
            if not verdict.slower:
                call.function = sampler.native
                entry = dispatcher.c_entry()
                if entry is not None:
                    call.deopt, call.entry = entry[1], entry[0]
                return
            # Reverted: any frame still in the trampoline runs the code as written too.
            call.function = sampler.interpreted
            with self.lock:
                for entry in [e for e in record.swapped if e[2] is tramp]:
                    record.swapped.remove(entry)
                    func = entry[0]()
                    if func is not None and func.__code__ is tramp:
                        set_code(func, entry[1])
            record.status = "interpreted"
            record.reason = f"reverted: slower natively ({verdict.native_ns} ns a call, {verdict.interpreted_ns} ns interpreted)"
        except Exception as e:  # noqa: BLE001 (called from the program's call: never disturb it)
            self.warn(f"{record.info.module}.{record.info.qualname}: internal error after timing its calls: {type(e).__name__}: {e}")

    def _swap(self, functions: list[types.FunctionType], have: types.CodeType, want: types.CodeType) -> None:
        """Give `want` to those of `functions` that still run `have` (not to one the
        program gave other code since: a hot-reload tool's)."""
        with self.lock:
            for func in functions:
                if func.__code__ is have:
                    set_code(func, want)

    def rows(self) -> list[dict[str, Any]]:
        rows = [r.row() for r in list(self.records.values())]
        from .cache import load_rejected

        seen: set[str] = set()
        groups = [(source, group if group is not None else (load_rejected(source) or [])) for source, group in list(self.rejected)]
        for source, fields in ((source, f) for source, group in groups for f in group):
            info = FunctionInfo(*fields)
            if info.key in seen:
                continue
            seen.add(info.key)
            rows.append(
                {"module": info.module, "qualname": info.qualname, "file": source, "line": info.lineno,
                 "status": "interpreted" if info.reason in CHOSEN else "unsupported", "reason": info.reason,
                 "calls_native": 0, "calls_interpreted": 0, "compile_ms": 0.0, "calls_before_native": None, "saved_ms": None,
                 "native_ns": None, "interpreted_ns": None, "deopt_lines": {}, "signatures": [], "osr_entries": 0}
            )
        # Paths inside the program's directory are given relative to it.
        if self.program_dir:
            prefix = os.path.join(os.path.abspath(self.program_dir), "")
            for row in rows:
                if row["file"].startswith(prefix):
                    row["file"] = row["file"][len(prefix) :]
                row["reason"] = row["reason"].replace(prefix, "")
        return rows


def restore_switch_interval(seconds: float) -> None:
    """Set the switch interval back to what `sys.getswitchinterval` gave (`seconds`).
    CPython keeps whole microseconds, truncating: setting what it gave back can lose
    one (0.000241 came back 0.00024, a step lower at every compile)."""
    sys.setswitchinterval((round(seconds * 1e6) + 0.5) * 1e-6)


def _in_cache(code: types.CodeType, namespace: dict[str, Any], args: tuple[Any, ...]) -> bool:
    """Whether the native-code cache has an artifact for `code` called with `args`
    (artifacts/: its key digests the code without the hook's counters)."""
    from .. import artifacts

    if not artifacts.may_hold(code):
        return False  # (a cold cache: no key to make)
    from ..dispatcher import argument_types

    argtypes = argument_types(args)
    if argtypes is None:
        return False
    fn = types.FunctionType(code, namespace)
    key = artifacts.key(fn, argtypes, frozenset(), True)
    return key is not None and artifacts.stored(fn, key)


def _waiting(record: Record, waits: bool) -> None:
    """Whether ticks of `record`'s counters wait for a compile's priority."""
    for counter in (record.call_counter, record.loop_counter):
        if counter is not None:
            counter.waits = waits


def _copy(func: types.FunctionType, code: types.CodeType) -> types.FunctionType:
    """A function like `func`, with `code`: what the dispatcher falls back to."""
    copy = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__qualname__ = func.__qualname__
    copy.__module__ = func.__module__
    copy.__doc__ = func.__doc__
    return copy


RUNTIME = Runtime()
