"""The call counter that the import hook puts at the top of a candidate function, the loop
counters (with their exits for on-stack replacement) before its jumps back, and the
prefix that turns a hot function's code into a trampoline.

All are bytecode, so they live here, with the only code that knows the Python version.
Their instructions are taken from CPython itself: the counter from compiling ``not x``
(3.13 adds a ``TO_BOOL``), inserted with `rawcode` (no bytecode library at import), the
prefix from ``if x is not None: return x.function(params...)``, with the local ``x`` then
replaced by a constant (`cuvil_bc/counters.py` says why a constant and not a name).

The decoder drops the counters again (`without_counters`), so the compiler sees the
function as written.
"""

from __future__ import annotations

import types
from functools import lru_cache

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Sequence

from ..abi import FALL, HERE, OWN_NAMES, Unfinished, is_placeholder, placeholder, runtime_types
from . import rawcode, region
from .percode import per_code
from .versions import CONSTRUCTS

if TYPE_CHECKING:
    import bytecode  # noqa: F401

_CALLEE = "__cuvil_bc_callee__"  # the template's local that becomes the constant
_LOAD_CONST = rawcode.opcode.opmap["LOAD_CONST"]
_RESUME = rawcode.opcode.opmap["RESUME"]
#: Jumps that close a loop: a counter goes before each (not the ``_NO_INTERRUPT`` one of
#: ``yield from`` and ``await``, which only generators and coroutines have).
_LOOP_JUMPS = region.LOOP_JUMPS
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


def add_counters(code: types.CodeType, key: str, loop_key: str, gate_key: str | None = None, module: bool = False) -> types.CodeType:
    """`code` with the counter for `key` right after its ``RESUME`` (one tick a call)
    and the counter for `loop_key` before each backward jump (one tick a loop
    iteration; a jump to the backward jump runs its counter too). Each counter has the
    line of the instruction it sits beside (the jump, the first one after ``RESUME``),
    so no instruction starts a line that did not start one before: a trace function
    sees exactly the line events of the code as written. Each leaves the stack as it
    found it. They call placeholders, which `counters.live` replaces (the result is
    marshalled into the hook's cache first). Everything else stays byte for byte as it
    was (`rawcode`).

    With a `gate_key`, a loop's counter is also a way out of the loop: where the stack
    holds nothing but the values of the loops around it (`_osr_depths`), its tick is
    followed by a jump, taken when the counter answers False (its ``enter`` is set), to
    a stub after the code's end (`_stub`): on-stack replacement (hook/osr.py).

    With `module`, `code` is a module's and only its loops that on-stack replacement
    may enter are counted (`_module_loops`), each with an exit; a module without
    such loops is returned as it is."""
    if module and _LOOP_JUMPS.isdisjoint(code.co_code[::2]):
        return code  # (most modules' top level: no loop at all)
    instrs = rawcode.instructions(code)
    regions = _module_loops(code, instrs) if module else {}
    if module and not regions:
        return code
    positions = list(code.co_positions())
    consts = code.co_consts + (placeholder(key),)
    inserts = []
    entry = next(n for n, i in enumerate(instrs) if i.op == _RESUME) + 1
    line = positions[instrs[entry].start // 2 + instrs[entry].prefixes][0]
    inserts.append(rawcode.Insert(entry, _counter_units(len(consts) - 1), (line, line, None, None), targeted=False))
    loops = sorted(regions) if module else [n for n, i in enumerate(instrs) if i.op in _LOOP_JUMPS]
    if not loops:
        return rawcode.relayout(code, inserts, set(), co_consts=consts, co_stacksize=code.co_stacksize + _COUNTER_DEPTH)
    consts += (placeholder(loop_key),)
    loop_const = len(consts) - 1
    depths = _osr_depths(code, instrs) if gate_key is not None else {}
    if module:
        depths = {n: depths[n] for n in regions}
    ticks = _counter_units(loop_const)
    exits = _exit_units(loop_const)
    for n in loops:
        line = positions[instrs[n].start // 2 + instrs[n].prefixes][0]
        inserts.append(rawcode.Insert(n, exits if n in depths else ticks, (line, line, None, None), targeted=True))
    if not depths:
        return rawcode.relayout(code, inserts, set(), co_consts=consts, co_stacksize=code.co_stacksize + _COUNTER_DEPTH)
    assert gate_key is not None
    consts += (placeholder(gate_key), code.co_stacksize)  # (the stack size as written: for `without_counters`)
    gate = len(consts) - 2
    keys = {}  # each stub's key: the offset of its loop's jump in the code as written
    for n in sorted(depths):
        keys[n] = len(consts)
        consts += (instrs[n].offset,)
    stacksize = max(code.co_stacksize + _COUNTER_DEPTH, *(2 * d + 2 for d in depths.values()), *(d + 3 for d in depths.values()),
                    *(len(r.exits) + 1 for r in regions.values()))
    counted = rawcode.relayout(code, inserts, set(), co_consts=consts, co_stacksize=stacksize)
    # The exits' jumps, in the order of their loops' jumps, and the stubs they go to.
    new = rawcode.instructions(counted)
    exit_jumps = [k for k in range(1, len(new)) if new[k].op in _EXIT_JUMP_OPS and new[k].prefixes == _EXIT_PREFIXES and _exit_load(new, k, loop_const)]
    assert len(exit_jumps) == len(depths), (exit_jumps, depths)
    raw = bytearray(counted.co_code)
    new_positions = list(counted.co_positions())
    handlers = []
    for (n, depth), k in zip(sorted(depths.items()), exit_jumps):
        jump, back = new[k], new[k + 1]
        line = new_positions[back.start // 2 + back.prefixes]
        start = len(raw)
        exits = None
        if module:  # (where the exits are in the counted code: after the counters before them)
            exits = [new[e + sum(_count(i.units) for i in inserts if i.before <= e)].start for e in regions[n].exits]
        units, handler = _stub(start, depth, gate, keys[n], back, back.start + 2 * back.units, exits)
        raw += units
        new_positions += [line] * (len(units) // 2)
        handlers.append(handler)
        after = jump.start + 2 * jump.units
        raw[jump.start : after] = rawcode.encode(jump.op, (start - after) // 2, _EXIT_PREFIXES)
    return rawcode.appended(counted, bytes(raw), new_positions, handlers)


#: A stack value of an on-stack replacement that is a range iterator, passed as the
#: start, stop and step of the range of the items it has left (see `resume.osr_code`).
RANGE = "range"
#: One that is passed as it is.
VALUE = "value"


#: The EXTENDED_ARG prefixes of an exit's jump: fixed, so that it is patched in place.
_EXIT_PREFIXES = 2
_POP_JUMP_IF_FALSE = rawcode.opcode.opmap.get("POP_JUMP_IF_FALSE", rawcode.opcode.opmap.get("POP_JUMP_FORWARD_IF_FALSE"))
_EXIT_JUMP_OPS = frozenset({_POP_JUMP_IF_FALSE})
_TO_BOOL = rawcode.opcode.opmap.get("TO_BOOL")  # 3.13: a conditional jump takes only bools
_OPS = rawcode.opcode.opmap
_UNCONDITIONAL = region.UNCONDITIONAL


def _exit_units(const_index: int) -> bytes:
    """A loop counter that is a way out: ``LOAD_CONST counter; [TO_BOOL;]
    POP_JUMP_IF_FALSE <stub>`` (the jump's argument is patched in later)."""
    units = rawcode.encode(_LOAD_CONST, const_index)
    if _TO_BOOL is not None:
        units += rawcode.encode(_TO_BOOL, 0)
    return units + rawcode.encode(_POP_JUMP_IF_FALSE, 0, _EXIT_PREFIXES)


def _exit_load(instrs: Sequence[Any], k: int, const_index: int) -> bool:
    """Whether the jump at `instrs[k]` is an exit's: it follows the load of the loop
    counter (and a TO_BOOL)."""
    first = k - 2 if _TO_BOOL is not None else k - 1
    if first < 0 or (_TO_BOOL is not None and instrs[k - 1].op != _TO_BOOL):
        return False
    return instrs[first].op == _LOAD_CONST and instrs[first].arg == const_index


def _osr_depths(code: types.CodeType, instrs: Sequence[Any], depth: dict[int, int] | None = None) -> dict[int, int]:
    """The loop jumps (by index in `instrs`) where on-stack replacement may start, with
    the stack depth there. Only jumps that, like their targets, are outside every
    exception-table range: in a counted function (no ``try``, no ``with``) those are
    statements' loops, whose stack holds the iterators of the ``for`` loops around them
    (and on 3.11 the condition of a conditional jump back), never a NULL. A
    comprehension inlined by 3.12 has its loop's header (a FOR_ITER, which may raise)
    in a range, and its stack holds what it builds and what a call around it needs
    (NULLs among them). tests/test_rawcode.py checks the depths against
    decode/resume.py's analysis. (`depth`: `region.stack_depths`, when the caller has
    it already.)"""
    if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):
        return {}  # (a generator's or coroutine's: never counted, and its frame is resumed)
    covered = rawcode.covered(code)
    if depth is None:
        depth = region.stack_depths(code, instrs)
    if depth is None:
        return {}  # (a stack effect not modelled right: no exits at all)
    return {
        n: depth[n]
        for n, i in enumerate(instrs)
        if i.op in _LOOP_JUMPS and n in depth and depth[n] <= _MAX_OSR_DEPTH and not {i.start // 2, i.target // 2} & covered
    }


def _module_loops(code: types.CodeType, instrs: Sequence[Any]) -> dict[int, region.Region]:
    """The loop jumps of module-level code (by index in `instrs`) that on-stack
    replacement may enter, with their regions (`region.module_loop`): those with an
    exit whose region has no instruction the decoder never decodes, whose ``for``
    loops iterate over ``range(...)`` (an entry takes no other iterator), and that loads
    or stores no name the module binds to a container display. A loop that cannot
    be entered is not counted at all: the module's frame runs its code as written (it
    never gets the code back, as a function does once the hook has decided)."""
    depth = region.stack_depths(code, instrs)
    depths = _osr_depths(code, instrs, depth)
    if not depths or depth is None:
        return {}
    refused = {rawcode.opcode.opmap[name] for name in CONSTRUCTS if name in rawcode.opcode.opmap}
    found = {}
    for n in depths:
        r = region.module_loop(code, instrs, depth, n)
        if (r is not None and not any(instrs[k].op in refused for k in r.instrs) and region.over_ranges(code, instrs, depth, r)
                and not region.uses_containers(code, instrs, r)):
            found[n] = r
    return found


def _count(units: bytes) -> int:
    """The instructions in `units` (prefixes and caches belong to theirs)."""
    n = k = 0
    while k < len(units):
        op = units[k]
        k += 2 if op == rawcode.EXTENDED_ARG else 2 * (1 + rawcode.caches(op))
        n += op != rawcode.EXTENDED_ARG
    return n


#: Loops nested deeper than this get no stub (a stub copies the stack: 2 values each).
_MAX_OSR_DEPTH = 16


def _stub(start: int, depth: int, gate: int, key: int, back: Any, after_back: int, exits: list[int] | None = None) -> tuple[bytes, tuple[int, int, int, int]]:
    """The units of an exit's stub, at byte `start`, for a loop jump `back` (in the
    counted code) with `depth` values on the stack, and its exception-table entry
    (start, end, handler in units; depth). It asks the gate ``gate[(key, *stack)]``:
    the gate itself means "not entered": the loop goes on as the jump would have;
    anything else is the function's result, which the frame returns. An exception
    from the gate passes through a handler that asks ``gate[exception]`` to fix its
    traceback (`osr.unlink`) and re-raises it with RERAISE, which adds no entry.

        LOAD_CONST gate; LOAD_CONST key; COPY depth+2 (depth times); BUILD_TUPLE depth+1
        BINARY_SUBSCR                                  <- the handler's range: from the start
        COPY 1; LOAD_CONST gate; IS_OP 0; POP_JUMP_IF_FALSE done
        POP_TOP; <the loop's jump>; [JUMP_BACKWARD after it: a conditional one, 3.11]
      done: (SWAP 2; POP_TOP) depth times; RETURN_VALUE
      handler: LOAD_CONST gate; COPY 2; BINARY_SUBSCR; POP_TOP; RERAISE 0

    A module-level loop's stub (`exits`: the byte offsets the loop's region goes on
    to) does not return: the gate's answer is a tuple of one bool an exit, True for
    the one its entry left by, and the stub goes there:

      done: (SWAP 2; POP_TOP) depth times; UNPACK_SEQUENCE m
            POP_JUMP_IF_TRUE exit_0; ...; POP_JUMP_IF_TRUE exit_m-2; POP_TOP; JUMP_BACKWARD <exit m-1>
      exit_i: POP_TOP (m-1-i times); JUMP_BACKWARD <exit i>
    """
    enc = rawcode.encode
    head = enc(_LOAD_CONST, gate) + enc(_LOAD_CONST, key) + enc(_OPS["COPY"], depth + 2) * depth + enc(_OPS["BUILD_TUPLE"], depth + 1)
    ask = enc(_OPS["BINARY_SUBSCR"], 0)
    test = enc(_OPS["COPY"], 1) + enc(_LOAD_CONST, gate) + enc(_OPS["IS_OP"], 0)
    done = (enc(_OPS["SWAP"], 2) + enc(_OPS["POP_TOP"], 0)) * depth + enc(_OPS["RETURN_VALUE"], 0)
    handler = enc(_LOAD_CONST, gate) + enc(_OPS["COPY"], 2) + enc(_OPS["BINARY_SUBSCR"], 0) + enc(_OPS["POP_TOP"], 0) + enc(_OPS["RERAISE"], 0)

    def backward(op: int, at: int, target: int) -> bytes:
        size = len(enc(op, 0, _EXIT_PREFIXES))
        return enc(op, (at + size - target) // 2, _EXIT_PREFIXES)

    pos = start + len(head) + len(ask) + len(test)
    jump_size = len(enc(_POP_JUMP_IF_FALSE, 0))
    rest = enc(_OPS["POP_TOP"], 0)
    loop_jump_at = pos + jump_size + len(rest)
    rest += backward(back.op, loop_jump_at, back.target)
    if back.op not in _UNCONDITIONAL:  # 3.11's conditional jump back: when not taken, the code after it
        rest += backward(_OPS["JUMP_BACKWARD"], loop_jump_at + len(rest) - len(enc(_OPS["POP_TOP"], 0)), after_back)
    if exits is not None:
        done = done[: -len(enc(_OPS["RETURN_VALUE"], 0))]
        at = pos + jump_size + len(rest) + len(done)
        done += _dispatch(at, exits)
    units = head + ask + test + enc(_POP_JUMP_IF_FALSE, len(rest) // 2) + rest + done
    assert len(enc(_POP_JUMP_IF_FALSE, len(rest) // 2)) == jump_size
    ask_at = start + len(head)
    handler_at = start + len(units)
    # (from the stub's start, not only the subscript: on 3.13, where the subscript has
    # become a call of the gate's __getitem__ in the interpreter, an exception from it
    # is looked up at the unit before the subscript, found by a helper)
    return units + handler, (start // 2, (ask_at + len(ask)) // 2, handler_at // 2, depth)


_POP_JUMP_IF_TRUE = _OPS.get("POP_JUMP_IF_TRUE", _OPS.get("POP_JUMP_FORWARD_IF_TRUE"))


def _dispatch(start: int, exits: list[int]) -> bytes:
    """A module-level stub's jump to the exit its gate's tuple of bools names (see
    `_stub`), at byte `start`."""
    enc = rawcode.encode
    m = len(exits)
    pop, test = enc(_OPS["POP_TOP"], 0), len(enc(_POP_JUMP_IF_TRUE, 0, _EXIT_PREFIXES))
    back = len(enc(_OPS["JUMP_BACKWARD"], 0, _EXIT_PREFIXES))

    def backward(at: int, target: int) -> bytes:
        return enc(_OPS["JUMP_BACKWARD"], (at + back - target) // 2, _EXIT_PREFIXES)

    units = enc(_OPS["UNPACK_SEQUENCE"], m)
    tests_at = start + len(units)
    last_at = tests_at + (m - 1) * test  # the fall-through: exit m-1
    blocks_at = last_at + len(pop) + back
    block_at, blocks = [], b""
    for i in range(m - 1):  # exit i: its bools after the tested one, then the jump
        block_at.append(blocks_at + len(blocks))
        at = block_at[-1] + (m - 1 - i) * len(pop)
        blocks += pop * (m - 1 - i) + backward(at, exits[i])
    for i in range(m - 1):
        after = tests_at + (i + 1) * test
        units += enc(_POP_JUMP_IF_TRUE, (block_at[i] - after) // 2, _EXIT_PREFIXES)
    units += pop + backward(last_at + len(pop), exits[m - 1])
    return units + blocks


def without_counters(code: types.CodeType) -> types.CodeType:
    """`code` as it was before `add_counters` (nested code objects keep theirs: they
    are other functions). What a function gets back once the hook has decided about
    it, so that it stops paying for counting."""
    consts = code.co_consts
    if not any(is_counter_constant(c) for c in consts):
        return code  # (the code as written already: ~70 us less than reading it)
    template, at = _template()
    ops = [op for op, _ in template]
    ops[at] = _LOAD_CONST
    instrs = rawcode.instructions(code)
    drop: set[int] = set()
    stubs = len(instrs)  # where the stubs start: what the first exit jumps to
    for n, i in enumerate(instrs):
        if i.op != _LOAD_CONST or not is_counter_constant(consts[i.arg]):
            continue
        first = n - at
        if first >= 0 and [j.op for j in instrs[first : first + len(ops)]] == ops:
            drop.update(range(first, first + len(ops)))
            continue
        last = n + (2 if _TO_BOOL is not None else 1)
        if last < len(instrs) and _exit_load(instrs, last, i.arg) and instrs[last].op in _EXIT_JUMP_OPS:
            drop.update(range(n, last + 1))
            stubs = min(stubs, next(k for k, j in enumerate(instrs) if j.start == instrs[last].target))
    if not drop:
        return code
    kept = next(k for k, c in enumerate(consts) if is_counter_constant(c))  # add_counters appended the rest
    stacksize = code.co_stacksize - _COUNTER_DEPTH
    if stubs < len(instrs):
        drop.update(range(stubs, len(instrs)))
        stacksize = consts[kept + 3]  # after the call's and the loop's counters and the gate
    return rawcode.relayout(code, [], drop, co_consts=consts[:kept], co_stacksize=stacksize)


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
    # (the helpers, and so the template's own locals, numbered from 16 up: see rawcode.prefixed)
    pads = [f"{_BODY}{k}" for k in range(nargs, 16)]
    template_source = f"def _t({', '.join([*code.co_varnames[:nargs], *pads, *helpers])}):\n{source}    {_BODY}\n"
    ns: dict[str, Any] = {}
    exec(compile(template_source, "<cuvil_bc>", "exec"), ns)
    lines = template_source.splitlines()
    called = {n + 1 for n, text in enumerate(lines) if call_line and text.strip().startswith(call_line)}
    try:
        return rawcode.prefixed(code, ns["_t"].__code__, nargs, nargs + len(pads), list(constants.values()), _BODY, called, code.co_firstlineno + 1)
    except rawcode.NotInPlace:
        return _with_prefix_assembled(code, ns["_t"].__code__, constants, called)


def _with_prefix_assembled(code: types.CodeType, template_code: types.CodeType, constants: dict[str, object], called: set[int]) -> types.CodeType:
    """`with_prefix` through the bytecode library, for the code that `rawcode.prefixed`
    cannot splice in place (a function with cells; thousands of constants). It costs
    ~20 ms to import, and milliseconds a function to disassemble and reassemble."""
    import bytecode

    template = list(bytecode.Bytecode.from_code(template_code, conserve_exception_block_stackdepth=True))
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
    made = _to_code(abstract, code, max(code.co_stacksize, template_code.co_stacksize))
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
