"""Small cases that kill mutants `benchmarks/mutations.py` found surviving (a guard
dropped, a comparison flipped): each compares with CPython and checks native code ran,
and where a mutant only makes a guard fire needlessly, that the call did not deopt."""

from __future__ import annotations

import numpy as np

from cuvil_bc.testing import check, check_with, compile_source, native_ran


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


def test_a_strip_whose_every_add_overflows() -> None:
    # A flipped overflow test in a strip committed wrapped int64 sums without a word.
    f = build("def f(a, k):\n    for i in range(len(a)):\n        a[i] = a[i] + k\n    return 0\n")
    check_with(f, lambda: (np.full(64, 2**62, np.int64), 2**62))
    check_with(f, lambda: (np.full(64, 5, np.int64), 7))
    assert native_ran(f)


def test_zero_to_a_positive_power_does_not_deopt() -> None:
    f = build("def f(x, y):\n    return x ** y\n")
    for args in ((0.0, 2.0), (0.0, 0.5), (-0.0, 3.0), (2.0, 3.0)):
        check(f, *args)
    assert f.stats["deopts"] == 0 and native_ran(f)
    check(f, 0.0, -1.0)  # ZeroDivisionError: CPython's


def test_element_loads_and_stores_at_dtype_edges() -> None:
    load = build("def f(a):\n    return a[0]\n")
    check(load, np.array([2**63 - 1], np.uint64))
    check(load, np.array([2**63], np.uint64))  # held as an int64: deopts
    check(load, np.array([2**64 - 1], np.uint64))
    store = build("def f(a, x):\n    a[0] = x\n    return a[0]\n")
    for a, x in ((np.zeros(1, bool), 2), (np.zeros(1, bool), 0), (np.zeros(1, np.float32), 1e300),
                 (np.zeros(1, np.float32), 3.5), (np.zeros(1, np.float32), -1e300)):
        check(store, a, x)
    assert native_ran(load) and native_ran(store)


def test_arange_step_zero_and_narrow_results() -> None:
    arange = build("def f(n, s):\n    return np.arange(0, n, s)\n")
    for n, s in ((5, 1), (5, 2), (5, 0), (-5, -1)):
        check(arange, n, s)
    # (NumPy scalars of narrow dtypes compile as array elements, not as arguments.)
    narrow = build("def f(a):\n    return a[0] + 1\n")
    for x in (126, 127, -128):
        check(narrow, np.array([x], np.int8))
    widen = build("def f(a, y):\n    return a[0] + y\n")
    for x, y in ((1, 1e300), (1, 2.5), (3.0, -1e300)):
        check(widen, np.array([x], np.float32), y)
    quotient = build("def f(a):\n    return a[0] / a[1]\n")
    check(quotient, np.array([3.0, 2.0], np.float32))
    assert quotient.stats["deopts"] == 0
    power = build("def f(a, n):\n    return a[0] ** n\n")
    check(power, np.array([3], np.int8), 0)
    assert power.stats["deopts"] == 0
    assert native_ran(arange) and native_ran(narrow) and native_ran(widen) and native_ran(power)


def test_an_unused_numpy_product_still_warns() -> None:
    f = build("def f(x):\n    y = x * 1e308\n    return 0\n")
    check(f, np.float64(1.5))
    check(f, np.float64(1e10))  # overflow: NumPy warns although y is never used
    assert native_ran(f)


def test_a_write_whose_value_warns() -> None:
    f = build("def f(a, x):\n    a[0] = x * x\n    return 0\n")
    check(f, np.zeros(1), np.float64(3.0))
    check(f, np.zeros(1), np.float64(1e300))
    check(f, np.zeros(1, np.int64), np.int64(2**40))
    assert native_ran(f)


def test_adjacent_views_are_not_overlapping() -> None:
    f = build("def f(src, dst):\n    for i in range(len(src)):\n        dst[i] = src[i] * 2.0\n    return 0\n")

    def make():  # type: ignore[no-untyped-def]
        buf = np.arange(64.0)
        return buf[:32], buf[32:]

    check_with(f, make)
    assert f.stats["deopts"] == 0 and native_ran(f)


def test_a_shift_of_zero_beyond_the_width_is_zero() -> None:
    # A NumPy shift by a count beyond the dtype's width gives 0, or -1 for >> of a
    # negative value: not for >> of zero.
    f = build("def f(a, n):\n    return a[0] >> n\n")
    for value in (0, 5, -5):
        check(f, np.array([value], np.int8), 70)
    assert native_ran(f)


def test_arange_up_to_two_to_the_52_does_not_deopt() -> None:
    f = build("def f(n):\n    return np.arange(n, n + 3)\n")
    for n in (2**52 - 3, 5):  # stop is 2**52: the largest the guard lets through
        check(f, n)
    assert f.stats["deopts"] == 0 and native_ran(f)
