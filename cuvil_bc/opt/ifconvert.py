"""If-conversion: an ``if`` whose arms only compute values becomes straight-line code,
its phis selects.

    H: ... branch %c ? A : J           H: ... %2 = binop %1 + 1     (speculative)
    A: %2 = binop %1 + 1        ->            %3 = select %c ? %2 : %1
       jump J                                 jump J
    J: %3 = phi [A: %2, H: %1]         J: ...

A loop body with such an ``if`` in it (``if c != v: clipped += 1``, ``s = 1.0 if x >
0 else -1.0``) is then one block: a function that writes can run it in strips and
vector groups (opt/strip_plans.py), which need one, and LLVM has no branch left to
mispredict or to keep it from vectorizing.

Only in functions that write, in the loops strips will then run (`run`). An arm's
ops then run on both paths, as opt/speculate.py hoists them, and under its
rules: the same cheap scalar ops (a failed guard, an int64 overflow, is a speculative
deopt, after which the function is compiled again without speculation), plus selects
(an inner ``if`` already converted) and comparisons and truth tests of NumPy scalars,
which have no guard. The arms' resume points go: a deopt before the join's first one
resumes at the last one before the branch, where the interpreter takes the branch
itself. A phi that holds an array stays (its references are counted per path).
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.dominance import natural_loops
from ..ir.function import BasicBlock, Function
from ..typing.infer import value_type
from ..typing.types import BOOL, FLOAT, NP_BOOL, NP_F64, NpScalar, holds_array, union_of
from .bounds import same_element
from .regions import range_loop
from .speculate import SCALARS, cheap
from .strip_plans import scalar_only, strip_body

#: Ops one arm may hold: both paths run them all.
MAX_OPS = 6


def _numpy_test(op: O.Op) -> bool:
    """A comparison or truth test of NumPy scalars (with Python numbers). Its only
    guard, where it has one (an np.float32 compared with a Python float that float32
    cannot hold warns of the cast), deopts as speculative like every hoisted op's."""
    if op.type not in (BOOL, NP_BOOL):
        return False
    if not all(isinstance(value_type(v), NpScalar) or value_type(v) in SCALARS for v in op.operands()):
        return False
    return isinstance(op, (O.Compare, O.Truth)) and (not isinstance(op, O.Compare) or op.op in ("<", "<=", ">", ">=", "==", "!="))


def _numpy_arith(op: O.Op) -> bool:
    """np.float64 ``+ - *`` of floats and np.float64s: its only guard is NumPy's
    warning test (an infinity or NaN from numbers)."""
    return (
        isinstance(op, O.BinOp) and op.op in ("+", "-", "*") and op.type == NP_F64
        and all(value_type(v) in (NP_F64, FLOAT) for v in op.operands())
    )


def _convertible(op: O.Op) -> bool:
    if isinstance(op, O.Select):
        return not holds_array(op.type)
    return cheap(op) or _numpy_test(op) or _numpy_arith(op)


def _arm(block: BasicBlock, head: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> list[O.Op] | None:
    """The ops (but resume points) of `block` when it is an arm of `head`'s branch
    that can run on both paths, its last one maybe a store (`_stores`); else None."""
    if block is head or preds.get(block) != [head] or not isinstance(block.terminator, O.Jump):
        return None
    body = [op for op in block.ops[:-1] if not isinstance(op, O.Checkpoint)]
    values = body[:-1] if body and isinstance(body[-1], O.StoreItem) else body
    if len(values) > MAX_OPS or not all(_convertible(op) for op in values):
        return None
    return body


def _stores(arms: dict[BasicBlock, list[O.Op] | None]) -> tuple[O.StoreItem, O.StoreItem] | None | bool:
    """The stores that end both arms of a diamond, to the same element of the same
    array (``if c: out[i] = a`` / ``else: out[i] = b``): one store of a select
    replaces them. None when no arm stores; False when the arms cannot be converted
    (one arm stores, or they store to different places)."""
    ends = [body[-1] if body and isinstance(body[-1], O.StoreItem) else None for body in arms.values()]
    if ends == [None, None]:
        return None
    first, second = ends
    if first is None or second is None or first.obj is not second.obj or not same_element(first, second):
        return False
    return first, second


def _join(head: BasicBlock, arms: dict[BasicBlock, list[O.Op] | None]) -> BasicBlock | None:
    """Where both paths of `head`'s branch meet, one step on: a diamond's join, or a
    triangle's (the branch's other target)."""
    t, f = head.terminator.if_true, head.terminator.if_false  # type: ignore[attr-defined]
    out_t = t.terminator.target if arms[t] is not None else t  # type: ignore[attr-defined]
    out_f = f.terminator.target if arms[f] is not None else f  # type: ignore[attr-defined]
    if out_t is not out_f or out_t is head:
        return None
    if (arms[t] is None and out_t is t) and (arms[f] is None and out_f is f):
        return None
    return out_t


def convert(fn: Function, head: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> bool:
    term = head.terminator
    if not isinstance(term, O.Branch) or value_type(term.cond) != BOOL or term.if_true is term.if_false:
        return False
    arms = {b: _arm(b, head, preds) for b in (term.if_true, term.if_false)}
    join = _join(head, arms)
    if join is None or any(holds_array(phi.type) for phi in join.phis()):
        return False
    stores = _stores(arms)
    if stores is False:
        return False
    for arm, body in arms.items():
        for op in body or ():
            arm.ops.remove(op)
            if not isinstance(op, O.StoreItem):
                op.speculative = True
                head.insert(len(head.ops) - 1, op)
    if stores:
        first, second = stores
        value = O.Select(term.cond, first.value, second.value) if first.value is not second.value else first.value
        if isinstance(value, O.Select):
            value.type, value.line = union_of([value_type(first.value), value_type(second.value)]), term.line
            head.insert(len(head.ops) - 1, value)
        first.value = value
        head.insert(len(head.ops) - 1, first)
    edge = {arm: (arm if body is not None else head) for arm, body in arms.items()}  # who the join's phis see
    for phi in join.phis():
        when_true, when_false = phi.value_for(edge[term.if_true]), phi.value_for(edge[term.if_false])
        value: O.Value = when_true
        if when_true is not when_false:
            select = O.Select(term.cond, when_true, when_false)
            select.type, select.line = phi.type, term.line
            head.insert(len(head.ops) - 1, select)
            value = select
        phi.incoming = [(b, v) for b, v in phi.incoming if b not in edge.values()] + [(head, value)]
    jump = O.Jump(join)
    jump.line, jump.block = term.line, head
    head.ops[-1] = jump
    gone = {arm for arm, body in arms.items() if body is not None}
    fn.blocks = [b for b in fn.blocks if b not in gone]
    return True


def run(fn: Function) -> bool:
    """Convert the ifs of each loop a strip could then run, where it will: a loop
    whose body does not become one block that `strip_plans.strip_body` takes, or
    that would not vectorize (`strip_plans.scalar_only`), is put back as it was.
    Converted without a strip, a select only replaces a branch the processor may
    predict well, on a chain it may lengthen (a bilinear resampling ran 20% slower,
    union-find and cellular automaton loops 10-15%)."""
    if not fn.writes:  # (no strips: a function that only reads deopts by re-running)
        return False
    changed = False
    for header in _strip_shaped(fn):
        saved = _Saved(fn)
        if not _convert_loop(fn, header):
            continue
        preds = fn.predecessors()
        plan = strip_body(fn, header, preds)
        if plan is None or scalar_only(plan.body):
            saved.restore(fn)
            continue
        changed = True
    return changed


def _convert_loop(fn: Function, header: BasicBlock) -> bool:
    """Convert the ifs in `header`'s loop, inner ones first (an arm that holds a
    converted ``if`` is one block then), and merge what is left of the body into one
    block where it is a chain of jumps. Whether the body is one block now."""
    converted = False
    while True:
        preds = fn.predecessors()
        body = natural_loops(fn).get(header, set())
        for head in reversed(fn.rpo()):
            if head in body and head is not header and convert(fn, head, preds):
                converted = True
                break
        else:
            break
    if not converted:
        return False
    entry = header.terminator.body  # type: ignore[attr-defined]
    preds = fn.predecessors()
    while isinstance(entry.terminator, O.Jump) and (nxt := entry.terminator.target) is not header and preds[nxt] == [entry]:
        _merge(fn, entry, nxt)
        preds = fn.predecessors()
    return True


def _merge(fn: Function, first: BasicBlock, second: BasicBlock) -> None:
    """Append `second` (whose one predecessor, `first`, jumps to it) to `first`."""
    replaced = {phi: phi.incoming[0][1] for phi in second.phis()}
    for block in fn.blocks:
        for op in block.ops:
            for old in op.operands():
                if old in replaced:
                    op.replace_operand(old, replaced[old])
    first.ops.pop()
    for op in second.ops:
        if op not in replaced:
            first.insert(len(first.ops), op)
    for succ in second.successors():
        for phi in succ.phis():
            phi.incoming = [(first if b is second else b, v) for b, v in phi.incoming]
    fn.blocks = [b for b in fn.blocks if b is not second]


class _Saved:
    """A function's blocks and ops as they were, to put back (`restore`): the
    conversion moves ops, makes selects and rewrites operands and phis."""

    def __init__(self, fn: Function) -> None:
        self.blocks = list(fn.blocks)
        self.ops = {block: list(block.ops) for block in fn.blocks}
        self.fields = {op: dict(op.__dict__) for block in fn.blocks for op in block.ops}

    def restore(self, fn: Function) -> None:
        fn.blocks = list(self.blocks)
        for block, ops in self.ops.items():
            block.ops = list(ops)
        for op, fields in self.fields.items():
            op.__dict__.clear()
            op.__dict__.update(fields)


def _strip_shaped(fn: Function) -> list[BasicBlock]:
    """The headers of innermost ``for ... in range(...)`` loops left only through
    their header: the loops a strip may run once their body is one block."""
    loops = natural_loops(fn)
    out = []
    for header, body in loops.items():
        if not range_loop(header, body):
            continue
        if any(other is not header and other in body for other in loops):
            continue  # (not innermost)
        if any(s not in body for b in body if b is not header for s in b.successors()):
            continue
        out.append(header)
    return out
