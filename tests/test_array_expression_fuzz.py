"""Random expressions over array elements of random dtypes (issue 4: NumPy's scalar
semantics), summed in a loop or stored into an array, against CPython with NumPy.

The expressions mix arithmetic, powers, bitwise ops and shifts, abs/min/max,
math.floor and math.sqrt over elements of two arrays and a Python scalar, so that
NumPy's promotion, wrapping, warnings and exceptions meet in every combination. A
program may not compile (np.bool arithmetic, a float32 power): it must then run in
CPython with the same results; what matters is that no combination gives a different
result, a lost warning or an internal compiler error. Two bugs were found this way
(tests/test_regressions.py and test_array_scalar_ops.py name them).
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc.testing import check, compile_source

DTYPES = ["float64", "int64", "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32", "uint64", "bool"]
#: Elements come up more often than constants (the element types are what varies).
LEAVES = ["a[i]", "b[j]"] * 3 + ["x", "a[0]", "b[-1]", "0", "1", "2", "3", "-1", "7", "63", "0.5", "2.5", "300"]
BINARY = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>"]
#: Exponents: a leaf, so that Python ints never raise each other to huge powers (which
#: would exhaust memory in CPython itself).
EXPONENTS = ["2", "3", "-1", "0.5", "x", "a[i]", "b[j]"]


def expressions():  # type: ignore[no-untyped-def]
    def extend(inner):  # type: ignore[no-untyped-def]
        pair = st.tuples(inner, inner)
        binary = st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
        return st.one_of(
            binary,
            binary,
            binary,  # (mostly binary ops: they meet two element types)
            st.tuples(inner, st.sampled_from(EXPONENTS)).map(lambda t: f"({t[0]} ** {t[1]})"),
            inner.map(lambda e: f"abs({e})"),
            inner.map(lambda e: f"(~{e})"),
            inner.map(lambda e: f"math.floor({e})"),
            inner.map(lambda e: f"math.sqrt({e})"),
            pair.map(lambda p: f"max({p[0]}, {p[1]})"),
            pair.map(lambda p: f"min({p[0]}, {p[1]})"),
        )

    return st.recursive(st.sampled_from(LEAVES), extend, max_leaves=5)


@st.composite
def programs(draw):  # type: ignore[no-untyped-def]
    expr = draw(expressions())
    use = "a[i] = v" if draw(st.booleans()) else "s = s + v"
    return (
        "def f(a, b, x):\n    s = 0\n    for i in range(len(a)):\n        for j in range(len(b)):\n"
        f"            v = {expr}\n            {use}\n    return s\n"
    )


def values(dtype: str, draw):  # type: ignore[no-untyped-def]
    raw = draw(st.lists(st.integers(-150, 300), max_size=3))
    scale = draw(st.sampled_from([1, 1000, 10**7, 0.37]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (out-of-range values wrap into the dtype)
        return (np.array(raw, dtype=np.int64) * scale).astype(dtype)


@st.composite
def arguments(draw):  # type: ignore[no-untyped-def]
    a = values(draw(st.sampled_from(DTYPES)), draw)
    b = values(draw(st.sampled_from(DTYPES)), draw)
    x = draw(st.sampled_from([0, 1, 2, -3, 70, 2.5, float("nan"), 1e308, True]))
    return a, b, x


@settings(max_examples=250, deadline=None, database=None)
@given(programs(), st.lists(arguments(), min_size=1, max_size=3))
def test_random_element_expressions(src: str, calls: list) -> None:  # type: ignore[type-arg]
    fn = compile_source(src, np=np)
    for args in calls:
        # Random expressions may be ones CPython rejects (not compiled); an internal
        # compiler error would show as a warning CPython lacks.
        check(fn, *args, native=False)
    assert "internal compiler error" not in fn.explain(), fn.explain() + src
