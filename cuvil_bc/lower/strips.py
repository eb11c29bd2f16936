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

from llvmlite import ir

from ..ir import ops as O
from ..ir.function import BasicBlock
from ..opt.strip_plans import StripPlan
from .context import LoopLowering
from .emitter import not_finite
from .groups import emit_groups
from .ltypes import I1, I32, I64
from .striplog import SHORT, STRIP, StripLog, overlap

def emit_strips(lw: LoopLowering, header: BasicBlock, plan: StripPlan) -> None:
    """Before the header's ForIter is lowered: run strips of the loop while enough
    iterations are left (one; `SHORT` for a buffered strip, which always runs that
    many) and no strip of it failed in this call, then fall through to the ordinary
    ForIter. The builder is in the header, after its checkpoint.

    A buffered strip (`plan.buffered`) differs in three ways: it first tests that no
    array it reads overlaps one it writes (`overlap`); its stores go to slots that
    `StripLog.commit` writes to the arrays once the strip has succeeded, instead of
    being logged and undone; and the float ops of its recurrence are tested once,
    after the strip (`absorbed_ops`). Its loop has a constant trip count and is
    unrolled completely (`_unroll_fully`), which keeps the slots in registers."""

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
    log = StripLog(em, plan)
    b.store(ir.Constant(I1, 0), log.flag)
    # The body's loop-invariant bounds tests, before the strip: an index they cover
    # is then used unchecked in it, so a failing test must keep the strip from
    # running at all (the ordinary loop deopts on it).
    em.strip = log
    try:
        lw.access.early_bounds_guards(body)
        if plan.buffered:
            log.fail_if(overlap(lw, plan))
    finally:
        em.strip = None
    loop, refused = em.block("strip.short" if plan.buffered else "strip.loop"), em.block("strip.refused")
    b.cbranch(b.load(log.flag), refused, loop)

    b.position_at_end(loop)
    t = b.phi(I64)
    t.add_incoming(em.i64(0), pre)
    log.t = t
    header_phis = lw.header_phis(header)
    outer: dict[O.Value, ir.Value] = {}
    strip_phis = []
    for phi, leaves in header_phis:
        mine = [b.phi(leaf.type) for leaf in leaves]
        for leaf, new in zip(leaves, mine):
            new.add_incoming(leaf, pre)
        strip_phis.append(mine)
    for (phi, _), mine in zip(header_phis, strip_phis):
        outer[phi] = lw.rebind(phi, lw.assemble(phi, mine))
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
        log.fail_if(not_finite(em, lw.get(op)[0]))
    if plan.buffered:  # a clean strip writes its stores, then goes on
        done = em.block("strip.commit")
        b.cbranch(b.load(log.flag), undo, done)
        b.position_at_end(done)
        log.commit()
        b.branch(lw.block_of(header))
    else:  # a clean strip has made its stores already
        done = b.block
        b.cbranch(b.load(log.flag), undo, lw.block_of(header))
    for (phi, leaves), vals in zip(header_phis, nexts):
        for leaf, val in zip(leaves, vals):
            lw.add_incoming(leaf, val, done)

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
        lw.rebind(phi, value)


def _unroll_fully(module: ir.Module, back_edge: ir.Instruction) -> None:
    """Ask LLVM to unroll the loop of this back edge completely, whatever its size:
    a buffered strip's slots only become registers in straight-line code (kept in
    memory, they made a strip twice as slow as the ordinary loop). Loop metadata is
    a node whose first operand is itself, which llvmlite builds in two steps."""
    unique = ir.MetaDataString(module, f"cuvil_bc.strip.{len(module.metadata)}")
    node = module.add_metadata([unique, module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.full")])])
    node.operands = (node,) + node.operands[1:]
    back_edge.set_metadata("llvm.loop", node)


