"""Checks the IR's invariants; tests run it after every pass.

Structure first (terminators, block membership, phi placement and arity, successors
inside the function), then dominance (every definition dominates its uses), then, for
typed IR, that every value has a type.
"""

from __future__ import annotations

from . import ops as O
from .dominance import dominance
from .function import BasicBlock, Function


class VerifyError(AssertionError):
    pass


def verify(fn: Function, *, typed: bool = False) -> None:
    errors = _check(fn, typed)
    if errors:
        from .printer import format_function

        raise VerifyError("\n".join(errors) + "\n" + format_function(fn))


def _check(fn: Function, typed: bool) -> list[str]:
    errors: list[str] = []
    blocks = set(fn.blocks)
    if not fn.blocks:
        return ["function has no blocks"]
    defined: dict[O.Value, tuple[BasicBlock, int]] = {}
    for b in fn.blocks:
        if not b.ops or not isinstance(b.ops[-1], O.ControlOp):
            errors.append(f"{b.name}: does not end in a control op")
            continue
        seen_non_phi = False
        for i, op in enumerate(b.ops):
            if op.block is not b:
                errors.append(f"{b.name}: op {i} ({type(op).__name__}) does not know its block")
            if isinstance(op, O.ControlOp) and i != len(b.ops) - 1:
                errors.append(f"{b.name}: control op {type(op).__name__} before the end")
            if isinstance(op, O.Phi):
                if seen_non_phi:
                    errors.append(f"{b.name}: phi after a non-phi op")
            else:
                seen_non_phi = True
            if op in defined:
                errors.append(f"{b.name}: op {type(op).__name__} appears twice")
            defined[op] = (b, i)
        for s in b.successors():
            if s not in blocks:
                errors.append(f"{b.name}: successor {s.name} is not in the function")
    if errors:
        return errors

    preds = fn.predecessors()
    reachable = set(fn.rpo())
    for b in fn.blocks:
        for phi in b.phis():
            inc = [blk for blk, _ in phi.incoming]
            if sorted(map(id, inc)) != sorted(map(id, preds[b])):
                errors.append(f"{b.name}: phi has incoming {inc}, predecessors are {preds[b]}")
        if isinstance(b.terminator, O.ForIter):
            body = b.terminator.body
            if len(preds[body]) != 1:
                errors.append(f"{b.name}: foriter body {body.name} has more than one predecessor")

    dominates = dominance(fn)
    args = set(fn.args)
    for b in fn.blocks:
        if b not in reachable:
            continue
        for i, op in enumerate(b.ops):
            for v in op.operands():
                if isinstance(v, (O.Const, O.Undef)):
                    continue
                if isinstance(v, O.Arg):
                    if v not in args:
                        errors.append(f"{b.name}: uses an argument of another function")
                    continue
                if v not in defined:
                    errors.append(f"{b.name}: {type(op).__name__} uses a value defined in no block")
                    continue
                db, di = defined[v]
                if isinstance(op, O.Phi):
                    src = next(blk for blk, val in op.incoming if val is v)
                    if db not in reachable or not dominates(db, src):
                        errors.append(f"{b.name}: phi operand from {src.name} not dominated by its definition in {db.name}")
                elif db is b:
                    if di >= i:
                        errors.append(f"{b.name}: {type(op).__name__} uses a value defined later in the block")
                elif db not in reachable or not dominates(db, b):
                    errors.append(f"{b.name}: {type(op).__name__} uses a value from {db.name}, which does not dominate it")
            if isinstance(op, O.IterValue):
                pred = [p for p in preds[b]]
                if len(pred) != 1 or not isinstance(pred[0].terminator, O.ForIter) or pred[0].terminator.body is not b:
                    errors.append(f"{b.name}: itervalue outside a foriter body")
    if typed:
        for a in fn.args:
            if a.type is None:
                errors.append(f"argument {a.name} has no type")
        for op in fn.ops():
            if not isinstance(op, O.ControlOp) and op.type is None and op.block in reachable:
                errors.append(f"{op.block.name}: {type(op).__name__} has no type")  # type: ignore[union-attr]
    return errors
