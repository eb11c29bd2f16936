"""Drop the resume points that add nothing: a checkpoint after another one of the same
block with nothing written between them.

A failed guard resumes the interpreter at the last checkpoint before it, and the
interpreter redoes what native code did since (see ops.Checkpoint). Between two
checkpoints with no write between them, it may as well redo it from the first: the
second only kept values alive and cut short the chains that one finiteness test may
cover (opt/finiteness.py). Unrolled loops (opt/unroll.py) and merged blocks leave
many such pairs.

    checkpoint (acc=%3, ...)            checkpoint (acc=%3, ...)
    %5 = binop %3 + %4           ->     %5 = binop %3 + %4
    checkpoint (acc=%5, ...)            %6 = binop %5 + %4
    %6 = binop %5 + %4

What counts as a write: an item assignment, or a call of anything but a function
known to be pure (a compiled callee that writes hands its call to CPython).
"""

from __future__ import annotations

from .. import ops as O
from ..facts import UNTYPED, Facts
from ..function import Function


def _writes(op: O.Op, facts: Facts) -> bool:
    if isinstance(op, O.StoreItem):
        return True
    if isinstance(op, O.Call):
        callee = op.func.value if isinstance(op.func, O.Const) else None
        return not (callee is range or facts.pure_callable(callee))
    return False


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    changed = False
    for block in fn.blocks:
        kept: list[O.Op] = []
        seen = False  # a checkpoint since the last write
        for op in block.ops:
            if isinstance(op, O.Checkpoint):
                if seen:
                    changed = True
                    continue
                seen = True
            elif _writes(op, facts):
                seen = False
            kept.append(op)
        block.ops = kept
    return changed
