"""Speculation (opt/speculate.py): ops hoisted above their branch give CPython's
results, and a speculated guard that fails only costs one recompile."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import cuvil_bc
from cuvil_bc.compiler import Compiler
from cuvil_bc.ir import format_function
from cuvil_bc.testing import check, compile_source, equivalent
from cuvil_bc.typing.types import parse_signature

I64 = st.integers(-(2**63), 2**63 - 1)


def guarded_product(x, n=2):
    total = 0
    for _ in range(n):  # a merge point after the `if`: CPython would copy a bare return into each arm
        if x < 1000:
            y = x * 3 + 1  # overflows for big x, but then this arm does not run
        else:
            y = -x
        total ^= y
    return total


def collatz(limit):
    total = 0
    for start in range(1, limit):
        x = start
        while x != 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            total += 1
    return total


def divide_when_nonzero(a, b):
    q = 0
    if b != 0:
        q = a // b  # division guards are never speculated
    return q


def test_small_arms_are_hoisted() -> None:
    spec = Compiler().typed(guarded_product, parse_signature("(int, int)"))
    text = format_function(spec.fn)
    assert "speculative binop x * 3" in text
    assert "speculative unary - x" in text


def test_division_is_not_hoisted() -> None:
    spec = Compiler().typed(divide_when_nonzero, parse_signature("(int, int)"))
    assert "speculative" not in format_function(spec.fn)


def test_failed_speculation_gives_cpython_result_then_recompiles() -> None:
    f = compile_source(_source(guarded_product), "guarded_product")
    big = 2**62  # x * 3 overflows int64, on the arm CPython does not take
    assert f(big) == guarded_product(big)
    assert f.stats["speculation_failures"] == 1
    assert f.stats["deopts"] == 1
    # Recompiled without speculation: the same call now runs natively to completion.
    native_before = f.stats["native_calls"]
    assert f(big) == guarded_product(big)
    assert f.stats["native_calls"] == native_before + 1
    assert f.stats["deopts"] == 1
    assert "speculative" not in f.inspect_ir()
    assert "speculated guard failed at line" in f.explain()


def test_taken_arm_overflow_still_falls_back_exactly() -> None:
    f = cuvil_bc.compile(guarded_product)
    check(f, -(2**62))  # the arm runs and overflows: CPython's big int
    check(f, 999)


def test_guarded_product_equivalent() -> None:
    equivalent(cuvil_bc.compile(guarded_product), st.tuples(I64, st.integers(0, 3)))


@given(st.integers(1, 400))
def test_collatz_equivalent(n: int) -> None:
    check(cuvil_bc.compile(collatz), n)


def test_collatz_overflow_is_exact() -> None:
    # 3 * x + 1 overflows int64 on the taken arm: CPython computes with big ints.
    f = compile_source(
        """
def f(x):
    steps = 0
    while x != 1 and steps < 3:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return x, steps
"""
    )
    for x in (2**62 + 1, 2**61 + 1, 3074457345618258603, -(2**62) - 1, 7):
        check(f, x)


def test_failed_speculation_in_a_callee() -> None:
    # Fresh functions: the compiler remembers, process-wide, which functions stopped speculating.
    inner = compile_source(_source(guarded_product), "guarded_product").py_func
    f = compile_source("def f(x):\n    return g(x, 3) + 1\n", g=inner)
    big = 2**62
    assert f(big) == f.py_func(big)
    assert f.stats["speculation_failures"] == 1
    assert f(big) == f.py_func(big)
    assert f.stats["deopts"] == 1  # the callee was recompiled without speculation too
    check(f, 5)


def _source(fn) -> str:
    import inspect

    return inspect.getsource(fn)
