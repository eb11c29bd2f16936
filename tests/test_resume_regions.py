"""Resume regions (opt/regions.py): a loop that only reads, inside a function that
writes, resumes every deoptimisation at the resume point before it and defers its
float warnings to its exits.

Each function here writes between or after its read-only loops, so a warning,
exception or deopt resumed at the wrong place shows as a missing or extra warning,
another exception, or other contents of the written array. Everything is compared
with CPython on the same arguments, with warnings recorded and as errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from cuvil_bc.opt.plans import format_plans
from cuvil_bc.testing import _compare, check, compile_source, native_ran, overflowing_vectors, run_with_warnings


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, math=math)


# A FIR filter: the accumulator of the inner loop is stored after it.
FIR_SRC = """
def f(x, taps):
    n = len(x)
    m = len(taps)
    y = np.zeros(n)
    for i in range(n):
        acc = 0.0
        kmax = min(m, i + 1)
        for k in range(kmax):
            acc += taps[k] * x[i - k]
        y[i] = acc
    return y
"""
FIR = build(FIR_SRC)
# Into an argument: what was written before a warning turned error stays visible.
ROWS_INTO = build(
    """
def f(a, b, out):
    for i in range(len(out)):
        s = 0.0
        for k in range(len(a)):
            s += a[k] * b[k] * (i + 1)
        out[i] = s
    return out[0]
"""
)
# A product the accumulator does not take: it tests itself (deferred).
LAST_PRODUCT = build(
    """
def f(a, b, out):
    for i in range(len(out)):
        last = 0.0
        for k in range(len(a)):
            last = a[k] * b[k] + i
        out[i] = last
"""
)
# Two loops deep: the outer read-only loop is the region, the inner sum its accumulator
# handed on to the outer one's.
NESTED_SRC = """
def f(a, b, out):
    for r in range(len(out)):
        e = 0.0
        for i in range(len(a)):
            t = 0.0
            for j in range(len(b)):
                d = a[i] - b[j]
                t += d * d
            e += t * r
        out[r] = e
"""
NESTED = build(NESTED_SRC)
# A sum taken only on some iterations, and a division NumPy warns about (x / 0).
CONDITIONAL = build(
    """
def f(a, b, out):
    for i in range(len(out)):
        s = 0.0
        for k in range(len(a)):
            if a[k] > i:
                s += a[k] / b[k]
        out[i] = s
"""
)
# Errors in the region: a math domain error and an index that leaves the array, after
# earlier iterations of the outer loop wrote.
RAISES = build(
    """
def f(a, idx, out):
    for i in range(len(out)):
        s = 0.0
        for k in range(len(idx)):
            s += math.sqrt(a[idx[k]] - i)
        out[i] = s
"""
)
# A Python int that leaves int64 in the region: native code deopts, CPython goes on.
BIG_INT = build(
    """
def f(a, out):
    for i in range(len(out)):
        t = 1
        for k in range(len(a)):
            t = t * 1000 + i
        out[i] = t + a[0]
"""
)

# A warning deferred in an iteration, then an exception in a later one: both are
# CPython's only if the exception resumes before the region too.
WARN_THEN_RAISE = build(
    """
def f(a, b, out):
    for i in range(len(out)):
        s = 0.0
        for k in range(len(a)):
            s += a[k] * b[k]
            if b[k] < -100.0:
                raise ValueError("too small")
            s += math.sqrt(b[k] + i)
        out[i] = s
"""
)

THREE = [ROWS_INTO, LAST_PRODUCT, NESTED, CONDITIONAL]
VECTORS = [
    ([1.0, 2.0, 3.0], [0.5, 0.25, 2.0]),
    ([1e300, 1.0, 2.0], [1e300, 1.0, 1.0]),  # overflow in the first iteration
    ([1.0, 2.0, 1e200], [1.0, 1.0, 1e200]),  # overflow in the last
    ([1.0, 1e160, 3.0], [2.0, 1e160, 1.0]),  # overflow only once multiplied by i + 1
    ([math.inf, 1.0, 1.0], [0.0, 1.0, 1.0]),  # inf * 0: invalid
    ([math.nan, 1.0, 1.0], [1.0, 1.0, 1.0]),
    ([-1e308, 1e308, 1.0], [1e308, 1e308, 1.0]),
    ([2.0, 3.0, 4.0], [0.0, 1.0, 0.0]),  # zero divisors
    ([], []),
]


def _vectors():  # type: ignore[no-untyped-def]
    for a, b in VECTORS:
        yield np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)


@pytest.mark.parametrize("f", THREE, ids=["rows_into", "last_product", "nested", "conditional"])
def test_warnings_and_writes_are_cpythons(f) -> None:  # type: ignore[no-untyped-def]
    for a, b in _vectors():
        for rows in (0, 1, 3):
            check(f, a, b, np.zeros(rows))
    assert native_ran(f), f.explain()


@pytest.mark.parametrize("f", THREE, ids=["rows_into", "last_product", "nested", "conditional"])
def test_warnings_as_errors_stop_where_cpython_stops(f) -> None:  # type: ignore[no-untyped-def]
    # The interpreter redoes the region from its resume point and raises at the op:
    # the rows written before are there, none after.
    for a, b in _vectors():
        args = (a, b, np.full(3, -1.0))
        expected = run_with_warnings(f.py_func, args, strict=True)
        actual = run_with_warnings(f, args, strict=True)
        _compare(f, args, expected, actual)


def test_fir_filter() -> None:
    taps = np.array([0.25, 0.5, 0.25])
    check(FIR, np.linspace(-1.0, 1.0, 50), taps)
    check(FIR, np.array([1.0, 1e308, 1e308, 2.0]), taps * 4.0)
    check(FIR, np.array([1.0, math.inf, 3.0]), np.array([0.0, 1.0]))
    check(FIR, np.zeros(0), taps)
    assert native_ran(FIR)


def test_errors_in_a_region_are_raised_where_cpython_raises() -> None:
    a = np.array([4.0, 9.0, 16.0, 0.5])
    check(RAISES, a, np.array([0, 1, 2]), np.zeros(3))
    check(RAISES, a, np.array([0, 3]), np.zeros(3))  # sqrt(0.5 - 1): ValueError in row 1
    check(RAISES, a, np.array([2, 7, 1]), np.zeros(3))  # IndexError in row 0
    check(RAISES, a, np.array([2, -1, 1]), np.zeros(4))  # a[-1], then a domain error
    assert native_ran(RAISES)


def test_a_deferred_warning_before_an_exception() -> None:
    for args in (
        ([1e300, 1.0], [1e300, -5.0]),  # overflow, then a math domain error
        ([1e300, 1.0], [1e300, -500.0]),  # overflow, then the raise statement
        ([1.0, 1e300], [4.0, 1e300]),  # overflow in the last iteration
        ([1.0, 2.0], [-1.5, 3.0]),  # an error only in the first row
        ([1.0, 2.0], [4.0, 9.0]),
    ):
        a, b = (np.array(v) for v in args)
        for rows in (1, 3):
            check(WARN_THEN_RAISE, a, b, np.zeros(rows))
            expected = run_with_warnings(WARN_THEN_RAISE.py_func, (a, b, np.zeros(rows)), strict=True)
            actual = run_with_warnings(WARN_THEN_RAISE, (a, b, np.zeros(rows)), strict=True)
            _compare(WARN_THEN_RAISE, (a, b, np.zeros(rows)), expected, actual)
    assert native_ran(WARN_THEN_RAISE)


def _stops_where_cpython_stops(f, args: tuple) -> None:  # type: ignore[no-untyped-def]
    """With warnings as errors, CPython raises at the op that warns; the compiled call
    must raise the same, with the same argument contents, and soon: an alarm turns a
    native loop that runs on past that op (native loops see signals) into a failure."""
    import signal

    def late(signum, frame):  # type: ignore[no-untyped-def]
        raise TimeoutError("native code ran on past the op that warns")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(20)
    try:
        expected = run_with_warnings(f.py_func, args, strict=True)
        actual = run_with_warnings(f, args, strict=True)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert expected[0] == "raise"
    _compare(f, args, expected, actual)


def test_a_wrapped_int_deopts_where_it_wraps() -> None:
    # np.int64 products wrap with a warning. Deferred to the region's exit, the
    # wrapped value (2**40) would first set the length of the inner loop, where
    # CPython with warnings as errors stops at the product (found by a helper). The
    # alarm turns a run that does not stop into a failure (native loops see signals).
    f = build(
        """
def f(a, b, x, out):
    for i in range(len(out)):
        s = 0.0
        for k in range(len(a)):
            m = a[k] * b[k]
            for j in range(m):
                s += x[j % 3]
        out[i] = s
    return out
"""
    )
    check(f, np.array([2, 3]), np.array([3, 4]), np.ones(3), np.zeros(2))
    _stops_where_cpython_stops(f, (np.array([2**32 + 1]), np.array([2**40]), np.ones(3), np.zeros(1)))
    assert native_ran(f)


def test_an_overflow_that_picks_a_loops_length_is_tested_at_once() -> None:
    # A product's overflow decides, through a comparison, how long the next loop runs
    # (found by a helper): deferred to the region's exit, range(2**40) ran first,
    # where CPython with warnings as errors stops at the product.
    f = build(
        """
def f(a, x, out):
    for i in range(len(out)):
        s = 0.0
        for k in range(len(a)):
            t = a[k] * a[k]
            n = 1099511627776 if t > 1e308 else 3
            for j in range(n):
                s += x[j % 3]
        out[i] = s
"""
    )
    check(f, np.array([1.0, 2.0]), np.ones(3), np.zeros(2))
    _stops_where_cpython_stops(f, (np.array([1e200]), np.ones(3), np.zeros(1)))
    assert native_ran(f)


def test_an_int_beyond_int64_in_a_region() -> None:
    for n in (0, 2, 5, 8):  # 1000**7 fits int64, 1000**8 does not
        check(BIG_INT, np.ones(n), np.zeros(3))
    assert native_ran(BIG_INT)


@given(overflowing_vectors(10), overflowing_vectors(10))
@settings(max_examples=120, deadline=None)
def test_shapes_match_cpython(a: np.ndarray, b: np.ndarray) -> None:
    n = min(len(a), len(b))
    for f in THREE:
        check(f, a[:n], b[:n], np.zeros(2))
    if n:
        check(FIR, a, b[:n])


# -- The plans ------------------------------------------------------------------------


def _plans(src: str, *args) -> str:  # type: ignore[no-untyped-def]
    f = build(src)
    f(*args)
    (spec,) = f.dispatcher._spec(None)
    return format_plans(spec.fn)


def test_plans_name_the_regions_and_their_accumulators() -> None:
    text = _plans(FIR_SRC, np.ones(8), np.ones(3))
    assert "regions:" in text and "resumes at" in text, text
    # The accumulator's sums test nothing: the block the loop exits to tests it once.
    assert "warning test conservative" not in text and "warning test precise" not in text, text
    assert "accumulators" in text, text
    text = _plans(NESTED_SRC, np.ones(3), np.ones(3), np.zeros(2))
    assert text.count("resumes at") == 1, text  # the outermost loop that only reads


@pytest.mark.parametrize(
    "src",
    [
        # the loop writes
        "def f(a, out):\n    for i in range(len(out)):\n        s = 0.0\n        for k in range(len(a)):\n            s += a[k]\n            out[i] = s\n",
        # a while loop need not end: a NaN could keep it running where CPython raised
        "def f(a, out):\n    for i in range(len(out)):\n        s = 0.0\n        k = 0\n        while k < len(a):\n            s += a[k]\n            k += 1\n        out[i] = s\n",
        # a call of a Python function may do anything
        "def f(a, out):\n    for i in range(len(out)):\n        s = 0.0\n        for k in range(len(a)):\n            s += a[k]\n            g()\n        out[i] = s\n",
    ],
    ids=["writes", "while", "calls"],
)
def test_loops_that_are_no_region(src: str) -> None:
    def g() -> None:
        pass

    f = compile_source(src, np=np, g=g)
    args = (np.array([1.0, 1e308, 1e308]), np.zeros(2))
    check(f, *args)
    (spec,) = f.dispatcher._spec(None)
    assert "resumes at" not in format_plans(spec.fn)
