"""Reference counting of arrays that native code allocates: the code for what the
ownership plan (`opt/ownership.py`) decides.

An array's value carries the meminfo of its allocation (see `ltypes.py`). Arguments
carry a meminfo <= 0, for which the runtime's incref and decref do nothing, so the
lowering need not tell them apart.
"""

from __future__ import annotations

from llvmlite import ir

from ..typing.types import ArrayType, TupleType, Type, UnionType, holds_array
from .ltypes import I8, I64, declare, meminfo_index


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
