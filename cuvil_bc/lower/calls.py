"""Calls: of compiled Python functions (native calls, with the depth count and the
callee's deopt status), of primitives (their rows' lowerings, builtins.py), and of
NumPy's array creators.
"""

from __future__ import annotations

import types as pytypes
from typing import Protocol

from llvmlite import ir

from ..errors import Unsupported
from ..ir import ops as O
from ..ir.function import Function
from ..typing.primitives import CPYTHON, Primitive, as_number, creator_name, lookup, method
from ..typing.primitives import result_type as call_result_type
from ..typing.types import BOOL, FLOAT, ArrayMethod, ArrayType, BoundMethod, ObjType, TupleType, Type, UnionType, base
from . import arrays
from ..records import record
from .builtins import lowering_of
from .emitter import Emitter, Typed
from .entry import call_compiled, declare_function
from .ltypes import I1, I8, I32


class Callee(Protocol):
    symbol: str
    argtypes: tuple[Type, ...]
    return_type: Type


class CalleeResolver(Protocol):
    def callee(self, func: object, argtypes: tuple[Type, ...]) -> Callee: ...


def calls_python_functions(fn: Function) -> bool:
    """Whether `fn` makes native calls of compiled Python functions."""
    return any(
        isinstance(op, O.Call) and isinstance(op.func, O.Const) and isinstance(op.func.value, pytypes.FunctionType)
        and creator_name(op.func.value) is None
        for op in fn.ops()
    )


@record
class CallLowering:
    """The calls of one function, lowered to `symbol`: its calls to itself go to
    `self_calls` instead when given (see `codegen.lower_recursive`). `depth` is the
    function's native call depth; with `precise` (it writes, or holds arrays) a
    failed callee deoptimises this function through its deopt path."""

    em: Emitter
    resolver: CalleeResolver
    symbol: str
    self_calls: str | None
    depth: ir.Value
    precise: bool

    def call(self, op: O.Call, operands: list[Typed], t: Type) -> ir.Value:
        em = self.em
        func = op.func.value if isinstance(op.func, O.Const) else None
        args = operands[1:]
        if isinstance(func, type) and issubclass(func, BaseException):
            return ir.Constant(I8, 0)  # only ever raised, which deoptimises
        if isinstance(t, ObjType):
            return ir.Constant(I8, 0)  # np.dtype("int64"): a compile-time object
        if isinstance(operands[0][1], ArrayMethod):  # a.copy()
            return arrays.copy(em, operands[0][0], operands[0][1].array)
        if isinstance(operands[0][1], BoundMethod):  # x.bit_length(): the row's function of x
            bound = operands[0][1]
            row = method(bound.receiver, bound.name)
            assert row is not None
            value, vt = lowering_of(row)(em, [(operands[0][0], bound.receiver), *args], t)
            return em.coerce(value, vt, t)
        name = creator_name(func)
        if name is not None:
            return self.create(op, name, args, t)
        if isinstance(func, pytypes.FunctionType):
            return self.native_call(func, args, t)
        sig = lookup(func)
        assert sig is not None, func
        lowering = lowering_of(sig)

        def lower(vs: list[Typed]) -> Typed:
            result = _narrow_call(sig, vs, t)
            if not sig.numpy_own:  # NumPy scalars as the Python numbers they convert to
                vs = [self.as_number(sig.name, k, v) for k, v in enumerate(vs)]
            return lowering(em, vs, result)

        return em.split(args, t, lower, branchless=sig.pure and sig.lowering != CPYTHON)

    def native_call(self, func: pytypes.FunctionType, args: list[Typed], t: Type) -> ir.Value:
        """A call of the compiled `func`: on to its result, or, when it deoptimised, out
        of this function too (the interpreter then runs the rest)."""
        em = self.em
        b = em.builder
        callee = self.resolver.callee(func, tuple(a[1] for a in args))
        symbol = self.self_calls if self.self_calls and callee.symbol == self.symbol else callee.symbol
        llcallee = declare_function(em.module, symbol, callee.argtypes, callee.return_type)
        depth = b.add(self.depth, ir.Constant(I32, 1))
        pair = call_compiled(b, llcallee, [em.coerce(v, vt, ct) for (v, vt), ct in zip(args, callee.argtypes)] + [depth])
        status = b.extract_value(pair, 0)
        failed = b.icmp_signed("!=", status, ir.Constant(I32, 0))
        bail = em.block("callee.failed")
        ok = em.block("callee.ok")
        b.cbranch(failed, bail, ok).set_weights([1, 1 << 20])
        b.position_at_end(bail)
        if self.precise:
            # resume this function's caller state, or release what it holds
            b.branch(em.deopt_block(keep_line=True))
        else:
            b.ret(b.insert_value(ir.Constant(em.func.return_value.type, ir.Undefined), status, 0))
        b.position_at_end(ok)
        return em.coerce(b.extract_value(pair, 1), callee.return_type, t)

    def as_number(self, name: str, position: int, v: Typed) -> Typed:
        """A NumPy scalar argument of a math function or float/int/bool as the Python
        number it gives them (`primitives.as_number`)."""
        number = as_number(name, position, v[1])
        if number == FLOAT and base(v[1]) != FLOAT:
            return self.em.as_float((v[0], base(v[1]))), FLOAT  # __float__: rounds as C does
        return v[0], number

    def create(self, op: O.Call, name: str, args: list[Typed], t: Type) -> ir.Value:
        """``np.zeros(...)`` and the other creators (typing/creation.py)."""
        from ..typing.creation import creation

        em = self.em
        consts = [a.value if isinstance(a, O.Const) else None for a in op.args]
        c = creation(name, [a[1] for a in args], op.kwnames, consts)
        assert isinstance(t, ArrayType), t
        if name == "arange":
            bounds = [a for k, a in enumerate(args) if k < len(args) - len(op.kwnames) or op.kwnames[k - len(args) + len(op.kwnames)] != "dtype"]
            if len(bounds) == len(args) and c.result.dtype != "int64":  # (a dtype given by position)
                bounds = bounds[:-1]
            ints = [em.as_int((v, base(ty))) for v, ty in bounds]
            start, stop, step = (em.i64(0), ints[0], em.i64(1)) if len(ints) == 1 else (ints + [em.i64(1)])[:3]
            return arrays.arange(em, start, stop, step, t)
        kind = name.removesuffix("_like")
        item = None  # converted before allocating: a failed check has nothing to release
        if kind == "ones":
            item = arrays.fill_item(em, t, (ir.Constant(I1, 1), BOOL))
        elif kind == "full":
            item = arrays.fill_item(em, t, args[c.fill])  # type: ignore[index]
        if c.like is not None:
            proto = args[c.like][0]
            shape = [em.builder.extract_value(proto, 1 + k) for k in range(t.ndim)]
            new = arrays.allocate(em, t, shape, like=proto, zeroed=kind == "zeros")
        else:
            value, shape_t = args[c.shape]  # type: ignore[index]
            if isinstance(shape_t, TupleType):
                shape = [em.as_int((em.builder.extract_value(value, k), base(it))) for k, it in enumerate(shape_t.items)]
            else:
                shape = [em.as_int((value, base(shape_t)))]
            new = arrays.allocate(em, t, shape, zeroed=kind == "zeros")
        if item is not None:
            arrays.fill(em, new, t, item)
        return new


def _narrow_call(sig: Primitive, vs: list[Typed], result: Type) -> Type:
    """The result type for one concrete case of a call with split union arguments."""
    if not isinstance(result, UnionType):
        return result
    try:
        return call_result_type(sig, tuple(t for _, t in vs))
    except Unsupported:  # (a combination typing never produced)
        return result
