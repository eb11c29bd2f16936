"""How cuvil_bc types are represented in LLVM and across the native boundary.

Inside native code: bool is i1, int i64, float double, tuples are literal structs and a
union is ``{i8 tag, member...}`` with the tag indexing `UnionType.options`. Values with
no run-time content (None, compile-time objects) are an i8 0.

Across the boundary (the cffi entry point) every value is flattened into 64-bit words:
ints and bools as int64, floats as the double's bits, None as no word, a tuple as its
items' words, and a union as a tag word followed by every member's words. NumPy scalars
are represented as their Python counterparts; an array argument is its data address,
its shape and its strides (in bytes), 1 + 2 * ndim words. An array result adds its
meminfo: 2 + 2 * ndim words.

Inside native code an array is ``{data, shape..., strides..., meminfo}``. The meminfo
is the allocation's header address (`csrc/runtime.c`) for an array that native code
allocated, which owns a reference to it; for an argument of the native entry point it
is ``-(k + 1)`` for argument k, so that returning an argument returns that very object.
"""

from __future__ import annotations

from llvmlite import ir

from ..typing.types import BOOL, FLOAT, INT, RANGE, RANGE_ITER, ArrayType, NpScalar, TupleType, Type, UnionType
from .layout import c_param_types, words  # noqa: F401 (the boundary layout, also call time's)

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F64 = ir.DoubleType()
ITER = ir.LiteralStructType([I64, I64, I64, I64])  # cur, step, remaining, item
RANGE_STRUCT = ir.LiteralStructType([I64, I64, I64])  # start, stop, step


def declare(module: ir.Module, name: str, ftype: ir.FunctionType) -> ir.Function:
    """The function `name` of `module`, declared with type `ftype` if it is not there
    yet (a runtime function, or a compiled function another module defines)."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing  # type: ignore[return-value]
    return ir.Function(module, ftype, name=name)


def array_struct(ndim: int) -> ir.LiteralStructType:
    """An array: its data address, `ndim` extents, `ndim` strides in bytes, meminfo."""
    return ir.LiteralStructType([I64] * (2 + 2 * ndim))


def meminfo_index(ndim: int) -> int:
    return 1 + 2 * ndim


def llvm_type(t: Type) -> ir.Type:
    if isinstance(t, NpScalar):
        return llvm_type(t.base)
    if isinstance(t, ArrayType):
        return array_struct(t.ndim)
    if t == BOOL:
        return I1
    if t == INT:
        return I64
    if t == FLOAT:
        return F64
    if t == RANGE:
        return RANGE_STRUCT
    if t == RANGE_ITER:
        return ITER.as_pointer()
    if isinstance(t, TupleType):
        return ir.LiteralStructType([llvm_type(i) for i in t.items])
    if isinstance(t, UnionType):
        return ir.LiteralStructType([I8] + [llvm_type(o) for o in t.options])
    return I8  # None, compile-time objects, bottom


def llvm_param_types(t: Type) -> list[ir.Type]:
    return [F64 if c == "double" else I64 for c in c_param_types(t)]
