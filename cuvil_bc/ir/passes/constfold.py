"""Constant folding with CPython's semantics.

An op whose operands are all constants is evaluated by CPython itself (the same
operator, builtin or `math` function), so the folded value is exactly CPython's. An
evaluation that raises is left alone: the op must still raise at run time.

    %1 = binop 2 ** 10      ->   (uses of %1 now use 1024)
    %2 = binop 1 // 0       ->   unchanged
"""

from __future__ import annotations

from .. import ops as O
from ..facts import UNTYPED, Facts
from ..function import Function, use_replacements
from ..operators import binary, compare, unary

_NOFOLD = object()


def foldable_result(value: object) -> bool:
    """Only keep folded values that are small scalars or tuples of them."""
    if isinstance(value, (bool, float, complex)) or value is None:
        return True
    if isinstance(value, int):
        return value.bit_length() <= 256
    if isinstance(value, tuple):
        return len(value) <= 16 and all(foldable_result(v) for v in value)
    return False


def _too_big(op: O.BinOp, a: object, b: object) -> bool:
    """Refuse to evaluate operations whose result could be huge (2 ** 10**9)."""
    if op.op in ("**", "<<") and isinstance(a, int) and isinstance(b, int):
        return b > 256 or (op.op == "**" and abs(a).bit_length() * max(b, 0) > 4096)
    if op.op == "*" and (isinstance(a, tuple) or isinstance(b, tuple)):
        return True
    return False


def _fold_none_test(op: O.Compare, facts: Facts) -> object:
    """``v is None`` where `facts` know that `v` is always None or never is (its type)."""
    for v, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if isinstance(other, O.Const) and other.value is None:
            known = facts.is_none(v)
            if known is not None:
                return known == (op.op == "is")
    return _NOFOLD


def _numpy_own(value: object) -> bool:
    """A NumPy scalar or function (``np.float32``): what it computes may warn, under
    NumPy's error state of the moment (``np.float32(1e300)``), so it runs when the
    program does. (Catching the warning instead would change the process's warning
    filters while the program's threads run.)"""
    owner = getattr(type(value), "__module__", "") if not callable(value) else getattr(value, "__module__", "")
    return isinstance(owner, str) and owner.partition(".")[0] == "numpy"


def _quiet_numpy_call(func: object, args: list[object]) -> object:
    """``np.float32(0.5)``: a pure NumPy callable (a float type) on Python numbers.
    NumPy warns from the floating-point flags its cast sets (``np.float32(1e300)``).
    Evaluated with every flag an error, a call that sets none cannot warn under any
    error state, and folds. (``np.errstate`` is local to this thread's context, so
    the program's threads do not see it.)"""
    import numpy as np

    if not all(type(a) in (bool, int, float) for a in args):
        return _NOFOLD
    try:
        with np.errstate(all="raise"):
            return func(*args)  # type: ignore[operator]
    except Exception:
        return _NOFOLD


def fold(op: O.Op, facts: Facts = UNTYPED) -> object:
    """The constant value of `op`, or `_NOFOLD`."""
    if isinstance(op, O.Compare) and op.op in ("is", "is not"):
        known = _fold_none_test(op, facts)
        if known is not _NOFOLD:
            return known
    vals = []
    for v in op.operands():
        if not isinstance(v, O.Const):
            return _NOFOLD
        vals.append(v.value)
    if any(_numpy_own(v) for v in vals):
        quiet = _NOFOLD
        if isinstance(op, O.Call) and not op.kwnames and facts.pure_callable(vals[0]):
            quiet = _quiet_numpy_call(vals[0], vals[1:])
        return quiet if quiet is not _NOFOLD and facts.fits(quiet, op) else _NOFOLD
    try:
        if isinstance(op, O.BinOp):
            if _too_big(op, *vals):
                return _NOFOLD
            result = binary(op.op).apply(*vals)
        elif isinstance(op, O.UnaryOp):
            if op.op == "~" and type(vals[0]) is bool:
                return _NOFOLD  # (DeprecationWarning since 3.12: each run warns)
            result = unary(op.op).apply(*vals)
        elif isinstance(op, O.Compare):
            if op.op in ("is", "is not") and not all(v is None or isinstance(v, bool) for v in vals):
                return _NOFOLD  # identity of other objects is an implementation detail
            result = compare(op.op).apply(*vals)
        elif isinstance(op, O.Truth):
            result = bool(vals[0])
        elif isinstance(op, O.BuildTuple):
            result = tuple(vals)
        elif isinstance(op, O.TupleGet):
            result = vals[0][op.index]  # type: ignore[index]
        elif isinstance(op, O.Unpack):
            if not isinstance(vals[0], tuple) or len(vals[0]) != op.count:
                return _NOFOLD
            result = vals[0]
        elif isinstance(op, O.Subscript):
            if not isinstance(vals[0], tuple):
                return _NOFOLD
            result = vals[0][vals[1]]  # type: ignore[index, call-overload]
        elif isinstance(op, O.LoadAttr):
            # ``int.bit_length``: a method of a builtin number type (whose attributes
            # cannot be rebound), when it is a primitive.
            if vals[0] not in (int, float, bool, complex):
                return _NOFOLD
            method = getattr(vals[0], op.name)
            return method if facts.pure_callable(method) else _NOFOLD
        elif isinstance(op, O.Call):
            func, *args = vals
            if not facts.pure_callable(func) or isinstance(func, type) and issubclass(func, BaseException):
                return _NOFOLD
            npos = len(args) - len(op.kwnames)
            result = func(*args[:npos], **dict(zip(op.kwnames, args[npos:])))  # type: ignore[operator]
        else:
            return _NOFOLD
    except Exception:
        return _NOFOLD
    return result if foldable_result(result) and facts.fits(result, op) else _NOFOLD


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    changed = False
    # A value that is a compile-time object (a function passed to a compiled callee,
    # or its default; a phi or an unbound-local check of one, `if key is None: key =
    # f`): its uses are that object, which later passes and lowering recognise only as
    # a constant (a call of it was typed, then not lowered). The check stays (it may
    # raise); a phi goes with its uses.
    values: list[O.Value] = [*fn.args, *(op for op in fn.ops() if isinstance(op, (O.Phi, O.Narrow)))]
    for value in values:
        known = facts.known_object(value)
        if known and any(value in op.operands() for op in fn.ops()):
            fn.replace_all_uses(value, O.Const(known[0]))
            changed = True
    folded: dict[O.Value, O.Value] = {}
    for block in fn.blocks:
        for op in block.ops:
            # (an op after one that folded reads its constant at once: a chain of
            # constant ops folds in one sweep)
            use_replacements(op, folded)
            if isinstance(op, (O.ControlOp, O.Phi)):
                continue
            value = fold(op, facts)
            if value is not _NOFOLD:
                folded[op] = O.Const(value)
    fn.replace_ops(folded)
    return changed or bool(folded)


__all__ = ["run", "fold"]
