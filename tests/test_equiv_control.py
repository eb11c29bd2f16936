"""Equivalence of control flow: branches, loops over range, break/continue/else, returns
of mixed types, tuples, assert and raise, and loop-carried variables whose type changes.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import (
    INT64_MAX,
    INT64_MIN,
    check,
    compile_source,
    equivalent,
    native_ran,
    numbers,
)

build = compile_source


def ints(lo: int = -50, hi: int = 50) -> Any:
    return st.one_of(st.integers(lo, hi), st.sampled_from([0, 1, -1, lo, hi]))


def run_cases(d: Any, cases: list[tuple[Any, ...]], native: bool = True) -> None:
    for args in cases:
        check(d, *args)
    if native:
        assert native_ran(d), d.explain()


# -- branches -----------------------------------------------------------------------

def test_if_elif_else() -> None:
    d = build(
        """
        def f(x, y):
            if x < 0:
                r = -x
            elif x == 0:
                r = y
            elif x < y:
                r = x * y
            else:
                r = x - y
            return r
        """
    )
    check(d, 1, 2)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


def test_nested_if_truthiness() -> None:
    d = build(
        """
        def f(x, y):
            if x:
                if y:
                    return 1
                return 2
            elif not y:
                return 3
            return 4
        """
    )
    check(d, 1, 0)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=120)
    assert native_ran(d), d.explain()


# -- while loops --------------------------------------------------------------------

def test_while_loop() -> None:
    d = build(
        """
        def f(n):
            i = 0
            s = 0
            while i < n:
                s += i * i
                i += 1
            return s
        """
    )
    run_cases(d, [(0,), (1,), (10,), (-5,), (1000,), (3.5,), (True,)])
    equivalent(d, st.tuples(ints(-10, 3000)), max_examples=60)


def test_while_collatz_overflow() -> None:
    d = build(
        """
        def f(n):
            steps = 0
            while n != 1 and steps < 1000:
                if n % 2 == 0:
                    n = n // 2
                else:
                    n = 3 * n + 1
                steps += 1
            return (n, steps)
        """
    )
    run_cases(d, [(1,), (27,), (97,), (INT64_MAX // 3,), (INT64_MAX,), (2**62,), (-7,), (0,)])
    equivalent(d, st.tuples(numbers(floats=False)), max_examples=60)


def test_while_break_continue_else() -> None:
    d = build(
        """
        def f(n, stop):
            i = 0
            acc = 0
            while i < n:
                i += 1
                if i % 3 == 0:
                    continue
                if i == stop:
                    break
                acc += i
            else:
                acc = -acc
            return acc
        """
    )
    check(d, 10, 5)
    equivalent(d, st.tuples(ints(-5, 60), ints(-5, 60)), max_examples=120)
    assert native_ran(d), d.explain()


def test_while_true_break() -> None:
    d = build(
        """
        def f(x):
            n = 0
            while True:
                x = x / 2
                n += 1
                if x < 1:
                    break
            return n
        """
    )
    run_cases(d, [(1,), (1000,), (0.5,), (1e300,), (INT64_MAX,), (-3,)])
    equivalent(d, st.tuples(st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats(-1e300, 1e300))), max_examples=60)


# -- for loops over range -----------------------------------------------------------

RANGE_FORMS = {
    "one": ("range(a)", 1),
    "two": ("range(a, b)", 2),
    "three": ("range(a, b, c)", 3),
}


@pytest.mark.parametrize("form", list(RANGE_FORMS))
def test_for_range(form: str) -> None:
    expr, nargs = RANGE_FORMS[form]
    params = ", ".join("abc"[:nargs])
    d = build(
        f"""
        def f({params}):
            s = 0
            n = 0
            last = -999
            for i in {expr}:
                s += i
                n += 1
                last = i
            return (s, n, last)
        """
    )
    small = st.integers(-40, 40)
    step = st.one_of(st.integers(-7, 7), st.sampled_from([0, 1, -1, 100, -100, INT64_MAX, INT64_MIN]))
    strategy = {1: st.tuples(small), 2: st.tuples(small, small), 3: st.tuples(small, small, step)}[nargs]
    fixed = {
        1: [(0,), (-1,), (-100,), (1,), (10,), (True,), (False,)],
        2: [(0, 0), (5, 5), (5, 4), (-3, 3), (3, -3), (-10, -5), (True, 5), (0, False)],
        3: [(0, 10, 1), (0, 10, 3), (10, 0, -1), (10, 0, -3), (0, 10, -1), (10, 0, 1), (0, 0, 1),
            (0, 10, 0), (10, 0, 0), (0, 0, 0), (-5, 5, 100), (5, -5, -100), (0, 10, INT64_MAX),
            (10, 0, INT64_MIN), (INT64_MAX - 3, INT64_MAX, 1), (INT64_MIN, INT64_MIN + 4, 1),
            (INT64_MIN + 4, INT64_MIN, -1), (0, 5, True), (0, 5, False)],
    }[nargs]
    run_cases(d, fixed)
    equivalent(d, strategy, max_examples=100)


def test_range_zero_step_raises() -> None:
    d = build(
        """
        def f(a, b, c):
            t = 0
            for i in range(a, b, c):
                t += i
            return t
        """
    )
    run_cases(d, [(0, 10, 2), (0, 10, 0), (10, 0, 0), (0, 0, 0), (-1, 1, 0), (0, 1, False)])


def test_range_float_argument_raises() -> None:
    d = build(
        """
        def f(n):
            t = 0
            for i in range(n):
                t += i
            return t
        """
    )
    run_cases(d, [(5,), (0,), (-3,)])
    for args in [(5.0,), (math.nan,), (2.5,)]:
        check(d, *args, native=False)  # TypeError in CPython


def test_range_large_bounds_sum_overflows() -> None:
    d = build(
        """
        def f(a, n):
            t = 0
            for i in range(a, a + n):
                t += i
            return t
        """
    )
    run_cases(d, [(0, 10), (INT64_MAX - 5, 3), (INT64_MAX // 2, 4), (INT64_MIN, 3), (INT64_MIN + 10, 5), (INT64_MAX - 2, 5)])


def test_for_break_continue_else() -> None:
    d = build(
        """
        def f(n, stop, skip):
            acc = 0
            for i in range(n):
                if i % skip == 0:
                    continue
                if i == stop:
                    break
                acc += i
            else:
                acc += 1000
            return acc
        """
    )
    check(d, 10, 5, 3)
    run_cases(d, [(10, 5, 3), (10, 50, 3), (0, 0, 1), (10, 5, 0), (5, -1, -2), (6, 100, 7)])
    equivalent(d, st.tuples(ints(-5, 40), ints(-5, 40), ints(-4, 4)), max_examples=120)


def test_nested_loops_break() -> None:
    d = build(
        """
        def f(n, m):
            count = 0
            for i in range(n):
                for j in range(i, m):
                    if (i + j) % 5 == 4:
                        break
                    count += j - i
                else:
                    count -= 1
            return count
        """
    )
    check(d, 5, 7)
    equivalent(d, st.tuples(ints(-3, 30), ints(-3, 30)), max_examples=100)
    assert native_ran(d), d.explain()


def test_loop_variable_after_loop() -> None:
    d = build(
        """
        def f(n):
            i = -1
            for i in range(n):
                pass
            return i
        """
    )
    run_cases(d, [(0,), (1,), (5,), (-5,)])


# -- returns ------------------------------------------------------------------------

def test_early_returns() -> None:
    d = build(
        """
        def f(x, n):
            for i in range(n):
                if i * x > 100:
                    return i
                if i * x < -100:
                    return -i
            return n * 2
        """
    )
    check(d, 3, 100)
    equivalent(d, st.tuples(numbers(), ints(-5, 200)), max_examples=120)
    assert native_ran(d), d.explain()


def test_mixed_returns() -> None:
    d = build(
        """
        def f(x):
            if x > 10:
                return 1
            if x < -10:
                return None
            if x == 0:
                return 0.5
            if x == 1:
                return True
            return x
        """
    )
    run_cases(d, [(11,), (-11,), (0,), (1,), (5,), (0.0,), (-0.0,), (1.0,), (math.nan,), (True,), (False,)])
    equivalent(d, st.tuples(numbers()), max_examples=120)


def test_implicit_none_return() -> None:
    d = build(
        """
        def f(x):
            if x > 0:
                return x * 2
        """
    )
    run_cases(d, [(1,), (0,), (-1,), (2.5,), (-2.5,), (math.nan,), (INT64_MAX,)])
    equivalent(d, st.tuples(numbers()), max_examples=60)


def test_no_return_at_all() -> None:
    d = build(
        """
        def f(x):
            y = x + 1
        """
    )
    run_cases(d, [(1,), (1.5,), (INT64_MAX,), (True,)])


def test_return_int_or_float_by_path() -> None:
    d = build(
        """
        def f(x, n):
            r = 0
            if n > 2:
                r = x / n
            elif n < -2:
                r = x // n
            return r
        """
    )
    check(d, 5, 3)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


# -- tuples -------------------------------------------------------------------------

def test_fib_tuple_swap() -> None:
    d = build(
        """
        def f(n):
            a, b = 0, 1
            for _ in range(n):
                a, b = b, a + b
            return a
        """
    )
    run_cases(d, [(0,), (1,), (2,), (10,), (50,), (90,), (92,), (93,), (100,), (200,), (-3,)])


def test_tuple_build_and_return() -> None:
    d = build(
        """
        def f(x, y):
            t = (x, y, x + y)
            a, b, c = t
            return (c, (a, b), ())
        """
    )
    check(d, 1, 2)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert native_ran(d), d.explain()


def test_nested_tuple_unpack() -> None:
    d = build(
        """
        def f(x, y):
            (a, (b, c)), d = (x, (y, x * y)), y - x
            return a + b + c + d, ((d, c), b)
        """
    )
    check(d, 2, 3)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert native_ran(d), d.explain()


def test_tuple_argument() -> None:
    d = build(
        """
        def f(p, k):
            x, y = p
            return (x * k, y * k)
        """
    )
    run_cases(d, [((1, 2), 3), ((1.5, 2), 3), ((1, 2.5), 0.5), ((INT64_MAX, 1), 2), ((True, False), True), ((0.0, -0.0), -1)])
    equivalent(d, st.tuples(st.tuples(numbers(), numbers()), numbers()), max_examples=100)


def test_nested_tuple_argument() -> None:
    d = build(
        """
        def f(p):
            (a, b), c = p
            return (c, a + b, p[0], p[-1], len(p), len(p[0]))
        """
    )
    run_cases(d, [(((1, 2), 3),), (((1.5, 2), 3),), (((1, 2), 3.5),), (((INT64_MAX, 1), 0),), (((True, 1), None),)])


def test_tuple_indexing_constant() -> None:
    d = build(
        """
        def f(x, y):
            t = (x, y, 7)
            return t[0] * t[2] - t[-2] + t[1]
        """
    )
    check(d, 1, 2)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert native_ran(d), d.explain()


def test_tuple_concat_and_truth() -> None:
    d = build(
        """
        def f(x, y):
            t = (x,) + (y, x)
            e = ()
            return (t, bool(e), not t, len(t))
        """
    )
    run_cases(d, [(1, 2), (1.5, True), (0, 0.0)])


# -- assert and raise ---------------------------------------------------------------

def test_assert_without_message() -> None:
    d = build(
        """
        def f(x):
            assert x > 0
            return x + 1
        """
    )
    run_cases(d, [(1,), (0,), (-1,), (0.5,), (-0.0,), (math.nan,), (True,), (False,)])


def test_assert_with_message() -> None:
    d = build(
        """
        def f(x):
            assert x != 3, "x must not be three"
            return x * 2
        """
    )
    run_cases(d, [(1,), (3,), (3.0,), (2.5,), (INT64_MAX,)])


def test_raise_value_error() -> None:
    d = build(
        """
        def f(x):
            if x < 0:
                raise ValueError("negative input")
            if x > 100:
                raise OverflowError("too big")
            return x
        """
    )
    run_cases(d, [(1,), (-1,), (101,), (-0.5,), (100.5,), (math.nan,), (50.0,)])
    equivalent(d, st.tuples(numbers()), max_examples=60)


def test_raise_in_loop() -> None:
    d = build(
        """
        def f(n):
            s = 0
            for i in range(n):
                s += i
                if s > 50:
                    raise ValueError("sum exceeded")
            return s
        """
    )
    run_cases(d, [(3,), (10,), (11,), (0,), (-1,)])


def test_raise_without_message() -> None:
    d = build(
        """
        def f(x):
            if x < 0:
                raise ValueError
            if x > 100:
                raise ZeroDivisionError()
            return x * 2
        """
    )
    run_cases(d, [(1,), (-1,), (101,), (-0.5,), (100.5,), (math.nan,), (50.0,)])
    equivalent(d, st.tuples(numbers()), max_examples=60)


# -- loop-carried types -------------------------------------------------------------

def test_int_becomes_float_in_loop() -> None:
    d = build(
        """
        def f(n):
            s = 0
            for i in range(n):
                s += 0.5
            return s
        """
    )
    run_cases(d, [(0,), (1,), (2,), (10,), (-1,)])


def test_int_becomes_float_conditionally() -> None:
    d = build(
        """
        def f(n, x):
            s = 0
            for i in range(n):
                if i == 3:
                    s = s + x
                else:
                    s = s + i
            return s
        """
    )
    run_cases(d, [(0, 1.5), (3, 1.5), (4, 1.5), (10, 1.5), (10, 2), (10, INT64_MAX), (10, -0.0), (4, True)])
    equivalent(d, st.tuples(ints(-3, 20), numbers()), max_examples=100)


def test_float_loop_accumulates_like_cpython() -> None:
    d = build(
        """
        def f(n, x):
            s = 0
            p = 1
            for i in range(1, n):
                s += x / i
                p *= x
            return (s, p)
        """
    )
    check(d, 10, 0.1)
    equivalent(d, st.tuples(ints(-3, 60), numbers()), max_examples=100)
    assert native_ran(d), d.explain()


def test_while_int_float_mix() -> None:
    d = build(
        """
        def f(x):
            n = 0
            while x > 1:
                x = x / 2 if x % 2 else x // 2
                n += 1
            return (x, n)
        """
    )
    run_cases(d, [(100,), (101,), (1,), (0,), (2**62 + 1,), (1e10,), (7.5,), (INT64_MAX,)])
    equivalent(d, st.tuples(st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats(-1e300, 1e300))), max_examples=100)


def test_loops_with_several_back_edges() -> None:
    # Each path through the body changes different loop-carried values; the lowering
    # merges the back edges in one latch block per loop (loops.LoopControl).
    d = build(
        """
def f(n, k):
    a = 0
    b = 0.0
    c = 1
    for i in range(n):
        if i % 3 == 0:
            a += i
            continue
        elif i % 3 == 1:
            b += i * 0.5
        else:
            c = c * 3 % 1000003
        if a > k:
            break
    j = 0
    while j < n:
        j += 1
        if j % 2:
            continue
        a -= 1
    return a, b, c, j
"""
    )
    run_cases(d, [(0, 0), (100, 10**6), (7, 3), (-3, 5)])
    equivalent(d, st.tuples(ints(-5, 60), ints(-10, 500)), max_examples=150)
    assert "latch." in d.inspect_llvm()
