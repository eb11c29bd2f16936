"""The C call path into native code (csrc/entry.c, issue 16): every scalar signature's
type test, unboxing, native call and boxing in one C call. Each case is compared with
CPython and checks that the C entry, not the generic path, completed the calls."""

from __future__ import annotations

import enum
import math

import numpy as np

import pytest

import cuvil_bc
from cuvil_bc.counters import Entry
from cuvil_bc.testing import check, check_with, compile_source, native_ran


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


def test_code_that_calls_compiled_functions_runs_through_the_c_entry() -> None:
    # Issue 16: only the generic path computed the native call depth budget, so every
    # call of a function that calls another compiled one took it: ~3.7 us a call,
    # against ~0.5 us interpreted for a caller of a small callee.
    source = (
        "def step(x):\n    t = 0\n    for i in range(3):\n        t += x + i\n    return t\n\n"
        "def f(x):\n    s = 0\n    for i in range(3):\n        s += step(x)\n    return s\n\n"
        "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    )
    caller, fib = compile_source(source), compile_source(source, "fib")
    for f, args in ((caller, (5,)), (caller, (2.5,)), (fib, (15,)), (fib, (-3,))):
        check(f, *args)
        before = _fast_calls(f)
        check(f, *args)
        assert _fast_calls(f) == before + 1, f.explain()


def test_a_call_near_the_recursion_limit_is_cpythons() -> None:
    # The C entry starts native code at the depth the thread's recursion budget
    # allows: called from deep in a Python stack, a recursive function still raises
    # RecursionError exactly where CPython does (native code hands the call back).
    import sys

    source = "def f(n):\n    if n == 0:\n        return 0\n    return 1 + f(n - 1)\n"
    f = compile_source(source)
    ns: dict[str, object] = {}
    exec(source, ns)
    plain = ns["f"]
    check(f, 50)

    def at_depth(k: int, fn, n: int):  # type: ignore[no-untyped-def]
        return at_depth(k - 1, fn, n) if k else fn(n)

    limit = sys.getrecursionlimit()
    for room in (30, 80, 200, 600):
        depth = limit - room - 40
        outcomes = []
        for fn in (plain, f):
            try:
                outcomes.append(at_depth(depth, fn, 150))
            except RecursionError as e:
                outcomes.append(type(e).__name__)
        assert outcomes[0] == outcomes[1], (room, outcomes)


def test_the_gil_is_kept_for_loop_free_code() -> None:
    # Issue 16's decision: releasing and taking back the GIL costs more than a
    # loop-free function's work; code with a loop may run long and releases it.
    short = compile_source("def f(a, b):\n    return a + b\n")
    long = compile_source("def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n")
    short(1, 2), long(10)
    [(_, _, short_releases, _, _, _, _)] = [n.fast for n in short.dispatcher._native.values()]
    [(_, _, long_releases, _, _, _, _)] = [n.fast for n in long.dispatcher._native.values()]
    assert not short_releases and long_releases


def _slot(kind, t=int, count=0):  # type: ignore[no-untyped-def]
    return (kind, count, t, None, 0, 0, 0)


def test_an_entry_refuses_what_does_not_fit() -> None:
    fall, deopt = object(), object()
    with pytest.raises(ValueError):
        Entry(65, fall, deopt, None)
    e = Entry(1, fall, deopt, None)
    assert e(1) is fall and e() is fall and e(1, 2) is fall
    ok = (_slot("i"),)
    with pytest.raises(ValueError):
        e.set([((_slot("x"),), ok, 0, 0, 0, 0, None)], [])  # no such kind
    with pytest.raises(ValueError):
        e.set([((_slot("u", object, 1), _slot("i")), ok, 0, 0, 0, 0, None)], [])  # a union argument
    with pytest.raises(ValueError):
        e.set([(ok, (_slot("A", np.ndarray, 0),), 0, 0, 0, 0, None)], [])  # an array of no dimensions
    with pytest.raises(ValueError):
        e.set([((("i", 0, "int", None, 0, 0, 0),), ok, 0, 0, 0, 0, None)], [])  # not a type
    with pytest.raises(ValueError):
        e.set([(ok, ok, 0, 0, 0, 0, None)] * 9, [])  # more signatures than it holds
    with pytest.raises(TypeError):
        e.set([(ok, ok)], [])
    with pytest.raises(ValueError):
        e.set([], [([], "x", 1, False)])  # a guard's namespace that is not a dict
    assert e(1) is fall  # nothing was set


@pytest.mark.parametrize(
    "source, args",
    [
        ("def f(v):\n    x, y, z = v\n    return math.sqrt(x * x + y * y + z * z)\n", ((1.0, 2.0, 3.0),)),
        ("def f(v, k):\n    return (v[0] * k, (v[1], v[0] < k), None)\n", ((2, 3.5), 4)),
        ("def f(a, k):\n    return a is None or k > 1\n", (None, 3)),
        ("def f(x):\n    return x * 2.0\n", (np.float64(1.5),)),
        ("def f(x):\n    return x + 1\n", (np.int64(41),)),
        ("def f(x, y):\n    return x and y\n", (np.bool_(True), np.bool_(False))),
        ("def f(x):\n    if x > 0:\n        return x\n    return None\n", (3,)),
        ("def f(a):\n    return a[0] + a[a.shape[0] - 1]\n", (np.arange(10.0),)),
        ("def f(a, i):\n    a[i, 1] = 7\n    return a[i, 1] + a[0, 0]\n", (np.zeros((3, 4), np.int64), 2)),
        ("def f(a):\n    return a[0] * 2\n", (np.arange(10)[::3],)),
    ],
    ids=["tuple", "nested tuple result", "None", "np.float64", "np.int64", "np.bool", "union result", "1-D array", "2-D array write", "strided array"],
)
def test_tuples_none_numpy_scalars_and_arrays_run_through_the_c_entry(source: str, args: tuple) -> None:  # type: ignore[type-arg]
    f = compile_source(source, np=np)
    check(f, *args)
    before = _fast_calls(f)
    check(f, *args)
    assert _fast_calls(f) == before + 1, f.explain()


@pytest.mark.parametrize(
    "source, args",
    [
        ("def f(x):\n    out = np.empty(3)\n    out[0] = x\n    out[1] = 2.0 * x\n    out[2] = 3.0 * x\n    return out\n", (1.5,)),
        ("def f(n):\n    a = np.zeros((n, 2), dtype=np.int32)\n    a[0, 1] = 5\n    return a.T\n", (3,)),
        ("def f(a):\n    return a\n", (np.arange(4.0),)),
        ("def f(a):\n    return a.T\n", (np.arange(6.0).reshape(3, 2),)),
        ("def f(a):\n    return a.T, a\n", (np.arange(6.0).reshape(2, 3),)),
        ("def f(n):\n    a = np.zeros(n)\n    return a, (a, 1)\n", (4,)),
        ("def f(n):\n    a = np.zeros(n)\n    b = np.ones(n)\n    return (b, a) if n > 2 else (a, b)\n", (3,)),
        ("def f(n):\n    if n > 2:\n        return np.zeros(n)\n    return None\n", (3,)),
    ],
    ids=["new array", "transposed new array", "argument", "view of an argument", "view and argument", "one array twice", "two arrays", "array or None"],
)
def test_array_results_are_built_in_c(source: str, args: tuple) -> None:  # type: ignore[type-arg]
    f = compile_source(source, np=np)
    check(f, *args)
    before = _fast_calls(f)
    result = f(*args)
    assert _fast_calls(f) == before + 1, f.explain()
    expected = f.py_func(*args)
    # Identity as in CPython: an argument comes back as itself, one array twice is
    # one object, and a view's base is the argument.
    flat = lambda r: [x for y in (r if isinstance(r, tuple) else (r,)) for x in (y if isinstance(y, tuple) else (y,))]  # noqa: E731
    got, want = flat(result), flat(expected)
    for i, x in enumerate(got):
        for j, y in enumerate(got):
            assert (x is y) == (want[i] is want[j])
        for a in args:
            assert (x is a) == (want[i] is a)
            if isinstance(x, np.ndarray) and isinstance(a, np.ndarray) and x is not a:
                assert np.shares_memory(x, a) == np.shares_memory(want[i], a)


def test_a_native_array_is_freed_with_its_result() -> None:
    from cuvil_bc.lower.runtime import lib

    f = compile_source("def f(n):\n    a = np.zeros((n, 2))\n    a[0, 0] = 1.0\n    return a, a.T\n", np=np)
    check(f, 5)
    before = lib.cb_live_allocations()
    kept = f(5)
    assert lib.cb_live_allocations() == before + 1
    kept[0][0, 1] = 9.0
    assert kept[1][1, 0] == 9.0 and kept[1].base is not None
    del kept
    import gc

    gc.collect()
    assert lib.cb_live_allocations() == before


def test_the_c_entry_tells_array_layouts_apart() -> None:
    # Each layout is its own signature (`array_type`): a read-only array, a strided one
    # and another dtype must not be taken for the signature compiled first.
    f = compile_source("def f(a):\n    a[0] = 1\n    return a[1]\n")
    check_with(f, lambda: (np.zeros(4),))
    readonly = np.zeros(4)
    readonly.flags.writeable = False
    check(f, readonly, native=False)  # CPython raises ValueError at the write
    check_with(f, lambda: (np.zeros(8)[::2],))
    check_with(f, lambda: (np.zeros(4, np.int64),))
    check_with(f, lambda: (np.zeros((2, 2)),), native=False)  # a row assignment
    assert len(f.signatures) == 3, f.signatures
    before = _fast_calls(f)
    for a in (np.zeros(4), np.zeros(8)[::2], np.zeros(4, np.int64)):
        check_with(f, lambda: (a.copy() if a.base is None else np.zeros(8)[::2],))
    assert _fast_calls(f) == before + 3


def test_a_parameter_named_like_the_entrys_locals() -> None:
    # The generated function's own locals must not shadow the parameters it passes on
    # to a deopt: r * k overflows int64, and CPython re-runs the call with r.
    f = compile_source("def f(r, k):\n    return r * k\n")
    for args in [(3, 4), (2**62, 4), (-(2**62), 8)]:
        check(f, *args)


def _functions(f):  # type: ignore[no-untyped-def]
    """The optimised module's functions by name: their text."""
    functions = {}
    for chunk in f.inspect_llvm().split("\ndefine ")[1:]:
        name = chunk.split("@", 1)[1].split("(", 1)[0].strip('"')
        functions[name] = chunk[: chunk.find("\n}")]
    return functions


def _calls(text: str, name: str) -> bool:
    return f"@{name}(" in text or f'@"{name}"(' in text


def test_a_body_is_compiled_once_not_again_inside_its_entries() -> None:
    # The cffi entry and the C entry's word entry called the function's body, and LLVM
    # inlined it into both: three copies of every loop to optimise and generate code
    # for (half as long again per compile). They call it now. And a module has one
    # entry: the words entry, which the dispatcher calls too, where the C entry takes
    # the signature (the second entry cost LLVM a tenth of its time).
    def escape(cr, ci):  # type: ignore[no-untyped-def]
        zr = zi = 0.0
        for n in range(100):
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            if zr * zr + zi * zi > 4.0:
                return n
        return 100

    f = cuvil_bc.compile(escape)
    assert f(0.1, 0.2) == escape(0.1, 0.2)
    assert native_ran(f)
    functions = _functions(f)
    body = next(n for n in functions if not n.endswith((".entry", ".words")))
    assert set(functions) == {body, body + ".words"}, list(functions)
    assert "fmul" in functions[body]
    assert "fmul" not in functions[body + ".words"], functions[body + ".words"]
    assert _calls(functions[body + ".words"], body)


def test_a_signature_the_c_entry_does_not_take_has_cffis_entry_only() -> None:
    # More parameters than the C entry passes words (ENTRY_WORDS): cffi calls it.
    from cuvil_bc.lower.entry import ENTRY_WORDS

    names = [f"a{k}" for k in range(ENTRY_WORDS + 1)]
    f = compile_source(f"def scaled({', '.join(names)}):\n    t = 0\n    for i in range(a0):\n        t += i * ({' + '.join(names)})\n    return t\n", "scaled")
    args = tuple(range(10, 10 + len(names)))
    assert f(*args) == f.py_func(*args)
    assert native_ran(f)
    functions = _functions(f)
    body = next(n for n in functions if not n.endswith((".entry", ".words")))
    assert set(functions) == {body, body + ".entry"}, list(functions)
    assert _calls(functions[body + ".entry"], body)


def test_the_generic_path_calls_the_words_entry_natively() -> None:
    # The dispatcher's generic path (`_call_generic`: first calls, on-stack replacement
    # entries) writes the flattened arguments into the words entry's words
    # (boxing.make_words_caller): an array's data pointer, a float and an int. An int
    # beyond int64 does not fit its word: the call falls back, with CPython's outcome.
    f = compile_source(
        "def scaled(a, x, n):\n    t = 0.0\n    for i in range(n):\n        t += a[i] * x\n    return t\n", "scaled"
    )
    a = np.arange(10.0)
    assert f(a, 1.5, 10) == f.py_func(a, 1.5, 10)  # compiled
    generic = f.dispatcher._call_generic
    native = f.stats["native_calls"]
    for n in (0, 3, 10):
        got, want = generic((a, 2.5, n), {}), f.py_func(a, 2.5, n)
        assert got == want and type(got) is type(want)
    assert f.stats["native_calls"] == native + 3  # all three ran natively
    for n in (11, 2**70):  # an IndexError (natively, then CPython's), a fallback
        with pytest.raises(IndexError) as raised:
            generic((a, 1.0, n), {})
        with pytest.raises(IndexError) as expected:
            f.py_func(a, 1.0, n)
        assert str(raised.value) == str(expected.value)
