"""The pass pipeline, as one explicit list.

`optimize` runs the passes to a fixpoint. With ``verify_each`` (the test suite turns it
on), the verifier checks the IR after every single pass. The passes know what `facts`
tell them (ir/facts.py): before typing, the IR's structure; after it, what typing hands
them. (The whole compiler's order of stages is cuvil_bc/pipeline.py.)
"""

from __future__ import annotations

from typing import Callable

from .facts import UNTYPED, Facts
from .function import Function
from .passes import checkpoints, constfold, copyprop, dce, simplifycfg, unbound
from .verifier import verify

Pass = Callable[[Function, Facts], bool]

PIPELINE: list[tuple[str, Pass]] = [
    ("copyprop", copyprop.run),  # remove the builder's trivial phis first: it exposes constants
    ("unbound", unbound.run),  # reads of locals that turned out to be always bound
    ("constfold", constfold.run),  # evaluate constant ops with CPython's own semantics
    ("simplifycfg", simplifycfg.run),  # branches on folded conditions, unreachable blocks, merges
    ("dce", dce.run),  # then drop what nothing uses any more
    ("checkpoints", checkpoints.run),  # resume points with nothing written since the last
]

#: Set by the test suite so that every pass is followed by the verifier.
VERIFY_EACH = False


def optimize(fn: Function, facts: Facts = UNTYPED, *, verify_each: bool | None = None, max_rounds: int = 20) -> list[str]:
    """Run the pipeline until nothing changes; return the names of passes that changed."""
    check = VERIFY_EACH if verify_each is None else verify_each
    log: list[str] = []
    for _ in range(max_rounds):
        changed = False
        for name, run in PIPELINE:
            if run(fn, facts):
                changed = True
                log.append(name)
            if check:
                verify(fn, typed=facts.typed)
        if not changed:
            break
    return log
