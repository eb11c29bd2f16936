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
import types

EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]
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


def encode(op: int, arg: int, prefixes: int = 0) -> bytes:
    """One instruction's units, with at least `prefixes` ``EXTENDED_ARG`` units, and
    zeroed caches."""
    needed = max(prefixes, (max(arg.bit_length(), 1) - 1) // 8)
    units: list[int] = []
    for n in range(needed, 0, -1):
        units += [EXTENDED_ARG, (arg >> (8 * n)) & 0xFF]
    units += [op, arg & 0xFF]
    return bytes(units) + bytes(2 * caches(op))


class Insert(collections.namedtuple("Insert", "before units position targeted")):
    """Units (bytes) to put before instruction `before` (an index into
    `instructions`), all at `position`; jumps to that instruction land on them when
    `targeted`, and skip them otherwise."""

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
    while True:
        # New offsets: of each instruction's first unit, and where a jump to it lands.
        start: list[int] = []
        landing: list[int] = []
        at = 0
        for n, i in enumerate(ins):
            land = None
            for item in before.get(n, ()):
                if item.targeted and land is None:
                    land = at
                at += len(item.units)
            start.append(at)
            landing.append(at if land is None else land)
            if n not in deleted:
                at += 2 * (prefixes[n] + 1 + caches(i.op))
        end = at
        for n in range(len(ins) - 1, -1, -1):  # a deleted instruction: its successor's landing
            if n in deleted:
                landing[n] = landing[n + 1] if n + 1 < len(ins) else end
        old_start = {i.start: n for n, i in enumerate(ins)}

        def moved(offset: int) -> int:
            return end if offset == len(code.co_code) else landing[old_start[offset]]

        args: dict[int, int] = {}
        grew = False
        for n, i in enumerate(ins):
            if i.target is None or n in deleted:
                continue
            here = 2 * i.prefixes + i.start  # the opcode's own unit
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
        if not grew:
            break
    out = bytearray()
    new_positions: list[Position] = []
    for n, i in enumerate(ins):
        for item in before.get(n, ()):
            out += item.units
            new_positions += [item.position] * (len(item.units) // 2)
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
    assert len(out) == end and len(new_positions) == end // 2
    table = _exceptions(code.co_exceptiontable, lambda unit: moved(2 * unit) // 2)
    return code.replace(
        co_code=bytes(out),
        co_linetable=_locations(new_positions, code.co_firstlineno),
        co_exceptiontable=table,
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
    units: set[int] = set()
    it = iter(code.co_exceptiontable)
    while True:
        try:
            begin, length, _, _ = [_read_be(it) for _ in range(4)]
        except StopIteration:
            return units
        units.update(range(begin, begin + length))


# -- the exception table: (start, length, handler, depth and lasti), big-endian varints -----


def _exceptions(table: bytes, moved: "object") -> bytes:
    entries = []
    it = iter(table)
    while True:
        try:
            fields = [_read_be(it) for _ in range(4)]
        except StopIteration:
            break
        begin, length, handler, depth_lasti = fields
        entries.append((moved(begin), moved(begin + length), moved(handler), depth_lasti))  # type: ignore[operator]
    out = bytearray()
    for begin, finish, handler, depth_lasti in entries:
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
