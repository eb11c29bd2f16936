"""Arithmetic on ``float | np.float64`` values in functions that only read
(lower/aggregates.twin_arithmetic, opt/finiteness.twin_float).

``g = 0.0`` and then, under an ``if``, ``g = x[i] * 2.0`` makes ``g`` a float or an
np.float64; so is a sum that starts at ``0.0`` and adds it. Native code computes such
``+ - *`` once, as NumPy's op, with the result's type an ``or`` of the operands' tags,
and tests the result for being finite where the finiteness plan says (a float result
that CPython gives silently, an infinity, costs a re-run in CPython). Every test
compares with CPython running the same function: the value, its type (float or
np.float64), the warnings, the exception.
"""

from __future__ import annotations

import math
import platform

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, math=math)


# The union comes from a branch; the sum is a union too.
RELU_SUM = build(
    """
def f(x):
    s = 0.0
    for i in range(len(x)):
        g = 0.0
        if x[i] > 0.0:
            g = x[i]
        s = s + g * 2.0
    return s
"""
)
# The branch tests the index: the first element adds a float 0.0, the others an
# np.float64. An array of one element gives a Python float.
GRADIENT = build(
    """
def f(x):
    n = len(x)
    g2 = 0.0
    for i in range(n):
        g = 0.0
        if i > 0:
            g = 200.0 * (x[i] - x[i - 1] * x[i - 1])
        g2 += g * g
    return g2
"""
)
# The accumulator on the right of - and *, and a plain float operand.
RIGHT = build(
    """
def f(x, c):
    s = 1.0
    p = 1.0
    for i in range(len(x)):
        g = c
        if x[i] < 0.5:
            g = x[i]
        s = g - s
        p = (g + 1.0) * p
    return s, p
"""
)
# Python floats only until an element is negative: a float result that overflows
# is CPython's inf without a warning; an np.float64 one warns.
SCALED = build(
    """
def f(x, big):
    s = 1.0
    for i in range(len(x)):
        if x[i] < 0.0:
            s = s + x[i]
        else:
            s = s * big
    return s
"""
)


# A function that writes: its tests deopt precisely. `c` is a Python float where
# the value is clipped, else an np.float64; a zero `span` raises ZeroDivisionError
# for a float `c` and warns for an np.float64 one (``nan / 0.0``: neither for NumPy).
CLIP_INTO = build(
    """
def f(x, lo, hi, span, scale):
    out = np.empty(len(x))
    clipped = 0
    for i in range(len(x)):
        c = min(max(x[i], lo), hi)
        if c != x[i]:
            clipped += 1
        out[i] = (c - lo) / span * scale
    return out, clipped
"""
)


# A float `g` that is already an infinity or NaN, divided by zero: CPython raises
# ZeroDivisionError; NumPy's test alone would not see anything to warn about.
DIVIDE_INTO = build(
    """
def f(x, a, span):
    out = np.empty(len(x))
    for i in range(len(x)):
        g = a
        if x[i] > 0.0:
            g = x[i]
        out[i] = g / span
    return out
"""
)


def floats64(**kw):  # type: ignore[no-untyped-def]
    return st.floats(allow_nan=True, allow_infinity=True, width=64, **kw)


@pytest.mark.parametrize("f", [RELU_SUM, GRADIENT], ids=["relu", "gradient"])
def test_sums_of_twin_unions_are_cpythons(f) -> None:  # type: ignore[no-untyped-def]
    for a in ([], [1.5], [-1.5], [2.0, -3.0], [1e200, 1e200], [1e308, 1e308], [math.inf, 1.0], [math.nan, -1.0], [-0.0, 0.0]):
        check(f, np.array(a, dtype=np.float64))
    check(f, np.random.default_rng(3).normal(size=1000))
    equivalent(f, st.tuples(arrays("float64", max_dims=1, max_side=40)), max_examples=100)
    assert native_ran(f), f.explain()


@given(arrays("float64", max_dims=1, max_side=30), floats64())
@settings(max_examples=100, deadline=None)
def test_accumulators_on_the_right(a: np.ndarray, c: float) -> None:
    check(RIGHT, a, c)


def test_accumulators_on_the_right_run_natively() -> None:
    check(RIGHT, np.linspace(0.0, 1.0, 50), 0.75)
    assert native_ran(RIGHT), RIGHT.explain()


def test_python_float_overflow_is_silent_and_numpy_overflow_warns() -> None:
    # All elements >= 0: s stays a Python float, and 1.0 * 1e200 * 1e200 is inf
    # without a warning. A negative element first: s is an np.float64, and NumPy
    # warns when the product overflows.
    for a in ([1.0, 2.0], [1.0, 2.0, 3.0], [-1.0, 2.0, 3.0], [1.0, -1.0, 2.0, 3.0], [-2.0]):
        for big in (1e200, 2.0, -1e300, math.inf, math.nan):
            check(SCALED, np.array(a), big)
    assert native_ran(SCALED), SCALED.explain()


@given(
    arrays("float64", max_dims=1, max_side=20),
    floats64(), floats64(), st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e-300, math.inf, math.nan]), st.sampled_from([1.0, 1e300, -1e308]),
)
@settings(max_examples=150, deadline=None)
def test_writers_compute_twins_once(a: np.ndarray, lo: float, hi: float, span: float, scale: float) -> None:
    check(CLIP_INTO, a, lo, hi, span, scale)


def test_writers_divide_like_cpython() -> None:
    x = np.array([0.5, -3.0, 7.0, math.nan, math.inf, -0.0])
    for lo, hi in ((-1.0, 1.0), (math.nan, 1.0), (-math.inf, math.inf), (2.0, 1.0)):
        for span in (0.0, -0.0, 2.0, math.nan):
            for scale in (1.0, 1e308, 0.0):
                check(CLIP_INTO, x, lo, hi, span, scale)
    check(CLIP_INTO, np.random.default_rng(5).normal(size=500), -1.0, 1.0, 2.0, 1.0)
    assert native_ran(CLIP_INTO), CLIP_INTO.explain()
    for a in (math.inf, -math.inf, math.nan, 1.0, 0.0):
        for span in (0.0, -0.0, 3.0, math.nan):
            for x in ([-1.0], [2.0], [-1.0, 2.0], [2.0, -1.0], [math.inf, -1.0]):
                check(DIVIDE_INTO, np.array(x), a, span)
    assert native_ran(DIVIDE_INTO), DIVIDE_INTO.explain()


def test_results_keep_their_types() -> None:
    # The type is part of the result (float for no np.float64 term, else np.float64):
    # `check` compares it with CPython's, here on both sides of each boundary.
    for x in ([-1.0, -2.0], [-1.0, 2.0]):
        check(RELU_SUM, np.array(x))
    for x in ([3.0], [3.0, 1.0]):
        check(GRADIENT, np.array(x))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64's vector registers")
@pytest.mark.parametrize("f", [RELU_SUM, GRADIENT], ids=["relu", "gradient"])
def test_union_sums_vectorize(f) -> None:  # type: ignore[no-untyped-def]
    # Lowered per tag, each union member had a phi of its own and the tests read the
    # tag: LLVM found no reduction, and the loop stayed scalar.
    check(f, np.random.default_rng(4).normal(size=3000))
    assert "x double>" in f.inspect_llvm(), f.inspect_llvm()
