"""Whether an op may raise, used by dead-code elimination.

Untyped ops may raise (an unknown operand could be anything). Once typed, only the
operations that CPython itself can make raise on these types count; overflow of native
int64 arithmetic does not, since CPython would compute a big int instead. Arithmetic on
NumPy scalars counts: NumPy warns where Python would compute silently.
"""

from __future__ import annotations

from ..ir import ops as O
from .types import RANGE_ITER, UNDEF, NpScalar, options


def _nonzero_const(v: O.Value) -> bool:
    return isinstance(v, O.Const) and isinstance(v.value, (int, float)) and v.value != 0


def may_raise(op: O.Op) -> bool:
    if isinstance(op, O.Narrow) and op.is_none is None:
        return op.value.type is None or UNDEF in options(op.value.type)  # UnboundLocalError
    if isinstance(op, (O.BuildTuple, O.Phi, O.IterValue, O.Narrow)):
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
    if isinstance(op, O.GetIter):
        return op.type != RANGE_ITER
    if isinstance(op, O.BinOp):
        if op.op in ("+", "-", "*", "&", "|", "^"):
            return False
        if op.op in ("/", "//", "%"):
            return not _nonzero_const(op.rhs)
        if op.op in ("<<", ">>"):
            return not (isinstance(op.rhs, O.Const) and op.rhs.value >= 0)  # type: ignore[operator]
        return True  # "**": 0 ** -1 and float overflow raise
    return True
