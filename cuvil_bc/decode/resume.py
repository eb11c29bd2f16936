"""Continuation code: a function's own bytecode, entered in the middle.

Precise deoptimisation (see `cuvil_bc/resume.py`) hands a call that native code
cannot finish back to the interpreter at a *resume point*: the start of a bytecode
instruction at which native code knows every local variable and every value on the
operand stack. This module builds the code object that does that: it is the original
code with a short prologue in front,

    LOAD_FAST .state; UNPACK_SEQUENCE n; STORE_FAST x; STORE_FAST y; ...;
    JUMP_FORWARD <the instruction at `offset`>

taking a single argument, the tuple ``(x, y, ..., stack[-1], ..., stack[0])``: the
bound locals in `names` order, then the operand stack from top to bottom, which
UNPACK_SEQUENCE leaves on the stack in the right order. The rest of the code is the
function's own, so it raises the same exceptions on the same lines, and a traceback
names the same function.
"""

from __future__ import annotations

import dis
import types

import bytecode

_STATE = ".state"  # not an identifier: cannot clash with a local of the function


def resume_code(code: types.CodeType, offset: int, names: tuple[str, ...], stack_depth: int) -> types.CodeType:
    """`code` entered at the instruction at byte `offset`, with `names` bound and
    `stack_depth` values on the operand stack (see the module docstring)."""
    abstract = bytecode.Bytecode.from_code(code)
    offsets = [i.offset for i in dis.get_instructions(code) if i.opname not in ("EXTENDED_ARG", "CACHE")]
    items = list(abstract)
    target = None
    k = 0
    for pos, item in enumerate(items):
        if isinstance(item, bytecode.Instr):
            if offsets[k] == offset:
                target = pos
                break
            k += 1
    if target is None:
        raise ValueError(f"no instruction at offset {offset} in {code.co_qualname}")
    label = bytecode.Label()
    items.insert(target, label)
    start = next(pos for pos, item in enumerate(items) if isinstance(item, bytecode.Instr) and item.name == "RESUME") + 1
    line = code.co_firstlineno
    prologue = [
        bytecode.Instr("LOAD_FAST", _STATE, lineno=line),
        bytecode.Instr("UNPACK_SEQUENCE", len(names) + stack_depth, lineno=line),
        *(bytecode.Instr("STORE_FAST", name, lineno=line) for name in names),
        bytecode.Instr("JUMP_FORWARD", label, lineno=line),
    ]
    items[start:start] = prologue
    abstract.clear()
    abstract.extend(items)
    abstract.argnames = [_STATE]
    abstract.argcount = 1
    abstract.posonlyargcount = 0
    abstract.kwonlyargcount = 0
    abstract.flags = bytecode.CompilerFlags(int(abstract.flags) & ~(0x04 | 0x08))  # no *args, **kwargs
    return abstract.to_code()
