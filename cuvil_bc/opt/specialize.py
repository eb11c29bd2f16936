"""Bind a function's IR to the world it runs in, before typing.

* Globals become constants: each ``LoadGlobal`` is replaced by the object the name holds
  now, and a `Guard` records it so that the dispatcher notices a rebinding.
* Calls to Python functions get their keyword and default arguments bound, so the
  call passes exactly one value per parameter, in order.

    %0 = global N         ->   (uses of %0 use 1000)        guard: globals['N'] is <1000>
    call <f>(x, k=1)      ->   call <f>(x, 2, 1)            (defaults filled in)
"""

from __future__ import annotations

import inspect
import sys
import types as pytypes
from typing import Callable

from ..errors import Unsupported
from ..guards import MISSING, Guard, builtins_dict, compiled_as
from ..ir import ops as O
from ..ir.function import Function
from ..typing.primitives import creator_name
from ..typing.primitives import CONSTANT_MODULES


def resolve_globals(fn: Function, pyfunc: pytypes.FunctionType, original: Callable[[object], object] = lambda value: value) -> list[Guard]:
    gdict = pyfunc.__globals__
    bdict = builtins_dict(pyfunc)
    guards: dict[str, list[Guard]] = {}
    for block in fn.blocks:
        for op in list(block.ops):
            if not isinstance(op, O.LoadGlobal):
                continue
            name = op.name
            if name in gdict:
                value = gdict[name]
                guards[name] = [Guard(gdict, name, value)]
            elif name in bdict:
                value = bdict[name]
                guards[name] = [Guard(gdict, name, MISSING), Guard(bdict, name, value)]
            else:
                raise Unsupported(f"name '{name}' is not defined", fn.location(op))
            if isinstance(value, pytypes.FunctionType):
                # Code compiled into this one: assigning the callee a new __code__ (as
                # hot-reload tools do) or new defaults must be noticed like a rebinding.
                guards[name] += [
                    Guard(value, "__code__", value.__code__, True),
                    Guard(value, "__defaults__", value.__defaults__, True),
                ]
            fn.replace_all_uses(op, O.Const(compiled_as(value, original)))
            block.ops.remove(op)
    return [g for gs in guards.values() for g in gs] + _resolve_module_attributes(fn)


def _resolve_module_attributes(fn: Function) -> list[Guard]:
    """``math.sqrt`` (or ``np.zeros``) on a resolved module becomes the function itself,
    guarded like a global: a program that rebinds ``math.sqrt`` gets what CPython would
    call."""
    guards: dict[tuple[int, str], Guard] = {}
    for block in fn.blocks:
        for op in list(block.ops):
            if not (isinstance(op, O.LoadAttr) and isinstance(op.obj, O.Const)):
                continue
            module = op.obj.value
            numpy = sys.modules.get("numpy")
            known = any(module is m for m in CONSTANT_MODULES) or (numpy is not None and module is numpy)
            if not known or not hasattr(module, op.name):
                continue
            value = getattr(module, op.name)
            guards[(id(module), op.name)] = Guard(module, op.name, value, True)
            fn.replace_all_uses(op, O.Const(value))
            block.ops.remove(op)
    return list(guards.values())


def bind_calls(fn: Function) -> None:
    """Give every call to a known Python function one positional value per parameter."""
    for op in fn.ops():
        if not (isinstance(op, O.Call) and isinstance(op.func, O.Const)):
            continue
        func = op.func.value
        if not isinstance(func, pytypes.FunctionType) or creator_name(func) is not None:
            continue  # (np.ones & co. are Python functions: typing/creation.py types them)
        sig = inspect.signature(func)
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise Unsupported(f"call to {func.__qualname__}, which takes *args or **kwargs", fn.location(op))
        npos = len(op.args) - len(op.kwnames)
        try:
            bound = sig.bind(*op.args[:npos], **dict(zip(op.kwnames, op.args[npos:])))
        except TypeError as e:
            raise Unsupported(f"call to {func.__qualname__}: {e}", fn.location(op)) from None
        args: list[O.Value] = []
        for name, p in sig.parameters.items():
            if name in bound.arguments:
                args.append(bound.arguments[name])
            else:
                args.append(O.Const(p.default))
        op.args = args
        op.kwnames = ()
