"""Copy propagation: a phi whose operands are all one value (or the phi itself) is a
copy of that value, so its uses read the value directly.

    %3 = phi [B0: a, B9: %3]     ->    (uses of %3 now use a)
"""

from __future__ import annotations

from ..facts import UNTYPED, Facts
from ..function import Function, replacement
from ..ops import Value


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    copies: dict[Value, Value] = {}
    found = True
    while found:  # (a phi of copies is found to be one in the next sweep)
        found = False
        for block in fn.blocks:
            for phi in block.phis():
                if phi in copies:
                    continue
                # (through the copies found so far: a loop of phis that only carry
                # each other is never made a copy of itself)
                sources = {id(r): r for r in (replacement(copies, v) for v in phi.operands()) if r is not phi}
                if len(sources) == 1:
                    (copies[phi],) = sources.values()
                    found = True
    fn.replace_ops(copies)
    return bool(copies)
