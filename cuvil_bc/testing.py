"""Equivalence checks: a compiled function must behave exactly like CPython.

`check(fn, *args)` runs the function compiled and uncompiled on the same arguments and
asserts that both return the same value of the same type (floats compared by `repr`, so
-0.0 and NaN count) or raise the same exception type with the same message.
`equivalent(fn, strategy)` does that for hypothesis-drawn argument tuples. Mutable
arguments are copied per run and their final states compared as well.

    from cuvil_bc.testing import check, edge_ints
    check(my_fn, 3, 4.5)
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

#: Integers around every boundary the native code cares about.
EDGE_INTS: tuple[int, ...] = (
    0, 1, -1, 2, -2, 3, -3, 7, -7, 63, 64, 65, 2**31, -(2**31), 2**53 - 1, 2**53, 2**53 + 1,
    -(2**53) - 1, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 2**63, -(2**63) - 1, 2**64, 3**40,
)
#: Floats around every boundary: signed zeros, infinities, NaN, subnormals, 2**53, int64 limits.
EDGE_FLOATS: tuple[float, ...] = (
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 1e-300, 5e-324, -5e-324,
    2.2250738585072014e-308, 1e308, -1e308, math.inf, -math.inf, math.nan, 2.0**53, 2.0**53 + 2,
    2.0**63, -(2.0**63), 9.2e18, math.pi, -math.e, 0.1, 1e16,
)
EDGE_BOOLS: tuple[bool, ...] = (True, False)


def same_value(a: Any, b: Any) -> bool:
    """Equal values of the same type; floats by repr (distinguishes -0.0, matches NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return bool(a == b)


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any, tuple[Any, ...]]:
    """('ok', value, args-after) or ('raise', (type, message), args-after)."""
    args = copy.deepcopy(args)
    try:
        return "ok", fn(*args), args
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return "raise", (type(e), str(e)), args


def describe(outcome: tuple[str, Any, tuple[Any, ...]]) -> str:
    kind, value, _ = outcome
    if kind == "ok":
        return f"returned {value!r} ({type(value).__name__})"
    return f"raised {value[0].__name__}({value[1]!r})"


def check(compiled: Any, *args: Any) -> None:
    """Assert that `compiled` (a dispatcher) and its `py_func` agree on `args`."""
    expected = run(compiled.py_func, args)
    actual = run(compiled, args)
    ok = expected[0] == actual[0] and (
        same_value(expected[1], actual[1]) if expected[0] == "ok" else expected[1] == actual[1]
    )
    ok = ok and all(same_value(x, y) or x == y for x, y in zip(expected[2], actual[2]))
    if not ok:
        raise AssertionError(
            f"{compiled.py_func.__qualname__}{args!r}: CPython {describe(expected)}, "
            f"cuvil_bc {describe(actual)}\n{compiled.explain()}"
        )


def equivalent(compiled: Any, strategy: Any, *, max_examples: int = 200) -> None:
    """Check `compiled` against CPython on argument tuples drawn from `strategy`."""
    from hypothesis import given, settings

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(strategy)
    def prop(args: tuple[Any, ...]) -> None:
        check(compiled, *args)

    prop()


def numbers(ints: bool = True, floats: bool = True, bools: bool = True) -> Any:
    """A hypothesis strategy for one scalar: drawn values plus the edge values above."""
    from hypothesis import strategies as st

    parts: list[Any] = []
    if ints:
        parts += [st.integers(INT64_MIN - 4, INT64_MAX + 4), st.integers(-1000, 1000), st.sampled_from(EDGE_INTS)]
    if floats:
        parts += [st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(EDGE_FLOATS)]
    if bools:
        parts += [st.sampled_from(EDGE_BOOLS)]
    return st.one_of(*parts)


def native_ran(compiled: Any) -> bool:
    return bool(compiled.stats["native_calls"] > 0)


#: The scalar kinds the equivalence tests draw, every ordered pair of them, and one
#: harmless value of each (for the operand that a test is not varying).
KINDS: tuple[str, ...] = ("int", "float", "bool")
PAIRS: tuple[tuple[str, str], ...] = tuple((a, b) for a in KINDS for b in KINDS)
BENIGN: dict[str, Any] = {"int": 5, "float": 2.5, "bool": True}


def scalar(kind: str) -> Any:
    """A hypothesis strategy for one scalar of `kind` ("int", "float" or "bool")."""
    return numbers(ints=kind == "int", floats=kind == "float", bools=kind == "bool")


def edges(kind: str) -> tuple[Any, ...]:
    """The edge values of `kind`."""
    return {"int": EDGE_INTS, "float": EDGE_FLOATS, "bool": EDGE_BOOLS}[kind]


def compile_source(src: str, name: str = "f", **globals_: Any) -> Any:
    """Exec `src` (dedented) in a fresh module namespace that has `math` and `globals_`,
    and return ``cuvil_bc.compile`` of the function called `name`. Source built this way
    is plain bytecode (pytest's assert rewriting never touches it)."""
    import textwrap

    import cuvil_bc

    ns: dict[str, Any] = {"__name__": "cuvil_bc_testing_generated", "math": math, **globals_}
    exec(textwrap.dedent(src), ns)
    return cuvil_bc.compile(ns[name])
