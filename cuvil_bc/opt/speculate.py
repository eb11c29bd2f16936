"""Hoist the few ops of a small `if` arm above the branch, so that LLVM can replace the
branch by a select (a `cmov`) instead of a jump the CPU mispredicts.

    P: ... branch %c ? A : M            P: ... %2 = binop x * 3   (speculative)
    A: %2 = binop x * 3                         %3 = binop %2 + 1 (speculative)
       %3 = binop %2 + 1        ->              branch %c ? A : M
       jump M                          A: jump M
    M: %4 = phi [A: %3, P: %5]         M: %4 = phi [A: %3, P: %5]

Hoisted ops now run on both paths. Their values are harmless where they are not used,
but their guards (an int64 overflow) may now fail on a path where CPython would not
have executed the op at all. Such a guard is marked speculative: when it fails, the
call falls back to CPython like any other deoptimisation (so the result stays exact,
which is why this pass is only for functions whose calls can be re-run), and the
dispatcher then recompiles the function without speculation, so that a speculation that
does not pay is tried only once.

Only typed ops whose every guard is an overflow check are hoisted: division, modulo and
power are left in place, because "divide only when the divisor is not zero" is the
very pattern such a branch usually exists for.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..ir.operators import binary, compare, unary
from ..typing.infer import value_type
from ..typing.types import BOOL, FLOAT, INT

#: Ops hoisted from one arm at most: beyond that, the select saves less than the work
#: added to the path that did not need it.
MAX_OPS = 4

SCALARS = (INT, FLOAT, BOOL)


def cheap(op: O.Op) -> bool:
    """Whether `op` may run where CPython would not have run it: a cheap op on ints,
    floats and bools whose only guard is an overflow check (opt/ifconvert.py, too)."""
    if op.type not in SCALARS:
        return False
    if not all(value_type(v) in SCALARS for v in op.operands()):
        return False
    if isinstance(op, O.BinOp):
        return binary(op.op).cheap or (op.op == ">>" and isinstance(op.rhs, O.Const) and isinstance(op.rhs.value, int) and 0 <= op.rhs.value < 64)
    if isinstance(op, O.UnaryOp):
        return unary(op.op).cheap
    if isinstance(op, O.Compare):
        return compare(op.op).cheap
    return isinstance(op, O.Truth)


def _body(arm: BasicBlock) -> list[O.Op]:
    """The arm's ops but its resume points, which stay where they are: a hoisted op's
    guard resumes at the head's last one, before the branch, which is as valid."""
    return [op for op in arm.ops[:-1] if not isinstance(op, O.Checkpoint)]


def _hoistable(arm: BasicBlock, head: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> bool:
    body = _body(arm)
    return (
        arm is not head
        and preds.get(arm) == [head]
        and isinstance(arm.terminator, O.Jump)
        and 0 < len(body) <= MAX_OPS
        and all(cheap(op) for op in body)
    )


def run(fn: Function) -> bool:
    preds = fn.predecessors()
    changed = False
    for head in fn.blocks:
        term = head.terminator
        if not isinstance(term, O.Branch):
            continue
        for arm in (term.if_true, term.if_false):
            if not _hoistable(arm, head, preds):
                continue
            for op in _body(arm):
                op.speculative = True
                head.insert(len(head.ops) - 1, op)
                arm.ops.remove(op)
            changed = True
    return changed
