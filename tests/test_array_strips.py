"""Innermost loops of writing functions that also run in exit-free strips
(cuvil_bc/lower/strips.py): a guard in a strip only sets a flag, every store is logged,
and a strip whose flag is set is undone and redone by the ordinary loop, which
deoptimises precisely. Whatever fails where in a strip, the result, the warnings, the
exception and every array's final contents must be CPython's.

Each kernel is first checked to run in strips at all (its LLVM IR has the strip loop),
so that these tests cannot pass by testing the ordinary loop only.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cuvil_bc.lower.strips import STRIP
from cuvil_bc.testing import arrays, check, check_with, compile_source, equivalent, native_ran, numbers, overflowing_vectors, run_with_warnings, same_value

from .test_equiv_array_writes import DISTANCES  # out[i, j] = math.sqrt(dx * dx + dy * dy)

pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


SCALE = build(
    """
def f(a, k):
    for i in range(len(a)):
        a[i] = a[i] * k
    return len(a)
"""
)

SMOOTH = build(
    """
def f(src, dst):
    for i in range(1, len(src) - 1):
        dst[i] = 0.5 * (src[i - 1] + src[i + 1])
"""
)

SHIFTED = build(
    """
def f(a, out):
    for i in range(len(a)):
        out[i + 3] = a[i] + 1.0
"""
)

INT_DIVIDE = build(
    """
def f(out, k):
    for i in range(len(out)):
        out[i] = 1000 // (k - i)
"""
)

CHAIN = build(
    """
def f(a, b):
    for i in range(1, len(a)):
        a[i] = b[i - 1] * 0.5 + 1.0
"""
)

ROWS = build(
    """
def f(src, dst):
    n, m = src.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            dst[i, j] = 0.25 * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1])
"""
)


WRAPPED = build(
    """
def f(a, out):
    for i in range(len(a)):
        out[i - 1] = a[i] * 10.0
"""
)

ACCUMULATE = build(
    """
def f(a, acc):
    for i in range(len(a)):
        acc[0] = acc[0] + a[i]
        acc[1] = a[i]
"""
)


def runs_in_strips(f, *args) -> bool:  # type: ignore[no-untyped-def]
    f(*args)
    return "strip.loop" in f.inspect_llvm()


def test_kernels_run_in_strips() -> None:
    a = np.arange(10.0)
    assert runs_in_strips(SCALE, a.copy(), 2.0)
    assert runs_in_strips(SMOOTH, a, np.zeros(10))
    assert runs_in_strips(SHIFTED, a, np.zeros(13))
    assert runs_in_strips(INT_DIVIDE, np.zeros(10, dtype=np.int64), 100)
    assert runs_in_strips(CHAIN, a.copy(), a)
    assert runs_in_strips(ROWS, np.ones((4, 5)), np.zeros((4, 5)))
    assert runs_in_strips(ACCUMULATE, a, np.zeros(2))


@pytest.mark.parametrize("at", [0, 1, STRIP - 1, STRIP, STRIP + 7, 2 * STRIP + 30])
def test_overflow_anywhere_in_a_strip(at: int) -> None:
    # NumPy warns at element `at` (an overflow to inf); the elements before it are
    # written, the rest follow in the interpreter.
    a = np.linspace(1.0, 2.0, 2 * STRIP + 40)
    a[at] = 1e308
    check(SCALE, a, 10.0)
    assert SCALE.stats["deopts"] >= 1


@pytest.mark.parametrize("at", [3, STRIP - 2, STRIP + 1])
def test_warning_as_error_stops_at_the_same_element(at: int) -> None:
    # With warnings as errors the first overflow raises: exactly the elements before
    # it are written. A strip that wrote past it must have been undone.
    a = np.full(3 * STRIP, 3.0)
    a[at] = 1e308
    expected = run_with_warnings(SCALE.py_func, (a, 10.0), strict=True)
    got = run_with_warnings(SCALE, (a, 10.0), strict=True)
    assert expected[0] == "raise" and got[:2] == expected[:2]
    assert same_value(expected[2][0], got[2][0])
    assert int((got[2][0] == 30.0).sum()) == at  # written: before `at` only


def test_index_out_of_bounds_mid_strip() -> None:
    # out[i + 3] runs off the end of `out` at i == 87: NumPy's IndexError then, with
    # the 87 writes before it made, and none after.
    check(SHIFTED, np.arange(100.0), np.zeros(90))
    check(SHIFTED, np.arange(100.0), np.zeros(103))
    assert native_ran(SHIFTED)


def test_nothing_outside_the_array_is_touched() -> None:
    # `out` is the start of a bigger buffer: the strip that runs off its end reads and
    # writes a scratch slot instead, and undoing the strip must not write past the
    # end either.
    buffer = np.full(120, 7.0)
    with pytest.raises(IndexError):
        SHIFTED(np.arange(100.0), buffer[:90])
    assert (buffer[90:] == 7.0).all()
    assert (buffer[3:90] == np.arange(87.0) + 1.0).all()


def test_undo_restores_a_wrapped_element() -> None:
    # out[i - 1] writes out[-1] first: the strip's addresses do not simply advance by
    # one element, and undoing it (an overflow at `at`) must restore out[-1] and
    # write nothing before out's start.
    for at in (5, STRIP + 5):
        a = np.linspace(1.0, 2.0, 2 * STRIP)
        a[at] = 1e308
        buffer = np.arange(2 * STRIP + 20.0)  # every old value differs
        out = buffer[10 : 10 + 2 * STRIP]
        expected = buffer.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            WRAPPED.py_func(a, expected[10 : 10 + 2 * STRIP])
            WRAPPED(a, out)
        assert same_value(expected, buffer)
    assert "strip.loop" in WRAPPED.inspect_llvm()


def test_zero_divisor_mid_strip() -> None:
    # 1000 // (k - i) divides by zero at i == k: ZeroDivisionError after k writes (the
    # strip computes it with a harmless divisor and only sets its flag).
    for k in (5, STRIP + 3, 1000):
        check(INT_DIVIDE, np.zeros(STRIP + 50, dtype=np.int64), k)
    assert native_ran(INT_DIVIDE)


def test_reads_see_the_strips_own_writes() -> None:
    # a is b: each iteration reads the element the previous one wrote.
    def same() -> tuple[np.ndarray, np.ndarray]:
        a = np.arange(3 * STRIP, dtype=np.float64)
        return a, a

    check_with(CHAIN, same)

    def overlapping() -> tuple[np.ndarray, np.ndarray]:
        base = np.arange(3 * STRIP + 8, dtype=np.float64)
        return base[8:], base[:-8]

    check_with(CHAIN, overlapping)
    check_with(SMOOTH, same)
    assert native_ran(CHAIN) and native_ran(SMOOTH)


def test_stores_to_the_same_element_are_undone() -> None:
    # acc[0] and acc[1] are written in every iteration: undoing a strip restores the
    # values they had before it, not some value from within it.
    a = np.linspace(1.0, 2.0, 3 * STRIP)
    for at in (2, STRIP + 9):
        b = a.copy()
        b[at] = 1e308
        b[at + 1] = 1e308  # the sum overflows here
        check(ACCUMULATE, b, np.zeros(2))
        expected = run_with_warnings(ACCUMULATE.py_func, (b, np.zeros(2)), strict=True)
        got = run_with_warnings(ACCUMULATE, (b, np.zeros(2)), strict=True)
        assert expected[0] == "raise" and got[:2] == expected[:2] and same_value(expected[2][1], got[2][1])


ROW_FROM_MEMORY = build(
    """
def f(b, k, x):
    n = b.shape[0]
    for j in range(len(x)):
        b[int(k[0]) % n, j] = x[j] * 10.0
        k[0] = 1
"""
)


def test_a_row_index_read_in_the_loop() -> None:
    # The row of the store comes from k[0], which the strip itself changes after the
    # first element: undoing the strip (an overflow at `at`) must restore the
    # elements it really wrote, in both rows.
    for at in (3, STRIP + 3):
        x = np.linspace(1.0, 2.0, STRIP + 20)
        x[at] = 1e308
        check(ROW_FROM_MEMORY, np.arange(2.0 * (STRIP + 20)).reshape(2, STRIP + 20), np.zeros(1, dtype=np.int64), x)
    assert "strip.loop" in ROW_FROM_MEMORY.inspect_llvm()


def test_a_nan_fails_a_strip_without_a_deopt() -> None:
    # A NaN input sets the strip's flag (its test is conservative), but NumPy does not
    # warn for it: the ordinary loop finishes the call natively.
    a = np.linspace(0.0, 1.0, 4 * STRIP)
    a[STRIP + 5] = np.nan
    deopts = SCALE.stats["deopts"]
    check(SCALE, a, 3.0)
    assert SCALE.stats["deopts"] == deopts


def test_rows_of_a_stencil() -> None:
    rng = np.random.default_rng(7)
    src = rng.random((6, 2 * STRIP + 5))
    check(ROWS, src, np.zeros_like(src))
    src[3, STRIP + 2] = 1e308  # overflows in the middle of a row's second strip
    check(ROWS, src, np.zeros_like(src))
    check(ROWS, src, np.zeros((6, 40)))  # dst too narrow: IndexError after some rows
    grid = rng.random((5, STRIP + 9))
    check_with(ROWS, lambda: (lambda g: (g, g))(grid.copy()))  # in place
    assert native_ran(ROWS)


@settings(max_examples=150, deadline=None)
@given(overflowing_vectors(3 * STRIP), numbers())
def test_scale_matches_cpython(a: np.ndarray, k: object) -> None:
    check(SCALE, a, k, native=a.flags.writeable)  # a read-only array runs in CPython (ValueError)


def test_int_kernels_match_cpython() -> None:
    equivalent(INT_DIVIDE, st.tuples(arrays("int64", max_dims=1, max_side=3 * STRIP), numbers(floats=False)), max_examples=100)


COLUMN_INTO_ROWS = build(
    """
def f(m):
    n = m.shape[0]
    for i in range(1, n):
        for j in range(n):
            m[i, j] = m[j, 0] * 0.5 + m[i - 1, j]
"""
)


def test_strips_read_along_any_axis() -> None:
    # pts[j, 0] moves by a row per iteration (a gather in a vectorized strip); only
    # the stores must move along the last axis.
    pts = np.random.default_rng(1).random((STRIP + 30, 2))
    assert runs_in_strips(DISTANCES, pts, np.zeros((STRIP + 30, STRIP + 30)))
    check(DISTANCES, pts, np.zeros((STRIP + 30, STRIP + 30)))
    assert native_ran(DISTANCES)


@pytest.mark.parametrize("at", [0, 5, STRIP + 2])
def test_gathered_reads_fail_mid_strip(at: int) -> None:
    # A huge coordinate makes dx * dx overflow at row `at`: NumPy warns there, and with
    # warnings as errors the call stops with exactly the elements before it written.
    pts = np.random.default_rng(2).random((STRIP + 10, 2))
    pts[at, 0] = 1e200
    out = np.zeros((STRIP + 10, STRIP + 10))
    check(DISTANCES, pts, out)
    expected = run_with_warnings(DISTANCES.py_func, (pts, out), strict=True)
    got = run_with_warnings(DISTANCES, (pts, out), strict=True)
    assert expected[0] == "raise" and got[:2] == expected[:2]
    assert same_value(expected[2][1], got[2][1])


def test_gathered_reads_see_the_strips_own_writes() -> None:
    # m[j, 0] reads the column that row i's first store (m[i, 0]) has just changed:
    # every read must see the writes made before it, as in CPython.
    for n in (3, 40, STRIP + 5):
        m = np.random.default_rng(n).random((n, n))
        assert runs_in_strips(COLUMN_INTO_ROWS, m.copy())
        check(COLUMN_INTO_ROWS, m)
        check_with(COLUMN_INTO_ROWS, lambda n=n: (np.arange(float(n * n)).reshape(n, n).T,))


def test_distances_into_the_points_themselves() -> None:
    # out is pts itself (2 points): the strip writes what later iterations read.
    check_with(DISTANCES, lambda: (np.array([[0.0, 3.0], [4.0, 0.0]]),) * 2)


@given(arrays("float64", min_dims=2, max_dims=2, max_side=12))
@settings(max_examples=150, deadline=None)
def test_distances_match_cpython(a: np.ndarray) -> None:
    assume(a.shape[1] >= 2)
    check(DISTANCES, a, np.zeros((a.shape[0], a.shape[0])))


COLUMNS_AFTER_WRITES = build(
    """
def f(a, out):
    for i in range(len(out)):
        out[i] = a[i, 0] + 1.0
    for i in range(len(out)):
        out[i] = out[i] * a[i, 2]
    return len(out)
"""
)


def test_constant_column_indices_are_tested_before_the_loop() -> None:
    # pts[j, 1] is tested once, before the strip (1 < pts.shape[1]): with no test
    # left in it the strip of square roots vectorizes.
    pts = np.random.default_rng(3).random((STRIP + 30, 2))
    check(DISTANCES, pts, np.zeros((STRIP + 30, STRIP + 30)))
    assert "@llvm.sqrt.v" in DISTANCES.inspect_llvm()
    # A missing column raises NumPy's IndexError where CPython does: in the second
    # loop, after the first one has written every element.
    for cols in (1, 2, 3, 5):
        check_with(COLUMNS_AFTER_WRITES, lambda cols=cols: (np.arange(40.0 * cols).reshape(40, cols), np.zeros(40)))
        check_with(DISTANCES, lambda cols=cols: (np.ones((7, cols)), np.zeros((7, 7))))
    check_with(COLUMNS_AFTER_WRITES, lambda: (np.ones((0, 1)), np.zeros(0)))  # no iteration: no error
    assert native_ran(COLUMNS_AFTER_WRITES)
