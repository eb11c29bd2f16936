"""Blocks and functions of the SSA IR."""

from __future__ import annotations

from typing import Iterator

from .ops import Arg, ControlOp, Op, Phi, Value


class BasicBlock:
    def __init__(self, label: int) -> None:
        self.label = label  # stable name: the first bytecode instruction index, or a fresh number
        self.ops: list[Op] = []

    @property
    def name(self) -> str:
        return f"B{self.label}"

    def __repr__(self) -> str:
        return self.name

    @property
    def terminator(self) -> ControlOp:
        last = self.ops[-1]
        assert isinstance(last, ControlOp), f"{self.name} has no terminator"
        return last

    def successors(self) -> list["BasicBlock"]:
        return self.terminator.successors()

    def phis(self) -> list[Phi]:
        return [op for op in self.ops if isinstance(op, Phi)]

    def append(self, op: Op, line: int | None = None) -> Op:
        op.block = self
        if line is not None:
            op.line = line
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Op) -> Op:
        op.block = self
        self.ops.insert(index, op)
        return op


class Function:
    """One function's IR: its arguments and blocks (``blocks[0]`` is the entry)."""

    def __init__(self, name: str, filename: str, firstlineno: int, args: list[Arg]) -> None:
        self.name = name
        self.filename = filename
        self.firstlineno = firstlineno
        self.args = args
        self.blocks: list[BasicBlock] = []
        self.writes = False  # has item assignments: see ops.Checkpoint

    @property
    def entry(self) -> BasicBlock:
        return self.blocks[0]

    def location(self, op: Op | None = None) -> str:
        line = op.line if op is not None and op.line is not None else self.firstlineno
        return f"{self.filename}:{line}"

    def ops(self) -> Iterator[Op]:
        for b in self.blocks:
            yield from b.ops

    def predecessors(self) -> dict[BasicBlock, list[BasicBlock]]:
        preds: dict[BasicBlock, list[BasicBlock]] = {b: [] for b in self.blocks}
        for b in self.blocks:
            for s in b.successors():
                preds[s].append(b)
        return preds

    def uses(self) -> dict[Value, list[Op]]:
        users: dict[Value, list[Op]] = {}
        for op in self.ops():
            for v in op.operands():
                users.setdefault(v, []).append(op)
        return users

    def replace_all_uses(self, old: Value, new: Value) -> None:
        self.replace_uses({old: new})

    def replace_uses(self, new: dict[Value, Value]) -> None:
        """Every use of a key of `new` uses its value instead, in one walk over the
        ops (a pass that replaces many values collects them first). A value that is
        itself a key is replaced in turn: the chain's end is used."""
        if new:
            for op in self.ops():
                use_replacements(op, new)

    def replace_ops(self, new: dict[Value, Value]) -> None:
        """Remove the ops that are keys of `new`, their uses replaced by their values
        (`replace_uses`)."""
        self.replace_uses(new)
        for block in self.blocks:
            block.ops[:] = [op for op in block.ops if op not in new]

    def rpo(self) -> list[BasicBlock]:
        order: list[BasicBlock] = []
        seen = {self.entry}
        stack = [(self.entry, iter(self.entry.successors()))]
        while stack:
            block, succs = stack[-1]
            for s in succs:
                if s not in seen:
                    seen.add(s)
                    stack.append((s, iter(s.successors())))
                    break
            else:
                stack.pop()
                order.append(block)
        order.reverse()
        return order

    def new_label(self) -> int:
        return max((b.label for b in self.blocks), default=-1) + 1000


def use_replacements(op: Op, new: dict[Value, Value]) -> None:
    """`op` uses the replacement of each of its operands that `new` replaces
    (`Function.replace_uses`)."""
    for v in op.operands():
        if v in new:
            op.replace_operand(v, replacement(new, v))


def replacement(new: dict[Value, Value], value: Value) -> Value:
    """What `value` finally stands for under the replacements `new`."""
    while value in new:
        value = new[value]
    return value
