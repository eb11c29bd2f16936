"""Equivalence of the `math` functions cuvil_bc compiles, in both spellings (`math.sqrt(x)`
and `from math import sqrt`), with CPython's exact domain and range errors, and the
`math` constants.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import strategies as st

import cuvil_bc
from cuvil_bc.testing import (
    EDGE_FLOATS,
    EDGE_INTS,
    INT64_MAX,
    INT64_MIN,
    check,
    compile_source,
    equivalent,
    native_ran,
    numbers,
)

UNARY = [
    "sqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "cbrt", "exp2", "gamma", "lgamma", "erf",
    "erfc", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "degrees", "radians",
]
BINARY = ["atan2", "copysign", "fmod", "pow", "hypot", "remainder", "log"]
SPELLINGS = ["attr", "bare"]

#: Values around the domain edges of the functions above.
DOMAIN_EDGES: tuple[float, ...] = (
    -1.0, 1.0, -1.0000000000000002, 1.0000000000000002, 0.9999999999999999, -0.9999999999999999, 709.78, 709.79,
    710.0, -745.2, -746.0, 1024.0, 1025.0, -1075.0, 171.6, 171.7, -0.5, -1.5, -2.0, -171.5, 1e-320, -1e-320,
    0.7853981633974483, 1.5707963267948966, 89.41, 2.0**1023, 1e17, -1e17, 26.6, 27.3,
)


build = compile_source


def call_source(fn: str, spelling: str, args: str) -> tuple[str, dict[str, Any]]:
    """`def f(...)` calling math.`fn`, either as an attribute or as a bare imported name."""
    if spelling == "attr":
        return f"math.{fn}({args})", {}
    return f"{fn}({args})", {fn: getattr(math, fn)}


def assert_native(d: Any) -> None:
    """Some call ran natively and no argument-type specialisation fell back to CPython."""
    assert native_ran(d), d.explain()
    assert "interpreted" not in d.explain(), d.explain()


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("fn", UNARY)
def test_unary(fn: str, spelling: str) -> None:
    expr, globs = call_source(fn, spelling, "x")
    d = build(f"def f(x):\n    return {expr}\n", **globs)
    for v in (*EDGE_FLOATS, *DOMAIN_EDGES, *EDGE_INTS, True, False, 10**400, -(10**400)):
        check(d, v)
    equivalent(d, st.tuples(numbers()), max_examples=60)
    assert_native(d)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("fn", BINARY)
def test_binary(fn: str, spelling: str) -> None:
    expr, globs = call_source(fn, spelling, "x, y")
    d = build(f"def f(x, y):\n    return {expr}\n", **globs)
    specials = (0.0, -0.0, 1.0, -1.0, 2.0, 0.5, math.inf, -math.inf, math.nan, 1e308, 5e-324, -2.5, 3, 0, -1, True)
    for x in specials:
        for y in specials:
            check(d, x, y)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=80)
    assert_native(d)


def test_pow_domain_and_range() -> None:
    d = build("def f(x, y):\n    return math.pow(x, y)\n")
    for args in [(-8.0, 1.0 / 3.0), (-8.0, 3.0), (0.0, -1.0), (-0.0, -1.0), (0.0, -math.inf), (10.0, 400.0),
                 (-10.0, 401.0), (-1.0, math.inf), (1.0, math.nan), (math.nan, 0.0), (2, 1023), (2, 1024), (-2, 0.5)]:
        check(d, *args)
    assert_native(d)


def test_fmod_remainder_signs() -> None:
    d = build("def f(x, y):\n    return (math.fmod(x, y), math.remainder(x, y))\n")
    for x in (7.0, -7.0, 6.0, -6.0, 0.0, -0.0, 5.5, -5.5, 1e308, math.inf, math.nan, 7, -7):
        for y in (2.0, -2.0, 3.0, -3.0, 0.0, -0.0, math.inf, -math.inf, math.nan, 4, -4):
            check(d, x, y)
    assert_native(d)


def test_log_with_base() -> None:
    d = build("def f(x, b):\n    return math.log(x, b)\n")
    for args in [(8, 2), (8.0, 2.0), (100, 10), (1, 1), (2, 1), (0, 2), (2, 0), (-1, 2), (2, -1), (1.0, 1.0),
                 (math.inf, 2), (2, math.inf), (math.nan, 2), (2**62, 2), (INT64_MAX, 3), (1e-300, 1e300),
                 (True, 2), (2, True), (0.5, 0.5), (10**400, 10)]:
        check(d, *args)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert_native(d)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_ldexp(spelling: str) -> None:
    expr, globs = call_source("ldexp", spelling, "x, i")
    d = build(f"def f(x, i):\n    return {expr}\n", **globs)
    for x in (1.0, -1.0, 0.0, -0.0, 0.5, 5e-324, 1e308, math.inf, -math.inf, math.nan, 3, -3, True, 0):
        for i in (0, 1, -1, 1023, 1024, -1074, -1075, -1076, 2000, -2000, INT64_MAX, INT64_MIN, 2**63, -(2**63) - 1, True, False):
            check(d, x, i)
    for x, i in [(1.0, 1.5), (1.0, 2.0)]:
        check(d, x, i, native=False)  # TypeError in CPython
    exponents = st.one_of(st.integers(-1100, 1100), st.integers(INT64_MIN - 4, INT64_MAX + 4), st.booleans())
    equivalent(d, st.tuples(numbers(), exponents), max_examples=100)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("fn", ["floor", "ceil", "trunc"])
def test_float_to_int_limits(fn: str) -> None:
    d = build(f"def f(x):\n    return math.{fn}(x)\n")
    for v in (0.5, -0.5, 1.5, -1.5, -0.0, 2.0**63, -(2.0**63), 2.0**63 - 1024, 9.3e18, -9.3e18, 1e300, -1e300,
              math.inf, -math.inf, math.nan, 4503599627370495.5, -4503599627370495.5, INT64_MAX, INT64_MIN, True):
        check(d, v)
    assert_native(d)


CONSTANTS = ["pi", "e", "tau", "inf", "nan"]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("name", CONSTANTS)
def test_constant(name: str, spelling: str) -> None:
    ref = f"math.{name}" if spelling == "attr" else name
    globs = {} if spelling == "attr" else {name: getattr(math, name)}
    d = build(f"def f(x):\n    return ({ref}, x * {ref}, x + {ref}, {ref} > x, -{ref})\n", **globs)
    for v in (0, 1, -1, 0.0, -0.0, 2.5, math.inf, math.nan, True, INT64_MAX):
        check(d, v)
    equivalent(d, st.tuples(numbers()), max_examples=40)
    assert_native(d)


def test_constant_rebinding_noticed() -> None:
    ns: dict[str, Any] = {"__name__": "equiv_math_generated", "pi": math.pi}
    exec("def f(x):\n    return x * pi\n", ns)
    d = cuvil_bc.compile(ns["f"])
    check(d, 2.0)
    ns["pi"] = 3
    check(d, 2.0)
    check(d, 2)
    ns["pi"] = math.tau
    check(d, 2.0)
    assert native_ran(d), d.explain()


def test_math_combined_expression() -> None:
    d = build(
        """
        def f(x, y):
            r = math.hypot(x, y)
            if r == 0 or math.isnan(r) or math.isinf(r):
                return 0.0
            a = math.atan2(y, x)
            return math.sqrt(r) * math.cos(a / 2) + math.log1p(abs(x)) - math.copysign(math.exp(-r), y)
        """
    )
    check(d, 3.0, 4.0)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=150)
    assert native_ran(d), d.explain()


def test_math_in_loop() -> None:
    d = build(
        """
        def f(n, x):
            s = 0.0
            for i in range(n):
                s += math.sin(x * i) / (i + 1) + math.gamma(1 + i % 5) - math.erf(s)
            return s
        """
    )
    for args in [(10, 0.1), (0, 1.0), (50, 3), (5, math.inf), (5, math.nan), (200, 1e300)]:
        check(d, *args)
    assert native_ran(d), d.explain()


def test_math_domain_error_inside_loop() -> None:
    d = build(
        """
        def f(n):
            s = 0.0
            for i in range(n):
                s += math.sqrt(5 - i)
            return s
        """
    )
    for args in [(0,), (3,), (5,), (6,), (7,), (100,)]:
        check(d, *args)
    assert native_ran(d), d.explain()


@pytest.mark.parametrize("n", [0, 1, 3, 9, 12])
def test_hypot_with_any_number_of_arguments(n: int) -> None:
    """math.hypot takes any number of coordinates (CPython's own code computes it:
    one call through the runtime, whatever the count)."""
    names = ", ".join(f"x{k}" for k in range(n))
    d = build(f"def f({names}):\n    return math.hypot({names})\n")
    specials = (0.0, -0.0, 3, 4.0, -1e308, 1e308, 5e-324, math.inf, -math.inf, math.nan, True, 2**62, INT64_MIN)
    for k in range(len(specials)):
        check(d, *(specials[(k + j) % len(specials)] for j in range(n)))
    equivalent(d, st.tuples(*(numbers() for _ in range(n))), max_examples=60)
    assert_native(d)


def test_hypot_of_many_coordinates_in_a_loop() -> None:
    d = build(
        "def f(xs, n):\n"
        "    s = 0.0\n"
        "    for i in range(n):\n"
        "        s += math.hypot(xs[0] + i, xs[1], xs[2] - i, i)\n"
        "    return s\n"
    )
    for xs in [(1.0, 2.0, 3.0), (1e308, 1e308, -1e308), (0.0, math.nan, 1.0), (3, 4, 5)]:
        for n in (0, 1, 5):
            check(d, xs, n)
    assert_native(d)


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_is_the_c_library_function_called_without_the_gil(name: str) -> None:
    """CPython's math.erf and erfc are the C library's (this build's): native code
    calls them directly, not through the runtime's callback, which takes the GIL."""
    from cuvil_bc.lower.builtins import libm_agrees

    if not libm_agrees(name):
        pytest.skip(f"this CPython computes math.{name} with its own code")
    d = build(
        "def f(a):\n"
        "    s = 0.0\n"
        "    for i in range(a.shape[0]):\n"
        f"        s += math.{name}(a[i])\n"
        "    return s\n"
    )
    import numpy as np

    rng = np.random.default_rng(4)
    a = np.concatenate([rng.uniform(-7.0, 7.0, 2000), rng.standard_normal(2000) * 1e-5, np.array([0.0, -0.0, 30.0, -30.0, 1e-310])])
    check(d, a)
    assert_native(d)
    text = d.inspect_llvm()
    assert f"@{name}(" in text and "cb_math_call" not in text


def test_libm_agrees_catches_another_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe tells apart functions that differ in one bit on a few inputs, as
    CPython's own erf series would from the C library's."""
    from cuvil_bc.lower.builtins import libm_agrees

    probe = libm_agrees.__wrapped__  # (uncached)
    real = math.erf
    if not probe("erf"):
        pytest.skip("this CPython computes math.erf with its own code")
    monkeypatch.setattr(math, "erf", lambda x: math.nextafter(real(x), math.inf) if 0.3 < x < 0.4 else real(x))
    assert not probe("erf")
    assert not probe("no_such_function")


OWN_ALGORITHMS = build(
    "def f(a, b, out):\n"
    "    for i in range(a.shape[0]):\n"
    "        out[i, 0] = math.gamma(a[i])\n"
    "        out[i, 1] = math.lgamma(a[i])\n"
    "        out[i, 2] = math.hypot(a[i], b[i])\n"
    "        out[i, 3] = math.remainder(a[i], b[i])\n"
    "        out[i, 4] = math.hypot(b[i], a[i], 0.5 * a[i])\n"
    "    return out\n"
)


def _near_midpoints(rng: Any, n: int) -> tuple[Any, Any]:
    """Pairs whose hypotenuse lies within a tiny fraction of an ulp of a rounding
    midpoint: ``hypot(x, y) ~ x + y*y / (2x)`` with ``y*y ~ x * ulp(x)``. Where two
    algorithms both round nearly always correctly, only such inputs tell them apart
    (CPython 3.11's and 3.12's hypot differ on about one in thirty of these)."""
    import numpy as np

    xs = rng.uniform(1.0, 2.0, n) * np.exp2(rng.integers(-20, 20, n))
    ys = np.sqrt(xs * np.spacing(xs) * rng.choice([1.0, 3.0, 5.0], n))
    ys = np.nextafter(ys, np.where(rng.random(n) < 0.5, 0.0, np.inf))
    return xs, ys


def test_cpython_own_math_algorithms_natively() -> None:
    """math.gamma, lgamma, hypot and remainder are CPython's own code, not the C
    library's: the runtime computes them with the same operations (csrc/pymath.c),
    natively and without the GIL, where they went through the interpreter before.
    Every bit is compared with CPython, also on hypot's hardest inputs."""
    import numpy as np

    rng = np.random.default_rng(18)
    n = 20000
    a = np.concatenate([rng.uniform(-170.0, 170.0, n), rng.uniform(-3.0, 3.0, n), rng.standard_normal(n) * 1e-3])
    b = np.concatenate([rng.uniform(-50.0, 50.0, n), rng.uniform(0.1, 3.0, n) * rng.choice([-1.0, 1.0], n), rng.standard_normal(n)])
    a[:8] = [0.5, 1.5, 23.0, 24.0, 140.5, -140.5, 1e-25, -199.5]
    check(OWN_ALGORITHMS, a, b, np.zeros((a.shape[0], 5)))
    subnormal = rng.uniform(-1.0, 1.0, 200) * 1e-310
    check(OWN_ALGORITHMS, subnormal + 1.5, subnormal, np.zeros((200, 5)))
    assert_native(OWN_ALGORITHMS)
    assert OWN_ALGORITHMS.stats["deopts"] == 0
    assert "cb_math_call" not in OWN_ALGORITHMS.inspect_llvm()
    xs, ys = _near_midpoints(rng, 30000)
    check(HYPOTS, xs, ys, np.zeros((xs.shape[0], 3)))
    check(HYPOTS, -ys, xs, np.zeros((xs.shape[0], 3)))
    check(HYPOTS, xs * 1e-300, ys * 1e-300, np.zeros((xs.shape[0], 3)))  # (subnormal squares)
    assert_native(HYPOTS)


HYPOTS = build(
    "def f(a, b, out):\n"
    "    for i in range(a.shape[0]):\n"
    "        out[i, 0] = math.hypot(a[i], b[i])\n"
    "        out[i, 1] = math.hypot(b[i], a[i])\n"
    "        out[i, 2] = math.hypot(b[i], 0.0, a[i])\n"
    "    return out\n"
)


@pytest.mark.parametrize("call", ["math.hypot(x, y)", "math.hypot(y, x, 3.0)", "math.gamma(x)", "math.lgamma(x)", "math.remainder(x, y)"])
def test_cpython_own_math_algorithms_at_their_edges(call: str) -> None:
    """Poles, overflows, subnormals and special values of the runtime's copies of
    CPython's algorithms, with CPython's errors (hypot never raises)."""
    import numpy as np

    d = build(f"def f(x, y):\n    return {call}\n")
    edges = (*EDGE_FLOATS, *DOMAIN_EDGES, -3.0, -200.0, -199.5, 200.5, 1e-20, 2e-20, 9e-21, 5e-324, 2.2250738585072014e-308)
    for x in edges:
        for y in (0.0, -0.0, 1.5, -2.5, math.inf, math.nan, 1e-310, 1e308):
            check(d, x, y)
    xs, ys = _near_midpoints(np.random.default_rng(3), 300)
    for x, y in zip(xs.tolist(), ys.tolist()):
        check(d, x, y)
    equivalent(d, st.tuples(numbers(), numbers()), max_examples=100)
    assert_native(d)
