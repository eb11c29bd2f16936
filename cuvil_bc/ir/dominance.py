"""Dominators and natural loops of an IR function as it is now (the algorithms are
cfg/dominance.py's)."""

from __future__ import annotations

from typing import Callable

from ..cfg.dominance import dominates, immediate_dominators
from ..cfg.dominance import natural_loops as _natural_loops
from .function import BasicBlock, Function


def dominators(fn: Function) -> dict[BasicBlock, BasicBlock | None]:
    """Block -> its immediate dominator (the entry: None); unreachable blocks are not in it."""
    preds = fn.predecessors()
    return immediate_dominators(fn.rpo(), preds.__getitem__)


def dominance(fn: Function) -> Callable[[BasicBlock, BasicBlock], bool]:
    """``dominates(a, b)``: whether block `a` dominates block `b` in `fn` as it is now."""
    idom = dominators(fn)
    return lambda a, b: dominates(idom, a, b)


def natural_loops(fn: Function) -> dict[BasicBlock, set[BasicBlock]]:
    """Loop header -> the blocks of its loop (the header's natural loops, merged)."""
    preds = fn.predecessors()
    return _natural_loops(fn.blocks, lambda b: b.successors(), preds.__getitem__, dominators(fn))
