"""Math errors deferred in functions that only read (opt/finiteness.FloatTests.defers_math_error).

Where a `math` call's value reaches only arithmetic, other math calls, tuples and the
return, its domain and range test joins the deferred flag that every return tests,
instead of leaving the loop: a failed test re-runs the call in CPython, which raises
(ValueError, OverflowError) exactly as without cuvil_bc. Every test compares with
CPython running the same function.
"""

from __future__ import annotations

import math
import platform
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, math=math)


SQRT_SUM = build("def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += math.sqrt(a[i])\n    return s\n")
LOG_SUM = build("def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += math.log(a[i]) * 2.0\n    return s, len(a)\n")
EXP_SUM = build("def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s = s + math.exp(a[i]) - math.sqrt(math.exp(a[i]))\n    return s\n")
MEAN_DISTANCE = build(
    """
def f(pts):
    n = pts.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pts[i, 0] - pts[j, 0]
            dy = pts[i, 1] - pts[j, 1]
            s += math.sqrt(dx * dx + dy * dy)
    return s / (n * (n - 1) / 2)
"""
)
# The root steers a branch: its test is not deferred (a NaN must not pick a path
# CPython never takes), and the results are the same.
BRANCHES = build("def f(a):\n    n = 0\n    for i in range(len(a)):\n        if math.sqrt(a[i]) > 1.5:\n            n += 1\n    return n\n")
# Plain Python floats, no NumPy at all.
SCALAR = build("def f(x, n):\n    s = 0.0\n    for i in range(n):\n        s += math.sqrt(x - i) + math.log1p(x - 2 * i)\n    return s\n")

ERRORS = [np.array(v) for v in ([1.0, 4.0, -1.0, 9.0], [-0.0, 2.0], [0.0, 1.0, 2.0], [math.nan, 4.0], [math.inf, 1.0], [-math.inf], [800.0, 1.0], [1.0] * 100 + [-2.0] + [1.0] * 50)]


@pytest.mark.parametrize("f", [SQRT_SUM, LOG_SUM, EXP_SUM, BRANCHES], ids=["sqrt", "log", "exp", "branches"])
def test_errors_are_cpythons(f) -> None:  # type: ignore[no-untyped-def]
    # A negative root, log(0), exp(800) anywhere in the array: CPython's exception,
    # after the native loop has run to its end with the flag set.
    for a in ERRORS:
        check(f, a)
    check(f, np.linspace(0.5, 3.0, 1000))
    assert native_ran(f), f.explain()


def test_a_failed_test_reruns_the_call() -> None:
    # One deferred failure is one re-run in CPython, and its exception is CPython's.
    a = np.array([1.0, -1.0, 4.0])
    with pytest.raises(ValueError) as expected:
        SQRT_SUM.py_func(a)
    before = SQRT_SUM.stats["deopts"]
    with pytest.raises(ValueError) as got:
        SQRT_SUM(a)
    assert str(got.value) == str(expected.value)
    assert SQRT_SUM.stats["deopts"] == before + 1


@given(arrays("float64", max_dims=1, max_side=40, elements=st.floats(-5.0, 50.0) | st.sampled_from([0.0, -0.0, math.inf, math.nan, 710.0])))
@settings(max_examples=150, deadline=None)
def test_sums_match_cpython(a: np.ndarray) -> None:
    for f in (SQRT_SUM, LOG_SUM, EXP_SUM, BRANCHES):
        check(f, a)


@given(arrays("float64", min_dims=2, max_dims=2, max_side=10))
@settings(max_examples=150, deadline=None)
def test_mean_distance_matches_cpython(pts: np.ndarray) -> None:
    check(MEAN_DISTANCE, pts)  # shapes without two columns raise IndexError; 1 point, ZeroDivisionError


def test_scalar_functions_defer_too() -> None:
    equivalent(SCALAR, st.tuples(st.floats(-10.0, 1e6) | st.sampled_from([math.inf, math.nan, 0.0]), st.integers(0, 30)))
    assert SCALAR(100.0, 10) == SCALAR.py_func(100.0, 10)
    assert native_ran(SCALAR)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64's vector square root")
def test_the_loop_has_no_exit() -> None:
    # With its test deferred the loop has no exit, and LLVM vectorizes it (the sum's
    # adds kept in order): the point of deferring.
    SQRT_SUM(np.ones(100))
    assert "@llvm.sqrt.v" in SQRT_SUM.inspect_llvm()
    BRANCHES(np.ones(100))
    assert "@llvm.sqrt.v" not in BRANCHES.inspect_llvm()


# Powers: NumPy's (a np.float64 base) and Python's (a float base) in functions that
# only read. Their overflow joins the deferred flag, and the rare pow call of an exact
# square (lower/powers.py) has vector variants: the loop vectorizes.
SQUARES = build("def f(a, m):\n    s = 0.0\n    for i in range(len(a)):\n        s += (a[i] - m) ** 2\n    return s\n")
SCALAR_POWERS = build("def f(x, n):\n    s = 0.0\n    for i in range(n):\n        s += (x + i) ** 2 + (x - i) ** 3.0\n    return s\n")


@given(arrays("float64", max_dims=1, max_side=60, elements=st.floats(allow_nan=True, allow_infinity=True)), st.floats(-1e3, 1e3))
@settings(max_examples=150, deadline=None)
def test_powers_match_cpython(a: np.ndarray, m: float) -> None:
    check(SQUARES, a, m)  # 1e200 ** 2: NumPy's overflow warning, after the loop


def test_python_float_powers_defer_overflow() -> None:
    # (1e154 + i) ** 2 overflows: CPython's OverflowError, from a re-run.
    for x in (1.5, 1e154, 1e103, -1e103, math.inf, -math.inf, math.nan, -0.0):
        check(SCALAR_POWERS, x, 5)
    equivalent(SCALAR_POWERS, st.tuples(st.floats(), st.integers(0, 20)))
    assert native_ran(SCALAR_POWERS)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64's vector registers")
def test_squares_vectorize() -> None:
    # Full-mantissa data takes pow's slow path on a few percent of elements: the
    # vector loop tests its lanes once per vector and calls the variant's out-of-line
    # helper for those that need pow (and no scalar pow), and the sum is CPython's.
    a = np.random.default_rng(5).random(5000)
    check(SQUARES, a, 0.5)
    llvm = SQUARES.inspect_llvm()
    assert re.search(r"call <\d+ x double> @cb_pow_settle_\d+_v\d+m?_lanes", llvm), llvm
    assert native_ran(SQUARES)
