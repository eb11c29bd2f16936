"""Drop the checks of reads that cannot find a local unbound.

The builder wraps every ``LOAD_FAST`` of a value that may be unbound (a merge's phi,
or no value at all) in ``bound`` (`ops.Narrow` with `is_none` None): CPython raises
UnboundLocalError there if it is. Before typing, a check whose value cannot be unbound
(an ordinary definition, or a phi that only ever carries those) is dropped; once
typed, so is one whose value's type has no unbound member.
What remains tests the union's tag and deoptimises.

    %5 = bound %3          (%3: int | float)        ->   uses of %5 read %3
    %5 = bound %4          (%4: int | <unbound>)    ->   kept
"""

from __future__ import annotations

from .. import ops as O
from ..facts import UNTYPED, Facts
from ..function import Function


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    maybe = _maybe_unbound(fn)
    needless: dict[O.Value, O.Value] = {}
    for op in fn.ops():
        if not (isinstance(op, O.Narrow) and op.is_none is None):
            continue
        value = op.value
        known = facts.may_be_unbound(value)  # (typing knows it from the value's type)
        if known is not None:
            bound = not known
        else:
            bound = not isinstance(value, O.Undef) and value not in maybe
        if bound:
            needless[op] = value
    fn.replace_ops(needless)
    return bool(needless)


def _maybe_unbound(fn: Function) -> set[O.Value]:
    """The phis that may carry an unbound value (the least fixpoint: a loop's phi
    that only circulates bound values is bound)."""
    maybe: set[O.Value] = set()
    phis = [op for block in fn.blocks for op in block.phis()]
    again = True
    while again:
        again = False
        for phi in phis:
            if phi not in maybe and any(isinstance(v, O.Undef) or v in maybe for v in phi.operands()):
                maybe.add(phi)
                again = True
    return maybe
