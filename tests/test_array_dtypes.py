"""Arrays of bool, int8-int32, uint8-uint64 and float32 (issue 4, section 1), against
CPython with NumPy.

Their elements are NumPy scalars of their own dtype: float(), int(), bool() and truth
tests, indexing with them, storing them, and stores into these arrays with NumPy's
casts (an int out of range raises OverflowError, a float overflowing float32 warns, a
Python int goes into float32 through a double), and arithmetic with NumPy's promotion.
Builtins, powers, math, bitwise ops and float stores on them: test_array_scalar_ops.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran

NARROW = ["float32", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"]


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py


READ = build(
    """
def f(a):
    s = 0.0
    n = 0
    k = 0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            x = a[i, j]
            s += float(x)
            k += int(x)
            if x:
                n += 1
    return s, n, k
"""
)

COPY = build(
    """
def f(src, dst, x):
    for i in range(min(len(src), len(dst))):
        dst[i] = src[i]
    if len(dst):
        dst[-1] = x
    return dst
"""
)

VALUES = [0, 1, -1, 127, 128, 255, 256, -129, 65535, 70000, 2**31, 2**40, -(2**63), 2**53 + 2**29 + 1,
          True, False, 2.5, -0.0, 1e300, -1e300, float("nan"), float("inf"), np.int64(2**53 + 2**29 + 1), np.float64(3.5e38)]


@pytest.mark.parametrize("dtype", NARROW)
def test_reading_elements(dtype: str) -> None:
    equivalent(READ, st.tuples(arrays(dtype, min_dims=2, max_dims=2)), max_examples=60)
    check(READ, np.arange(-6, 6).reshape(3, 4).astype(dtype))
    assert native_ran(READ)


@pytest.mark.parametrize("dtype", NARROW)
def test_stores_cast_as_numpy_does(dtype: str) -> None:
    src = (np.arange(-5, 7) * 37).astype(dtype)
    for x in VALUES:
        check(COPY, src, np.zeros(12, dtype=dtype), x)
    equivalent(COPY, st.tuples(arrays(dtype, max_dims=1), arrays(dtype, max_dims=1), st.integers(-(2**40), 2**40)), max_examples=60)
    assert native_ran(COPY)


def test_across_dtypes() -> None:
    for a, b in (("int8", "int64"), ("uint16", "int16"), ("float32", "float64"), ("bool", "int32"), ("int32", "float32"), ("uint32", "uint8")):
        src = (np.arange(-5, 7) * 1000).astype(a)
        check(COPY, src, np.zeros(12, dtype=b), 1)
    assert native_ran(COPY)


def test_creating_and_returning() -> None:
    make = build(
        """
def f(n, v):
    a = np.ones((n, 2), dtype=np.uint8)
    b = np.full(n, v, dtype=np.int16)
    c = np.zeros_like(a)
    d = np.empty(n, dtype="float32")
    for i in range(n):
        c[i, 1] = b[i]
        d[i] = i / 3 + int(c[i, 1])
    if v > 100:
        return d
    return np.ones(n, dtype=np.float32)
"""
    )
    for n, v in ((0, 1), (3, 7), (4, 300), (2, 40000), (-1, 1)):
        check(make, n, v)
    assert native_ran(make)
    rows = build("def f(n):\n    c = np.zeros((n, 2), dtype=np.uint8)\n    c[0, 1] = 200\n    return c.T[1]\n")
    check(rows, 3)
    assert native_ran(rows)
    element = build("def f(a, i):\n    return a[i]\n")  # an np.int8, np.float32, ...
    for dtype in NARROW:
        check(element, np.arange(3).astype(dtype), 1)
        check(element, np.arange(3).astype(dtype), 3)
    assert native_ran(element)


INT_ARITH = build(
    """
def f(a, b, x, y):
    p = a[0]
    q = a[1]
    r = b[0]
    return p + q, p - q, p * q, p / q, p // q, p % q, -p, +q, p + x, x - p, p * y, r + p, r * x, p < q, p == x, r >= y, p < y
"""
)

FLOAT_ARITH = build(
    """
def f(a, b, x, y):
    p = a[0]
    q = a[1]
    r = b[0]
    return p + q, p - q, p * q, p / q, -p, p + x, x - p, p * y, y / p, r + p, r * q, p < q, p == y, p <= x, r > p
"""
)

INTS = ["int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INTS)
def test_int_arithmetic_as_numpy(dtype: str) -> None:
    other = {"int8": "uint8", "int16": "int8", "int32": "uint16", "uint8": "int16", "uint16": "uint8", "uint32": "int32", "uint64": "uint8"}[dtype]
    pair = arrays(dtype, max_dims=1, max_side=3).filter(lambda a: a.size >= 2)
    one = arrays(other, max_dims=1, max_side=2).filter(lambda a: a.size >= 1)
    small = st.integers(-300, 300) | st.integers(-(2**40), 2**40)
    equivalent(INT_ARITH, st.tuples(pair, one, small, st.floats(allow_nan=True, allow_infinity=True)), max_examples=150)
    check(INT_ARITH, np.array([7, 2]).astype(dtype), np.array([3]).astype(other), 5, 2.5)
    assert native_ran(INT_ARITH)


def test_float32_arithmetic_as_numpy() -> None:
    pair = arrays("float32", max_dims=1, max_side=3).filter(lambda a: a.size >= 2)
    for other in ("float32", "int16", "uint8", "float64", "int32"):
        one = arrays(other, max_dims=1, max_side=2).filter(lambda a: a.size >= 1)
        numbers = st.integers(-(2**30), 2**30) | st.floats(allow_nan=True, allow_infinity=True)
        equivalent(FLOAT_ARITH, st.tuples(pair, one, numbers, st.floats(allow_nan=True, allow_infinity=True)), max_examples=80)
    check(FLOAT_ARITH, np.array([0.1, 3.0], dtype=np.float32), np.array([2], dtype=np.int16), 3, 0.1)  # 0.1 as float32
    assert native_ran(FLOAT_ARITH)


def test_narrow_accumulation() -> None:
    total = build("def f(a):\n    s = a[0] * 0\n    for i in range(len(a)):\n        s = s + a[i]\n    return s\n")
    for dtype in ("int8", "uint16", "float32"):
        check(total, np.arange(1, 30).astype(dtype))  # int8 overflows: NumPy wraps and warns
        check(total, np.ones(5, dtype=dtype))
    assert native_ran(total)
