"""Whether an op may raise, used by dead-code elimination.

Untyped ops may raise (an unknown operand could be anything). Once typed, only the
operations that CPython itself can make raise on these types count; overflow of native
int64 arithmetic does not, since CPython would compute a big int instead. But such an
int may then be beyond a float's range, and converting it raises OverflowError (in
``(x << 1100) + 0.5`` the shift cannot raise, the addition can): an int operand that
is not an argument or a small constant may be that big. Arithmetic on NumPy scalars
counts: NumPy warns where Python would compute silently.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.operators import NEGATIVE_SHIFT, NEVER, ZERO_DIVISOR, binary
from .primitives import lookup
from .types import COMPLEX, FLOAT, INT, RANGE_ITER, UNDEF, NpScalar, options


def _nonzero_const(v: O.Value) -> bool:
    return isinstance(v, O.Const) and isinstance(v.value, (int, float)) and v.value != 0


def _maybe_huge(v: O.Value) -> bool:
    """Whether `v` may be an int beyond a float's range in CPython: not an argument
    (native code takes int64 ones only) or a constant that fits."""
    if isinstance(v, O.Const):
        return type(v.value) is int and v.value.bit_length() > 1000
    return not isinstance(v, O.Arg) and INT in options(v.type)


def _converts_huge(op: O.BinOp) -> bool:
    """Whether `op` may convert an int beyond a float's range to a float: true division
    converts ints, the others an int that meets a float or a complex."""
    operands = (op.lhs, op.rhs)
    if not any(_maybe_huge(v) for v in operands):
        return False
    return op.op == "/" or any(t in (FLOAT, COMPLEX) for v in operands for t in options(v.type))  # type: ignore[arg-type]


def may_raise(op: O.Op) -> bool:
    if isinstance(op, O.Narrow) and op.is_none is None:
        return op.value.type is None or UNDEF in options(op.value.type)  # UnboundLocalError
    if isinstance(op, (O.BuildTuple, O.Phi, O.Select, O.IterValue, O.Narrow)):
        return False
    if isinstance(op, O.TupleGet):
        return op.tup.type is None  # once typed, the tuple's length is known
    if op.type is None or any(v.type is None for v in op.operands()):
        return True
    if isinstance(op, (O.BinOp, O.UnaryOp)) and any(
        isinstance(t, NpScalar) for v in op.operands() for t in options(v.type)  # type: ignore[arg-type]
    ):
        return True  # NumPy warns (overflow, invalid value), also as one member of a union
    if isinstance(op, (O.Compare, O.Truth, O.UnaryOp, O.Unpack)):
        return False
    if isinstance(op, O.Call) and isinstance(op.func, O.Const) and not op.kwnames:
        row = lookup(op.func.value)
        # (a NumPy scalar argument may warn, as in arithmetic)
        if row is None or any(isinstance(t, NpScalar) or t in row.raises_for for v in op.args for t in options(v.type)):  # type: ignore[arg-type]
            return True
        if row.obj is range:  # of ints: only a zero step raises
            return len(op.args) == 3 and not _nonzero_const(op.args[2])
        return row.may_raise
    if isinstance(op, O.GetIter):
        return op.type != RANGE_ITER
    if isinstance(op, O.BinOp):
        if _converts_huge(op):
            return True
        raises = binary(op.op).raises
        if raises == NEVER:
            return False
        if raises == ZERO_DIVISOR:
            return not _nonzero_const(op.rhs)
        if raises == NEGATIVE_SHIFT:
            return not (isinstance(op.rhs, O.Const) and op.rhs.value >= 0)  # type: ignore[operator]
        return True  # "**": 0 ** -1 and float overflow raise
    return True
