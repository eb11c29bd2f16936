"""Copy propagation: a phi whose operands are all one value (or the phi itself) is a
copy of that value, so its uses read the value directly.

    %3 = phi [B0: a, B9: %3]     ->    (uses of %3 now use a)
"""

from __future__ import annotations

from ..facts import UNTYPED, Facts
from ..function import Function


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    changed = False
    again = True
    while again:
        again = False
        for block in fn.blocks:
            for phi in block.phis():
                sources = {id(v): v for v in phi.operands() if v is not phi}
                if len(sources) == 1:
                    (value,) = sources.values()
                    fn.replace_all_uses(phi, value)
                    block.ops.remove(phi)
                    again = changed = True
    return changed
