"""The one table of primitives: the builtins and `math` functions that cuvil_bc compiles.

Each is one `Primitive` row: its callable, how many arguments it takes, the rule that
gives its result type from the (non-union) argument types (raising `Unsupported` for
combinations that are not compiled), whether it can raise, how NumPy scalars reach it,
how it is lowered, and whether the strips may hold it. Code generation reads the
rows: a `LIBM` or `CPYTHON` row needs nothing else; an `OWN` row's lowering is the
function of lower/builtins.py registered under its `name`.
"""

from __future__ import annotations

import builtins
import math
from typing import Callable

from ..errors import Unsupported
from ..records import record
from .types import BOOL, COMPLEX, FLOAT, INT, NONE, NP_BOOL, NP_F64, RANGE, UINT, NpScalar, TupleType, Type, base

NUMERIC = (BOOL, INT, FLOAT)
INTEGRAL = (BOOL, INT)

Rule = Callable[[tuple[Type, ...]], Type]

#: How a primitive is lowered. `OWN`: by its own function in lower/builtins.py. `CREATES`:
#: a NumPy function that creates an array, typed by typing/creation.py (its result
#: depends on keywords and constant arguments) and lowered by lower/arrays.py. `LIBM`:
#: a float function of the C library that CPython's `math` calls too, under the same
#: name, with CPython's error rules tested natively (a failing test hands the call back
#: to CPython); the error test of a function that only reads may be deferred
#: (opt/finiteness.py). `CPYTHON`: a `math` function whose bits only CPython's own code
#: gives, where the runtime cannot compute them itself: native code calls it through
#: the runtime (cb_math_call, taking the GIL).
OWN, CREATES, LIBM, CPYTHON = "own", "creates", "libm", "cpython"

#: Modules whose attributes the specialiser resolves to constants (each guarded, see
#: opt/specialize.py), so that ``math.sqrt(x)`` compiles like ``sqrt(x)``. Every
#: function of theirs is pure: constant folding may call it (compiled or not).
CONSTANT_MODULES = (math,)


@record(frozen=True)
class Primitive:
    name: str  # "abs", "math.hypot", "numpy.zeros": the key of its lowering and of its messages
    obj: object  # the callable (None for a NumPy function: `lookup` finds it once NumPy is imported)
    min_args: int
    max_args: int | None  # None: any number
    rule: Rule
    lowering: str = OWN
    #: Whether a call can raise (or warn) in CPython for the argument types the rule
    #: accepts (dead-code elimination keeps a call that can). NumPy scalar arguments
    #: can always warn. An int argument may be beyond int64 in CPython (``x << 1100``,
    #: whose native overflow is never tested once the call is dropped): a function
    #: that converts it to a float can raise OverflowError.
    may_raise: bool = True
    #: Argument types with which a call may raise all the same (``abs`` of a complex:
    #: OverflowError).
    raises_for: tuple[Type, ...] = ()
    #: Takes NumPy scalars as they are (NumPy's own methods run: ``__abs__``,
    #: ``__pow__``, comparisons), and the result keeps a NumPy type; the others see
    #: the Python number a NumPy scalar converts to (`as_number`).
    numpy_own: bool = False
    #: May be in a strip (lower/strips.py): its lowering guards only with `deopt_if`.
    in_strips: bool = False
    #: Its only error test is the one of a NaN or infinity from finite arguments
    #: (numeric.deopt_on_float_error), which a function that only reads may defer
    #: (`opt/finiteness.FloatTests.defers_math_error`). Every `LIBM` row's is.
    defers_errors: bool = False
    #: A call has no side effects and gives equal results for equal arguments, so
    #: constant folding may make it (not so for a new array).
    pure: bool = True
    #: The C function a `LIBM` row calls: the C library's of the row's name, or, for a
    #: function that CPython computes with its own algorithm (gamma, hypot), the
    #: runtime's copy of that algorithm (csrc/pymath.c).
    c_name: str = ""
    #: Whether CPython may raise for it: `LIBM` rows test its rules natively
    #: (`numeric.deopt_on_float_error`); ``math.hypot`` returns an infinity silently.
    float_errors: bool = True
    #: A `CPYTHON` row whose function CPython computes with the C library's function
    #: of the same name where the build has one (``math.erf``): lowered as a `LIBM`
    #: row, without the GIL, when the two agree (`lower/builtins.libm_agrees`).
    libm_if_same: bool = False

    def takes(self, n: int) -> bool:
        return self.min_args <= n and (self.max_args is None or n <= self.max_args)


def _need(types: tuple[Type, ...], allowed: tuple[Type, ...], what: str) -> None:
    for t in types:
        if t not in allowed:
            raise Unsupported(f"{what} of a {t} argument")


def _float_result(name: str) -> Rule:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, NUMERIC + (UINT,), name)  # (a uint converts as an int does: correctly rounded)
        return FLOAT

    return rule


def _int_result(name: str) -> Rule:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, NUMERIC + (UINT,), name)
        return UINT if ts == (UINT,) else INT  # (floor of a uint is the uint)

    return rule


def _bool_result(name: str) -> Rule:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, NUMERIC + (UINT,), name)
        return BOOL

    return rule


def _abs(ts: tuple[Type, ...]) -> Type:
    if isinstance(ts[0], NpScalar):
        return ts[0]  # NumPy's absolute keeps the dtype (np.bool included)
    if ts[0] == COMPLEX:
        return FLOAT
    _need(ts, NUMERIC, "abs")
    return FLOAT if ts[0] == FLOAT else INT


def _minmax(ts: tuple[Type, ...]) -> Type:
    _need(tuple(base(t) for t in ts), NUMERIC, "min/max")
    from .types import union_of

    return union_of(list(ts))  # the result is one of the arguments, with its type


def _int(ts: tuple[Type, ...]) -> Type:
    _need(ts, NUMERIC, "int()")
    return INT


def _float(ts: tuple[Type, ...]) -> Type:
    _need(ts, NUMERIC + (UINT,), "float()")
    return FLOAT


def _complex(ts: tuple[Type, ...]) -> Type:
    if ts == (COMPLEX,):
        return COMPLEX  # the very object
    _need(ts, NUMERIC, "complex()")  # (complex(a, b) of complex a or b mixes their parts)
    return COMPLEX


def _bool(ts: tuple[Type, ...]) -> Type:
    from .rules import truth_ok

    for t in ts:
        truth_ok(t)
    return BOOL


def _round(ts: tuple[Type, ...]) -> Type:
    _need(ts, NUMERIC, "round()")
    return INT


def _divmod(ts: tuple[Type, ...]) -> Type:
    from .rules import binop_type

    return TupleType((binop_type("//", ts[0], ts[1]), binop_type("%", ts[0], ts[1])))


def _pow(ts: tuple[Type, ...]) -> Type:
    from .rules import binop_type

    if len(ts) == 3:
        _need(ts, INTEGRAL, "pow() with a modulus")  # (NumPy scalars too: not compiled)
        return INT
    return binop_type("**", ts[0], ts[1])


def _len(ts: tuple[Type, ...]) -> Type:
    if not isinstance(ts[0], TupleType):
        raise Unsupported(f"len() of a {ts[0]}")
    return INT


def _range(ts: tuple[Type, ...]) -> Type:
    _need(ts, INTEGRAL, "range()")
    return RANGE


def _no_rule(ts: tuple[Type, ...]) -> Type:
    raise AssertionError("typed by its own rule (typing/creation.py)")


def _ldexp(ts: tuple[Type, ...]) -> Type:
    _need(ts[:1], NUMERIC, "math.ldexp")
    _need(ts[1:], INTEGRAL, "math.ldexp exponent")
    return FLOAT


def _own(module: object, name: str) -> object:
    """``module.name`` if it is the function of that name (None if the program rebound
    it, ``math.sqrt = math.cbrt`` or ``np.float32 = np.float64``, before the table was
    made: the row must not claim the other function)."""
    found = getattr(module, name, None)
    return found if getattr(found, "__name__", None) == name else None


def _math(name: str, nargs: int | tuple[int, int | None] = 1, rule: Rule | None = None, **how: object) -> Primitive:
    """A `math` function's row; by default it takes `nargs` numbers and gives a float."""
    low, high = (nargs, nargs) if isinstance(nargs, int) else nargs
    how.setdefault("defers_errors", how.get("lowering") == LIBM)
    return Primitive(f"math.{name}", _own(math, name), low, high, rule or _float_result(f"math.{name}"), **how)  # type: ignore[arg-type]


def _builtin(name: str, nargs: tuple[int, int | None], rule: Rule, **how: object) -> Primitive:
    return Primitive(name, getattr(builtins, name), nargs[0], nargs[1], rule, **how)  # type: ignore[arg-type]


_LIBM_1 = ("exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "exp2")

def _int_method(name: str) -> Rule:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, (BOOL, INT, UINT), f"int.{name}()")
        return INT

    return rule


def _is_integer(ts: tuple[Type, ...]) -> Type:
    _need(ts, (FLOAT,), "float.is_integer()")
    return BOOL


#: Methods of numbers, called as ``x.bit_length()`` (`method`) or as functions.
METHODS: tuple[Primitive, ...] = (
    Primitive("int.bit_length", int.bit_length, 1, 1, _int_method("bit_length"), may_raise=False),
    Primitive("int.bit_count", int.bit_count, 1, 1, _int_method("bit_count"), may_raise=False),
    Primitive("float.is_integer", float.is_integer, 1, 1, _is_integer, may_raise=False),
)


PRIMITIVES: tuple[Primitive, ...] = (
    _builtin("abs", (1, 1), _abs, may_raise=False, raises_for=(COMPLEX,), numpy_own=True, in_strips=True),
    _builtin("min", (2, 16), _minmax, may_raise=False, numpy_own=True, in_strips=True),
    _builtin("max", (2, 16), _minmax, may_raise=False, numpy_own=True, in_strips=True),
    _builtin("int", (1, 1), _int, in_strips=True),  # (a float NaN or infinity raises)
    _builtin("float", (1, 1), _float, in_strips=True),  # (of an int beyond a float's range)
    _builtin("bool", (1, 1), _bool, may_raise=False),
    _builtin("complex", (0, 2), _complex),  # (of an int beyond a float's range)
    _builtin("round", (1, 1), _round),
    _builtin("divmod", (2, 2), _divmod),
    _builtin("pow", (2, 3), _pow, numpy_own=True),
    _builtin("len", (1, 1), _len),  # (of a 0-d array: TypeError)
    _builtin("range", (1, 3), _range),
    _math("log", (1, 2), defers_errors=True),
    _math("ldexp", 2, _ldexp),
    _math("floor", 1, _int_result("math.floor"), in_strips=True),
    _math("ceil", 1, _int_result("math.ceil"), in_strips=True),
    _math("trunc", 1, _int_result("math.trunc"), in_strips=True),
    _math("isnan", 1, _bool_result("math.isnan")),  # (these too convert an int to a float)
    _math("isinf", 1, _bool_result("math.isinf")),
    _math("isfinite", 1, _bool_result("math.isfinite")),
    _math("degrees"),
    _math("radians"),
    _math("fabs", lowering=LIBM, in_strips=True),
    *(_math(name, lowering=LIBM) for name in _LIBM_1 if hasattr(math, name)),  # (exp2, cbrt: 3.11+)
    _math("sqrt", lowering=LIBM, in_strips=True),
    _math("atan2", 2, lowering=LIBM),
    _math("copysign", 2, lowering=LIBM),
    _math("fmod", 2, lowering=LIBM),
    _math("pow", 2, lowering=LIBM),
    _math("gamma", lowering=LIBM, c_name="cb_tgamma"),
    _math("lgamma", lowering=LIBM, c_name="cb_lgamma"),
    _math("erf", lowering=CPYTHON, libm_if_same=True),
    _math("erfc", lowering=CPYTHON, libm_if_same=True),
    _math("hypot", (0, None), lowering=LIBM, c_name="cb_hypot", float_errors=False, defers_errors=False),
    _math("remainder", 2, lowering=LIBM, c_name="cb_remainder"),
    *METHODS,
)


def method(receiver: Type, name: str) -> Primitive | None:
    """The row of ``receiver.name``: a method of Python's ints (of a bool, an int or a
    uint) or floats (np.float64 is a float). NumPy's ints have none of these."""
    owner = "int" if receiver in (BOOL, INT, UINT) else "float" if receiver in (FLOAT, NP_F64) else None
    return next((row for row in METHODS if row.name == f"{owner}.{name}"), None)


#: NumPy's array creators (typed by typing/creation.py, lowered by lower/arrays.py).
NUMPY_CREATORS: tuple[Primitive, ...] = tuple(
    Primitive(f"numpy.{name}", None, 1, 4, _no_rule, lowering=CREATES, pure=False)
    for name in ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "arange")
)


def _numpy_float(name: str) -> Rule:
    def rule(ts: tuple[Type, ...]) -> Type:
        for t in ts:
            if t not in NUMERIC + (UINT,) and not (isinstance(t, NpScalar) and t.name in ("float64", "float32", "int64", "bool")):
                raise Unsupported(f"np.{name}() of a {t} argument")
        return NpScalar(name)

    return rule


def _numpy_int64(ts: tuple[Type, ...]) -> Type:
    for t in ts:
        if t not in NUMERIC and not (isinstance(t, NpScalar) and t.name in ("float64", "float32", "int64", "bool")):
            raise Unsupported(f"np.int64() of a {t} argument")
    return NpScalar("int64")


#: NumPy's float types and int64 called as functions, ``np.float64(x)``: the NumPy
#: scalar that holds x (lower/builtins.py). A Python int beyond the float's range
#: raises OverflowError, a float32 that overflows warns; np.int64 of a float
#: truncates it, and raises (or, for an np.float64, warns) beyond int64's range.
NUMPY_SCALARS: tuple[Primitive, ...] = tuple(
    Primitive(f"numpy.{name}", None, 1, 1, _numpy_float(name), numpy_own=True, in_strips=True) for name in ("float64", "float32")
) + (Primitive("numpy.int64", None, 1, 1, _numpy_int64, numpy_own=True, in_strips=True),)
_TABLE: dict[object, Primitive] = {row.obj: row for row in PRIMITIVES if row.obj is not None}
_NUMPY_TABLE: dict[object, Primitive] | None = None  # NumPy's rows by callable, once NumPy is imported
assert len(_TABLE) == sum(row.obj is not None for row in PRIMITIVES), "a callable with two rows"
#: The `CPYTHON` rows, in the order the C runtime numbers them (lower/runtime.py).
VIA_CPYTHON: tuple[Primitive, ...] = tuple(row for row in PRIMITIVES if row.lowering == CPYTHON)


def result_type(sig: Primitive, ts: tuple[Type, ...]) -> Type:
    """The result type of `sig` for concrete (non-union) argument types. A NumPy
    scalar reaches `math` functions, float()/int()/bool(), round() and range() as the
    Python number they convert it to (`as_number`), and abs/min/max/pow as itself."""
    if not any(isinstance(t, NpScalar) for t in ts) or sig.numpy_own:
        return sig.rule(ts)
    if not (sig.name.startswith("math.") or sig.name in ("float", "int", "bool", "round", "range")):
        raise Unsupported(f"{sig.name}() of a NumPy value")
    return sig.rule(tuple(as_number(sig.name, k, t) for k, t in enumerate(ts)))


def as_number(name: str, position: int, t: Type) -> Type:
    """The Python number that argument `position` of `name` (a math function or
    float/int/bool) is, when it is the NumPy scalar `t`: the number it holds, except
    that math.floor and math.ceil see a NumPy int through ``__float__`` (NumPy ints
    have no ``__floor__``, so beyond 2**53 the value rounds first, as CPython does)."""
    if not isinstance(t, NpScalar):
        return t
    if name == "math.trunc" and t != NP_F64:
        raise Unsupported(f"math.trunc() of an {t} (TypeError in CPython: no __trunc__)")
    if name == "math.ldexp" and position == 1:
        raise Unsupported(f"math.ldexp() with an {t} exponent (TypeError in CPython)")
    if name in ("math.floor", "math.ceil") and t.base == INT:
        return FLOAT
    if name in ("round", "range") and t == NP_BOOL:
        raise Unsupported(f"{name}() of an {t} (TypeError in CPython)")
    # (round() of a NumPy float is a Python int, the same as of the float it holds; one
    # with ndigits is not compiled: NumPy rounds by scaling, not as CPython does.)
    return t.base


def lookup(obj: object) -> Primitive | None:
    global _NUMPY_TABLE
    try:
        found = _TABLE.get(obj)
        if found is not None:
            return found
        if _NUMPY_TABLE is None:
            import sys

            np = sys.modules.get("numpy")  # (a NumPy callable implies NumPy is imported)
            if np is None:
                return None
            rows = [(_own(np, row.name.removeprefix("numpy.")), row) for row in NUMPY_CREATORS + NUMPY_SCALARS]
            _NUMPY_TABLE = {obj: row for obj, row in rows if obj is not None}
        return _NUMPY_TABLE.get(obj)
    except TypeError:  # unhashable
        return None


def creator_name(obj: object) -> str | None:
    """``"zeros"`` for ``np.zeros`` and the other array creators; None for the rest."""
    row = lookup(obj)
    return row.name.removeprefix("numpy.") if row is not None and row.lowering == CREATES else None


def is_pure_callable(obj: object) -> bool:
    """Whether calling `obj` has no side effects, so that constant folding may call it
    on constant arguments (it keeps only what CPython's own call returns): the
    primitives that are pure, the functions of `CONSTANT_MODULES`, and exception
    classes."""
    row = lookup(obj)
    if row is not None:
        return row.pure
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return True  # building an exception object has no side effects
    if callable(obj) and getattr(obj, "__module__", None) in {m.__name__ for m in CONSTANT_MODULES}:
        return True
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and any(getattr(m, name, None) is obj for m in CONSTANT_MODULES)


__all__ = ["Primitive", "PRIMITIVES", "NUMPY_CREATORS", "lookup", "creator_name", "CREATES", "result_type", "as_number", "is_pure_callable", "NONE", "OWN", "LIBM", "CPYTHON"]
