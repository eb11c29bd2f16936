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


def test_in_place_stays_out_of_groups() -> None:
    # a[i] = a[i] * k reads what it writes: a group would read before storing.
    f = build("def f(a, k):\n    for i in range(len(a)):\n        a[i] = a[i] * k\n")
    assert not runs_in_groups(f, np.arange(40.0), 2.0)


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
