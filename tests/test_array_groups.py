"""Vector groups (cuvil_bc/lower/groups.py): innermost loops of writing functions that
run `WIDTH` iterations at a time in vector code, a group storing nothing unless all
its values passed the test. Whatever fails where, the result, the warnings, the
exception and every array's final contents must be CPython's.

Each kernel is first checked to run in groups at all (its LLVM IR has the group
loop), so that these tests cannot pass by testing the ordinary loop only.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.lower.groups import WIDTH
from cuvil_bc.testing import arrays, check, check_with, compile_source, native_ran, run_with_warnings, same_value

pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


SMOOTH = build(
    """
def f(src, dst):
    j = -1
    for j in range(1, len(src) - 1):
        dst[j] = 0.5 * (src[j - 1] + src[j + 1]) - src[j] * 0.25
    return j
"""
)

STENCIL = build(
    """
def f(src, dst, w):
    n, m = src.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            dst[i, j] = w * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1])
"""
)

# After the loop, a value that overflows (a NumPy warning): the resume state there
# holds the loop's item, which the groups must have left right.
AFTER = build(
    """
def f(src, dst, big):
    k = 0
    for k in range(len(src)):
        dst[k] = src[k] * 2.0
    dst[0] = src[0] * big
    return k
"""
)

# A product whose value nobody uses: NumPy still warns when it overflows.
DEAD = build(
    """
def f(src, dst):
    for j in range(len(src)):
        src[j] * 1e300
        dst[j] = src[j] + 1.0
"""
)


def runs_in_groups(f, *args) -> bool:  # type: ignore[no-untyped-def]
    f(*args)
    return "group.body" in f.inspect_llvm()


def test_kernels_run_in_groups() -> None:
    assert runs_in_groups(SMOOTH, np.arange(40.0), np.zeros(40))
    assert runs_in_groups(STENCIL, np.ones((5, 30)), np.zeros((5, 30)), 0.25)
    assert runs_in_groups(AFTER, np.ones(30), np.zeros(30), 1.0)
    assert runs_in_groups(DEAD, np.ones(30), np.zeros(30))


def test_an_unused_value_is_tested() -> None:
    for at in (0, 5, WIDTH + 3):
        src = np.ones(3 * WIDTH)
        src[at] = 1e10  # 1e10 * 1e300 overflows
        check(DEAD, src, np.zeros(3 * WIDTH))
        expected = run_with_warnings(DEAD.py_func, (src, np.zeros(3 * WIDTH)), strict=True)
        got = run_with_warnings(DEAD, (src, np.zeros(3 * WIDTH)), strict=True)
        assert expected[0] == "raise" and got[:2] == expected[:2] and same_value(expected[2][1], got[2][1])


def test_in_place_at_the_element_runs_in_groups() -> None:
    # a[i] = a[i] * k reads only the element it writes: each lane reads its own
    # element before the group stores. a[i] = a[i - 1] * k reads the one the
    # previous iteration wrote: a group would read it before that store.
    f = build("def f(a, k):\n    for i in range(len(a)):\n        a[i] = a[i] * k\n")
    assert runs_in_groups(f, np.arange(40.0), 2.0)
    for k in (2.0, 1e300, np.inf):
        check(f, np.linspace(1.0, 9.0, 3 * WIDTH + 3), k)
    shifted = build("def f(a, k):\n    for i in range(1, len(a)):\n        a[i] = a[i - 1] * k\n")
    assert not runs_in_groups(shifted, np.arange(40.0), 2.0)
    check(shifted, np.linspace(1.0, 9.0, 40), 1.5)


# Locals set in the body (a load and a float op): after the groups the loop's locals
# are those of its last iteration, which the return shows, and so does the resume
# state of the overflow after the loop (with warnings as errors, CPython's frame).
LOCALS = build(
    """
def f(src, dst, big):
    lap = 0.0
    mid = 0.0
    for j in range(1, len(src) - 1):
        mid = src[j]
        lap = src[j - 1] + src[j + 1] - 2.0 * mid
        dst[j] = mid + 0.25 * lap
    dst[0] = src[0] * big
    return lap, mid
"""
)


def test_locals_of_the_last_iteration() -> None:
    assert runs_in_groups(LOCALS, np.linspace(1.0, 2.0, 40), np.zeros(40), 1.0)
    for n in range(0, 3 * WIDTH + 4):
        src = np.random.default_rng(n).random(n) if n else np.zeros(0)
        for big in (1.0, 1e308):
            if n == 0 and big > 1.0:
                continue  # (src[0]: IndexError either way)
            check(LOCALS, src, np.zeros(n), big)
            got = run_with_warnings(LOCALS, (src, np.zeros(n), big), strict=True)
            assert got[:2] == run_with_warnings(LOCALS.py_func, (src, np.zeros(n), big), strict=True)[:2]
    src = np.linspace(1.0, 2.0, 40)
    src[30] = np.inf  # a group fails: the ordinary loop finishes
    check(LOCALS, src, np.zeros(40), 1.0)
    assert native_ran(LOCALS)


# Found by a helper: a local set in the body is not loop-invariant where it is read
# before it is set (`dst[j] = lap` stores the previous iteration's value), and a read
# of the stored element after the store must see the stored value.
PREVIOUS = build(
    """
def f(src, dst, x):
    lap = x
    for j in range(len(src)):
        dst[j] = lap * 2.0 + src[j]
        lap = src[j] * 3.0
    return lap
"""
)
READ_BACK = build(
    """
def f(a, out):
    t = 0.0
    for j in range(len(out)):
        out[j] = a[j] * 2.0
        t = out[j] + 1.0
    return t
"""
)


def test_locals_and_reads_in_body_order() -> None:
    for n in (1, WIDTH, 3 * WIDTH + 1):
        check(PREVIOUS, np.arange(float(n)), np.zeros(n), 7.0)
        check(READ_BACK, np.arange(float(n)), np.zeros(n))
    assert native_ran(PREVIOUS) and native_ran(READ_BACK)


# C += A B in i-k-j order: the row of c is read and written at the same element.
AXPY_ROWS = build(
    """
def f(a, b, c):
    n, m = a.shape
    p = b.shape[1]
    for i in range(n):
        for k in range(m):
            aik = a[i, k]
            for j in range(p):
                c[i, j] += aik * b[k, j]
    return c
"""
)


def test_accumulating_rows_run_in_groups() -> None:
    rng = np.random.default_rng(7)
    assert runs_in_groups(AXPY_ROWS, rng.random((3, 4)), rng.random((4, 30)), rng.random((3, 30)))
    for n, m, p in ((5, 4, 3 * WIDTH + 5), (2, 3, WIDTH), (1, 1, 1), (0, 2, 9), (4, 0, 20)):
        check(AXPY_ROWS, rng.random((n, m)), rng.random((m, p)), rng.random((n, p)))
    # An overflow in the middle of a row: NumPy's warning, with the elements before
    # it updated; an infinity already in c.
    big = np.ones((2, 3 * WIDTH))
    big[1, WIDTH + 2] = 1e308
    check(AXPY_ROWS, np.full((2, 2), 10.0), big, np.zeros((2, 3 * WIDTH)))
    expected = run_with_warnings(AXPY_ROWS.py_func, (np.full((2, 2), 10.0), big, np.zeros((2, 3 * WIDTH))), strict=True)
    got = run_with_warnings(AXPY_ROWS, (np.full((2, 2), 10.0), big, np.zeros((2, 3 * WIDTH))), strict=True)
    assert expected[0] == "raise" and got[:2] == expected[:2] and same_value(expected[2][2], got[2][2])
    c = np.ones((2, 3 * WIDTH))
    c[0, 5] = np.inf
    check(AXPY_ROWS, np.ones((2, 2)), np.ones((2, 3 * WIDTH)), c)
    # b and c the same array: the reads of b overlap the row written.
    check_with(AXPY_ROWS, lambda: (np.full((20, 20), 0.5),) + (np.linspace(0.0, 1.0, 400).reshape(20, 20),) * 2)
    assert native_ran(AXPY_ROWS)


@pytest.mark.parametrize("at", [1, 2, WIDTH - 1, WIDTH, WIDTH + 1, 3 * WIDTH + 5, 40])
def test_overflow_anywhere_in_a_group(at: int) -> None:
    # NumPy warns at element `at` (src[at - 1] + src[at + 1] overflows to inf); with
    # warnings as errors the call stops there with exactly the elements before it
    # written.
    src = np.linspace(1.0, 2.0, 48)
    src[at - 1] = src[at + 1] = 1e308
    check(SMOOTH, src, np.zeros(48))
    expected = run_with_warnings(SMOOTH.py_func, (src, np.zeros(48)), strict=True)
    got = run_with_warnings(SMOOTH, (src, np.zeros(48)), strict=True)
    assert expected[0] == "raise" and got[:2] == expected[:2]
    assert same_value(expected[2][1], got[2][1])


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_non_finite_inputs(value: float) -> None:
    # A group with an infinity or NaN fails its test; NumPy may not warn at all
    # (inf + 1.0): the ordinary loop then finishes the call natively.
    src = np.linspace(1.0, 2.0, 50)
    src[17] = value
    check(SMOOTH, src, np.zeros(50))
    m = np.ones((6, 40))
    m[3, 20] = value
    check(STENCIL, m, np.zeros((6, 40)), 0.25)
    assert native_ran(SMOOTH)


def test_the_item_after_the_loop() -> None:
    # The local k after the loop is the last item, also where a later warning resumes
    # the interpreter, for every remainder of the length modulo the group's width.
    for n in range(1, 3 * WIDTH + 2):
        src = np.linspace(1.0, 2.0, n)
        for big in (1.0, 1e308):
            check(AFTER, src, np.zeros(n), big)
            got = run_with_warnings(AFTER, (src, np.zeros(n), big), strict=True)
            assert got[:2] == run_with_warnings(AFTER.py_func, (src, np.zeros(n), big), strict=True)[:2]


def test_overlapping_arrays_skip_the_groups() -> None:
    # dst a shifted view of src: the reads must see the writes before them.
    for shift in (-1, 1, 2, WIDTH):
        def views(shift: int = shift):  # type: ignore[no-untyped-def]
            buf = np.linspace(1.0, 3.0, 64)
            return (buf[8:56], buf[8 + shift : 56 + shift])
        check_with(SMOOTH, views)
    check_with(SMOOTH, lambda: (np.linspace(1.0, 2.0, 40),) * 2)
    check_with(STENCIL, lambda: (np.linspace(1.0, 2.0, 200).reshape(5, 40),) * 2 + (0.25,))


def test_rows_and_strided_arrays() -> None:
    # Rows of a 2-D grid with a row remainder of every size; a transposed destination
    # (not unit-stride) and strided sources run elsewhere, with the same results.
    for m in range(3, 3 * WIDTH + 4):
        src = np.random.default_rng(m).random((5, m))
        check(STENCIL, src, np.zeros((5, m)), 0.25)
    src = np.random.default_rng(0).random((30, 30))
    check(STENCIL, src, np.zeros((30, 30)).T, 0.25)
    check(STENCIL, src[:, ::2], np.zeros((30, 15)), 0.25)


@given(arrays("float64", max_dims=1, max_side=60, elements=st.floats(allow_nan=True, allow_infinity=True) | st.floats(-10.0, 10.0) | st.sampled_from([1e308, -1e308])))
@settings(max_examples=200, deadline=None)
def test_smooth_matches_cpython(a: np.ndarray) -> None:
    check(SMOOTH, a, np.zeros(len(a)))


# float32 arrays: np.float32 ops run in single precision in the groups, as NumPy
# computes them; a float32 value meets a float64 one in double precision.
SMOOTH32 = build("def f(src, dst):\n    for j in range(1, len(src) - 1):\n        dst[j] = 0.25 * src[j - 1] + 0.5 * src[j] + 2 * src[j + 1]\n")
MIXED = build("def f(a32, b64, out):\n    for j in range(len(out)):\n        out[j] = a32[j] * b64[j] + a32[j] * 3.0\n")


def test_float32_groups() -> None:
    rng = np.random.default_rng(9)
    f32 = lambda *shape: rng.random(shape).astype(np.float32)  # noqa: E731
    assert runs_in_groups(SMOOTH32, f32(40), np.zeros(40, np.float32))
    assert runs_in_groups(AXPY_ROWS, f32(3, 4), f32(4, 30), f32(3, 30))
    assert runs_in_groups(MIXED, f32(30), rng.random(30), np.zeros(30))
    for n, m, p in ((5, 4, 3 * WIDTH + 5), (2, 3, WIDTH), (0, 2, 9)):
        check(AXPY_ROWS, f32(n, m), f32(m, p), f32(n, p))
    for n in (3, WIDTH + 1, 3 * WIDTH + 2):
        check(MIXED, f32(n), rng.random(n), np.zeros(n))
        check(MIXED, f32(n), np.full(n, 1e300), np.zeros(n))
    # float32 overflow (3e38 * 2), an infinity or a NaN at every position of a group:
    # NumPy's warnings, and with warnings as errors the elements before it written.
    for at in (1, 2, WIDTH, WIDTH + 1, 2 * WIDTH + 3):
        for value in (3e38, np.inf, np.nan):
            src = f32(3 * WIDTH + 4)
            src[at] = value
            check(SMOOTH32, src, np.zeros(len(src), np.float32))
            expected = run_with_warnings(SMOOTH32.py_func, (src, np.zeros(len(src), np.float32)), strict=True)
            got = run_with_warnings(SMOOTH32, (src, np.zeros(len(src), np.float32)), strict=True)
            assert got[:2] == expected[:2] and same_value(expected[2][1], got[2][1])
    assert native_ran(SMOOTH32) and native_ran(MIXED)


@given(arrays("float32", max_dims=1, max_side=40, elements=st.floats(width=32) | st.sampled_from([3e38, -3e38, 1e-45])))
@settings(max_examples=150, deadline=None)
def test_float32_groups_match_cpython(a: np.ndarray) -> None:
    check(SMOOTH32, a, np.zeros(len(a), np.float32), native=len(a) > 0)
