"""Adaptive recompilation (the dispatcher's `_adapt`): a signature whose calls mostly
deoptimise at a guard of an assumption that can be dropped (abi.DROPPABLE) is compiled
again without it."""

from __future__ import annotations

import math

import numpy as np

from cuvil_bc.dispatcher import ADAPT_AFTER
from cuvil_bc.testing import check, compile_source


def native_completions(d: object) -> int:
    return sum(n.completed() for n in d.dispatcher._native.values())  # type: ignore[attr-defined]


GUARDED_READ = """
def f(a, b, m):
    s = 0.0
    for i in range(len(a)):
        if a[i] > m:      # true only where b has an item: the loop's bound exceeds b's
            s += b[i]
    return s
"""


def test_an_entry_bounds_test_that_fails_on_every_call_is_dropped() -> None:
    # The bounds test of b[i] is made once, on entry to the loop (`len(a) <= len(b)`):
    # it fails on every call here, where only the first items of `a` pass the test.
    # Before: every call deoptimised and ran again in CPython, forever.
    f = compile_source(GUARDED_READ)
    a = np.concatenate([np.full(5, 10.0), np.zeros(20)])
    b = np.arange(5.0)
    for _ in range(ADAPT_AFTER + 5):
        check(f, a, b, 1.0)
    assert "recompiling without 'entry-bounds'" in f.explain() or native_completions(f) > 0, f.explain()
    before = f.stats["deopts"]
    for _ in range(10):
        check(f, a, b, 1.0)
    assert f.stats["deopts"] == before and native_completions(f) >= 10, f.explain()
    check(f, np.full(25, 10.0), b, 1.0)  # a real IndexError still deoptimises, and raises


SUM = "def f(a, b):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i] * b[i]\n    return s\n"


def test_infinite_arguments_get_precise_float_tests() -> None:
    # A function that only reads defers its float tests to a flag that any infinity or
    # NaN sets; with an infinity among the arguments every call ran again in CPython
    # (which gives the same infinity, without a warning). Recompiled, each product and
    # sum tests itself, and an infinity from an infinite operand is no warning.
    f = compile_source(SUM)
    a = np.array([1.0, math.inf, 3.0] * 10)
    for _ in range(ADAPT_AFTER + 5):
        check(f, a, a)
    before = f.stats["deopts"]
    for _ in range(10):
        check(f, a, a)
    assert f.stats["deopts"] == before and native_completions(f) >= 10, f.explain()
    check(f, np.array([1e200, 1.0]), np.array([1e200, 1.0]))  # a real overflow still warns


def test_a_guard_that_fails_where_cpython_differs_stays() -> None:
    # An int that outgrows int64 in every call: no assumption of the native code fails
    # but the one CPython's result needs; the signature stays (the import hook's cost
    # model decides whether it pays), recompiling it would change nothing.
    f = compile_source("def f(n):\n    x = 1\n    for _ in range(n):\n        x = x * 3 + 1\n    return x\n")
    for n in range(60, 60 + ADAPT_AFTER + 10):
        check(f, n)
    assert f.stats["deopts"] == ADAPT_AFTER + 10 and "recompiling" not in f.explain(), f.explain()
