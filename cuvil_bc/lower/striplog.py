"""The state of one strip of a loop while its body is lowered (`StripLog`): the
sticky flag its guards set, the scratch slot an out-of-bounds access is redirected
to, and its stores' undo log or, in a buffered strip, the slots they wait in; and the
run-time test that two sets of arrays do not overlap (`overlap`). Used by the logged
and buffered strips (strips.py) and by vector groups (groups.py), whose scalar guards
set the same kind of flag.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import ops as O
from ..opt.strip_plans import StripPlan
from ..typing.types import ITEMSIZE, ArrayType
from .arrays import storage_type
from .context import LoopLowering
from .emitter import Emitter
from .ltypes import I1, I32, I64

#: Iterations per strip: long enough to pay for the vectorized loop's run-time alias
#: checks, which LLVM makes once per strip (64 measured slower on jacobi_step), short
#: enough that the undo log (2 KiB per store) stays in L1. The logs live in the
#: function's frame; a function that writes is never called natively by another, so
#: only one such frame is ever on the stack.
STRIP = 256

#: Iterations per buffered strip (a loop with a recurrence): its stores wait in
#: registers, which takes a short loop of a constant trip count that LLVM unrolls.
SHORT = 8

class StripLog:
    """The state of one strip while its body is lowered: the sticky failure flag, a
    scratch slot for out-of-bounds accesses and, per store op, the undo log (or, in a
    buffered strip, the slots its stores wait in)."""

    def __init__(self, em: Emitter, plan: StripPlan) -> None:
        self.em = em
        #: A buffered strip: stores go to `pending` slots, written to the array after
        #: the strip succeeded (in program order); nothing to undo.
        self.buffered = plan.buffered
        self.absorbed = plan.absorbed
        #: the logged stores that move one element further each iteration
        self.moving = plan.moving
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


def overlap(lw: LoopLowering, plan: StripPlan) -> ir.Value:
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


def _byte_range(lw: LoopLowering, array: O.Value) -> tuple[ir.Value, ir.Value]:
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
