"""Basic blocks over the neutral instructions, with dominators and natural loops.

A block is a maximal run of instructions with one entry and a terminator last. The
fallthrough of a conditional jump is an explicit successor, so every edge is visible::

    0 LOAD_FAST n; 1 POP_JUMP_IF_FALSE -> 4; 2 LOAD_CONST 1; 3 RETURN_VALUE; 4 ...
    ->  B0 [0..1] succs (B4, B2)   B2 [2..3] succs ()   B4 [4..] ...

Successor order: for a conditional jump, (taken, fallthrough); for FOR_ITER,
(exit, body).
"""

from __future__ import annotations

from ..decode import CONDITIONAL, UNCONDITIONAL, Decoded, Instr
from ..records import field, record
from .dominance import immediate_dominators, natural_loops


@record(eq=False)
class Block:
    """Instructions `start` to `end` (inclusive) of the decoded list."""

    index: int  # the index of its first instruction: a stable, readable name
    start: int
    end: int
    succs: list["Block"] = field(default_factory=list)
    preds: list["Block"] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"B{self.index}"

    def __repr__(self) -> str:
        return self.name

    def instrs(self, decoded: Decoded) -> tuple[Instr, ...]:
        return decoded.instrs[self.start : self.end + 1]


@record
class CFG:
    decoded: Decoded
    blocks: list[Block]  # in instruction order; blocks[0] is the entry
    idom: dict[int, Block | None]  # block index -> immediate dominator
    loops: dict[int, set[int]]  # header block index -> block indices of its natural loop

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def rpo(self) -> list[Block]:
        """Reachable blocks in reverse postorder."""
        return _rpo(self.entry)

    def dominates(self, a: Block, b: Block) -> bool:
        node: Block | None = b
        while node is not None:
            if node is a:
                return True
            node = self.idom[node.index]
        return False

    def text(self) -> str:
        """A deterministic listing of blocks, edges, dominators and loops."""
        lines = []
        for b in self.blocks:
            idom = self.idom.get(b.index)
            lines.append(
                f"{b.name} [{b.start}..{b.end}] succs=({', '.join(s.name for s in b.succs)})"
                f" preds=({', '.join(p.name for p in b.preds)}) idom={idom.name if idom else '-'}"
            )
        for header, body in sorted(self.loops.items()):
            lines.append(f"loop B{header}: {', '.join(f'B{i}' for i in sorted(body))}")
        for r in self.decoded.regions:
            lines.append(f"try {r.start}..{r.end} -> handler {r.target}")
        return "\n".join(lines)


def build_cfg(decoded: Decoded) -> CFG:
    instrs = decoded.instrs
    leaders = {0}
    for i, ins in enumerate(instrs):
        if ins.target is not None:
            leaders.add(ins.target)
        if ins.op in UNCONDITIONAL or ins.op in CONDITIONAL:
            if i + 1 < len(instrs):
                leaders.add(i + 1)
    for r in decoded.regions:
        leaders.add(r.target)
    starts = sorted(leaders)
    blocks = [Block(s, s, (starts[k + 1] if k + 1 < len(starts) else len(instrs)) - 1) for k, s in enumerate(starts)]
    by_start = {b.start: b for b in blocks}
    for b in blocks:
        last = instrs[b.end]
        if last.target is not None:
            b.succs.append(by_start[last.target])
        if last.op not in UNCONDITIONAL:
            if b.end + 1 >= len(instrs):
                raise AssertionError("control falls off the end of the code")
            b.succs.append(by_start[b.end + 1])
        for s in b.succs:
            s.preds.append(b)
    idom = _dominators(blocks[0])
    cfg = CFG(decoded, blocks, idom, {})
    cfg.loops = _natural_loops(cfg)
    return cfg


def _rpo(entry: Block) -> list[Block]:
    order: list[Block] = []
    seen: set[int] = set()
    stack: list[tuple[Block, int]] = [(entry, 0)]
    seen.add(entry.index)
    while stack:
        block, k = stack.pop()
        if k < len(block.succs):
            stack.append((block, k + 1))
            succ = block.succs[k]
            if succ.index not in seen:
                seen.add(succ.index)
                stack.append((succ, 0))
        else:
            order.append(block)
    order.reverse()
    return order


def _dominators(entry: Block) -> dict[int, Block | None]:
    return {b.index: d for b, d in immediate_dominators(_rpo(entry), lambda b: b.preds).items()}


def _natural_loops(cfg: CFG) -> dict[int, set[int]]:
    idom = {b: cfg.idom[b.index] for b in cfg.rpo()}
    loops = natural_loops(cfg.blocks, lambda b: b.succs, lambda b: b.preds, idom)
    return {header.index: {b.index for b in body} for header, body in loops.items()}
