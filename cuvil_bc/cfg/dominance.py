"""Dominators and natural loops of any control-flow graph: the decoded code's blocks
(graph.py) and the IR's (ir/dominance.py) use the same two algorithms."""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

N = TypeVar("N", bound=Hashable)


def immediate_dominators(order: list[N], preds: Callable[[N], Iterable[N]]) -> dict[N, N | None]:
    """Node -> its immediate dominator (the entry: None), for the nodes of `order`, a
    reverse postorder from the entry ``order[0]`` (Cooper, Harvey and Kennedy's
    iterative algorithm). Nodes not in `order` are unreachable, and not in the result."""
    entry = order[0]
    number = {b: n for n, b in enumerate(order)}
    idom: dict[N, N | None] = {entry: entry}

    def intersect(a: N, b: N) -> N:
        while a is not b:
            while number[a] > number[b]:
                a = idom[a]  # type: ignore[assignment]
            while number[b] > number[a]:
                b = idom[b]  # type: ignore[assignment]
        return a

    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            done = [p for p in preds(b) if p in idom and p in number]
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom.get(b) is not new:
                idom[b] = new
                changed = True
    idom[entry] = None
    return idom


def dominates(idom: dict[N, N | None], a: N, b: N | None) -> bool:
    """Whether `a` dominates `b` (every node dominates itself)."""
    while b is not None:
        if b is a:
            return True
        b = idom.get(b)
    return False


def natural_loops(
    nodes: Iterable[N], succs: Callable[[N], Iterable[N]], preds: Callable[[N], Iterable[N]], idom: dict[N, N | None]
) -> dict[N, set[N]]:
    """Loop header -> the nodes of its loop: for each back edge (to a node that
    dominates its source), the nodes that reach the source without passing the
    header; a header's loops are merged. Unreachable nodes (not in `idom`) are in none."""
    loops: dict[N, set[N]] = {}
    for node in nodes:
        if node not in idom:
            continue
        for succ in succs(node):
            if dominates(idom, succ, node):
                body = loops.setdefault(succ, {succ})
                work = [node]
                while work:
                    n = work.pop()
                    if n not in body:
                        body.add(n)
                        work.extend(p for p in preds(n) if p in idom)
    return loops
