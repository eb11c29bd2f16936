"""The C call path into native code (csrc/entry.c, issue 16): every scalar signature's
type test, unboxing, native call and boxing in one C call. Each case is compared with
CPython and checks that the C entry, not the generic path, completed the calls."""

from __future__ import annotations

import enum
import math

import pytest

import cuvil_bc
from cuvil_bc.lower.runtime import Entry
from cuvil_bc.testing import check, compile_source, native_ran


def _fast_calls(f) -> int:  # type: ignore[no-untyped-def]
    """Calls that native code completed through the C entry (the generic path counts
    its own in `_counts`)."""
    return sum(n.fast_calls() for n in f.dispatcher._native.values())


def test_scalar_signatures_run_through_the_c_entry() -> None:
    f = compile_source("def f(a, b):\n    return a * b + 1\n")
    for args in [(3, 4), (2.5, 4.0), (True, 3), (3, 2.5), (-(2**62), 2), (2**62, 2)]:
        check(f, *args)
    before = _fast_calls(f)
    assert f(3, 4) == 13 and f(2.5, 4.0) == 11.0 and f(True, 3) == 4
    assert _fast_calls(f) == before + 3


def test_what_the_c_entry_cannot_take_goes_to_cpython() -> None:
    class Int(int):
        pass

    class Color(enum.IntEnum):
        RED = 1

    f = compile_source("def f(a, b):\n    return a - b\n")
    check(f, 5, 3)
    for args in [(2**63, 1), (-(2**63) - 1, 0), (Int(5), 3), (Color.RED, 1)]:
        check(f, *args, native=False)  # interpreted, as CPython
    for args in [(5.0, 3), (5, 3.5)]:
        check(f, *args)  # new signatures: compiled, then through the C entry
    assert f(a=5, b=3) == 2  # keywords: Python binds them, then the C entry runs
    with pytest.raises(TypeError, match=r"f\(\) missing 1 required positional argument: 'b'"):
        f(5)


def test_sentinel_results_that_are_genuine() -> None:
    # A deopt returns NaN or INT64_MIN: only the thread's deopt record tells them
    # apart from the same value computed.
    nan = compile_source("def f(x):\n    return x * 0.0\n")
    for x in (math.inf, 2.0, -math.inf):
        check(nan, x)
    lowest = compile_source("def f(x):\n    return x - 1\n")
    for x in (-(2**63) + 1, -(2**63), 5):
        check(lowest, x)
    flag = compile_source("def f(x):\n    return x < 3\n")
    for x in (1, 5, -(2**63)):
        check(flag, x)
    assert native_ran(nan) and native_ran(lowest) and native_ran(flag)


def test_a_deopt_through_the_c_entry_is_cpythons() -> None:
    f = compile_source("def f(a, b):\n    return a // b\n")
    check(f, 7, 2)
    before = f.stats["deopts"]
    with pytest.raises(ZeroDivisionError):
        f(1, 0)
    assert f.stats["deopts"] == before + 1
    assert f(9, 2) == 4


def test_the_gil_is_kept_for_loop_free_code() -> None:
    # Issue 16's decision: releasing and taking back the GIL costs more than a
    # loop-free function's work; code with a loop may run long and releases it.
    short = compile_source("def f(a, b):\n    return a + b\n")
    long = compile_source("def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n")
    short(1, 2), long(10)
    [(_, _, _, short_releases, _, _)] = [n.fast for n in short.dispatcher._native.values()]
    [(_, _, _, long_releases, _, _)] = [n.fast for n in long.dispatcher._native.values()]
    assert not short_releases and long_releases


def test_an_entry_refuses_what_does_not_fit() -> None:
    fall, deopt = object(), object()
    with pytest.raises(ValueError):
        Entry(5, fall, deopt)
    e = Entry(1, fall, deopt)
    assert e(1) is fall and e() is fall and e(1, 2) is fall
    with pytest.raises(ValueError):
        e.set([((int, int), "ii", "i", 0, 0, None)])  # two types for one parameter
    with pytest.raises(ValueError):
        e.set([((int,), "x", "i", 0, 0, None)])
    with pytest.raises(TypeError):
        e.set([((int,), "i")])


def test_a_parameter_named_like_the_entrys_locals() -> None:
    # The generated function's own locals must not shadow the parameters it passes on
    # to a deopt: r * k overflows int64, and CPython re-runs the call with r.
    f = compile_source("def f(r, k):\n    return r * k\n")
    for args in [(3, 4), (2**62, 4), (-(2**62), 8)]:
        check(f, *args)
