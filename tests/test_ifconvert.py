"""If-conversion (opt/ifconvert.py), repeated reads (opt/reloads.py), and what they
open: strips and vector groups for loops with an ``if`` in them (opt/strip_plans.py).

Every test compares with CPython running the same function (values, types, warnings,
exceptions, the arrays afterwards) and checks that native code ran; the structural
tests check that the loop body became one block, which is what strips need.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.compiler import Compiler
from cuvil_bc.ir.printer import format_function
from cuvil_bc.opt.strip_plans import plan_strips
from cuvil_bc.testing import arrays, check, check_with, compile_source, native_ran
from cuvil_bc.typing.types import typeof


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, math=math)


def plans(f, *args):  # type: ignore[no-untyped-def]
    spec = Compiler().typed(f.py_func, tuple(typeof(a) for a in args))
    return spec.fn, plan_strips(spec.fn)


SIGN_INTO = build(
    """
def f(x, out):
    for i in range(len(x)):
        s = 0.0
        if x[i] > 0.0:
            s = 1.0
        elif x[i] < 0.0:
            s = -1.0
        out[i] = s * x[i]
"""
)
RELU_INTO = build(
    """
def f(x, out):
    for i in range(len(x)):
        if x[i] > 0.0:
            out[i] = x[i] * 2.0
        else:
            out[i] = 0.0
"""
)
COUNT_INTO = build(
    """
def f(x, out, t):
    n = 0
    for i in range(len(x)):
        if x[i] > t:
            n += 1
        out[i] = x[i] - t
    return n
"""
)
CLIP_COUNT = build(
    """
def f(x, lo, hi):
    out = np.empty(x.shape[0])
    clipped = 0
    for i in range(x.shape[0]):
        v = x[i]
        c = min(max(v, lo), hi)
        if c != v:
            clipped += 1
        out[i] = (c - lo) * 0.5
    return out, clipped
"""
)
# A reader: a conditional sum, with the arm's product run on both paths.
COND_SUM = build(
    """
def f(x, t):
    s = 0.0
    for i in range(len(x)):
        if x[i] > t:
            s = s + x[i] * 3.0
    return s
"""
)

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
WRITERS = [SIGN_INTO, RELU_INTO]


@pytest.mark.parametrize("f", WRITERS, ids=["sign", "relu"])
def test_branchy_writers_are_cpythons(f) -> None:  # type: ignore[no-untyped-def]
    for x in ([], [1.5], [-2.0, 0.0, -0.0, 3.0], [math.nan, math.inf, -math.inf, 1e308, -1e308], list(np.linspace(-3, 3, 41))):
        a = np.array(x, dtype=np.float64)
        check(f, a, np.zeros_like(a))
        check_with(f, lambda a=a: (lambda c: (c, c))(a.copy()))  # (x and out the same array)
    check(f, np.random.default_rng(1).normal(size=1000), np.zeros(1000))
    assert native_ran(f), f.explain()


@given(arrays("float64", max_dims=1, max_side=40))
@settings(max_examples=100, deadline=None)
def test_branchy_writers_on_drawn_arrays(a: np.ndarray) -> None:
    for f in WRITERS:
        if a.flags.writeable:
            check(f, a, np.empty_like(a))


@given(arrays("float64", max_dims=1, max_side=40), FLOATS)
@settings(max_examples=100, deadline=None)
def test_counts_and_sums(a: np.ndarray, t: float) -> None:
    check(COUNT_INTO, a, np.empty_like(a), t)
    check(COND_SUM, a, t)


def test_counts_and_sums_run_natively() -> None:
    x = np.random.default_rng(2).normal(size=3000)
    for t in (0.5, -math.inf, math.inf, math.nan, 1e308):
        check(COUNT_INTO, x, np.empty_like(x), t)
        check(COND_SUM, x, t)
    x[1234] = math.inf  # inf - inf: NumPy's warning, from the middle of a strip
    check(COUNT_INTO, x, np.empty_like(x), math.inf)
    check(COND_SUM, np.array([1e308, 1e308, -5.0]), 0.0)  # an overflow where it is picked
    check(COND_SUM, np.array([-1e308, 1.0]), 0.0)  # and one where it is not: no warning
    assert native_ran(COUNT_INTO) and native_ran(COND_SUM)


@given(arrays("float64", max_dims=1, max_side=30), FLOATS, FLOATS)
@settings(max_examples=100, deadline=None)
def test_clip_count_is_cpythons(a: np.ndarray, lo: float, hi: float) -> None:
    check(CLIP_COUNT, a, lo, hi)


@pytest.mark.parametrize(
    "f, args",
    [
        (SIGN_INTO, (np.zeros(4), np.zeros(4))),
        (RELU_INTO, (np.zeros(4), np.zeros(4))),
        (COUNT_INTO, (np.zeros(4), np.zeros(4), 0.5)),
        (CLIP_COUNT, (np.zeros(4), -1.0, 1.0)),
    ],
    ids=["sign", "relu", "count", "clip"],
)
def test_the_loops_become_strips(f, args) -> None:  # type: ignore[no-untyped-def]
    # One block per loop body: before, the ``if`` kept every one of these loops
    # element by element, with a branch the processor mispredicts on random data.
    fn, found = plans(f, *args)
    text = format_function(fn)
    assert "select" in text and "branch" not in text, text
    assert len(found) == 1, text


def test_both_arms_storing_become_one_store_in_groups() -> None:
    fn, found = plans(RELU_INTO, np.zeros(4), np.zeros(4))
    (plan,) = found.values()
    assert plan.vector is not None, format_function(fn)
    assert sum("setitem" in line for line in format_function(fn).splitlines()) == 1


# A hoisted int product that overflows int64 only on the path CPython does not take:
# a speculative deopt, then a compile without speculation; the result is CPython's.
OVERFLOW_ELSEWHERE = build(
    """
def f(a, b, flags):
    total = 0
    for i in range(len(flags)):
        v = 0
        if flags[i]:
            v = a * b
        total += v
    return total
"""
)


def test_a_hoisted_op_that_fails_elsewhere_only_costs_a_recompile() -> None:
    flags = np.array([False] * 10)
    for _ in range(3):
        check(OVERFLOW_ELSEWHERE, 2**40, 2**40, flags, native=False)
    check(OVERFLOW_ELSEWHERE, 3, 4, np.array([True, False, True]))
    assert native_ran(OVERFLOW_ELSEWHERE)


# Repeated reads with a store between them: the second read must see the store.
READ_STORE_READ = build(
    """
def f(x, out):
    total = 0.0
    for i in range(len(x)):
        a = x[i]
        out[i] = a + 1.0
        if x[i] > 0.0:
            total = total + x[i]
    return total
"""
)
# A read in one iteration and a store to it in the next: no read may be reused.
READ_ACROSS_ITERATIONS = build(
    """
def f(x):
    for i in range(1, len(x)):
        if x[i - 1] > 0.0:
            x[i] = x[i - 1] * 0.5
        else:
            x[i] = x[i - 1] + 1.0
    return x[len(x) - 1]
"""
)


def test_reads_after_stores_see_them() -> None:
    for x in ([1.0, -2.0, 3.0], [-1.0, -0.5, 0.0], list(np.linspace(-2, 2, 50))):
        a = np.array(x)
        check(READ_STORE_READ, a, np.zeros_like(a))
        check_with(READ_STORE_READ, lambda a=a: (a.copy(),) * 2)  # out is x: the store changes x[i]
        check(READ_ACROSS_ITERATIONS, a)
    assert native_ran(READ_STORE_READ) and native_ran(READ_ACROSS_ITERATIONS)


# Found by a helper attacking this change: each failed before its fix.
# NumPy compares an np.float32 with a Python number in float32 (after a cast that
# warns where the number does not fit): no vector group compares those as doubles.
F32_COMPARE = build(
    """
def f(x, y, out, t):
    for i in range(len(x)):
        b = y[i]
        out[i] = b if x[i] > t else 0.0
"""
)
# A product only compared, never stored: its overflow warning is CPython's.
COMPARED_ONLY = build(
    """
def f(x, y, out):
    for i in range(len(x)):
        out[i] = 1.0 if x[i] * y[i] > 0.0 else -1.0
"""
)
# A product computed on every path and dropped by the select: still tested.
DROPPED = build(
    """
def f(x, out, k):
    for i in range(len(x)):
        t = x[i] * k
        out[i] = t if x[i] < 0.0 else 0.0
"""
)
NAN_SIGNS = build(
    """
def f(x):
    a = x + math.nan
    b = x + (-math.nan)
    return math.copysign(1.0, a), math.copysign(1.0, b)
"""
)


def test_float32_compares_and_warnings_in_groups() -> None:
    n = 64
    for t in (0.1, 1e300, 16777217.0, 0.5, -math.inf, math.nan):
        for x in (np.full(n, 0.1, np.float32), np.full(n, 16777216.0, np.float32), np.linspace(-1, 1, n).astype(np.float32)):
            check(F32_COMPARE, x, np.ones(n), np.zeros(n), t)
    for v in (1e200, math.inf, 1.0, -1e200):
        check(COMPARED_ONLY, np.full(n, v), np.full(n, v), np.zeros(n))
        check(COMPARED_ONLY, np.full(n, v), np.full(n, -math.inf if v == math.inf else v), np.zeros(n))
        check(DROPPED, np.full(n, v), np.zeros(n), 1e300)
        check(DROPPED, np.full(n, -v), np.zeros(n), 1e300)
    assert native_ran(F32_COMPARE) and native_ran(COMPARED_ONLY) and native_ran(DROPPED)


def test_common_subexpressions_keep_nan_signs() -> None:
    check(NAN_SIGNS, 1.0)
    check(NAN_SIGNS, 2)
    assert native_ran(NAN_SIGNS)
