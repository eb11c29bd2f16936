"""Resume regions: the loops of a function that writes during which nothing is
written, whose deoptimisations all resume at the resume point just before the loop.

A function that writes deoptimises precisely: a guard that fails resumes the
interpreter at the last resume point, so NumPy's float warnings are tested where each
value is made, one branch per np.float64 result. A branch that leaves the loop keeps
LLVM from unrolling or vectorizing it; a reader's warnings cost no branch, because a
failed test re-runs the whole call, which nothing it did can have changed
(`finiteness.FloatTests.deferred`).

A loop that only reads, inside a function that writes (``s += a[i, k] * b[k, j]``
before ``c[i, j] = s``), is such a call in small. Nothing it does is seen by anyone
until it exits, so the interpreter can redo it from the resume point before it
(`Region.checkpoint`) and compute the same values, warn the same warnings and raise
the same exception. So in its blocks

* every deoptimisation, a bounds test's, an int overflow's, a raise's, resumes at
  that checkpoint, not at the loop's own resume points;
* NumPy's float warnings of values that only flow on into arithmetic are deferred
  as in a reader: or-ed into the emitter's flags (`Emitter.deferring`), which each
  exit of the region tests, resuming at the checkpoint when one is set. The
  interpreter then warns where CPython does. A value that a comparison or a call
  sees is tested where it is made (`FloatTests.defers_in_region`): deferred, an
  infinity could pick a branch or a loop's length first.

A loop qualifies (`_region`) when none of its ops has an effect or holds a reference
of its own (`_pure`: arithmetic, comparisons, element reads, pure primitives such as
``len``, ``min`` and ``math.sqrt``; no store, no other call, no view), every loop in
it is a ``for`` over a range (so only ints decide how long it runs), it has one
predecessor outside it whose last resume point is followed only by such ops, every
block it exits to has all its predecessors in it (the exit's test goes there), and
every array the checkpoint hands over stays held to the exits (`ownership.Liveness`).
The outermost loop that qualifies is the region; loops inside it belong to it.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.dominance import natural_loops
from ..ir.function import BasicBlock, Function
from ..records import record
from ..typing.infer import value_type
from ..typing.primitives import is_pure_callable
from ..typing.types import RANGE_ITER
from .ownership import Liveness, is_owned, owner


@record(frozen=True, eq=False)
class Region:
    """A loop of a function that writes, whose blocks (`blocks`) neither write nor
    hold references; its deoptimisations resume at `checkpoint` (in the loop's only
    predecessor outside it), and each of `exits` tests the deferred warnings first."""

    checkpoint: O.Checkpoint
    header: BasicBlock
    blocks: frozenset[BasicBlock]
    exits: tuple[BasicBlock, ...]


def resume_regions(fn: Function, liveness: Liveness | None) -> dict[BasicBlock, Region]:
    """Each block of a resume region -> its region (see the module docstring)."""
    if not fn.writes:
        return {}
    loops = natural_loops(fn)
    preds = fn.predecessors()
    out: dict[BasicBlock, Region] = {}
    for header, body in sorted(loops.items(), key=lambda kv: -len(kv[1])):  # outermost first
        if header in out:
            continue
        region = _region(header, frozenset(body), loops, preds, liveness)
        if region is not None:
            for block in body:
                out[block] = region
    return out


def _region(
    header: BasicBlock,
    body: frozenset[BasicBlock],
    loops: dict[BasicBlock, set[BasicBlock]],
    preds: dict[BasicBlock, list[BasicBlock]],
    liveness: Liveness | None,
) -> Region | None:
    for block in body:
        if block in loops and not range_loop(block, loops[block]):
            return None
        if not all(_pure(op) for op in block.ops):
            return None
    outside = [p for p in preds[header] if p not in body]
    if len(outside) != 1:
        return None
    entry = outside[0]
    marks = [k for k, op in enumerate(entry.ops) if isinstance(op, O.Checkpoint)]
    if not marks or not all(_pure(op) for op in entry.ops[marks[-1] + 1 :]):
        return None
    checkpoint = entry.ops[marks[-1]]
    assert isinstance(checkpoint, O.Checkpoint)
    exits: list[BasicBlock] = []
    for block in body:
        for succ in block.successors():
            if succ in body or succ in exits or isinstance(succ.terminator, O.Raise):
                continue  # (a raise resumes at the checkpoint: Resumes.raise_exit)
            if any(p not in body for p in preds[succ]):
                return None
            exits.append(succ)
    if liveness is not None:
        handed = {owner(v) for v in checkpoint.values if is_owned(owner(v))}
        if any(not handed <= liveness.live_in[b] for b in [header, *exits]):
            return None  # (released on the way: the checkpoint could not hand it over)
    return Region(checkpoint, header, body, tuple(exits))


def range_loop(header: BasicBlock, body: set[BasicBlock] | frozenset[BasicBlock]) -> bool:
    """Whether the loop `body` headed by `header` is a ``for ... in range(...)`` loop
    over one iterator made before the loop: its ForIter's range iterator is defined
    outside `body`. (Code entered inside a nest of loops, as on-stack replacement
    enters it, has a loop whose header phi merges the inner loop's iterator with those
    that each later pass of the outer loop makes.)"""
    term = header.terminator
    if not isinstance(term, O.ForIter) or value_type(term.iterator) != RANGE_ITER:
        return False
    block = term.iterator.block
    return block is not None and block not in body


def _pure(op: O.Op) -> bool:
    """Whether running `op` again from the region's checkpoint changes nothing anyone
    sees: no write, no call but a pure primitive's, no reference of its own."""
    if isinstance(op, (O.StoreItem, O.Return, O.Raise)) or is_owned(op):
        return False
    if isinstance(op, O.Call):
        return isinstance(op.func, O.Const) and is_pure_callable(op.func.value)
    return True
