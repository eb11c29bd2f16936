"""Equivalence of the builtins cuvil_bc compiles: abs, min, max, int, float, bool, round,
divmod, pow (2 and 3 arguments) and len of a tuple.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import (
    EDGE_FLOATS,
    EDGE_INTS,
    BENIGN,
    INT64_MAX,
    INT64_MIN,
    KINDS,
    PAIRS,
    check,
    compile_source,
    edges,
    equivalent,
    native_ran,
    numbers,
    scalar,
)

build = compile_source






def run_cases(d: Any, cases: list[tuple[Any, ...]], native: bool = True) -> None:
    for args in cases:
        check(d, *args)
    if native:
        assert native_ran(d), d.explain()


UNARY_BUILTINS = ["abs", "int", "float", "bool", "round"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fn", UNARY_BUILTINS)
def test_unary_builtin(fn: str, kind: str) -> None:
    d = build(f"def f(x):\n    return {fn}(x)\n")
    check(d, BENIGN[kind])
    for v in edges(kind):
        check(d, v)
    equivalent(d, st.tuples(scalar(kind)), max_examples=100)
    assert native_ran(d), d.explain()


def test_abs_int64_min() -> None:
    d = build("def f(x):\n    return abs(x) + 0\n")
    run_cases(d, [(1,), (-1,), (INT64_MIN,), (INT64_MIN + 1,), (INT64_MAX,), (-0.0,), (-math.inf,), (math.nan,)])


def test_round_half_even() -> None:
    d = build("def f(x):\n    return round(x)\n")
    cases = [(v,) for v in (0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.49999999999999994, 4503599627370495.5,
                            4503599627370497.0, 2.0**52 + 0.5, -(2.0**52) - 0.5, 2.0**63, -(2.0**63), 9.3e18, 1e300,
                            -1e300, -0.0, 0.0, 5e-324, math.inf, -math.inf, math.nan, 2.675, 1e16 + 1.0)]
    run_cases(d, cases)


def test_int_of_float_limits() -> None:
    d = build("def f(x):\n    return int(x)\n")
    run_cases(d, [(v,) for v in (0.9, -0.9, 2.0**63, -(2.0**63), 2.0**63 - 1024, 9.3e18, -9.3e18, 1e300,
                                 math.inf, -math.inf, math.nan, -0.0, 2.0**53 + 1.0, 1e19)])


def test_float_of_int_limits() -> None:
    d = build("def f(x):\n    return float(x)\n")
    run_cases(d, [(v,) for v in (2**53 + 1, 2**53 + 3, INT64_MAX, INT64_MIN, INT64_MAX - 511, INT64_MAX - 512,
                                 2**63, 10**308, 10**309, -(10**309), True, 0)])


def test_bool_of_values() -> None:
    d = build("def f(x, y):\n    return (bool(x), bool(y), bool(x) + bool(y))\n")
    run_cases(d, [(0, 0.0), (-0.0, 1), (math.nan, False), (True, 5e-324), (INT64_MIN, math.inf)])


MINMAX_EXPRS = ["min(a, b)", "max(a, b)", "min(b, a)", "max(b, a)"]


@pytest.mark.parametrize("lhs,rhs", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("expr", MINMAX_EXPRS)
def test_min_max_two(expr: str, lhs: str, rhs: str) -> None:
    d = build(f"def f(a, b):\n    return {expr}\n")
    check(d, BENIGN[lhs], BENIGN[rhs])
    equivalent(d, st.tuples(scalar(lhs), scalar(rhs)), max_examples=60)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("fn", ["min", "max"])
def test_min_max_nan_positions(fn: str) -> None:
    d = build(f"def f(a, b, c):\n    return ({fn}(a, b), {fn}(a, b, c), {fn}(c, b, a), {fn}(b, c, a, b))\n")
    nan = math.nan
    cases = []
    for trio in [(nan, 1.0, 2.0), (1.0, nan, 2.0), (1.0, 2.0, nan), (nan, nan, 1.0), (nan, 1, 2), (1, nan, 2),
                 (1, 2, nan), (nan, True, 0), (0.0, -0.0, 0), (-0.0, 0.0, False), (0, -0.0, 0.0), (1, 1.0, True),
                 (2**53 + 1, float(2**53), 2**53), (INT64_MAX, 2.0**63, INT64_MIN), (math.inf, nan, -math.inf)]:
        cases.append(trio)
    run_cases(d, cases)


def test_min_max_many_args() -> None:
    d = build("def f(a, b, c, e):\n    return (min(a, b, c, e), max(a, b, c, e), min(a, 3, b, 2.5), max(e, c, 0))\n")
    check(d, 1, 2.5, True, -3)
    equivalent(d, st.tuples(numbers(), numbers(), numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("lhs,rhs", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_divmod(lhs: str, rhs: str) -> None:
    d = build("def f(a, b):\n    return divmod(a, b)\n")
    check(d, BENIGN[lhs], BENIGN[rhs])
    equivalent(d, st.tuples(scalar(lhs), scalar(rhs)), max_examples=80)
    assert native_ran(d), d.explain()


def test_divmod_signs_and_zero() -> None:
    d = build("def f(a, b):\n    return divmod(a, b)\n")
    cases: list[tuple[Any, ...]] = [(a, b) for a in (7, -7, 0) for b in (2, -2, 0)]
    cases += [(float(a), float(b)) for a, b in cases] + [(7, -2.0), (-7.5, 2), (-0.0, 1.0), (0.0, -1.0),
                                                          (INT64_MIN, -1), (1e308, 1e-308), (5.0, math.inf),
                                                          (-5.0, math.inf), (math.inf, 1.0), (math.nan, 1.0)]
    run_cases(d, cases)


#: Exponents small enough for CPython to finish.
EXPONENTS = st.one_of(st.integers(-70, 130), st.sampled_from([0, 1, -1, 63, 64, -64]))


@pytest.mark.parametrize("lhs,rhs", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_pow_two_args(lhs: str, rhs: str) -> None:
    d = build("def f(a, b):\n    return pow(a, b)\n")
    check(d, BENIGN[lhs], BENIGN[rhs])
    right = EXPONENTS if (lhs, rhs) == ("int", "int") else scalar(rhs)
    equivalent(d, st.tuples(scalar(lhs), right), max_examples=80)
    assert native_ran(d), d.explain()


def test_pow_two_args_special() -> None:
    d = build("def f(a, b):\n    return pow(a, b)\n")
    run_cases(d, [(2, 10), (2, -1), (0, -1), (0, 0), (2, 63), (-2, 63), (3, 41), (-8.0, 1.0 / 3.0), (0.0, -1.0),
                  (-2, 0.5), (10.0, 400.0), (1.0, math.nan), (math.nan, 0)])


def modulus() -> Any:
    return st.one_of(st.integers(-1000, 1000), st.integers(INT64_MIN, INT64_MAX), st.sampled_from([0, 1, -1, 2, -2, 7, INT64_MAX, INT64_MIN, 2**32 + 1]))


def test_pow_three_args() -> None:
    d = build("def f(a, b, m):\n    return pow(a, b, m)\n")
    check(d, 3, 4, 5)
    exponent = st.one_of(st.integers(-50, 2**63 - 1), st.sampled_from([0, 1, -1, -2, INT64_MAX, INT64_MIN]))
    equivalent(d, st.tuples(numbers(floats=False), exponent, modulus()), max_examples=200)
    assert native_ran(d), d.explain()


def test_pow_three_args_special() -> None:
    d = build("def f(a, b, m):\n    return pow(a, b, m)\n")
    run_cases(d, [
        (3, 4, 5), (3, 4, -5), (-3, 4, 5), (-3, 3, 5), (-3, 3, -5), (2, 10, 1), (2, 10, -1), (0, 0, 1), (0, 0, 7),
        (0, 0, -7), (5, 3, 0), (0, 0, 0), (3, -1, 7), (3, -1, -7), (3, -2, 11), (2, -1, 4), (0, -1, 5), (4, -1, 1),
        (-3, -1, 7), (INT64_MAX, INT64_MAX, INT64_MAX - 1), (INT64_MAX, 2, INT64_MAX), (INT64_MIN, 3, INT64_MAX),
        (INT64_MAX - 1, INT64_MAX, INT64_MIN), (2**40, 5, 2**62 + 1), (True, -1, 3), (3, True, False),
        (2, 1000, 2**61 - 1), (7, -3, 2**61 - 1),
    ])


def test_pow_three_args_float_type_error() -> None:
    d = build("def f(a, b, m):\n    return pow(a, b, m)\n")
    for args in [(2.0, 3, 5), (2, 3.0, 5), (2, 3, 5.0)]:
        check(d, *args, native=False)


LEN_ARGS = [((),), ((1,),), ((1, 2.5),), ((1, (2, 3), None),), (((), ()),)]


@pytest.mark.parametrize("args", LEN_ARGS, ids=[repr(a[0]) for a in LEN_ARGS])
def test_len_tuple_argument(args: tuple[Any, ...]) -> None:
    d = build("def f(t):\n    return len(t) * 2 + 1\n")
    run_cases(d, [args])


def test_len_tuple_built() -> None:
    d = build(
        """
        def f(a, b):
            t = (a, b, a + b)
            u = t + (a,)
            return (len(t), len(u), len(()), len((t, u)))
        """
    )
    check(d, 1, 2.5)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=60)
    assert native_ran(d), d.explain()


def test_builtins_combined() -> None:
    d = build(
        """
        def f(x, y):
            q, r = divmod(abs(int(x)) + 1, max(1, min(int(y), 1000)))
            return (round(float(q) / 3), pow(r, 2), bool(r), q % 7)
        """
    )
    check(d, 17.5, 4)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("call", ["x.bit_length()", "int.bit_length(x)", "x.bit_count()", "int.bit_count(x)"])
def test_int_methods(call: str) -> None:
    """Methods of ints, called on a value or through the type: rows of the primitives'
    table (typing/primitives.METHODS), lowered natively for bools, ints and uints."""
    d = build(f"def f(x):\n    return {call}\n")
    for v in (*EDGE_INTS, True, False, 0, 1, -1, 255, 256, 2**63, 2**64 - 1, 2**62 + 1):
        check(d, v, native=not (v >= 2**63 if type(v) is int else False))
    equivalent(d, st.tuples(st.integers(INT64_MIN, 2**64 - 1)), max_examples=150, native=False)
    assert native_ran(d)


@pytest.mark.parametrize("call", ["x.is_integer()", "float.is_integer(x)"])
def test_float_is_integer(call: str) -> None:
    d = build(f"def f(x):\n    return {call}, (x * 0.5).is_integer()\n")
    for v in (*EDGE_FLOATS, 2.0, 2.5, -3.0, 1e300, 5e-324, 2.0**52 + 0.5, 2.0**53):
        check(d, v)
    equivalent(d, st.tuples(st.floats()), max_examples=150)
    assert native_ran(d)
