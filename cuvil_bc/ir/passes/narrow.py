"""Insert `Narrow` ops after ``is None`` tests, so that typing can use them.

In the block that only ``v is not None`` leads to, uses of `v` read a `Narrow` of it
instead, whose type drops None (and the other way round):

    %1 = compare r is None              %1 = compare r is None
    branch %1 ? B1 : B2          ->     branch %1 ? B1 : B2
    B2: %2 = binop r * 2                B2: %3 = narrow r is not None
                                            %2 = binop %3 * 2

When the successor is a merge point (``if y is None: y = 10``), the edge is split and
the `Narrow` goes into the new block, where the merge's phi picks it up. Runs once,
before typing.
"""

from __future__ import annotations

from .. import ops as O
from ..function import BasicBlock, Function
from ..dominance import dominance


def _none_test(cond: O.Value) -> tuple[O.Value, bool] | None:
    """(v, True) for ``v is None``, (v, False) for ``v is not None``."""
    if isinstance(cond, O.Truth):
        cond = cond.value
    if isinstance(cond, O.Compare) and cond.op in ("is", "is not"):
        for v, other in ((cond.lhs, cond.rhs), (cond.rhs, cond.lhs)):
            if isinstance(other, O.Const) and other.value is None and not isinstance(v, O.Const):
                return v, cond.op == "is"
    return None


def run(fn: Function) -> bool:
    preds = fn.predecessors()
    dominates = dominance(fn)

    changed = False
    for block in list(fn.blocks):
        term = block.terminator
        if not isinstance(term, O.Branch) or term.if_true is term.if_false:
            continue
        test = _none_test(term.cond)
        if test is None:
            continue
        value, is_none = test
        for succ, holds in ((term.if_true, is_none), (term.if_false, not is_none)):
            if any(isinstance(o, O.Narrow) and o.value is value for o in succ.ops):
                continue
            if len(preds[succ]) != 1:
                _narrow_on_edge(fn, block, succ, value, holds)
                changed = True
                continue
            narrowed = succ.insert(len(succ.phis()), O.Narrow(value, holds))
            narrowed.line = term.line
            for other in fn.blocks:
                for op in other.ops:
                    if op is narrowed or value not in op.operands():
                        continue
                    if isinstance(op, O.Phi):
                        op.incoming = [
                            (b, narrowed if v is value and dominates(succ, b) else v) for b, v in op.incoming
                        ]
                    elif dominates(succ, other):
                        op.replace_operand(value, narrowed)
            changed = True
    return changed


def _narrow_on_edge(fn: Function, pred: BasicBlock, succ: BasicBlock, value: O.Value, holds: bool) -> None:
    """Split the edge pred -> succ with a block that narrows `value` for succ's phis."""
    edge = BasicBlock(fn.new_label())
    narrowed = edge.append(O.Narrow(value, holds), pred.terminator.line)
    edge.append(O.Jump(succ), pred.terminator.line)
    fn.blocks.insert(fn.blocks.index(succ), edge)
    pred.terminator.replace_successor(succ, edge)
    for phi in succ.phis():
        phi.incoming = [(edge, narrowed if v is value else v) if b is pred else (b, v) for b, v in phi.incoming]
