"""Builtins and operators on array elements with NumPy's scalar semantics (issue 4,
section 1), against CPython with NumPy: abs/min/max, ``**`` and pow(), ``math`` on
every dtype, bitwise ops and shifts, and float values stored into int arrays.

Every element is a NumPy scalar of its array's dtype, so these follow NumPy's rules,
not Python's: abs() keeps the dtype (and warns where it overflows), an int power or a
left shift wraps silently, a shift by the dtype's width or more gives 0 (or -1), a
float stored into an int array is truncated, and math.floor of a NumPy int rounds
through a float first. The expected values are always CPython's own.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from cuvil_bc.testing import arrays, check, compile_source, equivalent, native_ran, numbers

pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py

INTS = ["int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8"]
ALL = ["float64", "float32"] + INTS + ["bool"]


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np)


def small_or_any(dtype: str):  # type: ignore[no-untyped-def]
    """Elements of an int `dtype`: small values (exponents, shift counts) or any."""
    from hypothesis.extra import numpy as hnp

    info = np.iinfo(dtype)
    return st.integers(max(int(info.min), -3), min(int(info.max), 70)) | hnp.from_dtype(np.dtype(dtype))


def vector(dtype: str, elements=None):  # type: ignore[no-untyped-def]
    return arrays(dtype, max_dims=1, max_side=4, elements=elements)


MIN_MAX_ABS = build(
    """
def f(a, x):
    top = a[0]
    low = a[0]
    for i in range(len(a)):
        top = max(top, a[i])
        low = min(a[i], low)
    return abs(a[0]), abs(a[-1]), top, low, max(a[0], x), min(x, a[-1]), max(a[0], a[-1], x)
"""
)


@pytest.mark.parametrize("dtype", ALL)
def test_abs_min_max(dtype: str) -> None:
    equivalent(MIN_MAX_ABS, st.tuples(vector(dtype), numbers()), max_examples=60)
    info = np.iinfo(dtype) if dtype in INTS else None
    if info is not None and info.min < 0:
        check(MIN_MAX_ABS, np.array([info.min, 3], dtype=dtype), 1)  # abs() overflows: NumPy warns
    if dtype.startswith("float"):
        check(MIN_MAX_ABS, np.array([np.nan, 1.0, -0.0], dtype=dtype), 0.0)  # max keeps the first NaN
        check(MIN_MAX_ABS, np.array([1.0, np.nan], dtype=dtype), float("nan"))
    check(MIN_MAX_ABS, np.array([5, 1, 2], dtype=dtype), 2.5)
    assert native_ran(MIN_MAX_ABS)


def test_min_max_keep_each_arguments_type() -> None:
    mixed = build("def f(a, x):\n    return max(a[0], x), min(x, a[0]), max(0, a[0]), min(a[0], 0.5)\n")
    for a in (np.array([1.5]), np.array([0.5]), np.array([2]), np.array([0]), np.array([0.1], dtype=np.float32)):
        for x in (0, 1, 0.5, 2.5, True, float("nan"), 2**53 + 1):
            check(mixed, a, x)
    assert native_ran(mixed)


POWERS = build(
    """
def f(a, b, x):
    p = a[0]
    q = b[0]
    return p ** q, p ** x, x ** p, p ** 2, pow(q, 3)
"""
)


@pytest.mark.parametrize("dtype,other", [
    ("float64", "float64"), ("float64", "int64"), ("int64", "int64"), ("int64", "float64"), ("int8", "int8"),
    ("uint8", "int8"), ("int16", "uint8"), ("uint32", "uint32"), ("uint64", "uint8"), ("int32", "int64"),
    ("float32", "float64"), ("uint16", "float64"),
])
def test_powers(dtype: str, other: str) -> None:
    def elements(d: str):  # type: ignore[no-untyped-def]
        return None if d.startswith("float") else small_or_any(d)

    exponents = st.integers(-3, 70) | st.floats(-4, 4) | numbers(bools=False)
    # Float powers without an np.float64 operand run in CPython (NumPy's ufunc pow).
    equivalent(POWERS, st.tuples(vector(dtype, elements(dtype)), vector(other, elements(other)), exponents), max_examples=80, native=False)
    check(POWERS, np.array([3], dtype=dtype), np.array([2], dtype=other), 2, native=False)
    assert native_ran(POWERS)


def test_float_powers_through_numpy_ufuncs_are_not_compiled() -> None:
    # Without an np.float64 operand NumPy computes a float power in its ufunc loop,
    # whose SIMD pow may round differently from C's: CPython runs these.
    ufunc = build("def f(a, x):\n    return a[0] ** x\n")
    for a, x in ((np.array([6], dtype=np.uint32), -0.4629970372474377), (np.array([3]), 0.5), (np.array([2], dtype=np.int8), 1.5)):
        check(ufunc, a, x, native=False)
    assert not native_ran(ufunc) and "NumPy's ufunc pow" in ufunc.explain()


def test_float_powers_warn_where_numpy_does() -> None:
    for p, q in ((10.0, 400.0), (0.0, -1.0), (-0.0, -3.0), (-8.0, 1 / 3), (np.nan, 0.0), (1.0, np.nan), (-1.0, np.inf),
                 (1e-200, 2.0), (np.inf, -1.0), (2.0, 0.5), (1.0000001, 1e9)):
        check(POWERS, np.array([p]), np.array([q]), 2)
    assert native_ran(POWERS)


def test_int_powers_wrap_silently() -> None:
    for dtype in ("int64", "int8", "uint8", "uint16", "int32"):
        check(POWERS, np.array([3], dtype=dtype), np.array([41], dtype=dtype), 2)  # wraps, no warning
        check(POWERS, np.array([-3 if dtype[0] == "i" else 7], dtype=dtype), np.array([5], dtype=dtype), 63)
        check(POWERS, np.array([2], dtype=dtype), np.array([-1 if dtype[0] == "i" else 1], dtype=dtype), -1)  # ValueError
        check(POWERS, np.array([2], dtype=dtype), np.array([1], dtype=dtype), 2**40)  # OverflowError for narrow dtypes
    assert native_ran(POWERS)


MATH = build(
    """
def f(a):
    x = a[0]
    return (math.sqrt(x), math.floor(x), math.ceil(x), math.log(x), math.exp(x), math.isnan(x),
            math.fabs(x), math.atan2(x, a[-1]), math.hypot(x, 2), math.pow(x, a[-1]))
"""
)


@pytest.mark.parametrize("dtype", ALL)
def test_math_on_every_dtype(dtype: str) -> None:
    equivalent(MATH, st.tuples(vector(dtype)), max_examples=60)
    check(MATH, np.array([4, 2], dtype=dtype))
    assert native_ran(MATH)


def test_floor_and_ceil_of_numpy_ints_round_through_a_float() -> None:
    # NumPy ints have no __floor__: math.floor converts them with __float__ first.
    rounding = build("def f(a):\n    return math.floor(a[0]), math.ceil(a[-1]), math.floor(a[0] + 1)\n")
    for v in (2**53 + 1, 2**62 + 1, -(2**63), 2**63 - 1, -(2**53) - 3, 7):
        check(rounding, np.array([v, v], dtype=np.int64))
    check(rounding, np.array([2**63 + 2**40 + 1, 5], dtype=np.uint64))
    assert native_ran(rounding)


def test_math_calls_that_raise_type_error_in_cpython_are_not_compiled() -> None:
    trunc = build("def f(a):\n    return math.trunc(a[0])\n")
    ldexp = build("def f(a):\n    return math.ldexp(1.5, a[0])\n")
    for dtype in ("int8", "float32", "bool", "int64"):
        check(trunc, np.array([1], dtype=dtype), native=False)  # TypeError: no __trunc__
        check(ldexp, np.array([1], dtype=dtype), native=False)  # TypeError: the exponent must be an int
    assert not native_ran(ldexp) and "TypeError in CPython" in ldexp.explain()
    check(trunc, np.array([2.5]))  # np.float64 is a float: it has __trunc__
    assert native_ran(trunc)


BITS = build(
    """
def f(a, b, x):
    p = a[0]
    q = b[0]
    return p & q, p | x, x ^ p, p << q, p >> q, p << x, x >> p, p >> 3, p << 5
"""
)


@pytest.mark.parametrize("dtype,other", [
    ("int64", "int64"), ("int8", "int8"), ("uint8", "int8"), ("int16", "uint8"), ("uint32", "uint32"),
    ("uint16", "int64"), ("int32", "int8"), ("uint64", "uint64"),
])
def test_bitwise_ops_and_shifts(dtype: str, other: str) -> None:
    counts = st.integers(-2, 70) | numbers(floats=False)
    equivalent(BITS, st.tuples(vector(dtype, small_or_any(dtype)), vector(other, small_or_any(other)), counts), max_examples=80)
    check(BITS, np.array([3], dtype=dtype), np.array([2], dtype=other), 1)
    assert native_ran(BITS)


def test_shifts_wrap_and_saturate_as_numpy() -> None:
    for dtype in ("int64", "int8", "uint8", "int16", "uint32"):
        bits = np.dtype(dtype).itemsize * 8
        for count in (bits - 1, bits, bits + 1, 63, 64, 0):
            for value in (1, 3, -5 if dtype[0] == "i" else 5):
                check(BITS, np.array([value], dtype=dtype), np.array([count], dtype=dtype if count < 128 else "int64"), count)
    invert = build("def f(a):\n    return ~a[0], ~a[-1]\n")
    for dtype in ("int64", "int8", "uint8", "uint16", "int32", "uint32"):
        equivalent(invert, st.tuples(vector(dtype)), max_examples=25)
    check(invert, np.array([5, 0], dtype=np.uint8))
    assert native_ran(invert)


STORE = build(
    """
def f(a, src, x):
    for i in range(len(a)):
        a[i] = x * i
    if len(a):
        a[-1] = src[0]
    return a
"""
)


@pytest.mark.parametrize("dtype", INTS)
def test_floats_stored_into_int_arrays_truncate(dtype: str) -> None:
    floats = st.floats(-300.0, 300.0) | st.floats(allow_nan=True, allow_infinity=True)
    for source in ("float64", "float32"):
        equivalent(STORE, st.tuples(arrays(dtype, max_dims=1), vector(source), floats), max_examples=40)
    for x in (0.5, -0.9, 127.5, -128.9, 255.9, 1e10, 9.3e18, float("nan"), float("-inf")):
        check(STORE, np.zeros(4, dtype=dtype), np.array([2.7]), x)
    assert native_ran(STORE)


def test_narrow_accumulation_with_bit_ops() -> None:
    mix = build(
        """
def f(a, seed):
    h = seed
    for i in range(len(a)):
        h = (h ^ a[i]) * 16777619 & 0xFFFFFFFF
        h = h ^ (h >> 13)
    return h
"""
    )
    for dtype in ("uint8", "uint32", "int16", "int64"):
        equivalent(mix, st.tuples(vector(dtype), st.integers(0, 2**32 - 1)), max_examples=30)
    check(mix, np.arange(200, dtype=np.uint32), 2166136261)
    assert native_ran(mix)


def test_bool_elements_promote_with_narrow_ints() -> None:
    # np.bool with an int8 is int8 arithmetic in NumPy (np.bool with np.bool, or a
    # power of a bool, is not compiled).
    mixed = build("def f(a, b):\n    return a[0] + b[0], b[0] - a[0], a[0] * b[0], b[0] & a[0]\n")
    equivalent(mixed, st.tuples(vector("bool"), vector("int8")), max_examples=40)
    check(mixed, np.array([True]), np.array([127], dtype=np.int8))  # overflows: NumPy wraps and warns
    check(mixed, np.array([True]), np.array([3], dtype=np.int8))
    assert native_ran(mixed)


BOOL_WITH_NUMBERS = {
    op: build(f"def f(a, i, y):\n    return a[i] {op} y, y {op} a[i]\n") for op in ("+", "-", "*", "/", "//", "%", "&", "|", "^")
}
COUNT_TRUE = build("def f(x, t):\n    c = 0\n    for i in range(len(x)):\n        c += x[i] > t\n    return c\n")


@pytest.mark.parametrize("op", list(BOOL_WITH_NUMBERS))
def test_bool_elements_count_as_numbers_with_ints_and_floats(op: str) -> None:
    # np.bool with a Python int or float, np.int64 or np.float64 is 0 or 1 in the
    # other's dtype (np.True_ + 1 is np.int64(2)); with a bool it is logical (not
    # compiled), and a float in a bitwise op is CPython's TypeError.
    f = BOOL_WITH_NUMBERS[op]
    a = np.array([True, False])
    for y in (0, 1, -1, 3, 2**62, -(2**63), 2**63 - 1, 0.0, -0.0, 2.5, np.nan, np.inf, np.int64(7), np.float64(-1.5), True, np.True_):
        for i in (0, 1):
            bitwise_float = op in "&|^" and isinstance(y, float)
            check(f, a, i, y, native=not (bitwise_float or isinstance(y, (bool, np.bool_))))
    assert native_ran(f)


def test_counting_comparisons_runs_natively() -> None:
    # c starts as an int and becomes np.int64 at the first np.bool added to it.
    for n in (0, 1, 7, 1000):
        x = np.linspace(-1.0, 1.0, n)
        check(COUNT_TRUE, x, 0.25)
    assert native_ran(COUNT_TRUE) and COUNT_TRUE.stats["deopts"] == 0


def test_ints_whose_common_dtype_is_float64() -> None:
    # A uint64 with a signed int (NumPy's common dtype is float64), and np.int64 true
    # division: NumPy converts both operands to doubles first, so beyond 2**53 the
    # result is not the exactly rounded one Python's int arithmetic would give.
    mixed = build("def f(a, b):\n    p = a[0]\n    q = b[0]\n    return p + q, p - q, p * q, p / q, p // q, p % q, q / b[-1], 7 / q\n")
    wide = st.integers(0, 2**63 - 1).map(lambda v: v >> (v % 63))
    signed = st.integers(-(2**63), 2**63 - 1).map(lambda v: v >> (abs(v) % 63))
    equivalent(mixed, st.tuples(arrays("uint64", max_dims=1, elements=wide), arrays("int64", max_dims=1, elements=signed)), max_examples=150)
    check(mixed, np.array([2**60 + 1], dtype=np.uint64), np.array([3, 2**62 + 5]))
    check(mixed, np.array([5], dtype=np.uint64), np.array([0, 2]))  # NumPy warns: divide by zero
    assert native_ran(mixed)


def test_builtins_of_values_that_may_be_numpy_scalars_or_python_numbers() -> None:
    # A local that is a Python number on one path and an element on another: each
    # case is lowered with its own result type (an int stays an int).
    either = build(
        """
def f(a, k):
    x = 0 if k else a[0]
    y = 2.5 if k > 1 else a[-1]
    return abs(x), max(x, y), min(y, 1), x ** 2, math.floor(x)
"""
    )
    for dtype in ("int64", "float64", "int8", "uint16"):
        equivalent(either, st.tuples(vector(dtype), st.integers(0, 2)), max_examples=30)
    check(either, np.array([-3, 4]), 0)
    assert native_ran(either)


def test_a_split_call_gets_the_result_type_of_its_case() -> None:
    from cuvil_bc.lower.calls import _narrow_call
    from cuvil_bc.typing.primitives import lookup
    from cuvil_bc.typing.types import FLOAT, INT, NP_F64, NP_I64, UnionType

    either = UnionType((INT, NP_I64))
    assert _narrow_call(lookup(abs), [(None, NP_I64)], either) == NP_I64
    assert _narrow_call(lookup(abs), [(None, INT)], either) == INT
    assert _narrow_call(lookup(max), [(None, NP_F64), (None, FLOAT)], UnionType((FLOAT, NP_F64))) == UnionType((FLOAT, NP_F64))
