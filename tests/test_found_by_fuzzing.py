"""Defects that random programs found (issue 15), each reduced to its smallest form.
Every test compares with CPython and also checks that native code really ran, so a
lowering that silently falls back cannot pass it."""

from __future__ import annotations

import math

import numpy as np

from cuvil_bc.testing import check, compile_source, native_ran


def test_a_dead_int_of_a_float_still_raises() -> None:
    # DCE took `int` for a removable exception class (both are types), so int(nan)
    # returned 1 instead of raising ValueError.
    f = compile_source(
        """
        def f(x):
            v = int(x)
            return 1
        """
    )
    check(f, 2.5)
    assert native_ran(f)
    for x in (math.nan, math.inf, -math.inf, 1e300):
        check(f, x)


def test_a_dead_user_exception_is_still_built() -> None:
    # Only builtin exception classes may be dropped: a user's __init__ can do anything.
    log: list[int] = []

    class Loud(Exception):
        def __init__(self, n: int) -> None:
            log.append(n)
            super().__init__(n)

    f = compile_source(
        """
        def f(x):
            e = Loud(x)
            return x + 1
        """,
        Loud=Loud,
    )
    check(f, 3, native=False)  # not compiled: the instance is kept, not raised
    assert log == [3, 3]


def test_numpy_warnings_of_an_overwritten_union_local() -> None:
    # `acc` is `int | np.float64`; the np.float64 member's sum warns in NumPy even
    # though the value is overwritten at once.
    f = compile_source(
        """
        def f(a, k):
            acc = 0
            for i in range(len(a)):
                acc += k
                acc = a[i]
            return acc
        """
    )
    check(f, np.array([1.0, 2.0, 3.0]), 1.0)
    assert native_ran(f)
    check(f, np.array([1e308, 1e308, 1.0]), 1e308)


def test_resume_with_a_call_being_built_on_the_stack() -> None:
    # The conditional expression's merge is a resume point while `abs` (and the NULL
    # CPython keeps beside it) is on the stack.
    f = compile_source(
        """
        def f(b, x, y):
            b[0] = abs(x if y else 1) * x
            return 0
        """
    )
    check(f, np.zeros(2), 3, True)
    assert native_ran(f)
    before = f.stats["deopts"]
    check(f, np.zeros(2), 2**62, True)  # the product overflows int64: resumed
    assert f.stats["deopts"] == before + 1
    check(f, np.zeros(2), 2**62, False)


def test_resume_with_a_method_call_being_built_on_the_stack() -> None:
    f = compile_source(
        """
        def f(b, x, y):
            b[0] = math.copysign(x * x if y else 1.0, x * 2**40)
            b[1] = x
            return b[0]
        """
    )
    check(f, np.zeros(2), 3, True)
    assert native_ran(f)
    check(f, np.zeros(2), 2**40, True)


def test_item_of_a_union_of_tuples() -> None:
    for src in (
        "def f(a, b):\n    t = (a, 1) if b else (1.5, 2)\n    return t[0]\n",
        "def f(a, b):\n    t = (a, 1) if b else (1.5, 2)\n    x, y = t\n    return x + y\n",
        "def f(a, b):\n    t = (a, (1, 2.5)) if b else (1.5, (2, 3))\n    return t[1][-1] + t[-2]\n",
    ):
        f = compile_source(src)
        for args in ((1, True), (2, False), (2.5, True), (2**63 - 1, True)):
            check(f, *args)
        assert native_ran(f), src


def test_a_branch_whose_two_targets_became_one_block() -> None:
    # `c or 0.1` is always true: both edges of the test lead to the loop header, whose
    # phi had one entry per edge after the branch became a jump.
    f = compile_source(
        """
        def f(c):
            w = 0
            while w < 3 and (c or 0.1):
                w += 1
            return w
        """
    )
    for c in (0, 1, -3):
        check(f, c)
    assert native_ran(f)


def test_nan_made_from_constants_that_meet_in_llvm() -> None:
    # LLVM folded `inf - inf` (in an inlined callee) and `inf * 0.0` (a select of
    # constants) to a positive NaN; CPython's C code on this machine gives the
    # processor's default NaN, whose sign copysign shows.
    inlined = compile_source(
        """
        def h(u, w):
            return u - w

        def f(x):
            return math.copysign(1.0, h(math.inf, math.inf)) + x
        """
    )
    check(inlined, 1.0)
    selected = compile_source(
        """
        def f(n):
            b = 0.0
            if n > 100:
                b = 1.0
            return math.copysign(1.0, math.inf * b)
        """
    )
    for n in (1, 300):
        check(selected, n)
    assert native_ran(inlined) and native_ran(selected)
