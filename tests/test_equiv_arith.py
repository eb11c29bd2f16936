"""Equivalence of arithmetic operators: compiled code must give CPython's exact results.

Every binary operator over every pair of int/float/bool operand types, unary operators,
augmented assignment, and the special cases that native code most often gets wrong
(overflow at the int64 limits, negative exponents, shift counts, floor rounding, signed
zeros, complex results of float powers, huge results).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import (
    BENIGN,
    EDGE_INTS,
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

BINOPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"]


build = compile_source




#: Exponents and shift counts small enough for CPython to finish (2 ** 2**62 would not).
SMALL_COUNTS = st.one_of(
    st.integers(-70, 200),
    st.sampled_from([0, 1, -1, 2, 31, 32, 62, 63, 64, 65, 127, 128, INT64_MIN, -(2**63) - 1]),
)


def operand_strategy(op: str, lhs: str, rhs: str) -> Any:
    right = scalar(rhs)
    if rhs == "int" and (op == "<<" or (op == "**" and lhs == "int")):
        right = SMALL_COUNTS
    return st.tuples(scalar(lhs), right)


def raises_type_error(op: str, lhs: str, rhs: str) -> bool:
    """CPython raises TypeError for every value: nothing to compile."""
    return op in ("&", "|", "^", "<<", ">>") and "float" in (lhs, rhs)


#: A benign operand per kind, so each specialisation runs natively at least once.


@pytest.mark.parametrize("lhs,rhs", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", BINOPS)
def test_binop(op: str, lhs: str, rhs: str) -> None:
    d = build(f"def f(a, b):\n    return a {op} b\n")
    native = not raises_type_error(op, lhs, rhs)
    check(d, BENIGN[lhs], BENIGN[rhs], native=native)
    equivalent(d, operand_strategy(op, lhs, rhs), max_examples=60, native=native)
    if native:
        assert native_ran(d), d.explain()


@pytest.mark.parametrize("lhs,rhs", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", BINOPS)
def test_augmented_assignment(op: str, lhs: str, rhs: str) -> None:
    d = build(f"def f(a, b):\n    x = a\n    x {op}= b\n    return x\n")
    native = not raises_type_error(op, lhs, rhs)
    check(d, BENIGN[lhs], BENIGN[rhs], native=native)
    equivalent(d, operand_strategy(op, lhs, rhs), max_examples=20, native=native)
    if native:
        assert native_ran(d), d.explain()


def test_augmented_assignment_sequence() -> None:
    d = build(
        """
        def f(a, b):
            x = a
            x += b
            x *= 3
            x -= b
            x //= 2
            x %= 1000003
            return x
        """
    )
    check(d, 1, 2)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


UNARY = {"neg": "-a", "pos": "+a", "invert": "~a", "not": "not a"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name: str, kind: str) -> None:
    d = build(f"def f(a):\n    return {UNARY[name]}\n")
    # ~float is a TypeError; ~bool is deliberately left to CPython (it warns on 3.12+).
    native = not (name == "invert" and kind in ("float", "bool"))
    check(d, BENIGN[kind], native=native)
    equivalent(d, st.tuples(scalar(kind)), max_examples=100, native=native)
    for v in {"int": EDGE_INTS, "float": (0.0, -0.0, math.nan, math.inf), "bool": (True, False)}[kind]:
        check(d, v, native=native)
    if native:
        assert native_ran(d), d.explain()


def test_invert_bool_deprecation_warning_as_error() -> None:
    # Python 3.12+ warns on ~bool; under -W error CPython raises the DeprecationWarning.
    d = build("def f(a):\n    return ~a\n")
    check(d, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        check(d, True, native=False)  # ~bool runs in CPython
        check(d, False, native=False)


def test_unary_nested() -> None:
    d = build("def f(a):\n    return -(-a) + (~~a if a == a // 1 else 0) - +a\n")
    check(d, 3)
    equivalent(d, st.tuples(numbers(floats=False)), max_examples=100)
    assert native_ran(d), d.explain()


# -- special cases, each list run against one compiled function ---------------------

def run_cases(d: Any, cases: list[tuple[Any, ...]], native: bool = True) -> None:
    for args in cases:
        check(d, *args)
    if native:
        assert native_ran(d), d.explain()


def test_int_pow_special_cases() -> None:
    d = build("def f(a, b):\n    return a ** b\n")
    run_cases(d, [
        (2, 3), (2, -1), (3, -2), (-2, -3), (-1, -1), (1, -100), (0, 0), (0, 1), (0, -1), (0, -5),
        (2, 62), (2, 63), (2, 64), (-2, 63), (-2, 64), (3, 40), (3, 41), (10, 18), (10, 19),
        (-3, 39), (-3, 40), (7, 100), (INT64_MAX, 2), (INT64_MIN, 1), (INT64_MIN, 2), (INT64_MIN, -1),
        (2**32, 2), (-(2**31), 2), (-(2**31), 3),
    ])


def test_int_pow_negative_constant_exponent() -> None:
    d = build("def f(a):\n    return a ** -2\n")
    run_cases(d, [(2,), (-3,), (1,), (0,), (INT64_MAX,), (True,), (False,)])


def test_zero_pow_negative() -> None:
    d = build("def f(a, b):\n    return 0 ** a + b\n")
    run_cases(d, [(1, 1), (0, 1), (-1, 1), (-1, 1.5), (2, 0.5), (-3, 0)])


def test_float_pow_special_cases() -> None:
    d = build("def f(a, b):\n    return a ** b\n")
    run_cases(d, [
        (2.0, 3.0), (-8.0, 1.0 / 3.0), (-8.0, 2.0), (-8.0, 3.0), (-2.0, 0.5), (-0.0, -1.0), (0.0, -1.5),
        (0.0, -2.0), (-0.0, -3.0), (-0.0, 3.0), (-0.0, 0.5), (-math.inf, 0.5), (-math.inf, -0.5),
        (-math.inf, 3.0), (-math.inf, -3.0), (-1.0, math.inf), (-1.0, -math.inf), (math.nan, 0.0),
        (1.0, math.nan), (10.0, 400.0), (10.0, -400.0), (-10.0, 401.0), (2.0, 1024.0), (2.0, -1075.0),
        (0.5, -1100.0), (-0.5, 1.5), (1e308, 2.0), (-1e308, 3.0), (math.inf, 0.0), (-1.5, -2.5),
    ])


def test_mixed_pow_special_cases() -> None:
    d = build("def f(a, b):\n    return a ** b\n")
    run_cases(d, [
        (-2, 0.5), (2, 0.5), (0, -0.5), (0, -1.0), (-8, 1.0 / 3.0), (10, 400.0), (2.0, -1), (0.0, -1),
        (-0.0, -1), (-2.0, 3), (-2.0, 2**63), (2.0, INT64_MAX), (1.5, 2000), (True, -1.0), (False, -1.0),
        (-1.0, INT64_MIN), (0.5, INT64_MIN), (-2.5, 7), (INT64_MAX, 0.5), (INT64_MIN, 0.5),
    ])


def test_shift_counts() -> None:
    d = build("def f(a, b):\n    return (a << b, a >> b)\n")
    run_cases(d, [
        (1, 0), (1, 1), (1, 62), (1, 63), (1, 64), (1, 100), (-1, 63), (-1, 64), (0, 1000), (3, 61),
        (3, 62), (-3, 62), (INT64_MAX, 1), (INT64_MIN, 0), (INT64_MIN, 1), (1, -1), (0, -1),
        (5, INT64_MIN), (True, 63), (True, 64), (False, 64),
    ])


def test_right_shift_large_counts() -> None:
    d = build("def f(a, b):\n    return a >> b\n")
    run_cases(d, [
        (12345, 1), (12345, 63), (12345, 64), (12345, 65), (-12345, 63), (-12345, 64), (-1, 1000),
        (INT64_MIN, 63), (INT64_MIN, 64), (INT64_MAX, 63), (INT64_MAX, INT64_MAX), (-5, INT64_MAX),
        (7, -1), (7, INT64_MIN), (True, 1), (True, -1),
    ])


def test_constant_shift() -> None:
    d = build("def f(a):\n    return (a << 64, a >> 64, a << 1, 1 << a)\n")
    run_cases(d, [(0,), (1,), (-1,), (62,), (63,), (64,), (-1,), (True,)])


def test_int64_limits() -> None:
    d = build("def f(a, b):\n    return (a + b, a - b, a * b, -a, abs(a))\n")
    run_cases(d, [
        (1, 2), (INT64_MAX, 1), (INT64_MAX, 0), (INT64_MIN, -1), (INT64_MIN, 0), (INT64_MIN, 1),
        (INT64_MAX, -1), (INT64_MAX, INT64_MAX), (INT64_MIN, INT64_MIN), (INT64_MAX, INT64_MIN),
        (2**32, 2**31), (2**32, 2**32), (-(2**32), 2**31), (3037000499, 3037000499),
        (3037000500, 3037000500), (INT64_MAX + 1, 0), (INT64_MIN - 1, 0), (INT64_MAX, True),
    ])


def test_int64_max_plus_one() -> None:
    d = build("def f(a):\n    return a + 1\n")
    run_cases(d, [(0,), (INT64_MAX - 1,), (INT64_MAX,), (INT64_MAX + 1,), (INT64_MIN,)])
    assert d(INT64_MAX) == 2**63 and type(d(INT64_MAX)) is int


def test_int_division_of_min() -> None:
    d = build("def f(a, b):\n    return (a // b, a % b, divmod(a, b))\n")
    run_cases(d, [
        (7, 2), (INT64_MIN, -1), (INT64_MIN, 1), (INT64_MIN, 2), (INT64_MIN, INT64_MIN),
        (INT64_MAX, -1), (INT64_MIN, INT64_MAX), (INT64_MAX, INT64_MIN), (5, 0), (0, 0), (-5, 0),
    ])


def test_floor_division_and_modulo_signs() -> None:
    d = build("def f(a, b):\n    return (a // b, a % b)\n")
    cases: list[tuple[Any, ...]] = []
    for a in (7, -7, 6, -6, 0, 1, -1):
        for b in (2, -2, 3, -3, 7, -7, 1, -1):
            cases.append((a, b))
            cases.append((float(a), float(b)))
            cases.append((float(a), b))
            cases.append((a, float(b)))
    cases += [
        (-0.0, 2.0), (0.0, -2.0), (-0.0, -2.0), (5.0, math.inf), (-5.0, math.inf), (5.0, -math.inf),
        (-5.0, -math.inf), (math.inf, 2.0), (-1e-300, 1.0), (1e-300, -1.0), (1e308, 1e-308),
        (1e308, -1e-308), (math.nan, 1.0), (1.0, math.nan), (0.1, 0.01), (-0.1, 0.01), (7.5, 0.0),
        (7, 0.0), (0.0, 0.0), (-0.0, 0), (5e-324, -5e-324), (2.0**53 + 2, 3.0), (INT64_MAX, 2.0),
        (INT64_MIN, -3), (INT64_MIN, 3), (-(2**62), 7),
    ]
    run_cases(d, cases)


def test_float_mod_and_floordiv_hypothesis() -> None:
    d = build("def f(a, b):\n    return (a // b, a % b)\n")
    check(d, 7.5, 2.0)
    equivalent(d, st.tuples(scalar("float"), scalar("float")), max_examples=200)
    assert native_ran(d), d.explain()


def test_negative_zero_results() -> None:
    d = build(
        """
        def f(a, b):
            return (a * b, a + b, a - b, a / b if b else 0.0, -a, a * -1, 0 * a, a - a, -b + a)
        """
    )
    run_cases(d, [
        (0.0, -1.0), (-0.0, 0.0), (-0.0, -0.0), (0.0, 0.0), (-0.0, 1.0), (0.0, -3.0), (-1.0, 0.0),
        (-0.0, 5), (0.0, -5), (-0.0, True), (5e-324, -0.5), (-5e-324, 0.5), (math.inf, -0.0),
    ])


def test_int_true_division_exact_rounding() -> None:
    d = build("def f(a, b):\n    return a / b\n")
    run_cases(d, [
        (1, 3), (2**53 + 1, 1), (2**53 + 1, 2), (INT64_MAX, 1), (INT64_MAX, 3), (INT64_MAX, INT64_MAX - 1),
        (INT64_MIN, 7), (2**60 + 1, 2**7), (2**54 + 3, 2**54 + 1), (9007199254740993, 9007199254740991),
        (-(2**62) - 1, 3), (1, INT64_MAX), (0, -5), (-0, 5), (5, 0), (INT64_MAX + 1, 3), (True, 3),
        (3, True), (False, -2),
    ])
    equivalent(d, st.tuples(scalar("int"), scalar("int")), max_examples=200)


def test_huge_results() -> None:
    d = build("def f(a, b):\n    return a * b * b + a ** 3\n")
    run_cases(d, [
        (2, 3), (3**40, 3**40), (INT64_MAX, INT64_MAX), (2**40, 2**40), (10**9, 10**9), (-(10**10), 10**5),
        (2**21, 1), (2**22, 1), (1e200, 1e200), (1e100, 2.0), (-1e103, 1),
    ])


def test_float_huge_results() -> None:
    d = build("def f(a, b):\n    return (a * b, a + b, a - b)\n")
    run_cases(d, [
        (1e308, 10.0), (-1e308, 10.0), (1e308, 1e308), (-1e308, 1e308), (math.inf, -math.inf),
        (math.inf, 0.0), (1.7976931348623157e308, 1.0), (5e-324, 5e-324),
    ])


def test_mixed_chain_expression() -> None:
    d = build("def f(a, b, c):\n    return (a + b) * c - a / (b * b + 1) + (a - c) % 7\n")
    check(d, 1, 2, 3)
    equivalent(d, st.tuples(numbers(), numbers(), numbers()), max_examples=200)
    assert native_ran(d), d.explain()
