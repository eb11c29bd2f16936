"""Strip-mined innermost loops in functions that write to arrays.

A function that writes deoptimises precisely: every guard is a branch out of the loop
to a resume point (cuvil_bc/resume.py). LLVM does not vectorize a loop with such
exits, so a stencil like ``dst[i, j] = 0.25 * (src[i - 1, j] + ...)`` would run one
element at a time, testing each result for NumPy's overflow warning.

For a simple innermost loop (`strip_body`), the lowering adds a second, exit-free
copy of the loop body that runs a strip of up to `STRIP` iterations:

* every guard in it sets a sticky flag instead of leaving the loop, and an index that
  fails its bounds test reads and writes a scratch slot instead of the array;
* every store first logs the element's old value and address (an undo log);
* after the strip, a clean flag means the strip did exactly what the ordinary loop
  would have done: its loop-carried values go back to the loop header, and the next
  strip starts. A set flag means some guard failed somewhere in the strip: the log is
  replayed backwards, which restores every element the strip wrote, the iterator is
  put back where the strip began, and the ordinary loop (with its precise
  deoptimisation) runs the rest of the loop from the strip's first iteration.

Stores go straight to the array in program order, so reads in the strip see exactly
what they see in the ordinary loop, whatever the arrays alias: LLVM's vectorizer keeps
that order (it checks for overlap at run time itself). After a failed strip the loop
does not try strips again for the rest of the call, so a guard that fails without the
ordinary loop deoptimising (a conservative test) costs one strip, not one per element.

Only loops whose body is one block of arithmetic, array element reads and element
stores qualify, with every store moving along the last axis (`_consecutive`). A loop with a recurrence (``acc += a[i]; out[i] = acc``) does not
vectorize, and a log would only cost: it runs in short buffered strips instead
(`StripPlan.buffered`): a loop of exactly `SHORT` iterations, unrolled completely,
whose stores wait in slots (registers, after LLVM's promotion) until the strip has
succeeded, so a failed strip has nothing to undo. That delays stores past later
reads, which is only allowed when no array the body reads overlaps one it writes: an
array both read and written keeps the loop out of strips, and other pairs are tested
at run time before each strip. The float ``+ - *`` ops on the recurrence's cycle are tested for NumPy's
warnings once per strip, on their last value (`absorbed_ops`).

The simplest bodies without a recurrence (`StripPlan.vector`) first run in vector
groups (groups.py), which need no log; the logged strips then take what is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from llvmlite import ir

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..typing.infer import value_type
from ..typing.primitives import lookup
from ..typing.types import FLOAT, ITEMSIZE, NP_F64, RANGE_ITER, ArrayType, holds_array
from .arrays import storage_type
from .groups import VectorPlan, emit_groups, index_step, indices, vector_plan
from .ltypes import I1, I32, I64

if TYPE_CHECKING:
    from .codegen import FunctionLowering

#: Iterations per strip: long enough to pay for the vectorized loop's run-time alias
#: checks, which LLVM makes once per strip (64 measured slower on jacobi_step), short
#: enough that the undo log (2 KiB per store) stays in L1. The logs live in the
#: function's frame; a function that writes is never called natively by another, so
#: only one such frame is ever on the stack.
STRIP = 256

#: Iterations per buffered strip (a loop with a recurrence): its stores wait in
#: registers, which takes a short loop of a constant trip count that LLVM unrolls.
SHORT = 8
SHORT_BODY_OPS = 40

_OPS = (O.BinOp, O.UnaryOp, O.Compare, O.Truth, O.BuildTuple, O.TupleGet, O.Subscript, O.StoreItem, O.IterValue, O.Checkpoint, O.Narrow, O.Call)


@dataclass(frozen=True)
class StripPlan:
    """How the innermost loop with this body runs in strips. `buffered` (a loop with a
    recurrence): strips of exactly `SHORT` iterations, unrolled completely, whose
    stores wait in registers until the strip has succeeded; `reads` and `writes` are the
    arrays its body reads and writes (none is both), which must not overlap at run
    time; `absorbed` are the float ops of the recurrence whose warning test is one
    test of their last value (see `absorbed_ops`)."""

    body: BasicBlock
    buffered: bool = False
    absorbed: frozenset[O.Op] = frozenset()
    reads: tuple[O.Value, ...] = ()
    writes: tuple[O.Value, ...] = ()
    #: the body also runs in vector groups first (groups.py)
    vector: "VectorPlan | None" = None


def strip_body(fn: Function, header: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> StripPlan | None:
    """How the innermost loop headed by `header` runs in strips; None when it cannot."""
    term = header.terminator
    if not fn.writes or not isinstance(term, O.ForIter) or value_type(term.iterator) != RANGE_ITER:
        return None
    body = term.body
    if body is header or preds[body] != [header] or not isinstance(body.terminator, O.Jump) or body.terminator.target is not header:
        return None
    if any(not isinstance(op, (O.Phi, O.Checkpoint, O.ForIter)) for op in header.ops):
        return None
    item = next((op for op in body.ops if isinstance(op, O.IterValue)), None)
    if item is None or not _step_one(term.iterator):
        return None
    stores = 0
    for op in body.ops[:-1]:
        if not isinstance(op, _OPS) or holds_array(op.type):
            return None
        if isinstance(op, O.Call) and not _safe_call(op):
            return None
        if isinstance(op, O.Subscript) and not isinstance(value_type(op.obj), ArrayType):
            return None
        if isinstance(op, O.StoreItem) and not _consecutive(op, item, body):
            return None
        if isinstance(op, O.StoreItem):
            if not isinstance(value_type(op.obj), ArrayType):
                return None
            stores += 1
    if stores == 0:
        return None
    phis = set(header.phis())
    if any(holds_array(phi.type) for phi in phis):
        return None
    if not any(_depends_on(phi.value_for(body), phis, body) for phi in phis):
        return StripPlan(body, vector=vector_plan(body, header))
    # A recurrence (``acc += a[i]``) does not vectorize: it runs in short buffered
    # strips, if no array is both read and written in the body (a read must not miss
    # a store still waiting in the buffer; other arrays are tested at run time).
    reads = tuple(dict.fromkeys(op.obj for op in body.ops if isinstance(op, O.Subscript)))
    writes = tuple(dict.fromkeys(op.obj for op in body.ops if isinstance(op, O.StoreItem)))
    if set(reads) & set(writes) or len(body.ops) > SHORT_BODY_OPS:
        return None
    return StripPlan(body, buffered=True, absorbed=absorbed_ops(header, body), reads=reads, writes=writes)


def absorbed_ops(header: BasicBlock, body: BasicBlock) -> frozenset[O.Op]:
    """The float ``+ - *`` ops on a recurrence's cycle made only of such ops (``acc +=
    a[i]``, ``acc = acc * r + x``). An infinity or NaN survives ``+ - *``, so once such
    an op's result is non-finite, every later result of every op on the cycle is: if
    the op's result in the strip's last iteration is finite, none before it was, and
    it gave no warning anywhere in the strip. One test at the end of the strip
    replaces one test per iteration."""

    def absorbing(op: O.Value) -> bool:
        return isinstance(op, O.BinOp) and op.block is body and op.op in ("+", "-", "*") and op.type in (FLOAT, NP_F64)

    found: set[O.Op] = set()
    for phi in header.phis():
        reached: set[O.Value] = {phi}  # from the phi, through absorbing ops
        for op in body.ops:
            if absorbing(op) and any(v in reached for v in op.operands()):
                reached.add(op)
        back: set[O.Value] = set()  # reaching the phi's next value, through absorbing ops
        stack = [phi.value_for(body)]
        while stack:
            v = stack.pop()
            if absorbing(v) and v not in back:
                back.add(v)
                stack.extend(v.operands())  # type: ignore[attr-defined]
        found |= {v for v in reached & back if isinstance(v, O.Op)}
    return frozenset(found)


def _step_one(iterator: O.Value) -> bool:
    rng = iterator.iterable if isinstance(iterator, O.GetIter) else None
    if not (isinstance(rng, O.Call) and isinstance(rng.func, O.Const) and rng.func.value is range):
        return False
    return len(rng.args) < 3 or (isinstance(rng.args[2], O.Const) and rng.args[2].value == 1)


def _consecutive(op: O.Subscript | O.StoreItem, item: O.IterValue, body: BasicBlock) -> bool:
    """Whether the store moves by one element per iteration, or not at all: only the
    last index may vary, as ``item + c``, on an array with unit stride. Other stores
    would be scatters, and their undo log could not follow them. (Reads may move
    along any axis: ``pts[j, 0]`` becomes a gather where LLVM finds it worth it,
    which it is for distances with vector square roots.)"""
    t = value_type(op.obj)
    assert isinstance(t, ArrayType)
    for k, index in enumerate(indices(op)):
        if not _depends_on(index, {item}, body):
            continue
        if k != t.ndim - 1 or not t.unit_stride:
            return False
        if index is not item and not index_step(index, item):
            return False
    return True


def moving_stores(body: BasicBlock) -> set[O.StoreItem]:
    """The stores of a strip body whose element moves by one per iteration: the last
    index is ``item + c`` (an eligible body has no other kind of varying index) and
    the others are computed before the loop. (An index read from an array in the body
    could change when the strip writes that array.)"""
    item = next(op for op in body.ops if isinstance(op, O.IterValue))
    out = set()
    for op in body.ops:
        if isinstance(op, O.StoreItem):
            items = indices(op)
            fixed = all(not (isinstance(ix, O.Op) and ix.block is body) for ix in items[:-1])
            if fixed and _depends_on(items[-1], {item}, body):
                out.add(op)
    return out


def _safe_call(op: O.Call) -> bool:
    func = op.func.value if isinstance(op.func, O.Const) else None
    sig = lookup(func) if func is not None else None
    return sig is not None and sig.in_strips and not op.kwnames


def _depends_on(v: O.Value, roots: set, body: BasicBlock) -> bool:  # type: ignore[type-arg]
    """Whether `v` is computed, within `body`, from one of `roots`."""
    seen: set[int] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if x in roots:
            return True
        if not isinstance(x, O.Op) or x.block is not body or id(x) in seen:
            continue
        seen.add(id(x))
        stack.extend(x.operands())
    return False


class StripLog:
    """The state of one strip while its body is lowered: the sticky failure flag, a
    scratch slot for out-of-bounds accesses and, per store op, the undo log (or, in a
    buffered strip, the slots its stores wait in)."""

    def __init__(self, lw: "FunctionLowering", plan: StripPlan) -> None:
        self.em = lw.em
        #: A buffered strip: stores go to `pending` slots, written to the array after
        #: the strip succeeded (in program order); nothing to undo.
        self.buffered = plan.buffered
        self.absorbed = plan.absorbed
        #: the logged stores that move one element further each iteration
        self.moving = set() if plan.buffered else moving_stores(plan.body)
        #: per store op: its addresses and its values, one per iteration of the strip
        self.pending: list[tuple[ir.Value, ir.Value]] = []
        self.flag = self.em.alloca(I1)
        self.scratch = self.em.alloca(ir.ArrayType(I64, 2))
        self.t: ir.Value = ir.Constant(I64, 0)  # the iteration within the strip
        #: Per store op: the old values, and the addresses (or None for a store that
        #: moves by one element per iteration and is never redirected: its address is
        #: then known from the last one, `last`).
        self.logs: list[tuple[ir.Value, ir.Value | None]] = []
        self.last: list[ir.Value] = []
        self.itemsizes: list[int] = []
        #: ids of pointers that may not follow the index: wrapped from a negative
        #: index, or redirected to the scratch slot (`safe`)
        self.irregular: set[int] = set()
        self.next_store = 0

    def fail_if(self, cond: ir.Value) -> None:
        b = self.em.builder
        b.store(b.or_(b.load(self.flag), cond), self.flag)

    def safe(self, ptr: ir.Value, bad: ir.Value) -> ir.Value:
        """`ptr`, or the scratch slot when its index failed the bounds test."""
        b = self.em.builder
        out = b.select(bad, b.bitcast(self.scratch, ptr.type), ptr)
        self.irregular.add(id(out))
        return out

    def log(self, ptr: ir.Value, dtype: str, op: O.StoreItem) -> ir.Value:
        """Before the store `op` to `ptr` (an i8*): record the element there and,
        unless its address follows from the last one (a store that moves one element
        per iteration and is never wrapped or redirected: see `irregular`), the
        address. Returns where to store: `ptr`, or in a buffered strip a slot of its
        own that `commit` copies to `ptr`."""
        b = self.em.builder
        typ = storage_type(dtype)
        if self.buffered:
            zero = ir.Constant(I32, 0)
            values, ptrs = self.em.alloca(ir.ArrayType(typ, SHORT)), self.em.alloca(ir.ArrayType(ptr.type, SHORT))
            self.pending.append((ptrs, values))
            b.store(ptr, b.gep(ptrs, [zero, self.t]))
            return b.bitcast(b.gep(values, [zero, self.t]), ptr.type)
        k = self.next_store
        self.next_store += 1
        if k == len(self.logs):
            olds = self.em.alloca(ir.ArrayType(typ, STRIP))
            affine = op in self.moving and id(ptr) not in self.irregular
            ptrs = None if affine else self.em.alloca(ir.ArrayType(ptr.type, STRIP))
            self.logs.append((olds, ptrs))
            self.last.append(ptr)
            self.itemsizes.append(ITEMSIZE[dtype])
        olds, ptrs = self.logs[k]
        zero = ir.Constant(I32, 0)
        old = b.load(b.bitcast(ptr, typ.as_pointer()))
        old.align = 1  # strided views need not be aligned
        b.store(old, b.gep(olds, [zero, self.t]))
        if ptrs is not None:
            b.store(ptr, b.gep(ptrs, [zero, self.t]))
        return ptr

    def commit(self) -> None:
        """A buffered strip succeeded: write its stores to the arrays, in order."""
        b = self.em.builder
        for t in range(SHORT):
            index = [ir.Constant(I32, 0), ir.Constant(I64, t)]
            for ptrs, values in self.pending:
                value = b.load(b.gep(values, index))
                b.store(value, b.bitcast(b.load(b.gep(ptrs, index)), value.type.as_pointer()), align=1)

    def undo(self, count: ir.Value) -> None:
        """Restore every logged element, last store first."""
        em, b = self.em, self.em.builder
        zero = ir.Constant(I32, 0)
        entry = b.block
        loop, done = em.block("strip.undo.loop"), em.block("strip.undo.done")
        b.cbranch(b.icmp_unsigned("==", count, em.i64(0)), done, loop)
        b.position_at_end(loop)
        k = b.phi(I64)
        k.add_incoming(count, entry)
        t = b.sub(k, em.i64(1))
        for (olds, ptrs), last, size in reversed(list(zip(self.logs, self.last, self.itemsizes))):
            if ptrs is not None:
                ptr = b.load(b.gep(ptrs, [zero, t]))
            else:  # iteration t stored (count - 1 - t) elements before the last one
                ptr = b.gep(last, [b.mul(b.sub(t, b.sub(count, em.i64(1))), em.i64(size))])
            old = b.load(b.gep(olds, [zero, t]))
            b.store(old, b.bitcast(ptr, old.type.as_pointer()), align=1)
        k.add_incoming(t, b.block)
        b.cbranch(b.icmp_unsigned("==", t, em.i64(0)), done, loop)
        b.position_at_end(done)


def emit_strips(lw: "FunctionLowering", header: BasicBlock, plan: StripPlan) -> None:
    """Before the header's ForIter is lowered: run strips of the loop while enough
    iterations are left (one; `SHORT` for a buffered strip, which always runs that
    many) and no strip of it failed in this call, then fall through to the ordinary
    ForIter. The builder is in the header, after its checkpoint.

    A buffered strip (`plan.buffered`) differs in three ways: it first tests that no
    array it reads overlaps one it writes (`_overlap`); its stores go to slots that
    `StripLog.commit` writes to the arrays once the strip has succeeded, instead of
    being logged and undone; and the float ops of its recurrence are tested once,
    after the strip (`absorbed_ops`). Its loop has a constant trip count and is
    unrolled completely (`_unroll_fully`), which keeps the slots in registers."""
    from .numeric import not_finite

    em = lw.em
    b = em.builder
    body = plan.body
    state = lw.get(header.terminator.iterator)[0]  # type: ignore[attr-defined]

    def field(i: int) -> ir.Value:
        return b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, i)])

    failed = em.alloca(I1)
    with b.goto_block(em.alloca_block):
        b.position_after(failed)  # type: ignore[arg-type]
        b.store(ir.Constant(I1, 0), failed)
    if plan.vector is not None:
        emit_groups(lw, plan.vector, header, state, failed)
    remaining = b.load(field(2))
    enough = b.icmp_unsigned(">=", remaining, em.i64(SHORT if plan.buffered else 1))
    pre, skip, undo = em.block("strip.pre"), em.block("strip.skip"), em.block("strip.undo")
    b.cbranch(b.and_(enough, b.not_(b.load(failed))), pre, skip)

    b.position_at_end(pre)
    if plan.buffered:
        count: ir.Value = em.i64(SHORT)
    else:
        count = b.select(b.icmp_unsigned("<", remaining, em.i64(STRIP)), remaining, em.i64(STRIP))
    saved = [(i, b.load(field(i))) for i in (0, 2, 3)]
    log = StripLog(lw, plan)
    b.store(ir.Constant(I1, 0), log.flag)
    # The body's loop-invariant bounds tests, before the strip: an index they cover
    # is then used unchecked in it, so a failing test must keep the strip from
    # running at all (the ordinary loop deopts on it).
    em.strip = log
    try:
        lw.early_bounds_guards(body)
        if plan.buffered:
            log.fail_if(_overlap(lw, plan))
    finally:
        em.strip = None
    loop, refused = em.block("strip.short" if plan.buffered else "strip.loop"), em.block("strip.refused")
    b.cbranch(b.load(log.flag), refused, loop)

    b.position_at_end(loop)
    t = b.phi(I64)
    t.add_incoming(em.i64(0), pre)
    log.t = t
    header_phis = [(phi, leaves) for phi, leaves in lw.phis if phi.block is header]
    outer = {phi: lw.values[phi] for phi, _ in header_phis}
    strip_phis = []
    for phi, leaves in header_phis:
        mine = [b.phi(leaf.type) for leaf in leaves]
        for leaf, new in zip(leaves, mine):
            new.add_incoming(leaf, pre)
        strip_phis.append(mine)
    for (phi, _), mine in zip(header_phis, strip_phis):
        lw.values[phi] = lw.assemble(phi, mine)
    # The ForIter's step (the strip never runs past the iterator's end).
    cur = b.load(field(0))
    b.store(cur, field(3))
    b.store(b.add(cur, b.load(field(1))), field(0))
    b.store(b.sub(b.load(field(2)), em.i64(1)), field(2))
    em.strip = log
    saved_resume, saved_line = em.resume, em.line
    try:
        for op in body.ops[:-1]:
            if isinstance(op, O.Checkpoint):
                continue
            em.line = op.line or lw.fn.firstlineno
            lw.lower(op)
    finally:
        em.strip = None
        em.resume, em.line = saved_resume, saved_line
    nexts = [lw.phi_leaves(phi, phi.value_for(body)) for phi, _ in header_phis]
    latch = b.block
    for mine, vals in zip(strip_phis, nexts):
        for new, val in zip(mine, vals):
            new.add_incoming(val, latch)
    t1 = b.add(t, em.i64(1))
    t.add_incoming(t1, latch)
    end = em.block("strip.end")
    back = b.cbranch(b.icmp_unsigned("<", t1, count), loop, end)
    if plan.buffered:
        _unroll_fully(em.module, back)

    b.position_at_end(end)
    for op in plan.absorbed:  # its value in the strip's last iteration
        log.fail_if(not_finite(em, lw.values[op]))
    if plan.buffered:  # a clean strip writes its stores, then goes on
        done = em.block("strip.commit")
        b.cbranch(b.load(log.flag), undo, done)
        b.position_at_end(done)
        log.commit()
        b.branch(lw.blocks[header])
    else:  # a clean strip has made its stores already
        done = b.block
        b.cbranch(b.load(log.flag), undo, lw.blocks[header])
    for (phi, leaves), vals in zip(header_phis, nexts):
        for leaf, val in zip(leaves, vals):
            lw.extra_incoming.append((leaf, val, done))

    # A failed strip: undone if it was logged, the iterator put back, and the
    # ordinary loop runs from the strip's start. No strip runs again in this call
    # (nor after one refused before it ran).
    b.position_at_end(undo)
    if not plan.buffered:
        log.undo(count)
    for i, v in saved:
        b.store(v, field(i))
    b.branch(refused)
    b.position_at_end(refused)
    b.store(ir.Constant(I1, 1), failed)
    b.branch(skip)

    b.position_at_end(skip)
    for phi, value in outer.items():
        lw.values[phi] = value


def _unroll_fully(module: ir.Module, back_edge: ir.Instruction) -> None:
    """Ask LLVM to unroll the loop of this back edge completely, whatever its size:
    a buffered strip's slots only become registers in straight-line code (kept in
    memory, they made a strip twice as slow as the ordinary loop). Loop metadata is
    a node whose first operand is itself, which llvmlite builds in two steps."""
    unique = ir.MetaDataString(module, f"cuvil_bc.strip.{len(module.metadata)}")
    node = module.add_metadata([unique, module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.full")])])
    node.operands = (node,) + node.operands[1:]
    back_edge.set_metadata("llvm.loop", node)


def _overlap(lw: "FunctionLowering", plan: StripPlan) -> ir.Value:
    """Whether an array the strip reads may share memory with one it writes: their
    byte ranges intersect (an empty array has none)."""
    b = lw.em.builder
    ranges = {v: _byte_range(lw, v) for v in plan.reads + plan.writes}
    out: ir.Value = ir.Constant(I1, 0)
    for r in plan.reads:
        for w in plan.writes:
            (lo1, hi1), (lo2, hi2) = ranges[r], ranges[w]
            out = b.or_(out, b.and_(b.icmp_unsigned("<", lo1, hi2), b.icmp_unsigned("<", lo2, hi1)))
    return out


def _byte_range(lw: "FunctionLowering", array: O.Value) -> tuple[ir.Value, ir.Value]:
    """[lo, hi): the addresses of the array's bytes (lo == hi when it is empty)."""
    em, b = lw.em, lw.em.builder
    val, t = lw.get(array)
    assert isinstance(t, ArrayType)
    lo = hi = b.extract_value(val, 0)
    empty: ir.Value = ir.Constant(I1, 0)
    zero = em.i64(0)
    for k in range(t.ndim):
        extent = b.extract_value(val, 1 + k)
        stride = b.extract_value(val, 1 + t.ndim + k)
        empty = b.or_(empty, b.icmp_signed("<=", extent, zero))
        d = b.mul(b.sub(extent, em.i64(1)), stride)
        negative = b.icmp_signed("<", d, zero)
        lo = b.add(lo, b.select(negative, d, zero))
        hi = b.add(hi, b.select(negative, zero, d))
    hi = b.add(hi, em.i64(ITEMSIZE[t.dtype]))
    return lo, b.select(empty, lo, hi)
