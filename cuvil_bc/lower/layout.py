"""The boundary layout: how many 64-bit words a value of each type takes across the
native boundary, and the C types of a function's flattened parameters (ltypes.py
describes the layout). Code generation and the call-time code (boxing.py, the
dispatcher) both read it; nothing here imports llvmlite.
"""

from __future__ import annotations

from ..typing.types import BOOL, FLOAT, INT, ArrayType, NpScalar, TupleType, Type, UnionType


def words(t: Type) -> int:
    """How many 64-bit words a value of type `t` takes across the boundary."""
    if isinstance(t, NpScalar):
        return 1
    if isinstance(t, ArrayType):
        return 2 + 2 * t.ndim
    if t in (BOOL, INT, FLOAT):
        return 1
    if isinstance(t, TupleType):
        return sum(words(i) for i in t.items)
    if isinstance(t, UnionType):
        return 1 + sum(words(o) for o in t.options)
    return 0


def c_param_types(t: Type) -> list[str]:
    """The C types of the flattened parameters for an argument of type `t`."""
    if isinstance(t, NpScalar):
        return c_param_types(t.base)
    if isinstance(t, ArrayType):
        # The data pointer is a pointer for cffi (a buffer from `ffi.from_buffer` is
        # cheaper than `a.ctypes.data`); the entry point takes it as an i64, which
        # the x86-64 and AArch64 calling conventions pass alike.
        return ["char *"] + ["int64_t"] * (2 * t.ndim)
    if t in (BOOL, INT):
        return ["int64_t"]
    if t == FLOAT:
        return ["double"]
    if isinstance(t, TupleType):
        return [c for i in t.items for c in c_param_types(i)]
    return []
