"""Indices tested once per loop from the interval of their values (opt/bounds.py `Span`,
lowered by access.ArrayAccess._span_guard): ``x[i - w]`` for i in ``range(w, n)``,
``best[c - w]`` for c in ``range(cap, w - 1, -1)``, ``x[min(i + k, n - 1)]``. The test
on entry to the block covers every value the index can take in the loop; where it
fails (an index that would be out of bounds, an interval end past int64) the call
deoptimises there and the interpreter does exactly what CPython does. Every function
runs against CPython on edge and hypothesis-drawn arguments, and the plans must show
the span tests."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.compiler import Compiler
from cuvil_bc.opt.plans import format_plans
from cuvil_bc.testing import check, compile_source, native_ran
from cuvil_bc.typing.types import typeof

# A running window: the start of the range is an argument, so neither i nor i - w
# has a constant lower bound.
WINDOW = """
def f(x, w):
    n = len(x)
    out = np.zeros(max(n - w + 1, 0))
    s = 0.0
    for i in range(w, n):
        s += x[i] - x[i - w]
        out[i - w + 1] = s
    return out, s
"""
# A table filled backwards, the step -1 range's items in [w, cap]; w is an np.int64
# element, so the indices are np.int64 values.
BACKWARDS = """
def f(weights, values, cap):
    best = np.zeros(cap + 1, dtype=np.int64)
    for i in range(len(weights)):
        w = weights[i]
        for c in range(cap, w - 1, -1):
            cand = best[c - w] + values[i]
            if cand > best[c]:
                best[c] = cand
    return best
"""
# min/max clamps, a product by a constant and a step of 3; a and k are arguments.
CLAMPED = """
def f(x, out, a, b, k):
    n = len(x)
    for i in range(a, b, 3):
        out[2 * i - a] = x[max(i - 1, 0)] + x[min(i + k, n - 1)]
    return out
"""
# An inner loop whose range starts at the outer item: j - i lies in [0, m - i).
SHIFTED = """
def f(x, m):
    total = 0.0
    for i in range(len(x)):
        for j in range(i, m):
            total += x[j - i] * j
    return total
"""

# The item subtracted: k - i decreases as i grows, so its interval is
# [k - (b - 1), k - a].
REVERSED = """
def f(x, out, a, b, k):
    for i in range(a, b):
        out[i - a] = x[k - i]
    return out
"""


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


def plans(src: str, *args) -> str:  # type: ignore[no-untyped-def]
    ns: dict = {"np": np}
    exec(src, ns)
    return format_plans(Compiler().typed(ns["f"], tuple(typeof(a) for a in args)).fn).split("bounds:")[1]


WINDOW_F, BACKWARDS_F, CLAMPED_F, SHIFTED_F, REVERSED_F = (build(s) for s in (WINDOW, BACKWARDS, CLAMPED, SHIFTED, REVERSED))


def spans(text: str) -> int:
    return text.count("its interval's")


def test_plans_test_spans_on_entry() -> None:
    assert spans(plans(WINDOW, np.ones(4), 2)) == 3
    assert spans(plans(BACKWARDS, np.ones(3, dtype=np.int64), np.ones(3, dtype=np.int64), 5)) == 3
    assert spans(plans(CLAMPED, np.ones(3), np.ones(3), 0, 3, 1)) == 3
    assert spans(plans(SHIFTED, np.ones(3), 3)) == 1
    assert spans(plans(REVERSED, np.ones(3), np.ones(3), 0, 3, 2)) == 2


def test_in_bounds_calls_do_not_deoptimise() -> None:
    rng = np.random.default_rng(8)
    cases = [
        (WINDOW_F, (rng.random(50), 7)),
        (BACKWARDS_F, (rng.integers(1, 9, 12), rng.integers(0, 50, 12), 40)),
        (CLAMPED_F, (rng.random(30), np.zeros(60), 2, 28, 3)),
        (SHIFTED_F, (rng.random(20), 20)),
        (REVERSED_F, (rng.random(20), np.zeros(20), 3, 17, 19)),
    ]
    for f, args in cases:
        for _ in range(3):
            check(f, *args)
        assert native_ran(f) and f.stats["deopts"] == 0, (f.py_func, f.stats)


BIG = 2**63 - 1


@given(st.lists(st.floats(-1e3, 1e3), max_size=12), st.one_of(st.integers(-15, 15), st.sampled_from([BIG, -BIG - 1, BIG - 3])))
@settings(max_examples=150, deadline=None)
def test_window_matches_cpython(values: list[float], w: int) -> None:
    x = np.array(values)
    check(WINDOW_F, x, w, native=abs(w) < 2**62)


@given(st.lists(st.integers(-3, 9), max_size=6), st.integers(-3, 12))
@settings(max_examples=150, deadline=None)
def test_backwards_matches_cpython(weights: list[int], cap: int) -> None:
    w = np.array(weights, dtype=np.int64)
    v = np.arange(len(weights), dtype=np.int64) * 7 + 1
    check(BACKWARDS_F, w, v, cap, native=cap >= -1)


@given(st.integers(0, 10), st.integers(-12, 12), st.integers(-12, 24), st.one_of(st.integers(-12, 12), st.sampled_from([BIG, -BIG - 1])))
@settings(max_examples=200, deadline=None)
def test_clamped_matches_cpython(n: int, a: int, b: int, k: int) -> None:
    x = np.arange(n, dtype=np.float64) + 0.5
    check(CLAMPED_F, x, np.zeros(14), a, b, k, native=False)


@given(st.integers(0, 8), st.one_of(st.integers(-3, 12), st.sampled_from([BIG, -BIG - 1])))
@settings(max_examples=120, deadline=None)
def test_shifted_matches_cpython(n: int, m: int) -> None:
    check(SHIFTED_F, np.arange(n, dtype=np.float64), m, native=False)


@given(st.integers(0, 10), st.integers(-12, 12), st.integers(-12, 12), st.integers(-12, 24))
@settings(max_examples=200, deadline=None)
def test_reversed_matches_cpython(n: int, a: int, b: int, k: int) -> None:
    check(REVERSED_F, np.arange(n, dtype=np.float64) + 0.5, np.zeros(12), a, b, k, native=False)


def test_interval_ends_past_int64_deoptimise() -> None:
    # i + k fits for the items that run, but the interval's high end passes 2**63:
    # the entry test fails and the interpreter finishes the call exactly.
    x = np.arange(5.0)
    for k in (BIG, BIG - 1, -BIG - 1):
        check(CLAMPED_F, x, np.zeros(14), 0, 4, k)
    check(WINDOW_F, x, -BIG - 1, native=False)


# A branch in the loop keeps i - k in bounds where the interval of i - k over the
# whole loop is not: no span test (it would fail, and deoptimise, on every call).
GUARDED = """
def f(x, k):
    s = 0.0
    for i in range(len(x)):
        if i >= k:
            s += x[i - k]
    return s
"""


def test_branch_guarded_indices_get_no_span() -> None:
    assert spans(plans(GUARDED, np.ones(4), 2)) == 0
    f = build(GUARDED)
    for k in (0, 2, 5, 9):
        for _ in range(3):
            check(f, np.arange(6.0), k)
    assert native_ran(f) and f.stats["deopts"] == 0, f.stats
    for k in (-1, -7):  # an IndexError: the access's own test deoptimises
        check(f, np.arange(6.0), k)


# out[i - 1] writes out[-1] first (out is not a's length, so nothing proves i - 1
# in [-1, len(out))): a legal negative index, which the span test admits (low end
# >= -extent) and the access wraps. Its addresses jump back, so the body must not
# run in vector groups, which store consecutive elements (they wrote past the
# array's end, corrupting the heap).
SHIFTED_STORE = """
def f(a, out):
    for i in range(len(a)):
        out[i - 1] = a[i] * 10.0
"""


def test_negative_span_indices_wrap_one_by_one() -> None:
    f = build(SHIFTED_STORE)
    assert spans(plans(SHIFTED_STORE, np.ones(3), np.ones(3))) == 1
    for n, m in ((5000, 5000), (5000, 5003), (64, 64), (7, 7), (7, 6), (0, 1), (1, 0)):
        check(f, np.linspace(1.0, 2.0, n), np.zeros(m))
    buffer = np.full(5020, 7.0)
    f(np.ones(5000), buffer[10:5010])
    assert (buffer[:10] == 7.0).all() and (buffer[5010:] == 7.0).all()
    assert native_ran(f) and "group.body" not in f.inspect_llvm()


# Conditional expressions: a phi's interval is the hull of its incoming values',
# each narrowed by the comparison its edge takes (j - 1 where j > 0: at least 0).
# OFF_EDGE's j + d reaches the extent for d >= 2: an IndexError where CPython raises.
PERIODIC = """
def f(a, out, d):
    n, m = a.shape
    for i in range(n):
        up = i - 1 if i > 0 else n - 1
        for j in range(m):
            left = j - 1 if j > 0 else m - 1
            right = j + d if j < m - 1 else 0
            out[i, j] = a[up, left] + a[i, right] + a[up, j]
    return out
"""
CLAMPED_EDGES = """
def f(img, out):
    h, w = img.shape
    for i in range(h):
        for j in range(w):
            jl = j - 1 if j > 0 else 0
            jr = j + 1 if w - 1 > j else w - 1
            out[i, j] = img[i, jl] + 2.0 * img[i, j] + img[i, jr]
    return out
"""


def test_conditional_expressions_get_spans() -> None:
    a = np.ones((3, 4))
    assert spans(plans(PERIODIC, a, a, 1)) == 4  # (up is set before the j loop)
    assert spans(plans(CLAMPED_EDGES, a, a)) == 2
    periodic, clamped = build(PERIODIC), build(CLAMPED_EDGES)
    rng = np.random.default_rng(3)
    for shape in ((5, 7), (1, 1), (2, 1), (1, 3), (0, 4), (4, 0), (40, 33)):
        x = rng.random(shape)
        for _ in range(2):
            check(periodic, x, np.zeros(shape), 1)
            check(clamped, x, np.zeros(shape))
    assert native_ran(periodic) and native_ran(clamped)
    assert periodic.stats["deopts"] == 0 and clamped.stats["deopts"] == 0, (periodic.stats, clamped.stats)


@given(st.integers(0, 6), st.integers(0, 6), st.integers(-9, 9))
@settings(max_examples=200, deadline=None)
def test_periodic_matches_cpython(n: int, m: int, d: int) -> None:
    a = np.arange(float(n * m)).reshape(n, m)
    check(PERIODIC_F, a, np.zeros((n, m)), d, native=False)


PERIODIC_F = build(PERIODIC)


# A step that is a value: its sign, known at the loop's entry, says which end is
# which (a step of 0 raises ValueError before the loop). The butterflies of a
# radix-2 FFT step by a size that doubles in an outer while loop.
STRIDED = """
def f(x, out, a, b, step):
    for s in range(a, b, step):
        out[s - a] = x[s] * 2.0
    return out
"""
BUTTERFLIES = """
def f(re):
    n = re.shape[0]
    size = 2
    while size <= n:
        half = size // 2
        for k in range(half):
            for start in range(0, n, size):
                a = start + k
                b = a + half
                t = re[b]
                re[b] = re[a] - t
                re[a] = re[a] + t
        size *= 2
    return re
"""


def test_value_steps_get_spans() -> None:
    assert spans(plans(STRIDED, np.ones(3), np.ones(3), 0, 3, 1)) == 2
    assert spans(plans(BUTTERFLIES, np.ones(4))) == 5
    f = build(BUTTERFLIES)
    for n in (1, 2, 8, 64, 0):
        for _ in range(2):
            check(f, np.linspace(-1.0, 1.0, n))
    assert native_ran(f) and f.stats["deopts"] == 0, f.stats


@given(st.integers(0, 10), st.integers(-12, 12), st.integers(-12, 12), st.integers(-5, 5))
@settings(max_examples=250, deadline=None)
def test_strided_matches_cpython(n: int, a: int, b: int, step: int) -> None:
    check(STRIDED_F, np.arange(n, dtype=np.float64), np.zeros(8), a, b, step, native=False)


STRIDED_F = build(STRIDED)


def test_entry_test_of_an_index_at_int64s_limit() -> None:
    # x[2**63 - 1]: the bound 2**63 does not fit int64; it wrapped to -2**63, the
    # entry test always passed and the store wrote just before the array (found by a
    # helper; the upper bound is now tested as its highest index, saturating).
    store = build("def f(x, a):\n    for i in range(a, a + 3):\n        x[9223372036854775807] = 1.0\n    return x\n")
    read = build("def f(x, c):\n    s = 0.0\n    for i in range(c, c + 3):\n        s += x[max(9223372036854775807, -7)]\n    return s\n")
    plus = build("def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += x[i + 9223372036854775806]\n    return s\n")
    buffer = np.zeros(10)
    for _ in range(3):
        check(store, buffer[2:7], 0, native=False)
        assert not buffer.any()
    for x in (np.zeros(0), np.arange(3.0), np.arange(5.0)):
        check(read, x, 2, native=False)
        check(plus, x, native=False)
