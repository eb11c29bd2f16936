"""Dead-code elimination: remove ops whose results are unused and that cannot have an
effect. An op "can have an effect" if it is impure or may raise; whether it may raise
depends on its operand types, so the pass removes more once the IR is typed.

    %4 = binop a // b    (unused, untyped)   ->   kept: b may be 0
    %4: float = binop x * 2.0  (unused)      ->   removed
"""

from __future__ import annotations

from .. import ops as O
from ..facts import UNTYPED, Facts
from ..function import Function


def removable(op: O.Op, facts: Facts = UNTYPED) -> bool:
    if isinstance(op, (O.Phi, O.IterValue)):
        return True
    if not op.pure:
        return False
    if isinstance(op, O.Call) and isinstance(op.func, O.Const):
        callee = op.func.value
        if isinstance(callee, type) and issubclass(callee, BaseException) and callee.__module__ == "builtins":
            # Building a builtin exception object has no effect. Only those: `int(x)` is
            # a call of a type too, and raises; a user's exception may run any __init__.
            return True
    return not facts.may_raise(op)  # (typing knows which typed ops can raise)


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    live: set[O.Op] = set()
    work: list[O.Op] = [op for op in fn.ops() if not removable(op, facts)]
    live.update(work)
    while work:
        op = work.pop()
        for v in op.operands():
            if isinstance(v, O.Op) and v not in live:
                live.add(v)
                work.append(v)
    changed = False
    for block in fn.blocks:
        kept = [op for op in block.ops if op in live]
        if len(kept) != len(block.ops):
            block.ops = kept
            changed = True
    return changed
