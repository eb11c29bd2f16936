"""Constructs that once fell back or misbehaved: each must now run natively and
exactly as CPython does (the equivalence files check the values more broadly)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import pytest
from hypothesis import strategies as st

import cuvil_bc
from cuvil_bc.testing import EDGE_INTS, INT64_MAX, INT64_MIN, check, compile_source, equivalent, native_ran, numbers

from .plain_functions import assert_with_message, bare_assert


def neg_const_power(a):
    return a ** -2


def powmod(a, b, m):
    return pow(a, b, m)


def float_in_int_tuple(x):
    return x in (1, 2, 3, None)


def maybe(x):
    if x > 0:
        return x
    return None


def narrowed_result(x):
    r = maybe(x)
    if r is None:
        return -1
    return r * 2


def optional_arg(x, y=None):
    if y is None:
        y = 10
    return x * y


def conditional_none(x):
    return None if x is None else x + 1


def runaway(n):
    return runaway(n + 1)


def runaway_used(n, x):
    y = x * x
    return runaway_used(n + 1, y) + 1


def runaway_tested(n, x):
    if runaway_tested(n + 1, x):
        return 1
    return 2


def runaway_negated(n, x):
    return -runaway_negated(n + 1, x)


def runaway_in_tuple(n, x):
    return (runaway_in_tuple(n + 1, x), n)


def runaway_compared(n, x):
    return runaway_compared(n + 1, x) < 3


def doubled(v):
    return v * 2


def runaway_passed_on(n, x):
    return doubled(runaway_passed_on(n + 1, x))


def runaway_chained(n, x):
    return 1 < runaway_chained(n + 1, x) < 3


def runaway_tested_then_raise(n, x):
    if runaway_tested_then_raise(n + 1, x):
        raise ValueError("a")
    raise TypeError("b")


def runaway_both_arms(n, x):
    return runaway_both_arms(n + 1, x) if runaway_both_arms(n + 2, x) else x


def runaway_iterated(n, x):
    for i in range(runaway_iterated(n + 1, x)):
        x = x + i
    raise ValueError("done")


def runaway_while(n, x):
    while runaway_while(n + 1, x) > x:
        x = x + 1.0
    raise ValueError("done")


def test_negative_constant_exponent() -> None:
    d = cuvil_bc.compile(neg_const_power)
    for a in (3, 0, -2, True, 2**40, 2.5):
        check(d, a)
    assert native_ran(d)


def test_three_argument_pow() -> None:
    d = cuvil_bc.compile(powmod)
    equivalent(d, st.tuples(st.sampled_from(EDGE_INTS), st.integers(-3, 200), st.sampled_from(EDGE_INTS)), max_examples=300)
    for args in [(3, 5, 7), (3, 5, -7), (2, 10, 1), (2, 10, -1), (5, -1, 7), (3, 5, 0), (-3, 2**62, 10**9 + 7), (3, 5, 2**40)]:
        check(d, *args)
    assert native_ran(d)


def test_assert_and_raise_with_messages() -> None:
    d = cuvil_bc.compile(assert_with_message)
    for x in (1, 3, 101, 100):
        check(d, x)
    assert "interpreted:" not in d.explain() and native_ran(d), d.explain()
    d = cuvil_bc.compile(bare_assert)
    for x in (0, 1, 0.0, -2.5, False):
        check(d, x)
    assert "interpreted:" not in d.explain() and native_ran(d), d.explain()


def test_float_in_tuple_of_ints() -> None:
    d = cuvil_bc.compile(float_in_int_tuple)
    for x in (1, 2.0, 2.5, math.nan, True, 3):
        check(d, x)
    assert "interpreted" not in d.explain()


@pytest.mark.parametrize("fn, argsets", [
    (narrowed_result, [(3,), (-3,), (0,)]),
    (optional_arg, [(2,), (2, 3), (2, 2.5), (2, None), (-1, True)]),
    (conditional_none, [(None,), (4,), (1.5,)]),
])
def test_none_tests_narrow_types(fn, argsets) -> None:  # type: ignore[no-untyped-def]
    d = cuvil_bc.compile(fn)
    for args in argsets:
        check(d, *args)
    assert "interpreted" not in d.explain(), d.explain()


def test_runaway_recursion_raises_recursion_error() -> None:
    d = cuvil_bc.compile(runaway)
    check(d, 0)
    assert d.stats["deopts"] == 1


@pytest.mark.parametrize(
    "fn",
    [
        runaway_used, runaway_tested, runaway_negated, runaway_in_tuple, runaway_compared, runaway_passed_on,
        runaway_chained, runaway_tested_then_raise, runaway_both_arms, runaway_iterated, runaway_while,
    ],
)  # fmt: skip
def test_the_value_of_a_call_that_never_returns_is_never_computed(fn) -> None:  # type: ignore[no-untyped-def]
    # The call's type is bottom (it has no value: it recurses until RecursionError).
    # Lowering an operation on it, or a branch or a loop that it decides, failed with
    # an internal compiler error ("bottom"), which fell back with a RuntimeWarning that
    # CPython does not give. (In runaway_tested the call's type is int: it returns.)
    d = cuvil_bc.compile(fn)
    check(d, 0, 1.5)
    assert d.stats["deopts"] == 1


def calls_runaway(n):
    return runaway(n) + 1


def test_a_call_of_an_endless_recursion_is_refused_for_what_it_is() -> None:
    # Its reason said "which always raises" of a function that never raises itself.
    d = cuvil_bc.compile(calls_runaway)
    check(d, 0, native=False)
    assert "never returns (it always raises, or recurses without end)" in d.explain()


def test_unresolvable_external_is_a_compile_error() -> None:
    import llvmlite.binding as llvm

    from cuvil_bc.lower.jit import _check_externals

    mod = llvm.parse_assembly("declare double @no_such_function_anywhere(double)\n")
    with pytest.raises(cuvil_bc.CompileError, match="no_such_function_anywhere"):
        _check_externals(mod)


def test_drawn_arithmetic_mix() -> None:
    def f(a, b):
        t = 0
        for i in range(3):
            t += a * i - b
        return t, a // (b or 1), t if t > a else None

    equivalent(cuvil_bc.compile(f), st.tuples(numbers(), numbers()), max_examples=300)


def square_of_third(y):
    return (y / 3) ** 2


def test_float_square_calls_libm_pow_like_cpython() -> None:
    # LLVM turns pow(x, 2.0) into x * x, which differs from glibc's pow (what CPython
    # calls) in the last bit for this input; libm calls are marked nobuiltin.
    d = cuvil_bc.compile(square_of_third)
    check(d, 594599730580211.0)
    equivalent(d, st.tuples(st.floats(allow_nan=False, min_value=-1e200, max_value=1e200)), max_examples=500)
    assert native_ran(d)


def sqrt_plus_pi(x):
    return math.sqrt(x) + math.pi


def test_rebinding_a_math_function_is_noticed() -> None:
    # math.sqrt is resolved at compile time; a guard on the module attribute makes a
    # later rebinding (monkeypatching) take effect exactly as in CPython.
    d = cuvil_bc.compile(sqrt_plus_pi)
    check(d, 4.0)
    original = math.sqrt
    math.sqrt = lambda x: -1.0  # type: ignore[assignment]
    try:
        check(d, 4.0)
    finally:
        math.sqrt = original
    check(d, 4.0)
    assert native_ran(d)


def scaled_default(x, k=2):
    return x * k


def test_new_defaults_are_used() -> None:
    d = cuvil_bc.compile(scaled_default)
    check(d, 3)
    scaled_default.__defaults__ = (5.5,)
    try:
        check(d, 3)  # CPython now binds k=5.5
        assert d(3) == 16.5
    finally:
        scaled_default.__defaults__ = (2,)
    check(d, 3)
    assert d(3) == 6 and native_ran(d)


def test_fast_path_taken_when_a_builtin_is_guarded() -> None:
    # A function using `range` carries a guard "range is not shadowed by a global".
    # The fast path once tested it against the wrong sentinel, so every call took
    # the slow generic path (correct results, 6x the call cost).
    f = cuvil_bc.compile(_uses_range)
    assert f(5) == _uses_range(5)
    before = f.dispatcher.generic_calls
    for n in range(10):
        assert f(n) == _uses_range(n)
    assert f.dispatcher.generic_calls == before


def _uses_range(n):
    s = 0
    for i in range(n):
        s += abs(i - 3)
    return s


@pytest.mark.parametrize("c", [0, 1, -1, 2, -2, 3, -3, 7, 2**31, -(2**31), 2**62, -(2**62), 2**63 - 1, -(2**63)])
def test_multiply_by_constant_at_the_int64_limits(c: int) -> None:
    # x * constant is guarded by a range test on x (lower/numeric.mul_by_constant), not
    # by the multiply's overflow flag: every boundary must match CPython's big ints.
    f = compile_source(f"def f(x):\n    return x * ({c}), ({c}) * x\n")
    limits = [INT64_MIN, INT64_MAX] + ([INT64_MAX // c, INT64_MIN // c] if c else [])
    xs = {0, 1, -1, 2, -2, 3, *EDGE_INTS}
    for base in limits:
        xs.update({base - 1, base, base + 1})
    for x in sorted(v for v in xs if INT64_MIN <= v <= INT64_MAX):
        check(f, x)


def test_int_divisor_guard_in_a_block_that_starts_with_phis() -> None:
    """The zero-divisor test moved to a block's entry went before the block's phis,
    which LLVM rejects: the function ran interpreted (found while adding the bounds
    guards of issue 4)."""
    from cuvil_bc.testing import check, compile_source, native_ran

    f = compile_source(
        """
def f(a, b):
    s = 0
    for i in range(a):
        if i % 3 == 0:
            x = 1
        else:
            x = 2
        s += x + i // b
    return s
"""
    )
    check(f, 10, 3)
    check(f, 10, 0)
    assert native_ran(f)


def test_union_values_handed_to_several_phis_at_once() -> None:
    """Converting a branch's value for a successor's phi (here a ``float | int`` local
    of the inner loop for the outer loop's phis) adds blocks; the phis took their
    values from the block before the later conversions, which LLVM rejects ("PHI node
    entries do not match predecessors"): the function ran interpreted with an
    internal-error warning (found by a random program test)."""
    import numpy as np

    f = compile_source(
        """
def f(a, b, x):
    s = 0
    for i in range(len(a)):
        for j in range(len(b)):
            v = max(2.5, b[j] + x)
            a[i] = v
    return s
"""
    )
    for a, b in ((np.zeros(3), np.arange(3)), (np.zeros(2, dtype=np.int64), np.arange(4)), (np.zeros(1), np.arange(0))):
        check(f, a, b, 1)
        check(f, a, b, -5)
    assert native_ran(f)


def test_each_global_guard_is_tested_once_whatever_the_signatures() -> None:
    # Every specialisation brings its own Guard objects for the same globals, which
    # compare by identity: the dispatcher kept them all, so a function compiled for
    # many signatures tested the same global dozens of times a call.
    f = compile_source("def f(x):\n    return abs(x) + max(x, 0) + SCALE\n", SCALE=2)
    for x in (3, -2.5, True, (1,)[0]):
        check(f, x)
    first = len(f.dispatcher._guards)
    for x in (np.float64(1.5), np.int64(-3)):
        check(f, x)
    names = [(id(g.namespace), g.name) for g in f.dispatcher._guards]
    assert len(names) == len(set(names)) and len(names) == first, names


@pytest.mark.parametrize(
    "statement",
    [
        "float(x << 1100)",  # the float conversion of an int beyond a float's range
        "math.isinf(x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x * x)",
        "math.copysign(1.0, x << 1100)",
        "math.fabs(x << 1100)",
        "float(1 << 1100)",
        "(x << 1100) + 0.5",  # (an older bug: the addition converts the int)
        "(x << 1100) / 2",  # int true division converts too
        "(x << 1100) % 2.0",
    ],
)
def test_an_unused_conversion_of_a_huge_int_still_raises(statement: str) -> None:
    # Dead-code elimination dropped these: the int op cannot raise in CPython (it makes
    # a big int, where native code would deoptimise), so it went, and the conversion
    # of its result to a float, which raises OverflowError, went with it.
    f = compile_source(f"def f(x):\n    {statement}\n    return x\n", math=math)
    for x in (1, 2**62, 0, -1):
        check(f, x)


@pytest.mark.parametrize(
    "made",
    ["(inf, 1) if k else (2.0, 2)", "(complex(inf, 1.0), 1) if k else (complex(2.0, 1.0), 2)", "(-inf, k) if k else (nan, 0)"],
)
def test_nan_signs_of_doubles_inside_tuple_constants(made: str) -> None:
    # A helper's review found it: only a float constant on its own was hidden from
    # LLVM's folding (Emitter.float_constant); inside a tuple constant, the two
    # constants met in a phi and LLVM folded ``inf - inf`` to +nan where the processor
    # (and so CPython) gives -nan. The sign shows through copysign.
    f = compile_source(
        f"def f(k):\n    t = {made}\n    c = t[0]\n    d = c - c\n"
        "    return math.copysign(1.0, d.real), math.copysign(1.0, (c * 0).real)\n",
        inf=math.inf, nan=math.nan,
    )
    for k in (True, False, 1, 0):
        check(f, k)
    assert native_ran(f)


RESULTS_PYTHON_CANNOT_GET = (
    "def f(n):\n    return range(n)\n",
    "def f(n):\n    return (n, range(n))\n",
    "def f(n):\n    return ValueError(n)\n",
    "def f(n):\n    r = range(n) if n > 2 else range(1)\n    return r\n",
)


@pytest.mark.parametrize("src", RESULTS_PYTHON_CANNOT_GET)
def test_results_that_cannot_be_boxed_run_interpreted(src: str) -> None:
    # These compiled natively and returned None in their place (the boxing of a type it
    # knew nothing of): now the call to Python is refused, and CPython computes it.
    f = compile_source(src)
    for n in (0, 3, 5):
        for _ in range(2):
            assert repr(f(n)) == repr(f.py_func(n))
    assert not native_ran(f) and "to Python" in f.explain()


def test_a_callee_returning_a_range_still_serves_a_native_caller() -> None:
    f = compile_source(
        "def rng(n):\n    return range(1, n, 2)\n\n"
        "def f(n):\n    s = 0\n    for i in rng(n):\n        s += i\n    return s\n"
    )
    for n in (0, 1, 6, 101):
        check(f, n)


TUPLE_ITEMS_OF_NEW_ARRAYS = (
    "def f(a):\n    x = np.zeros(3)\n    y = a.copy()\n    t = (x, y)\n    t[0][0] = 7.0\n    return t\n",
    "def f(a):\n    x = np.zeros(3)\n    y = a.copy()\n    t = (x, y)\n    return t[0]\n",
    "def f(a):\n    x = np.ones(3)\n    y = a.copy()\n    t = (x, y)\n    return t[1][0] + t[0][1]\n",
    "def f(a):\n    x = a.copy()\n    t = (x, 1)\n    s = 0.0\n    for i in range(len(a)):\n        s += t[0][i]\n    return s\n",
)


@pytest.mark.parametrize("src", TUPLE_ITEMS_OF_NEW_ARRAYS)
def test_an_indexed_tuple_item_borrows_its_array(src: str) -> None:
    # A helper's review found it: ``t[0]`` of a tuple holding natively allocated
    # arrays was taken for an array view, which owns a reference, but it is lowered
    # as the tuple's item, which takes none: the ownership plan released it once too
    # often, freeing memory the tuple (or the caller) still used (garbage results,
    # heap corruption). It borrows from the tuple, as an unpacked item does.
    from cuvil_bc.lower.runtime import lib

    f = compile_source(src, np=np)
    before = lib.cb_live_allocations()
    for _ in range(30):
        check(f, np.arange(4.0))
    assert native_ran(f)
    assert lib.cb_live_allocations() == before


@pytest.mark.parametrize("result", ["keep", "di", "dj"])
def test_a_local_read_after_loops_with_breaks_is_typed_at_the_fixpoint(result: str) -> None:
    # Typing refused "a local variable read where it is never bound" for `keep` after
    # four nested loops with breaks: in an early round of the fixpoint the read's
    # value was only the unbound one (the loops' values had not come in yet), and it
    # raised there instead of waiting. Such a read now gives no value until one comes.
    src = (
        "def f(mask, out):\n"
        "    h, w = mask.shape\n"
        "    for i in range(1, h - 1):\n"
        "        for j in range(1, w - 1):\n"
        "            keep = 1\n"
        "            for di in range(-1, 2):\n"
        "                for dj in range(-1, 2):\n"
        "                    if mask[i + di, j + dj] == 0:\n"
        "                        keep = 0\n"
        "                        break\n"
        "                if keep == 0:\n"
        "                    break\n"
        "            out[i, j] = keep\n"
        f"    return {result}\n"
    )
    f = compile_source(src)
    rng = np.random.default_rng(1)
    for shape in [(4, 5), (2, 6), (6, 2), (3, 3)]:
        mask = (rng.random(shape) > 0.2).astype(np.uint8)
        check(f, mask, np.zeros_like(mask))
    assert "interpreted" not in f.explain(), f.explain()


UNDERFLOWS = (
    "def f(a):\n    s = 0.0\n    for i in range(a.shape[0]):\n        s += a[i] * 1e-300\n    return s\n",
    "def f(a, out):\n    for i in range(a.shape[0]):\n        out[i] = a[i] * 1e-20\n    return out\n",  # a cast into float32
    "def g(a):\n    return a[0] * a[1]\n\ndef f(a):\n    t = 0.0\n    for i in range(3):\n        t += g(a)\n    return t\n",  # a native callee's
)


@pytest.mark.parametrize("src", UNDERFLOWS)
@pytest.mark.parametrize("mode", ["warn", "raise", "ignore", "print"])
def test_numpy_underflows_are_reported_under_its_error_state(src: str, mode: str) -> None:
    # np.seterr(under=...) or np.errstate: NumPy then warns about (or raises at) an
    # underflow of scalar arithmetic or of a cast into float32. Native code never
    # looked: under "raise" CPython raised FloatingPointError and the compiled call
    # returned a value. Such calls now run interpreted while NumPy's state asks for
    # underflows, and natively again once it ignores them.
    f = compile_source(src, np=np)
    a = np.array([1e-200, 1e-200, 3.0])
    args = (a, np.zeros(3, dtype=np.float32)) if "out" in src else (a,)
    check(f, *args)
    with np.errstate(under=mode):
        check(f, *args, native=mode == "ignore")
    before = f.stats["native_calls"]
    check(f, *args)
    assert f.stats["native_calls"] > before  # (ignored again: native again)


def test_an_index_that_is_a_union_of_numpy_ints() -> None:
    # Union-find over an int32 edge list: ``a = src[e]`` (np.int32), then ``a =
    # parent[a]`` (np.int64): the index is an np.int32 | np.int64, which typing took
    # and lowering used as one word (an internal compiler error, found by the corpus's
    # connected_components). Each member holds the int it is: picked by the tag.
    f = compile_source(
        "def f(src, parent, m):\n"
        "    out = 0\n"
        "    for e in range(len(src)):\n"
        "        a = src[e]\n"
        "        while parent[a] != a:\n"
        "            a = parent[a]\n"
        "        out += m[a, a] + m[(a, 0)]\n"
        "    return out\n"
    )
    parent = np.array([0, 0, 1, 2, 4, 4], dtype=np.int64)
    m = np.arange(36).reshape(6, 6)
    check(f, np.array([3, 5, 2, 0], dtype=np.int32), parent, m)
    check(f, np.array([3, -1], dtype=np.int32), parent, m)
    check(f, np.array([7], dtype=np.int32), parent, m)  # IndexError
    assert native_ran(f)


def test_constant_folding_does_not_run_a_deprecated_operator() -> None:
    """``~`` of a bool warns (DeprecationWarning, 3.12 on) on every run. Folding
    ``~(1 >= -5)`` ran it once, at compile time, from constfold.py: later calls did
    not warn at all (found by a helper's expression fuzzer)."""
    f = compile_source("def f(x):\n    return x + ~(1 >= -5)\n")
    for _ in range(3):
        check(f, 3, native=False)


def test_a_global_array_is_refused_cleanly() -> None:
    """Reading a NumPy array held in a global was an internal compiler error (a
    RuntimeWarning, 'NoneType' object is not iterable): it is a construct that is not
    supported, said as such."""
    import warnings

    import numpy as np

    import cuvil_bc
    from cuvil_bc.errors import CompileError
    from cuvil_bc.testing import compile_source

    source = "def f(n):\n    s = 0.0\n    for i in range(n):\n        s += TABLE[i]\n    return s\n"
    f = compile_source(source, TABLE=np.arange(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (an internal error warns)
        assert f(5) == 10.0
    assert "a NumPy array held in a global" in f.explain()
    strict = cuvil_bc.compile(f.py_func, strict=True)
    with pytest.raises(CompileError, match="a NumPy array held in a global"):
        strict(5)


@pytest.mark.parametrize(
    "setup, call, expected",
    [
        # The NumPy rows were found by attribute: with np.float32 bound to np.float64,
        # np.float64 got the float32 row, and the compiled result was a float32.
        ("import numpy as np\nnp.float32 = np.float64\n", "np.float32(x) / 3", "np.float64(2.6666666666666665)"),
        # With math.sqrt bound to math.cbrt before cuvil_bc was imported, two rows
        # claimed math.cbrt: importing the compiler failed (an AssertionError).
        ("import math\nmath.sqrt = math.cbrt\n", "math.sqrt(x)", "2.0"),
    ],
)
def test_a_rebound_library_function_is_what_it_is_bound_to(setup: str, call: str, expected: str) -> None:
    import subprocess
    import sys

    program = setup + f"import cuvil_bc\n\n@cuvil_bc.compile\ndef f(x):\n    return {call}\n\nprint(repr(f(8.0)), repr(f.py_func(8.0)), f.signatures)\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [expected, expected, "['(float)']"], done.stdout


def test_a_signal_handlers_exception_during_a_compile_is_the_programs() -> None:
    # Found attacking on-stack replacement: an exception raised by the program's
    # signal handler while the dispatcher compiled (on the first call) was taken for
    # an internal compiler error: swallowed with a warning, the function given up for
    # good, the loop run interpreted to its end. It propagates now, and the next call
    # compiles again.
    import signal
    import warnings

    class Alarm(Exception):
        pass

    def handler(signum, frame):  # type: ignore[no-untyped-def]
        raise Alarm("boom")

    def spin(n):  # type: ignore[no-untyped-def]
        s = 0
        for i in range(n):
            s = (s + i * 7) % 1000003
        return s

    import os

    from cuvil_bc.dispatcher import Dispatcher

    fn = cuvil_bc.compile(spin, cache=False)
    previous = signal.signal(signal.SIGALRM, handler)
    load = Dispatcher._load_or_compile
    try:
        with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
            warnings.simplefilter("error")  # (an internal-error warning would be one)

            def signalled(self, argtypes):  # type: ignore[no-untyped-def]
                os.kill(os.getpid(), signal.SIGALRM)  # (its handler runs in the compile)
                return load(self, argtypes)

            patch.setattr(Dispatcher, "_load_or_compile", signalled)
            with pytest.raises(Alarm):
                fn(10**6)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert fn(1000) == spin(1000)
    assert fn.stats["native_calls"] >= 1  # compiled at the next call, not given up


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    for i1 in range(4):\n        for i2 in range(0):\n            return i1\n",
        "def f(n):\n    for i1 in range(4):\n        for i2 in range(n):\n            return i1 * 10 + i2\n    return -1\n",
        "def f(n):\n    t = 0\n    for i1 in range(3):\n        for i2 in range(n):\n            t += i1\n            break\n    return t\n",
    ],
)
def test_a_loop_around_a_for_whose_body_only_leaves_is_not_unrolled_into_a_shared_body(source: str) -> None:
    # (found by the fuzzer, seed 7120611: unrolling the outer loop gave each copy's
    # inner ``for`` the one block its body only leaves by, which a for-iteration's body
    # may not share; LLVM refused the module: an internal error, the function ran
    # interpreted. Such a loop is no longer unrolled.)
    fn = compile_source(source)
    argsets = [()] if "f()" in source else [(0,), (1,), (2,), (5,)]
    for args in argsets:
        check(fn, *args)
    assert native_ran(fn), fn.explain()


TUPLE_ITEM_AT_RESUME = """
import gc, sys
import numpy as np
import cuvil_bc
from cuvil_bc._runtime import lib


def f(n, k):
    b = np.zeros(n)
    b[0] = 1.0
    a = (b, n)[0]
    b = np.full(n, 1.0)
    if k == 11:
        raise ValueError("stop")
    return a, b


g = cuvil_bc.compile(f, cache=False)
g(4, 1)
gc.collect()
before = lib.cb_live_allocations()
for k in (1, 11, 11, 2):
    for fn in (f, g):
        try:
            print(k, [x.tolist() for x in fn(4, k)])
        except ValueError as e:
            print(k, "ValueError", e)
gc.collect()
print(g.stats["deopts"], lib.cb_live_allocations() - before, file=sys.stderr)
"""


def test_an_item_of_a_tuple_of_arrays_live_where_a_writer_resumes_is_not_freed_twice(tmp_path: Path) -> None:
    # (found by tests/test_array_refcount_fuzz.py, a worker aborting now and then with
    # "free(): double free detected": where a function that writes resumed the
    # interpreter (here, to raise), an array that only a tuple kept alive was freed by
    # the deopt path before the interpreter took its reference to it)
    import subprocess
    import sys

    program = tmp_path / "item.py"
    program.write_text(TUPLE_ITEM_AT_RESUME)
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 8 and lines[0::2] == lines[1::2], done.stdout
    assert done.stderr.split() == ["2", "0"], done.stderr  # (natively entered: both raises resumed; nothing leaked)
