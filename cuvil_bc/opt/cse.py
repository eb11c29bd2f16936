"""Common subexpressions: an op that computes what an op dominating it computed (the
same operator on the same values), or an array element read again with nothing
written on any path in between, is the earlier op's value: the later op goes.

    B2: %9 = subscript x[%7]              B2: %9 = subscript x[%7]
        branch %11 ? B3 : B4                  branch %11 ? B3 : B4
    B4: %14 = subscript x[%7]      ->     B4: %15 = compare %9 < 0.0
        %15 = compare %14 < 0.0

Python code reads ``x[i]`` (and computes ``i - 1``) in each test and arm of an ``if``
where it names no local for it. Each read is a bounds test and a load, and a read in
an arm keeps the arm from being converted to a select (opt/ifconvert.py): its bounds
test could fail on the path CPython does not take. An arithmetic op repeated computes
the same value, and its guards (an overflow) failed already at the first one if they
fail at all.

Only reads of one element (a scalar: a view is a new object) of an array whose index
is the same SSA value (or a tuple of the same values), where the first read dominates
the second, and no op on a path from the first to the second may write memory: a
store to any array (arrays may overlap) or a call of anything but a pure primitive.
"""

from __future__ import annotations

import struct

from ..ir import ops as O
from ..ir.dominance import dominance
from ..ir.function import BasicBlock, Function
from ..typing.infer import value_type
from ..typing.primitives import lookup
from ..typing.types import ArrayType, holds_array
from .bounds import same_element


def _writes(op: O.Op) -> bool:
    if isinstance(op, O.StoreItem):
        return True
    if isinstance(op, O.Call):
        row = lookup(op.func.value) if isinstance(op.func, O.Const) else None
        return row is None or not row.pure
    return False


def _element_read(op: O.Op) -> bool:
    return isinstance(op, O.Subscript) and isinstance(value_type(op.obj), ArrayType) and not isinstance(op.type, ArrayType)


def _between(first: BasicBlock, last: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> set[BasicBlock]:
    """The blocks a path from `first` to `last` may pass through, without coming back
    to `first` (neither end included)."""
    forward: set[BasicBlock] = set()
    stack = [s for s in first.successors() if s is not first]
    while stack:
        b = stack.pop()
        if b in forward or b is first:
            continue
        forward.add(b)
        stack.extend(b.successors())
    backward: set[BasicBlock] = set()
    stack = [p for p in preds.get(last, []) if p is not first]
    while stack:
        b = stack.pop()
        if b in backward or b is first:
            continue
        backward.add(b)
        stack.extend(preds.get(b, []))
    return (forward & backward) - {first, last}


def _clear(first: O.Op, later: O.Op, preds: dict[BasicBlock, list[BasicBlock]]) -> bool:
    """Whether no op on a path from `first` to `later` may write memory."""
    a, b = first.block, later.block
    assert a is not None and b is not None
    if a is b:
        ops = a.ops
        return not any(_writes(op) for op in ops[ops.index(first) + 1 : ops.index(later)])
    if b in _reaches_back(a, b, preds):
        return False  # (``later`` may run again before ``first`` does: a loop)
    tail = a.ops[a.ops.index(first) + 1 :]
    head = b.ops[: b.ops.index(later)]
    middle = [op for blk in _between(a, b, preds) for op in blk.ops]
    return not any(_writes(op) for op in tail + head + middle)


def _reaches_back(a: BasicBlock, b: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> set[BasicBlock]:
    """`b` itself when a path from `b` leads back to `b` without passing `a` (then a
    write on it, in `b` before the read, happens after `a`'s read): else empty."""
    seen: set[BasicBlock] = set()
    stack = list(b.successors())
    while stack:
        x = stack.pop()
        if x is b:
            return {b}
        if x in seen or x is a:
            continue
        seen.add(x)
        stack.extend(x.successors())
    return set()


_PURE = (O.BinOp, O.UnaryOp, O.Compare, O.Truth, O.Select)  # (not tuples: each is a new object)


def _key(op: O.Op) -> tuple[object, ...] | None:
    """What `op` computes, for ops that compute nothing else: its kind, its operator
    and its operands (constants by type and bits: `_bits`)."""
    if not isinstance(op, _PURE) or op.type is None or holds_array(op.type):
        return None  # (an op that made an array would make a new object each time)
    parts: list[object] = [type(op), getattr(op, "op", None), op.type]
    for v in op.operands():
        parts.append(("const", type(v.value), _bits(v.value)) if isinstance(v, O.Const) else id(v))
    return tuple(parts)


def _bits(value: object) -> object:
    """A constant as its exact bits where they tell more than its value: a float's
    (``-nan`` is not ``nan``, ``-0.0`` not ``0.0``), a complex's parts'."""
    if isinstance(value, float):
        return struct.pack("<d", value)
    if isinstance(value, complex):
        return struct.pack("<dd", value.real, value.imag)
    return repr(value)


def run(fn: Function) -> bool:
    dominates = dominance(fn)
    preds = fn.predecessors()
    reads: list[O.Subscript] = []
    computed: dict[tuple[object, ...], list[O.Op]] = {}
    replaced: dict[O.Op, O.Value] = {}

    def current(v: O.Value) -> O.Value:
        return replaced.get(v, v)  # type: ignore[arg-type]

    for block in fn.rpo():
        for op in list(block.ops):
            for old in op.operands():
                if old in replaced:
                    op.replace_operand(old, current(old))
            key = _key(op)
            if key is not None:
                earlier = next((e for e in computed.get(key, []) if e.block is block or dominates(e.block, block)), None)
                if earlier is None:
                    computed.setdefault(key, []).append(op)
                else:
                    replaced[op] = earlier
                continue
            if not _element_read(op):
                continue
            found = next(
                (
                    r for r in reads
                    if r.obj is op.obj and same_element(r, op) and r.type == op.type  # type: ignore[attr-defined]
                    and (r.block is block or dominates(r.block, block)) and _clear(r, op, preds)
                ),
                None,
            )
            if found is None:
                reads.append(op)  # type: ignore[arg-type]
            else:
                replaced[op] = found
    if not replaced:
        return False
    for block in fn.blocks:
        for op in block.ops:
            for old in op.operands():
                if old in replaced:
                    op.replace_operand(old, current(old))
        block.ops = [op for op in block.ops if op not in replaced]
    return True
