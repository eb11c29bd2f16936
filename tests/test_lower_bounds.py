"""``x - y`` of two ints known to be at least 0 needs no overflow test
(opt/bounds.lower_bound, cannot_overflow). Each function here is compared with
CPython on arguments that would overflow int64 wherever a bound was wrong."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.opt import bounds
from cuvil_bc.testing import check, compile_source, native_ran


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


# Loop items, a length and a min of them: all at least 0.
ITEMS = build(
    """
def f(a, n, m):
    t = 0
    for i in range(n):
        for k in range(min(m, i + 1)):
            t += (i - k) * 3 + (len(a) - k)
    return t
"""
)
# Items of ranges that start below 0, or at an argument: their differences can
# leave int64, and CPython's ints are exact.
SHIFTED = build(
    """
def f(lo, hi, c):
    t = 0
    for i in range(lo, lo + 2):
        for k in range(c, c + 2):
            t = i - k
    return t
"""
)
PLAIN = build("def f(a, b):\n    return a - b\n")


def test_differences_of_items() -> None:
    for n, m in ((0, 0), (5, 3), (40, 7), (3, 40)):
        check(ITEMS, np.ones(9), n, m)
    assert native_ran(ITEMS)


@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 3))
@settings(max_examples=150, deadline=None)
def test_differences_that_may_leave_int64(lo: int, c: int) -> None:
    check(SHIFTED, lo, 0, c, native=False)
    check(PLAIN, lo, c)


def test_the_bounds_themselves() -> None:
    from cuvil_bc.ir import ops as O

    ITEMS(np.ones(3), 4, 2)
    (spec,) = ITEMS.dispatcher._spec(None)
    subs = [op for op in spec.fn.ops() if isinstance(op, O.BinOp) and op.op == "-" and not isinstance(op.rhs, O.Const)]
    assert subs and all(bounds.cannot_overflow(op) for op in subs)
    SHIFTED(-5, 0, 3)
    (spec,) = SHIFTED.dispatcher._spec(None)
    subs = [op for op in spec.fn.ops() if isinstance(op, O.BinOp) and op.op == "-"]
    assert subs and not any(bounds.cannot_overflow(op) for op in subs)
