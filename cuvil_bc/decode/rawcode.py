"""Inserting and deleting instructions in a code object's bytes, without a bytecode library.

The import hook puts counters into every counted function at import (and takes them out
again once it has decided about the function). Doing that through `bytecode` cost ~20 ms
to import it and about a millisecond a function to disassemble and reassemble, which
alone made short programs slower under the hook than without it. Here the code stays as
CPython wrote it, byte for byte, except for what is inserted or deleted:

* instructions are read from ``co_code`` (2-byte units: opcode, argument; an
  ``EXTENDED_ARG`` prefix per extra argument byte; inline caches after the opcode,
  which ``co_code`` shows as zeros);
* relative jumps get new arguments (a jump lands at the unit after its inline caches,
  plus twice its argument forward or minus it backward, as `dis` computes it), with more
  ``EXTENDED_ARG`` prefixes when an argument outgrows them;
* the exception table (start, end and handler in code units, big-endian 6-bit varints)
  and the location table (one position per code unit, from ``co_positions``) are
  rebuilt for the new offsets.

Only this module and `counting.py` know the code object's binary layout, and
everything that differs between 3.11, 3.12 and 3.13 here comes from `opcode` (not
`dis`, which would cost every hooked program ~1 ms to import).
"""

from __future__ import annotations

import collections
import opcode
import sys
import types

EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]
JUMP_FORWARD = opcode.opmap["JUMP_FORWARD"]  # (no inline caches in 3.11-3.13)
_JUMPS = frozenset(getattr(opcode, "hasjump", ())) | frozenset(opcode.hasjrel)
_BACKWARD = frozenset(op for name, op in opcode.opmap.items() if "BACKWARD" in name)
assert not opcode.hasjabs, "absolute jumps: not in 3.11-3.13"

Position = tuple  # (line, end_line, column, end_column), any of them None


def caches(op: int) -> int:
    """The inline cache units after opcode `op`."""
    entries = opcode._inline_cache_entries  # type: ignore[attr-defined]
    if isinstance(entries, dict):  # 3.13: by name
        return int(entries.get(opcode.opname[op], 0))
    return int(entries[op])


class Instr(collections.namedtuple("Instr", "start op arg prefixes target")):
    """One instruction of ``co_code``: its first unit's offset (the first prefix's),
    the opcode, the whole argument, the number of ``EXTENDED_ARG`` prefixes, and for a
    jump the offset of its target (else None). (Not a `typing.NamedTuple`: importing
    typing costs the hook's startup ~5 ms.)"""

    __slots__ = ()

    @property
    def units(self) -> int:
        return self.prefixes + 1 + caches(self.op)

    @property
    def offset(self) -> int:
        """The offset of its opcode's own unit (after its prefixes), as `dis` gives it."""
        return self.start + 2 * self.prefixes


def instructions(code: types.CodeType) -> list[Instr]:
    raw = code.co_code
    out: list[Instr] = []
    k, start, ext, prefixes = 0, 0, 0, 0
    while k < len(raw):
        op, arg = raw[k], raw[k + 1]
        if op == EXTENDED_ARG:
            if not prefixes:
                start = k
            ext, prefixes = (ext | arg) << 8, prefixes + 1
            k += 2
            continue
        if not prefixes:
            start = k
        after = k + 2 * (1 + caches(op))
        target = None
        if op in _JUMPS:
            target = after - 2 * (ext | arg) if op in _BACKWARD else after + 2 * (ext | arg)
        out.append(Instr(start, op, ext | arg, prefixes, target))
        k = after
        ext, prefixes = 0, 0
    return out


def index_at(instrs: list[Instr], offset: int) -> int | None:
    """The index in `instrs` of the instruction whose opcode is at byte `offset`."""
    return next((k for k, i in enumerate(instrs) if i.offset == offset), None)


def encode(op: int, arg: int, prefixes: int = 0) -> bytes:
    """One instruction's units, with at least `prefixes` ``EXTENDED_ARG`` units, and
    zeroed caches."""
    needed = max(prefixes, (max(arg.bit_length(), 1) - 1) // 8)
    units: list[int] = []
    for n in range(needed, 0, -1):
        units += [EXTENDED_ARG, (arg >> (8 * n)) & 0xFF]
    units += [op, arg & 0xFF]
    return bytes(units) + bytes(2 * caches(op))


class Insert(collections.namedtuple("Insert", "before units position targeted handlers jump", defaults=((), None))):
    """Units (bytes) to put before instruction `before` (an index into
    `instructions`, or their number: at the end), all at `position` (or a list of
    one position a unit); jumps to that instruction land on them when `targeted`, and
    skip them otherwise. `handlers`: exception-table entries of the units' own (start,
    end, handler, depth and lasti; units counted from the first inserted one). Jumps
    among the units stay as they are: they move together. `jump`: the index of an
    instruction after `before` that the units go on to, by a ``JUMP_FORWARD`` that
    `relayout` adds after them (at their last position) and sizes, or None."""

    __slots__ = ()


def relayout(code: types.CodeType, inserts: list[Insert], deleted: set[int], **replace: object) -> types.CodeType:
    """`code` with `inserts` added and the instructions at the indices `deleted` taken
    out (a jump to a deleted instruction goes to what follows it), every jump,
    exception-table entry and position moved along; `replace` as for `code.replace`."""
    ins = instructions(code)
    positions = list(code.co_positions())
    before: dict[int, list[Insert]] = {}
    for item in inserts:
        before.setdefault(item.before, []).append(item)
    # A jump's prefixes are recomputed from none, growing until every argument fits
    # (growing one can only push others further): deleting what `add_counters` put in
    # gives back the code as CPython assembled it.
    prefixes = [0 if i.target is not None else i.prefixes for i in ins]
    jumps = [item for item in inserts if item.jump is not None]
    if any(item.jump < item.before for item in jumps):
        raise ValueError("an insert's jump goes back")
    numbered = {id(item): k for k, item in enumerate(jumps)}
    jump_prefixes = [0] * len(jumps)
    jump_at = [0] * len(jumps)  # (where each of `jumps` starts)
    while True:
        # New offsets: of each instruction's first unit, and where a jump to it lands.
        start: list[int] = []
        landing: list[int] = []
        at = 0
        def passed(item: Insert, at: int) -> int:
            at += len(item.units)
            if item.jump is not None:
                k = numbered[id(item)]
                jump_at[k] = at
                at += 2 * (jump_prefixes[k] + 1)
            return at

        for n, i in enumerate(ins):
            land = None
            for item in before.get(n, ()):
                if item.targeted and land is None:
                    land = at
                at = passed(item, at)
            start.append(at)
            landing.append(at if land is None else land)
            if n not in deleted:
                at += 2 * (prefixes[n] + 1 + caches(i.op))
        end = at
        for item in before.get(len(ins), ()):
            at = passed(item, at)
        for n in range(len(ins) - 1, -1, -1):  # a deleted instruction: its successor's landing
            if n in deleted and not any(item.targeted for item in before.get(n, ())):
                landing[n] = landing[n + 1] if n + 1 < len(ins) else end
        old_start = {i.start: n for n, i in enumerate(ins)}

        def moved(offset: int) -> int:
            return end if offset == len(code.co_code) else landing[old_start[offset]]

        args: dict[int, int] = {}
        grew = False
        for n, i in enumerate(ins):
            if i.target is None or n in deleted:
                continue
            here = i.offset
            new_here = start[n] + 2 * prefixes[n]
            if i.op in _BACKWARD:
                base = i.target + 2 * i.arg - here
                arg = (new_here + base - moved(i.target)) // 2
            else:
                base = i.target - 2 * i.arg - here
                arg = (moved(i.target) - new_here - base) // 2
            assert arg >= 0, (i, arg)
            args[n] = arg
            need = (max(arg.bit_length(), 1) - 1) // 8
            if need > prefixes[n]:
                prefixes[n] = need
                grew = True
        for k, item in enumerate(jumps):
            arg = (landing[item.jump] - jump_at[k] - 2 * (jump_prefixes[k] + 1)) // 2
            need = (max(arg.bit_length(), 1) - 1) // 8
            if need > jump_prefixes[k]:
                jump_prefixes[k] = need
                grew = True
        if not grew:
            break
    out = bytearray()
    new_positions: list[Position] = []
    entries = [(moved(2 * b) // 2, moved(2 * e) // 2, moved(2 * h) // 2, dl) for b, e, h, dl in _entries(code.co_exceptiontable)]

    def put(item: Insert) -> None:
        unit = len(out) // 2
        entries.extend((unit + b, unit + e, unit + h, dl) for b, e, h, dl in item.handlers)
        out.extend(item.units)
        n = len(item.units) // 2
        new_positions.extend(item.position if isinstance(item.position, list) else [item.position] * n)
        if item.jump is not None:
            k = numbered[id(item)]
            units = encode(JUMP_FORWARD, (landing[item.jump] - jump_at[k]) // 2 - jump_prefixes[k] - 1, jump_prefixes[k])
            out.extend(units)
            listed = isinstance(item.position, list)
            at = (item.position[-1] if item.position else (None, None, None, None)) if listed else item.position
            new_positions.extend([at] * (len(units) // 2))

    for n, i in enumerate(ins):
        for item in before.get(n, ()):
            put(item)
        if n in deleted:
            continue
        unit = i.start // 2
        units = encode(i.op, args.get(n, i.arg), prefixes[n])
        if prefixes[n] == i.prefixes:
            new_positions += positions[unit : unit + i.units]
        else:  # prefixes added or dropped: each has the opcode's position
            opcode_unit = unit + i.prefixes
            new_positions += [positions[opcode_unit]] * prefixes[n] + positions[opcode_unit : unit + i.units]
        out += units
    assert len(out) == end
    for item in before.get(len(ins), ()):
        put(item)
    assert len(out) == at and len(new_positions) == at // 2
    return code.replace(
        co_code=bytes(out),
        co_linetable=_locations(new_positions, code.co_firstlineno),
        co_exceptiontable=_table(entries),
        **replace,  # type: ignore[arg-type]
    )


def appended(code: types.CodeType, raw: bytes, positions: list[Position], handlers: list[tuple[int, int, int, int]]) -> types.CodeType:
    """`code` with ``co_code`` replaced by `raw`, its first bytes (``code.co_code``
    plus what follows) at `positions` (one per unit), and `handlers` (start, end,
    handler in units, stack depth; no lasti) added to its exception table after the
    entries it has: they must cover units after all of those."""
    table = code.co_exceptiontable + b"".join(
        _write_be(begin, mark=True) + _write_be(end - begin) + _write_be(handler) + _write_be(depth << 1) for begin, end, handler, depth in handlers
    )
    return code.replace(co_code=raw, co_linetable=_locations(positions, code.co_firstlineno), co_exceptiontable=table)


def covered(code: types.CodeType) -> set[int]:
    """The code units that an exception-table entry covers."""
    return {unit for begin, end, _, _ in _entries(code.co_exceptiontable) for unit in range(begin, end)}


# -- a prefix spliced into a function --------------------------------------------------

_RESUME = opcode.opmap["RESUME"]
_LOAD_CONST = opcode.opmap["LOAD_CONST"]
_LOAD_GLOBAL = opcode.opmap["LOAD_GLOBAL"]
_RETURNS = frozenset(opcode.opmap[n] for n in ("RETURN_VALUE", "RETURN_CONST") if n in opcode.opmap)
#: 3.13's instructions on two locals, each index in four bits of the argument.
_PAIRED = frozenset(opcode.opmap[n] for n in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST") if n in opcode.opmap)
_LOCAL = frozenset(opcode.haslocal) - _PAIRED
_LOADS = frozenset(opcode.opmap[n] for n in ("LOAD_FAST", "LOAD_FAST_CHECK") if n in opcode.opmap)
#: How far a name's index is shifted left in the argument (the low bits are flags).
_NAME_SHIFT = {_LOAD_GLOBAL: 1, opcode.opmap.get("LOAD_SUPER_ATTR", -1): 2}
if sys.version_info >= (3, 12):
    _NAME_SHIFT[opcode.opmap["LOAD_ATTR"]] = 1


class NotInPlace(Exception):
    """A prefix that `prefixed` cannot splice without moving more than it can."""


def prefixed(code: types.CodeType, template: types.CodeType, nparams: int, helpers: int, values: list[object], marker: str,
             lines: set[int], line: int) -> types.CodeType:
    """`code` with the statements of `template` before its body. `template` is a
    function whose first `nparams` locals are `code`'s parameters; its locals from
    `helpers` on, one for each of `values`, are read only, and become those
    constants; the locals after them are its own, and become new locals of `code`
    (CPython packs two locals into one instruction only where both are below 16: the
    caller puts the helpers and its own above). Where `template` reads the global
    `marker`, `code`'s body follows (the statement, and the return after it, go); a
    template that never gets there has the body after its end. Its instructions have
    no position, but those on `lines` (of the template), which are on `line` of `code`.

    The template's instructions keep their sizes and order, so its jumps and
    handlers stay as they are, and the body's too: it moves as one block.
    `NotInPlace` for code with cells, or indices that outgrow their instruction."""
    if code.co_cellvars or code.co_freevars or template.co_cellvars or template.co_freevars:
        raise NotInPlace("cells")
    body, own = instructions(code), instructions(template)
    if body[0].op != _RESUME or own[0].op != _RESUME:
        raise NotInPlace("instructions before RESUME")
    varnames, consts, names = list(code.co_varnames), list(code.co_consts), list(code.co_names)
    taken: dict[tuple[str, int], int] = {}

    def local(index: int) -> int:
        if index < nparams:
            return index
        if index < helpers + len(values):
            raise NotInPlace("a helper written, or read in a pair")
        if ("local", index) not in taken:
            taken["local", index] = len(varnames)
            varnames.append(template.co_varnames[index])
        return taken["local", index]

    def added(kind: str, index: int, table: list[object], value: object) -> int:
        if (kind, index) not in taken:
            taken[kind, index] = len(table)
            table.append(value)
        return taken[kind, index]

    markers = [k for k, i in enumerate(own) if i.op == _LOAD_GLOBAL and template.co_names[i.arg >> 1] == marker]
    if len(markers) > 1:
        raise NotInPlace("the body reached two ways")
    first = markers[0] if markers else len(own)
    last = next((k for k in range(first, len(own)) if own[k].op in _RETURNS), len(own) - 1)
    raw = bytearray(template.co_code)
    template_positions = list(template.co_positions())
    resume_position = list(code.co_positions())[body[0].start // 2]
    positions: list[Position] = []
    for k, i in enumerate(own):
        op, arg = i.op, i.arg
        if k == 0 or first <= k <= last:
            pass  # (its RESUME stays; the marker's statement goes)
        elif op in _LOADS and helpers <= arg < helpers + len(values):
            op, arg = _LOAD_CONST, added("helper", arg, consts, values[arg - helpers])
        elif op in _LOCAL:
            arg = local(arg)
        elif op in _PAIRED:
            arg = (local(arg >> 4) << 4) | local(arg & 15)
        elif op in opcode.hasconst:
            arg = added("const", arg, consts, template.co_consts[arg])
        elif op in opcode.hasname:
            shift = _NAME_SHIFT.get(op, 0)
            arg = (added("name", arg >> shift, names, template.co_names[arg >> shift]) << shift) | (arg & ((1 << shift) - 1))
        elif op in opcode.hasfree:
            raise NotInPlace("a cell")
        units = encode(op, arg, i.prefixes)
        if len(units) != 2 * i.units:
            raise NotInPlace("an index that outgrows its instruction")
        raw[i.start : i.start + len(units)] = units
        on_line = template_positions[i.start // 2 + i.prefixes][0] in lines
        positions += [resume_position if k == 0 else (line, line, None, None) if on_line else (None, None, None, None)] * i.units
    start = body[1].start if len(body) > 1 else len(code.co_code)
    body_positions = list(code.co_positions())[start // 2 :]
    handlers = [(b - start // 2, e - start // 2, h - start // 2, dl) for b, e, h, dl in _entries(code.co_exceptiontable)]
    shaped = template.replace(
        co_code=bytes(raw), co_linetable=_locations(positions, code.co_firstlineno), co_firstlineno=code.co_firstlineno,
        co_consts=tuple(consts), co_names=tuple(names), co_varnames=tuple(varnames), co_nlocals=len(varnames),
        co_argcount=code.co_argcount, co_posonlyargcount=code.co_posonlyargcount, co_kwonlyargcount=code.co_kwonlyargcount,
        co_flags=code.co_flags, co_name=code.co_name, co_qualname=code.co_qualname, co_filename=code.co_filename,
    )
    splice = Insert(first, code.co_code[start:], body_positions, True, handlers)
    return relayout(shaped, [splice], set(range(first, last + 1)) if markers else set(),
                    co_stacksize=max(code.co_stacksize, template.co_stacksize))


# -- a function entered at one of its instructions ---------------------------------------

_VARARGS = 0x04 | 0x08  # CO_VARARGS, CO_VARKEYWORDS


def entered_at(code: types.CodeType, offset: int, params: list[str], prologue: list[tuple[str, object]], line: int,
               stacksize: int) -> types.CodeType:
    """`code` as a function of `params` (plain positional parameters, in that order:
    locals of its own, then new ones) that runs `prologue` and then goes on at the
    instruction at byte `offset` (its opcode's unit). The prologue is (opname,
    argument) pairs: a local's name for an instruction on a local, a name for
    ``LOAD_GLOBAL`` (which pushes a NULL too), else the argument itself; its
    instructions are on `line`. The other locals keep their names, after the
    parameters. `NotInPlace` for code with cells, or locals renumbered past what
    their instructions hold."""
    if code.co_cellvars or code.co_freevars:
        raise NotInPlace("cells")
    ins = instructions(code)
    if not ins or ins[0].op != _RESUME:
        raise NotInPlace("instructions before RESUME")
    target = index_at(ins, offset)
    if not target:
        raise ValueError(f"no instruction at offset {offset} in {code.co_qualname}")
    old = code.co_varnames
    varnames = list(params) + [name for name in old if name not in params]
    index = {name: k for k, name in enumerate(varnames)}
    raw = bytearray(code.co_code)
    for i in ins:
        if i.op in _LOCAL:
            arg = index[old[i.arg]]
        elif i.op in _PAIRED:
            high, low = index[old[i.arg >> 4]], index[old[i.arg & 15]]
            if high > 15 or low > 15:
                raise NotInPlace("a pair of locals renumbered past 15")
            arg = high << 4 | low
        else:
            continue
        units = encode(i.op, arg, i.prefixes)
        if len(units) != 2 * i.units:
            raise NotInPlace("a local's index that outgrows its instruction")
        raw[i.start : i.start + len(units)] = units
    names = list(code.co_names)
    added = bytearray()
    for opname, value in prologue:
        op = opcode.opmap[opname]
        if op in _LOCAL:
            arg = index[value]  # type: ignore[index]
        elif op == _LOAD_GLOBAL:
            if value not in names:
                names.append(value)  # type: ignore[arg-type]
            arg = names.index(value) << 1 | 1  # type: ignore[arg-type]
        else:
            arg = value  # type: ignore[assignment]
        added += encode(op, arg)
    renumbered = code.replace(
        co_code=bytes(raw), co_varnames=tuple(varnames), co_nlocals=len(varnames), co_names=tuple(names),
        co_argcount=len(params), co_posonlyargcount=0, co_kwonlyargcount=0, co_flags=code.co_flags & ~_VARARGS,
    )
    enter = Insert(1, bytes(added), (line, line, None, None), False, (), target)
    return relayout(renumbered, [enter], set(), co_stacksize=max(code.co_stacksize, stacksize))


# -- the exception table: (start, length, handler, depth and lasti), big-endian varints -----


def _entries(table: bytes) -> list[tuple[int, int, int, int]]:
    """The entries of an exception table: (start, end, handler, depth and lasti), in units."""
    entries = []
    it = iter(table)
    while True:
        try:
            begin, length, handler, depth_lasti = [_read_be(it) for _ in range(4)]
        except StopIteration:
            return entries
        entries.append((begin, begin + length, handler, depth_lasti))


def _table(entries: list[tuple[int, int, int, int]]) -> bytes:
    """An exception table of `entries`, in the order of their starts (CPython's lookup
    reads them in that order)."""
    out = bytearray()
    for begin, finish, handler, depth_lasti in sorted(entries):
        if finish <= begin:
            continue  # everything it covered was deleted
        out += _write_be(begin, mark=True) + _write_be(finish - begin) + _write_be(handler) + _write_be(depth_lasti)
    return bytes(out)


def _read_be(it: "object") -> int:
    b = next(it)  # type: ignore[call-overload]
    value = b & 63
    while b & 64:
        b = next(it)  # type: ignore[call-overload]
        value = (value << 6) | (b & 63)
    return value


def _write_be(value: int, mark: bool = False) -> bytes:
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    out = [c | 64 for c in chunks[:-1]] + [chunks[-1]]
    if mark:
        out[0] |= 128
    return bytes(out)


# -- the location table: entries of 1 to 8 units, little-endian varints -------------------


def _locations(positions: list[Position], firstlineno: int) -> bytes:
    out = bytearray()
    line = firstlineno
    k = 0
    while k < len(positions):
        pos = positions[k]
        run = 1
        while run < 8 and k + run < len(positions) and positions[k + run] == pos:
            run += 1
        k += run
        start, end, col, end_col = pos
        if start is None:
            out.append(0x80 | (15 << 3) | (run - 1))
            continue
        if col is None and end_col is None and end in (start, None):
            out.append(0x80 | (13 << 3) | (run - 1))
            out += _write_svarint(start - line)
        else:
            out.append(0x80 | (14 << 3) | (run - 1))
            out += _write_svarint(start - line)
            out += _write_le((end if end is not None else start) - start)
            out += _write_le(0 if col is None else col + 1)
            out += _write_le(0 if end_col is None else end_col + 1)
        line = start
    return bytes(out)


def _write_le(value: int) -> bytes:
    out = []
    while value >= 64:
        out.append(64 | (value & 63))
        value >>= 6
    out.append(value)
    return bytes(out)


def _write_svarint(value: int) -> bytes:
    return _write_le((-value << 1) | 1 if value < 0 else value << 1)
