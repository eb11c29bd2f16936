"""The deterministic text form of the IR, used by golden tests and `inspect_ir()`.

Example::

    def f(n):
    B0:
      %0 = call range(n)
      %1 = getiter %0
      jump B8
    B8:
      %2: int = phi [B0: 0, B9: %5]  # s
      foriter %1 -> B9, exit B20
"""

from __future__ import annotations

import types

from . import ops as O
from .function import Function


def _const_text(value: object) -> str:
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__}>"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"<{getattr(value, '__qualname__', value.__name__)}>"
    if callable(value) and isinstance(getattr(value, "__name__", None), str) and isinstance(getattr(value, "__module__", None), str):
        # (a NumPy function is a dispatcher object: its repr has its address)
        return f"<{value.__module__}.{value.__name__}>"
    if isinstance(value, float):
        return repr(value) if value == value else "nan"
    return repr(value)


class Namer:
    """Names values %0, %1, ... and blocks B0, B1, ... in order of appearance, so that
    the text does not depend on bytecode offsets (which differ between versions)."""

    def __init__(self, fn: Function) -> None:
        self.names: dict[O.Value, str] = {}
        self.blocks = {b: f"B{i}" for i, b in enumerate(fn.blocks)}
        n = 0
        for op in fn.ops():
            if not isinstance(op, O.ControlOp):
                self.names[op] = f"%{n}"
                n += 1

    def __call__(self, v: O.Value) -> str:
        if isinstance(v, O.Arg):
            return v.name
        if isinstance(v, O.Const):
            return _const_text(v.value)
        if isinstance(v, O.Undef):
            return f"undef({v.name})"
        return self.names.get(v, "%?")

    def block(self, b: object) -> str:
        return self.blocks.get(b, "B?")  # type: ignore[call-overload]


def op_text(op: O.Op, name: Namer) -> str:
    args = ", ".join
    if isinstance(op, O.Phi):
        return "phi [" + args(f"{name.block(b)}: {name(v)}" for b, v in op.incoming) + "]" + (f"  # {op.var}" if op.var else "")
    if isinstance(op, O.BinOp):
        return f"binop {name(op.lhs)} {op.op} {name(op.rhs)}"
    if isinstance(op, O.UnaryOp):
        return f"unary {op.op} {name(op.operand)}"
    if isinstance(op, O.Compare):
        return f"compare {name(op.lhs)} {op.op} {name(op.rhs)}"
    if isinstance(op, O.Truth):
        return f"truth {name(op.value)}"
    if isinstance(op, O.Select):
        return f"select {name(op.cond)} ? {name(op.if_true)} : {name(op.if_false)}"
    if isinstance(op, O.LoadGlobal):
        return f"global {op.name}"
    if isinstance(op, O.LoadAttr):
        return f"getattr {name(op.obj)}.{op.name}"
    if isinstance(op, O.Call):
        npos = len(op.args) - len(op.kwnames)
        parts = [name(a) for a in op.args[:npos]]
        parts += [f"{k}={name(a)}" for k, a in zip(op.kwnames, op.args[npos:])]
        return f"call {name(op.func)}({args(parts)})"
    if isinstance(op, O.BuildTuple):
        return f"tuple ({args(name(i) for i in op.items)})"
    if isinstance(op, O.Unpack):
        return f"unpack {name(op.seq)} into {op.count}"
    if isinstance(op, O.TupleGet):
        return f"tupleget {name(op.tup)}[{op.index}]"
    if isinstance(op, O.Subscript):
        return f"subscript {name(op.obj)}[{name(op.index)}]"
    if isinstance(op, O.StoreItem):
        return f"setitem {name(op.obj)}[{name(op.index)}] = {name(op.value)}"
    if isinstance(op, O.Checkpoint):
        state = [f"{n}={name(v)}" for n, v in zip(op.names, op.values) if not isinstance(v, O.Undef)]
        state += [f"stack{k}={name(v)}" for k, v in enumerate(op.stack)]
        return f"checkpoint ({args(state)})" if op.offset >= 0 else f"checkpoint unusable ({args(state)})"
    if isinstance(op, O.Narrow):
        if op.is_none is None:
            return f"bound {name(op.value)}"
        return f"narrow {name(op.value)} {'is' if op.is_none else 'is not'} None"
    if isinstance(op, O.GetIter):
        return f"getiter {name(op.iterable)}"
    if isinstance(op, O.IterValue):
        return f"itervalue {name(op.iterator)}"
    if isinstance(op, O.Jump):
        return f"jump {name.block(op.target)}"
    if isinstance(op, O.Branch):
        return f"branch {name(op.cond)} ? {name.block(op.if_true)} : {name.block(op.if_false)}"
    if isinstance(op, O.ForIter):
        return f"foriter {name(op.iterator)} -> {name.block(op.body)}, exit {name.block(op.exit)}"
    if isinstance(op, O.Return):
        return f"return {name(op.value)}"
    if isinstance(op, O.Raise):
        return f"raise {name(op.exc)}"
    raise AssertionError(f"no text form for {type(op).__name__}")


def format_function(fn: Function, *, lines: bool = False) -> str:
    name = Namer(fn)
    params = ", ".join(f"{a.name}: {a.type}" if a.type is not None else a.name for a in fn.args)
    out = [f"def {fn.name}({params}):"]
    for block in fn.blocks:
        out.append(f"{name.block(block)}:")
        for op in block.ops:
            text = op_text(op, name)
            if isinstance(op, O.ControlOp):
                row = f"  {text}"
            else:
                typ = f": {op.type}" if op.type is not None else ""
                spec = "speculative " if op.speculative else ""
                row = f"  {name(op)}{typ} = {spec}{text}"
            if lines and op.line is not None:
                row += f"  ; line {op.line}"
            out.append(row)
    return "\n".join(out)
