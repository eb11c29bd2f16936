"""Vector groups: an innermost loop of a function that writes, run `WIDTH` iterations
at a time in explicit vector code, each group tested before it stores anything.

A logged strip (strips.py) lets LLVM vectorize a loop whose guards only set a flag,
but every store first copies the element it overwrites into the undo log: one load
and one store more per element, which made the Jacobi stencil ~1.4x Numba's time.
For the simplest bodies the log can go: a group computes the values of `WIDTH`
consecutive iterations in vectors, tests them, and only then stores them. A group
that fails its test has written nothing, so the ordinary loop (with its precise
deoptimisation) simply runs from the group's first iteration; no group runs again in
that call.

A body qualifies (`vector_plan`) when it is one block of:

* float64 element reads ``a[..., item + c]`` of unit-stride float64 arrays, every
  index proven in bounds (`opt/bounds.py`) or tested before the loop
  (`access.ArrayAccess.early_bounds_guards`), every index but the last loop-invariant;
* float ``+ - *`` (Python floats or np.float64) of those, loop-invariant floats and
  numeric constants;
* index arithmetic: ``item + c``, and ``+ -`` of loop-invariant ints (``i - 1``);
* exactly one store ``out[..., item + c] = value`` into a unit-stride float64 array,
  which the body reads, if at all, only at that element (``c[i, j] += ...``: each
  lane reads its own element before the group stores);

and no local but the loop's item and float values changes in it (after the groups
the header's phis get the item of the last iteration that ran, and the float locals'
values in it: `VectorPlan.lasts`, the last lane of the last group). Reads of a group come before its
stores, which is only what the ordinary loop does when no array read overlaps the
array written: a run-time test before the groups (the loop then runs as a logged
strip or element by element). The test of a group: every value stored, and every
float op whose value does not only flow on into another float op or the store, is
finite. An infinity or NaN survives ``+ - *``, so whatever NumPy would warn about in
the group shows there (so does a non-finite input, which only costs the group: the
ordinary loop then decides precisely).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import ops as O
from ..ir.function import BasicBlock
from ..opt.strip_plans import F32 as F32_TYPE, StripPlan, VectorPlan, indices
from ..typing.infer import value_type
from .context import LoopLowering
from .ltypes import F32, F64, I1, I32
from .striplog import StripLog, overlap

#: Iterations per group: eight doubles, one AVX-512 register (two AVX2 ones).
WIDTH = 8


def bounds_ready(lw: LoopLowering, plan: VectorPlan) -> bool:
    """Whether every index of every access is proven in bounds or was tested before
    the loop: a vector access must never need a per-element test."""
    return all(lw.access.index_checked(op, k) for op in plan.loads + (plan.store,) for k in range(len(indices(op))))


def emit_groups(lw: LoopLowering, plan: VectorPlan, header: BasicBlock, state: ir.Value, failed: ir.Value) -> None:
    """At the loop's header, after its checkpoint: run groups while at least `WIDTH`
    iterations are left and none has failed in this call (`failed`, shared with the
    logged strips), then fall through to them and the ordinary ForIter. Nothing is
    emitted when some index is not known to be in bounds (`bounds_ready`)."""
    em = lw.em
    b = em.builder
    body = header.terminator.body  # type: ignore[attr-defined]

    def field(i: int) -> ir.Value:
        return b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, i)])

    log = StripLog(em, StripPlan(body))  # its flag: the group's scalar guards
    b.store(ir.Constant(I1, 0), log.flag)
    em.strip = log
    try:
        lw.access.early_bounds_guards(body)  # loop-invariant: the indices then need no test
    finally:
        em.strip = None
    if not bounds_ready(lw, plan):
        return
    # An array read that overlaps the one written keeps the loop out of groups.
    refused = b.or_(b.load(log.flag), overlap(lw, StripPlan(body, reads=plan.reads, writes=(plan.store.obj,))))
    head, group, done = em.block("group.head"), em.block("group.body"), em.block("group.done")
    leave, back = em.block("group.leave"), em.block("group.back")
    before = b.block
    b.cbranch(refused, done, head)

    b.position_at_end(head)
    ran = b.phi(I1)  # some group has run since the header was entered
    ran.add_incoming(ir.Constant(I1, 0), before)
    enough = b.icmp_unsigned(">=", b.load(field(2)), em.i64(WIDTH))
    # A signal (Ctrl-C) ends the groups: the header, which tests for it, comes next.
    quiet = lw.no_new_signals()
    b.cbranch(b.and_(b.and_(enough, quiet), b.not_(b.load(failed))), group, leave)

    b.position_at_end(leave)
    b.cbranch(ran, back, done)

    b.position_at_end(group)
    p = b.load(field(0))
    b.store(p, field(3))  # the item of the group's first iteration (IterValue reads it)
    vectors: dict[O.Value, ir.Value] = {}  # in single precision for np.float32 values

    def operand(v: O.Value, single: bool = False) -> ir.Value:
        """`v` as a vector of doubles, or of floats (`single`: an operand of a float32
        op, which the plan made sure float32 holds)."""
        elem = F32 if single else F64
        if v in vectors:
            vec = vectors[v]
            return vec if vec.type.element == elem else b.fpext(vec, ir.VectorType(F64, WIDTH))  # (exact)
        if isinstance(v, O.Const):
            scalar = ir.Constant(elem, float(v.value))  # (rounded as NumPy converts it)
        else:
            scalar = lw.get(v)[0]  # (a double; an np.float32 one holds a float exactly)
            scalar = b.fptrunc(scalar, F32) if single else scalar
        t = ir.VectorType(elem, WIDTH)
        one = b.insert_element(ir.Constant(t, ir.Undefined), scalar, ir.Constant(I32, 0))
        return b.shuffle_vector(one, ir.Constant(t, ir.Undefined), ir.Constant(ir.VectorType(I32, WIDTH), [0] * WIDTH))

    def single(op: O.Subscript | O.StoreItem) -> bool:
        return value_type(op.obj).dtype == "float32"  # type: ignore[attr-defined]

    def address(op: O.Subscript | O.StoreItem) -> ir.Value:
        ptr = lw.access.element_pointer(lw.get(op.obj), lw.get(op.index), op)  # lane 0's element
        return b.bitcast(ptr, ir.VectorType(F32 if single(op) else F64, WIDTH).as_pointer())

    tested: list[ir.Value] = []
    target: ir.Value | None = None
    lasts = {op: em.alloca(F64) for op in plan.lasts}
    em.strip = log
    saved_resume, saved_line = em.resume, em.line
    try:
        for op in body.ops[:-1]:
            em.line = op.line or lw.fn.firstlineno
            if isinstance(op, O.Checkpoint):
                continue
            if isinstance(op, O.Subscript):
                vectors[op] = b.load(address(op), align=1)
            elif isinstance(op, O.Compare) and op in plan.arith:
                vectors[op] = _compare(b, op.op, operand(op.lhs), operand(op.rhs))
            elif isinstance(op, O.Truth) and op in plan.arith:
                vectors[op] = vectors[op.value]
            elif isinstance(op, O.Select) and op in plan.arith:
                vectors[op] = b.select(vectors[op.cond], operand(op.if_true), operand(op.if_false))
                if not all(_passed_on(u, op, plan) for u in lw.users(op)):
                    tested.append(vectors[op])
            elif op in plan.arith:
                assert isinstance(op, O.BinOp)
                one = op.type == F32_TYPE
                vectors[op] = {"+": b.fadd, "-": b.fsub, "*": b.fmul}[op.op](operand(op.lhs, one), operand(op.rhs, one))
                users = lw.users(op)
                if not users or not all(_passed_on(u, op, plan) for u in users):
                    tested.append(vectors[op])  # its value does not only flow on to a test
            elif op is plan.store:
                target = address(op)
                tested.append(operand(op.value, single(op)))
            else:  # the item and index arithmetic: lane 0's scalar values
                lw.lower(op)
    finally:
        em.strip = None
        em.resume, em.line = saved_resume, saved_line
    assert target is not None
    bad = b.load(log.flag)
    mask_t = ir.IntType(WIDTH)
    for v in tested:
        name = f"llvm.fabs.v{WIDTH}{'f32' if v.type.element == F32 else 'f64'}"
        inf = ir.Constant(v.type, [float("inf")] * WIDTH)
        lanes = b.fcmp_unordered(">=", em.intrinsic(name, v.type, [v]), inf)  # NaN or inf
        bad = b.or_(bad, b.icmp_unsigned("!=", b.bitcast(lanes, mask_t), ir.Constant(mask_t, 0)))
    commit, refuse = em.block("group.commit"), em.block("group.refused")
    b.cbranch(bad, refuse, commit)

    b.position_at_end(commit)
    b.store(operand(plan.store.value, single(plan.store)), target, align=1)
    for op, slot in lasts.items():  # the locals' values in the group's last iteration
        last = b.extract_element(vectors[op], ir.Constant(I32, WIDTH - 1))
        b.store(b.fpext(last, F64) if last.type == F32 else last, slot)
    b.store(b.add(p, em.i64(WIDTH)), field(0))
    b.store(b.sub(b.load(field(2)), em.i64(WIDTH)), field(2))
    b.branch(head)
    ran.add_incoming(ir.Constant(I1, 1), commit)

    b.position_at_end(refuse)  # nothing stored: the ordinary loop goes on from `p`
    b.store(ir.Constant(I1, 1), failed)
    b.branch(head)
    ran.add_incoming(ran, refuse)

    # After groups ran, the header is entered again, its phis getting the values of
    # the last iteration that ran: the item is the one before the iterator's next.
    b.position_at_end(back)
    item = next(op for op in body.ops if isinstance(op, O.IterValue))
    lane0 = lw.rebind(item, b.sub(b.load(field(0)), em.i64(1)))
    for op, slot in lasts.items():
        lw.bind(op, b.load(slot))
    for phi, leaves in lw.header_phis(header):
        for leaf, val in zip(leaves, lw.phi_leaves(phi, phi.value_for(body))):
            lw.add_incoming(leaf, val, back)
    lw.rebind(item, lane0)
    for op in lasts:
        lw.unbind(op)  # (the ordinary loop's lowering gives it its own value)
    b.branch(lw.block_of(header))
    b.position_at_end(done)


def _compare(b: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """A Python comparison of doubles, lane by lane: false with a NaN, but ``!=``."""
    return b.fcmp_unordered(op, x, y) if op == "!=" else b.fcmp_ordered(op, x, y)


def _passed_on(user: O.Op, v: O.Op, plan: VectorPlan) -> bool:
    """Whether `user` carries a non-finite `v` on to a value the group tests: a float
    op or the store does; a select only where it picks `v`, which is enough only for
    an arm's op (speculative: CPython computes it only where it is picked); a
    comparison does not (its bool is finite)."""
    if user is plan.store:
        return True
    if user not in plan.arith:
        return False
    if isinstance(user, O.BinOp):
        return True
    return isinstance(user, O.Select) and v is not user.cond and v.speculative
