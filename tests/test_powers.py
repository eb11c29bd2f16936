"""Constant integer powers of floats (``x ** 2``, ``math.pow(x, 3)``, ``np.float64 ** 4``)
computed natively (lower/powers.py), exact against CPython, which calls C's pow.

``x * x`` is not CPython's ``x ** 2`` (glibc's pow is not correctly rounded): the
inputs where the two differ are found here with CPython itself, and the compiled
function must agree with CPython on them too.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc.lower.powers import MAX_EXPONENT, pow_is_bounded
from cuvil_bc.testing import EDGE_FLOATS, check, compile_source, equivalent

EXPONENTS = list(range(2, MAX_EXPONENT + 1)) + [MAX_EXPONENT + 1, 1, 0, -2]

#: Values around the fast path's limits: near-overflow and near-underflow squares and
#: cubes, powers of two (whose lower neighbour is closer), subnormals, signed zeros.
LIMITS: tuple[float, ...] = (
    1.3407807929942596e154, 1.3407807929942597e154, 1e154, 5.6e102, 2.0**-225, 2.0**-226, 2.0**-300, 3.0 * 2.0**-226,
    2.0, 0.5, 4.0, -2.0, 1.0, -1.0, 0.0, -0.0, 5e-324, 1e-310, 3.0, -3.0, 1.5, 0.1, 1e308, -1e308,
)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _pow_differs_from_product(n: int, count: int, seed: int) -> list[float]:
    """Inputs x where CPython's ``x ** n`` is not the product of n factors rounded
    once (the correctly rounded power): found by search, with CPython's own pow."""
    from fractions import Fraction

    rng = random.Random(seed)
    found: list[float] = []
    while len(found) < count:
        x = rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-20, 20) * rng.choice((1, -1))
        exact = float(Fraction(x) ** n)  # correctly rounded
        if x**n != exact:
            found.append(x)
    return found


@pytest.mark.parametrize("spelling", ["x ** {n}", "x ** {n}.0", "math.pow(x, {n})", "pow(x, {n})"])
@pytest.mark.parametrize("n", EXPONENTS)
def test_constant_powers(spelling: str, n: int) -> None:
    f = compile_source(f"def f(x):\n    return {spelling.format(n=n)}\n")
    for x in EDGE_FLOATS + LIMITS:
        check(f, x)
    equivalent(f, st.tuples(st.floats(allow_nan=True, allow_infinity=True)), max_examples=60)
    equivalent(f, st.tuples(st.floats(min_value=0.01, max_value=100.0)), max_examples=60)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_where_pow_is_not_the_rounded_power(n: int) -> None:
    """The inputs where glibc's pow rounds the other way: CPython's answer, not the
    correctly rounded one (which ``x * x`` would give)."""
    f = compile_source(f"def f(x):\n    return x ** {n}\n")
    xs = _pow_differs_from_product(n, 20, seed=n)
    for x in xs:
        check(f, x)
        assert _bits(f(x)) == _bits(x**n)


def test_numpy_scalar_powers() -> None:
    f = compile_source("def f(a, i):\n    return a[i] ** 2\n")
    g = compile_source("def f(a, i):\n    return a[i] ** 3.0\n")
    rng = np.random.default_rng(11)
    a = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-100, 100, 200), np.array(LIMITS)])
    hard = np.array(_pow_differs_from_product(2, 10, seed=7) + _pow_differs_from_product(3, 10, seed=8))
    for arr in (a, hard):
        for i in range(len(arr)):
            check(f, arr, i)
            check(g, arr, i)


def test_a_loop_of_squares_runs_natively_and_exactly() -> None:
    f = compile_source(
        """
        def f(x, y):
            t = 0.0
            for i in range(x.shape[0]):
                t += 100.0 * (y[i] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
            return t
        """
    )
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(5000), rng.standard_normal(5000)
    check(f, x, y)
    hard = np.array(_pow_differs_from_product(2, 50, seed=3))
    check(f, hard, hard[::-1].copy())


def test_the_fast_path_is_used_only_with_a_bounded_pow() -> None:
    """The exactness argument rests on glibc's documented error bound: with another
    C library the lowering calls pow for every power."""
    from llvmlite import ir

    from cuvil_bc.lower import powers
    from cuvil_bc.lower.emitter import Emitter

    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "f")
    em = Emitter(module, fn)
    em.builder.ret(powers.c_pow(em, fn.args[0], ir.Constant(ir.DoubleType(), 2.0)))
    assert ("llvm.fma.f64" in str(module)) == pow_is_bounded()
    assert powers.constant_exponent(ir.Constant(ir.DoubleType(), 2.5)) is None
    assert powers.constant_exponent(ir.Constant(ir.DoubleType(), float(MAX_EXPONENT + 1))) is None


@pytest.mark.skipif(not pow_is_bounded(), reason="the C library's pow has no error bound the fast path relies on")
def test_the_squares_of_many_values_agree() -> None:
    """A wide sweep (a thousand times the hypothesis draws), in one native call."""
    f = compile_source(
        """
        def f(a, out):
            for i in range(a.shape[0]):
                out[i] = a[i] ** 2
        """
    )
    rng = np.random.default_rng(2)
    a = rng.standard_normal(200_000) * np.exp(rng.uniform(-150, 150, 200_000))
    out = np.empty_like(a)
    f(a, out)
    assert f.stats["native_calls"] == 1
    expected = np.array([v**2 for v in a.tolist()])
    assert out.tobytes() == expected.tobytes()
