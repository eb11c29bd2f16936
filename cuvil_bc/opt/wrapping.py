"""Int arithmetic whose result is only ever observed modulo 2**64, which native code
may then compute in wrapping 64-bit arithmetic and still give CPython's exact values.

The low 64 bits of ``a + b``, ``a - b``, ``a * b``, ``a << k`` (a constant ``k >= 0``),
``-a``, ``~a``, ``a & b``, ``a | b`` and ``a ^ b`` depend only on the low 64 bits of
the operands. So when every use of such a value keeps only its low 64 bits (a mask
``v & m`` with ``0 <= m < 2**64``, or another such op whose own value is only
observed that way), none of its other bits are ever seen: the masked results are
exact even where the unmasked values left int64 long before. A hash or random
number step is the typical case::

    s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF

Values that a resume point hands to the interpreter, that are returned, compared,
shifted right, divided, converted or passed on are observed whole, and so are the
values they are computed from: those keep their overflow tests.

`wrapping_ops(fn)` is the greatest set of such values (a phi included, so a state
carried around a loop and masked only after it wraps too).
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.function import Function
from ..typing.infer import value_type
from ..typing.types import BOOL, INT, UINT, UINT64_MAX, Type, options

#: The operators whose result's low 64 bits follow from their operands' low 64 bits.
RING_OPS = ("+", "-", "*", "&", "|", "^")


def _integral(t: Type) -> bool:
    """An int, bool or uint, or a union of them (split per member by lowering)."""
    return all(o in (BOOL, INT, UINT) for o in options(t))


def _candidate(op: O.Op) -> bool:
    if op.type != INT:
        return False
    if isinstance(op, O.BinOp):
        if not all(_integral(value_type(v)) for v in (op.lhs, op.rhs)):
            return False
        if op.op in RING_OPS:
            return True
        return op.op == "<<" and isinstance(op.rhs, O.Const) and type(op.rhs.value) is int and 0 <= op.rhs.value < 64
    if isinstance(op, O.UnaryOp):
        return op.op in ("-", "~") and _integral(value_type(op.operand))
    return isinstance(op, O.Phi)


def _masks(user: O.Op, v: O.Value) -> bool:
    """Whether `user` is ``v & m`` (either side) with a constant ``0 <= m < 2**64``, or
    a uint mask: it keeps only low bits of `v`."""
    if not (isinstance(user, O.BinOp) and user.op == "&"):
        return False
    other = user.rhs if user.lhs is v else user.lhs
    if value_type(other) == UINT:
        return True
    return isinstance(other, O.Const) and type(other.value) is int and 0 <= other.value <= UINT64_MAX


def wrapping_ops(fn: Function, uses: dict[O.Value, list[O.Op]] | None = None) -> set[O.Op]:
    """The int ops and phis of `fn` whose values are only observed modulo 2**64."""
    uses = fn.uses() if uses is None else uses
    wraps = {op for op in fn.ops() if _candidate(op)}
    changed = True
    while changed:
        changed = False
        for op in list(wraps):
            for user in uses.get(op, []):
                if _masks(user, op):
                    continue
                if user in wraps and not (isinstance(user, O.BinOp) and user.op == "<<" and user.rhs is op):
                    continue
                wraps.discard(op)
                changed = True
                break
    return wraps
