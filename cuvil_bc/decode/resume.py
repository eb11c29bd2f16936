"""Continuation code: a function's own bytecode, entered in the middle.

Precise deoptimisation (see `cuvil_bc/resume.py`) hands a call that native code
cannot finish back to the interpreter at a *resume point*: the start of a bytecode
instruction at which native code knows every local variable and every value on the
operand stack. This module builds the code object that does that: it is the original
code with a short prologue in front,

    LOAD_FAST .state; UNPACK_SEQUENCE n + 1; STORE_FAST x; STORE_FAST y; ...;
    UNPACK_SEQUENCE depth; JUMP_FORWARD <the instruction at `offset`>

taking a single argument, the tuple ``(x, y, ..., (stack[-1], ..., stack[0]))``: the
bound locals in `names` order, then the operand stack from top to bottom, which
UNPACK_SEQUENCE leaves on the stack in the right order. The rest of the code is the
function's own, so it raises the same exceptions on the same lines, and a traceback
names the same function.

The neutral stack has no NULLs, but CPython's has one beside the callable of every
call still being built (``abs(x if y else 1)`` resumed after the conditional has
``NULL, abs, value`` on 3.12 and ``abs, NULL, value`` on 3.13). `stack_nulls` finds
where they are by following the real bytecode's stack effects, and the prologue then
builds the stack item by item, with a PUSH_NULL in each of those places:

    ...; PUSH_NULL; LOAD_FAST .state; LOAD_CONST k; BINARY_SUBSCR; ...
"""

from __future__ import annotations

import dis
import types

from ..abi import OWN_NAMES
from . import rawcode
from . import versions as V
from .counting import RANGE, VALUE

TYPE_CHECKING = False
if TYPE_CHECKING:
    import bytecode

_STATE = ".state"  # not an identifier: cannot clash with a local of the function

_JUMPS = frozenset(getattr(dis, "hasjump", dis.hasjrel + dis.hasjabs))
_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
_ALWAYS_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"})
_layouts: dict[types.CodeType, dict[int, tuple[bool, ...]]] = {}


def stack_nulls(code: types.CodeType) -> dict[int, tuple[bool, ...]]:
    """For the start of each reachable instruction (by byte offset), CPython's operand
    stack there, bottom first: True for a NULL, False for a value.

    Only the instructions that push NULLs are modelled; every other one pops and pushes
    values as `dis.stack_effect` says. A method load (`obj.m(...)`) is taken as pushing
    a NULL and the attribute, never "method, self": the state rebuilt for a resume
    holds the attribute's value, and CALL treats both pairs alike."""
    found = _layouts.get(code)
    if found is not None:
        return found
    every = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    instrs = [i for i in every if i.opname != "EXTENDED_ARG"]
    at = {ins.offset: k for k, ins in enumerate(instrs)}
    pending: list[int] = []
    for ins in every:  # a jump to an instruction with EXTENDED_ARGs lands on the first of them
        if ins.opname == "EXTENDED_ARG":
            pending.append(ins.offset)
        else:
            at.update((offset, at[ins.offset]) for offset in pending)
            pending.clear()
    layouts: dict[int, tuple[bool, ...]] = {}
    work: list[tuple[int, tuple[bool, ...]]] = [(0, ())]
    while work:
        k, stack = work.pop()
        while k < len(instrs):
            ins = instrs[k]
            if ins.offset in layouts:
                break  # reached before: bytecode gives every path the same stack shape
            layouts[ins.offset] = stack
            name = ins.opname
            if ins.opcode in _JUMPS and name not in _ALWAYS_JUMPS:
                work.append((at[ins.argval], _apply(ins, stack, jump=True)))
            if name in _ALWAYS_JUMPS:
                k, stack = at[ins.argval], _apply(ins, stack, jump=True)
                continue
            if name in _ENDS:
                break
            stack = _apply(ins, stack, jump=False)
            k += 1
    _layouts[code] = layouts
    return layouts


def _apply(ins: dis.Instruction, stack: tuple[bool, ...], jump: bool) -> tuple[bool, ...]:
    name, arg = ins.opname, ins.arg
    if name == "PUSH_NULL":
        return stack + (True,)
    if name == "LOAD_GLOBAL" and arg is not None and arg & 1:
        return stack + ((False, True) if V.PY313 else (True, False))
    if (name == "LOAD_ATTR" and V.PY312 and arg is not None and arg & 1) or name == "LOAD_METHOD":
        return stack[:-1] + ((False, True) if V.PY313 else (True, False))
    if name == "PRECALL":
        return stack  # 3.11: CALL, next, does the popping
    if name == "CALL_FUNCTION_EX":  # callable, NULL or self, the arguments' tuple (, dict)
        assert arg is not None
        return stack[: len(stack) - 3 - (arg & 1)] + (False,)
    if name in ("CALL", "CALL_KW"):
        assert arg is not None
        pops = arg + 2 + (name == "CALL_KW")  # callable, NULL or self, arguments (, names)
        return stack[: len(stack) - pops] + (False,)
    effect = dis.stack_effect(ins.opcode, arg, jump=jump) if ins.opcode >= dis.HAVE_ARGUMENT else dis.stack_effect(ins.opcode)
    if effect >= 0:
        return stack + (False,) * effect
    return stack[:effect]


def null_layout(code: types.CodeType, offset: int, stack_depth: int) -> tuple[bool, ...] | None:
    """CPython's stack at `offset` (see `stack_nulls`), if it holds exactly
    `stack_depth` values besides its NULLs; else None (not a point to resume at)."""
    layout = stack_nulls(code).get(offset)
    if layout is None or layout.count(False) != stack_depth:
        return None
    return layout


def _entered(code: types.CodeType, offset: int) -> tuple["bytecode.Bytecode", list[object], "bytecode.Label", int]:
    """`code` as the bytecode library reads it, its items with a label inserted before
    the instruction at byte `offset`, that label, and the index after ``RESUME`` (where
    a prologue goes)."""
    import bytecode  # (~10 ms to import: only here)

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
    return abstract, items, label, start


def _assembled(abstract: "bytecode.Bytecode", items: list[object], argnames: list[str]) -> types.CodeType:
    import bytecode

    abstract.clear()
    abstract.extend(items)
    abstract.argnames = argnames
    abstract.argcount = len(argnames)
    abstract.posonlyargcount = 0
    abstract.kwonlyargcount = 0
    abstract.flags = bytecode.CompilerFlags(int(abstract.flags) & ~(0x04 | 0x08))  # no *args, **kwargs
    return abstract.to_code()


def resume_code(code: types.CodeType, offset: int, names: tuple[str, ...], stack_depth: int) -> types.CodeType:
    """`code` entered at the instruction at byte `offset`, with `names` bound and
    `stack_depth` values on the operand stack (see the module docstring)."""
    import bytecode

    layout = null_layout(code, offset, stack_depth)
    if layout is None:
        raise ValueError(f"the stack at offset {offset} in {code.co_qualname} does not hold {stack_depth} values")
    abstract, items, label, start = _entered(code, offset)
    line = code.co_firstlineno
    prologue = [
        bytecode.Instr("LOAD_FAST", _STATE, lineno=line),
        bytecode.Instr("UNPACK_SEQUENCE", len(names) + 1, lineno=line),
        *(bytecode.Instr("STORE_FAST", name, lineno=line) for name in names),
    ]
    if not any(layout):
        prologue.append(bytecode.Instr("UNPACK_SEQUENCE", stack_depth, lineno=line) if stack_depth else bytecode.Instr("POP_TOP", lineno=line))
    else:
        prologue.append(bytecode.Instr("STORE_FAST", _STATE, lineno=line))
        value = stack_depth  # the stack tuple holds the top first
        for null in layout:
            if null:
                prologue.append(bytecode.Instr("PUSH_NULL", lineno=line))
            else:
                value -= 1
                prologue += [
                    bytecode.Instr("LOAD_FAST", _STATE, lineno=line),
                    bytecode.Instr("LOAD_CONST", value, lineno=line),
                    bytecode.Instr("BINARY_SUBSCR", lineno=line),
                ]
    prologue.append(bytecode.Instr("JUMP_FORWARD", label, lineno=line))
    items[start:start] = prologue
    return _assembled(abstract, items, [_STATE])


def osr_code(code: types.CodeType, offset: int, names: tuple[str, ...], stack: tuple[str, ...]) -> types.CodeType:
    """`code` entered at the instruction at byte `offset` (a loop's jump back), for
    on-stack replacement (hook/osr.py): its parameters are the bound locals `names`,
    then the values of the operand stack there, bottom first, each `RANGE` (three
    parameters: a range iterator is rebuilt as ``iter(range(start, stop, step))``, the
    way the compiler knows a ``for`` loop's iterator) or `VALUE` (one). Unlike a
    continuation (`resume_code`) it is compiled, not interpreted: the locals are
    parameters, so the compiler types each of them from its argument. The other
    parameters' names start with `OWN_NAMES`, which a counted function's never do.

    The prologue is spliced into the code's own bytes (`rawcode.entered_at`); only
    code that it cannot renumber in place (cells) goes through the `bytecode` library,
    which a warm run would otherwise import (~10 ms) just for this."""
    params, prologue = _osr_prologue(code, offset, names, stack)
    try:
        return rawcode.entered_at(code, offset, params, prologue, code.co_firstlineno, stacksize=len(stack) + 5)
    except rawcode.NotInPlace:
        return _osr_code_assembled(code, offset, params, prologue)


def _osr_prologue(code: types.CodeType, offset: int, names: tuple[str, ...], stack: tuple[str, ...]) -> tuple[list[str], list[tuple[str, object]]]:
    """An entry's parameters and its prologue, as (opname, argument) pairs: the stack
    values rebuilt from them (see `osr_code`), then deleted."""
    layout = null_layout(code, offset, len(stack))
    if layout is None or any(layout):
        raise ValueError(f"the stack at offset {offset} in {code.co_qualname} does not hold {len(stack)} values")
    params = list(names)
    prologue: list[tuple[str, object]] = []
    for n, kind in enumerate(stack):
        if kind == VALUE:
            params.append(f"{OWN_NAMES}osr{n}")
            prologue.append(("LOAD_FAST", params[-1]))
            continue
        bounds = [f"{OWN_NAMES}osr{n}_{part}" for part in ("start", "stop", "step")]
        params += bounds
        prologue.append(("LOAD_GLOBAL", "range"))
        prologue += [("LOAD_FAST", b) for b in bounds]
        if not V.PY312:
            prologue.append(("PRECALL", 3))
        prologue += [("CALL", 3), ("GET_ITER", 0)]
    # (unbound again: a frame that resumes interpreted, after a deopt, has the function's
    # locals and no others, as a debugger or a traceback's locals show them)
    prologue += [("DELETE_FAST", name) for name in params[len(names) :]]
    return params, prologue


def _osr_code_assembled(code: types.CodeType, offset: int, params: list[str], prologue: list[tuple[str, object]]) -> types.CodeType:
    """`osr_code` through the `bytecode` library (code with cells)."""
    import bytecode

    abstract, items, label, start = _entered(code, offset)
    line = code.co_firstlineno
    items[start:start] = [*_instrs(prologue, line), bytecode.Instr("JUMP_FORWARD", label, lineno=line)]
    return _assembled(abstract, items, params)


def _instrs(prologue: list[tuple[str, object]], line: int) -> list["bytecode.Instr"]:
    import bytecode

    return [
        bytecode.Instr(name, lineno=line) if dis.opmap[name] < dis.HAVE_ARGUMENT
        else bytecode.Instr(name, (True, arg) if name == "LOAD_GLOBAL" else arg, lineno=line)
        for name, arg in prologue
    ]


def module_osr_code(code: types.CodeType, offset: int, names: tuple[str, ...], stack: tuple[str, ...]) -> tuple[types.CodeType, tuple[str, ...], int]:
    """The entry of a module-level loop (hook/osr.py) at its jump back at byte
    `offset`: the loop's region (`region.module_loop`) as a function whose parameters
    are `names` (the names the loop writes, first, then some it only reads), then the
    stack's values as `osr_code` takes them. Those names are its locals (``LOAD_NAME``
    and ``STORE_NAME`` become ``LOAD_FAST`` and ``STORE_FAST``), the other names it
    reads are its globals (``LOAD_GLOBAL``: a module's locals are its globals), and
    where the loop goes on to an exit, the entry returns ``(k, *written)``: the exit's
    number among the region's, then the written names' values. Also returns the
    written names and the number of exits. ValueError where there is no region."""
    import bytecode

    from .region import module_loop_at

    found = module_loop_at(code, offset)
    if found is None:
        raise ValueError(f"no module-level loop region at offset {offset} of {code.co_filename}")
    raw, n, region = found
    written = region.written
    if names[: len(written)] != written:
        raise ValueError(f"the names {names} do not start with those the loop writes, {written}")
    params, prologue = _osr_prologue(code, offset, names, stack)
    inside = set(region.instrs)
    items = list(bytecode.Bytecode.from_code(code))
    at_label: dict[bytecode.Label, int] = {}  # the instruction (index) each label is before
    pending: list[bytecode.Label] = []
    k = 0
    for item in items:
        if isinstance(item, bytecode.Label):
            pending.append(item)
        elif isinstance(item, bytecode.Instr):
            at_label.update((label, k) for label in pending)
            pending.clear()
            k += 1
    assert k == len(raw), (k, len(raw))
    exits = {e: bytecode.Label() for e in region.exits}
    line = code.co_firstlineno
    entry = bytecode.Label()
    out: list[object] = []
    k = 0
    for item in items:
        if isinstance(item, bytecode.Label):
            if at_label.get(item) in inside:
                out.append(item)
            continue
        if not isinstance(item, bytecode.Instr):
            continue  # (line markers; no try block is in the region)
        here, k = k, k + 1
        if item.name == "RESUME" and here == 0:
            out += [item, *_instrs(prologue, line), bytecode.Instr("JUMP_FORWARD", entry, lineno=line)]
        if here not in inside:
            continue
        if here == n:
            out.append(entry)
        out.append(_as_entry(item, set(names), exits, at_label))
        if here + 1 not in inside and item.name not in _ALWAYS_JUMPS and item.name not in _ENDS:
            out.append(bytecode.Instr("JUMP_FORWARD", exits[here + 1], location=item.location))
    for number, e in enumerate(region.exits):
        out += [exits[e], bytecode.Instr("LOAD_CONST", number, lineno=line)]
        out += [bytecode.Instr("LOAD_FAST", name, lineno=line) for name in written]
        out += [bytecode.Instr("BUILD_TUPLE", len(written) + 1, lineno=line), bytecode.Instr("RETURN_VALUE", lineno=line)]
    abstract = bytecode.Bytecode.from_code(code)
    # CO_OPTIMIZED | CO_NEWLOCALS (a function's frame), and the code's __future__ flags
    abstract.flags = bytecode.CompilerFlags(0x01 | 0x02 | (code.co_flags & ~0xFF))
    return _assembled(abstract, out, params), written, len(region.exits)


def _as_entry(item: "bytecode.Instr", local: set[str], exits: dict[int, "bytecode.Label"], at_label: dict["bytecode.Label", int]) -> "bytecode.Instr":
    """A region's instruction in its entry: names as locals (`local`) or globals, a
    jump out of the region to its exit's epilogue."""
    import bytecode

    name, arg = item.name, item.arg
    if name == "STORE_NAME":
        return bytecode.Instr("STORE_FAST", arg, location=item.location)
    if name == "LOAD_NAME":
        if arg in local:
            return bytecode.Instr("LOAD_FAST", arg, location=item.location)
        return bytecode.Instr("LOAD_GLOBAL", (False, arg), location=item.location)
    if isinstance(arg, bytecode.Label) and at_label[arg] in exits:
        return bytecode.Instr(name, exits[at_label[arg]], location=item.location)
    return item
