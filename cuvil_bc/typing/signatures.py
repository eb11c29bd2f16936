"""The one table of builtin and `math` signatures that cuvil_bc compiles.

Each entry maps a callable to a `Signature`: how many arguments it takes and a rule
that gives the result type from the (non-union) argument types, raising `Unsupported`
for combinations that are not compiled. The lowering implements exactly these entries,
keyed by the same `name`.
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from typing import Callable

from ..errors import Unsupported
from .types import BOOL, FLOAT, INT, NONE, NP_F64, RANGE, NpScalar, TupleType, Type, base

NUMERIC = (BOOL, INT, FLOAT)
INTEGRAL = (BOOL, INT)

Rule = Callable[[tuple[Type, ...]], Type]


@dataclass(frozen=True)
class Signature:
    name: str  # the key the lowering uses
    min_args: int
    max_args: int
    rule: Rule


def _need(types: tuple[Type, ...], allowed: tuple[Type, ...], what: str) -> None:
    for t in types:
        if t not in allowed:
            raise Unsupported(f"{what} of a {t} argument")


def _float_fn(name: str, nargs: int = 1) -> Signature:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, NUMERIC, f"math.{name}")
        return FLOAT

    return Signature(f"math.{name}", nargs, nargs, rule)


def _int_result(name: str) -> Signature:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, NUMERIC, f"math.{name}")
        return INT

    return Signature(f"math.{name}", 1, 1, rule)


def _bool_result(name: str) -> Signature:
    def rule(ts: tuple[Type, ...]) -> Type:
        _need(ts, NUMERIC, f"math.{name}")
        return BOOL

    return Signature(f"math.{name}", 1, 1, rule)


def _abs(ts: tuple[Type, ...]) -> Type:
    if isinstance(ts[0], NpScalar):
        return ts[0]  # NumPy's absolute keeps the dtype (np.bool included)
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
    _need(ts, NUMERIC, "float()")
    return FLOAT


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


def _log(ts: tuple[Type, ...]) -> Type:
    _need(ts, NUMERIC, "math.log")
    return FLOAT


def _ldexp(ts: tuple[Type, ...]) -> Type:
    _need(ts[:1], NUMERIC, "math.ldexp")
    _need(ts[1:], INTEGRAL, "math.ldexp exponent")
    return FLOAT


#: math functions computed by the C library that CPython itself calls, with CPython's
#: error rules re-checked natively (a failing check hands the call back to CPython).
LIBM_UNARY = (
    "sqrt", "exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "cbrt", "exp2",
)
LIBM_BINARY = ("atan2", "copysign", "fmod", "pow")
#: math functions whose result CPython computes with its own code: native code calls
#: CPython's implementation (through the runtime, taking the GIL) to get the same bits.
VIA_CPYTHON = ("gamma", "lgamma", "erf", "erfc", "hypot", "remainder")

_TABLE: dict[object, Signature] = {
    builtins.abs: Signature("abs", 1, 1, _abs),
    builtins.min: Signature("min", 2, 16, _minmax),
    builtins.max: Signature("max", 2, 16, _minmax),
    builtins.int: Signature("int", 1, 1, _int),
    builtins.float: Signature("float", 1, 1, _float),
    builtins.bool: Signature("bool", 1, 1, _bool),
    builtins.round: Signature("round", 1, 1, _round),
    builtins.divmod: Signature("divmod", 2, 2, _divmod),
    builtins.pow: Signature("pow", 2, 3, _pow),
    builtins.len: Signature("len", 1, 1, _len),
    builtins.range: Signature("range", 1, 3, _range),
    math.log: Signature("math.log", 1, 2, _log),
    math.ldexp: Signature("math.ldexp", 2, 2, _ldexp),
    math.floor: _int_result("floor"),
    math.ceil: _int_result("ceil"),
    math.trunc: _int_result("trunc"),
    math.isnan: _bool_result("isnan"),
    math.isinf: _bool_result("isinf"),
    math.isfinite: _bool_result("isfinite"),
    math.degrees: _float_fn("degrees"),
    math.radians: _float_fn("radians"),
}
for _n in LIBM_UNARY:
    if hasattr(math, _n):
        _TABLE[getattr(math, _n)] = _float_fn(_n)
for _n in LIBM_BINARY:
    _TABLE[getattr(math, _n)] = _float_fn(_n, 2)
for _n in VIA_CPYTHON:
    _TABLE[getattr(math, _n)] = _float_fn(_n, 2 if _n in ("hypot", "remainder") else 1)


#: Builtins whose rules take NumPy scalars as they are: NumPy's own methods run
#: (``__abs__``, ``__pow__``, comparisons), and the result keeps a NumPy type.
NUMPY_OWN = frozenset({"abs", "min", "max", "pow"})


def result_type(sig: Signature, ts: tuple[Type, ...]) -> Type:
    """The result type of `sig` for concrete (non-union) argument types. A NumPy
    scalar reaches `math` functions and float()/int()/bool() as the Python number
    they convert it to (`as_number`), and abs/min/max/pow as itself."""
    if not any(isinstance(t, NpScalar) for t in ts) or sig.name in NUMPY_OWN:
        return sig.rule(ts)
    if not (sig.name.startswith("math.") or sig.name in ("float", "int", "bool")):
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
    return t.base


def lookup(obj: object) -> Signature | None:
    try:
        return _TABLE.get(obj)
    except TypeError:  # unhashable
        return None


__all__ = ["Signature", "lookup", "result_type", "as_number", "NONE", "LIBM_UNARY", "LIBM_BINARY", "VIA_CPYTHON"]
