"""Loops with a recurrence in writing functions run in short buffered strips
(cuvil_bc/lower/strips.py, `StripPlan.buffered`): strips of `SHORT` iterations whose
stores wait in slots until the strip has succeeded, and whose float recurrence is
tested once, at the end. Whatever fails where, the result, the warnings,
the exception and every array's final contents must be CPython's; arrays that overlap
must not run in such strips at all (a delayed store would be missed by a read).

Each kernel is first checked to run in short strips (its LLVM IR commits one), so that
these tests cannot pass by testing the ordinary loop only.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.lower.strips import SHORT
from cuvil_bc.testing import arrays, check, check_with, compile_source, equivalent, native_ran, overflowing_vectors, run_with_warnings, same_value

pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


PREFIX = build(
    """
def f(a, out):
    acc = 0.0
    for i in range(len(a)):
        acc += a[i]
        out[i] = acc
    return acc
"""
)

# A recurrence through * and +, and a second store per iteration.
DECAY = build(
    """
def f(a, out, last, r):
    acc = 0.0
    for i in range(len(a)):
        acc = acc * r + a[i]
        out[i] = acc
        last[0] = i
    return acc
"""
)

# Starts from an int: the local is int | np.float64 (or int | np.int64 on int arrays).
INT_START = build(
    """
def f(a, out):
    acc = 0
    for i in range(len(a)):
        acc = acc + a[i]
        out[i] = acc
    return acc
"""
)

# A division on the cycle: not absorbed, tested in every iteration of the strip.
HALVING = build(
    """
def f(a, out):
    acc = 1.0
    for i in range(len(a)):
        acc = acc / 2.0 + a[i]
        out[i] = acc
"""
)

# The store runs ahead of the reads: out[i + 1] leaves `out` at its last element.
AHEAD = build(
    """
def f(a, out):
    acc = 0.0
    for i in range(len(a)):
        acc += a[i]
        out[i + 1] = acc
"""
)

# The same element written twice in every iteration, and a store that wraps.
TWICE = build(
    """
def f(a, out):
    acc = 0.0
    for i in range(len(a)):
        acc += a[i]
        out[0] = acc
        out[i - 1] = a[i]
"""
)

# Two arrays written, which may be one: only reads are kept apart from writes, so the
# strip runs, and its stores must reach memory in the order CPython makes them.
TWO_OUTPUTS = build(
    """
def f(a, out1, out2):
    acc = 0.0
    for i in range(len(a)):
        acc += a[i]
        out1[i] = acc
        out2[i] = a[i]
"""
)


def _runs_short_strips(f, *args) -> bool:  # type: ignore[no-untyped-def]
    f(*args)
    return "strip.commit" in f.inspect_llvm()


def test_kernels_run_in_short_strips() -> None:
    a = np.arange(20.0)
    assert _runs_short_strips(PREFIX, a, np.zeros(20))
    assert _runs_short_strips(DECAY, a, np.zeros(20), np.zeros(1, dtype=np.int64), 0.5)
    assert _runs_short_strips(INT_START, a, np.zeros(20))
    assert _runs_short_strips(INT_START, np.arange(20), np.zeros(20, dtype=np.int64))
    assert _runs_short_strips(HALVING, a, np.zeros(20))
    assert _runs_short_strips(AHEAD, a, np.zeros(21))
    assert _runs_short_strips(TWICE, a, np.zeros(20))
    assert _runs_short_strips(TWO_OUTPUTS, a, np.zeros(20), np.zeros(20))


POSITIONS = list(range(2 * SHORT + 2)) + [5 * SHORT - 1]


@pytest.mark.parametrize("at", POSITIONS)
def test_overflow_anywhere_in_a_strip(at: int) -> None:
    # The running sum overflows at element `at`: NumPy warns there once, and the
    # elements before and after are written as CPython writes them.
    a = np.linspace(1.0, 2.0, 6 * SHORT + 3)
    a[at] = 1.7e308
    a[at + 1] = 1.7e308
    check(PREFIX, a, np.zeros_like(a))
    check(DECAY, a, np.zeros_like(a), np.zeros(1, dtype=np.int64), 1.0)
    check(INT_START, a, np.zeros_like(a))
    check(TWICE, a, np.zeros_like(a))


@pytest.mark.parametrize("at", POSITIONS)
def test_warning_as_error_stops_at_the_same_element(at: int) -> None:
    # With warnings as errors the overflow raises: exactly the elements before it are
    # written. A strip that stored its whole buffer would have written past it.
    a = np.linspace(1.0, 2.0, 6 * SHORT + 3)
    a[at] = 1.7e308
    a[at + 1] = 1.7e308
    for fn, args in (
        (PREFIX, (a, np.full_like(a, -1.0))),
        (DECAY, (a, np.full_like(a, -1.0), np.full(1, -1, dtype=np.int64), 1.0)),
        (TWICE, (a, np.full_like(a, -1.0))),
    ):
        expected = run_with_warnings(fn.py_func, args, strict=True)
        got = run_with_warnings(fn, args, strict=True)
        assert expected[0] == "raise" and got[:2] == expected[:2]
        assert all(same_value(x, y) for x, y in zip(expected[2], got[2]))
        assert native_ran(fn)


@pytest.mark.parametrize("at", POSITIONS)
def test_np_int64_wraps_anywhere_in_a_strip(at: int) -> None:
    # int64 elements: the sum is an np.int64, which wraps with a warning (or raises
    # with warnings as errors) at `at`.
    a = np.ones(6 * SHORT + 3, dtype=np.int64)
    a[at] = 2**63 - 2
    check(INT_START, a, np.zeros_like(a))
    expected = run_with_warnings(INT_START.py_func, (a, np.full_like(a, -1)), strict=True)
    got = run_with_warnings(INT_START, (a, np.full_like(a, -1)), strict=True)
    assert expected[0] == "raise" and got[:2] == expected[:2] and same_value(expected[2][1], got[2][1])


def test_non_finite_inputs() -> None:
    # An infinity in the input makes the sum infinite without a warning; a later -inf
    # makes it NaN with one ("invalid value"); a NaN input warns about nothing.
    n = 5 * SHORT
    for marks in ({3: np.inf}, {3: np.inf, SHORT + 2: -np.inf}, {SHORT: np.nan}, {0: -np.inf, 2 * SHORT: np.inf}):
        a = np.linspace(1.0, 2.0, n)
        for k, v in marks.items():
            a[k] = v
        check(PREFIX, a, np.zeros(n))
        check(DECAY, a, np.zeros(n), np.zeros(1, dtype=np.int64), 0.5)
        check(HALVING, a, np.zeros(n))
    assert native_ran(PREFIX)


def test_short_arrays_and_the_tail() -> None:
    # Fewer elements than a strip, exactly one strip, and strips plus a tail.
    for n in (0, 1, SHORT - 1, SHORT, SHORT + 1, 3 * SHORT + 5):
        a = np.linspace(-1.0, 3.0, n)
        check(PREFIX, a, np.zeros(n))
        check(DECAY, a, np.zeros(n), np.zeros(1, dtype=np.int64), -1.5)


def test_index_out_of_bounds_in_a_strip() -> None:
    # out[i + 1] runs off the end of `out` at its last element (IndexError after the
    # writes before it), or `out` is shorter still.
    for n_out in (3 * SHORT + 1, 3 * SHORT, 2 * SHORT + 3, SHORT, 0):
        check(AHEAD, np.linspace(1.0, 2.0, 3 * SHORT), np.zeros(n_out))
    buffer = np.full(4 * SHORT, 7.0)
    with pytest.raises(IndexError):
        AHEAD(np.ones(3 * SHORT), buffer[: 2 * SHORT])
    assert (buffer[2 * SHORT :] == 7.0).all()
    assert native_ran(AHEAD)


def test_overlapping_arrays_give_cpythons_result() -> None:
    # The reads must see every earlier write. In place, shifted either way and through
    # a strided view: the strips must not run with their stores delayed.
    n = 6 * SHORT + 3

    def in_place() -> tuple[np.ndarray, np.ndarray]:
        a = np.linspace(1.0, 2.0, n)
        return a, a

    def reads_ahead() -> tuple[np.ndarray, np.ndarray]:
        base = np.linspace(1.0, 2.0, n + 3)
        return base[3:], base[:-3]

    def reads_behind() -> tuple[np.ndarray, np.ndarray]:
        base = np.linspace(1.0, 2.0, n + 3)
        return base[:-3], base[3:]

    def reversed_view() -> tuple[np.ndarray, np.ndarray]:
        base = np.linspace(1.0, 2.0, n)
        return base, base[::-1]

    def interleaved() -> tuple[np.ndarray, np.ndarray]:
        base = np.linspace(1.0, 2.0, 2 * n)
        return base[::2], base[1::2]  # disjoint elements in overlapping ranges

    for make in (in_place, reads_ahead, reads_behind, reversed_view, interleaved):
        check_with(PREFIX, make)
        check_with(TWICE, make)
    assert native_ran(PREFIX) and native_ran(TWICE)


def test_stores_to_one_array_through_two_names() -> None:
    # out1 is out2, or they overlap shifted by one element either way: the last
    # store to each element must be the one CPython makes last. (The reads of `a`
    # are apart from both, so the strips run.)
    n = 6 * SHORT + 3
    a = np.linspace(1.0, 2.0, n)

    def same() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = np.zeros(n)
        return a, out, out

    def shifted(k: int):  # type: ignore[no-untyped-def]
        def make() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            base = np.zeros(n + 1)
            return (a, base[1:], base[:-1]) if k > 0 else (a, base[:-1], base[1:])

        return make

    for make in (same, shifted(1), shifted(-1)):
        check_with(TWO_OUTPUTS, make)
    assert native_ran(TWO_OUTPUTS) and TWO_OUTPUTS.stats["deopts"] == 0


# A body too big for LLVM to unroll eight times on its own accord.
BIG = build(
    """
def f(a, b, out, out2):
    acc = 0.0
    acc2 = 1.0
    for i in range(len(a)):
        x = a[i] * 0.5 + b[i] * 0.25 - a[i] * b[i]
        y = x * x - 3.0 * x + 2.0
        acc = acc * 0.999 + y
        acc2 = acc2 + x * 0.001
        out[i] = acc + acc2 * y
        out2[i] = y - acc
    return acc
"""
)


def test_a_big_body_keeps_its_stores_in_registers() -> None:
    # The strip is unrolled completely whatever its size (loop metadata), so its
    # slots become registers: no stack slot is left in the optimised code. (Left in
    # memory, they made a strip twice as slow as the ordinary loop.)
    n = 4 * SHORT + 3
    a, b = np.linspace(1.0, 2.0, n), np.linspace(-1.0, 1.0, n)
    assert _runs_short_strips(BIG, a, b, np.zeros(n), np.zeros(n))
    assert "alloca" not in BIG.inspect_llvm()
    for at in (0, SHORT + 3, 3 * SHORT):
        c = a.copy()
        c[at] = 1e200  # x * x overflows there
        check(BIG, c, b, np.zeros(n), np.zeros(n))


def test_disjoint_views_of_one_buffer() -> None:
    # Two halves of one array do not overlap: the strips run, with the same result.
    def halves() -> tuple[np.ndarray, np.ndarray]:
        base = np.linspace(1.0, 2.0, 8 * SHORT)
        return base[: 4 * SHORT], base[4 * SHORT :]

    check_with(PREFIX, halves)
    check_with(PREFIX, lambda: (lambda h: (h[1], h[0]))(halves()))


def test_float32_and_narrow_ints() -> None:
    # Their sums are not absorbed: each element is tested in the strip.
    a32 = np.linspace(1.0, 2.0, 4 * SHORT).astype(np.float32)
    a32[SHORT + 3] = np.float32(3e38)
    a32[SHORT + 4] = np.float32(3e38)
    check(PREFIX, a32, np.zeros(4 * SHORT, dtype=np.float32))
    a8 = np.full(4 * SHORT, 20, dtype=np.int8)
    check(INT_START, a8, np.zeros(4 * SHORT, dtype=np.int8))
    check(INT_START, a8, np.zeros(4 * SHORT, dtype=np.int64))
    assert native_ran(INT_START)


@settings(max_examples=150, deadline=None)
@given(overflowing_vectors(5 * SHORT), st.data())
def test_prefix_matches_cpython(a: np.ndarray, data: st.DataObject) -> None:
    out = np.zeros(data.draw(st.integers(max(0, len(a) - 2), len(a) + 2)))
    check(PREFIX, a, out)
    check(DECAY, a, out, np.zeros(1, dtype=np.int64), data.draw(st.floats(-3.0, 3.0)))


def test_int_kernels_match_cpython() -> None:
    equivalent(INT_START, st.integers(0, 5 * SHORT).flatmap(
        lambda n: st.tuples(arrays("int64", max_dims=1, max_side=n), arrays("int64", max_dims=1, max_side=n + 1))
    ), max_examples=100)
