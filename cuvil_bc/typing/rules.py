"""Result types of operators on concrete (non-union) operand types, as CPython computes
them. Unions are split by the caller (`infer.py`), one combination at a time.
"""

from __future__ import annotations

from ..errors import Unsupported
from .types import BOOL, COMPLEX, FLOAT, INT, NONE, UINT, INT128, NP_BOOL, NP_F64, NP_I64, NpScalar, ObjType, TupleType, Type, UnionType, base

NUMERIC = (BOOL, INT, FLOAT)
#: The operators CPython's complex numbers have, and cuvil_bc compiles (``**`` does not).
COMPLEX_OPS = ("+", "-", "*", "/")
INT_OPS = ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^")


def binop_type(op: str, a: Type, b: Type, rhs_const: object = None) -> Type:
    if isinstance(a, NpScalar) or isinstance(b, NpScalar):
        return _numpy_binop_type(op, a, b)
    if INT128 in (a, b) and a in WIDE_INTEGRAL + (INT128,) and b in WIDE_INTEGRAL + (INT128,):
        if op in INT128_OPS:
            return INT128
        if op in ("//", "%") and power_of_two(rhs_const):
            # (a floor shift and a mask, for ints of any sign; a remainder below
            # 2**64 is a uint: ``x % (1 << 64)``)
            return UINT if op == "%" and rhs_const <= 1 << 64 else INT128  # type: ignore[operator]
        raise Unsupported(f"'{op}' with an int beyond 64 bits" + (" (by other than a constant power of two)" if op in ("//", "%") else ""))
    if UINT in (a, b) and a in WIDE_INTEGRAL + (FLOAT,) and b in WIDE_INTEGRAL + (FLOAT,):
        return uint_binop_type(op, a, b, rhs_const)
    if COMPLEX in (a, b) and a in NUMERIC + (COMPLEX,) and b in NUMERIC + (COMPLEX,):
        if op in COMPLEX_OPS:
            return COMPLEX  # (an int or float operand is first made a complex)
        raise Unsupported(f"'{op}' with a complex operand" + ("" if op == "**" else " (TypeError in CPython)"))
    if a in NUMERIC and b in NUMERIC:
        if op in ("&", "|", "^"):
            if a == BOOL and b == BOOL:
                return BOOL
            if FLOAT in (a, b):
                raise Unsupported(f"'{op}' with a float operand (TypeError in CPython)")
            return INT
        if op in ("<<", ">>") and FLOAT in (a, b):
            raise Unsupported(f"'{op}' with a float operand (TypeError in CPython)")
        if op == "/":
            return FLOAT
        if op == "**" and FLOAT not in (a, b):
            # int ** int is an int for a non-negative exponent and a float otherwise.
            if isinstance(rhs_const, int):
                return INT if rhs_const >= 0 else FLOAT
            return UnionType((FLOAT, INT))
        if op in INT_OPS or op == "**":
            return FLOAT if FLOAT in (a, b) else INT
        raise Unsupported(f"operator '{op}'")
    if op == "+" and isinstance(a, TupleType) and isinstance(b, TupleType):
        return TupleType(a.items + b.items)
    raise Unsupported(f"'{op}' between {a} and {b}")


#: The int types, with `UINT` (an int in [0, 2**64), what a mask gives).
WIDE_INTEGRAL = (BOOL, INT, UINT)
#: The operators on a `INT128` int (128 bits) that compile, with a `INT128` result.
INT128_OPS = ("+", "-", "*", "&", "|", "^", "<<", ">>")


def power_of_two(c: object) -> bool:
    return type(c) is int and c > 0 and c & (c - 1) == 0


def uint_binop_type(op: str, a: Type, b: Type, rhs_const: object = None) -> Type:
    """An operator with a `UINT` operand (the other a bool, an int, a uint or a float),
    typed by the range of CPython's exact result: ``&`` of a uint lies in [0, the
    uint]; ``|`` and ``^`` of two non-negative ints below 2**64 too (a negative int
    operand deoptimises); ``>>`` by at least 1 is below 2**63; ``//`` of a uint is at
    most the uint, ``%`` below the divisor. Arithmetic that can leave [0, 2**64) is an
    int (its uint operands must then fit int64), unless only its low 64 bits are ever
    observed (opt/wrapping.py)."""
    if FLOAT in (a, b):
        if op in ("+", "-", "*", "/"):
            return FLOAT
        raise Unsupported(f"'{op}' between {a} and {b}")
    if op in ("&", "|", "^"):
        return UINT
    if op == ">>":
        if a == UINT:
            return INT if isinstance(rhs_const, int) and rhs_const >= 1 else UINT
        return INT
    if op in ("<<", "+", "-", "*"):
        return INT
    if op == "//":
        return UINT if a == UINT else INT
    if op == "%":
        return UINT if a == UINT and b == UINT else INT
    if op == "/":
        return FLOAT
    raise Unsupported(f"'{op}' with an int beyond int64")


def _numpy_binop_type(op: str, a: Type, b: Type) -> Type:
    """NumPy 2's rules (NEP 50) for a NumPy scalar with a NumPy or Python scalar: the
    kind is Python's for the same representations, the result a NumPy scalar."""
    if op == "**" and NP_BOOL not in (a, b):
        return numpy_power_type(a, b)
    if any(isinstance(t, NpScalar) and t.narrow for t in (a, b)):
        return narrow_binop_type(op, a, b)
    if NP_BOOL in (a, b):
        # With an int or float, np.bool counts as 0 or 1 (``count += x[i] > t``): the
        # dtype is the other's. Between bools the arithmetic is logical.
        other = b if a == NP_BOOL else a
        if other not in (INT, NP_I64, FLOAT, NP_F64) or op not in ("+", "-", "*", "/", "//", "%", "&", "|", "^"):
            raise Unsupported(f"'{op}' on np.bool (NumPy's bool arithmetic is logical)")
    if base(a) not in NUMERIC or base(b) not in NUMERIC:
        raise Unsupported(f"'{op}' between {a} and {b}")
    return NP_F64 if binop_type(op, base(a), base(b)) == FLOAT else NP_I64


#: What a Python scalar counts as in NumPy's promotion (NEP 50: a "weak" scalar).
_WEAK = {INT: 0, FLOAT: 0.0, BOOL: False}


def narrow_dtype(a: Type, b: Type) -> str:
    """NumPy's result dtype for two scalars, at least one a narrow NumPy scalar: NumPy
    itself decides (np.result_type, with Python scalars as weak values)."""
    import numpy as np

    def operand(t: Type) -> object:
        if isinstance(t, NpScalar):
            return np.dtype(t.name)
        if t in _WEAK:
            return _WEAK[t]
        raise Unsupported(f"NumPy arithmetic with a {t}")

    return np.result_type(operand(a), operand(b)).name


def numpy_power_type(a: Type, b: Type) -> Type:
    """``**`` with a NumPy scalar: NumPy's power in the promoted dtype. An integer
    power wraps silently (a negative exponent raises ValueError). A float64 power with
    an np.float64 operand is C's pow, which NumPy's scalar code calls (and warns where
    it overflows, divides by zero or is invalid). Any other float64 power (``i ** 0.5``
    for an np.int64 i) goes through NumPy's ufunc loop, whose SIMD pow differs from
    C's in the last bit on some CPUs: it does not compile, nor do float32 powers."""
    dtype = narrow_dtype(a, b)
    if dtype.startswith(("int", "uint")):
        return NpScalar(dtype)
    if dtype == "float64" and NP_F64 in (a, b):
        return NP_F64
    raise Unsupported(f"'**' on {a} and {b} (NumPy's ufunc pow)" if dtype == "float64" else f"'**' giving an np.{dtype}")


def narrow_binop_type(op: str, a: Type, b: Type) -> Type:
    """``+ - * / // % & | ^ << >>`` with a float32 or int8-32/uint8-64 scalar, as
    NumPy 2 types them (bitwise ops and shifts of ints only: NumPy raises TypeError
    for floats)."""
    if op not in ("+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>"):
        raise Unsupported(f"'{op}' on {a} and {b}")
    dtype = narrow_dtype(a, b)
    kind = "f" if dtype.startswith("float") else "b" if dtype == "bool" else "i"
    if kind == "b":
        raise Unsupported(f"'{op}' on np.bool (NumPy's bool arithmetic is logical)")
    if kind == "f" and op in ("&", "|", "^", "<<", ">>"):
        raise Unsupported(f"'{op}' on {a} and {b} (TypeError in NumPy)")
    if op == "/" and kind == "i":
        dtype = "float64"
    if dtype == "float32" and op in ("//", "%"):
        raise Unsupported(f"'{op}' on np.float32")
    return NpScalar(dtype)


def unary_type(op: str, a: Type) -> Type:
    if isinstance(a, NpScalar):
        if op == "not":
            return BOOL
        if a.narrow:
            if op in ("-", "+") and a.name != "bool":
                return a
            if op == "~" and a.base == INT and a.name != "uint64":  # (~ of a uint64 is 2**63 or more)
                return a
            raise Unsupported(f"unary '{op}' of {a}")
        if a == NP_I64 or (a == NP_F64 and op in ("-", "+")):
            return a
        raise Unsupported(f"unary '{op}' of {a}")
    if op == "not":
        truth_ok(a)
        return BOOL
    if a == BOOL and op == "~":
        # Deprecated since 3.12: CPython emits a DeprecationWarning, so let it run.
        raise Unsupported("'~' of a bool (deprecated; CPython warns)")
    if a in (BOOL, INT):
        return INT
    if a == UINT:
        return UINT if op == "+" else INT  # (-u and ~u fit int64 for u < 2**63; beyond, deopt)
    if a == INT128:
        return INT128
    if a in (FLOAT, COMPLEX) and op in ("-", "+"):
        return a
    raise Unsupported(f"unary '{op}' of {a}")


def compare_type(op: str, a: Type, b: Type) -> Type:
    if isinstance(a, ObjType) and isinstance(b, ObjType) and op in ("==", "!=", "is", "is not"):
        if op in ("is", "is not") and any(type(t.obj).__module__.startswith("numpy") for t in (a, b)):
            # ``a.dtype`` stands for a dtype equal to the array's, not the very object.
            raise Unsupported(f"'{op}' with a NumPy dtype (object identity)")
        return BOOL  # two compile-time objects (``a.dtype == np.float64``): a constant
    if op in ("is", "is not"):
        if a == NONE or b == NONE or (a == BOOL and b == BOOL):
            return BOOL
        raise Unsupported(f"'{op}' between {a} and {b} (object identity)")
    if op in ("in", "not in"):
        # `in` tests identity before equality; only float elements could be identical to a
        # float without being equal (NaN), so a float item needs a tuple without floats.
        scalars = (BOOL, INT, NONE, FLOAT)
        if isinstance(b, TupleType) and a in scalars and all(t in scalars for t in b.items):
            if not (a == FLOAT and FLOAT in b.items):
                return BOOL
        raise Unsupported(f"'{op}' with {a} and {b}")
    if a in NUMERIC and b in NUMERIC:
        return BOOL
    if UINT in (a, b) and a in WIDE_INTEGRAL + (FLOAT,) and b in WIDE_INTEGRAL + (FLOAT,) and op in ("<", "<=", ">", ">=", "==", "!="):
        return BOOL
    if INT128 in (a, b) and a in WIDE_INTEGRAL + (INT128,) and b in WIDE_INTEGRAL + (INT128,) and op in ("<", "<=", ">", ">=", "==", "!="):
        return BOOL
    if COMPLEX in (a, b) and a in NUMERIC + (COMPLEX,) and b in NUMERIC + (COMPLEX,):
        if op in ("==", "!="):
            return BOOL
        raise Unsupported(f"'{op}' with a complex operand (TypeError in CPython)")
    if (isinstance(a, NpScalar) or isinstance(b, NpScalar)) and base(a) in NUMERIC and base(b) in NUMERIC:
        return NP_BOOL
    if op in ("==", "!=") and (a == NONE or b == NONE):
        return BOOL
    raise Unsupported(f"'{op}' between {a} and {b}")


def truth_ok(a: Type) -> None:
    if a in NUMERIC or a in (NONE, COMPLEX, UINT, INT128) or isinstance(a, (TupleType, NpScalar)):
        return
    raise Unsupported(f"truth value of {a}")
