"""``np.float64(x)`` and ``np.float32(x)`` called in compiled code (typing/primitives.py
NUMPY_SCALARS, lowered in lower/builtins.py): the same value, type and warnings as
NumPy's, for Python numbers and NumPy scalars. Every test compares with CPython
running the same function."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran, numbers


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, math=math)


CONVERT = build("def f(x):\n    return np.float64(x), np.float32(x)\n")
# NumPy scalars as arguments: an element of each dtype, converted.
ELEMENTS = build("def f(a, i):\n    v = a[i]\n    return np.float64(v), np.float32(v), np.float32(v) * np.float32(0.5)\n")
# The usual accumulators: an np.float64 or np.float32 sum from the start, so the
# loop-carried value has one type.
SUM64 = build("def f(a):\n    s = np.float64(0.0)\n    for i in range(len(a)):\n        s += a[i] * a[i]\n    return s\n")
SUM32 = build("def f(a):\n    t = np.float32(0.0)\n    for i in range(len(a)):\n        t += np.float32(a[i]) * np.float32(2.5)\n    return t\n")
# Constant arguments: np.float32(1e300) warns at every call, never while compiling.
CONSTANT_OVERFLOW = build("def f(x):\n    return np.float32(1e300) + x\n")

EDGES = [0, 1, -5, True, False, 2**24, 2**24 + 1, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, 2**70, 10**400,
         0.1, -0.0, 1e300, -1e300, math.nan, math.inf, -math.inf, 3.4028235677973366e38, 3.4028235e38, 1.4e-45, 5e-324]


def test_python_numbers() -> None:
    for x in EDGES:
        check(CONVERT, x, native=not (isinstance(x, int) and x >= 2**64))
    equivalent(CONVERT, st.tuples(numbers()))
    assert native_ran(CONVERT)


@given(st.sampled_from(["float64", "float32", "int64", "bool"]).flatmap(lambda d: arrays(d, max_dims=1, min_dims=1, max_side=5)), st.integers(-6, 6))
@settings(max_examples=200, deadline=None)
def test_numpy_scalars(a: np.ndarray, i: int) -> None:
    check(ELEMENTS, a, i)  # (an index out of range raises IndexError in both)


def test_accumulators_run_natively() -> None:
    for a in (np.arange(10.0), np.zeros(0), np.array([1e200, 1e200]), np.linspace(-3, 3, 1000)):
        check(SUM64, a)
    for a in (np.arange(10.0), np.array([1e300, 1.0]), np.array([0.1, 0.2, 0.3], dtype=np.float32), np.arange(5), np.array([True, False])):
        check(SUM32, a)
    assert native_ran(SUM64) and native_ran(SUM32)
    assert "np.float64 = phi" in SUM64.inspect_ir()  # (not float | np.float64)


def test_constants_warn_when_called() -> None:
    # Constant folding leaves NumPy's calls to run time: folding np.float32(1e300)
    # would have warned once, while compiling, and never again.
    for x in (1.0, 2.5):
        check(CONSTANT_OVERFLOW, x, native=False)


def test_signaling_nan_cast_warns() -> None:
    # NumPy's float64 -> float32 cast of a signaling NaN warns "invalid value
    # encountered in cast"; a Python float's conversion does not.
    a = np.zeros(3)
    a.view(np.uint64)[0] = 0x7FF0000000000001
    a[1] = math.nan
    a[2] = 1.5
    cast = build("def f(a, i):\n    return np.float32(a[i])\n")
    for i in (0, 1, 2):
        check(cast, a, i, native=i == 2)
    check(CONVERT, float(a[0]))


# Conversions that set no floating-point flag fold: np.float32(0.5) in a loop body is
# a constant, so float32 vector groups take it (lower/groups.py).
SCALE32 = build(
    "def f(img, out):\n    n, m = img.shape\n    for i in range(n):\n        for j in range(m):\n"
    "            out[i, j] = img[i, j] * np.float32(0.5) + np.float32(1e-50)\n"
)


def test_quiet_conversions_fold() -> None:
    folded = build("def f(x):\n    return np.float32(0.1) * x, np.float64(7), np.float32(1e-50)\n")
    for x in (2.0, 1e39, math.nan):
        check(folded, x)
    assert "call" not in folded.inspect_ir() and "np.float32(0.1)" in folded.inspect_ir()
    rng = np.random.default_rng(5)
    for shape in ((3, 9), (1, 1), (0, 4), (17, 33)):
        img = rng.standard_normal(shape).astype(np.float32)
        img.flat[:2] = (3e38, np.nan)[: img.size]
        check(SCALE32, img, np.zeros_like(img))
    assert native_ran(SCALE32) and "group.body" in SCALE32.inspect_llvm()


def test_constants_follow_the_error_state_of_the_call() -> None:
    for state in ("raise", "ignore", "warn"):
        with np.errstate(over=state):  # type: ignore[arg-type]
            check(CONSTANT_OVERFLOW, 1.0, native=False)


# np.int64(x): an int's or bool's value, a float truncated toward zero; beyond int64
# (or a NaN) CPython raises OverflowError or ValueError, and NumPy's cast of an
# np.float64 warns: those deopt. np.int64(0) folds, so a counter that starts there
# has one type.
INT64 = build("def f(x):\n    return np.int64(x)\n")
COUNT64 = build("def f(x, t):\n    c = np.int64(0)\n    for i in range(len(x)):\n        c += x[i] > t\n    return c\n")
INT64_EDGES = [3, -(2**63), 2**63 - 1, True, 2.7, -2.7, -0.0, 1e300, math.nan, math.inf, -math.inf, 9.3e18,
               9.2233720368547748e18, -9.223372036854775808e18, -9.2233720368547768e18, np.float64(-2.5),
               np.float64(math.nan), np.float64(1e300), np.float64(-9.223372036854775808e18), np.int64(-5), np.True_]


def test_int64_conversions() -> None:
    for x in INT64_EDGES:
        check(INT64, x)
    equivalent(INT64, st.tuples(st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats(), st.booleans())))
    assert native_ran(INT64) and INT64.stats["deopts"] > 0
    for n in (0, 1, 50):
        check(COUNT64, np.linspace(-1.0, 1.0, n), 0.25)
    assert native_ran(COUNT64) and "call <int64>" not in COUNT64.inspect_ir()
