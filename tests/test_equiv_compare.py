"""Equivalence of comparisons, boolean operators and conditional expressions.

Comparisons between ints and floats are exact in CPython (2**53 + 1 != float(2**53)),
NaN compares unequal to everything, chained comparisons short-circuit and evaluate each
operand once, and `and`/`or` return one of their operands with its own type.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import (
    BENIGN,
    INT64_MAX,
    INT64_MIN,
    KINDS,
    PAIRS,
    check,
    compile_source,
    equivalent,
    native_ran,
    numbers,
    scalar,
)

CMPOPS = ["<", "<=", "==", "!=", ">", ">="]


build = compile_source




def near_pairs() -> Any:
    """Pairs of an int and a float that are close: where int->double conversion lies."""
    base = st.one_of(
        st.integers(-(2**63), 2**63 - 1),
        st.sampled_from([2**53, 2**53 + 1, 2**53 - 1, 2**54 + 1, 2**62 + 1, INT64_MAX, INT64_MIN, INT64_MIN + 1]),
    )
    return base.flatmap(
        lambda i: st.tuples(
            st.just(i),
            st.sampled_from([float(i), math.nextafter(float(i), math.inf), math.nextafter(float(i), -math.inf)]),
        )
    )


@pytest.mark.parametrize("lhs,rhs", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", CMPOPS)
def test_compare(op: str, lhs: str, rhs: str) -> None:
    d = build(f"def f(a, b):\n    return a {op} b\n")
    check(d, BENIGN[lhs], BENIGN[rhs])
    equivalent(d, st.tuples(scalar(lhs), scalar(rhs)), max_examples=60)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("op", CMPOPS)
def test_compare_int_float_exact(op: str) -> None:
    d = build(f"def f(a, b):\n    return (a {op} b, b {op} a)\n")
    cases: list[tuple[Any, ...]] = [
        (2**53 + 1, float(2**53)), (2**53, float(2**53)), (2**53 - 1, float(2**53)), (2**53 + 1, 2.0**53 + 2),
        (INT64_MAX, 2.0**63), (INT64_MAX, 9.223372036854775e18), (INT64_MIN, -(2.0**63)), (INT64_MIN + 1, -(2.0**63)),
        (INT64_MAX, math.inf), (INT64_MIN, -math.inf), (0, -0.0), (0, 0.0), (1, math.nan), (0, math.nan),
        (3, 3.0000000000000004), (-3, -2.9999999999999996), (2**62 + 1, 2.0**62), (True, 1.0), (False, -0.0),
        (True, math.nan), (7, 7.5), (-7, -7.5), (2**63, 2.0**63), (2**64 + 1, 2.0**64),
    ]
    for args in cases:
        check(d, *args)
    equivalent(d, near_pairs(), max_examples=150)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("op", CMPOPS)
def test_compare_nan(op: str) -> None:
    d = build(f"def f(a, b):\n    return (a {op} b, not (a {op} b), b {op} a)\n")
    for a in (math.nan, -math.nan):
        for b in (math.nan, 0.0, 1.0, math.inf, -math.inf, 0, 1, True, INT64_MAX):
            check(d, a, b)
            check(d, b, a)
    assert native_ran(d), d.explain()


def test_compare_in_branch() -> None:
    d = build(
        """
        def f(a, b):
            if a < b:
                return 1
            elif a == b:
                return 0
            elif a > b:
                return -1
            return 99
        """
    )
    check(d, 1, 2)
    check(d, math.nan, 1.0)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=200)
    assert native_ran(d), d.explain()


CHAINS = [
    "a < b < c",
    "a <= b <= c",
    "a < b > c",
    "a == b == c",
    "a != b != c",
    "a < b <= c < a + 1",
    "a >= b == c",
    "0 <= a < 10",
    "-1.5 < a <= b",
]


@pytest.mark.parametrize("expr", CHAINS)
def test_chained_comparison(expr: str) -> None:
    d = build(f"def f(a, b, c):\n    return {expr}\n")
    check(d, 1, 2, 3)
    equivalent(d, st.tuples(numbers(), numbers(), numbers()), max_examples=80)
    for args in [(1, 2, 3), (3, 2, 1), (1, 1, 1), (math.nan, 1, 2), (1, math.nan, 2), (1, 2, math.nan), (2**53 + 1, 2.0**53, 2**53)]:
        check(d, *args)
    assert native_ran(d), d.explain()


def test_chained_comparison_short_circuits() -> None:
    # The third operand raises ZeroDivisionError only if it is evaluated.
    d = build("def f(a, b, c):\n    return a < b < 1 // c\n")
    for args in [(1, 2, 0), (2, 1, 0), (1, 2, 1), (0, 1, 1), (-1, 0, -1), (5, 5, 0), (1.5, 2, 0)]:
        check(d, *args)
    equivalent(d, st.tuples(numbers(floats=False), numbers(floats=False), numbers(floats=False)), max_examples=100)
    assert native_ran(d), d.explain()


def test_chained_comparison_middle_evaluated_once() -> None:
    # The middle operand is an expression that would overflow int64; it is computed once
    # and its value used for both comparisons.
    d = build("def f(a, b, c):\n    return a < b * b < c\n")
    for args in [(0, 3, 10), (0, 3, 9), (0, 3**21, INT64_MAX), (-1, 2**32, 2**62), (0, 2**31, INT64_MAX), (1.0, 2, 5)]:
        check(d, *args)
    equivalent(d, st.tuples(numbers(), numbers(), numbers()), max_examples=100)
    assert native_ran(d), d.explain()


def test_chained_comparison_via_call_evaluated_once() -> None:
    ns_src = """
        def g(x):
            return x * 3 + 1

        def f(a, b, c):
            return a < g(b) <= c
    """
    d = build(ns_src)
    for args in [(0, 1, 4), (0, 1, 3), (5, 1, 10), (0, INT64_MAX // 3, INT64_MAX), (0.5, 0, 1.0)]:
        check(d, *args)
    equivalent(d, st.tuples(numbers(), numbers(), numbers()), max_examples=80)
    assert native_ran(d), d.explain()


BOOLOPS = ["a and b", "a or b", "a and b or c", "a or b and c", "(a or b) and c", "not a and b", "a and not b"]
TRIPLES = [(a, b, c) for a in KINDS for b in KINDS for c in ("int", "float")]


@pytest.mark.parametrize("kinds", TRIPLES, ids=["-".join(t) for t in TRIPLES])
@pytest.mark.parametrize("expr", BOOLOPS)
def test_and_or_return_operands(expr: str, kinds: tuple[str, str, str]) -> None:
    d = build(f"def f(a, b, c):\n    return {expr}\n")
    check(d, *(BENIGN[k] for k in kinds))
    zeros = {"int": 0, "float": 0.0, "bool": False}
    check(d, *(zeros[k] for k in kinds))
    if kinds[0] == "float":
        check(d, -0.0, BENIGN[kinds[1]], BENIGN[kinds[2]])
        check(d, math.nan, BENIGN[kinds[1]], BENIGN[kinds[2]])
    equivalent(d, st.tuples(*(scalar(k) for k in kinds)), max_examples=15)
    assert native_ran(d), d.explain()


def test_and_or_operand_types_explicit() -> None:
    d = build("def f(a, b):\n    return (a and b, a or b, b and a, b or a)\n")
    for args in [(0, 1.5), (1, 0.0), (0.0, 7), (-0.0, 7), (True, 2.5), (False, 3), (0, False), (2, True), (math.nan, 0)]:
        check(d, *args)
    assert native_ran(d), d.explain()


def test_and_or_in_condition() -> None:
    d = build(
        """
        def f(a, b, c):
            if a > 0 and b > 0 or c == 0:
                return a + b
            if not (a < b or b < c):
                return c
            return a - c
        """
    )
    check(d, 1, 2, 3)
    equivalent(d, st.tuples(numbers(), numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


def test_is_none() -> None:
    d = build(
        """
        def f(x):
            y = None if x > 3 else x
            if y is None:
                return -1
            if y is not None:
                return y
            return 0
        """
    )
    check(d, 1)
    equivalent(d, st.tuples(numbers()), max_examples=100)
    assert native_ran(d), d.explain()


def test_is_none_argument() -> None:
    d = build("def f(x):\n    return (x is None, x is not None, None is x)\n")
    for v in (None, 0, 1, 0.0, math.nan, True, False):
        check(d, v)
    assert native_ran(d), d.explain()


def test_none_default_argument() -> None:
    d = build(
        """
        def f(x, y=None):
            if y is None:
                y = 10
            return x * y
        """
    )
    for args in [(3,), (3, None), (3, 4), (2.5, None), (2.5, 2.0), (INT64_MAX,)]:
        check(d, *args)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("kind", KINDS)
def test_in_tuple(kind: str) -> None:
    d = build("def f(x):\n    return (x in (1, 2, 3), x not in (1, 2, 3), x in (0, -1))\n")
    check(d, BENIGN[kind])
    for v in {"int": (0, 1, 2, 3, 4, -1, INT64_MAX), "float": (1.0, 2.0, 3.5, -0.0, 0.0, math.nan), "bool": (True, False)}[kind]:
        check(d, v)
    equivalent(d, st.tuples(scalar(kind)), max_examples=60)
    if kind != "float":
        assert native_ran(d), d.explain()


def test_in_tuple_branch() -> None:
    d = build(
        """
        def f(x):
            if x in (1, 2, 3):
                return x * 10
            return -x
        """
    )
    check(d, 2)
    equivalent(d, st.tuples(numbers(floats=False)), max_examples=100)
    assert native_ran(d), d.explain()


CONDEXPRS = [
    "a if c else b",
    "a if a > b else b",
    "(a if c else b) + 1",
    "a if c else None",
    "a if not c else (b if b else c)",
    "1 if a < b else 2.5",
]


@pytest.mark.parametrize("expr", CONDEXPRS)
def test_conditional_expression(expr: str) -> None:
    d = build(f"def f(a, b, c):\n    return {expr}\n")
    check(d, 1, 2, 3)
    check(d, 1.5, 2, 0)
    equivalent(d, st.tuples(numbers(), numbers(), numbers()), max_examples=80)
    assert native_ran(d), d.explain()


def test_conditional_expression_short_circuits() -> None:
    d = build("def f(a, b):\n    return a // b if b != 0 else a % 1\n")
    for args in [(7, 0), (7, 2), (-7, 2), (7.5, 0.0), (INT64_MIN, -1), (INT64_MIN, 0)]:
        check(d, *args)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert native_ran(d), d.explain()
