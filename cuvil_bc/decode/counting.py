"""The call counter that the import hook puts at the top of a candidate function.

It is bytecode, so it lives here, with the only code that knows the Python version.
Its instructions are taken from CPython itself: compiling

    __cuvil_bc_tick__(__cuvil_bc__["<key>"])

gives the right instruction sequence on every supported version (3.11 adds a
``PRECALL``), so nothing below spells one out. Both names live in `builtins`:
``__cuvil_bc_tick__`` is the builtin `next`, and ``__cuvil_bc__`` maps each counted
function's key to an iterator (see `cuvil_bc/hook/hot.py`). The decoder drops the
counter again (`is_counter_start` and `COUNTER_LENGTH`), so the compiler sees the
function as written.
"""

from __future__ import annotations

import types
from functools import lru_cache

import bytecode

from ..counters import TABLE, TICK


@lru_cache(maxsize=1)
def _template() -> tuple[bytecode.Instr, ...]:
    ns: dict[str, object] = {}
    exec(compile(f"def _t():\n    {TICK}({TABLE}['key'])\n", "<cuvil_bc>", "exec"), ns)
    instrs = [i for i in bytecode.Bytecode.from_code(ns["_t"].__code__) if isinstance(i, bytecode.Instr)]  # type: ignore[attr-defined]
    start = next(k for k, i in enumerate(instrs) if i.name == "RESUME") + 1
    end = next(k for k, i in enumerate(instrs) if i.name == "POP_TOP")
    return tuple(instrs[start : end + 1])


def counter_length() -> int:
    """How many instructions the counter takes."""
    return len(_template())


def is_counter_start(instr: bytecode.Instr) -> bool:
    if instr.name != "LOAD_GLOBAL":
        return False
    arg = instr.arg
    return (arg[1] if isinstance(arg, tuple) else arg) == TICK


def _counter(key: str) -> list[bytecode.Instr]:
    return [bytecode.Instr(i.name, key if i.name == "LOAD_CONST" else i.arg, lineno=None) for i in _template()]


def add_counters(code: types.CodeType, key: str, loop_key: str) -> types.CodeType:
    """`code` with the counter for `key` right after its ``RESUME`` (one tick a call)
    and the counter for `loop_key` before each backward jump (one tick a loop
    iteration). The counters carry no line number, so tracing and coverage see the
    function's lines exactly as before, and each leaves the stack as it found it.
    """
    abstract = bytecode.Bytecode.from_code(code)
    out: list[object] = []
    entry_done = False
    for item in abstract:
        if isinstance(item, bytecode.Instr) and item.name in ("JUMP_BACKWARD", "JUMP_ABSOLUTE"):
            out.extend(_counter(loop_key))
        out.append(item)
        if not entry_done and isinstance(item, bytecode.Instr) and item.name == "RESUME":
            out.extend(_counter(key))
            entry_done = True
    abstract[:] = out
    return abstract.to_code()
