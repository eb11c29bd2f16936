"""Indices proven in bounds of arrays the function created (opt/bounds.py: `VALUE`
uppers and `creation_extent`): ``for x in range(width)`` indexes an array made by
``np.zeros((steps + 1, width))`` without a test, and ``(x - 1) % width`` needs no
zero-divisor test either. Each function runs against CPython on edge sizes (zero,
negative: NumPy's ValueError) and on hypothesis-drawn ones; the plans must show the
proofs, and a bound that is one too large must not be proven."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.compiler import Compiler
from cuvil_bc.opt.plans import format_plans
from cuvil_bc.testing import check, compile_source, native_ran
from cuvil_bc.typing.types import typeof

AUTOMATON = """
def f(rule, width, steps):
    hist = np.zeros((steps + 1, width), dtype=np.uint8)
    if width > 0:
        hist[0, width // 2] = 1
    for t in range(steps):
        for x in range(width):
            l = hist[t, (x - 1) % width]
            c = hist[t, x]
            r = hist[t, (x + 1) % width]
            hist[t + 1, x] = (rule >> (4 * l + 2 * c + r)) & 1
    return hist
"""
# out has n items, the loop runs n + k times: an IndexError when k > 0, from the
# store that CPython fails on, after the stores before it. Not proven: tested before
# the loop, and the interpreter takes over where the test fails.
ONE_TOO_FAR = """
def f(n, k):
    out = np.zeros(n)
    s = 0
    for i in range(n + k):
        out[i] = i * 2.0
        s += i
    return out, s
"""
# np.full_like and np.ones((m,)) with the extents of other values.
LIKE = """
def f(a, m):
    out = np.zeros_like(a)
    w = np.ones((m,))
    for i in range(len(a)):
        out[i] = a[i] * 2.0
    for j in range(m):
        w[j] = w[j] + j
    return out, w
"""


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


def plans(src: str, *args) -> str:  # type: ignore[no-untyped-def]
    ns: dict = {"np": np}
    exec(src, ns)
    spec = Compiler().typed(ns["f"], tuple(typeof(a) for a in args))
    return format_plans(spec.fn)


def test_automaton_indices_are_proven() -> None:
    text = plans(AUTOMATON, 30, 9, 4)
    proven = [line for line in text.splitlines() if "[0] proven, [1] proven" in line]
    assert len(proven) == 4, text  # three loads and the store in the loop


@given(st.integers(0, 255), st.integers(-2, 12), st.integers(-2, 6))
@settings(max_examples=120, deadline=None)
def test_automaton_matches_cpython(rule: int, width: int, steps: int) -> None:
    check(AUTOMATON_F, rule, width, steps, native=width >= 0 and steps >= -1)


AUTOMATON_F = build(AUTOMATON)


def test_automaton_runs_natively() -> None:
    check(AUTOMATON_F, 30, 41, 20)
    check(AUTOMATON_F, 110, 1, 3)  # (x - 1) % 1 and (x + 1) % 1 are 0
    assert native_ran(AUTOMATON_F)


def test_a_bound_past_the_extent_is_tested() -> None:
    f = build(ONE_TOO_FAR)
    text = plans(ONE_TOO_FAR, 3, 1)
    assert "proven" not in text.split("bounds:")[1] and "tested on entry" in text, text
    for n, k in ((0, 0), (3, 0), (3, 1), (0, 1), (5, -2), (-1, 0)):
        check(f, n, k, native=n >= 0)
    assert native_ran(f)


def test_extents_of_like_and_tuples() -> None:
    f = build(LIKE)
    text = plans(LIKE, np.ones(3), 2)
    assert "tested where used" not in text.split("bounds:")[1], text
    for a, m in ((np.arange(4.0), 3), (np.zeros(0), 0), (np.arange(2.0), -1)):
        check(f, a, m, native=m >= 0)
    assert native_ran(f)


# j in range(i + 1) inside i in range(a.shape[0]): j < a.shape[0] too (the outer
# item's bound, chained), so L[j, ...] needs no test and the column indices one test
# before the loop; a matrix that is not square raises IndexError where CPython does.
TRIANGLE = """
def f(a):
    n = a.shape[0]
    L = np.zeros_like(a)
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s * 0.5
    return L
"""


def test_triangular_loops_chain_their_bounds() -> None:
    text = plans(TRIANGLE, np.ones((3, 3)))
    assert "tested where used" not in text.split("bounds:")[1], text
    f = build(TRIANGLE)
    rng = np.random.default_rng(4)
    for shape in ((4, 4), (1, 1), (0, 0), (3, 5), (5, 3), (2, 1), (0, 3)):
        check(f, rng.random(shape))
    assert native_ran(f)


# A loop over range(n), n an argument, indexing argument arrays: one test of n
# against each extent before the loop (`entry_tests` with a `VALUE` bound), none in
# it. Where the loop could step out of bounds the call deopts at the loop's entry and
# the interpreter does what CPython does: an IndexError after the earlier
# iterations' stores, or no error at all when the loop breaks first.
FIRST_N = """
def f(a, out, n):
    s = 0.0
    for i in range(n):
        if a[i] < 0.0:
            break
        out[i] = a[i] * 2.0
        s += a[i]
    return s
"""


def test_an_int_stop_is_tested_before_the_loop() -> None:
    text = plans(FIRST_N, np.ones(3), np.ones(3), 3)
    assert "tested on entry (< n)" in text and "tested where used" not in text.split("bounds:")[1], text
    f = build(FIRST_N)
    cases = [
        (np.arange(5.0), np.zeros(5), 5),
        (np.arange(5.0), np.zeros(5), 3),
        (np.arange(5.0), np.zeros(3), 5),  # IndexError from out[3], after three stores
        (np.arange(3.0), np.zeros(5), 4),  # IndexError from a[3]
        (np.array([1.0, -1.0, 2.0]), np.zeros(3), 10),  # breaks before leaving a
        (np.arange(3.0), np.zeros(3), -2),
    ]
    for a, out, n in cases:
        check(f, a, out, n)
    assert native_ran(f)


@given(st.integers(0, 8), st.integers(0, 8), st.integers(-1, 10), st.integers(-1, 8))
@settings(max_examples=120, deadline=None)
def test_int_stops_match_cpython(la: int, lo: int, n: int, neg: int) -> None:
    a = np.arange(1.0, la + 1.0)
    if 0 <= neg < la:
        a[neg] = -1.0
    check(FIRST_N_F, a, np.zeros(lo), n, native=False)


FIRST_N_F = build(FIRST_N)


# An int bound near int64's limit: the test before the loop computes n + 1 (or k's
# bound + 3) without wrapping around (found by a helper: the wrapped sum passed the
# test, and the loop stored past the array's end, or a read returned garbage).
PAST_THE_LIMIT = """
def f(a, n):
    for i in range(n):
        a[i + 1] = 1.0
    return a
"""
GUARDED_READ = """
def f(a, k, n):
    if k >= 0:
        if k - 3 < n:
            return a[k]
    return -1.0
"""


def test_bounds_near_the_int64_limit() -> None:
    f, g = build(PAST_THE_LIMIT), build(GUARDED_READ)
    for n in (2**63 - 1, 2**63 - 2, 3, 4, 10):
        check(f, np.zeros(5), n)
    for k, n in ((100000, 2**63 - 1), (2, 2**63 - 1), (4, 2), (2, 2**63 - 4), (7, 2**63 - 3)):
        check(g, np.arange(5.0), k, n)
    assert native_ran(f) and native_ran(g)
