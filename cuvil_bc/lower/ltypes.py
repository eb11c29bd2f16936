"""How cuvil_bc types are represented in LLVM and across the native boundary: each
type's model (typing/models.py) gives its layout as leaves; this module gives each leaf
kind its LLVM type and reads and writes values leaf by leaf.

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

from typing import TYPE_CHECKING, Any, Callable, Iterator

from llvmlite import ir

from ..typing.models import BIT, DATA, ITERATOR, MEMINFO, REAL, TAG, UNIT, WORD, c_params, model
from ..typing.types import Type

if TYPE_CHECKING:
    from ..typing.models import Layout

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F64 = ir.DoubleType()
F32 = ir.FloatType()
ITER = ir.LiteralStructType([I64, I64, I64, I64])  # cur, step, remaining, item
RANGE_STRUCT = ir.LiteralStructType([I64, I64, I64])  # start, stop, step


def declare(module: ir.Module, name: str, ftype: ir.FunctionType) -> ir.Function:
    """The function `name` of `module`, declared with type `ftype` if it is not there
    yet (a runtime function, or a compiled function another module defines)."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing  # type: ignore[return-value]
    return ir.Function(module, ftype, name=name)


def _attributes(fn: ir.Function, *names: str) -> None:
    """Give `fn` these function attributes (once). llvmlite checks names against the
    attributes of older LLVMs; LLVM's parser reads newer ones, such as ``memory(...)``,
    as they are."""
    for name in names:
        if name not in fn.attributes:
            set.add(fn.attributes, name)


def inaccessible_only(fn: ir.Function) -> None:
    """Declare that `fn` reads and writes only memory native code never sees (the
    runtime's own state), so LLVM may keep loads and stores of arrays across calls."""
    _attributes(fn, "nounwind", "willreturn", "memory(inaccessiblemem: readwrite)")


def math_function(fn: ir.Function, reads_arguments: bool = False) -> None:
    """Declare a function of the C library or the runtime's math (csrc/pymath.c) pure:
    it reads nothing but its arguments (with `reads_arguments`, the memory they point
    to) and writes nothing native code reads (it may set errno, which neither native
    code nor CPython after it looks at); so LLVM keeps array loads and stores across
    its calls, and may vectorize a loop with a rare call in it (powers.py). `nobuiltin`
    keeps LLVM from replacing it by what it believes is equivalent (pow(x, 2.0)
    becomes x * x, which differs from glibc's pow in the last bit: powers.py computes
    such powers as pow does)."""
    memory = "memory(argmem: read)" if reads_arguments else "memory(none)"
    _attributes(fn, "nobuiltin", "nounwind", "willreturn", memory)


def array_struct(ndim: int) -> ir.LiteralStructType:
    """An array: its data address, `ndim` extents, `ndim` strides in bytes, meminfo."""
    return ir.LiteralStructType([I64] * (2 + 2 * ndim))


def meminfo_index(ndim: int) -> int:
    return 1 + 2 * ndim


#: The LLVM type of each leaf kind of a model's layout (typing/models.py).
LEAF_TYPES: dict[str, ir.Type] = {
    BIT: I1, WORD: I64, REAL: F64, TAG: I8, UNIT: I8, DATA: I64, MEMINFO: I64, ITERATOR: ITER.as_pointer(),
}


def layout_type(layout: Layout) -> ir.Type:
    if isinstance(layout, str):
        return LEAF_TYPES[layout]
    return ir.LiteralStructType([layout_type(part) for part in layout])


def llvm_type(t: Type) -> ir.Type:
    return layout_type(model(t).layout(t))


def llvm_param_types(t: Type) -> list[ir.Type]:
    return [F64 if c == "double" else I64 for c in c_params(t)]


def store_words(b: ir.IRBuilder, out: ir.Value, val: ir.Value, t: Type, index: int) -> int:
    """Store `val` (of type `t`) as 64-bit words from ``out[index]`` on, leaf by leaf
    (a range iterator: its next value, step and items left); return the index after
    them."""
    return _store_leaves(b, out, val, model(t).layout(t), index)


def _store_leaves(b: ir.IRBuilder, out: ir.Value, val: ir.Value, layout: Layout, index: int) -> int:
    if not isinstance(layout, str):
        for k, part in enumerate(layout):
            index = _store_leaves(b, out, b.extract_value(val, k), part, index)
        return index
    if layout == UNIT:
        return index
    if layout == ITERATOR:
        for k in range(3):
            field = b.load(b.gep(val, [ir.Constant(I32, 0), ir.Constant(I32, k)]))
            b.store(field, b.gep(out, [ir.Constant(I64, index + k)]))
        return index + 3
    word = b.zext(val, I64) if layout in (BIT, TAG) else b.bitcast(val, I64) if layout == REAL else val
    b.store(word, b.gep(out, [ir.Constant(I64, index)]))
    return index + 1


def from_params(b: ir.IRBuilder, params: Iterator[ir.Value], t: Type, position: int) -> ir.Value:
    """The value of argument `position` (of type `t`) from the entry's flattened
    parameters (`llvm_param_types`), taken from `params` leaf by leaf."""

    def build(layout: Layout) -> ir.Value:
        if not isinstance(layout, str):
            val = ir.Constant(layout_type(layout), ir.Undefined)
            for k, part in enumerate(layout):
                val = b.insert_value(val, build(part), k)
            return val
        if layout == BIT:
            return b.icmp_signed("!=", next(params), ir.Constant(I64, 0))
        if layout in (WORD, REAL, DATA):
            return next(params)
        if layout == MEMINFO:  # not native memory: which argument it is
            return ir.Constant(I64, -(position + 1))
        assert layout == UNIT, layout
        return ir.Constant(I8, 0)

    return build(model(t).layout(t))


def const(value: object, t: Type, b: ir.IRBuilder | None = None, real: Callable[[float], ir.Value] | None = None) -> ir.Value:
    """The constant `value` of type `t`. With `real` (`Emitter.float_constant`), each
    double leaf is what it gives: a value LLVM cannot fold where folding would change
    a NaN's sign; a struct holding one is then built with `b`."""
    m = model(t)
    return _const_leaves(m.layout(t), m.leaf_values(value, t), b, real)


def _const_leaves(layout: Layout, values: Any, b: ir.IRBuilder | None, real: Callable[[float], ir.Value] | None) -> ir.Value:
    if not isinstance(layout, str):
        parts = [_const_leaves(part, v, b, real) for part, v in zip(layout, values)]
        if all(isinstance(p, ir.Constant) for p in parts):
            return ir.Constant(layout_type(layout), parts)
        assert b is not None
        out = ir.Constant(layout_type(layout), ir.Undefined)
        for k, p in enumerate(parts):
            out = b.insert_value(out, p, k)
        return out
    if layout == BIT:
        return ir.Constant(I1, int(bool(values)))
    if layout == WORD:
        return ir.Constant(I64, int(values))
    if layout == REAL:
        return ir.Constant(F64, float(values)) if real is None else real(float(values))
    return ir.Constant(I8, 0)
