"""Type inference over SSA, specialised to one call's argument types.

A forward fixpoint over the blocks in reverse postorder: each op's type follows from its
operands' types by the rules in `rules.py` and `primitives.py`; a phi joins its incoming
types. Union operands are split into their members and the results joined, exactly as
the lowering splits them at run time. A construct that cannot be typed raises
`Unsupported` with the op's ``file:line``.
"""

from __future__ import annotations

import itertools
import sys
import types as pytypes
from typing import Callable, Protocol

from ..errors import CompileError, Unsupported
from ..ir import ops as O
from ..ir.function import Function
from . import rules
from .creation import creation
from .primitives import creator_name, lookup, method, result_type
from .types import (
    BOOL, BOTTOM, COMPLEX, FLOAT, INT, INT64_MAX, INT64_MIN, INT128_MAX, INT128_MIN, NONE, UINT, UINT64_MAX, INT128, RANGE, RANGE_ITER, UNDEF, ArrayMethod, ArrayType, BoundMethod, ExcType, ObjType, TupleType, UnionType,
    Type, base, constant_typeof, holds_array, is_index, join, options, typeof, union_of,
)


class CallResolver(Protocol):
    def call_type(self, func: pytypes.FunctionType, argtypes: tuple[Type, ...]) -> Type: ...


def const_type(value: object) -> Type:
    # Modules, functions, classes, and strings (exception messages): compile-time objects
    # with no run-time representation; using one as a number is rejected by the rules.
    if isinstance(value, (pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType, pytypes.MethodDescriptorType, type, str)):
        return ObjType(value)
    if creator_name(value) is not None:  # np.zeros_like & co. are dispatcher objects
        return ObjType(value)
    if type(value) is int and INT64_MAX < value <= UINT64_MAX:  # type: ignore[operator]
        return UINT  # (a mask: 0xFFFFFFFFFFFFFFFF; never an argument's type)
    if type(value) is int and INT128_MIN <= value <= INT128_MAX and not INT64_MIN <= value <= UINT64_MAX:  # type: ignore[operator]
        return INT128  # (``1 << 64``; never an argument's type either)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        # (its data would be an address of this process in the code; and CPython sees
        # every change to the array that a global names)
        raise Unsupported("a NumPy array held in a global (pass it as an argument)")
    return constant_typeof(value)


def value_type(v: O.Value) -> Type:
    if isinstance(v, O.Const):
        if v.type is None:
            v.type = const_type(v.value)
        return v.type
    if isinstance(v, O.Undef):
        v.type = UNDEF
        return UNDEF
    return v.type if v.type is not None else BOTTOM


def _split(ts: list[Type], rule: Callable[..., Type]) -> Type:
    """Apply `rule` to every combination of union members and join the results."""
    if any(t == BOTTOM for t in ts):
        return BOTTOM
    for t in ts:
        if UNDEF in options(t):
            raise Unsupported("a local variable that may be unbound here")
    return union_of([rule(*combo) for combo in itertools.product(*(options(t) for t in ts))])


def _truth_type(t: Type) -> Type:
    rules.truth_ok(t)
    return BOOL


class Inferencer:
    def __init__(self, fn: Function, argtypes: tuple[Type, ...], resolver: CallResolver) -> None:
        self.fn = fn
        self.resolver = resolver
        if len(argtypes) != len(fn.args):
            raise Unsupported(f"{len(argtypes)} arguments for {len(fn.args)} parameters")
        for a, t in zip(fn.args, argtypes):
            if isinstance(t, TupleType) and holds_array(t):
                raise Unsupported("a tuple argument holding an array")
            a.type = t

    def run(self) -> Type:
        order = self.fn.rpo()
        for op in self.fn.ops():
            op.type = None
        for _ in range(100):
            changed = False
            ret: Type = BOTTOM
            for block in order:
                if isinstance(block.terminator, O.Raise):
                    # Reaching a raise hands the call to CPython, which raises it: nothing
                    # computed in this block is ever observed, so none of it needs types.
                    for op in block.ops:
                        op.type = None if isinstance(op, O.ControlOp) else BOTTOM
                    continue
                for op in block.ops:
                    try:
                        new = self.type_of(op)
                    except CompileError as e:
                        raise e.at(self.fn.location(op)) from None
                    if isinstance(op, O.Return):
                        ret = join(ret, value_type(op.value))
                    elif new != op.type:
                        op.type = new
                        changed = True
            if not changed:
                return ret
        raise Unsupported("type inference did not converge", self.fn.location())

    def type_of(self, op: O.Op) -> Type | None:
        ts = [value_type(v) for v in op.operands()]
        if isinstance(op, O.Phi):
            return union_of(ts)
        if isinstance(op, O.Select):
            return union_of(ts[1:])
        if isinstance(op, O.BinOp):
            rc = op.rhs.value if isinstance(op.rhs, O.Const) else None
            return _split(ts, lambda a, b: rules.binop_type(op.op, a, b, rc))
        if isinstance(op, O.UnaryOp):
            return _split(ts, lambda a: rules.unary_type(op.op, a))
        if isinstance(op, O.Compare):
            return _split(ts, lambda a, b: rules.compare_type(op.op, a, b))
        if isinstance(op, O.Truth):
            return _split(ts, _truth_type)
        if isinstance(op, O.BuildTuple):
            if any(isinstance(t, UnionType) and holds_array(t) for t in ts):
                raise Unsupported("a tuple holding an array that may be unbound or None")
            return BOTTOM if BOTTOM in ts else TupleType(tuple(ts))
        if isinstance(op, (O.Unpack, O.TupleGet, O.Subscript)):
            return _split(ts, lambda *a: self.item_type(op, *a))
        if isinstance(op, O.StoreItem):
            return _split(ts, store_type)
        if isinstance(op, O.Checkpoint):
            return NONE  # its values may be unbound or of any type: the lowering checks
        if isinstance(op, O.Narrow):
            if ts[0] == BOTTOM:
                return BOTTOM
            if op.is_none is None:  # a read of a local that may be unbound
                if ts[0] == UNDEF:
                    # Never bound (so far: a loop's values may still come in): the read
                    # raises UnboundLocalError, a deopt, and gives no value.
                    return BOTTOM
                return union_of([t for t in options(ts[0]) if t != UNDEF])
            kept = [t for t in options(ts[0]) if (t == NONE) == op.is_none]
            return union_of(kept)  # BOTTOM when the test can never lead here
        if isinstance(op, O.GetIter):
            return _split(ts, lambda a: self.iter_type(a))
        if isinstance(op, O.IterValue):
            return _split(ts, lambda a: INT if a == RANGE_ITER else BOTTOM)
        if isinstance(op, O.Call):
            return self.call_type(op, ts)
        if isinstance(op, O.LoadAttr):
            if isinstance(ts[0], ArrayType) and op.name in ARRAY_ATTRIBUTES:
                return ARRAY_ATTRIBUTES[op.name](ts[0])
            if isinstance(ts[0], ArrayType) and op.name == "copy":
                return ArrayMethod("copy", ts[0])
            if all((t, op.name) in NUMBER_ATTRIBUTES for t in options(ts[0])):
                return _split(ts, lambda t: NUMBER_ATTRIBUTES[t, op.name])
            if method(ts[0], op.name) is not None:
                return BoundMethod(op.name, ts[0])
            raise Unsupported(f"attribute '{op.name}' of {ts[0]}")
        if isinstance(op, O.LoadGlobal):
            raise AssertionError("globals are resolved before typing")
        if isinstance(op, O.Branch):
            if ts[0] not in (BOOL, BOTTOM):
                raise AssertionError(f"branch on {ts[0]}")
            return None
        if isinstance(op, O.ForIter):
            if ts[0] not in (RANGE_ITER, BOTTOM):
                raise Unsupported(f"for loop over {ts[0]}")
            return None
        if isinstance(op, O.Return):
            _split(ts, _returnable)  # rejects a possibly unbound value, and arrays
            return None
        if isinstance(op, (O.Jump, O.Raise)):
            return None
        raise AssertionError(f"no typing rule for {type(op).__name__}")

    def item_type(self, op: O.Op, seq: Type, index: Type | None = None) -> Type:
        if isinstance(seq, ArrayType) and isinstance(op, O.Subscript):
            return array_item_type(seq, index)
        if not isinstance(seq, TupleType):
            raise Unsupported(f"indexing or unpacking a {seq}")
        if isinstance(op, O.Unpack):
            if len(seq.items) != op.count:
                raise Unsupported(f"unpacking {len(seq.items)} values into {op.count} names")
            return seq
        if isinstance(op, O.TupleGet):
            return seq.items[op.index]
        assert isinstance(op, O.Subscript)
        if not (isinstance(op.index, O.Const) and type(op.index.value) in (int, bool)):
            raise Unsupported("tuple indexed by a variable")
        i = int(op.index.value)  # type: ignore[call-overload]
        if not -len(seq.items) <= i < len(seq.items):
            raise Unsupported("tuple index out of range")
        return seq.items[i]

    def iter_type(self, t: Type) -> Type:
        if t == RANGE:
            return RANGE_ITER
        raise Unsupported(f"iterating over {t}")

    def call_type(self, op: O.Call, ts: list[Type]) -> Type:
        ftype, argtypes = ts[0], tuple(ts[1:])
        if isinstance(ftype, BoundMethod):
            if op.kwnames:
                raise Unsupported(f"{ftype}() with keywords")
            row = method(ftype.receiver, ftype.name)
            assert row is not None
            if not row.takes(1 + len(argtypes)):
                raise Unsupported(f"{ftype}() with {len(argtypes)} arguments")
            return result_type(row, (ftype.receiver, *argtypes))
        if isinstance(ftype, ArrayMethod):
            if ftype.name != "copy" or argtypes or op.kwnames:
                raise Unsupported(f"a.{ftype.name}() with arguments")
            return ArrayType(ftype.array.dtype, ftype.array.ndim, unit_stride=True)  # C order
        if isinstance(ftype, ObjType) and creator_name(ftype.obj) is not None:
            if BOTTOM in argtypes:
                return BOTTOM
            consts = [a.value if isinstance(a, O.Const) else None for a in op.args]
            return creation(creator_name(ftype.obj), list(argtypes), op.kwnames, consts).result  # type: ignore[arg-type]
        if isinstance(ftype, ObjType) and ftype.obj is _np_dtype_type() and not op.kwnames:
            if len(op.args) == 1 and isinstance(op.args[0], O.Const):  # np.dtype("int64"): a constant
                try:
                    return ObjType(_np_dtype(op.args[0].value))  # type: ignore[arg-type]
                except TypeError:
                    pass
            raise Unsupported("np.dtype() of a value that is not a constant dtype")
        if op.kwnames:
            raise Unsupported("keyword arguments to a builtin")
        if not isinstance(ftype, ObjType):
            raise Unsupported(f"call of a {ftype}")
        func = ftype.obj
        if isinstance(func, type) and issubclass(func, BaseException):
            if func.__module__ != "builtins":
                # Blocks that raise are never typed, so this exception is built and
                # kept: its class's own __init__ or __new__ may do anything.
                raise Unsupported(f"an instance of {func.__qualname__} that is not raised at once")
            return ExcType(func)
        if isinstance(func, pytypes.FunctionType):
            if BOTTOM in argtypes:
                return BOTTOM
            for t in argtypes:
                _split([t], lambda a: a)
            return self.resolver.call_type(func, argtypes)
        sig = lookup(func)
        if sig is None:
            raise Unsupported(f"call to {getattr(func, '__qualname__', func)!s}")
        if not sig.takes(len(argtypes)):
            raise Unsupported(f"{sig.name}() with {len(argtypes)} arguments")
        if sig.name == "len" and len(argtypes) == 1 and isinstance(argtypes[0], ArrayType):
            return INT
        if any(isinstance(t, ArrayType) for t in argtypes):
            raise Unsupported(f"{sig.name}() of a NumPy array")
        return _split(list(argtypes), lambda *a: result_type(sig, tuple(a)))


def array_item_type(seq: ArrayType, index: Type | None) -> Type:
    """``a[i]`` or ``a[i, j, ...]``: one integer index per dimension gives an element;
    fewer give a view of the remaining dimensions (``m[i]`` is a row)."""
    # A NumPy integer index (an element of an int array) indexes as the int it holds.
    count = 1 if index is not None and is_index(index) else None
    if isinstance(index, TupleType) and all(all(is_index(o) for o in options(t)) for t in index.items):  # (an item may be a union of ints: lower/emitter.index_int)
        count = len(index.items)
    if count is not None and count == seq.ndim:
        return seq.item
    if count is not None and 0 < count < seq.ndim:
        return ArrayType(seq.dtype, seq.ndim - count, seq.readonly, seq.unit_stride)  # the same last axis
    if index == BOOL or (isinstance(index, TupleType) and BOOL in index.items):
        raise Unsupported("an array indexed by a bool (a mask in NumPy)")
    raise Unsupported(f"{seq} indexed by {index} (only one integer per dimension compiles)")


def store_type(seq: Type, index: Type, value: Type) -> Type:
    """``a[i] = value``: one integer index per dimension, and a value that NumPy
    converts to the array's dtype the way native code does."""
    if not isinstance(seq, ArrayType):
        raise Unsupported(f"item assignment to a {seq}")
    if seq.readonly:
        raise Unsupported("assignment to a read-only array (ValueError in NumPy)")
    if isinstance(array_item_type(seq, index), ArrayType):
        raise Unsupported("assignment to a row of an array (NumPy broadcasts it)")
    # NumPy converts any number into an array of any of these dtypes (an int array
    # truncates a float); values it cannot convert deopt (arrays.store_element).
    if base(value) not in (INT, BOOL, FLOAT, UINT, INT128):  # (an int beyond int64 deopts)
        raise Unsupported(f"storing a {value} into an {seq}")
    return NONE


#: The ``.real`` and ``.imag`` of numbers, and their types (a bool's are ints).
NUMBER_ATTRIBUTES: dict[tuple[Type, str], Type] = {
    (t, name): FLOAT if t in (FLOAT, COMPLEX) else INT for t in (BOOL, INT, FLOAT, COMPLEX) for name in ("real", "imag")
}

#: Attributes of arrays that compile, and their types.
ARRAY_ATTRIBUTES: dict[str, Callable[[ArrayType], Type]] = {
    "shape": lambda a: TupleType((INT,) * a.ndim),
    "ndim": lambda a: INT,
    "size": lambda a: INT,
    "T": lambda a: a if a.ndim == 1 else a.any_stride(),  # a view with the axes reversed
    "dtype": lambda a: ObjType(_np_dtype(a.dtype)),  # known statically: only compared
}


def _np_dtype(name: object) -> object:
    import numpy as np

    return np.dtype(name)


def _np_dtype_type() -> object:
    import sys

    np = sys.modules.get("numpy")
    return np.dtype if np is not None else None




def _returnable(t: Type) -> Type:
    if isinstance(t, (ArrayMethod, BoundMethod, ObjType)):
        raise Unsupported(f"returning {t}")
    return t


def infer(fn: Function, argtypes: tuple[Type, ...], resolver: CallResolver) -> Type:
    """Type `fn` in place for `argtypes`; return the join of its return values' types."""
    return Inferencer(fn, argtypes, resolver).run()


__all__ = ["infer", "const_type", "value_type", "INT"]
