"""NumPy arrays read by compiled code (issue 4, first increment): indexing, shapes and
NumPy's scalar semantics, against CPython running the same function with NumPy.

Every check compares the result (value and type: an element is an np.float64 or
np.int64, so is arithmetic on it), the exception (an out-of-bounds index raises NumPy's
IndexError), and the arrays after the call, in every layout a caller can pass
(`cuvil_bc.testing.arrays`).
"""

from __future__ import annotations

import math
import platform

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran, numbers

DTYPES = ["float64", "int64"]


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


SUM = build(
    """
def f(a):
    s = 0
    for i in range(a.shape[0]):
        s += a[i]
    return s
"""
)

DOT = build(
    """
def f(a, b):
    s = 0.0
    for i in range(min(len(a), len(b))):
        s = s + a[i] * b[i]
    return s
"""
)

GRID = build(
    """
def f(m):
    n, k = m.shape
    best = m[0, 0]
    where = (0, 0)
    for i in range(n):
        for j in range(k):
            if m[i, j] > best:
                best = m[i, j]
                where = (i, j)
    return best, where, m.ndim, m.size
"""
)

INDEX = build(
    """
def f(a, i, j):
    return a[i] - a[j], a[-1] / 2
"""
)

MIXED = build(
    """
def f(a, x):
    t = 0.0
    for i in range(len(a)):
        v = a[i]
        t += math.sqrt(abs(float(v))) + v * x - (v // 3 if v > 0 else v % 5)
        if v == x:
            t += 1
    return t
"""
)

WALK = build(
    """
def f(a, steps):
    n = len(a)
    i = 0
    acc = a[0] * 0
    for _ in range(steps):
        acc = acc + a[i]
        i = (i * 7 + 3) % n
    return acc, -acc, acc > 0
"""
)

THREE_D = build(
    """
def f(c):
    s = 0
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            for k in range(c.shape[2]):
                s += c[i, j, k] * (i + 2 * j + 3 * k)
    return s
"""
)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_every_layout(dtype: str) -> None:
    equivalent(SUM, st.tuples(arrays(dtype, max_dims=1)), max_examples=150)
    assert native_ran(SUM), SUM.explain()


@pytest.mark.parametrize("da, db", [("float64", "float64"), ("int64", "int64"), ("int64", "float64"), ("float64", "int64")])
def test_dot_mixed_dtypes(da: str, db: str) -> None:
    equivalent(DOT, st.tuples(arrays(da, max_dims=1), arrays(db, max_dims=1)), max_examples=100)
    assert native_ran(DOT), DOT.explain()


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_dimensional_every_layout(dtype: str) -> None:
    equivalent(GRID, st.tuples(arrays(dtype, min_dims=2, max_dims=2)), max_examples=150)
    assert native_ran(GRID), GRID.explain()


@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_and_out_of_bounds_indices(dtype: str) -> None:
    a = np.arange(6, dtype=dtype) * 3
    for i, j in [(0, 5), (-1, -6), (-6, 2), (6, 0), (0, -7), (100, 0), (-(2**62), 1)]:
        check(INDEX, a, i, j)
    check(INDEX, np.arange(0, dtype=dtype), 0, 0)  # zero-size: IndexError
    equivalent(INDEX, st.tuples(arrays(dtype, max_dims=1), st.integers(-8, 8), st.integers(-8, 8)), max_examples=150)
    assert native_ran(INDEX), INDEX.explain()


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_scalar_semantics(dtype: str) -> None:
    # Elements are NumPy scalars: NEP 50 result types, int64 wrapping with a warning and
    # float64 overflow with a warning (both handed back to CPython), math on them. The
    # warnings of each call are compared too.
    equivalent(MIXED, st.tuples(arrays(dtype, max_dims=1), numbers()), max_examples=200)
    assert native_ran(MIXED), MIXED.explain()


def test_warnings_and_wraparound_are_numpys() -> None:
    # `check` compares the warnings each call emits: int64 wraps with NumPy's overflow
    # warning, and a float64 sum overflows to inf with one (CPython runs those calls).
    check(WALK, np.array([2**62, 2**62, -(2**63)], dtype=np.int64), 4)
    check(WALK, np.array([1e308, 1e308]), 3)
    check(WALK, np.array([np.inf, -np.inf]), 2)  # inf - inf: "invalid value" warning
    check(WALK, np.arange(5.0), 20)
    assert native_ran(WALK), WALK.explain()


def test_three_dimensions_and_views() -> None:
    c = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    for view in (c, c.T, c[::-1, 1:, ::2], np.asfortranarray(c)):
        check(THREE_D, view)
    equivalent(THREE_D, st.tuples(arrays("float64", min_dims=3, max_dims=3, max_side=4)), max_examples=60)
    assert native_ran(THREE_D), THREE_D.explain()


def test_arrays_are_not_changed_and_references_are_kept() -> None:
    import sys

    a = np.arange(10.0)
    before = sys.getrefcount(a)
    for _ in range(1000):
        SUM(a)
    assert sys.getrefcount(a) == before
    assert a.tolist() == list(np.arange(10.0))


def test_unsupported_array_uses_fall_back() -> None:
    sliced = build("def f(a):\n    b = a[1:]\n    return b[0]\n")  # slices run in CPython
    check(sliced, np.arange(3), native=False)
    check(sliced, np.arange(1), native=False)
    assert not native_ran(sliced)
    assert "slice" in sliced.explain()
    for dtype in ("float32", "int32", "uint8", "bool"):
        check(SUM, np.ones(3, dtype=dtype), native=dtype != "bool")  # NumPy promotion (bool: logical, in CPython)
    returns = build("def f(a, k):\n    x = a if k else None\n    return (x, 1)\n")
    check(returns, np.ones(2), 1, native=False)
    assert "may be unbound or None" in returns.explain()
    row = build("def f(m):\n    return m[0][1]\n")  # m[0] is a view (tests/test_array_views.py)
    check(row, np.ones((2, 2)))
    assert native_ran(row)


CHAIN = build(
    """
def f(a, i, j, k):
    return a[i] * a[j] + a[k] - a[i] * 2.0, (a[i] - a[j]) * (a[k] + a[i])
"""
)


def test_warnings_inside_expression_chains() -> None:
    # Inside a chain of + - * only the last op is tested (an infinity or NaN
    # propagates); an intermediate overflow must still reach CPython's warning.
    a = np.array([1e308, 1e200, -1e308, np.inf, np.nan, 2.0, 0.0])
    for i in range(len(a)):
        for j in range(len(a)):
            for k in (0, 3, 5, 6):
                check(CHAIN, a, i, j, k)
    equivalent(CHAIN, st.tuples(arrays("float64", min_dims=1, max_dims=1).filter(lambda x: x.size > 0), st.integers(-1, 0), st.integers(-1, 0), st.integers(-1, 0)), max_examples=150)
    assert native_ran(CHAIN), CHAIN.explain()


SCALARS = [np.int64(3), np.int64(-2), np.int64(0), np.int64(2**62), np.float64(2.5), np.float64(-0.0),
           np.float64(np.nan), np.float64(np.inf), np.float64(1e308)]


def _math_functions() -> list[str]:
    from cuvil_bc.typing.primitives import lookup

    return [n for n in dir(math) if callable(getattr(math, n)) and lookup(getattr(math, n)) is not None]


@pytest.mark.parametrize("name", _math_functions())
def test_math_of_numpy_scalars(name: str) -> None:
    # math functions see NumPy scalars through __float__ / __index__ / __trunc__, which
    # differ between np.float64 (a float subclass) and np.int64 (math.trunc and the
    # exponent of ldexp refuse it): CPython decides, case by case.
    from cuvil_bc.typing.primitives import lookup

    nargs = lookup(getattr(math, name)).min_args or 2  # type: ignore[union-attr]  (hypot takes any number)
    f = build(f"def f(a):\n    x = a[0]\n    return math.{name}({', '.join(['x'] * nargs)})\n")
    for value in SCALARS:
        check(f, np.array([value]), native=False)  # CPython raises TypeError for some (not compiled)


def test_conversions_and_none_comparisons_of_numpy_scalars() -> None:
    ints = np.array([2**62 + 1, -(2**63), 0, -1], dtype=np.int64)
    conv = build("def f(a):\n    return int(a[0]), float(a[1]), bool(a[2]), a[0] % a[3], a[1] // a[3], a[1] % -1\n")
    check(conv, ints)
    none = build("def f(a):\n    return a[0] == None, a[0] != None, a[0] is None, not a[0]\n")
    for values in ([1.0], [0.0], [np.nan]):
        check(none, np.array(values))
    assert native_ran(none), none.explain()


def test_numpy_scalar_arguments() -> None:
    # NumPy scalars passed in (not read from an array) compile with the same rules.
    f = build("def f(x, y):\n    s = x * y - x\n    if s > y:\n        s = s / y\n    return s, x == y, -x\n")
    values = [np.float64(2.5), np.float64(-0.0), np.float64(1e308), np.float64(np.nan), np.int64(3),
              np.int64(-(2**63)), np.int64(0), 2, 0.5, True]
    for x in values[:7]:
        for y in values:
            check(f, x, y)
    assert native_ran(f), f.explain()


DEFERRED = [
    # an overflow whose infinity only reaches the return
    "def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s = s + a[i] * a[i]\n    return s\n",
    # ... only a comparison (the infinity itself disappears)
    "def f(a):\n    n = 0\n    for i in range(len(a)):\n        if a[i] * 1e300 > 1.0:\n            n += 1\n    return n\n",
    # ... nothing at all (a dead value still warns in NumPy)
    "def f(a):\n    for i in range(len(a)):\n        y = a[i] * a[i]\n    return len(a)\n",
    # ... a loop-carried phi that is never used afterwards
    "def f(a):\n    t = a[0] * 0.0\n    for i in range(len(a)):\n        t = t * 1e100 + a[i]\n    return 1\n",
    # ... a conversion and a math call
    "def f(a):\n    k = 0\n    for i in range(len(a)):\n        k += int(math.sqrt(a[i] * a[i] - a[i]) > 2.0)\n    return k, float(a[0] - a[0])\n",
    # ... a comparison of two untested values, tested together (their sum)
    "def f(a):\n    n = 0\n    for i in range(len(a) - 1):\n        if a[i] * 1e300 > a[i + 1] * 1e300:\n            n += 1\n    return n\n",
    # ... a square root, whose own test of its result covers its argument
    "def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += math.sqrt(a[i] * a[i] - 1.0)\n    return s\n",
]


@pytest.mark.parametrize("src", DEFERRED)
def test_deferred_float_warnings(src: str) -> None:
    # In a function that only reads, np.float64 + - * are not tested where they run:
    # whatever consumes their value tests it (or they test themselves when nothing
    # does), and the call is re-run in CPython, which warns.
    fn = build(src)
    for a in ([1.0, 2.0, 3.0], [1e200, 1e200, 2.0], [1e308, -1e308, 5.0], [math.inf, 1.0, 1.0], [math.nan, 2.0, 0.5], [2.0, 1.0, 1e300]):
        check(fn, np.array(a))
    assert native_ran(fn)


NEIGHBOURS = build(
    """
def f(g, other):
    n, m = g.shape
    s = 0
    for i in range(n):
        for j in range(m):
            s += g[(i + 1) % n, j] + g[i - 1, j] + g[i, (j + 1) % m] + g[i, j - 1]
            s += other[i - 1] + other[(j + 1) % m]
    return s
"""
)


LATER = build(
    """
def f(a, b, k):
    s = 0.0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            s += a[j] - b[j]
        for j in range(i - k, len(a)):
            s += a[j]
        for j in range(i - 2, len(a)):
            s += a[j] * 0.5  # a[-2] and a[-1] first: wrapped, not proven
    return s
"""
)


def test_ranges_starting_at_a_loop_item() -> None:
    # j in range(i + 1, len(a)) indexes a without a check (j >= 1 > 0, j < len(a)),
    # but b, and a from range(i - k, ...) whose start may be negative, are checked.
    a = np.arange(6.0)
    check(LATER, a, np.arange(6.0), 2)
    check(LATER, a, np.arange(4.0), 2)  # IndexError from b[j]
    check(LATER, a, np.arange(6.0), 9)  # negative j: wraps, then IndexError
    equivalent(LATER, st.tuples(arrays("float64", max_dims=1), arrays("float64", max_dims=1), st.integers(-3, 8)), max_examples=100)
    assert native_ran(LATER)


def test_proven_and_wrapped_indices() -> None:
    # (i + 1) % n and i - 1 over g's own extents need no bounds check (the wrap of -1
    # suffices); the same indices into another array must still be checked.
    g = np.arange(12).reshape(3, 4)
    check(NEIGHBOURS, g, np.arange(4))
    check(NEIGHBOURS, g, np.arange(2))  # IndexError from other[(j + 1) % m]
    check(NEIGHBOURS, g, np.arange(0))  # IndexError from other[i - 1]
    check(NEIGHBOURS, np.zeros((0, 3), dtype=np.int64), np.arange(1))
    equivalent(NEIGHBOURS, st.tuples(arrays("int64", min_dims=2, max_dims=2, elements=st.integers(-9, 9)), arrays("int64", max_dims=1, elements=st.integers(-9, 9))), max_examples=150)
    assert native_ran(NEIGHBOURS)


GUARDED = build(
    """
def f(idx, counts, other):
    n = len(counts)
    for i in range(len(idx)):
        k = idx[i] * 1
        k = int(k)
        if 0 <= k < n:
            counts[k] += 1
        if k < n:
            other[k] += 1           # no lower bound known: a negative k wraps or raises
            counts[k] += 5          # ... here too, even for the right array
        if k >= 0:
            if len(other) > k:
                other[k] -= 2
    return n
"""
)


def test_indices_guarded_by_branches() -> None:
    # `if 0 <= k < len(counts)` proves counts[k] in bounds; weaker tests prove nothing.
    idx = np.array([0, 3, -1, 7, 2, -4, 5])
    check(GUARDED, idx, np.zeros(5, dtype=np.int64), np.zeros(6, dtype=np.int64))
    check(GUARDED, idx, np.zeros(5, dtype=np.int64), np.zeros(3, dtype=np.int64))  # IndexError
    check(GUARDED, idx, np.zeros(9, dtype=np.int64), np.zeros(9, dtype=np.int64))
    equivalent(
        GUARDED,
        st.tuples(arrays("int64", max_dims=1, elements=st.integers(-12, 12)), arrays("int64", max_dims=1, elements=st.integers(-5, 5)), arrays("int64", max_dims=1, elements=st.integers(-5, 5))),
        max_examples=150,
    )
    assert native_ran(GUARDED)


def test_ndarray_subclasses_run_in_cpython() -> None:
    # A masked array sums only its unmasked elements and a matrix's rows are 2-D:
    # their element semantics are not an ndarray's, so they are not compiled.
    f = build("def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i]\n    return s\n")
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    assert repr(f(masked)) == repr(f.py_func(masked)) == "masked"
    assert "MaskedArray): interpreted" in f.explain()
    with pytest.warns(PendingDeprecationWarning):  # NumPy discourages np.matrix
        matrix = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    assert repr(f(matrix)) == repr(f.py_func(matrix))
    check(f, np.arange(3.0))
    assert native_ran(f)


TWINS = build(
    """
def f(a, b):
    total = 0
    acc = 0.0
    low = 1
    for i in range(len(a)):
        total = (total + a[i]) % 1000003
        low = a[i] - low if a[i] > low else low * a[i]
        acc = acc * 0.5 + b[i]
        if b[i] >= acc:
            acc = b[i] / 3.0 - acc
    return total, low, acc
"""
)


TWINS_FROM_ARGUMENTS = build(
    """
def f(a, b, total, acc):
    for i in range(len(a)):
        total = total * 3 + a[i]
        acc = b[i] - acc / 2.0
    return total, acc
"""
)


def test_python_scalars_that_become_numpy_scalars() -> None:
    # total, low and acc start as Python scalars and turn into np.int64/np.float64 on
    # the first iteration: ops between them and array elements are NumPy's whatever
    # the current type, and a loop that does not run returns the Python scalars.
    check(TWINS, np.arange(5), np.linspace(-1.0, 1.0, 5))
    check(TWINS, np.arange(0), np.arange(0.0))  # (0, 1, 0.0): Python scalars
    check(TWINS, np.array([2**62, 2**62, -(2**63)]), np.array([1e308, 1e308, -np.inf]))  # wraps, overflows: warnings
    equivalent(TWINS, st.tuples(arrays("int64", max_dims=1), arrays("float64", max_dims=1)), max_examples=150)
    assert native_ran(TWINS)
    check(TWINS_FROM_ARGUMENTS, np.arange(4), np.linspace(0.0, 1.0, 4), 7, 2.5)
    check(TWINS_FROM_ARGUMENTS, np.arange(0), np.arange(0.0), 7, 2.5)  # the Python scalars
    equivalent(
        TWINS_FROM_ARGUMENTS,
        st.tuples(arrays("int64", max_dims=1), arrays("float64", max_dims=1), st.integers(-(2**40), 2**40), st.floats()),
        max_examples=100,
    )
    assert native_ran(TWINS_FROM_ARGUMENTS)


COUNTERS = build(
    """
def f(a, start):
    up = 0
    down = 5
    mixed = -3
    other = start
    for i in range(len(a)):
        if a[i] > 0:
            up += 1
            other += 1
        elif a[i] < 0:
            down -= 1
            mixed += 1
        else:
            mixed -= 1
    return up, down, mixed, other
"""
)


def test_counters_and_a_count_from_an_argument() -> None:
    # up, down and mixed step by one from small constants: no overflow test. `other`
    # starts at an argument, so its steps are tested: near 2**63 CPython's result is a
    # Python int beyond int64, which native code must not wrap.
    check(COUNTERS, np.array([1, -1, 0, 2, 3]), 0)
    check(COUNTERS, np.array([1, 1, 1]), 2**63 - 2)
    check(COUNTERS, np.array([1, -1, 1]), -(2**63))
    equivalent(COUNTERS, st.tuples(arrays("int64", max_dims=1), st.integers(-(2**63), 2**63 - 1)), max_examples=100)
    assert native_ran(COUNTERS)


BOOL_COUNTERS = build(
    """
def f(a, t, start):
    above = 0
    below = np.int64(0)
    other = start
    for i in range(len(a)):
        above += a[i] > t
        below += a[i] < t
        other += a[i] == t
    return above, below, other
"""
)


def test_counters_stepping_by_a_bool() -> None:
    # above is int | np.int64 (0, then np.int64 from the first np.bool added) and
    # below an np.int64: both step by 0 or 1 from 0, so neither tests for overflow
    # (NumPy's wrap and warning); `other` starts at an argument and is tested.
    check(BOOL_COUNTERS, np.arange(6.0), 2.5, 0)
    check(BOOL_COUNTERS, np.zeros(0), 0.0, 3)
    check(BOOL_COUNTERS, np.array([1.0, 1.0, 1.0]), 1.0, 2**63 - 2)  # other wraps in NumPy: warns
    equivalent(BOOL_COUNTERS, st.tuples(arrays("float64", max_dims=1), st.floats(), st.integers(-(2**63), 2**63 - 1)), max_examples=60)
    assert native_ran(BOOL_COUNTERS)
    only_counters = build(
        "def f(a, t):\n    above = 0\n    below = np.int64(0)\n    for i in range(len(a)):\n"
        "        above += a[i] > t\n        below += a[i] < t\n    return above, below\n"
    )
    check(only_counters, np.arange(9.0), 4.0)
    assert native_ran(only_counters) and "with.overflow" not in only_counters.inspect_llvm()


STENCIL_SUM = build(
    """
def f(m):
    n, k = m.shape
    e = 0.0
    for i in range(1, n - 1):
        for j in range(1, k - 1):
            d = m[i - 1, j] + m[i + 1, j] + m[i, j - 1] + m[i, j + 1] - 4.0 * m[i, j]
            e += d * d
    return e
"""
)


def test_vectorized_sums_keep_cpythons_order() -> None:
    # Loops that sum floats run in vectors with the sum's adds kept in order
    # (lower/jit.py, ordered reductions): the result must be CPython's to the bit, on
    # data where another order of the adds gives another result.
    rng = np.random.default_rng(7)
    m = rng.standard_normal((40, 300)) * 10.0 ** rng.integers(-6, 7, (40, 300))
    d = m[:-2, 1:-1] + m[2:, 1:-1] + m[1:-1, :-2] + m[1:-1, 2:] - 4.0 * m[1:-1, 1:-1]
    terms = (d * d).ravel()
    assert float(np.sum(terms)) != STENCIL_SUM.py_func(m)  # pairwise order differs
    check(STENCIL_SUM, m)
    check(STENCIL_SUM, np.asfortranarray(m))
    check(STENCIL_SUM, m[:, ::-1])
    m[17, 200] = np.inf  # a warning, deferred to the end of the call
    check(STENCIL_SUM, m)
    assert native_ran(STENCIL_SUM)
    if platform.machine() in ("x86_64", "AMD64"):
        assert "vaddsd" in STENCIL_SUM.inspect_asm() and "ymm" in STENCIL_SUM.inspect_asm(), "the loop should be vectorized"


def test_an_index_its_branch_proves_is_not_tested_against_the_loop_bound() -> None:
    """``if x + 1 < n: ... b[x + 1]`` for x in range(n), n = len(b): the branch proves
    the index in bounds (its own ``x + 1``, computed again), so no test of the loop's
    bound, n + 1 > len(b), is made on entry to the block; it failed on every call."""
    from cuvil_bc.testing import compile_source

    g = compile_source(
        """
        def f(b):
            n = len(b)
            s = 0.0
            for x in range(n):
                if x + 1 < n:
                    s += b[x + 1]
            return s
        """
    )
    h = compile_source(
        """
        def f(a, b):
            n = len(b)
            for x in range(n):
                if x + 1 < n and x - 1 >= 0:
                    a[x] = b[x + 1] - b[x - 1]
        """
    )
    for n in (0, 1, 2, 5, 100):
        b = np.arange(n, dtype=np.float64)
        check(g, b)
        check(h, np.zeros(n), b)
    assert g.stats["deopts"] == 0 and h.stats["deopts"] == 0


OFFSET_FACTS = build(
    """
def f(x, other):
    n = len(x)
    h = 0.0
    for i in range(n):
        if i < n - 1:
            h += x[i + 1] - x[i]     # i < n - 1 proves i + 1 < n
        if i > 0:
            h += x[i - 1]            # i > 0 proves i - 1 >= 0
        if 1 < i:
            h -= x[i - 2]            # 1 < i proves i - 2 >= 0
        if i + 2 <= n:
            h += x[i + 1]            # i + 2 <= n proves i + 1 < n
        if i < n - 1:
            h += other[i + 1]        # another array: still checked
        if i <= n - 1:
            h += x[i - 3]            # no lower bound: wraps or raises
    return h
"""
)


def test_branch_facts_about_an_offset_of_the_index() -> None:
    """A fact about ``i + a`` bounds ``i + d`` (``if i < n - 1: x[i + 1]``): such
    accesses get no test, so they do not deopt on the entry test of the loop bound
    (n + 1 > len(x)), which failed on every call (rosenbrock_sum, sandpile_topple)."""
    for n, m in ((0, 0), (1, 1), (2, 2), (3, 3), (7, 7), (7, 3)):
        check(OFFSET_FACTS, np.arange(float(n)) ** 2, np.arange(float(m)))
    equivalent(OFFSET_FACTS, st.tuples(arrays("float64", max_dims=1), arrays("float64", max_dims=1)), max_examples=100)
    assert native_ran(OFFSET_FACTS)
    before = OFFSET_FACTS.stats["deopts"]
    for _ in range(3):
        check(OFFSET_FACTS, np.arange(9.0), np.arange(9.0))
    assert OFFSET_FACTS.stats["deopts"] == before


NUMPY_INT_INDICES = build(
    """
def f(img, ptr, data, box):
    hist = np.zeros(8, dtype=np.int64)
    for r in range(img.shape[0]):
        for c in range(img.shape[1]):
            hist[img[r, c]] += 1                # an np.uint8 / np.int32 index
    s = 0.0
    for u in range(len(ptr) - 1):
        for e in range(ptr[u], ptr[u + 1]):     # range() of NumPy ints
            s += data[e] - box * round(data[e] / box)   # round() of an np.float64
    return hist, s
"""
)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "uint32", "uint64", "int64"])
def test_numpy_integers_as_indices_and_range_bounds(dtype: str) -> None:
    """Any NumPy integer indexes, bounds a range() and is rounded as the int it holds
    (``__index__``); a negative one wraps or raises IndexError as in NumPy."""
    rng = np.random.default_rng(5)
    data = rng.normal(0.0, 4.0, 12)
    for hi in (8, 9):
        img = rng.integers(0, hi, (4, 5)).astype(dtype)
        ptr = np.array([0, 3, 3, 7, 12], dtype=dtype)
        check(NUMPY_INT_INDICES, img, ptr, data, 1.5)
    if dtype.startswith("int"):
        check(NUMPY_INT_INDICES, np.array([[1, -2, -8]], dtype=dtype), ptr, data, 2.0)
        check(NUMPY_INT_INDICES, np.array([[-9]], dtype=dtype), ptr, data, 2.0)  # IndexError
    check(NUMPY_INT_INDICES, img, ptr, np.array([0.0] * 11 + [np.inf]), 2.0)  # OverflowError from round
    check(NUMPY_INT_INDICES, img, ptr, np.array([np.nan] * 12), 2.0)  # ValueError from round
    assert native_ran(NUMPY_INT_INDICES)
