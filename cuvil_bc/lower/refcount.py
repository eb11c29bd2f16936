"""Reference counting of arrays that native code allocates: the code for what the
ownership plan (`opt/ownership.py`) decides.

An array's value carries the meminfo of its allocation (see `ltypes.py`). Arguments
carry a meminfo <= 0, for which the runtime's incref and decref do nothing, so the
lowering need not tell them apart.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ..ir import ops as O
from ..ir.function import BasicBlock
from ..opt import ownership
from ..typing.infer import value_type
from ..typing.types import ArrayType, TupleType, Type, UnionType, holds_array
from .ltypes import I8, I64, declare, meminfo_index

#: The LLVM value of an IR value where the builder is, with its type.
Getter = Callable[[O.Value], tuple[ir.Value, Type]]


def meminfo(b: ir.IRBuilder, val: ir.Value, t: Type) -> ir.Value:
    """The meminfo a value of type `t` carries (0 when it holds no array now)."""
    if isinstance(t, ArrayType):
        return b.extract_value(val, meminfo_index(t.ndim))
    assert isinstance(t, UnionType)
    out: ir.Value = ir.Constant(I64, 0)
    tag = b.extract_value(val, 0)
    for k, opt in enumerate(t.options):
        if isinstance(opt, ArrayType):
            mine = b.extract_value(b.extract_value(val, k + 1), meminfo_index(opt.ndim))
            out = b.select(b.icmp_unsigned("==", tag, ir.Constant(I8, k)), mine, out)
    return out


def _runtime(module: ir.Module, name: str) -> ir.Function:
    return declare(module, name, ir.FunctionType(ir.VoidType(), [I64]))


def _meminfos(b: ir.IRBuilder, val: ir.Value, t: Type) -> list[ir.Value]:
    """One meminfo per array a value holds (a tuple may hold several)."""
    if isinstance(t, TupleType):
        return [m for k, item in enumerate(t.items) if holds_array(item) for m in _meminfos(b, b.extract_value(val, k), item)]
    return [meminfo(b, val, t)]


def incref(b: ir.IRBuilder, val: ir.Value, t: Type) -> None:
    for m in _meminfos(b, val, t):
        b.call(_runtime(b.module, "cb_incref"), [m])


def decref(b: ir.IRBuilder, val: ir.Value, t: Type) -> None:
    for m in _meminfos(b, val, t):
        b.call(_runtime(b.module, "cb_decref"), [m])


class Holdings:
    """The array references that the code at the builder holds, and the code that
    follows the ownership plan (`opt/ownership.Liveness`, None for a function that
    owns nothing): releases after last uses, references handed along edges and to
    the caller, releases on deopt paths."""

    def __init__(self, plan: ownership.Liveness | None, b: ir.IRBuilder, get: Getter) -> None:
        self.plan = plan
        self.b = b
        self.get = get
        self.held: list[O.Op] = []

    @property
    def tracking(self) -> bool:
        return self.plan is not None

    def enter(self, block: BasicBlock, order: dict[O.Op, int]) -> dict[int, list[O.Op]]:
        """At the start of `block`: hold what is live into it (its phis are added as
        they are lowered); return the releases due after each op (by index)."""
        self.held = []
        if self.plan is None:
            return {}
        live = self.plan.live_in[block]
        self.held = sorted((v for v in live if v.block is not block), key=order.__getitem__)
        return self.plan.releases(block)

    def acquire(self, op: O.Op) -> None:
        """`op` was just lowered: hold its reference if it owns one."""
        if self.plan is not None and ownership.is_owned(op):
            self.held.append(op)

    def key(self) -> tuple[int, ...]:
        """What a deopt path's code depends on (see `Emitter.deopt_block`)."""
        return tuple(id(v) for v in self.held)

    def holds(self, v: O.Value) -> bool:
        return v in self.held

    def release(self, values: list[O.Op]) -> None:
        """Drop the references these held values own (their last use is behind us)."""
        for v in values:
            if v in self.held:
                self.held.remove(v)
                decref(self.b, *self.get(v))

    def release_for_deopt(self, handed: set[O.Value]) -> None:
        """On a deopt path: drop every held reference but those `handed` to the
        interpreter with the resume state (the builder is in the deopt block)."""
        for v in self.held:
            if v not in handed:
                decref(self.b, *self.get(v))

    def hand_to_caller(self, v: O.Value, val: ir.Value, t: Type) -> None:
        """Before ``return v``: the caller gets a reference (this code's own, or a new
        one, also in a function that owns nothing: ``return a`` of an argument), and
        every other is released. `val` is `v` where the builder is, of type `t`."""
        mine = ownership.holder(v)
        if mine is not None and mine in self.held:
            self.held.remove(mine)  # type: ignore[arg-type]
        elif holds_array(t):
            incref(self.b, val, t)
        self.release(list(self.held))

    def edge(self, pred: BasicBlock, succ: BasicBlock, block: Callable[[str], ir.Block], target: Callable[[], ir.Block]) -> ir.Block | None:
        """A block (made by `block`) on the edge pred -> succ for its reference
        counting, or None when it has none: each phi of succ gets a reference (a value
        that dies on this edge hands its own over, any other is increfed), and what
        succ does not need is released; then on to `target()`."""
        assert self.plan is not None
        b = self.b
        live = self.plan.live_in[succ]
        handed: set[O.Value] = set()
        increfs: list[tuple[ir.Value, Type]] = []
        for phi in succ.phis():
            if not holds_array(phi.type):
                continue
            v = phi.value_for(pred)
            mine = ownership.holder(v)
            if mine is not None and mine in self.held and mine not in live and mine not in handed:
                handed.add(mine)
            elif holds_array(value_type(v)):
                increfs.append(self.get(v))
        drops = [v for v in self.held if v not in live and v not in handed]
        if not increfs and not drops:
            return None
        edge = block(f"edge.{pred.name}.{succ.name}")
        with b.goto_block(edge):
            for val, t in increfs:
                incref(b, val, t)
            for v in drops:
                decref(b, *self.get(v))
            b.branch(target())
        return edge
