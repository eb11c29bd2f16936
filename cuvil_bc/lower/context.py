"""What the loop schemes (strips.py, groups.py, striplog.py) see of the lowering of
the function they are in: the small interface `LoopLowering`, which
`codegen.FunctionLowering` provides. They emit a second copy of a loop body around the
ordinary one, so they need to lower ops, read and rebind the LLVM values of IR
values, add incoming edges to the loop header's phis and address array elements
(`access.ArrayAccess`); nothing else of the function's lowering.
"""

from __future__ import annotations

from typing import Protocol

from llvmlite import ir

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from .access import ArrayAccess
from .emitter import Emitter, Typed


class LoopLowering(Protocol):
    em: Emitter
    fn: Function
    #: The function's array accesses: element addresses, bounds tests on entry to a
    #: block (`early_bounds_guards`), and which indices need no test (`index_checked`).
    access: ArrayAccess

    def get(self, v: O.Value) -> Typed:
        """The LLVM value of `v` where the builder is, with its type."""
        ...

    def rebind(self, v: O.Value, value: ir.Value) -> ir.Value:
        """From now on `v` is `value` (a strip's own copy of a header phi); returns
        what it was, to bind back after the copy."""
        ...

    def bind(self, v: O.Value, value: ir.Value) -> None:
        """Give `v`, which is not lowered yet, the value `value` until `unbind`."""
        ...

    def unbind(self, v: O.Value) -> None:
        ...

    def lower(self, op: O.Op) -> None:
        """Lower one op of a body at the builder."""
        ...

    def header_phis(self, header: BasicBlock) -> list[tuple[O.Phi, list[ir.PhiInstr]]]:
        """The loop header's phis, each with its LLVM phis (one per scalar leaf)."""
        ...

    def assemble(self, phi: O.Phi, leaves: list[ir.Value]) -> ir.Value:
        """The value of `phi` from its scalar leaves."""
        ...

    def phi_leaves(self, phi: O.Phi, src: O.Value) -> list[ir.Value]:
        """What `src` contributes to `phi`, leaf by leaf, at the builder."""
        ...

    def block_of(self, block: BasicBlock) -> ir.Block:
        """The LLVM block where `block` starts."""
        ...

    def add_incoming(self, phi: ir.PhiInstr, value: ir.Value, block: ir.Block) -> None:
        """An extra edge into a header phi (added once the whole function is lowered)."""
        ...

    def users(self, v: O.Value) -> list[O.Op]:
        """The ops that use `v`."""
        ...

    def no_new_signals(self) -> ir.Value:
        """An i1: no signal has arrived since the function was entered."""
        ...
