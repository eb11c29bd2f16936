"""The pass pipeline, as one explicit list.

`optimize` runs the passes to a fixpoint. With ``verify_each`` (the test suite turns it
on), the verifier checks the IR after every single pass.
"""

from __future__ import annotations

from typing import Callable

from .function import Function
from .passes import constfold, copyprop, dce, simplifycfg, unbound
from .verifier import verify

Pass = Callable[[Function], bool]

PIPELINE: list[tuple[str, Pass]] = [
    ("copyprop", copyprop.run),  # remove the builder's trivial phis first: it exposes constants
    ("unbound", unbound.run),  # reads of locals that turned out to be always bound
    ("constfold", constfold.run),  # evaluate constant ops with CPython's own semantics
    ("simplifycfg", simplifycfg.run),  # branches on folded conditions, unreachable blocks, merges
    ("dce", dce.run),  # then drop what nothing uses any more
]

#: Set by the test suite so that every pass is followed by the verifier.
VERIFY_EACH = False


def optimize(fn: Function, *, typed: bool = False, verify_each: bool | None = None, max_rounds: int = 20) -> list[str]:
    """Run the pipeline until nothing changes; return the names of passes that changed."""
    check = VERIFY_EACH if verify_each is None else verify_each
    log: list[str] = []
    for _ in range(max_rounds):
        changed = False
        for name, run in PIPELINE:
            if run(fn):
                changed = True
                log.append(name)
            if check:
                verify(fn, typed=typed)
        if not changed:
            break
    return log
