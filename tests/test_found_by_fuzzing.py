"""Defects that random programs found (issue 15), each reduced to its smallest form.
Every test compares with CPython and also checks that native code really ran, so a
lowering that silently falls back cannot pass it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cuvil_bc.testing import check, compile_source, native_ran


def test_a_dead_int_of_a_float_still_raises() -> None:
    # DCE took `int` for a removable exception class (both are types), so int(nan)
    # returned 1 instead of raising ValueError.
    f = compile_source(
        """
        def f(x):
            v = int(x)
            return 1
        """
    )
    check(f, 2.5)
    assert native_ran(f)
    for x in (math.nan, math.inf, -math.inf, 1e300):
        check(f, x)


def test_a_dead_user_exception_is_still_built() -> None:
    # Only builtin exception classes may be dropped: a user's __init__ can do anything.
    log: list[int] = []

    class Loud(Exception):
        def __init__(self, n: int) -> None:
            log.append(n)
            super().__init__(n)

    f = compile_source(
        """
        def f(x):
            e = Loud(x)
            return x + 1
        """,
        Loud=Loud,
    )
    check(f, 3, native=False)  # not compiled: the instance is kept, not raised
    assert log == [3, 3]


def test_numpy_warnings_of_an_overwritten_union_local() -> None:
    # `acc` is `int | np.float64`; the np.float64 member's sum warns in NumPy even
    # though the value is overwritten at once.
    f = compile_source(
        """
        def f(a, k):
            acc = 0
            for i in range(len(a)):
                acc += k
                acc = a[i]
            return acc
        """
    )
    check(f, np.array([1.0, 2.0, 3.0]), 1.0)
    assert native_ran(f)
    check(f, np.array([1e308, 1e308, 1.0]), 1e308)


def test_resume_with_a_call_being_built_on_the_stack() -> None:
    # The conditional expression's merge is a resume point while `abs` (and the NULL
    # CPython keeps beside it) is on the stack.
    f = compile_source(
        """
        def f(b, x, y):
            b[0] = abs(x if y else 1) * x
            return 0
        """
    )
    check(f, np.zeros(2), 3, True)
    assert native_ran(f)
    before = f.stats["deopts"]
    check(f, np.zeros(2), 2**62, True)  # the product overflows int64: resumed
    assert f.stats["deopts"] == before + 1
    check(f, np.zeros(2), 2**62, False)


def test_resume_with_a_method_call_being_built_on_the_stack() -> None:
    f = compile_source(
        """
        def f(b, x, y):
            b[0] = math.copysign(x * x if y else 1.0, x * 2**40)
            b[1] = x
            return b[0]
        """
    )
    check(f, np.zeros(2), 3, True)
    assert native_ran(f)
    check(f, np.zeros(2), 2**40, True)


def test_item_of_a_union_of_tuples() -> None:
    for src in (
        "def f(a, b):\n    t = (a, 1) if b else (1.5, 2)\n    return t[0]\n",
        "def f(a, b):\n    t = (a, 1) if b else (1.5, 2)\n    x, y = t\n    return x + y\n",
        "def f(a, b):\n    t = (a, (1, 2.5)) if b else (1.5, (2, 3))\n    return t[1][-1] + t[-2]\n",
    ):
        f = compile_source(src)
        for args in ((1, True), (2, False), (2.5, True), (2**63 - 1, True)):
            check(f, *args)
        assert native_ran(f), src


def test_a_branch_whose_two_targets_became_one_block() -> None:
    # `c or 0.1` is always true: both edges of the test lead to the loop header, whose
    # phi had one entry per edge after the branch became a jump.
    f = compile_source(
        """
        def f(c):
            w = 0
            while w < 3 and (c or 0.1):
                w += 1
            return w
        """
    )
    for c in (0, 1, -3):
        check(f, c)
    assert native_ran(f)


def test_nan_made_from_constants_that_meet_in_llvm() -> None:
    # LLVM folded `inf - inf` (in an inlined callee) and `inf * 0.0` (a select of
    # constants) to a positive NaN; CPython's C code on this machine gives the
    # processor's default NaN, whose sign copysign shows.
    inlined = compile_source(
        """
        def h(u, w):
            return u - w

        def f(x):
            return math.copysign(1.0, h(math.inf, math.inf)) + x
        """
    )
    check(inlined, 1.0)
    selected = compile_source(
        """
        def f(n):
            b = 0.0
            if n > 100:
                b = 1.0
            return math.copysign(1.0, math.inf * b)
        """
    )
    for n in (1, 300):
        check(selected, n)
    assert native_ran(inlined) and native_ran(selected)


def test_resume_points_past_extended_args() -> None:
    # A jump to an instruction preceded by EXTENDED_ARG lands on the EXTENDED_ARG:
    # stack_nulls did not know that offset (KeyError, an internal error on 5-10% of
    # random array programs). A long loop body needs such jumps.
    body = "".join(f"            a[i] = a[i] * {k}.5 + {k}\n" for k in range(40))
    src = "def f(a, n):\n    for j in range(n):\n        for i in range(len(a)):\n" + body + "    return 0\n"
    f = compile_source(src, np=np)
    check(f, np.ones(3), 2)
    check(f, np.array([1e300, 1.0]), 3)  # overflows: resumes in the loop
    assert native_ran(f)


def test_reading_a_local_that_may_be_unbound_raises() -> None:
    # The read of a maybe-unbound local vanished in SSA (`u = t`) or read the
    # unbound value as None (`(v6, 0)`): CPython raises UnboundLocalError.
    never = compile_source("def f():\n    if 0:\n        v6 = 0\n    return (v6, 0)\n")
    check(never, native=False)  # always raises: not compiled
    dead = compile_source("def f(n):\n    if n > 100:\n        t = 0\n    u = t\n    return 1\n")
    check(dead, 300)
    check(dead, 3)
    guarded = compile_source(
        "def f(n):\n    if n > 100:\n        t = 0.5\n    s = 0\n    for i in range(n):\n        if n > 100:\n            s += t\n    return s\n"
    )
    check(guarded, 3)
    check(guarded, 300)
    assert native_ran(dead) and native_ran(guarded)


def test_values_whose_union_type_was_folded_away() -> None:
    # Typing saw a union that folding later made a constant or a plain tuple: a tuple
    # item, a tuple's item read, an argument of a native callee and a tuple that fits
    # a union of tuples only through an item's union were not converted to the
    # type typing gave them (internal compiler errors in LLVM's builder).
    cases = [
        ("def f(o0, t1):\n    if o0 is None:\n        o0 = 0\n    v5 = 0 if o0 else True\n    return (t1, v5, 0)\n", (None, 0)),
        ("def f(t0, o1):\n    if o1 is None:\n        o1 = 1\n    if (t0 if o1 else divmod(0, 1.5))[0]:\n        return 1\n    return 2\n", ((100, -math.inf), None)),
        ("def g0(p0=-1):\n    return p0\n\ndef f(o):\n    if o is None:\n        o = 1\n    return g0(o or True)\n", (None,)),
        (
            "def f(o0, b2):\n    if o0 is None:\n        o0 = 0\n    v1 = b2\n    o0 = o0 % 1.5 and 0\n"
            "    if (divmod(0, 0) if v1 else (1.5, o0) if b2 else (True, 1.5))[0]:\n        return 1\n    return 2\n",
            (None, 0),
        ),
    ]
    for src, args in cases:
        f = compile_source(src)
        check(f, *args)
        assert native_ran(f), src


def test_a_call_that_always_raises_is_left_to_cpython() -> None:
    f = compile_source("def h(p0):\n    raise ArithmeticError\n\ndef f():\n    return h(0) + 1\n")
    check(f, native=False)
    assert "always raises" in f.explain()


def test_the_nan_of_a_floor_division_by_a_constant() -> None:
    # LLVM rewrote fmod(x, 1.0) for a constant divisor and made fmod(inf, 1.0) a
    # positive NaN; glibc's (which CPython calls) is the processor's, negative.
    for expr in ("x // 1.0", "x % 1.0", "divmod(x, 1.0)[0]", "x // y", "x % -2.0"):
        f = compile_source(f"def f(x, y):\n    return math.copysign(1.0, {expr})\n")
        for x in (math.inf, -math.inf, 2.5):
            check(f, x, 1.0)
        assert native_ran(f), expr


def test_atan2_of_a_nan_is_cpythons_nan() -> None:
    # CPython's m_atan2 returns its own NaN for a NaN argument; libm's atan2 returns
    # the argument, whose sign may differ.
    f = compile_source("def f(x, y):\n    return math.copysign(1.0, math.atan2(x, y))\n")
    for x, y in ((-math.nan, 2.0), (2.0, -math.nan), (math.nan, 1.0), (1.0, 2.0), (-0.0, -0.0), (math.inf, -math.inf)):
        check(f, x, y)
    assert native_ran(f)


def test_unpacking_a_tuple_whose_union_type_was_folded_away() -> None:
    f = compile_source(
        "def f(b0, o1):\n    if o1 is None:\n        o1 = 0\n    o1, v1 = (0, 0) if o1 else (b0, 0)\n    if o1:\n        return 1\n    return 2\n"
    )
    check(f, 0.0, None)
    check(f, 2.5, None)
    assert native_ran(f)


def test_more_values_whose_types_were_folded_away() -> None:
    # A read found never bound only after folding; a nested tuple that fits a union
    # of tuples through an inner tuple's union; fmod by an int constant's float.
    cases = [
        (
            "def f(o0, b1):\n    if o0 is None:\n        o0 = 1\n    if (0, b1)[1]:\n        pass\n    else:\n"
            "        if o0:\n            pass\n        else:\n            v2 = 0\n        o0 %= v2\n    return o0\n",
            [(None, 0), (None, 1)],
        ),
        (
            "def f(o0):\n    if o0 is None:\n        o0 = 1\n    o0 += min(o0, 1.5)\n    v1 = (0, 0, o0)\n"
            "    if o0:\n        o0 = 0\n    return (v1, o0)\n",
            [(None,), (2,)],
        ),
        ("def f(x0):\n    return math.copysign(1.0, x0 % 1)\n", [(math.inf,), (-math.inf,), (2.5,)]),
    ]
    for src, argsets in cases:
        f = compile_source(src)
        for args in argsets:
            check(f, *args)
        assert native_ran(f), src


def test_a_negation_keeps_cpythons_nan_sign() -> None:
    # LLVM moved an fneg into the arithmetic around it (-(x / 3.0) became x / -3.0,
    # -a + b became b - a), and made an fneg of x * -1.0: a NaN kept its sign where
    # CPython's negation flips it, or flipped where CPython's multiply passes it on.
    for expr in ("-(x / 3.0)", "-(x * 2.0) + y", "y + -x", "-x - y", "x * -1.0", "x / -1.0", "-0.0 - x", "-1.0 * x", "x * y * -1.0", "x / -1", "-1 * x"):
        f = compile_source(f"def f(x, y):\n    return math.copysign(1.0, {expr})\n")
        for x, y in ((math.nan, 1.0), (-math.nan, 1.0), (1.0, math.nan), (1.0, -math.nan), (2.5, -0.0)):
            check(f, x, y)
        assert native_ran(f), expr


def test_a_negated_array_still_vectorizes() -> None:
    # The negation is an xor with a mask LLVM cannot see: a loop of them still
    # vectorizes (a barrier on the operand would have stopped it).
    f = compile_source("def f(a, b):\n    for i in range(len(a)):\n        b[i] = -(a[i] / 3.0)\n    return b\n")
    a = np.array([math.nan, -math.nan, 1.0, -0.0] * 4)
    check(f, a, np.zeros(16))
    assert native_ran(f)
    assert "vdivpd" in f.inspect_asm() or "divpd" in f.inspect_asm()


def test_a_power_of_a_nan_is_the_nan_itself() -> None:
    # CPython's float_pow and math.pow return a NaN operand as it is; glibc's
    # pow(-nan, 3.0) is +nan.
    for expr in ("x ** y", "math.pow(x, y)", "x ** 1.0", "x ** 3.0", "y ** x"):
        f = compile_source(f"def f(x, y):\n    return math.copysign(1.0, {expr})\n")
        for x, y in ((-math.nan, 1.0), (-math.nan, 3.0), (math.nan, -math.nan), (-math.nan, math.nan), (2.0, -math.nan), (1.0, -math.nan), (-math.nan, 0.0), (2.0, 3.0)):
            check(f, x, y)
        assert native_ran(f), expr


# A random program (scalar:1704025049:3843) whose native entry became a tail call for
# a signature on which every call deoptimises.
_X87_LEAK = """
def g0(n, p0=7):
    if n <= 0:
        return math.lgamma((17 ** 1))
    (p0 * (n | 13))
    p0
    return (g0(n - 1, (7 if n else 0)) % 2305843009213693951) + ((-1e+308) == 2.5 <= (-4611686018427387904))

def f(t0, n1, o2, x3):
    if o2 is None:
        o2 = 19
    t0 = divmod((n1 % 3), 7)
    o2 = math.remainder(((x3 ** (2 % 5)) ** math.atan2(o2, 6.0)), 7)
    x3 = (o2 // bool(x3))
    v1 = (max((o2 ** 0.0), (x3 % 1e300)) == bool(o2) != ((x3 + x3) * math.floor(n1)))
    t0 = (g0(((n1 // (-2)) % 4), n1), (o2 - n1))
    n1 |= n1
    v1 = (float((x3 - 15)) + ((x3 // 2.5) > g0(0, 3) != (-v1)))
    t0 = ((o2 % o2), n1, (o2 - o2))
    n1, o2 = (o2, n1)
    for i2 in range(1):
        x3 = (((round(((-9007199254740993) if 255 else 9007199254740994.0)) ** (-0.5)) and ((-2.5) or (o2 ^ o2) or (o2 << 3))) % 9223372036854775807)
    x3 /= ((o2 and o2) << 1)
    v1 = x3
    o2 = (((n1 % 0.5) and (x3 == o2 > n1) and math.sin(x3)) * ((x3 + v1) and True and ((-2.5) + x3)))
    if (math.hypot(9, (-0.5)) * math.hypot(v1, (-20))):
        return math.hypot(n1, (x3 + n1))
    return (v1, t0)
"""


def test_a_result_on_the_x87_stack_is_never_left_there() -> None:
    # The entry ended in a tail call of the compiled function, whose result (two of
    # its four doubles on x86-64's x87 register stack) the entry's caller never
    # popped. Once the stack was full, every later x87 load read a NaN: a function
    # returning three floats then gave a NaN as its third, in unrelated code.
    leaky = compile_source(_X87_LEAK)
    for _ in range(12):
        check(leaky, (-2147483648, 1.5), 3037000500, None, 482.6510165033294)
    f = compile_source(
        """
        def f(n0, x1, t2, t3):
            v1 = x1
            w2 = 0
            while w2 < 4:
                w2 += 1
                v1 += pow((n0 % (-2)), (n0 | n0), 1000003)
            return (v1, t3, t2)
        """
    )
    check(f, 0, 919.5, (9007199254740993, 9007199254740994.0), (-1, math.nan))
    assert native_ran(f)


def test_a_nan_constant_and_an_absolute_value_keep_cpythons_nan_sign() -> None:
    # LLVM folded x - nan to the constant (the processor returns x when it is a NaN
    # too), and dropped the fabs of abs(m) / abs(m), keeping m's sign.
    # (Not nan * -nan: which of two NaNs a commutative op returns is not matched.)
    for expr in ("x // 1 - math.nan", "math.nan * x", "abs(x // 1) / abs(x // 1)", "math.fabs(x // 1) * math.fabs(x // 1)", "abs(-x) / abs(-x)"):
        f = compile_source(f"def f(x):\n    return math.copysign(1.0, {expr})\n")
        for x in (math.inf, -math.inf, math.nan, 2.5) + (() if expr.startswith("math.nan") else (-math.nan,)):
            check(f, x)
        assert native_ran(f), expr


def test_llvm_prints_nothing_on_stderr(capfd) -> None:  # type: ignore[no-untyped-def]
    # A buffered strip asks LLVM to unroll its loop completely; here jump threading
    # gave the loop two latches, the unroll failed, and LLVM printed "warning: loop not
    # unrolled" straight to the process's stderr (array:4251260060:3141, reduced).
    f = compile_source(
        """
        def f(a, x):
            c1 = a.copy()
            s4 = x
            for i6 in range(len(c1)):
                s4 = min(s4, a[i6])
                c1[i6] = a[-1 - i6]
            return s4
        """
    )
    check(f, np.array([0.0, 8.0, 6.0, -9.0, 3.0]), 2.0)
    assert native_ran(f)
    assert capfd.readouterr().err == ""


def test_what_others_write_to_stderr_while_llvm_optimizes_is_kept(capfd) -> None:  # type: ignore[no-untyped-def]
    import os

    from cuvil_bc.lower.jit import _MISSED, _missed_unrolls_unheard

    with _missed_unrolls_unheard():
        os.write(2, b"the program's own line\n")
        os.write(2, _MISSED + b" the optimizer was unable to perform the requested transformation\n")
        os.write(2, b"and another\n")
    assert capfd.readouterr().err == "the program's own line\nand another\n"


def test_typed_folding_keeps_the_type_typing_gave() -> None:
    # After typing, `o0` is known to be -1, and constant folding replaced the float
    # `o0 ** 1.5` by CPython's value of it, a complex: the lowering of `%` then met a
    # complex operand where typing had seen a float, an internal compiler error
    # (scalar:20261204:420, reduced). A folded value must have the op's type.
    f = compile_source(
        """
        def f(o0, n):
            if o0 is None:
                o0 = -1
            v = 0.0
            for i1 in range(n):
                v = o0 ** 1.5 % 2
            return v
        """
    )
    check(f, None, 0)  # (the warnings compared: no internal error)
    check(f, None, 2)  # the power is complex: CPython raises TypeError for the %
    check(f, 4, 1)


@pytest.mark.parametrize("use", ["assert v4 < 1.5", "return v4 * 3 + x0"])
def test_an_op_on_a_local_that_is_never_bound_there(use: str) -> None:
    # Once `o1` is known to be 1, `v4` is never bound where it is read: the read
    # deopts (CPython raises UnboundLocalError) and its value is LLVM's undef, which
    # the lowering of int/float conversion and of `* constant` took for a number
    # constant: an internal compiler error, and its warning (scalar:6060:336).
    f = compile_source(
        "def f(x0, o1):\n"
        "    if o1 is None:\n"
        "        o1 = 1\n"
        "    if o1:\n"
        "        if x0:\n"
        "            return 0\n"
        "    else:\n"
        "        v4 = 0\n"
        f"    {use}\n"
    )
    for args in ((1, None), (0, None), (0, 0)):
        check(f, *args)
