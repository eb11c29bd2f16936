"""Which op tests which float value in a function that only reads (opt/finiteness.py).

np.float64 ``+ - *`` are not tested where they run: a later op tests a value that is
non-finite whenever theirs is, or they test themselves. Each shape here once lost a
NumPy warning or a math ValueError, or is one where a test can be left out: the
warnings, the results and the exceptions must be CPython's, whatever the inputs.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings

from cuvil_bc.opt.finiteness import UntestedFloats
from cuvil_bc.testing import check, compile_source, native_ran, overflowing_vectors


def build(src: str):  # type: ignore[no-untyped-def]
    return compile_source(src, np=np, math=math)


# The product of each iteration is overwritten by the next: only its own test can see
# an overflow in an earlier iteration.
OVERWRITTEN = build("def f(a, b):\n    last = 0.0\n    for i in range(len(a)):\n        last = a[i] * b[i]\n    return last\n")
# A return inside the loop leaves without the sum reaching the final return.
EARLY_RETURN = build(
    """
def f(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
        if a[i] > 100.0:
            return 0.0
    return s
"""
)
BREAK = build(
    """
def f(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
        if b[i] < -5.0:
            break
    return len(a)
"""
)
# The loop ends normally, but the block after it may return without the sum.
SUM_NOT_RETURNED_SRC = """
def f(a, b, flag):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    if flag:
        return 1.0
    return s
"""
SUM_NOT_RETURNED = build(SUM_NOT_RETURNED_SRC)
# Accumulated only on some iterations.
CONDITIONAL = build(
    """
def f(a, b):
    s = 0.0
    for i in range(len(a)):
        if a[i] > 0.0:
            s += a[i] * b[i]
    return s
"""
)
# An accumulator of the inner loop handed on to the outer loop's.
NESTED_SRC = """
def f(a, b):
    e = 0.0
    for i in range(len(a)):
        for j in range(len(b)):
            d = a[i] - b[j]
            e += d * d
    return e
"""
NESTED = build(NESTED_SRC)
# A running maximum: the new worst value comes from a branch.
RUNNING_MAX = build(
    """
def f(prices):
    peak = prices[0]
    worst = prices[0] * 0.0
    for i in range(len(prices)):
        p = prices[i]
        if p > peak:
            peak = p
        if peak - p > worst:
            worst = peak - p
    return worst
"""
)
# The square root's value is returned in a tuple and compared: each consumer tests.
ROOTS = build(
    """
def f(a):
    s = 0.0
    for i in range(len(a)):
        s += math.sqrt(a[i] * a[i] - 1.0)
    return s, s > 3.0
"""
)
# The sum with a domain error in the square root and a return inside the loop.
ROOT_EARLY_RETURN = build(
    """
def f(a):
    s = 0.0
    for i in range(len(a)):
        s += math.sqrt(a[i])
        if a[i] > 100.0:
            return 0.0
    return s
"""
)

# A while loop: the first value comes from before the loop, which may not run at all.
WHILE_SRC = """
def f(a, b):
    s = a[0] * b[0]
    i = 1
    while i < len(a):
        s = s + a[i] * b[i]
        i += 1
    return s
"""
WHILE = build(WHILE_SRC)

# exp(-inf) is 0.0: exp of an overflowing product must not be left to later tests.
EXP_OF_PRODUCT = build("def f(a, b):\n    s = 0.0\n    for i in range(len(a)):\n        s += math.exp(a[i] * b[i])\n    return s\n")

TWO_ARGS = [OVERWRITTEN, EARLY_RETURN, BREAK, CONDITIONAL, NESTED]
PAIRS = [
    ([1e300, 1.0], [1e300, 1.0]),  # overflow in the first iteration, then finite
    ([1.0, 200.0], [1.0, 1.0]),
    ([1e300, 200.0], [1e300, 1.0]),  # overflow, then the early return
    ([2.0, 3.0, 1e200], [1.0, -10.0, 1e200]),  # break before the overflow
    ([1e200, 3.0], [1e200, -10.0]),  # overflow, then the break
    ([math.inf, 1.0], [0.0, 1.0]),  # inf * 0: invalid
    ([math.nan, 1.0], [1.0, 1.0]),
    ([-1e300, 2.0], [1e300, 1.0]),
    ([], []),
]


@pytest.mark.parametrize("f", TWO_ARGS, ids=["overwritten", "early_return", "break", "conditional", "nested"])
def test_warnings_of_every_iteration_are_cpythons(f) -> None:  # type: ignore[no-untyped-def]
    for a, b in PAIRS:
        check(f, np.array(a, dtype=np.float64), np.array(b, dtype=np.float64))
    check(f, np.linspace(-3.0, 3.0, 500), np.linspace(1.0, 2.0, 500))
    assert native_ran(f), f.explain()


def test_a_sum_not_returned_is_tested_where_it_is_made() -> None:
    for a, b in PAIRS:
        for flag in (True, False):
            check(SUM_NOT_RETURNED, np.array(a, dtype=np.float64), np.array(b, dtype=np.float64), flag)
    assert native_ran(SUM_NOT_RETURNED)


def test_a_while_loop_and_its_first_value() -> None:
    for a, b in PAIRS[:-1]:
        check(WHILE, np.array(a, dtype=np.float64), np.array(b, dtype=np.float64))
        check(WHILE, np.array(a[:1], dtype=np.float64), np.array(b[:1], dtype=np.float64))  # no iteration
    assert native_ran(WHILE)


def test_running_max_sees_every_overflow() -> None:
    for prices in ([1.0, 2.0, 0.5], [1e308, -1e308, 3.0], [1.0, math.inf, math.inf], [math.inf, 1.0], [math.nan, 2.0, 1.0], [1.0, math.nan, 3.0], [-1e308, 1e308, -1e308]):
        check(RUNNING_MAX, np.array(prices))
    assert native_ran(RUNNING_MAX)


def test_square_roots() -> None:
    for a in ([2.0, 3.0], [0.5, 2.0], [math.inf, 2.0], [math.nan], [1e200, 2.0], [1.0] * 50 + [0.0]):
        check(ROOTS, np.array(a))
    for a in ([1.0, 4.0], [-1.0, 200.0], [4.0, 200.0, -1.0], [-1.0, 4.0]):
        check(ROOT_EARLY_RETURN, np.array(a))
    assert native_ran(ROOTS) and native_ran(ROOT_EARLY_RETURN)


def test_only_square_roots_hand_their_test_on() -> None:
    for a, b in ([-1e300, 1.0], [1e300, 1.0]), ([1.0, 2.0], [-1.0, 0.5]), ([1e300, 2.0], [-1e300, 1.0]):
        check(EXP_OF_PRODUCT, np.array(a), np.array(b))
    assert native_ran(EXP_OF_PRODUCT)


@given(overflowing_vectors(12), overflowing_vectors(12))
@settings(max_examples=150, deadline=None)
def test_shapes_match_cpython(a: np.ndarray, b: np.ndarray) -> None:
    n = min(len(a), len(b))
    for f in TWO_ARGS:
        check(f, a[:n], b[:n])
    check(SUM_NOT_RETURNED, a[:n], b[:n], n % 2 == 0)
    if n:
        check(WHILE, a[:n], b[:n])
    if len(a):
        check(RUNNING_MAX, a)


def test_accumulators_are_tested_once() -> None:
    # The point of the analysis: an accumulator's adds are tested once, after the
    # loop, so the loop has no test in it and LLVM vectorizes it (its adds in order).
    NESTED(np.ones(64), np.ones(64))
    assert re.search(r"fsub <\d+ x double>", NESTED.inspect_llvm())
    # Products that test themselves still vectorize: the test ors into a scalar
    # integer, a reduction LLVM widens (a vector accumulator, one `vorpd` in scalar
    # loops, kept it from vectorizing this one).
    OVERWRITTEN(np.ones(64), np.ones(64))
    assert re.search(r"fmul <\d+ x double>", OVERWRITTEN.inspect_llvm())


@pytest.mark.parametrize("budget", [0, 1, 3])
def test_an_exhausted_budget_only_costs_speed(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    # Past its budget the analysis finds no test for what is left: those values test
    # themselves, and a carrying phi whose exit test is not found again makes every
    # value test itself. The results and warnings stay CPython's.
    monkeypatch.setattr(UntestedFloats, "BUDGET_PER_OP", budget)
    for src in (NESTED_SRC, WHILE_SRC, SUM_NOT_RETURNED_SRC):
        f = build(src)
        for a, b in PAIRS[:-1]:
            args = (np.array(a), np.array(b)) + ((True,) if "flag" in src else ())
            check(f, *args)
        assert native_ran(f)


# -- The plan itself (FloatTests), on IR written by hand -----------------------------


def _plan(text: str):  # type: ignore[no-untyped-def]
    from cuvil_bc.ir import ops as O
    from cuvil_bc.ir.parser import parse_function
    from cuvil_bc.opt.finiteness import FloatTests
    from cuvil_bc.typing.types import parse_type

    fn = parse_function(text.strip("\n"), {}, parse_type)
    ops = {f"%{n}": op for n, op in enumerate(o for o in fn.ops() if not isinstance(o, O.ControlOp))}
    return FloatTests(fn, fn.uses()), ops


WRITER = """
def f(a: array[float64, 1d], x: np.float64):
B0:
  %0: None = checkpoint (a=a, x=x)
  %1: np.float64 = binop x * x
  %2: np.float64 = binop %1 + x
  %3: None = setitem a[0] = %2
  %4: None = checkpoint (a=a, x=x)
  %5: np.float64 = binop x / x
  %6: None = setitem a[1] = %5
  return None
"""


def test_a_writers_arithmetic_is_tested_once_before_the_next_resume_point() -> None:
    plan, ops = _plan(WRITER)
    assert plan.untested is None and not plan.deferred  # (a writer resumes instead)
    assert plan.arithmetic_test(ops["%1"]) == "none"  # %2 tests what it passes on
    assert plan.arithmetic_test(ops["%2"]) == "conservative"  # its operand's test is its own
    assert plan.arithmetic_test(ops["%5"]) == "precise"
    assert plan.arithmetic_test(ops["%5"], absorbed=True) == "none"  # a strip tests it


def test_a_reader_defers_its_tests_and_the_sum_is_tested_by_its_consumer() -> None:
    plan, ops = _plan("""
def g(x: np.float64, y: np.float64):
B0:
  %0: np.float64 = binop x * y
  %1: np.float64 = binop %0 + x
  %2: np.bool = compare %1 > 1.0
  %3: bool = truth %2
  return %3
""")
    assert plan.deferred and plan.untested is not None
    assert plan.op_tests(ops["%0"]) == plan.op_tests(ops["%1"])  # neither tests anything
    assert plan.op_tests(ops["%0"]).tests == [] and not plan.op_tests(ops["%1"]).self_test
    assert plan.op_tests(ops["%2"]).tests == [ops["%1"]]  # the compare tests the sum first


def _float32(values: list[float]) -> np.ndarray:
    """Float64 test values brought to float32's range: 1e300 -> 1e30 and so on, so that
    the same sums and products overflow in single precision."""
    return np.array([math.copysign(10.0 ** (math.log10(abs(v)) / 10.0), v) if math.isfinite(v) and abs(v) > 1e100 else v for v in values], dtype=np.float32)


F32_WRITER = build(
    """
def f(a, b, out):
    s = 0.0
    for i in range(len(a)):
        t = a[i] * b[i]
        out[i] = t + a[i] * 0.5
        s = s + t
    return s
"""
)


@pytest.mark.parametrize("f", TWO_ARGS, ids=["overwritten", "early_return", "break", "conditional", "nested"])
def test_float32_arithmetic_defers_its_warnings_as_float64_does(f) -> None:  # type: ignore[no-untyped-def]
    """np.float32 ``+ - *`` carry an infinity or NaN on as np.float64 ones do: a
    function that only reads tests them where the plan says, not at every op."""
    for a, b in PAIRS:
        check(f, _float32(a), _float32(b))
    check(f, np.linspace(-3.0, 3.0, 500, dtype=np.float32), np.linspace(1.0, 2.0, 500, dtype=np.float32))
    assert native_ran(f), f.explain()
    if f is NESTED:  # (a test per op, a branch each, kept it from vectorizing)
        assert re.search(r"fmul <\d+ x float>", f.inspect_llvm())


@given(overflowing_vectors(12), overflowing_vectors(12))
@settings(max_examples=100, deadline=None)
def test_float32_shapes_match_cpython(a: np.ndarray, b: np.ndarray) -> None:
    n = min(len(a), len(b))
    with np.errstate(over="ignore", invalid="ignore"):
        a32, b32 = a[:n].astype(np.float32), b[:n].astype(np.float32)
    for f in TWO_ARGS:
        check(f, a32, b32)
    if n:
        check(F32_WRITER, a32, b32, np.zeros(n, dtype=np.float32))


def test_a_float32_writer_tests_before_its_next_resume_point() -> None:
    for a, b in PAIRS[:-1]:
        check(F32_WRITER, _float32(a), _float32(b), np.zeros(len(a), dtype=np.float32))
    check(F32_WRITER, np.float32([3e38, 2.0]), np.float32([1.0, 1.0]), np.zeros(2, dtype=np.float32))  # t + a/2 overflows
    assert native_ran(F32_WRITER)


# A value overwritten each iteration, made from one phi used twice (``g * g``): the
# question whether it carries its own earlier values asked about ``g`` twice, and a
# visited set shared between the two answered the second one as a cycle, so only
# the last iteration's product was tested (found by a helper attacking twin unions;
# the np.float64 form failed before they existed). (The division keeps the ``if`` a
# branch and ``g`` a phi: opt/ifconvert.py would make it a select.)
PHI_TWICE = build(
    """
def f(x):
    t = 0.0
    for i in range(1, len(x)):
        g = x[i - 1]
        if x[i] > x[i - 1]:
            g = x[i] / 0.5
        t = g * g
    return t
"""
)
TWIN_PHI_TWICE = build(
    """
def f(x, c):
    t = c
    for i in range(len(x)):
        g = c
        if x[i] > 0.0:
            g = x[i] / 0.5
        t = g * g
    return t
"""
)


def test_a_value_made_from_one_phi_twice_is_tested_in_every_iteration() -> None:
    check(PHI_TWICE, np.array([0.0, 1e300, 1.0, 2.0]))  # CPython warns twice
    check(TWIN_PHI_TWICE, np.array([1e300, 2.0]), 1.0)
    check(TWIN_PHI_TWICE, np.array([math.inf, -1.0, 2.0]), 1.0)
    for x in (np.linspace(-2.0, 2.0, 30), np.array([1e200, -1e300, 3.0])):
        check(PHI_TWICE, x)
        check(TWIN_PHI_TWICE, x, 0.5)
    assert native_ran(PHI_TWICE) and native_ran(TWIN_PHI_TWICE)
