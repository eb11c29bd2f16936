"""Values made of members: tuples and unions (see `ltypes.py` for their layouts).

Their items, their narrowing to one member, and their scalar leaves: a phi of an
aggregate is split into one LLVM phi per scalar leaf, which LLVM's loop analyses see
through (a union's tag that is constant after the first iteration), and rebuilt from
them after the block's phis (`assemble`).
"""

from __future__ import annotations

from llvmlite import ir

from typing import Callable

from ..typing.types import BOTTOM, FLOAT, NP_BOOL, NP_F64, TupleType, Type, UnionType
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


def twin_arithmetic(
    em: Emitter, operands: list[Typed], t: Type, strong_op: Callable[[Typed, Typed], Typed], carried: list[bool]
) -> ir.Value | None:
    """``+ - * /`` whose result is a ``float | np.float64`` (`t`), its operands such
    unions, floats or np.float64s; None for any other op. The value is the same IEEE
    op whichever the tags, so it is computed once, as NumPy's (`strong_op`, with
    NumPy's tests). Those tests cover Python's (its ``+ - *`` have none, and NumPy's
    ``/`` is lowered as Python's, which deopts on a zero divisor); where the result would be a Python float
    that CPython gives silently (an overflow to infinity), they cost a deopt, or in a
    function whose tests are deferred a re-run (and, if it recurs, a recompile
    without suspicion, which splits the op per tag). The result's tag is the NumPy
    one where any operand holds an np.float64: with the tags in the union's order
    (float, np.float64), an ``or`` of the operands' tags. Lowered per tag instead, a
    running sum such as ``g2 += g * g`` carried one phi per member and tests that
    read the tag, and LLVM found no reduction in it; in a function that writes, a
    test's branch on a tag that changes from one element to the next mispredicted.

    `carried` says which operands are a loop's accumulators (phis of its header).
    The other operands' tags are masked with a 1 LLVM cannot see: where such a tag is
    a phi of constants (``g = 0.0`` or, under an ``if``, an np.float64), LLVM would
    fold the ``or`` into that phi, and the accumulator's tag would change by a phi
    of itself and 1 (no reduction LLVM knows) instead of by an ``or``."""
    if not (isinstance(t, UnionType) and set(t.options) == {FLOAT, NP_F64}) or len(operands) != 2:
        return None
    b = em.builder
    strong, weak = t.options.index(NP_F64), t.options.index(FLOAT)
    values, tags = [], []
    for val, ty in operands:
        if ty == t:
            values.append((b.extract_value(val, strong + 1), NP_F64))
            tags.append(b.extract_value(val, 0))
        elif ty in (FLOAT, NP_F64):
            values.append((val, NP_F64))
            tags.append(ir.Constant(I8, t.options.index(ty)))
        else:
            return None
    value, got = strong_op(values[0], values[1])
    assert got == NP_F64, got
    if (weak, strong) == (0, 1):
        if any(carried):
            one = em.opaque_constant(ir.Constant(I8, 1))
            tags = [tag if kept else b.and_(tag, one) for tag, kept in zip(tags, carried)]
        tag = b.or_(tags[0], tags[1])
    else:
        held = [b.icmp_unsigned("==", tag, ir.Constant(I8, strong)) for tag in tags]
        tag = b.select(b.or_(held[0], held[1]), ir.Constant(I8, strong), ir.Constant(I8, weak))
    out = b.insert_value(ir.Constant(llvm_type(t), ir.Undefined), tag, 0)
    for k in (weak, strong):  # (both twins hold the value: `Emitter.coerce`)
        out = b.insert_value(out, value, k + 1)
    return out
