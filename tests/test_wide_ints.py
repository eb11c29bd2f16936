"""Masked 64-bit int arithmetic (hashes, random number generators): exact against
CPython's unbounded ints, natively.

A value only ever observed through a mask is computed modulo 2**64
(opt/wrapping.py); what a mask gives, up to 2**64 - 1, is a `UINT`, whose operators
are exact (lower/numeric.uint_binop) or deoptimise where CPython's int leaves the
range.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import INT64_MAX, INT64_MIN, check, compile_source, equivalent

M = 0xFFFFFFFFFFFFFFFF

KERNELS = {
    "lcg": """
        def f(s, n):
            for i in range(n):
                s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
            return s
    """,
    "xorshift64": """
        def f(x, n):
            t = 0
            for i in range(n):
                x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
                x ^= x >> 7
                x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
                t += x & 1023
            return x, t
    """,
    "splitmix64": """
        def f(s, n):
            acc = 0
            for i in range(n):
                s = (s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
                z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
                acc ^= z ^ (z >> 31)
            return acc
    """,
    "fnv1a": """
        def f(h, n):
            for i in range(n):
                h ^= i & 0xFF
                h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
            return h
    """,
    "pcg32": """
        def f(state, n):
            out = 0
            for i in range(n):
                old = state
                state = (old * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
                shifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
                rot = old >> 59
                out ^= (shifted >> rot) | ((shifted << ((-rot) & 31)) & 0xFFFFFFFF)
            return state, out
    """,
    "murmur_fmix": """
        def f(k, n):
            total = 0
            for i in range(n):
                h = (k + i) & 0xFFFFFFFFFFFFFFFF
                h ^= h >> 33
                h = (h * 0xFF51AFD7ED558CCD) & 0xFFFFFFFFFFFFFFFF
                h ^= h >> 33
                h = (h * 0xC4CEB9FE1A85EC53) & 0xFFFFFFFFFFFFFFFF
                h ^= h >> 33
                total ^= h
            return total
    """,
    "masked_only_after_the_loop": """
        def f(h, n):
            for i in range(n):
                h = h * 31 + i
            return h & 0xFFFFFFFFFFFFFFFF
    """,
}

SEEDS = st.one_of(st.integers(0, INT64_MAX), st.integers(INT64_MIN, -1), st.sampled_from([0, 1, INT64_MAX, INT64_MIN, 12345]))


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_hash_and_generator_steps(name: str) -> None:
    f = compile_source(KERNELS[name])
    for seed in (0, 1, 88172645463325252, INT64_MAX, INT64_MIN, -1):
        for n in (0, 1, 2, 100):
            check(f, seed, n)
    equivalent(f, st.tuples(SEEDS, st.integers(0, 40)), max_examples=80)
    assert "smul.with.overflow" not in f.inspect_llvm(), "the masked products should wrap, not test overflow"
    before = f.stats["deopts"]
    f(3, 1000)
    assert f.stats["deopts"] == before, "a long run deoptimised"


ESCAPING = {
    "returned_unmasked": "def f(s):\n    t = s * 6364136223846793005\n    return t & 0xFFFFFFFFFFFFFFFF, t\n",
    "compared": "def f(s):\n    t = s * 3 + 1\n    return (t & 0xFFFFFFFFFFFFFFFF) if t > 0 else -1\n",
    "shifted_right": "def f(s):\n    t = s * 6364136223846793005\n    return (t >> 64) & 0xFFFFFFFFFFFFFFFF\n",
    "divided": "def f(s):\n    t = s * s\n    return (t // 7) & 0xFFFFFFFFFFFFFFFF\n",
}


@pytest.mark.parametrize("name", sorted(ESCAPING))
def test_a_value_seen_whole_keeps_its_overflow_test(name: str) -> None:
    """A product that is also observed unmasked (returned, compared, shifted right,
    divided) must be CPython's whole int: it is not computed modulo 2**64, and past
    int64 the call goes back to CPython."""
    f = compile_source(ESCAPING[name])
    for s in (0, 1, 3, 2**31, 2**40, INT64_MAX, INT64_MIN, -(2**33)):
        check(f, s)
    equivalent(f, st.tuples(SEEDS), max_examples=60)


UINT_EXPRESSIONS = [
    "u & y", "u | y", "u ^ y", "u >> 3", "u >> y", "y >> u", "u // y", "u % y", "y // u", "y % u",
    "u + y", "u - y", "u * y", "u << 2", "u / 3", "u * 0.5", "u + 0.25", "-u", "~u", "+u",
    "u < y", "u <= y", "u == y", "u != y", "u > y", "u >= y", "y < u", "u == u", "not u", "u if u else y",
]


@pytest.mark.parametrize("expr", UINT_EXPRESSIONS)
def test_uint_operators(expr: str) -> None:
    """What a mask gives (0 to 2**64 - 1) with CPython's exact int semantics for every
    operator, the int operand drawn from the whole int64 range."""
    f = compile_source(f"def f(x, y):\n    u = x & 0xFFFFFFFFFFFFFFFF\n    return {expr}\n")
    edges = (0, 1, -1, 2, 63, 64, 65, INT64_MAX, INT64_MIN, 2**32, -(2**32))
    for x in edges:
        for y in edges:
            check(f, x, y)
    equivalent(f, st.tuples(SEEDS, st.one_of(SEEDS, st.integers(-70, 70))), max_examples=60)


def test_a_uint_result_crosses_the_boundary() -> None:
    """A uint is returned as CPython's int (also inside a tuple and a union), and a
    function that writes hands one to the interpreter when it resumes."""
    f = compile_source("def f(x):\n    return x & 0xFFFFFFFFFFFFFFFF\n")
    g = compile_source("def f(x):\n    u = x & 0xFFFFFFFFFFFFFFFF\n    return (u, u >> 1) if x else x\n")
    for x in (0, 1, -1, INT64_MIN, INT64_MAX, -12345):
        check(f, x)
        check(g, x)
        assert type(f(x)) is int
    import numpy as np

    h = compile_source(
        """
        def f(a, s):
            for i in range(a.shape[0]):
                s = (s * 6364136223846793005 + 1) & 0xFFFFFFFFFFFFFFFF
                a[i] = 1.0 / ((s >> 60) - 3)
            return s
        """
    )
    for seed in (1, 2, 3, 99):
        check(h, np.zeros(50), seed)  # (a zero divisor resumes the interpreter mid-loop)


PCG = compile_source(
    """
import numpy as np

def f(out, state, inc):
    inc = (inc << 1 | 1) & 0xFFFF_FFFF_FFFF_FFFF
    for i in range(len(out)):
        old = state
        state = (old * 6364136223846793005 + inc) & 0xFFFF_FFFF_FFFF_FFFF
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        out[i] = ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF
    return state, state + 1 if state < 2**63 else state - 1
"""
)


def test_int_arguments_up_to_two_to_the_64_are_uints() -> None:
    """A 64-bit state passed as a Python int of 2**63 or more is a `UINT` argument: the
    call runs natively (it ran interpreted: no int64 specialisation takes it), and the
    int below 2**63 gets the `INT` specialisation. Beyond 2**64, or negative beyond
    int64, the call runs interpreted."""
    import numpy as np

    from cuvil_bc.testing import native_ran

    for state, inc in [(9600629759793949339, 15726070495360670683), (2**63, 1), (M, M), (12345, 2**63 + 7), (5, 7)]:
        check(PCG, np.zeros(50, dtype=np.uint32), state, inc)
    assert native_ran(PCG)
    assert any("uint" in s for s in PCG.signatures) and "(array[uint32, 1d, unit-stride], int, int)" in PCG.signatures, PCG.signatures
    for state in (2**64, -(2**63) - 1, 2**70):
        check(PCG, np.zeros(5, dtype=np.uint32), state, 3, native=False)
    equivalent(PCG, st.tuples(st.just(np.zeros(8, dtype=np.uint32)), st.integers(0, M), st.integers(0, M)), max_examples=100)


def test_a_refused_signature_set_is_an_internal_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    # When the C entry refused a new signature (a slot kind it did not know: uint
    # arguments, before this change), the ValueError escaped into the user's call.
    from cuvil_bc.dispatcher import Dispatcher

    f = compile_source("def f(x):\n    return x + 1\n")
    real = Dispatcher._regenerate

    def refuse(self: Dispatcher) -> None:
        if self._native:
            raise ValueError("a slot that the C entry does not know")
        real(self)

    monkeypatch.setattr(Dispatcher, "_regenerate", refuse)
    with pytest.warns(RuntimeWarning, match="internal compiler error"):
        assert f(41) == 42
    monkeypatch.setattr(Dispatcher, "_regenerate", real)
    assert f(1) == 2 and "internal compiler error" in f.explain()


UINT_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "<", "<=", "==", "!=", ">", ">="]
_WIDE = st.integers(2**63, M)
_ANY_INT = st.integers(INT64_MIN, INT64_MAX) | st.sampled_from([0, 1, 2, 63, 64, -1, INT64_MAX, INT64_MIN])


@pytest.mark.parametrize("op", UINT_OPERATORS)
def test_every_operator_with_uint_arguments(op: str) -> None:
    """Ints in [2**63, 2**64) are uint arguments: every operator with one, against an
    int, a bool, a float or another uint, is CPython's (natively where the operator
    takes a uint, else interpreted), never an internal error."""
    f = compile_source(f"def f(a, b):\n    return a {op} b\n")
    # (CPython's own big powers and shifts would take forever: small exponents only)
    huge = op in ("**", "<<")
    small = st.integers(-3, 70) | st.booleans() | st.floats(-3.0, 70.0)
    cases = [(2**63, 1), (M, 0), (2**63, -1), (M, 64), (M, 63), (2**63, True), (2**63, 0.5), (0.5, M), (0, M), (1, M), (-1, M)]
    cases += [] if huge else [(M, M), (2**63 + 5, 2**63 + 5), (3, M), (-3, M)]
    for a, b in cases:
        check(f, a, b, native=False)
        if not huge or abs(a) <= 70:
            check(f, b, a, native=False)
    equivalent(f, st.tuples(_WIDE, small if huge else _WIDE | _ANY_INT | st.booleans() | st.floats()), max_examples=60, native=False)
    left = st.sampled_from([0, 1, -1, 0.0, 1.0, -1.0, True, False]) if huge else _ANY_INT | st.floats()
    equivalent(f, st.tuples(left, _WIDE), max_examples=60, native=False)
