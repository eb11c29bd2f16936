"""Equivalence of calls and globals: module-level constants (and their rebinding), calls to
other module-level functions with positional, keyword and default arguments, recursion,
and deoptimisation that propagates out of a callee.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest
from hypothesis import strategies as st

import cuvil_bc
from cuvil_bc.testing import (
    INT64_MAX,
    INT64_MIN,
    check,
    describe,
    equivalent,
    native_ran,
    numbers,
    run,
    same_value,
)

# -- module-level code that the compiled functions use --------------------------------

SCALE = 3
OFFSET = 0.5
LIMIT = 100


def scaled(x):
    return x * SCALE + OFFSET


def use_scale(x):
    return x * SCALE


def use_scaled(x):
    return scaled(x) - 1


def clamp(x):
    if x > LIMIT:
        return LIMIT
    return x


def helper(a, b=2, c=0.5):
    return a * b + c


def use_helper_positional(x, y):
    return helper(x, y, 1)


def use_helper_defaults(x):
    return helper(x) + helper(x, 3)


def twice(v):
    return v * 2


def apply_default(x, g=twice, h=abs):
    return g(x) + h(x)


def use_function_defaults(x):
    return apply_default(x) - apply_default(x, abs, twice)


def apply_or_twice(x, key=None):
    if key is None:
        key = twice
    return key(x)


def apply_unless_deleted(g, x):
    if x < -100:
        del g
    return g(x)


def use_function_parameters(x):
    return apply_or_twice(x) + apply_or_twice(x, twice) + apply_unless_deleted(twice, x)


def use_helper_keywords(x, y):
    return helper(x, c=y) + helper(b=y, a=x) + helper(x, y, c=0)


def kw_target(x, *, scale=2):
    return x * scale


def use_kw_target(x):
    return kw_target(x) + kw_target(x, scale=3)


def with_defaults(x, y=10, z=0.25):
    return (x + y) * z


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def square(x):
    return x * x


def sum_squares(a, b):
    return square(a) + square(b)


def maybe_none(x):
    if x > 0:
        return x
    return None


def use_maybe_none(x):
    r = maybe_none(x)
    if r is None:
        return -1
    return r * 2


def pair(x, y):
    return (y, x + y)


def use_pair(x, y, n):
    for _ in range(n):
        x, y = pair(x, y)
    return x


def raising_callee(x):
    if x < 0:
        raise ValueError
    return x + 1


def use_raising_callee(x):
    return raising_callee(x) * 2


def float_callee(x):
    return x / 3


def use_float_callee(x, y):
    return float_callee(x) + float_callee(y) ** 2


@cuvil_bc.compile
def compiled_callee(x):
    return x * 2 + 1


def use_compiled_callee(x):
    return compiled_callee(x) + 1


# -- helpers --------------------------------------------------------------------------

def assert_native(d: Any) -> None:
    assert native_ran(d), d.explain()
    assert "interpreted" not in d.explain(), d.explain()


def check_kw(d: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """`check` for a call with keyword arguments."""
    expected = run(lambda *a: d.py_func(*a, **kwargs), args)
    actual = run(lambda *a: d(*a, **kwargs), args)
    ok = expected[0] == actual[0] and (
        same_value(expected[1], actual[1]) if expected[0] == "ok" else expected[1] == actual[1]
    )
    assert ok, f"{args!r} {kwargs!r}: CPython {describe(expected)}, cuvil_bc {describe(actual)}\n{d.explain()}"


def rebound(name: str, value: Any) -> Callable[[], None]:
    """Rebind a module global; return a function that restores it."""
    g = globals()
    old = g[name]
    g[name] = value
    return lambda: g.__setitem__(name, old)


# -- globals --------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [scaled, use_scale, clamp])
def test_global_constants(fn: Callable[..., Any]) -> None:
    d = cuvil_bc.compile(fn)
    check(d, 1)
    equivalent(d, st.tuples(numbers()), max_examples=100)
    assert_native(d)


@pytest.mark.parametrize("value", [2, 2.5, -1, 0, True, 2**70, INT64_MAX, math.nan, -0.0])
def test_global_rebinding_noticed(value: Any) -> None:
    d = cuvil_bc.compile(use_scale)
    for x in (2, 2.5, INT64_MAX):
        check(d, x)
    restore = rebound("SCALE", value)
    fits = not isinstance(value, int) or INT64_MIN <= value <= INT64_MAX  # a big int constant is not compiled
    try:
        for x in (2, 2.5, INT64_MAX, -3):
            check(d, x, native=fits)
    finally:
        restore()
    for x in (2, 2.5, INT64_MAX):
        check(d, x)
    assert native_ran(d), d.explain()


def test_global_rebinding_read_by_callee() -> None:
    d = cuvil_bc.compile(use_scaled)
    check(d, 4)
    check(d, 4.5)
    restore = rebound("SCALE", 7.25)
    try:
        check(d, 4)
        check(d, 4.5)
        restore2 = rebound("OFFSET", 2**65)
        try:
            check(d, 4, native=False)  # a big int constant is not compiled
        finally:
            restore2()
    finally:
        restore()
    check(d, 4)
    assert native_ran(d), d.explain()


def test_global_rebinding_type_change_to_none() -> None:
    d = cuvil_bc.compile(clamp)
    check(d, 150)
    restore = rebound("LIMIT", None)
    try:
        check(d, 150, native=False)  # TypeError in CPython: '>' between int and NoneType
        check(d, 1.5, native=False)
    finally:
        restore()
    check(d, 150)
    check(d, 50.5)
    assert native_ran(d), d.explain()


def test_callee_rebinding_noticed() -> None:
    d = cuvil_bc.compile(use_helper_positional)
    check(d, 2, 3)

    def other(a, b=5, c=0.5):
        return a - b - c

    restore = rebound("helper", other)
    try:
        check(d, 2, 3)
        check(d, 2.5, 3)
    finally:
        restore()
    check(d, 2, 3)
    assert native_ran(d), d.explain()


def test_callee_defaults_changed_noticed() -> None:
    d = cuvil_bc.compile(use_helper_defaults)
    check(d, 2)
    old = helper.__defaults__
    helper.__defaults__ = (10, 0.0)
    try:
        check(d, 2)
        check(d, 2.5)
    finally:
        helper.__defaults__ = old
    check(d, 2)
    assert native_ran(d), d.explain()


# -- calls ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "fn", [use_helper_positional, use_helper_keywords, sum_squares, use_float_callee], ids=lambda f: f.__name__
)
def test_calls_two_args(fn: Callable[..., Any]) -> None:
    d = cuvil_bc.compile(fn)
    check(d, 2, 3)
    check(d, 2.5, 3)
    check(d, INT64_MAX, 1)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert_native(d)


def test_call_with_defaults() -> None:
    d = cuvil_bc.compile(use_helper_defaults)
    check(d, 2)
    equivalent(d, st.tuples(numbers()), max_examples=100)
    assert_native(d)


def test_a_default_that_is_a_function_is_called() -> None:
    # Found by a helper: a callee that called its parameter (a function, passed by
    # its default or explicitly) was typed but not lowered: an internal compiler error
    # (AssertionError), with a warning on stderr, and the caller ran interpreted.
    d = cuvil_bc.compile(use_function_defaults)
    for x in (2, -3, 2.5, INT64_MAX):
        check(d, x)
    assert native_ran(d), d.explain()
    equivalent(d, st.tuples(numbers()), max_examples=50)
    # Found by a second helper: the same through a phi (`if key is None: key = f`) or
    # an unbound-local check (`del g` on a path), and the UnboundLocalError CPython
    # raises where the path deletes it.
    d = cuvil_bc.compile(use_function_parameters)
    for x in (2, -3, 2.5, -1000):
        check(d, x)
    assert native_ran(d), d.explain()


def test_call_keyword_only_callee() -> None:
    d = cuvil_bc.compile(use_kw_target)
    for x in (1, 2.5, INT64_MAX, True, -0.0):
        check(d, x)
    equivalent(d, st.tuples(numbers()), max_examples=50)
    assert_native(d)


def test_top_level_keywords_and_defaults() -> None:
    d = cuvil_bc.compile(with_defaults)
    for x in (1, 2.5, INT64_MAX, True):
        check(d, x)
        check(d, x, 3)
        check(d, x, 3, 4)
        check_kw(d, (x,), {"z": 2})
        check_kw(d, (), {"x": x, "y": 1.5})
        check_kw(d, (x,), {"y": INT64_MAX, "z": 1})
    check_kw(d, (1,), {"q": 2})  # CPython's TypeError for an unknown keyword
    check_kw(d, (1, 2, 3), {"x": 2})  # multiple values for x
    check_kw(d, (), {})
    assert native_ran(d), d.explain()


def test_callee_returning_none() -> None:
    d = cuvil_bc.compile(use_maybe_none)
    check(d, 1)
    equivalent(d, st.tuples(numbers()), max_examples=80)
    assert native_ran(d), d.explain()


def test_callee_returning_tuple() -> None:
    d = cuvil_bc.compile(use_pair)
    for args in [(0, 1, 10), (0, 1, 92), (0, 1, 93), (0, 1, 100), (0.5, 1, 20), (1, 1, 0), (1, 1, -1)]:
        check(d, *args)
    assert native_ran(d), d.explain()


def test_callee_raises() -> None:
    d = cuvil_bc.compile(use_raising_callee)
    for x in (1, -1, 0, 2.5, -2.5, INT64_MAX, math.nan):
        check(d, x)
    assert native_ran(d), d.explain()


def test_call_compiled_callee() -> None:
    d = cuvil_bc.compile(use_compiled_callee)
    for x in (1, 2.5, INT64_MAX, -3):
        check(d, x)
    equivalent(d, st.tuples(numbers()), max_examples=40)
    assert native_ran(d), d.explain()


# -- recursion ------------------------------------------------------------------------

def test_recursive_fib() -> None:
    d = cuvil_bc.compile(fib)
    for n in (0, 1, 2, 10, 20, 25, -1, -5, True, False, 2.0, 10.0, 0.5):
        check(d, n)
    assert native_ran(d), d.explain()


def test_mutual_recursion() -> None:
    d_even = cuvil_bc.compile(is_even)
    d_odd = cuvil_bc.compile(is_odd)
    for n in (0, 1, 2, 3, 10, 11, 100, 101, 500, True, False):
        check(d_even, n)
        check(d_odd, n)
    assert native_ran(d_even), d_even.explain()
    assert native_ran(d_odd), d_odd.explain()


def test_recursion_overflow_deopts() -> None:
    d = cuvil_bc.compile(fact)
    for n in range(-2, 40):
        check(d, n)
    for n in (2.0, 20.5, 25.0, 171.0, True):
        check(d, n)
    assert native_ran(d), d.explain()
    assert d(21) == math.factorial(21) and type(d(21)) is int


def test_callee_overflow_deopts() -> None:
    d = cuvil_bc.compile(sum_squares)
    for args in [(3, 4), (3037000499, 1), (3037000500, 0), (2**32, 2**32), (INT64_MAX, 0), (INT64_MIN, 0),
                 (2**31, 2**31), (-(2**32), 1), (2**62, 2.0), (1e200, 1e200)]:
        check(d, *args)
    assert native_ran(d), d.explain()
    assert d(2**32, 0) == 2**64 and type(d(2**32, 0)) is int


def test_callee_overflow_in_loop() -> None:
    ns: dict[str, Any] = {"__name__": "equiv_calls_generated"}
    exec(
        "def step(x):\n    return x * 3 + 1\n\n"
        "def f(x, n):\n    for _ in range(n):\n        x = step(x)\n    return x\n",
        ns,
    )
    d = cuvil_bc.compile(ns["f"])
    for args in [(1, 10), (1, 39), (1, 40), (1, 41), (1, 60), (-1, 50), (0.5, 100), (1, 0)]:
        check(d, *args)
    equivalent(d, st.tuples(numbers(), st.integers(-2, 70)), max_examples=80)
    assert native_ran(d), d.explain()


def countdown(n):
    if n == 0:
        return 0
    return 1 + countdown(n - 1)


def test_deep_recursion_matches_recursion_error() -> None:
    # Beyond the recursion limit CPython raises RecursionError; native code must not
    # overflow the C stack or return a value.
    d = cuvil_bc.compile(countdown)
    for n in (0, 10, 500, 5000, 100_000):
        check(d, n)
    assert native_ran(d), d.explain()
