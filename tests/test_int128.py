"""Ints beyond 64 bits: a constant such as ``1 << 64`` makes its arithmetic an
`INT128` (typing/types.py), computed natively in 128 bits (lower/int128.py) and
deoptimised wherever CPython's value leaves them. Everything is compared with CPython
on the same arguments, and must have entered native code."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc import compile as cb_compile
from cuvil_bc.errors import CompileError
from cuvil_bc.testing import INT64_MAX, INT64_MIN, check, compile_source, equivalent, native_ran

_INT64 = st.integers(INT64_MIN, INT64_MAX) | st.sampled_from([0, 1, -1, INT64_MAX, INT64_MIN, 2**62, -(2**62)])
_EDGES = [(0, 0), (1, -1), (INT64_MAX, INT64_MAX), (INT64_MIN, INT64_MIN), (INT64_MAX, INT64_MIN), (INT64_MIN, INT64_MAX), (2**62, 2**62 + 5)]

OPERATORS = ["+", "-", "*", "&", "|", "^", "<", "<=", "==", "!=", ">", ">="]


@pytest.mark.parametrize("op", OPERATORS)
def test_every_operator_on_int128_values(op: str) -> None:
    """Values near both ends of the 128-bit range, so that sums, differences and
    products overflow it for some arguments (a deopt: CPython's int goes on)."""
    f = compile_source(
        f"""
def f(x, y):
    a = x * (1 << 64) + (1 << 63)
    b = y - (1 << 80)
    return a {op} b, b {op} x, (a {op} y) {"!=" if op in "<=>!=" else "-"} 0
"""
    )
    for x, y in _EDGES:
        check(f, x, y)
    equivalent(f, st.tuples(_INT64, _INT64), max_examples=80)


@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shifts_of_int128_values(op: str) -> None:
    """Counts from negative (ValueError) past 127; left shifts that lose bits deopt."""
    f = compile_source(f"def f(x, k):\n    return (x - (1 << 64)) {op} k, (x + (1 << 100)) {op} (k & 127)\n")
    for x, k in [(0, 0), (0, 500), (5, 127), (-5, 127), (-5, 128), (1, 62), (1, 63), (INT64_MAX, 1), (3, -1), (INT64_MIN, 200)]:
        check(f, x, k)
    equivalent(f, st.tuples(_INT64, st.integers(-2, 140)), max_examples=80)


def test_floor_division_and_remainder_by_a_power_of_two() -> None:
    """Python's floor semantics for either sign: a shift and a mask. A remainder below
    2**64 is a uint (``x % (1 << 64)``: the 64-bit pattern of a signed int)."""
    f = compile_source(
        """
def f(x, y):
    a = x * (1 << 70) + y
    return a // (1 << 64), a % (1 << 64), a // 8, a % 8, a % (1 << 100), a // (1 << 126), x % (1 << 64), y // (1 << 63), y % (1 << 63)
"""
    )
    for x, y in _EDGES:
        check(f, x, y)
    equivalent(f, st.tuples(_INT64, _INT64), max_examples=80)


def test_unary_operators_and_truth() -> None:
    f = compile_source(
        """
def f(x):
    a = x - (1 << 126) - (1 << 126)
    b = x + (1 << 64)
    return ~b, +b, -b, not a, bool(b - (1 << 64) - x), -a
"""
    )
    for x in (0, 1, -1, INT64_MAX, INT64_MIN):  # (x == 0: -a is 2**127, beyond: a deopt)
        check(f, x)
    equivalent(f, st.tuples(_INT64), max_examples=50)


def test_a_loop_state_that_outgrows_128_bits_is_handed_over_mid_loop() -> None:
    """The deopt's resume point rebuilds the 128-bit state from its two words."""
    f = compile_source(
        """
def f(x, n):
    s = 1 << 100
    t = 0
    for i in range(n):
        s = s * x - i
        t += 1
    return s, t
"""
    )
    for x, n in [(3, 10), (3, 17), (3, 40), (-3, 40), (1, 1000), (0, 5), (2**20, 3), (2**62, 1)]:
        check(f, x, n)
    equivalent(f, st.tuples(st.integers(-(2**40), 2**40), st.integers(0, 60)), max_examples=60)


def test_a_uint_and_an_int128_meet_at_a_phi() -> None:
    """A 64-bit hash stored as a signed int64 (``h - (1 << 64)`` for the upper half):
    the phi of a uint and an int128 is a union of both, stored member by member."""
    f = compile_source(
        """
def f(keys, out):
    acc = 0
    for i in range(keys.shape[0]):
        h = (int(keys[i]) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        out[i] = h - (1 << 64) if h >= 1 << 63 else h
        acc ^= h
    return acc
"""
    )
    keys = np.arange(-50, 50, dtype=np.int64) * 7919
    check(f, keys, np.zeros(100, np.int64))
    check(f, keys, np.zeros(100, np.float64))
    check(f, keys, np.zeros(100, np.int32))  # OverflowError from NumPy, in CPython
    assert native_ran(f)


@pytest.mark.parametrize("dtype", ["int64", "float64", "uint8", "bool"])
def test_storing_an_int128_into_an_array(dtype: str) -> None:
    f = compile_source("def f(a, x):\n    a[0] = x + (1 << 64) - (1 << 64)\n    a[1] = x + (1 << 64)\n")
    for x in (0, 1, -1, 200, INT64_MAX, INT64_MIN):
        check(f, np.zeros(2, dtype), x)


def test_an_int128_result_crosses_the_boundary() -> None:
    """As the C entry's result (slot ``W``), alone and in a union with None."""
    f = compile_source("def f(x, n):\n    s = x * (1 << 70)\n    return (s, s - 1) if n else None\n")
    for x, n in [(0, 1), (1, 1), (-1, 1), (INT64_MAX, 1), (INT64_MIN, 1), (5, 0)]:
        check(f, x, n)
        assert f(x, n) == f.py_func(x, n) and type(f(x, 1)[0]) is int
    assert native_ran(f)


@pytest.mark.parametrize(
    "body, construct",
    [
        ("x / (1 << 70)", "'/' with an int beyond 64 bits"),
        ("(x + (1 << 70)) // 3", "'//' with an int beyond 64 bits (by other than a constant power of two)"),
        ("(x + (1 << 70)) % -4", "'%' with an int beyond 64 bits (by other than a constant power of two)"),
        ("(x + (1 << 70)) % 3", "'%' with an int beyond 64 bits"),
        ("(x + (1 << 70)) ** 2", "'**' with an int beyond 64 bits"),
        ("float(x * (1 << 70))", "float() of a int128"),
        ("x * (1 << 70) < 0.5", "'<' between int128 and float"),
    ],
)
def test_what_does_not_compile_runs_in_the_interpreter(body: str, construct: str) -> None:
    src = f"def f(x):\n    return {body}\n"
    f = compile_source(src)
    for x in (0, 3, -7, INT64_MAX):
        check(f, x, native=False)
    namespace: dict[str, object] = {}
    exec(src, namespace)
    with pytest.raises(CompileError, match=re.escape(construct)):
        cb_compile(namespace["f"], strict=True)(3)  # type: ignore[arg-type]


# Found by a helper attacking the first version, whose `types.join` widened an int or
# uint meeting an int128 to one int128: the join depended on the order of its members,
# and a union less None (or less "unbound") was then no member of itself, so the
# narrowing read an int's words as an int128's (garbage, run to run) or took the
# wrong member (a tuple for an int); other orders were an internal error.
_NOT_NONE = """
def f(x, n):
    y = None
    if n == 1:
        y = {}
    elif n == 2:
        y = {}
    elif n == 3:
        y = {}
    if y is not None:
        return y
    return 0
"""
NARROWED = {
    "first iteration": """
def f(x, n):
    for i in range(n):
        if i == 0:
            s = x
        else:
            s = s + (1 << 64)
    return s
""",
    "possibly unbound": """
def f(x, n):
    if n:
        y = x + (1 << 64)
    if n > 1:
        y = 5
    return y
""",
    "not None": _NOT_NONE.format("x & 0xFFFFFFFFFFFFFFFF", "x", "x * (1 << 64)"),
    "not None, with a tuple": _NOT_NONE.format("(x, x)", "x", "x * (1 << 64)"),
    "not None, with a float": _NOT_NONE.format("x", "x * (1 << 64)", "2.5"),  # (this order was an internal error)
}


@pytest.mark.parametrize("name", list(NARROWED))
def test_a_union_with_an_int128_narrows_to_its_members(name: str) -> None:
    f = compile_source(NARROWED[name])
    for x in (5, -1, 0, INT64_MAX, INT64_MIN):
        for n in range(5):
            check(f, x, n)
    assert native_ran(f) and "internal compiler error" not in f.explain(), f.explain()


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64", "float32", "int32", "bool"])
def test_storing_a_uint_into_an_array(dtype: str) -> None:
    """A masked value (a uint) stores as NumPy converts the Python int (2**63 and more
    into an int64 array: OverflowError, in CPython)."""
    f = compile_source("def f(a, x):\n    a[0] = x & 0xFFFFFFFFFFFFFFFF\n    a[1] = (x & 0xFFFF) + 1\n")
    for x in (0, 5, -1, 2**62, INT64_MIN, INT64_MAX):
        check(f, np.zeros(2, dtype), x)
