"""Equivalence checks: a compiled function must behave exactly like CPython.

`check(fn, *args)` runs the function compiled and uncompiled on the same arguments and
asserts that both return the same value of the same type (floats compared by `repr`, so
-0.0 and NaN count) or raise the same exception type with the same message.
`equivalent(fn, strategy)` does that for hypothesis-drawn argument tuples. Mutable
arguments are copied per run and their final states compared as well. Each check also
asserts that the compiled call entered native code (unless ``native=False``), so a
test cannot pass by falling back to the interpreter.

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
    """Equal values of the same type; floats by repr (distinguishes -0.0, matches NaN);
    arrays by dtype, shape, strides (the layout), writeability and contents (bit for
    bit, except that a NaN matches any NaN: which operand's payload a NaN result
    carries is the hardware's choice under IEEE 754, and LLVM may swap the operands
    of a commutative operation, so ``nan1 + nan2`` may carry either payload)."""
    if type(a) is not type(b):
        return False
    if type(a).__name__ == "ndarray" and type(a).__module__ == "numpy":
        if not (
            a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
            and a.flags.writeable == b.flags.writeable
        ):
            return False
        if a.dtype.kind == "f":
            import numpy as np

            nan_a, nan_b = np.isnan(a), np.isnan(b)
            return bool((nan_a == nan_b).all() and a[~nan_a].tobytes() == b[~nan_b].tobytes())
        return a.tobytes() == b.tobytes()
    if isinstance(a, float) or type(a).__module__ == "numpy":
        return repr(a) == repr(b)  # NumPy scalars too (np.float32(nan), -0.0)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, complex):  # by parts: nan+1j == nan+1j is False
        return same_value(a.real, b.real) and same_value(a.imag, b.imag)
    return bool(a == b)


def _fresh(value: Any) -> Any:
    """A copy of an argument; an array keeps its layout (strides, order, read-only
    flag), so that both runs see the same kind of array."""
    if type(value).__name__ == "ndarray" and type(value).__module__ == "numpy":
        import numpy as np

        if value.size == 0:
            out = value.copy(order="K")
        else:
            lo = sum(min(0, (n - 1) * st) for n, st in zip(value.shape, value.strides))
            hi = sum(max(0, (n - 1) * st) for n, st in zip(value.shape, value.strides)) + value.itemsize
            raw = np.zeros(hi - lo, dtype=np.uint8)
            out = np.ndarray(value.shape, dtype=value.dtype, buffer=raw, offset=-lo, strides=value.strides)
            out[...] = value
        out.flags.writeable = value.flags.writeable
        return out
    if isinstance(value, tuple):
        return tuple(_fresh(v) for v in value)
    return copy.deepcopy(value)


def run(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any, tuple[Any, ...]]:
    """('ok', value, args-after) or ('raise', (type, message), args-after). Each run gets
    fresh copies of the arguments, so that what it did to them can be compared."""
    return run_with_warnings(fn, args)[:3]  # type: ignore[return-value]


def _clear_errno() -> None:
    """Set C's errno to 0 before a run. CPython 3.12's ``abs()`` of a complex with a
    NaN part returns without setting errno and then tests it: an ERANGE left by an
    earlier call (an overflowing ``**``, in CPython or in native code) makes it raise
    OverflowError("absolute value too large"), so the same call's outcome depended on
    what ran before it (a hypothesis FlakyFailure in CI). Both runs start from errno
    0, the state a fresh process has. (glibc's thread-local errno; elsewhere a no-op.)"""
    global _ERRNO_LOCATION
    import ctypes

    if _ERRNO_LOCATION is None:
        try:
            _ERRNO_LOCATION = ctypes.CDLL(None).__errno_location
            _ERRNO_LOCATION.restype = ctypes.c_void_p
        except (AttributeError, OSError):
            _ERRNO_LOCATION = False
    if _ERRNO_LOCATION:
        ctypes.c_int.from_address(_ERRNO_LOCATION()).value = 0


_ERRNO_LOCATION: Any = None


def run_with_warnings(
    fn: Callable[..., Any], args: tuple[Any, ...], *, fresh: bool = True, strict: bool = False
) -> tuple[str, Any, tuple[Any, ...], list[tuple[type, str]]]:
    """`run`, plus the warnings the call emitted, as (category, message). Without
    `fresh`, `args` are used as they are (the caller made them for this run). With
    `strict`, warnings are errors: where NumPy warns the call stops, and the arguments
    show exactly the writes made before that point."""
    import warnings

    if fresh:
        args = _fresh(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error" if strict else "always")
        _clear_errno()
        try:
            outcome: tuple[str, Any] = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001 - the exception is the result being compared
            outcome = ("raise", (type(e), str(e)))
    return outcome[0], outcome[1], args, [(w.category, str(w.message)) for w in caught]


def describe(outcome: tuple[Any, ...]) -> str:
    kind, value = outcome[0], outcome[1]
    if kind == "ok":
        return f"returned {value!r} ({type(value).__name__})"
    return f"raised {value[0].__name__}({value[1]!r})"


def check(compiled: Any, *args: Any, native: bool = True) -> None:
    """Assert that `compiled` (a dispatcher) and its `py_func` agree on `args`: the
    result or exception, the arguments afterwards, and the warnings emitted.

    With `native` (the default) the compiled call must also have entered native code
    (and finished there or deoptimised) whenever its arguments can enter it at all, so
    that a lowering that silently falls back to the interpreter fails the check. Tests
    of fallbacks say ``native=False``."""
    expected = run_with_warnings(compiled.py_func, args)
    before = _entered(compiled)
    actual = run_with_warnings(compiled, args)
    _compare(compiled, args, expected, actual)
    if native:
        _assert_entered(compiled, args, before)


def check_with(compiled: Any, make_args: Callable[[], tuple[Any, ...]], *, native: bool = True) -> None:
    """`check` for arguments that must be built together, such as views of one array
    (aliasing): each run gets its own ``make_args()``, and the arguments compared
    afterwards are what it returns (views show their base's final contents)."""
    args = make_args()
    expected = run_with_warnings(compiled.py_func, args, fresh=False)
    before = _entered(compiled)
    actual = run_with_warnings(compiled, make_args(), fresh=False)
    _compare(compiled, args, expected, actual)
    if native:
        _assert_entered(compiled, args, before)


def _entered(compiled: Any) -> float:
    """How many calls entered native code: those that finished there, and deopts."""
    stats = compiled.stats
    return stats["native_calls"] + stats["deopts"]


def _assert_entered(compiled: Any, args: tuple[Any, ...], before: float) -> None:
    if _entered(compiled) > before or not can_enter_native(args):
        return
    raise AssertionError(
        f"{compiled.py_func.__qualname__}{args!r}: the results agree, but the call never entered native "
        f"code (say native=False if that is what the test means)\n{compiled.explain()}"
    )


def can_enter_native(args: tuple[Any, ...]) -> bool:
    """Whether arguments like these can be passed to native code at all: every int
    fits in int64, and every value has a type that compiles. (An int in [2**63, 2**64)
    compiles as a `UINT`, but few operators take one: a test must say if it expects
    native code there.)"""
    from .errors import CompileError
    from .typing.types import UINT, typeof

    try:
        for a in args:
            if typeof(a) == UINT:
                return False
    except CompileError:
        return False
    return True


def _compare(compiled: Any, args: tuple[Any, ...], expected: Any, actual: Any) -> None:
    ok = expected[0] == actual[0] and (
        same_value(expected[1], actual[1]) if expected[0] == "ok" else expected[1] == actual[1]
    )
    ok = ok and all(same_value(x, y) for x, y in zip(expected[2], actual[2]))
    ok = ok and expected[3] == actual[3]
    if not ok:
        raise AssertionError(
            f"{compiled.py_func.__qualname__}{args!r}: CPython {describe(expected[:3])}, warnings {expected[3]}; "
            f"cuvil_bc {describe(actual[:3])}, warnings {actual[3]}\n{compiled.explain()}"
        )


def equivalent(compiled: Any, strategy: Any, *, max_examples: int = 200, native: bool = True) -> None:
    """Check `compiled` against CPython on argument tuples drawn from `strategy`. With
    `native`, some of those calls must have entered native code: drawn arguments may
    legitimately keep a call out of it (a read-only array for a function that writes),
    so each call is not required to."""
    from hypothesis import given, settings

    before = _entered(compiled)

    @settings(max_examples=max_examples, deadline=None, database=None)
    @given(strategy)
    def prop(args: tuple[Any, ...]) -> None:
        check(compiled, *args, native=False)

    prop()
    if native and _entered(compiled) == before:
        raise AssertionError(
            f"{compiled.py_func.__qualname__}: no drawn example entered native code "
            f"(say native=False if that is what the test means)\n{compiled.explain()}"
        )


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


def arrays(dtype: str, *, min_dims: int = 1, max_dims: int = 2, max_side: int = 6, elements: Any = None) -> Any:
    """A hypothesis strategy for NumPy arrays of `dtype` in every layout a caller can
    pass: C or Fortran order, transposed, sliced with steps (also negative), read-only,
    and zero-size."""
    import numpy as np
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    if elements is None:
        if dtype == "float64":
            elements = st.floats(allow_nan=True, allow_infinity=True, width=64)
        elif dtype == "int64":
            elements = st.integers(-(2**63), 2**63 - 1) | st.integers(-1000, 1000)
        else:
            elements = hnp.from_dtype(np.dtype(dtype))
    base = hnp.arrays(np.dtype(dtype), hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side), elements=elements)

    @st.composite
    def layouts(draw: Any) -> Any:
        a = draw(base)
        kind = draw(st.sampled_from(["c", "fortran", "transposed", "strided", "reversed"]))
        if kind == "fortran":
            a = np.asfortranarray(a)
        elif kind == "transposed":
            a = a.T
        elif kind == "strided":
            a = np.repeat(a, 2, axis=0)[::2]  # same values, every other row of a bigger array
        elif kind == "reversed":
            a = a[::-1]
        if draw(st.booleans()):
            a = a.view()
            a.flags.writeable = False
        return a

    return layouts()


def overflowing_vectors(max_len: int) -> Any:
    """A hypothesis strategy for 1-D float64 arrays (in every layout `arrays` draws) of
    any length up to `max_len`, with NaNs, infinities and +-1e308 among ordinary
    values, so that sums and products overflow somewhere along the array."""
    from hypothesis import strategies as st

    values = st.floats(allow_nan=True, allow_infinity=True) | st.floats(-10.0, 10.0) | st.sampled_from([1e308, -1e308])
    return st.integers(0, max_len).flatmap(
        lambda n: arrays("float64", max_dims=1, max_side=n, elements=values) if n else arrays("float64", max_dims=1)
    )
