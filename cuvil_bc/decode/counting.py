"""The call counter that the import hook puts at the top of a candidate function, and the
prefix that turns a hot function's code into a trampoline.

Both are bytecode, so they live here, with the only code that knows the Python version.
Their instructions are taken from CPython itself: the counter from compiling ``not x``
(3.13 adds a ``TO_BOOL``), inserted with `rawcode` (no bytecode library at import), the
prefix from ``if x is not None: return x.function(params...)``, with the local ``x`` then
replaced by a constant (`cuvil_bc/counters.py` says why a constant and not a name).

The decoder drops the counters again (`counter_positions`), so the compiler sees the
function as written.
"""

from __future__ import annotations

import types
from functools import lru_cache

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Sequence

from ..abi import FALL, HERE, OWN_NAMES, Unfinished, is_placeholder, placeholder, runtime_types
from . import rawcode
from .percode import per_code

if TYPE_CHECKING:
    import bytecode  # noqa: F401

_CALLEE = "__cuvil_bc_callee__"  # the template's local that becomes the constant
_LOAD_CONST = rawcode.opcode.opmap["LOAD_CONST"]
_RESUME = rawcode.opcode.opmap["RESUME"]
#: Jumps that close a loop: a counter goes before each (not the ``_NO_INTERRUPT`` one of
#: ``yield from`` and ``await``, which only generators and coroutines have).
_LOOP_JUMPS = frozenset(op for op in rawcode._BACKWARD if "NO_INTERRUPT" not in rawcode.opcode.opname[op])
#: What a counter puts on the stack at most: itself.
_COUNTER_DEPTH = 1


@lru_cache(maxsize=1)
def _template() -> tuple[tuple[tuple[int, int], ...], int]:
    """The counter's instructions (opcode, argument), and the position of the counter's
    load among them: the units after ``RESUME`` of ``def _t(x): not x``, up to its
    ``POP_TOP``. ``not`` asks the counter for its truth, a C slot: no call at all."""
    ns: dict[str, Any] = {}
    exec(compile(f"def _t({_CALLEE}):\n    not {_CALLEE}\n", "<cuvil_bc>", "exec"), ns)
    instrs = rawcode.instructions(ns["_t"].__code__)
    names = [rawcode.opcode.opname[i.op] for i in instrs]
    body = instrs[names.index("RESUME") + 1 : names.index("POP_TOP") + 1]
    at = next(k for k, i in enumerate(body) if rawcode.opcode.opname[i.op].startswith("LOAD_FAST"))
    return tuple((i.op, i.arg) for i in body), at


def _counter_units(const_index: int) -> bytes:
    template, at = _template()
    return b"".join(rawcode.encode(_LOAD_CONST, const_index) if k == at else rawcode.encode(op, arg) for k, (op, arg) in enumerate(template))


def is_counter_constant(value: object) -> bool:
    """A counter's callee: live, a placeholder from the cache, or ``NoneType`` (a
    counter pickled by value and loaded where the hook is not running)."""
    return isinstance(value, _counter_type()) or value is type(None) or is_placeholder(value)


@lru_cache(maxsize=1)
def _counter_type() -> type:
    return runtime_types().Counter  # (csrc/counter.c; what cuvil_bc/counters.py calls Counter)


def counter_positions(items: Sequence[Any]) -> set[int]:
    """The indices in `items` (a `bytecode.Bytecode`) of the counters' instructions."""
    import bytecode

    template, at = _template()
    names = ["LOAD_CONST" if k == at else rawcode.opcode.opname[op] for k, (op, _) in enumerate(template)]
    found: set[int] = set()
    for n, item in enumerate(items):
        if not (isinstance(item, bytecode.Instr) and item.name == "LOAD_CONST" and is_counter_constant(item.arg)):
            continue
        first = n - at
        span = items[first : first + len(names)] if first >= 0 else []
        if [getattr(i, "name", None) for i in span] == names:
            found.update(range(first, first + len(names)))
    return found


def add_counters(code: types.CodeType, key: str, loop_key: str) -> types.CodeType:
    """`code` with the counter for `key` right after its ``RESUME`` (one tick a call)
    and the counter for `loop_key` before each backward jump (one tick a loop
    iteration; a jump to the backward jump runs its counter too). Each counter has the
    line of the instruction it sits beside (the jump, the first one after ``RESUME``),
    so no instruction starts a line that did not start one before: a trace function
    sees exactly the line events of the code as written. Each leaves the stack as it
    found it. They call placeholders, which `counters.live` replaces (the result is
    marshalled into the hook's cache first). Everything else stays byte for byte as it
    was (`rawcode`)."""
    instrs = rawcode.instructions(code)
    positions = list(code.co_positions())
    consts = code.co_consts + (placeholder(key),)
    inserts = []
    entry = next(n for n, i in enumerate(instrs) if i.op == _RESUME) + 1
    line = positions[instrs[entry].start // 2 + instrs[entry].prefixes][0]
    inserts.append(rawcode.Insert(entry, _counter_units(len(consts) - 1), (line, line, None, None), targeted=False))
    loops = [n for n, i in enumerate(instrs) if i.op in _LOOP_JUMPS]
    if loops:
        consts += (placeholder(loop_key),)
        units = _counter_units(len(consts) - 1)
        for n in loops:
            line = positions[instrs[n].start // 2 + instrs[n].prefixes][0]
            inserts.append(rawcode.Insert(n, units, (line, line, None, None), targeted=True))
    return rawcode.relayout(code, inserts, set(), co_consts=consts, co_stacksize=code.co_stacksize + _COUNTER_DEPTH)


def without_counters(code: types.CodeType) -> types.CodeType:
    """`code` as it was before `add_counters` (nested code objects keep theirs: they
    are other functions). What a function gets back once the hook has decided about
    it, so that it stops paying for counting."""
    template, at = _template()
    ops = [op for op, _ in template]
    ops[at] = _LOAD_CONST
    instrs = rawcode.instructions(code)
    consts = code.co_consts
    drop: set[int] = set()
    for n, i in enumerate(instrs):
        if i.op != _LOAD_CONST or not is_counter_constant(consts[i.arg]):
            continue
        first = n - at
        if first >= 0 and [j.op for j in instrs[first : first + len(ops)]] == ops:
            drop.update(range(first, first + len(ops)))
    if not drop:
        return code
    kept = len(consts)
    while kept and is_counter_constant(consts[kept - 1]):
        kept -= 1  # add_counters appended them
    return rawcode.relayout(code, [], drop, co_consts=consts[:kept], co_stacksize=code.co_stacksize - _COUNTER_DEPTH)


def _to_code(abstract: "bytecode.Bytecode", original: types.CodeType, stacksize: int) -> types.CodeType:
    """`abstract` assembled, keeping `original`'s local variables in their order.
    (`bytecode` numbers the locals that are not parameters by first use: on 3.13 the
    code's ``co_varnames``, and so ``locals()``, came out in another order.)
    `stacksize` bounds what the code puts on its stack, and each ``try`` block keeps
    the stack depth it was read with: working them out again from a control-flow graph
    took half of a prefix's ~4 ms, paid on the hook's thread for every hot function."""
    params = abstract.argnames
    abstract.argnames = list(original.co_varnames)  # seeds the numbering only
    try:
        code = abstract.to_code(stacksize=stacksize, compute_exception_stack_depths=False)
    finally:
        abstract.argnames = params
    assert code.co_varnames[: len(original.co_varnames)] == original.co_varnames, code.co_varnames
    return code


_BODY = "__cuvil_bc_body__"  # the template's statement that the function's body replaces


def trampoline(code: types.CodeType, native: Any) -> types.CodeType:
    """`code` behind a prefix that passes its parameters on to `native` (its C entry,
    then its function or its deopt: see `counters.NativeCall`) and returns what it returns,
    unless the constant that holds `native` is None: in a process the function was
    pickled into by value (`NativeCall` pickles as None), `code` itself runs, as
    written. Where the dispatcher's deopt path answers `HERE`, the call runs
    interpreted from its start, in this frame: the body follows. (The prefix's local
    ``__cb_r`` is deleted before the body: it never sees it. Its names start with
    `OWN_NAMES`, which no counted function's do: `hook.rewrite.cheap_reason`.)

    An exception from the call passes through a handler that takes the prefix's own
    traceback entry out (`NativeCall.unlink`) and re-raises it with a bare ``raise``,
    which adds none: the function's frame then shows once in the traceback, at the
    line that raised, as in CPython (the frames of the function's interpreted copy and
    of the dispatcher follow it, and those of the dispatcher take themselves out).
    """
    names = code.co_varnames[: code.co_argcount]
    params = ", ".join(names)
    source = (  # (@ stands for OWN_NAMES; both ways into the body join inside the `try`)
        "    try:\n        if @callee is not None:\n"
        f"            @r = @callee.entry({params})\n"
        "            if @type(@r) is not @unfinished:\n"
        "                return @r\n"
        "            if @r is @fall:\n"
        f"                return @callee.function({params})\n"
        f"            @r = @callee.deopt(({''.join(n + ', ' for n in names)}), @r[0], @here)\n"
        "            if @r is not @here:\n"
        "                return @r\n"
        "            del @r\n"
        "    except:\n        @callee.unlink()\n        raise\n"
    ).replace("@", OWN_NAMES)
    constants = {OWN_NAMES + "callee": native, OWN_NAMES + "fall": FALL, OWN_NAMES + "unfinished": Unfinished, OWN_NAMES + "type": type, OWN_NAMES + "here": HERE}
    # (every call the prefix makes has a line: a signal handler or another thread that
    # reads the frame's line meanwhile finds one, as in CPython)
    return with_prefix(code, source, constants, call_line=(f"return {OWN_NAMES}callee", f"{OWN_NAMES}r = {OWN_NAMES}callee"))


def with_prefix(code: types.CodeType, source: str, constants: dict[str, object], call_line: str | tuple[str, ...] = ()) -> types.CodeType:
    """`code` with the statements of `source` (Python, indented by four spaces) run
    before its body. `source` may read `code`'s parameters, assign locals of its own,
    return, and falls through into the body where it ends. Each name of `constants`
    that it reads becomes a constant of the code (not a global: `counters.py` says
    why). Its instructions carry no line number, except those of the source lines
    that start with `call_line` (or one of them), which get the line after the ``def`` (what a
    profiler or a traceback through a call there shows)."""
    helpers = list(constants)
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    template_source = f"def _t({', '.join([*code.co_varnames[:nargs], *helpers])}):\n{source}    {_BODY}\n"
    ns: dict[str, Any] = {}
    exec(compile(template_source, "<cuvil_bc>", "exec"), ns)
    import bytecode

    lines = template_source.splitlines()
    called = {n + 1 for n, text in enumerate(lines) if call_line and text.strip().startswith(call_line)}
    template = list(bytecode.Bytecode.from_code(ns["_t"].__code__, conserve_exception_block_stackdepth=True))
    instrs = [(k, i) for k, i in enumerate(template) if isinstance(i, bytecode.Instr)]
    start = next(k for k, i in instrs if i.name == "RESUME") + 1
    # Where the prefix falls through (when every path of it returns, CPython dropped
    # the marker: the body then follows the prefix, unreachable but still the code's).
    markers = [k for k, i in instrs if i.arg == _BODY or (isinstance(i.arg, tuple) and _BODY in i.arg)]
    # (CPython copies a statement that two paths reach, and only one copy becomes the
    # body: a source whose ways into the body join first has one)
    assert len(markers) <= 1, "the prefix reaches the body by more than one way"
    marker = markers[0] if markers else len(template)
    marker_end = next((k for k, i in instrs if k > marker and i.name in ("RETURN_VALUE", "RETURN_CONST")), len(template))
    prefix: list[object] = []
    index = {name: k for k, name in enumerate(constants)}
    for k, item in enumerate(template[start:], start):
        if marker <= k <= marker_end:
            if k == marker:
                prefix.append(_BODY)
            continue
        if not isinstance(item, bytecode.Instr):
            prefix.append(item)  # labels, and try blocks' begins and ends
            continue
        if item.name == "NOP":
            continue  # (a `try`'s: jumps go to labels, and the prefix has no lines)
        lineno = code.co_firstlineno + 1 if item.lineno in called else None
        prefix.extend(_constants_for(item, index, lineno))
    if marker == len(template):
        prefix.append(_BODY)
    abstract, items = _abstract(code)
    resume = next(k for k, i in enumerate(items) if isinstance(i, bytecode.Instr) and i.name == "RESUME") + 1
    at = prefix.index(_BODY)
    abstract[:] = items[:resume] + prefix[:at] + items[resume:] + prefix[at + 1 :]
    # (the prefix starts and ends with an empty stack, before the body: each needs at
    # most what it needed alone, and each ``try`` block the depth it had)
    made = _to_code(abstract, code, max(code.co_stacksize, ns["_t"].__code__.co_stacksize))
    # The constants go in last: the bytecode library compares constants with == to
    # share them, which for a module's globals (a guard's namespace) compares dicts.
    values = list(constants.values())
    return made.replace(co_consts=tuple(values[c[1]] if _is_stand_in(c) else c for c in made.co_consts))


@per_code(maxsize=32)
def _decoded(code: types.CodeType) -> "bytecode.Bytecode":
    """`code` as the bytecode library reads it, once (a dispatcher gives the same
    function a new prefix each time its specialisations change, and reading a large
    body costs milliseconds). Callers copy it; nothing changes it."""
    import bytecode

    return bytecode.Bytecode.from_code(code, conserve_exception_block_stackdepth=True)


def _abstract(code: types.CodeType) -> tuple["bytecode.Bytecode", list[object]]:
    """A new `bytecode.Bytecode` with `code`'s attributes, and `code`'s instructions."""
    import bytecode

    decoded = _decoded(code)
    abstract = bytecode.Bytecode()
    abstract._copy_attr_from(decoded)
    return abstract, list(decoded)


_STAND_IN = "__cuvil_bc_constant__"


def _is_stand_in(value: object) -> bool:
    return type(value) is tuple and len(value) == 2 and value[0] == _STAND_IN and type(value[1]) is int


def _constants_for(item: "bytecode.Instr", index: dict[str, int], lineno: int | None) -> list["bytecode.Instr"]:
    """`item` of the template with its loads of `constants` made loads of stand-ins
    for them (3.13 loads two locals in one instruction, which becomes two)."""
    import bytecode

    name = item.name
    constants = index
    if name in ("LOAD_FAST", "LOAD_FAST_CHECK") and item.arg in constants:
        return [bytecode.Instr("LOAD_CONST", (_STAND_IN, index[item.arg]), lineno=lineno)]
    if name == "LOAD_FAST_LOAD_FAST" and any(a in constants for a in item.arg):
        return [
            bytecode.Instr("LOAD_CONST", (_STAND_IN, index[a]), lineno=lineno) if a in constants else bytecode.Instr("LOAD_FAST", a, lineno=lineno)
            for a in item.arg
        ]
    args = item.arg if isinstance(item.arg, tuple) else (item.arg,)
    assert not any(isinstance(a, str) and a in constants for a in args), item
    return [bytecode.Instr(name, item.arg, lineno=lineno)]
