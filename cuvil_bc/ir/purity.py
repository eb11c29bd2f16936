"""Which known callables are pure: no side effects, and foldable when their arguments
are constants. Shared by constant folding and dead-code elimination.

The rule for folding is CPython's own: the folder calls the real function, so a folded
result is by construction the one CPython computes, and a call that raises is not folded.
"""

from __future__ import annotations

import builtins
import math

#: Builtins that are pure for every argument type cuvil_bc compiles.
PURE_BUILTINS = frozenset(
    getattr(builtins, n)
    for n in ("abs", "min", "max", "int", "float", "bool", "round", "divmod", "pow", "len", "range")
)

#: Modules whose attributes the specialiser resolves to constants (each guarded, see
#: opt/specialize.py), so that ``math.sqrt(x)`` compiles like ``sqrt(x)``.
CONSTANT_MODULES = (math,)


def is_pure_callable(obj: object) -> bool:
    if obj in PURE_BUILTINS:
        return True
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return True  # building an exception object has no side effects
    return callable(obj) and getattr(obj, "__module__", None) == "math" or _is_math_function(obj)


def _is_math_function(obj: object) -> bool:
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and getattr(math, name, None) is obj


def foldable_result(value: object) -> bool:
    """Only keep folded values that are small scalars or tuples of them."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return True
    if isinstance(value, int):
        return value.bit_length() <= 256
    if isinstance(value, tuple):
        return len(value) <= 16 and all(foldable_result(v) for v in value)
    return False
