"""Full unrolling of short constant ``range`` loops (cuvil_bc/opt/unroll.py) and the
resume points it leaves (ir/passes/checkpoints.py): each compiled function is
compared with CPython, and each must really have been unrolled (no ``foriter`` left
on a constant range) and have run natively."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import check, compile_source, equivalent, native_ran, run_with_warnings

build = compile_source


def foriters(d: object) -> int:
    """The loops left in the typed IR of `d`'s signatures."""
    return d.inspect_ir().count("foriter")  # type: ignore[attr-defined]


SCALAR = build(
    """
def f(x, n):
    total = 0
    for a in range(3):
        for b in range(-2, 5, 3):       # -2, 1, 4
            if (x + a * b) % 7 == 3:
                continue
            total += a * b + x
            if total > n:
                break
        else:
            total -= 1
        if total > 2 * n:
            return total, a, b
    for c in range(5, 0, -2):           # 5, 3, 1
        total = total * 3 + c
    for e in range(4, 2):               # empty: e stays unbound
        total += 1000
    return total, a, b, c
"""
)


def test_loops_with_break_continue_else_and_return() -> None:
    """break, continue, for-else and return inside unrolled copies; steps other than 1,
    an empty range; the loop variables after the loops."""
    for x in range(-8, 9):
        for n in (-100, 0, 3, 10, 40, 10**6):
            check(SCALAR, x, n)
    equivalent(SCALAR, st.tuples(st.integers(-(2**40), 2**40), st.integers(-(2**40), 2**40)), max_examples=150)
    assert native_ran(SCALAR)
    assert foriters(SCALAR) == 0, SCALAR.inspect_ir()


def test_an_unbound_loop_variable_after_an_empty_range() -> None:
    d = build("def f(x):\n    for k in range(3, 3):\n        x += 1\n    return x + k\n")
    check(d, 1.5, native=False)  # UnboundLocalError, as in CPython
    assert foriters(d) == 0


STENCIL = build(
    """
def f(img, k, out):
    h, w = img.shape
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            acc = 0.0
            for di in range(3):
                for dj in range(3):
                    acc += k[di, dj] * img[i + di - 1, j + dj - 1]
            out[i, j] = acc
    return out
"""
)


def test_a_stencil_resumes_in_the_middle_of_its_copies() -> None:
    """A writer: each unrolled copy's guards resume the interpreter with a fresh
    iterator holding the items left. The kernel's shape fails the bounds test of a
    different copy each time (k smaller than 3x3), a product overflows in some copy
    (NumPy's warning, also as an error), or a NaN flows through."""
    rng = np.random.default_rng(7)
    img = rng.standard_normal((9, 11))
    k = rng.standard_normal((3, 3))
    check(STENCIL, img, k, np.zeros_like(img))
    for shape in [(3, 2), (2, 3), (1, 3), (3, 1), (2, 2)]:
        check(STENCIL, img, rng.standard_normal(shape), np.zeros_like(img))  # IndexError in a copy
    for di in range(3):
        for dj in range(3):
            big = k.copy()
            big[di, dj] = 1e308
            huge = img.copy()
            huge[4, 5] = 1e10
            check(STENCIL, huge, big, np.zeros_like(img))  # overflow: RuntimeWarning
            for strict in (False, True):
                expected = run_with_warnings(STENCIL.py_func, (huge, big, np.zeros_like(img)), strict=strict)
                actual = run_with_warnings(STENCIL, (huge, big, np.zeros_like(img)), strict=strict)
                assert repr(expected[:2]) == repr(actual[:2]) and expected[3] == actual[3]
                assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(expected[2], actual[2]))
    nan = img.copy()
    nan[3, 3] = math.nan
    check(STENCIL, nan, k, np.zeros_like(img))
    assert native_ran(STENCIL) and STENCIL.stats["deopts"] > 0
    assert foriters(STENCIL) == 2  # (i and j)


EROSION = build(
    """
def f(mask, out):
    h, w = mask.shape
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            keep = 1
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    if mask[i + di, j + dj] == 0:
                        keep = 0
                        break
                if keep == 0:
                    break
            out[i, j] = keep
    return out, keep, di, dj
"""
)


def test_breaks_out_of_unrolled_loops_of_a_writer() -> None:
    rng = np.random.default_rng(3)
    for p in (0.0, 0.1, 0.5, 1.0):
        mask = (rng.random((7, 8)) >= p).astype(np.uint8)
        check(EROSION, mask, np.zeros_like(mask))
    check(EROSION, np.ones((3, 3), np.uint8), np.zeros((2, 2), np.uint8))  # IndexError on the store
    assert native_ran(EROSION)
    assert foriters(EROSION) == 2


@pytest.mark.parametrize("trips", [16, 17])
def test_only_short_loops_are_unrolled(trips: int) -> None:
    d = build(f"def f(x):\n    s = 0.0\n    for k in range({trips}):\n        s = s * x + k\n    return s\n")
    check(d, 0.5)
    assert foriters(d) == (0 if trips <= 16 else 1)


def test_a_range_longer_than_sys_maxsize_is_not_unrolled() -> None:
    # len(range(-3, 2**63 - 1)) raises OverflowError: that was an internal compiler
    # error, which left the function interpreted (found by a helper).
    d = build("def f(m, c):\n    s = 0.0\n    for j in range(-3, 9223372036854775807):\n        s += m[c, j]\n    return s\n")
    for shape, c in (((7, 0), 0), ((2, 3), 1), ((2, 3), 5)):
        check(d, np.ones(shape), c)
    assert foriters(d) == 1 and "internal" not in d.explain()  # (check: native code was entered)


def test_an_empty_loop_with_a_break_inside_another() -> None:
    # Unrolling the inner range(0) left its break's target unreachable, still a
    # predecessor of the outer loop's latch: unrolling the outer loop then kept a jump
    # to a block it had removed (an internal compiler error, found by the fuzzer).
    d = build(
        "def f(n):\n    t = 0\n    for i in range(0):\n        for j in range(0):\n            if n:\n                break\n"
        "        t += 1\n    for i in range(2):\n        for j in range(0):\n            if n:\n                break\n        t += 1\n    return t\n"
    )
    for n in (0, 1):
        check(d, n)
    assert foriters(d) == 0 and "internal" not in d.explain()


SCATTER = build(
    """
def f(a, w, out):
    for i in range(a.shape[0]):
        for d in range(3):
            out[i, d] = a[i] * w[d]
            t = out[i, d] * 1e300   # may overflow: NumPy warns, the loop goes on
            out[i, 3] += 1.0
    return d, t
"""
)


def test_a_resume_after_a_write_in_a_copy_gets_the_items_left() -> None:
    """A guard after a store of an unrolled copy resumes at the resume point after the
    store: the interpreter goes on with a fresh iterator holding exactly the items not
    yet done (one too many or too few would repeat or skip stores)."""
    a = np.array([1.0, 2.0, 3.0, 1e200])
    for w in (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0]), np.array([1.0]), np.array([1.0, 1e200, 3.0]), np.array([2.0, -1.0, 1e200])):
        check(SCATTER, a, w, np.zeros((4, 4)))
        check(SCATTER, a[:3], w, np.zeros((3, 4)))
    # The product overflows between a copy's two stores (in some copies): the
    # interpreter resumes after the first store, with the items left, and counts each
    # iteration once.
    for w in (np.array([1.0, 1.0, 1.0]), np.array([1e-300, 1.0, 1e-300]), np.array([1e-300, 1e-300, 1.0])):
        check(SCATTER, np.array([1.0, 1e10, 2.0]), w, np.zeros((3, 4)))
    assert native_ran(SCATTER) and SCATTER.stats["deopts"] > 0
    assert foriters(SCATTER) == 1


def test_a_loop_inside_whose_body_only_returns() -> None:
    # Found by the fuzzers: the inner "loop" has no way back (its body returns), so it
    # stayed a ForIter inside the copies, and both copies' ForIters led to the one body
    # block that reads the item: an internal compiler error (a phi of iterators).
    d = build("def f(n):\n    for i1 in range(2):\n        for i2 in range(n):\n            return i2 + i1\n    return -1\n")
    for n in (0, 1, 3):
        check(d, n)
    d0 = build("def f():\n    for i1 in range(2):\n        for i2 in range(0):\n            return i2\n")
    check(d0)
