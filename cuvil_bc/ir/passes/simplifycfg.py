"""CFG simplification: branches on constants become jumps, unreachable blocks go, a
block with a single predecessor that jumps to it is merged into that predecessor, and
a branch whose targets are the same block becomes a jump.

    B0: branch True ? B1 : B2      ->    B0: (ops of B1) ...   (B2 removed)
"""

from __future__ import annotations

from .. import ops as O
from ..facts import UNTYPED, Facts
from ..function import BasicBlock, Function


def _drop_incoming(block: BasicBlock, pred: BasicBlock) -> None:
    for phi in block.phis():
        phi.incoming = [(b, v) for b, v in phi.incoming if b is not pred]


def _one_edge(block: BasicBlock, pred: BasicBlock) -> None:
    """`pred` branched to `block` twice and now jumps once: keep one incoming entry
    (both edges carried the same values, since phis are keyed by block)."""
    for phi in block.phis():
        seen = False
        kept = []
        for b, v in phi.incoming:
            if b is pred:
                if seen:
                    continue
                seen = True
            kept.append((b, v))
        phi.incoming = kept


def _set_terminator(block: BasicBlock, op: O.ControlOp) -> None:
    op.line = block.ops[-1].line
    block.ops[-1] = op
    op.block = block


def drop_unreachable(fn: Function) -> bool:
    """Remove the blocks no path from the entry reaches (and their phi entries)."""
    reachable = set(fn.rpo())
    if len(reachable) == len(fn.blocks):
        return False
    for block in fn.blocks:
        if block not in reachable:
            for s in block.successors():
                _drop_incoming(s, block)
    fn.blocks = [b for b in fn.blocks if b in reachable]
    return True


def run(fn: Function, facts: Facts = UNTYPED) -> bool:
    changed = False
    # Branches with a known condition or identical targets.
    for block in fn.blocks:
        term = block.terminator
        if isinstance(term, O.Branch):
            if isinstance(term.cond, O.Const):
                keep, drop = (term.if_true, term.if_false) if bool(term.cond.value) else (term.if_false, term.if_true)
                if drop is not keep:
                    _drop_incoming(drop, block)
                else:
                    _one_edge(keep, block)
                _set_terminator(block, O.Jump(keep))
                changed = True
            elif term.if_true is term.if_false:
                _one_edge(term.if_true, block)
                _set_terminator(block, O.Jump(term.if_true))
                changed = True
    changed = drop_unreachable(fn) or changed
    # Merge a block into its only predecessor when that predecessor only jumps to it.
    merged = True
    while merged:
        merged = False
        preds = fn.predecessors()
        for block in fn.blocks[1:]:
            (pred,) = preds[block] if len(preds[block]) == 1 else (None,)
            if pred is None or not isinstance(pred.terminator, O.Jump) or pred is block:
                continue
            for phi in block.phis():
                fn.replace_all_uses(phi, phi.incoming[0][1])
            body = [op for op in block.ops if not isinstance(op, O.Phi)]
            pred.ops.pop()
            for op in body:
                op.block = pred
                pred.ops.append(op)
            for s in block.successors():
                for phi in s.phis():
                    phi.incoming = [(pred if b is block else b, v) for b, v in phi.incoming]
            fn.blocks.remove(block)
            merged = changed = True
            break
    return changed
