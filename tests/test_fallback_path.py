"""Calls known to fall back (issue 16, "cheap fallback"): once a signature is known not to
compile, its calls run the function's own body in the compiled function's frame, after
one comparison that C answers from the arguments' types (`fastpath.py`, `Known` in
csrc/counter.c), instead of going through the dispatcher's generic path. Each case
compares with CPython, and checks which path ran from the dispatcher's counts."""

from __future__ import annotations

import asyncio
import traceback

import pytest

import cuvil_bc
from cuvil_bc.testing import check, compile_source, native_ran


class Point:
    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self.x, self.y) == (other.x, other.y)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.x!r}, {self.y!r})"


class Point3(Point):
    pass


SOURCE = """
def norm(p, scale=1.0):
    return (p.x * p.x + p.y * p.y) * scale

def pick(a, b):
    if a is None:
        raise ValueError("no a")
    return a[0] + b

def total(n):
    t = 0
    for i in range(n):
        t += i
    return t
"""


def _paths(f):  # type: ignore[no-untyped-def]
    return f.dispatcher.generic_calls, f.stats["interpreted_calls"], f.stats["native_calls"]


def test_known_signature_skips_the_generic_path_and_is_counted() -> None:
    f = compile_source(SOURCE, "norm")
    check(f, Point(3.0, 4.0), native=False)  # the generic path learns the signature
    generic, interpreted, _ = _paths(f)
    for k in range(5):
        check(f, Point(k, 2.0), native=False)
        check(f, Point(k, 2.0), 3.0, native=False)  # a default passed or not: the same key
    assert f.dispatcher.generic_calls == generic
    assert f.stats["interpreted_calls"] == interpreted + 10  # (check() calls the compiled function once)
    assert "(Point, float): interpreted: argument of type Point" in f.explain()


def test_a_subclass_is_another_signature() -> None:
    f = compile_source(SOURCE, "norm")
    check(f, Point(3.0, 4.0), native=False)
    generic = f.dispatcher.generic_calls
    check(f, Point3(1.0, 2.0), native=False)  # not the known Point: the generic path
    assert f.dispatcher.generic_calls == generic + 1
    check(f, Point3(1.0, 2.0), native=False)
    assert f.dispatcher.generic_calls == generic + 1


def test_new_signatures_still_compile_after_fallbacks() -> None:
    f = compile_source(SOURCE, "pick")
    check(f, [1, 2], 3, native=False)
    check(f, (1.5, 2.0), 3.0)  # a tuple and a float: compiles
    assert native_ran(f)
    check(f, [4], 1, native=False)
    check(f, (2.5, 1.0), 0.5)
    generic = f.dispatcher.generic_calls
    check(f, [4], 1, native=False)
    assert f.dispatcher.generic_calls == generic


def test_while_nothing_is_native_only_sampled_calls_are_tested() -> None:
    # Nothing of `pick` is native: a call of a known signature costs a plain call and
    # the sampler's truth, and only the sampled calls ask `Known` (fastpath.py). A new
    # signature between two samples runs the body, and a sample soon compiles it.
    from cuvil_bc.fastpath import SAMPLE_CAP

    f = compile_source(SOURCE, "pick")
    check(f, [1, 2], 3, native=False)
    calls = 5000
    before = f.stats["interpreted_calls"]
    for k in range(calls):
        assert f([k, 1], 2) == k + 2
    assert f.stats["interpreted_calls"] == before + calls
    tested = f.dispatcher._known.ticks
    assert calls // (4 * SAMPLE_CAP) < tested < calls // (SAMPLE_CAP // 4), tested  # ~1 in SAMPLE_CAP
    assert f.dispatcher.generic_calls == 1
    for k in range(50 * SAMPLE_CAP):
        args = ((1.5, float(k)), 3.0)
        assert f(*args) == f.py_func(*args)
        if native_ran(f):
            break
    assert native_ran(f), k
    check(f, (2.5, 1.0), 0.5)
    check(f, [4], 1, native=False)  # now each call is tested: one native signature
    generic = f.dispatcher.generic_calls
    tested = f.dispatcher._known.ticks
    for _ in range(3):
        check(f, [4], 1, native=False)
    assert f.dispatcher._known.ticks == tested + 3 and f.dispatcher.generic_calls == generic


def test_a_new_signature_right_after_a_fallback_compiles_at_once() -> None:
    f = compile_source(SOURCE, "pick")
    check(f, [1, 2], 3, native=False)
    check(f, (1.5, 2.0), 3.0)  # (a signature newly known to fail samples the next call)
    assert f.stats["native_calls"] == 1


@pytest.mark.parametrize("period", [2, 3, 4, 8])
def test_a_signature_at_a_fixed_phase_of_the_callers_pattern_compiles(period: int) -> None:
    # Gaps of fixed lengths (1, 2, 4, ...) sampled only even positions: a caller that
    # made its compilable call second of each pair never had it compiled, for good.
    f = compile_source(SOURCE, "pick")
    check(f, [1.0], 2.0, native=False)
    check(f, [1.0], 2.0, native=False)
    for rounds in range(2000):
        assert f((1.5,), 2.0) == 3.5  # (at positions 1, 1 + period, ... after the reset)
        for k in range(period - 1):
            assert f([float(k)], 2.0) == k + 2.0
        if native_ran(f):
            break
    assert native_ran(f), f.explain()


def test_a_signature_whose_global_became_compilable_again_compiles() -> None:
    # (tuple) went native, failed for a global of another type, and compiles again once
    # the global is back, though the calls of (list) keep the prefix sampling.
    f = compile_source("def g(a):\n    return a[0] * G[0]\n", "g", G=(2.0,))
    check(f, (1.5,))
    check(f, [1.0], native=False)
    f.py_func.__globals__["G"] = [3.0]
    check(f, (1.5,), native=False)
    check(f, [1.0], native=False)
    f.py_func.__globals__["G"] = (4.0,)
    for rounds in range(2000):
        assert f([1.0]) == 4.0
        assert f((1.5,)) == 6.0
        if f.signatures:
            break
    assert f.signatures and native_ran(f), f.explain()


def test_the_sampler_draws_gaps_whose_mean_doubles_up_to_its_cap() -> None:
    from cuvil_bc.counters import Sampler

    s = Sampler(16)
    sampled = [k for k in range(20000) if not s]
    gaps = [b - a for a, b in zip(sampled, sampled[1:])]
    assert sampled[0] == 0 and sampled[1] <= 3  # the first call, then a gap of mean 2
    assert all(1 <= g <= 2 * 16 - 1 for g in gaps)
    late = gaps[10:]
    assert 13 < sum(late) / len(late) < 19 and len(set(late)) > 10, late  # mean ~16, varied
    assert s.skipped == 20000 - len(sampled) and s.gap == 16
    s.reset()
    assert not s
    with pytest.raises(ValueError):
        Sampler(0)


def test_the_order_of_argument_types_matters() -> None:
    f = compile_source(SOURCE, "pick")
    check(f, [1, 2], 3, native=False)  # (list, int) known
    generic = f.dispatcher.generic_calls
    check(f, None, [1], native=False)  # (NoneType, list): raises, through the generic path
    assert f.dispatcher.generic_calls == generic + 1


def _frames(fn, *args):  # type: ignore[no-untyped-def]
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e), [(t.filename, t.name, t.lineno) for t in traceback.extract_tb(e.__traceback__)][1:]
    raise AssertionError("no exception")


def test_a_known_signatures_traceback_is_cpythons() -> None:
    f = compile_source(SOURCE, "pick")
    for _ in range(2):  # the generic path, then the known signature
        assert _frames(f, [], 1) == _frames(f.py_func, [], 1)  # IndexError in the body
    generic = f.dispatcher.generic_calls
    assert _frames(f, [], 1) == _frames(f.py_func, [], 1)
    assert f.dispatcher.generic_calls == generic


def test_a_rebound_global_is_seen_by_a_known_signature() -> None:
    f = compile_source("def g(p):\n    return SCALE * p.x\n", "g", SCALE=2.0)
    check(f, Point(1.0, 0.0), native=False)
    check(f, Point(1.0, 0.0), native=False)
    f.py_func.__globals__["SCALE"] = 5.0
    assert f(Point(1.0, 0.0)) == 5.0


def test_a_compiled_function_with_a_known_signature_still_compiles_scalars() -> None:
    f = compile_source(SOURCE, "total")
    check(f, 5)  # an int: native
    assert native_ran(f)
    check(f, 2.5, native=False)  # range(float) raises TypeError in CPython
    check(f, 2.5, native=False)
    check(f, 7)
    assert native_ran(f)


def gen(n):  # type: ignore[no-untyped-def]
    for i in range(n):
        yield i * 2


async def coro(x):  # type: ignore[no-untyped-def]
    return x + 1


def keyword_only(a, *, b=2):  # type: ignore[no-untyped-def]
    return a + b


def variadic(*xs):  # type: ignore[no-untyped-def]
    return sum(xs)


def positional_only(a, b=3, /):  # type: ignore[no-untyped-def]
    return a * b


def test_functions_the_prefix_does_not_fit_behave_as_cpythons() -> None:
    g = cuvil_bc.compile(gen)
    assert list(g(3)) == [0, 2, 4] and list(g(2)) == [0, 2]
    c = cuvil_bc.compile(coro)
    assert asyncio.run(c(1)) == 2
    k = cuvil_bc.compile(keyword_only)
    assert k(1) == 3 and k(1, b=5) == 6
    with pytest.raises(TypeError, match=r"keyword_only\(\) takes 1 positional argument but 2 were given"):
        k(1, 2)
    v = cuvil_bc.compile(variadic)
    assert v(1, 2, 3) == 6 and v() == 0
    for f in (g, c, k, v):
        assert f.stats["interpreted_calls"] > 0


def test_positional_only_parameters_compile() -> None:
    p = cuvil_bc.compile(positional_only)
    check(p, 2)
    check(p, 2, 5)
    assert native_ran(p)
    with pytest.raises(TypeError, match="positional-only arguments passed as keyword"):
        p(a=1)


def test_a_dropped_compiled_function_is_freed() -> None:
    # The prefix's constants live in a code object, which the garbage collector does
    # not see: one that reached the dispatcher kept it, and the function, alive.
    import gc
    import weakref

    f = compile_source(SOURCE, "pick")
    check(f, (1.5, 2.0), 3.0)
    check(f, [1], 2, native=False)
    check(f, [1], 2, native=False)  # a known signature, and a native one
    gone = weakref.ref(f.dispatcher), weakref.ref(f)
    del f
    gc.collect()
    assert gone[0]() is None and gone[1]() is None


def test_a_generator_function_keeps_its_kind_while_a_tool_observes() -> None:
    # Its code went from the generic path's (a plain function's) to the generator's own
    # and back when a tracer started and stopped: Python 3.13 deprecates giving a
    # function code of another kind (a DeprecationWarning, an error under -W error).
    import sys
    import warnings

    g = cuvil_bc.compile(gen)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(g(2)) == [0, 2]
        sys.settrace(lambda *a: None)
        try:
            assert list(g(3)) == [0, 2, 4]
        finally:
            sys.settrace(None)
        assert list(g(1)) == [0]
    assert g.__code__.co_flags & 0x20 == 0  # the generic path's code, all along


# -- found by a review of the prefix (each failed before its fix) ----------------------


def test_a_parameter_that_an_inner_function_reads() -> None:
    # Such a parameter is a cell before the prefix runs: the prefix read the cell, so
    # a default was never filled in and the first call saw a cell.
    f = compile_source("def f(rows, col=0):\n    return sorted(rows, key=lambda r: r[col])\n")
    for _ in range(3):
        check(f, [(2, "b"), (1, "a")], native=False)
        check(f, [(2, "b"), (1, "a")], 1, native=False)
    g = compile_source("def g(n):\n    return (lambda: n + 1)()\n", "g")
    for _ in range(3):
        check(g, 41, native=False)


@pytest.mark.parametrize("name", ["ENTRY", "MISSING", "KNOWN", "DEFAULT_0", "GENERIC", "ID", "__cb_r"])
def test_parameters_named_like_the_prefixs_helpers(name: str) -> None:
    f = compile_source(f"def f(x, {name}=1):\n    return x + {name}\n")
    for args in [(2,), (2.5, 2.0), ("s",), ("s", "t")]:
        check(f, *args, native=False)
        check(f, *args, native=False)


def test_more_parameters_than_the_c_entry_takes() -> None:
    names = [f"p{k}" for k in range(70)]
    f = compile_source(f"def f({', '.join(names)}):\n    return {' + '.join(names)}\n")
    check(f, *range(70), native=False)


def test_a_traceback_after_the_original_gets_new_defaults() -> None:
    f = compile_source("def div(a, b=0):\n    return a / b\n", "div")
    assert _frames(f, 1) == _frames(f.py_func, 1)
    f.py_func.__defaults__ = (0.0,)
    for _ in range(2):
        assert _frames(f, 1.0) == _frames(f.py_func, 1.0)


def test_a_nested_recursive_function_with_a_default_is_freed() -> None:
    import gc
    import weakref

    def make():  # type: ignore[no-untyped-def]
        def fact(n, acc=1):  # type: ignore[no-untyped-def]
            return acc if n <= 1 else fact(n - 1, acc * n)

        fact = cuvil_bc.compile(fact)
        assert fact(5) == 120
        return weakref.ref(fact)

    refs = [make() for _ in range(5)]
    gc.collect()
    assert not any(r() for r in refs)


def test_an_int_beyond_int64_leaves_no_trace_in_the_functions_exception() -> None:
    # The generic path ran the interpreted call inside its handler of cffi's
    # OverflowError, which became the __context__ of the function's own exception
    # ("During handling of the above exception..." in its traceback).
    import cuvil_bc

    def divide(x, d):  # type: ignore[no-untyped-def]
        t = 0
        for i in range(50):
            t += x // (d - i % 2)
        return t

    f = cuvil_bc.compile(divide)
    assert f(5, 3) == divide(5, 3)
    for fn in (divide, f):
        try:
            fn(2**64, 1)
        except ZeroDivisionError as e:
            assert e.__context__ is None, repr(e.__context__)
        else:
            raise AssertionError("no ZeroDivisionError")


RECURSIVE = """
def f(n, x):
    y = x * x  # beyond int64 for x = 2**40 (native code hands the call back)
    if n == 0:
        return y
    return f(n - 1, x) + 1
"""


@pytest.mark.parametrize("x", [2**40, 2**70], ids=["deopts", "beyond int64"])
def test_a_recursion_that_runs_interpreted_at_every_level_goes_as_deep_as_cpython(x: int) -> None:
    # A call the dispatcher runs interpreted from its start runs in the function's own
    # frame (the prefix's): it used to run in the dispatcher's frames, which counted
    # against the recursion limit, and such a recursion stopped at ~150-200 levels.
    import sys

    f = compile_source(RECURSIVE)
    check(f, 3, 5)
    assert native_ran(f)
    depth = sys.getrecursionlimit() - 100 - len(traceback.extract_stack())
    expected = f.py_func(depth, x)  # CPython alone (its global `f` is still the original)
    f.py_func.__globals__["f"] = f  # (each level calls the compiled function)
    before = f.stats["interpreted_calls"]
    assert f(depth, x) == expected
    assert f.stats["interpreted_calls"] - before == depth + 1  # every level fell back or deopted


def test_a_warning_of_the_callers_line_from_a_call_the_generic_path_runs() -> None:
    # stacklevel=2 names the caller's line, as in CPython, also for a first call (the
    # generic path's, before the signature is known to fall back): it named
    # dispatcher.py.
    import warnings

    f = compile_source("def f(p):\n    warnings.warn('old', DeprecationWarning, stacklevel=2)\n    return p.x\n", warnings=warnings)
    for call in (f.py_func, f, f):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            line = sys_line() + 1
            call(Point(1.0, 2.0))
        assert [(w.filename, w.lineno) for w in seen] == [(__file__, line)]
    generic, interpreted, _ = _paths(f)
    assert generic == 1 and interpreted == 2  # the first call took the generic path


def sys_line() -> int:
    import sys

    return sys._getframe(1).f_lineno


def test_the_functions_frame_has_a_line_while_the_dispatcher_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # A signal handler or another thread may read the frames while the dispatcher
    # compiles or finishes a deopt: the function's frame has a line there (the one
    # after its def), not None (which inspect.stack() raises on).
    import inspect

    from cuvil_bc.compiler import COMPILER
    from cuvil_bc.dispatcher import Dispatcher

    seen = []

    def looking(method):  # type: ignore[no-untyped-def]
        def look(*args, **kwargs):  # type: ignore[no-untyped-def]
            seen.extend((method.__name__, fi.lineno) for fi in inspect.stack() if fi.function == "f")
            return method(*args, **kwargs)

        return look

    monkeypatch.setattr(COMPILER, "compile", looking(COMPILER.compile))
    monkeypatch.setattr(Dispatcher, "_deopt", looking(Dispatcher._deopt))
    f = compile_source("def f(n, x):\n    y = x * x\n    return y + n\n")
    check(f, 3, 5)  # compiles
    check(f, 3, 2**40)  # native code hands the call back
    assert native_ran(f)
    assert seen == [("compile", 2), ("_deopt", 2)], seen


def test_a_deep_recursion_through_the_generic_paths_own_native_call() -> None:
    # Signatures beyond the C entry's eight are called by the generic path (cffi): a
    # deopt there runs the call in the function's frame too.
    import sys

    f = compile_source("def f(n, x, s):\n    y = x * x + s\n    if n == 0:\n        return y\n    return f(n - 1, x, s) + 1\n")
    f.py_func.__globals__["f"] = f
    values = (True, 1.5, 3)
    for a in values:
        for b in values:
            check(f, 1, a, b)  # (int, int, int), the ninth, last
    assert len(f.signatures) == 9
    depth = sys.getrecursionlimit() - 100 - len(traceback.extract_stack())
    namespace = f.py_func.__globals__
    namespace["f"] = f.py_func
    expected = f.py_func(depth, 2**40, 1)  # CPython alone
    namespace["f"] = f
    before = f.stats["deopts"]
    assert f(depth, 2**40, 1) == expected
    assert f.stats["deopts"] - before == depth + 1
