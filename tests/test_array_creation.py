"""Arrays created, stored and returned by compiled code (issue 4, section 1), and the
reference counting of their native memory.

Results are compared with CPython running the same function with NumPy: dtype, shape,
strides (NumPy's layout for each creator, including ``*_like`` of any layout), and
contents. The C runtime counts its live allocations (`cb_live_allocations`), which
must come back to where they were after any call, including calls that raise or hand
over to the interpreter half-way.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc._runtime import lib
from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran


def build(src: str, **extra):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, **extra)


pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py

BODY = """
def f(n, m, v):
    a = np.zeros(n)
    b = np.ones((n, m), dtype=np.int64)
    c = np.full((m, n), v)
    d = np.arange(n)
    e = np.empty(m, dtype=float)
    for i in range(m):
        e[i] = i * v
    s = 0
    for i in range(n):
        s += d[i] + b[i, 0]
        a[i] = c[0, i] if m > 0 else -1.0
"""
CREATE = build(BODY + "    return a, b, c, d, e, s\n")
RETURNING = build(BODY + "    if s > 100 or v > 5:\n        return e\n    return a\n")


def test_creators_match_numpy() -> None:
    for n, m in ((0, 0), (1, 1), (3, 4), (5, 0), (0, 5)):
        for v in (2.5, 7):
            check(RETURNING, n, m, v)
    check(RETURNING, -1, 2, 1.0)  # ValueError: negative dimensions are not allowed
    check(RETURNING, 2, -3, 1.0)
    assert native_ran(RETURNING)
    for n, m in ((0, 0), (3, 4), (5, 0)):
        check(CREATE, n, m, 2.5)  # a tuple of arrays
    assert native_ran(CREATE)


def test_each_creator_returned() -> None:
    cases = {
        "np.zeros(n)": [(0,), (4,)],
        "np.zeros((n, 2), dtype=np.int64)": [(3,)],
        "np.ones((2, n, 3))": [(2,)],
        "np.ones(n, 'int64')": [(3,)],
        "np.full(n, 1.5)": [(3,)],
        "np.full((n, n), 7)": [(2,)],
        "np.full(n, 3, dtype=np.float64)": [(2,)],
        "np.arange(n)": [(0,), (5,), (-3,)],
        "np.arange(2, n)": [(9,), (1,)],
        "np.arange(n, -5, -2)": [(6,), (-7,)],
        "np.arange(1, 10, n)": [(3,), (-1,), (0,)],
    }
    for expr, argsets in cases.items():
        fn = build(f"def f(n):\n    return {expr}\n")
        for args in argsets:
            check(fn, *args)
        assert native_ran(fn), expr
    equivalent(build("def f(a, b, c):\n    return np.arange(a, b, c)\n"), st.tuples(*[st.integers(-30, 30)] * 3), max_examples=150)


@pytest.mark.parametrize("dtype", ["np.int64", "np.int32", "np.int8", "np.uint8", "np.uint16", "float", "np.float32", "'int16'"])
def test_arange_with_a_dtype(dtype: str) -> None:
    """``np.arange(..., dtype=...)`` of ints: NumPy makes the first two items exactly
    (OverflowError where one does not fit the dtype) and extrapolates the others in the
    dtype (an int8 wraps past 127, a float32 rounds past 2**24): such calls deopt and
    CPython gives NumPy's array; the others run natively."""
    fn = build(f"def f(a, b, c):\n    return np.arange(a, b, c, dtype={dtype})\n")
    for args in [(0, 10, 1), (120, 130, 1), (-5, 5, 2), (3, -7, -3), (0, 0, 1), (250, 260, 1), (2**24 - 2, 2**24 + 3, 1), (0, 2**40, 2**39), (1, 5, 0)]:
        check(fn, *args, native=False)
    check(fn, 1, 9, 2)
    assert native_ran(fn)
    equivalent(fn, st.tuples(*[st.integers(-300, 300)] * 2, st.integers(-30, 30)), max_examples=100, native=False)
    one = build(f"def f(n):\n    return np.arange(n, dtype={dtype})\n")
    check(one, 7)
    check(one, 0)
    assert native_ran(one)


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_like_and_copy_follow_numpy_layouts(dtype: str) -> None:
    for creator in ("np.zeros_like(a)", "np.ones_like(a)", "a.copy()"):
        fn = build(f"def f(a):\n    b = {creator}\n    return b\n")
        equivalent(fn, st.tuples(arrays(dtype, max_dims=4, max_side=4)), max_examples=120)
        assert native_ran(fn), creator
    empty = build("def f(a):\n    b = np.empty_like(a, dtype=np.float64)\n    n = b.size\n    return b.shape, b.ndim, n\n")
    equivalent(empty, st.tuples(arrays(dtype, max_dims=3)), max_examples=60)
    fill = build(
        """
def f(a):
    b = np.empty_like(a)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j] + 1
    return b
"""
    )
    equivalent(fill, st.tuples(arrays(dtype, min_dims=2, max_dims=2)), max_examples=80)


def test_like_of_a_unit_stride_array_has_unit_stride() -> None:
    # Typed with unit stride, so that a loop storing into it can run in strips; a
    # prototype whose last axis is not its innermost (a broadcast row, stride 0) gets
    # NumPy's other layout from the interpreter: the creation deopts.
    fn = build(
        """
def f(a):
    b = np.empty_like(a)
    c = np.zeros_like(a, dtype=np.int32)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j] * 2.0
            c[i, j] = j
    return b, c
"""
    )
    check(fn, np.arange(12.0).reshape(3, 4))
    assert "array[float64, 2d, unit-stride] = call <numpy.empty_like>" in fn.inspect_ir()
    for a in (np.broadcast_to(np.arange(4.0), (3, 4)), np.zeros((0, 4)), np.zeros((3, 1)), np.arange(24.0).reshape(3, 8)[:, ::2][:, :1]):
        check(fn, a)
        assert [x.strides for x in fn(a)] == [x.strides for x in fn.py_func(a)]
    assert fn.stats["deopts"] >= 1


def test_arrays_in_locals_across_loops() -> None:
    pingpong = build(
        """
def f(a, steps):
    grid = a.copy()
    for t in range(steps):
        new = np.empty_like(grid)
        n = len(grid)
        for i in range(n):
            new[i] = 0.5 * (grid[i - 1] + grid[(i + 1) % n])
        grid = new
    return grid
"""
    )
    check(pingpong, np.arange(6.0), 0)
    check(pingpong, np.arange(6.0), 5)
    check(pingpong, np.zeros(0), 3)  # IndexError? no: the loop over an empty grid is empty
    check(pingpong, np.array([1e308, 1e308, 0.0]), 3)  # NumPy's overflow warning: resumed mid-call
    assert native_ran(pingpong)
    chooses = build(
        """
def f(a, k):
    out = None
    for i in range(k):
        out = np.zeros(len(a))
        out[0] = i
    if out is None:
        return a
    return out
"""
    )
    a = np.arange(3.0)
    assert chooses(a, 0) is a  # an argument comes back as the very same object
    check(chooses, a, 0)
    check(chooses, a, 3)
    assert native_ran(chooses)


def test_tuples_of_arrays() -> None:
    best = build(
        """
def f(n):
    best = (np.zeros(1), 0)
    for k in range(n):
        cand = np.full(2, k * 1.0)
        if k % 2 == 0:
            best = (cand, k)
    arr, k = best
    return arr, k, best
"""
    )
    for n in (0, 1, 5):
        check(best, n)
    r = best(5)
    assert r[0] is r[2][0]  # one array, in two places
    assert native_ran(best)


def test_returned_array_owns_its_memory() -> None:
    make = build("def f(n):\n    a = np.arange(n)\n    return a\n")
    r = make(10)
    assert isinstance(r, np.ndarray) and r.flags.writeable and r.flags.c_contiguous
    assert sys.getrefcount(r) == 2  # only `r` (and getrefcount's argument)
    before = lib.cb_live_allocations()
    del make
    gc.collect()
    assert r.sum() == 45 and lib.cb_live_allocations() == before  # still alive through r
    r[0] = 100
    del r
    gc.collect()
    assert lib.cb_live_allocations() == before - 1


def test_argument_refcounts_unchanged() -> None:
    f = build("def f(a, b):\n    c = a.copy()\n    for i in range(len(c)):\n        b[i] = c[i] * 2\n    return b\n")
    a, b = np.arange(5.0), np.zeros(5)
    ra, rb = sys.getrefcount(a), sys.getrefcount(b)
    for _ in range(100):
        out = f(a, b)
    assert out is b
    del out
    assert (sys.getrefcount(a), sys.getrefcount(b)) == (ra, rb)
    assert native_ran(f)


def test_no_leaks_over_many_calls_including_raising_ones() -> None:
    f = build(
        """
def f(n, k):
    tmp = np.ones(n)
    out = np.zeros(n)
    for i in range(n):
        out[i] = tmp[i] * 2 + 100 // (k - i)
    return out
"""
    )
    f(8, 100)  # compile
    gc.collect()
    tracemalloc.start()
    start_rss = _rss()
    base = lib.cb_live_allocations()
    snap0 = tracemalloc.take_snapshot()
    for i in range(100_000):
        try:
            f(8, 100 if i % 10 else 3)  # one call in ten: ZeroDivisionError mid-loop, after writes
        except ZeroDivisionError:
            pass
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    assert lib.cb_live_allocations() == base
    assert grown < 200_000, grown  # Python-side memory stays flat
    assert _rss() - start_rss < 20 * 2**20  # and so does the process
    assert f.stats["deopts"] >= 10_000 and native_ran(f)


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


def test_control_flow_keeps_counts_right() -> None:
    """Arrays through branches, break/continue, early returns, raises and native
    callees: same results as CPython, and no allocation left behind (the fixture)."""
    ns: dict = {"np": np}
    exec(
        "def make(n):\n    return np.ones(n)\n"
        "def same(a):\n    return a\n"
        "def row(m, i):\n    return m[i]\n"
        "def total(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i]\n    return s\n",
        ns,
    )
    programs = [
        # early return from inside a loop, with arrays alive
        "def f(n, k):\n    a = np.zeros(n)\n    for i in range(n):\n        b = np.ones(i + 1)\n        if i == k:\n            return b\n        a[i] = b[0]\n    return a\n",
        # break / continue with a rebinding
        "def f(n, k):\n    cur = np.zeros(1)\n    for i in range(n):\n        if i % 2:\n            continue\n        cur = np.full(i + 1, i * 1.0)\n        if i > k:\n            break\n    return cur\n",
        # a raise after allocations (CPython raises; nothing may leak)
        "def f(n, k):\n    a = np.arange(n)\n    for i in range(n):\n        t = a.copy()\n        if a[i] == k:\n            raise ValueError('found')\n    return a\n",
        # native callees: a new array, an argument back, a view of an argument
        "def f(n, k):\n    a = make(n)\n    b = same(a)\n    m = np.zeros((2, n))\n    r = row(m, k % 2)\n    return b, r, total(a) + total(r)\n",
        # the same array in two locals, then one rebound
        "def f(n, k):\n    a = np.zeros(n)\n    b = a\n    for i in range(k):\n        a = np.ones(n)\n    return b, a\n",
    ]
    for src in programs:
        fn = build(src, **{k: v for k, v in ns.items() if k != "np"})
        for n, k in ((0, 0), (3, 1), (6, 4), (5, 10), (4, -1)):
            check(fn, n, k)
        assert native_ran(fn), src
    big = build(programs[0])
    for _ in range(2000):
        big(6, 3)


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_zeros_commit_no_memory_until_touched() -> None:
    # NumPy's zeros come from calloc, whose large blocks are fresh pages the kernel
    # zeroes on first touch; malloc + memset committed the whole array at once.
    f = build(
        """
        def f(n):
            a = np.zeros(n)
            a[n - 1] = 1.0
            return a
        """
    )
    check(f, 10)
    n = 2**25  # 256 MiB of float64
    before = _resident_bytes()
    a = f(n)
    grown = _resident_bytes() - before
    assert native_ran(f) and a[n - 1] == 1.0 and a[0] == 0.0 and a.dtype == np.float64
    del a
    assert grown < 64 * 2**20, f"np.zeros({n}) committed {grown / 2**20:.0f} MiB"
