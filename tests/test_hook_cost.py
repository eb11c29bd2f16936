"""The hook's cost model after compiling (cuvil_bc/hook/cost.py): a new native
function's first calls are timed natively and interpreted in turn, and the verdict
decides whether it stays native. Here with stand-in functions of known cost, so that
the verdicts do not depend on the compiler; tests/test_hook_e2e.py checks the verdict
on a real compiled function that deoptimises on every call."""

from __future__ import annotations

import time
import traceback
from typing import Any

from cuvil_bc.hook.cost import ENOUGH, FEW, SAMPLES, SHORT_CALL_NS, Sampler, Verdict


def _busy(ns: int) -> None:
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def _sampler(native_ns: int, interpreted_ns: int) -> tuple[Sampler, list[Verdict], list[str]]:
    verdicts: list[Verdict] = []
    ran: list[str] = []

    def native(x: int) -> int:
        ran.append("native")
        _busy(native_ns)
        return x + 1

    def interpreted(x: int) -> int:
        ran.append("interpreted")
        _busy(interpreted_ns)
        return x + 1

    return Sampler(native, interpreted, verdicts.append), verdicts, ran


def test_native_calls_slower_than_interpreted_ones_are_found() -> None:
    sampler, verdicts, ran = _sampler(native_ns=8_000, interpreted_ns=500)
    results = []
    while not verdicts:
        results.append(sampler(len(results)))
    assert results == [k + 1 for k in range(len(results))]
    assert len(verdicts) == 1 and verdicts[0].slower
    assert ran.count("interpreted") == SAMPLES == sampler.interpreted_calls
    assert ran[:2] == ["native", "native"]  # a warm-up, then a native time first
    sampler(0)
    assert ran[-1] == "native" and len(verdicts) == 1  # decided: no more timing


def test_faster_native_calls_stay_and_their_saving_is_estimated() -> None:
    sampler, verdicts, _ = _sampler(native_ns=200, interpreted_ns=5_000)
    while not verdicts:
        sampler(0)
    (verdict,) = verdicts
    assert not verdict.slower
    saved = verdict.saved_ns()
    assert saved is not None and 3_000 < saved < 10_000, vars(verdict)


def test_long_native_calls_are_not_timed_interpreted() -> None:
    # Timing an interpreted call costs what it is slower by: not for long calls.
    sampler, verdicts, ran = _sampler(native_ns=SHORT_CALL_NS * 2, interpreted_ns=0)
    for k in range(FEW + 1):
        assert not verdicts
        sampler(k)
    assert ran == ["native"] * (FEW + 1)
    (verdict,) = verdicts
    assert verdict.interpreted_ns is None and not verdict.slower and verdict.saved_ns() is None


def test_calls_whose_cost_alternates_are_timed_fairly() -> None:
    # Cheap and dear calls in turn (odd and even arguments): timed in turn, the
    # interpreted kind would get only the cheap ones and native ones would look slower.
    verdicts: list[Verdict] = []

    def native(x: int) -> None:
        _busy(6_000 if x % 2 else 300)

    def interpreted(x: int) -> None:
        _busy(12_000 if x % 2 else 600)

    sampler = Sampler(native, interpreted, verdicts.append)
    k = 0
    while not verdicts:
        sampler(k)
        k += 1
    assert not verdicts[0].slower, vars(verdicts[0])


def test_one_slow_native_call_does_not_end_the_timing() -> None:
    # The first timed native call slowed by an interrupt made a function that
    # deoptimises on every call look long: it was never timed interpreted, and stayed.
    verdicts: list[Verdict] = []
    calls = [0]

    def native(x: int) -> None:
        calls[0] += 1
        _busy(SHORT_CALL_NS * 3 if calls[0] == 2 else 4_000)

    sampler = Sampler(native, lambda x: _busy(1_000), verdicts.append)
    while not verdicts:
        sampler(0)
    assert verdicts[0].slower


def test_a_nested_call_runs_natively_untimed() -> None:
    verdicts: list[Verdict] = []
    ran: list[str] = []
    holder: dict[str, Any] = {}

    def native(n: int) -> int:
        ran.append("native")
        return n if n == 0 else holder["s"](n - 1)

    sampler = Sampler(native, native, verdicts.append)
    holder["s"] = sampler
    assert sampler(3) == 0
    assert ran == ["native"] * 4 and sampler.warm and sampler.times == ([], [])


def test_an_exception_passes_through_with_the_traceback_it_would_have() -> None:
    def native(x: int) -> int:
        return 1 // x

    sampler = Sampler(native, native, lambda verdict: None)
    try:
        sampler(0)
    except ZeroDivisionError as e:
        names = [f.name for f in traceback.extract_tb(e.__traceback__)]
    assert "__call__" not in names and names[-1] == "native", names
    assert sampler.times == ([], []) and not sampler.warm  # not timed


def test_too_few_interpreted_times_keep_native() -> None:
    assert not Verdict(10, None).slower
    assert ENOUGH <= SAMPLES


def test_native_calls_that_cpython_runs_again_are_slower_whatever_the_timing() -> None:
    # A function whose native calls all deoptimise and are run again from the start
    # (one that only reads) costs its native part and the whole interpreted call: it
    # is slower natively by construction. The timing alone said so only sometimes
    # (the hand-over costs ~10% of a short call: the end-to-end test was flaky).
    reruns = [0]
    verdicts: list[Verdict] = []

    def native(x: int) -> int:
        reruns[0] += 1
        return x

    sampler = Sampler(native, lambda x: _busy(2_000) or x, verdicts.append, lambda: reruns[0])
    while not verdicts:
        sampler(0)
    assert verdicts[0].rerun and verdicts[0].slower, vars(verdicts[0])
    fast: list[Verdict] = []
    sampler = Sampler(lambda x: x, lambda x: _busy(2_000) or x, fast.append, lambda: reruns[0])
    while not fast:
        sampler(0)
    assert not fast[0].rerun and not fast[0].slower
