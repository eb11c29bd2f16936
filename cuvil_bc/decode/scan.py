"""What a code object's opcodes alone say about it, without decoding it.

The import hook asks this at every import (hook/rewrite.py), so it reads ``co_code``
directly: its even bytes are the opcodes (inline caches read as zeros), and it imports
nothing but `opcode` and `versions`. The decoder gives the same answers, later and at
far greater cost.
"""

from __future__ import annotations

import opcode
import types

from .versions import CONSTRUCTS

#: Every backward jump (3.11 also has conditional ones): a loop closes with one.
_LOOPS = frozenset(op for name, op in opcode.opmap.items() if "BACKWARD" in name)
_NUMERIC = _LOOPS | {opcode.opmap["BINARY_OP"]}
#: Instructions the decoder refuses, with what a user calls them. (Not MAKE_FUNCTION:
#: the decoder names what it makes, a lambda or a comprehension, from its code.)
_REFUSED = {opcode.opmap[name]: construct for name, construct in CONSTRUCTS.items() if name in opcode.opmap and name != "MAKE_FUNCTION"}


def loop_or_arithmetic(code: types.CodeType) -> bool:
    """Whether `code` has a loop or a binary operator (every one is a ``BINARY_OP``)."""
    return not _NUMERIC.isdisjoint(code.co_code[::2])


_LOAD_GLOBAL = opcode.opmap["LOAD_GLOBAL"]
_EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]


def called_globals(code: types.CodeType) -> list[tuple[str, int]]:
    """The globals that `code` loads to call them (``name(...)``: a ``LOAD_GLOBAL``
    whose oparg's low bit pushes the NULL of a call, 3.11 to 3.13), each with its
    line, in the code's order."""
    raw = code.co_code
    units: list[tuple[str, int]] = []
    extended = 0
    for unit in range(len(raw) // 2):
        op, arg = raw[2 * unit], raw[2 * unit + 1] | extended
        extended = arg << 8 if op == _EXTENDED_ARG else 0
        if op == _LOAD_GLOBAL and arg & 1:
            units.append((code.co_names[arg >> 1], unit))
    if not units:
        return []
    lines = [p[0] for p in code.co_positions()]
    return [(name, lines[unit] if lines[unit] is not None else code.co_firstlineno) for name, unit in units]


def refused_construct(code: types.CodeType) -> str:
    """The decoder's refusal of the first instruction in `code` that it never decodes
    (``file:line: construct``), or "" when there is none."""
    ops = code.co_code[::2]
    if _REFUSED.keys().isdisjoint(ops):
        return ""
    unit = next(k for k, op in enumerate(ops) if op in _REFUSED)
    line = next(p[0] for k, p in enumerate(code.co_positions()) if k == unit)
    where = line if line is not None else code.co_firstlineno
    return f"{code.co_filename}:{where}: {_REFUSED[ops[unit]]}"
