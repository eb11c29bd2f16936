"""Full unrolling of short ``for ... in range(c)`` loops whose bounds are constants.

A 3x3 stencil's ``for di in range(3): for dj in range(3): acc += k[di, dj] * img[i + di
- 1, j + dj - 1]`` runs its two inner loops as real loops: each pass pays the loop's
own control, the indices ``i + di - 1`` are sums of two loop items that the bounds
analysis cannot place, and the loop around them (over ``j``) has a body of several
blocks, so it gets neither strips nor vector code. Unrolled, the body over ``j`` is one
block whose indices are ``j + c`` for constants ``c``: everything later passes know.

Before (the item of ``range(2)`` used once)::

    B1: %4 = phi [B0: 0.0, B2: %6]; foriter %2 -> B2, exit B3
    B2: %5 = itervalue %2; %6 = binop %4 + %5; jump B1
    B3: return %4

After (then folded by the clean-up passes)::

    B0': jump ... %6 = binop 0.0 + 0; %6' = binop %6 + 1; return %6'

Each copy of the body sees its item as a constant. A resume point inside a copy (a
function that writes) names the loop's iterator: it gets a fresh ``iter(range(...))``
with the items that are left at that copy, which is all the interpreter needs to go on
(`cuvil_bc/resume.py` rebuilds any range iterator that way).

Loops with no loop inside them are unrolled, innermost first, while the copies stay
small (`MAX_TRIPS`, `MAX_OPS`); a ``break``, ``return`` or ``raise`` inside becomes one
way out per copy, whose values meet in phis of the block it leads to.
"""

from __future__ import annotations

import copy

from ..ir import ops as O
from ..ir.dominance import natural_loops
from ..ir.passes.simplifycfg import drop_unreachable
from ..ir.function import BasicBlock, Function

#: At most this many iterations are unrolled ...
MAX_TRIPS = 16
#: ... and at most this many ops (of the loop's body, all copies together).
MAX_OPS = 256


def run(fn: Function) -> bool:
    """Unroll every loop that qualifies, innermost first; whether any was."""
    changed = False
    iterators = _Iterators(fn)
    while True:
        loops = natural_loops(fn)
        for header, body in loops.items():
            if body & loops.keys() - {header}:
                continue  # a loop inside it: that one first
            items = _plan(fn, header, body)
            if items is not None:
                _unroll(fn, header, body, items, iterators)
                # (a loop of no items leaves its ``break`` targets unreachable: they must
                # not count as part of the loop around it, found by the fuzzer)
                drop_unreachable(fn)
                changed = True
                break
        else:
            return changed


def _range_items(iterator: O.Value) -> range | None:
    """The items of ``iter(range(<constants>))``, when that is what `iterator` is."""
    if not isinstance(iterator, O.GetIter):
        return None
    call = iterator.iterable
    if not (isinstance(call, O.Call) and isinstance(call.func, O.Const) and call.func.value is range and not call.kwnames):
        return None
    if not all(isinstance(a, O.Const) and type(a.value) is int for a in call.args) or not 1 <= len(call.args) <= 3:
        return None
    try:
        return range(*(a.value for a in call.args))  # type: ignore[attr-defined]
    except ValueError:
        return None  # (a zero step: CPython raises)


def _plan(fn: Function, header: BasicBlock, body: set[BasicBlock]) -> range | None:
    """The items of a loop that may be unrolled, else None."""
    term = header.terminator
    if not isinstance(term, O.ForIter) or term.body not in body or term.exit in body:
        return None
    items = _range_items(term.iterator)
    # (len() of a range longer than sys.maxsize raises OverflowError: compare the
    # range with a short prefix of itself instead)
    if items is None or items != items[: MAX_TRIPS + 1] or len(items) > MAX_TRIPS:
        return None
    size = sum(1 for b in body for op in b.ops if not isinstance(op, (O.Phi, O.Checkpoint)))
    if size * len(items) > MAX_OPS:
        return None
    return items if _close_exits(fn, body) else None


def _close_exits(fn: Function, body: set[BasicBlock]) -> bool:
    """Give the loop's exits phis for the values of the loop used after it ("loop-closed
    SSA"), so that the copies' values meet there; False (and nothing changed) when a
    use cannot get one: it lies after an exit block that is also entered from outside
    the loop. The exits are the ForIter's, and ``break``, ``return`` and ``raise``."""
    from ..ir.dominance import dominators

    preds = fn.predecessors()
    idom = dominators(fn)
    exits = {s for b in body for s in b.successors() if s not in body}
    if any(isinstance(op, O.IterValue) for e in exits for op in e.ops):
        return False  # (a loop's body that only returns: it must keep its one ForIter)
    if any(isinstance(b.terminator, O.ForIter) and b.terminator.body not in body for b in body):
        # An inner ``for`` whose body only leaves (``return``): each copy's ForIter
        # would enter that one body, which must have one predecessor (found by the
        # fuzzer, seed 7120611: LLVM refused the module).
        return False
    def exit_above(block: BasicBlock) -> BasicBlock | None:
        node: BasicBlock | None = block
        while node is not None and node not in exits:
            node = idom.get(node)
        return node if node is not None and all(p in body for p in preds[node]) else None

    uses: list[tuple[O.Op, O.Value, BasicBlock, int]] = []  # (user, value, exit, phi entry or -1)
    for op in fn.ops():
        if op.block in body:
            continue
        if isinstance(op, O.Phi):  # (a phi's value is used at the end of its incoming block)
            for k, (p, v) in enumerate(op.incoming):
                if isinstance(v, O.Op) and v.block in body and p not in body:
                    found = exit_above(p)
                    if found is None:
                        return False
                    uses.append((op, v, found, k))
            continue
        for v in set(op.operands()):
            if isinstance(v, O.Op) and v.block in body:
                found = exit_above(op.block)  # type: ignore[arg-type]
                if found is None:
                    return False
                uses.append((op, v, found, -1))
    closing: dict[tuple[O.Value, BasicBlock], O.Phi] = {}
    for op, v, exit, k in uses:
        phi = closing.get((v, exit))
        if phi is None:
            phi = closing[v, exit] = O.Phi([(p, v) for p in preds[exit]])
            exit.insert(0, phi)
            phi.line = op.line
        if k < 0:
            op.replace_operand(v, phi)
        else:
            assert isinstance(op, O.Phi)
            op.incoming[k] = (op.incoming[k][0], phi)
    return True


def _clone(op: O.Op, mapping: dict[O.Value, O.Value]) -> O.Op:
    """A copy of `op` with its operands mapped (lists copied, never shared)."""
    new = copy.copy(op)
    for name, value in vars(new).items():
        if isinstance(value, list):
            setattr(new, name, list(value))
    new.block = None
    for v in set(new.operands()):
        if v in mapping:
            new.replace_operand(v, mapping[v])
    return new


class _Iterators:
    """Fresh iterators over what is left of a range, made once each in the function's
    entry block, after its first resume point (a guard of making an iterator, a zero
    step, must resume somewhere; with constant arguments it never fails)."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.made: dict[tuple[int, int, int], O.Op] = {}

    def after(self, items: range, consumed: int) -> O.Op:
        rest = items[consumed:]
        key = (rest.start, rest.stop, rest.step)
        found = self.made.get(key)
        if found is None:
            entry = self.fn.entry
            at = next(k for k, op in enumerate(entry.ops) if isinstance(op, O.Checkpoint)) + 1
            call = entry.insert(at, O.Call(O.Const(range), [O.Const(n) for n in key]))
            found = self.made[key] = entry.insert(at + 1, O.GetIter(call))
            call.line = found.line = entry.ops[at - 1].line
        return found

    def replace(self, block: BasicBlock, iterator: O.Value, items: range, consumed: int) -> None:
        """The resume points of `block`, in a copy that comes after `consumed` items,
        name a fresh iterator with the items left instead of the loop's."""
        for op in block.ops:
            if isinstance(op, O.Checkpoint) and iterator in op.values:
                op.replace_operand(iterator, self.after(items, consumed))


def _unroll(fn: Function, header: BasicBlock, body: set[BasicBlock], items: range, iterators: _Iterators) -> None:
    """Replace the loop by one copy of its header before each item and after the last,
    and one copy of its body per item."""
    term = header.terminator
    assert isinstance(term, O.ForIter)
    iterator, exit = term.iterator, term.exit
    preds = fn.predecessors()
    leaving = [(b, s) for b in body if b is not header for s in b.successors() if s not in body]
    outside = [p for p in preds[header] if p not in body]
    inner = [b for b in fn.blocks if b in body and b is not header]  # (in the function's order)
    header_phis = header.phis()
    heads = [BasicBlock(fn.new_label() + k) for k in range(len(items) + 1)]
    fn.blocks.extend(heads)
    for phi in header_phis:  # the first copy is entered as the loop was
        heads[0].append(O.Phi([(p, v) for p, v in phi.incoming if p in outside], phi.var), phi.line)
    for k, head in enumerate(heads):
        mapping: dict[O.Value, O.Value] = dict(zip(header_phis, head.phis()))
        for op in header.ops:
            if not isinstance(op, (O.Phi, O.ForIter)):
                mapping[op] = head.append(_clone(op, mapping), op.line)
        iterators.replace(head, iterator, items, k)
        if k == len(items):
            head.append(O.Jump(exit), term.line)
            break
        blocks: dict[BasicBlock, BasicBlock] = {header: head}
        label = fn.new_label()
        for n, b in enumerate(inner):
            blocks[b] = BasicBlock(label + n)
            fn.blocks.append(blocks[b])
        for b in inner:  # the values first (a phi may use a value of a later block) ...
            for op in b.ops:
                if isinstance(op, O.IterValue) and op.iterator is iterator:
                    mapping[op] = O.Const(items[k])
                elif not isinstance(op, O.ControlOp):
                    mapping[op] = _clone(op, {})
        for b in inner:  # ... then their operands, and the edges
            for op in b.ops:
                new = _clone(op, {}) if isinstance(op, O.ControlOp) else mapping[op]
                if isinstance(new, O.Const):
                    continue
                assert isinstance(new, O.Op)
                for v in set(new.operands()):
                    if v in mapping:
                        new.replace_operand(v, mapping[v])
                if isinstance(new, O.Phi):
                    new.incoming = [(blocks.get(p, p), v) for p, v in new.incoming]
                if isinstance(new, O.ControlOp):
                    for s in op.successors():  # (a back edge goes on to the next copy)
                        new.replace_successor(s, heads[k + 1] if s is header else blocks.get(s, s))
                blocks[b].append(new, op.line)
            iterators.replace(blocks[b], iterator, items, k + 1)
        head.append(O.Jump(blocks[term.body]), term.line)
        for b, out in leaving:  # this copy's ways out of the loop: break, return, raise
            for phi in out.phis():
                phi.incoming += [(blocks[b], mapping.get(v, v)) for p, v in phi.incoming if p is b]
        for phi in header_phis:  # the next copy's values come from this copy's back edges
            incoming = [(blocks[p], mapping.get(v, v)) for p, v in phi.incoming if p in body]
            heads[k + 1].append(O.Phi(incoming, phi.var), phi.line)
    for p in outside:
        p.terminator.replace_successor(header, heads[0])
    last: dict[O.Value, O.Value] = dict(zip(header_phis, heads[-1].phis()))
    for phi in exit.phis():
        phi.incoming = [(heads[-1], last.get(v, v)) if p is header else (p, v) for p, v in phi.incoming]
    for b, out in leaving:
        for phi in out.phis():
            phi.incoming = [(p, v) for p, v in phi.incoming if p is not b]
    for op in fn.ops():  # after the loop, its values are those of the last copy
        if op.block not in body:
            for v in set(op.operands()):
                if v in last:
                    op.replace_operand(v, last[v])
    fn.blocks = [b for b in fn.blocks if b not in body]
