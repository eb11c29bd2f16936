"""Ownership of the arrays that native code allocates: which SSA values hold a
reference of their own, and where each one's last use is. Code generation emits the
reference counting this plan asks for (`lower/refcount.py`).

An array created in compiled code (``np.zeros(n)``, ``a.copy()``, ...) lives in memory
from `csrc/runtime.c` with an atomic reference count. Ownership follows SSA values. An
*owned* value holds one reference: the result of an allocation, of a native call
returning an array, of a view (``m[i]``, ``a.T``), a tuple holding arrays, and every
phi of an array type. Other uses borrow (`owner`: a narrowing of an owned union, an
item of a tuple). `Liveness` gives the owned values live into and out of each block
and, per block, where each can be released: code generation

* releases a value after its last use in a block, when it is not live out of it;
* on each edge, hands a value to the successor's phi when it dies there (else
  increfs it for the phi), and releases what the successor does not need;
* on return, hands the returned value to the caller (increfs a borrowed one);
* on a deoptimisation, releases what it holds, except what the resume state hands to
  the interpreter (a borrowed value is increfed for it first: `lower/deopt.py`).

A value named by a resume point (`ops.Checkpoint`) is kept to the end of its block,
since a guard after the checkpoint may still hand it to the interpreter.

    B1: %4 = phi [B0: %1, B2: %9]      held at B1: {%4}
        %9 = call <np.empty_like>(%4)  held: {%4, %9}
        ...                            (last use of %4 in B1: released after it)
        jump B1                        edge: %9 goes to the phi %4 (no refcount op)
"""

from __future__ import annotations

import types as pytypes

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..typing.infer import value_type
from ..typing.types import ArrayMethod, ArrayType, holds_array


def is_owned(v: O.Value) -> bool:
    """Whether `v` holds a reference of its own (see the module docstring)."""
    if not isinstance(v, O.Op) or not holds_array(v.type):
        return False
    if _tuple_item(v):
        return False  # ``t[0]``: borrows from the tuple, like an unpacked item
    if isinstance(v, (O.Phi, O.Subscript, O.BuildTuple)):
        # a phi; a view (``m[i]``), which increfs the memory it shares; a tuple, which
        # holds a reference to each array in it
        return True
    if isinstance(v, O.LoadAttr):
        return v.name == "T"
    if isinstance(v, O.Call):
        func = v.func.value if isinstance(v.func, O.Const) else None
        return isinstance(func, pytypes.FunctionType) or isinstance(value_type(v.func), ArrayMethod) or _creates(func)
    return False


def owner(v: O.Value) -> O.Value:
    """The value whose reference `v` borrows: a narrowing (``x is not None``) of an
    owned union is the same array, an item of a tuple is the tuple's, so their uses
    keep the owner alive."""
    while True:
        if isinstance(v, O.Narrow):
            v = v.value
        elif isinstance(v, O.TupleGet):
            v = v.tup
        elif _tuple_item(v):
            v = v.obj  # type: ignore[attr-defined]
        elif isinstance(v, O.Unpack):
            v = v.seq
        else:
            return v


def _tuple_item(v: O.Value) -> bool:
    """``t[k]`` of a tuple (a constant index): the tuple's item, no view of an array."""
    return isinstance(v, O.Subscript) and not isinstance(value_type(v.obj), ArrayType)


def holder(v: O.Value) -> O.Value | None:
    """The owned value whose references are exactly `v`'s (`v` itself, or the value it
    narrows), which can hand them over; None when `v` only borrows part of them (an
    item of a tuple): handing the tuple's would pass the other items' too."""
    while isinstance(v, O.Narrow):
        v = v.value
    return v if is_owned(v) else None


def _creates(func: object) -> bool:
    from ..typing.primitives import creator_name

    return creator_name(func) is not None


class Liveness:
    """Owned values live into and out of each block (a backward dataflow fixpoint).
    A phi's incoming value is used at the end of its predecessor."""

    def __init__(self, fn: Function) -> None:
        self.live_in: dict[BasicBlock, set[O.Op]] = {b: set() for b in fn.blocks}
        self.live_out: dict[BasicBlock, set[O.Op]] = {b: set() for b in fn.blocks}
        preds = fn.predecessors()
        uses: dict[BasicBlock, set[O.Op]] = {}
        defs: dict[BasicBlock, set[O.Op]] = {}
        phi_uses: dict[BasicBlock, set[O.Op]] = {b: set() for b in fn.blocks}  # used at the end of b
        for b in fn.blocks:
            uses[b], defs[b] = set(), set()
            for op in b.ops:
                if isinstance(op, O.Phi):
                    for pred, v in op.incoming:
                        v = owner(v)
                        if is_owned(v) and pred in phi_uses:
                            phi_uses[pred].add(v)  # type: ignore[arg-type]
                else:
                    for v in op.operands():
                        v = owner(v)
                        if is_owned(v) and v not in defs[b]:
                            uses[b].add(v)  # type: ignore[arg-type]
                if is_owned(op):
                    defs[b].add(op)
        del preds
        changed = True
        while changed:
            changed = False
            for b in reversed(fn.blocks):
                out = set(phi_uses[b])
                for s in b.successors():
                    out |= self.live_in[s] - {p for p in s.phis()}
                new_in = uses[b] | (out - defs[b])
                if out != self.live_out[b] or new_in != self.live_in[b]:
                    self.live_out[b], self.live_in[b] = out, new_in
                    changed = True

    def releases(self, block: BasicBlock) -> dict[int, list[O.Op]]:
        """Op index -> owned values to release right after that op: their last use in
        the block, when they are not live out and no resume point of the block names
        them (those wait for the block's end, where the edges release them)."""
        last: dict[O.Op, int] = {}
        pinned: set[O.Value] = set()
        for k, op in enumerate(block.ops):
            if isinstance(op, O.Phi) or isinstance(op, O.ControlOp):
                continue
            if isinstance(op, O.Checkpoint):
                pinned.update(owner(v) for v in op.values)
                continue
            if is_owned(op):
                last.setdefault(op, k)
            for v in op.operands():
                v = owner(v)
                if is_owned(v):
                    last[v] = k  # type: ignore[index]
        for phi in block.phis():
            if is_owned(phi):
                last.setdefault(phi, block.ops.index(phi))
        term_uses = {owner(v) for v in block.terminator.operands()}
        out: dict[int, list[O.Op]] = {}
        for v, k in last.items():
            if v in self.live_out[block] or v in pinned or v in term_uses:
                continue
            out.setdefault(k, []).append(v)
        return out
