"""Compiled functions that write to NumPy arrays (issue 4, section 2: exact side effects).

A function that writes cannot be re-run when a guard fails: the interpreter resumes it
where native code stopped (`cuvil_bc/resume.py`). Every check compares, against CPython
running the same function with NumPy: the result or exception, the warnings, and the
final contents of every argument. A write applied twice, or one missing, shows up as
different contents.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cuvil_bc
from cuvil_bc.errors import CompileError
from cuvil_bc.testing import arrays, check, check_with, compile_source, equivalent, native_ran, numbers


def build(src: str, **extra):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, **extra)


SCALE = build(
    """
def f(a, k):
    for i in range(len(a)):
        a[i] = a[i] * k
    return a[0] if len(a) else 0
"""
)

PREFIX = build(
    """
def f(a):
    for i in range(1, len(a)):
        a[i] = a[i - 1] + a[i]
"""
)

STENCIL = build(
    """
def f(src, dst):
    n, m = src.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            dst[i, j] = 0.25 * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1])
    return n * m
"""
)

HISTOGRAM = build(
    """
def f(idx, hist):
    for i in range(len(idx)):
        hist[idx[i] % len(hist)] += 1
    return len(idx)
"""
)

REVERSE = build(
    """
def f(a):
    n = len(a)
    for i in range(n // 2):
        a[i], a[n - 1 - i] = a[n - 1 - i], a[i]
    return n
"""
)

MIXED = build(
    """
def f(a, x, flag):
    for i in range(len(a)):
        if i % 3 == 0:
            a[i] = x
        elif i % 3 == 1:
            a[i] = flag
        else:
            a[-i] = i * i
    return a[-1]
"""
)


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_in_place_kernels_match_cpython(dtype: str) -> None:
    equivalent(SCALE, st.tuples(arrays(dtype), numbers()), max_examples=120)
    equivalent(PREFIX, st.tuples(arrays(dtype)), max_examples=120)
    equivalent(REVERSE, st.tuples(arrays(dtype, max_dims=1)), max_examples=60)
    equivalent(MIXED, st.tuples(arrays(dtype, max_dims=1), numbers(), st.booleans()), max_examples=120)
    a = np.arange(7, dtype=dtype)
    check(SCALE, a, 3)
    check(PREFIX, a)
    check(REVERSE, a)
    check(MIXED, a, 5, True)
    # Overflow mid-way: NumPy wraps int64 with a warning, float64 goes to inf with one;
    # both are handed to the interpreter after earlier writes, which must not repeat.
    big = np.array([2**62, 2**62, 2**62, 5]) if dtype == "int64" else np.array([1e308, 1e308, 1.0, 2.0])
    check(PREFIX, big)
    check(SCALE, big, 3)
    assert native_ran(SCALE) and native_ran(PREFIX) and native_ran(REVERSE) and native_ran(MIXED)


def test_nan_payloads_are_not_values() -> None:
    # NumPy's nan1 + nan2 carries nan2's payload and sign here, native code nan1's
    # (IEEE 754 leaves the choice to the implementation): both are NaN, and the
    # harness compares NaNs as NaNs. Non-NaN bits are still compared exactly.
    import struct

    def nan(bits: int) -> float:
        return struct.unpack("<d", struct.pack("<Q", bits))[0]  # type: ignore[no-any-return]

    check(PREFIX, np.array([nan(0x7FF8000000000001), nan(0xFFF8000000000002), -0.0, 1.0]))
    assert native_ran(PREFIX)


def test_stencil_and_histogram_match_cpython() -> None:
    equivalent(STENCIL, st.tuples(arrays("float64", min_dims=2), arrays("float64", min_dims=2)), max_examples=150)
    src = np.random.default_rng(1).random((6, 7))
    check(STENCIL, src, np.zeros((6, 7)))
    check(STENCIL, src, np.zeros((3, 7)))  # dst too small: IndexError after some writes
    equivalent(HISTOGRAM, st.tuples(arrays("int64", max_dims=1), arrays("int64", max_dims=1)), max_examples=150)
    check(HISTOGRAM, np.arange(-20, 20, dtype=np.int64), np.zeros(5, dtype=np.int64))
    assert native_ran(STENCIL) and native_ran(HISTOGRAM)


def test_writes_happen_once_when_a_late_guard_fails() -> None:
    late = build(
        """
def f(a, x):
    for i in range(3):
        a[0] += 1
    return x * x
"""
    )
    a = np.zeros(2, dtype=np.int64)
    late(a, 3)
    assert a[0] == 3 and native_ran(late)
    check(late, np.zeros(2, dtype=np.int64), 2**40)  # x * x needs a big int: resumed
    assert late.stats["deopts"] >= 1
    assert "resumed the call at line" in late.explain()


def test_guards_failing_mid_loop() -> None:
    grows = build(
        """
def f(a, x):
    p = x
    for i in range(len(a)):
        p = p * p + 1
        a[i] = p % 1000
    return p % 1000
"""
    )
    divides = build(
        """
def f(a, d):
    t = 0
    for i in range(len(a)):
        a[i] = t
        d = d - 1
        t = 1000 // d
    return t
"""
    )
    warns = build(
        """
def f(a, x):
    for i in range(len(a)):
        a[i] = a[i] / x + i
    return a[0] if len(a) else 0.0
"""
    )
    a = np.zeros(8, dtype=np.int64)
    check(grows, a, 3)  # p overflows int64 after a few iterations
    check(divides, a, 4)  # ZeroDivisionError at i == 3, after three writes
    check(warns, np.ones(5), 0.0)  # NumPy's division-by-zero warning, then inf writes
    check(warns, np.ones(5), 2.0)
    equivalent(grows, st.tuples(arrays("int64", max_dims=1), st.integers(-5, 5)), max_examples=60)
    equivalent(divides, st.tuples(arrays("float64", max_dims=1), st.integers(-3, 8)), max_examples=60)
    assert native_ran(grows) and native_ran(divides) and native_ran(warns)


def test_raise_after_writes() -> None:
    capped = build(
        """
def f(a, k):
    for i in range(len(a)):
        if a[i] > k:
            raise ValueError("too big")
        a[i] = a[i] + 1
    return 0
"""
    )
    check(capped, np.arange(10.0), 4.0)
    check(capped, np.arange(10.0), 40.0)
    equivalent(capped, st.tuples(arrays("float64"), numbers(bools=False)), max_examples=80)
    assert native_ran(capped)


def test_while_loop_and_unbound_locals() -> None:
    stride = build(
        """
def f(a, step):
    i = 0
    while i < len(a):
        a[i] = 1000 // (step - 2)
        last = a[i] * 2
        i += step
    return i
"""
    )
    check(stride, np.zeros(9), 3)
    check(stride, np.zeros(9), 2)  # ZeroDivisionError while `last` is still unbound
    check(stride, np.zeros(0), 2)
    check(stride, np.zeros(9, dtype=np.int64), 2**63 - 5)  # i + step overflows int64
    assert native_ran(stride)


def test_native_callee_deopt_resumes_the_caller() -> None:
    ns: dict = {}
    exec("def helper(x):\n    return x * x\n", ns)
    caller = build(
        """
def f(a, x):
    for i in range(len(a)):
        a[i] = helper(x + i) % 7
    return x
""",
        helper=ns["helper"],
    )
    check(caller, np.zeros(6, dtype=np.int64), 5)
    check(caller, np.zeros(6, dtype=np.int64), 2**31 + 5)  # helper overflows int64 at i == 0
    check(caller, np.zeros(6, dtype=np.int64), 3037000497)  # ... only from i == 3 on
    assert native_ran(caller)


def test_writing_callee_is_not_called_natively() -> None:
    ns: dict = {"np": np}
    exec("def fill(a, v):\n    for i in range(len(a)):\n        a[i] = v\n    return v\n", ns)
    outer = build("def f(a):\n    return fill(a, 2) + 1\n", fill=ns["fill"])
    check(outer, np.zeros(3), native=False)
    assert not native_ran(outer)
    assert "writes to arrays" in outer.explain()
    strict = cuvil_bc.compile(outer.py_func, strict=True)
    with pytest.raises(CompileError, match="writes to arrays"):
        strict(np.zeros(3))


def test_read_only_destination_runs_in_cpython() -> None:
    a = np.arange(4.0)
    a.flags.writeable = False
    check(SCALE, a, 2.0, native=False)  # ValueError: assignment destination is read-only
    fill = build("def f(src, dst):\n    for i in range(len(src)):\n        dst[i] = src[i]\n    return 0\n")
    check(fill, a, np.zeros(4))  # reading a read-only array is fine
    assert native_ran(fill)


SHIFT = build(
    """
def f(src, dst):
    for i in range(min(len(src), len(dst))):
        dst[i] = src[i] + 1
    return 0
"""
)


def _overlapping(kind: str, n: int, dtype: str):  # type: ignore[no-untyped-def]
    base = np.arange(n, dtype=dtype)
    if kind == "same":
        return (base, base)
    if kind == "forward":
        return (base[:-1], base[1:])  # each write feeds the next read
    if kind == "backward":
        return (base[1:], base[:-1])
    if kind == "reversed":
        return (base, base[::-1])
    return (base[::2], base[1::2])  # interleaved: no overlap


@pytest.mark.parametrize("kind", ["same", "forward", "backward", "reversed", "interleaved"])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_aliased_arguments(kind: str, dtype: str) -> None:
    for n in (0, 1, 2, 7, 64):
        check_with(SHIFT, lambda: _overlapping(kind, n, dtype))
        check_with(PREFIX, lambda: (_overlapping(kind, n, dtype)[1],))
    assert native_ran(SHIFT)


@settings(max_examples=60, deadline=None, database=None)
@given(n=st.integers(0, 40), lo=st.integers(0, 10), hi=st.integers(0, 10), step=st.sampled_from([1, 2, -1]))
def test_aliased_views_property(n: int, lo: int, hi: int, step: int) -> None:
    def make():  # type: ignore[no-untyped-def]
        base = np.arange(n, dtype=np.float64)
        return (base[lo:][::step], base[hi:])

    check_with(SHIFT, make)


def test_assigning_a_whole_row_runs_in_cpython() -> None:
    # m[i] = v on a 2-D array sets the whole row (NumPy broadcasts): not an element store.
    rows = build("def f(m, v):\n    m[1] = v\n    m[0, 2] = v + 1\n    return 0\n")
    check(rows, np.zeros((3, 3)), 5.0, native=False)
    assert not native_ran(rows) and "assignment to a row" in rows.explain()


FLOAT_HISTOGRAM = build(
    """
def f(values, counts, lo, hi):
    nbins = len(counts)
    width = (hi - lo) / nbins
    for i in range(len(values)):
        k = int((values[i] - lo) / width)
        if 0 <= k < nbins:
            counts[k] += 1
"""
)

QUOTIENT_STORE = build(
    """
def f(values, out, w):
    for i in range(len(values)):
        out[i] = (values[i] - 1.0) / w
"""
)

RECIPROCAL = build(
    """
def f(values, out, w):
    for i in range(len(values)):
        out[i] = 1.0 / (values[i] * w) + int((values[i] + w) / (values[i] - w))
"""
)

DISTANCES = build(
    """
def f(pts, out):
    n = pts.shape[0]
    for i in range(n):
        for j in range(n):
            dx = pts[i, 0] - pts[j, 0]
            dy = pts[i, 1] - pts[j, 1]
            out[i, j] = math.sqrt(dx * dx + dy * dy)
    return n
""",
    math=math,
)

TESTED_TOO_LATE = build(
    """
def f(a, out, k):
    for i in range(len(a)):
        x = a[i] * k
        out[i] = 1.0
        out[i] = int(x * 2.0)
"""
)

WRAPPED_NEIGHBOURS = build(
    """
def f(grid):
    n, m = grid.shape
    s = 0
    for i in range(n):
        for j in range(m):
            s += grid[(i + 1) % n, j] - grid[i, (j + 1) % m] + i % n + (j + 2) % m + grid[i - 1, j - 1]
            grid[i, j] = s % 7
    return s
"""
)


def test_division_checked_by_its_consumer() -> None:
    # The np.float64 subtraction and division need no warning test of their own:
    # int() deopts on the infinity or NaN that comes with every warning, and resumes
    # where the interpreter then warns (or raises) itself. A quotient that is stored
    # keeps its own test.
    floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([1e308, -1e308, 0.0, 2.0**63])
    bounds = st.floats(allow_nan=True, allow_infinity=True) | st.floats(-4.0, 4.0)
    equivalent(
        FLOAT_HISTOGRAM,
        st.tuples(arrays("float64", max_dims=1, max_side=12, elements=floats), arrays("int64", max_dims=1), bounds, bounds),
        max_examples=200,
    )
    rng = np.random.default_rng(3)
    check(FLOAT_HISTOGRAM, rng.normal(0.0, 1.0, 500), np.zeros(16, dtype=np.int64), -3.0, 3.0)
    check(FLOAT_HISTOGRAM, np.array([0.5, 1e308, -1e308, np.nan]), np.zeros(4, dtype=np.int64), -1.0, 1.0)
    check(FLOAT_HISTOGRAM, np.array([0.5, 1.5]), np.zeros(4, dtype=np.int64), 1.0, 1.0)  # zero width
    equivalent(QUOTIENT_STORE, st.tuples(arrays("float64", max_dims=1, elements=floats), arrays("float64", max_dims=1), numbers()), max_examples=150)
    # A product that overflows to inf gives 1.0 / inf == 0.0: the division's divisor
    # passes nothing on, so the product keeps its own test.
    equivalent(RECIPROCAL, st.tuples(arrays("float64", max_dims=1, elements=floats), arrays("float64", max_dims=1), numbers()), max_examples=150)
    check(RECIPROCAL, np.array([1e300, 2.0]), np.zeros(2), 1e300)
    assert native_ran(FLOAT_HISTOGRAM) and native_ran(QUOTIENT_STORE) and native_ran(RECIPROCAL)


def test_locals_tested_by_a_later_consumer() -> None:
    # dx and dy are locals (seen by later resume points and the loop's phis), but a
    # non-finite dx or dy makes the sum non-finite, which is tested before anything
    # sees them: an overflow in dx still warns once, at dx, as in CPython.
    pts = np.array([[0.0, 1.0], [1e308, -1e308], [-1e308, 2.0], [np.inf, np.nan]])
    for k in range(1, 5):
        check(DISTANCES, pts[:k].copy(), np.zeros((k, k)))
    finite = st.floats(-1e308, 1e308) | st.sampled_from([np.inf, -np.inf, np.nan, 1e154, 0.0])
    equivalent(DISTANCES, st.tuples(arrays("float64", min_dims=2, max_dims=2, elements=finite), arrays("float64", min_dims=2, max_dims=2)), max_examples=150)
    assert native_ran(DISTANCES)
    # Here the first test of x (int()) comes after a write and its resume point: x
    # must test itself, or the interpreter would resume after the write with an
    # infinite x and never warn about the overflow.
    check(TESTED_TOO_LATE, np.array([1.0, 1e300, 2.0]), np.zeros(3), 1e10)
    check(TESTED_TOO_LATE, np.array([1.0, 2.0]), np.zeros(2), 3.0)
    assert native_ran(TESTED_TOO_LATE)


def test_remainders_of_loop_items() -> None:
    # (i + 1) % n for the item i of range(n) compiles to a compare; (j + 2) % m does
    # not qualify and divides. Both must give Python's values, on any shape.
    equivalent(WRAPPED_NEIGHBOURS, st.tuples(arrays("int64", min_dims=2, max_dims=2, elements=st.integers(-50, 50))), max_examples=150)
    check(WRAPPED_NEIGHBOURS, np.arange(12, dtype=np.int64).reshape(3, 4))
    check(WRAPPED_NEIGHBOURS, np.zeros((0, 3), dtype=np.int64))
    check(WRAPPED_NEIGHBOURS, np.ones((1, 1), dtype=np.int64))
    assert native_ran(WRAPPED_NEIGHBOURS)


CLIP = compile_source(
    """
def f(x, lo, hi, out):
    n = x.shape[0]
    clipped = 0
    span = hi - lo
    for i in range(n):
        v = x[i]
        c = min(max(v, lo), hi)      # an np.float64 or a float, element by element
        if c != v:
            clipped += 1
        out[i] = (c - lo) / span     # np.float64 warns where a float raises or is silent
    return out, clipped, c * 1e300
""",
)


def test_a_union_of_float_and_numpy_float_is_lowered_without_branches() -> None:
    """Each case of the union (a float, an np.float64) is computed and its result
    selected by the tag; each case's guards count only where it holds: a zero span
    raises ZeroDivisionError for a clipped (float) item and warns for another, an
    overflow warns only for an np.float64."""
    rng = np.random.default_rng(2)
    x = rng.normal(0.0, 2.0, 40)
    for lo, hi in ((-1.0, 1.0), (0.0, 0.0), (-1e308, 1e308), (1.0, 1.0), (-math.inf, math.inf)):
        for data in (x, np.array([0.5, -3.0, 3.0, math.nan, math.inf, -math.inf, 1e308])):
            check(CLIP, data, lo, hi, np.zeros(data.shape[0]))
    check(CLIP, np.array([5.0, 0.5]), 0.0, 1.0, np.zeros(2))
    assert native_ran(CLIP)
    assert "case.float" not in CLIP.inspect_llvm()  # (a split with branches names its cases)
