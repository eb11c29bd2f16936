"""The hook's cost model: what compiling costs, and, after compiling, does the native
function pay, called as its callers call it?

Before compiling, the hook leaves out what cannot pay: loop-free leaves
(`rewrite.LEAF`) and functions called once (`hot.ONCE`); and it compiles a hot function
only once the program has run at least as long as the compile would keep it waiting
(`compile_seconds`, `hot.Runtime.on_hot`): a program that ends sooner never pays for
it, and one that has run that long is likely to run as long again. (The estimate is
below the whole wait, ~0.14 s for a small function the first time: a program that
ends just as the compile does takes ~2.3x its plain time, where compiling at once
took a 0.05 s program to 0.2 s; a long program compiles ~50 ms later.) What is left
can still lose:
a native call from interpreted code costs ~0.1-0.2 us at the boundary, and a function
that deoptimises on most calls runs its native part for nothing. So a new native
function's first calls go through a `Sampler`, which times them, natively and
interpreted (the function's code as written) in turn, and then hands the verdict to
the hook (`Runtime.sampled`): native calls from then on, or back to the code as
written, reported as "reverted: slower natively".

Timing interpreted calls costs what they are slower by, so they are timed only while
native calls are short (`SHORT_CALL_NS`, where the boundary's cost could matter) and
within a budget (`BUDGET_NS`). For a function whose calls are longer the verdict is
"native" without an interpreted time, and the report cannot estimate its saving.

A call that raises, a call nested in a timed one (recursion) and a call from another
thread while one is timed are not timed: they run natively.
"""

from __future__ import annotations

import _thread
from time import perf_counter_ns

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

#: What compiling costs the program, roughly, in seconds: loading the front end, the
#: compiler and LLVM the first time (measured on a 2-vCPU VM with 3.12: 80-120 ms, of
#: which the front end that type inference needs first 30-45 ms), and per code unit of
#: the function (a process's first compile, its lowering's imports included: 60 ms for
#: 250 units, 0.21 s for 760, 1.5 s for 4800), at the run's own rate once it has
#: compiled something (`Runtime.compile_rate`).
COMPILER_COST = 0.09
COMPILE_UNIT_COST = 0.25e-3


def compile_seconds(rate: float | None, units: int, compiler_loaded: bool) -> float:
    """About how long compiling a function of `units` code units keeps the program
    waiting."""
    return (rate or COMPILE_UNIT_COST) * units + (0.0 if compiler_loaded else COMPILER_COST)


#: Timed calls of each kind (after one native call that warms up). Calls differ in
#: cost with their arguments: fewer samples would often make a faster function look
#: slower.
SAMPLES = 32
#: Native times needed before the calls count as long (see SHORT_CALL_NS).
FEW = 3
#: Interpreted calls are timed only while the fastest native call took less (ns).
SHORT_CALL_NS = 20_000
#: ... and only until the interpreted calls timed have taken this long together (ns).
BUDGET_NS = 2_000_000
#: Reverted only with at least this many interpreted times,
ENOUGH = 8
#: ... and native calls slower by this factor (what sampling noise could not explain).
MARGIN = 1.1
#: Native calls count as slower, untimed, when CPython ran this share of them again.
RERUN_SHARE = 0.9


def typical(times: list[int]) -> int:
    """The mean of `times` without its largest (an interrupt, a collection): the
    mean, not the fastest, because calls differ in cost with their arguments, and
    what counts is the time of all of them."""
    kept = sorted(times)[:-1] if len(times) > 2 else times
    return sum(kept) // len(kept)


class Verdict:
    """What the sampler found: the typical native and interpreted call (ns; the
    latter None when not timed), whether almost every native call was run again by
    CPython (`rerun`: a deopt of a function that does not write), and whether native
    calls are slower. A call run again costs its native part and the whole
    interpreted call: slower, whatever the timing says."""

    __slots__ = ("native_ns", "interpreted_ns", "rerun")

    def __init__(self, native_ns: int, interpreted_ns: int | None, rerun: bool = False) -> None:
        self.native_ns, self.interpreted_ns, self.rerun = native_ns, interpreted_ns, rerun

    @property
    def slower(self) -> bool:
        return self.rerun or (self.interpreted_ns is not None and self.native_ns > MARGIN * self.interpreted_ns)

    def saved_ns(self) -> int | None:
        """Time saved by each native call, when both kinds were timed."""
        return None if self.interpreted_ns is None else self.interpreted_ns - self.native_ns


class Sampler:
    """Called in place of a new native function (``native``) until it has a verdict,
    which it passes to `decided`; ``interpreted`` is the function as written. Calls
    are timed in pairs, one of each kind, in an order drawn at random: taken in
    turn, calls whose cost alternates (odd and even arguments) would give each kind
    only the cheap or only the dear ones."""

    def __init__(
        self, native: Callable[..., Any], interpreted: Callable[..., Any], decided: Callable[[Verdict], None], reruns: Callable[[], int] = lambda: 0
    ) -> None:
        self.native, self.interpreted, self.decided = native, interpreted, decided
        self.reruns = reruns  # calls CPython ran again so far (the dispatcher's count)
        self.rerun_samples = 0  # timed native calls that CPython ran again
        self.lock = _thread.allocate_lock()
        self.times: tuple[list[int], list[int]] = ([], [])  # native, interpreted
        self.spent = 0  # ns in timed interpreted calls
        self.interpreted_calls = 0  # (the report counts them)
        self.warm = False
        self.done = False
        self.state = 0x9E3779B97F4A7C15  # a xorshift generator's (no `random`: ~1 ms to import)
        self.second: bool | None = None  # the kind of the pair's second call

    def __call__(self, *args: Any) -> Any:
        if self.done or not self.lock.acquire(False):
            return self.native(*args)
        try:
            interpreted = self._interpret_next()
            self.interpreted_calls += interpreted
            function = self.interpreted if interpreted else self.native
            before = self.reruns()
            start = perf_counter_ns()
            try:
                result = function(*args)
            except BaseException:
                from ..counters import NativeCall

                NativeCall.unlink(prefix=False)  # this frame's entry: the traceback is CPython's
                raise
            took = perf_counter_ns() - start
            if not interpreted and self.warm and self.reruns() > before:
                self.rerun_samples += 1
            self._note(interpreted, took)
            return result
        finally:
            self.lock.release()

    def _may_interpret(self) -> bool:
        native, interpreted = self.times
        return bool(native) and min(native) < SHORT_CALL_NS and len(interpreted) < SAMPLES and self.spent < BUDGET_NS

    def _interpret_next(self) -> bool:
        if not self.warm or not self.times[0] or not self._may_interpret():
            return False
        if len(self.times[0]) >= SAMPLES:
            return True
        if self.second is not None:
            kind, self.second = self.second, None
            return kind
        x = self.state
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        self.state = x
        first = bool(x >> 63)
        self.second = not first
        return first

    def _note(self, interpreted: bool, took: int) -> None:
        if not self.warm:
            self.warm = True  # the first native call: lazy set-up, cold caches
            return
        self.times[interpreted].append(took)
        if interpreted:
            self.spent += took
        native, timed = self.times
        # Go on while interpreted calls are still to be timed, and in any case until
        # a few native times are in: one call slowed by an interrupt must not make
        # the function's calls look long.
        if self._may_interpret() or len(native) < FEW or (len(native) < SAMPLES and min(native) < SHORT_CALL_NS):
            return
        self.done = True
        rerun = self.rerun_samples >= RERUN_SHARE * len(native)
        self.decided(Verdict(typical(native), typical(timed) if len(timed) >= ENOUGH else None, rerun))
