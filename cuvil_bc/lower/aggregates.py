"""Values made of members: tuples and unions (see `ltypes.py` for their layouts).

Their items, their narrowing to one member, and their scalar leaves: a phi of an
aggregate is split into one LLVM phi per scalar leaf, which LLVM's loop analyses see
through (a union's tag that is constant after the first iteration), and rebuilt from
them after the block's phis (`assemble`).
"""

from __future__ import annotations

from llvmlite import ir

from ..typing.types import BOTTOM, NP_BOOL, TupleType, Type, UnionType
from .emitter import WEAK_TWIN, Emitter, Typed
from .ltypes import I8, llvm_type


def leaf_paths(t: ir.Type, prefix: tuple[int, ...] = ()) -> list[list[int]]:
    """The index paths of the scalar members of a (nested) literal struct."""
    if not isinstance(t, ir.LiteralStructType):
        return [list(prefix)]
    return [p for k, e in enumerate(t.elements) for p in leaf_paths(e, prefix + (k,))]


def leaf_type(t: ir.Type, path: list[int]) -> ir.Type:
    for k in path:
        t = t.elements[k]  # type: ignore[attr-defined]
    return t


def leaf_phis(b: ir.IRBuilder, t: Type) -> list[ir.PhiInstr]:
    """The LLVM phis for a phi of type `t`: one per scalar leaf."""
    lltype = llvm_type(t)
    if not isinstance(lltype, ir.LiteralStructType):
        return [b.phi(lltype)]
    return [b.phi(leaf_type(lltype, path)) for path in leaf_paths(lltype)]


def assemble(b: ir.IRBuilder, t: Type, leaves: list[ir.Value]) -> ir.Value:
    """The value of type `t` made of its scalar `leaves` (the one leaf of a scalar)."""
    lltype = llvm_type(t)
    if not isinstance(lltype, ir.LiteralStructType):
        return leaves[0]
    val = ir.Constant(lltype, ir.Undefined)
    for path, leaf in zip(leaf_paths(lltype), leaves):
        val = b.insert_value(val, leaf, path)
    return val


def leaves(b: ir.IRBuilder, val: ir.Value, t: Type) -> list[ir.Value]:
    """The scalar leaves of `val`, of type `t`."""
    lltype = llvm_type(t)
    if isinstance(lltype, ir.LiteralStructType):
        return [b.extract_value(val, path) for path in leaf_paths(lltype)]
    return [val]


def tuple_item(em: Emitter, tup: Typed, index: int, t: Type) -> ir.Value:
    """Item `index` (negative counts from the end) of a tuple, or of a union of tuples
    of one length (``(a, 1) if c else (1.5, 2)``), represented as `t`."""

    def item(vs: list[Typed]) -> Typed:
        val, tt = vs[0]
        assert isinstance(tt, TupleType), tt
        k = index % len(tt.items)
        return em.builder.extract_value(val, k), tt.items[k]

    if isinstance(tup[1], TupleType):
        # (`t` may be wider than the item: typing saw a union of tuples there)
        return em.coerce(*item([tup]), t)
    return em.split([tup], t, item)


def build_tuple(em: Emitter, items: list[Typed], t: TupleType) -> ir.Value:
    """A tuple of `items`, each represented as `t` says: an item's type may be narrower
    than the tuple's (typing saw a union that folding later made a constant)."""
    val = ir.Constant(llvm_type(t), ir.Undefined)
    for i, (item, item_t) in enumerate(items):
        val = em.builder.insert_value(val, em.coerce(item, item_t, t.items[i]), i)
    return val


def narrow(em: Emitter, v: Typed, t: Type) -> ir.Value:
    """`v` as type `t`, which the branch that led here proved it has."""
    val, src = v
    if src == t:
        return val
    if t == BOTTOM or not isinstance(src, UnionType):
        return ir.Constant(llvm_type(t), ir.Undefined)  # this code cannot be reached
    b = em.builder
    if not isinstance(t, UnionType):
        return b.extract_value(val, src.options.index(t) + 1)
    merge = em.block("narrow")
    dead = em.block("narrow.impossible")
    with b.goto_block(dead):
        b.unreachable()
    switch = b.switch(b.extract_value(val, 0), dead)
    incoming = []
    for k, opt in enumerate(src.options):
        if opt not in t.options:
            continue
        blk = em.block(f"narrow.{opt}")
        switch.add_case(ir.Constant(I8, k), blk)
        b.position_at_end(blk)
        incoming.append((em.coerce(b.extract_value(val, k + 1), opt, t), b.block))
        b.branch(merge)
    b.position_at_end(merge)
    phi = b.phi(llvm_type(t))
    for value, blk in incoming:
        phi.add_incoming(value, blk)
    return phi


def weak_twins(em: Emitter, operands: list[Typed]) -> list[Typed]:
    """A binary op between an ``int | np.int64`` (``float | np.float64``) and an
    np.int64 (np.float64) is NumPy's op on two np.int64 (np.float64) whichever the tag:
    NumPy converts the Python scalar, which always fits. Both members of such a union
    hold its value (`Emitter.coerce` builds every union value), so the op reads the
    NumPy member whatever the tag and is lowered once instead of once per tag:
    ``total = 0`` before ``total = total + a[i]`` costs nothing per iteration."""
    if len(operands) != 2:
        return operands
    out = list(operands)
    for k in (0, 1):
        (val, t), (_, other) = operands[k], operands[1 - k]
        if not isinstance(t, UnionType):
            continue
        # (with an np.bool, too: NumPy converts the Python scalar to the union's NumPy
        # type and computes in it, ``count += x[i] > t``)
        strong = other if other in WEAK_TWIN else next((s for s in WEAK_TWIN if other == NP_BOOL and s in t.options), None)
        if strong is not None and set(t.options) == {WEAK_TWIN[strong], strong}:
            out[k] = (em.builder.extract_value(val, t.options.index(strong) + 1), strong)
    return out
