"""Views in compiled code: ``m[i]`` (a row), ``m[i, j]`` of a 3-D array, ``a.T``, and
``a.dtype`` comparisons (issue 4, section 1), against CPython with NumPy.

A view shares its base's memory: reading and writing through it must act on the base,
returning it must give an array with the same contents, layout and writeability, and
the memory it shares must stay alive (native memory is reference-counted: see
tests/test_array_creation.py for the leak checks, which the fixture below repeats).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py


ROWS = build(
    """
def f(m):
    s = 0.0
    for i in range(m.shape[0]):
        row = m[i]
        for j in range(len(row)):
            s += row[j] * m[i][j]
    return s
"""
)

SCALE_ROWS = build(
    """
def f(m, x):
    for i in range(len(m)):
        row = m[i]
        for j in range(row.shape[0]):
            row[j] = row[j] * x
    return m[-1]
"""
)

TRANSPOSE = build(
    """
def f(m):
    t = m.T
    out = np.zeros_like(t)
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            out[i, j] = t[i, j] + t[i][j]
    return out
"""
)


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_rows_and_transposes_match_numpy(dtype: str) -> None:
    two_d = arrays(dtype, min_dims=2, max_dims=2)
    equivalent(ROWS, st.tuples(two_d), max_examples=100)
    equivalent(SCALE_ROWS, st.tuples(two_d, st.integers(-3, 3)), max_examples=100)
    equivalent(TRANSPOSE, st.tuples(two_d), max_examples=100)
    m = np.arange(12, dtype=dtype).reshape(3, 4)
    check(ROWS, m)
    check(SCALE_ROWS, m, 2)
    check(TRANSPOSE, m)
    assert native_ran(ROWS) and native_ran(SCALE_ROWS) and native_ran(TRANSPOSE)


def test_returned_views() -> None:
    cases = ["m.T", "m[1]", "m.T[0]", "m[-1].T", "m.copy().T", "np.ones((3, 2)).T[1]"]
    for expr in cases:
        fn = build(f"def f(m):\n    return {expr}\n")
        for m in (np.arange(12.0).reshape(3, 4), np.asfortranarray(np.arange(6.0).reshape(3, 2))[:, ::-1]):
            check(fn, m)
        ro = np.arange(8.0).reshape(2, 4)
        ro.flags.writeable = False
        check(fn, ro)  # a view of a read-only array is read-only
        assert native_ran(fn), expr
    view = build("def f(m):\n    return m[1]\n")(np.arange(6.0).reshape(2, 3))
    gc.collect()
    assert view.tolist() == [3.0, 4.0, 5.0]  # its memory outlives the call's argument tuple
    three = build("def f(c):\n    plane = c[1, 0]\n    return plane, c[0][1][2]\n")
    check(three, np.arange(24.0).reshape(2, 3, 4))
    check(three, np.arange(4.0).reshape(1, 2, 2))  # IndexError
    assert native_ran(three)


def test_out_of_bounds_row_raises_like_numpy() -> None:
    fn = build("def f(m, i):\n    r = m[i]\n    return r[0]\n")
    m = np.arange(6.0).reshape(2, 3)
    for i in (-3, -2, 0, 1, 2, 5):
        check(fn, m, i)
    assert native_ran(fn)


def test_dtype_comparisons_are_constants() -> None:
    fn = build(
        """
def f(a):
    if a.dtype == np.float64:
        return 1.5
    if a.dtype != np.dtype("int64"):
        return -1.0
    return 2.0
"""
    )
    check(fn, np.zeros(2))
    check(fn, np.zeros(2, dtype=np.int64))
    assert native_ran(fn)


def test_dtype_identity_runs_in_cpython() -> None:
    # a.dtype is only known to equal the array's dtype, not to be that object.
    ident = build("def f(a):\n    return a.dtype is np.dtype('float64')\n")
    check(ident, np.zeros(2), native=False)
    assert not native_ran(ident)


def test_a_local_that_is_a_unit_stride_or_an_any_stride_row() -> None:
    # m[0] keeps a C array's unit stride, m.T[0] does not: one local holding either
    # has the weaker type (typing.types.join), and both paths index it correctly.
    f = build(
        """
def f(m, flag):
    row = m[0] if flag else m.T[0]
    s = 0.0
    for i in range(len(row)):
        s += row[i] * (i + 1)
    return s
"""
    )
    m = np.arange(12.0).reshape(3, 4)
    for flag in (True, False):
        check(f, m, flag)
        check(f, np.asfortranarray(m), flag)
    assert native_ran(f)
    # The two rows meet in a phi of the any-stride type.
    assert any("array[float64, 1d] = phi" in line for line in f.inspect_ir().splitlines())
