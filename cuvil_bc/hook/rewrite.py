"""Rewrite a module's code so that calls to its candidate functions are counted.

Rewriting happens at every import (on a cold cache), so it must cost next to nothing:
it reads only the code objects' flags and opcodes (`cheap_reason`). A function is
counted unless it is a generator or coroutine, a closure, takes ``*args``, ``**kwargs``
or keyword-only parameters, has neither a loop nor arithmetic, or has an instruction
that the decoder never decodes (a dict display, an f-string, ``try``, ``with``: see
`decode.scan`). Only when a counted
function gets hot does the compiler's own front end (`decode/`, `cfg/`, `ir/`) decide
whether it can compile at all (`front_end_reason`, from `hook/hot.py`): most functions
never get hot, and the front end's import and work (~20 ms, then a few ms a module)
would make short programs slower than plain CPython. Counted functions get the
counters of `decode/counting.py`, and so does the top level of module ``__main__`` (the
script) where it has loops that on-stack replacement may enter (hook/osr.py); every
other code object is left byte-for-byte as it was. What became of each function, with the reason when it does not run natively,
goes into the report.
"""

from __future__ import annotations

import collections
import types

from ..abi import OWN_NAMES
from ..errors import VARIADIC, CompileError

#: Bumped whenever the rewrite changes, so that cached rewrites of older formats are
#: ignored (it is part of the cache tag).
FORMAT = 7

#: The reason of a function that compiles but has nothing to gain (no loop, no arithmetic).
NOT_NUMERIC = "no loop or arithmetic"

#: The reason of a loop-free function that calls no function of the program: on its
#: own, a native call costs more than such a body saves (eval_A of spectral_norm,
#: called from interpreted loops, made the program 2.2x slower). Compiled callers
#: still compile it with themselves.
LEAF = "not compiled alone: a loop-free leaf (compiled into compiled callers)"

#: Reasons that are the hook's choice, not a limit of the compiler: such functions are
#: reported "interpreted", not "unsupported".
CHOSEN = frozenset({NOT_NUMERIC, LEAF})

_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200
_VARARGS = 0x04 | 0x08
_NEWLOCALS = 0x02


class FunctionInfo(collections.namedtuple("FunctionInfo", "key module qualname lineno candidate reason")):
    """One function code object of a rewritten module (kept in the cache): `key` (str,
    unique in the process: module, qualified name, first line), `module`, `qualname`
    (str), `lineno` (int), `candidate` (bool: counted), `reason` (str: why it is not
    counted, "" for counted functions). (A `typing.NamedTuple` would import typing,
    ~5 ms of the hook's startup.)"""

    __slots__ = ()


def cheap_reason(code: types.CodeType) -> str:
    """Why `code` is not worth counting, from its flags and opcodes alone
    (`decode.scan`); "" when it may compile. The reasons are the front end's own."""
    from ..decode import scan

    if code.co_flags & _GENERATOR_FLAGS:
        return "generator or coroutine"
    if code.co_flags & _VARARGS or code.co_kwonlyargcount:
        return VARIADIC
    if code.co_freevars or code.co_cellvars:
        # (As the decoder says it. Counted, a closure made again by each call of the
        # function around it would keep counting after the decision.)
        return str(CompileError("closure", f"{code.co_filename}:{code.co_firstlineno}"))
    if not scan.loop_or_arithmetic(code):
        return NOT_NUMERIC
    if any(name.startswith(OWN_NAMES) for name in code.co_varnames):
        return f"a local named {OWN_NAMES}...: cuvil_bc's own prefixes use such names"
    return scan.refused_construct(code)


#: Py_TPFLAGS_HEAPTYPE: a class made by a ``class`` statement (or `type()`), not a C type.
_HEAPTYPE = 1 << 9


def class_call_reason(code: types.CodeType, namespace: dict[str, object], builtins: dict[str, object]) -> str:
    """``file:line: call to C`` when `code` calls a global that is a class of the
    program's (made by a ``class`` statement), which the compiler never compiles (type
    inference refuses it the same way, after the front end's ~20 ms of imports); ""
    otherwise. Exception classes are left to the compiler: one raised at once compiles.
    (A call the type inference would never reach, in a branch folded away, refuses the
    function all the same: the cost is a function left interpreted, never a result.)"""
    from ..decode import scan

    for name, line in scan.called_globals(code):
        value = namespace[name] if name in namespace else builtins.get(name)
        if isinstance(value, type) and value.__flags__ & _HEAPTYPE and not issubclass(value, BaseException):
            return str(CompileError(f"call to {value.__qualname__}", f"{code.co_filename}:{line}"))
    return ""


def front_end_reason(code: types.CodeType) -> str:
    """Why the compiler's front end refuses `code` (a counted function; the decoder
    drops its counters), or why compiling it alone would not pay; "" when it is
    worth compiling."""
    from .. import pipeline
    from ..ir import ops as O

    try:
        work = pipeline.run(pipeline.Work(code), until="ir")
    except CompileError as e:
        return str(e)
    cfg, fn = work.cfg, work.fn
    assert cfg is not None and fn is not None
    if cfg.loops:
        return ""
    if not any(isinstance(op, O.BinOp) for op in fn.ops()):
        return NOT_NUMERIC
    return "" if _calls_program_functions(fn) else LEAF


def _calls_program_functions(fn: object) -> bool:
    """Whether `fn` (IR) may call a function of the program, whose work (recursion
    included) may be worth a native call: a global that is not a builtin, or a method
    of a value (``v.dot(w)``). Builtins (``abs``) and attributes of globals, such as a
    module's functions (``math.sqrt``), are library calls."""
    import builtins

    from ..ir import ops as O

    def library(func: object) -> bool:
        if isinstance(func, O.LoadGlobal):
            return hasattr(builtins, func.name)
        return isinstance(func, O.LoadAttr) and isinstance(func.obj, O.LoadGlobal)

    return any(isinstance(op, O.Call) and not library(op.func) for op in fn.ops())  # type: ignore[attr-defined]


def instrument_module(code: types.CodeType, module: str) -> tuple[types.CodeType, list[FunctionInfo]]:
    """The module's code with counters in its candidate functions (and, for the
    script, in its own loops), and what was found."""
    found: list[FunctionInfo] = []
    keys: set[str] = set()
    code = _instrument(code, module, found, keys, is_function=False)
    if module == "__main__":
        # The script's own loops: on-stack replacement enters those it can (hook/osr.py).
        from ..decode.counting import add_counters

        key = f"{module}:{code.co_qualname}:{code.co_firstlineno}"
        counted = add_counters(code, key, key + "@loop", key + "@osr", module=True)
        if counted is not code:
            found.append(FunctionInfo(key, module, code.co_qualname, code.co_firstlineno, True, ""))
            code = counted
    return code, found


def _instrument(code: types.CodeType, module: str, found: list[FunctionInfo], keys: set[str], is_function: bool) -> types.CodeType:
    consts = tuple(
        _instrument(c, module, found, keys, is_function=bool(c.co_flags & _NEWLOCALS)) if isinstance(c, types.CodeType) else c
        for c in code.co_consts
    )
    if consts != code.co_consts or any(a is not b for a, b in zip(consts, code.co_consts)):
        code = code.replace(co_consts=consts)
    if not is_function:
        return code  # module or class body: only its nested functions change
    reason = cheap_reason(code)
    key = f"{module}:{code.co_qualname}:{code.co_firstlineno}"
    n = 1
    while key in keys:
        n += 1
        key = f"{module}:{code.co_qualname}:{code.co_firstlineno}#{n}"
    keys.add(key)
    if reason != NOT_NUMERIC:  # functions that are not numeric at all are not reported
        found.append(FunctionInfo(key, module, code.co_qualname, code.co_firstlineno, not reason, reason))
    if reason:
        return code
    from ..decode.counting import add_counters

    return add_counters(code, key, key + "@loop", key + "@osr")


def typing_reason(fn: types.FunctionType, args: tuple[object, ...]) -> str:
    """Why type inference refuses `fn` for these arguments ("" when it types, or when
    the compiler is busy on the worker: that compile is then tried), asked before LLVM
    loads (~45 ms). `fn` is a stand-in (a hot function: its code as written, in the
    frame's globals); the compile itself types the dispatcher's copy again (a few ms)."""
    from ..compiler import COMPILER
    from ..dispatcher import argument_types
    from ..errors import CompileError

    argtypes = argument_types(args)
    if argtypes is None or not COMPILER.lock.acquire(blocking=False):
        return ""
    try:
        COMPILER.typed(fn, argtypes)
    except CompileError as e:
        return str(e)
    finally:
        COMPILER.lock.release()
    return ""
