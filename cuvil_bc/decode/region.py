"""Stack depths of a code object's instructions, and the region of a module-level loop.

Both are read from ``co_code`` with `rawcode` (no `dis`, no bytecode library): the
import hook asks them while it rewrites a module (decode/counting.py), and the
on-stack replacement of a module-level loop asks them again when it builds the loop's
entry (decode/resume.py). The two must agree, so both ask here.

A module-level loop's *region* is everything the outermost statement loop around a
loop jump runs: the instructions between its header and its last jump back, and
those after it that still hold the loop's iterators (3.12 and 3.13 end a ``for`` loop
with ``END_FOR``, which pops them). Its *exits* are the instructions outside the
region that it goes on to, where the stack is empty again (the statement after the
loop, after an ``else:`` of it, or a copy of the module's ``return None``, which
may be inside the loop's span). Names are
what a module-level loop works on: the ones it stores are its *written* names.
"""

from __future__ import annotations

from . import rawcode
from .versions import COMPARE_SHIFT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Sequence

_OPS = rawcode.opcode.opmap
#: Jumps always taken.
UNCONDITIONAL = frozenset(_OPS[n] for n in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT") if n in _OPS)
_ENDS = frozenset(_OPS[n] for n in ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE") if n in _OPS)
#: Jumps that close a loop (not the ``_NO_INTERRUPT`` one of ``yield from`` and ``await``).
LOOP_JUMPS = frozenset(op for op in rawcode._BACKWARD if "NO_INTERRUPT" not in rawcode.opcode.opname[op])
_STORE_NAME = _OPS["STORE_NAME"]
_LOAD_NAME = _OPS["LOAD_NAME"]
_LOAD_CONST = _OPS["LOAD_CONST"]
_RETURN_VALUE = _OPS["RETURN_VALUE"]
_RETURN_CONST = _OPS.get("RETURN_CONST", -1)
#: What a module-level loop's entry cannot do with its names as the entry's locals:
#: delete them, or reach the module's names some other way than by a name.
_NAMELESS = frozenset(_OPS[n] for n in ("DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_GLOBAL", "IMPORT_STAR", "LOAD_LOCALS",
                                        "LOAD_FROM_DICT_OR_GLOBALS", "SETUP_ANNOTATIONS") if n in _OPS)


def stack_depths(code: Any, instrs: Sequence[Any]) -> dict[int, int] | None:
    """The operand stack's depth before each reachable instruction (by index in
    `instrs`), from CPython's own stack effects; None where they do not add up (a
    stack effect not modelled right)."""
    at = {i.start: n for n, i in enumerate(instrs)}
    depth: dict[int, int] = {}
    work = [(0, 0)]
    while work:
        n, d = work.pop()
        while n < len(instrs) and n not in depth:
            depth[n] = d
            i = instrs[n]
            arg = i.arg if i.op >= rawcode.opcode.HAVE_ARGUMENT else None
            if i.target is not None:
                work.append((at[i.target], d + rawcode.opcode.stack_effect(i.op, arg, jump=True)))
                if i.op in UNCONDITIONAL:
                    break
            if i.op in _ENDS:
                break
            d += rawcode.opcode.stack_effect(i.op, arg, jump=False) if i.target is not None else rawcode.opcode.stack_effect(i.op, arg)
            n += 1
    if any(d < 0 for d in depth.values()):
        return None
    return depth


class Region:
    """The region of the outermost module-level loop around a loop jump: its
    instructions (indices, ascending), its exits (indices of the instructions it goes
    on to, ascending), and the names it writes, in the order it first stores them."""

    __slots__ = ("instrs", "exits", "written")

    def __init__(self, instrs: tuple[int, ...], exits: tuple[int, ...], written: tuple[str, ...]) -> None:
        self.instrs, self.exits, self.written = instrs, exits, written


def module_loop(code: Any, instrs: Sequence[Any], depth: dict[int, int], n: int) -> Region | None:
    """The region around the loop jump `instrs[n]` of module-level code (see the module
    docstring), or None where an entry could not stand in for it: a part of it in an
    exception-table range (``try``, ``with``, a comprehension's cleanup), an exit with
    something on the stack, or an instruction that reaches names other than by
    ``LOAD_NAME`` and ``STORE_NAME``."""
    at = {i.start: k for k, i in enumerate(instrs)}
    first, last = at[instrs[n].target], n
    jumps = [(b, at[i.target]) for b, i in enumerate(instrs) if i.op in LOOP_JUMPS]
    grown = True
    while grown:  # loops nest: the outermost that holds the jump, with all its jumps back
        grown = False
        for b, target in jumps:
            if target <= last and b >= first and (target < first or b > last):  # (intervals that meet)
                first, last, grown = min(first, target), max(last, b), True
    covered = rawcode.covered(code)
    inside: set[int] = set()
    exits: set[int] = set()
    work = [n]
    while work:
        k = work.pop()
        if k in inside or k in exits:
            continue
        if k not in depth:
            return None
        if depth[k] == 0 and (not first <= k <= last or _returns(instrs, k)):
            exits.add(k)
            continue
        i = instrs[k]
        if i.op in _NAMELESS or (i.start // 2 + i.prefixes) in covered:
            return None
        inside.add(k)
        if i.target is not None:
            work.append(at[i.target])
        if i.op not in UNCONDITIONAL and i.op not in _ENDS:
            work.append(k + 1)
    if not exits:
        return None  # (a loop that only ends by an exception: nothing to go on to)
    written: dict[str, None] = {}
    for k in sorted(inside):
        if instrs[k].op == _STORE_NAME:
            written.setdefault(code.co_names[instrs[k].arg], None)
    return Region(tuple(sorted(inside)), tuple(sorted(exits)), tuple(written))


def _returns(instrs: Sequence[Any], k: int) -> bool:
    """Whether the module returns from `instrs[k]` on: CPython copies a small block
    that ends the module (``return None``) to where a loop's ``break`` goes, which
    can be inside the loop's span."""
    if instrs[k].op == _RETURN_CONST:
        return True
    return instrs[k].op == _LOAD_CONST and k + 1 < len(instrs) and instrs[k + 1].op == _RETURN_VALUE


_FOR_ITER = _OPS["FOR_ITER"]
_GET_ITER = _OPS["GET_ITER"]
_CALLS = frozenset(_OPS[n] for n in ("CALL",) if n in _OPS)


def over_ranges(code: Any, instrs: Sequence[Any], depth: dict[int, int], region: Region) -> bool:
    """Whether every ``for`` loop of the region (its outermost loop's too) iterates
    over a call of the name ``range``: the iterable's expression, which runs from where
    the stack was as deep as before it up to the ``GET_ITER`` before the loop's
    header, loads ``range`` first and ends with a call. (Only a range iterator can be
    an entry's: a loop over anything else is refused when it gets hot.)"""
    for k in region.instrs:
        if instrs[k].op != _FOR_ITER:
            continue
        g = k - 1
        if g < 0 or instrs[g].op != _GET_ITER or g not in depth:
            return False
        start = g - 1
        while start > 0 and depth.get(start, -1) > depth[g] - 1:
            start -= 1
        loads = [i for i in instrs[start:g] if i.op == _LOAD_NAME]
        if not loads or code.co_names[loads[0].arg] != "range" or instrs[g - 1].op not in _CALLS:
            return False
    return True


#: What leaves the list, dict or set of a display on the stack, for a ``STORE_NAME`` next
#: (``[]``, ``[1, 2]``: ``BUILD_LIST`` then ``LIST_EXTEND``, ``{"a": 1}``).
_DISPLAYS = frozenset(_OPS[n] for n in ("BUILD_LIST", "BUILD_MAP", "BUILD_SET", "BUILD_CONST_KEY_MAP", "LIST_EXTEND", "SET_UPDATE",
                                        "DICT_UPDATE") if n in _OPS)


def uses_containers(code: Any, instrs: Sequence[Any], region: Region) -> bool:
    """Whether the region loads or stores a name that may hold a list, dict or set
    display (``data = []``) there: one that the region binds to a display, or whose
    last binding before the region (in the code's order) is one. Native code takes no
    container, so the loop would be refused when it gets hot, and its counter would
    have cost each of its iterations for nothing: it is not counted at all. (Only
    displays are seen: a container that a call returns is refused when the loop gets
    hot. A name rebound to a number before the loop, ``acc = []`` ... ``acc = 0``,
    keeps its loop counted: the region is the outermost loop, so no later binding
    reaches it.)"""
    first = region.instrs[0]
    inside = set(region.instrs)
    last: dict[str, bool] = {}  # name -> whether its last binding before the region is a display
    displayed: set[str] = set()
    for k in range(1, len(instrs)):
        if instrs[k].op == _STORE_NAME and (k < first or k in inside):
            name, display = code.co_names[instrs[k].arg], instrs[k - 1].op in _DISPLAYS
            if k < first:
                last[name] = display
            elif display:
                displayed.add(name)
    displayed.update(name for name, display in last.items() if display)
    return any(instrs[k].op in (_LOAD_NAME, _STORE_NAME) and code.co_names[instrs[k].arg] in displayed for k in region.instrs)


def read_names(code: Any, instrs: Sequence[Any], region: Region) -> tuple[str, ...]:
    """The names the region loads but never stores (the entry reads them as globals)."""
    written = set(region.written)
    found: dict[str, None] = {}
    for k in region.instrs:
        if instrs[k].op == _LOAD_NAME:
            name = code.co_names[instrs[k].arg]
            if name not in written:
                found.setdefault(name, None)
    return tuple(found)


# -- how far a loop has to go ------------------------------------------------------------

_COMPARE_OP = _OPS["COMPARE_OP"]
_CONDITIONAL = {_OPS[n]: n.endswith("TRUE") for n in _OPS if n.startswith("POP_JUMP") and n.endswith(("_IF_TRUE", "_IF_FALSE"))}
_LOAD_FASTS = frozenset(_OPS[n] for n in ("LOAD_FAST", "LOAD_FAST_CHECK") if n in _OPS)
_LOAD_FAST_PAIR = _OPS.get("LOAD_FAST_LOAD_FAST", -1)
_STORE_LOAD_PAIR = _OPS.get("STORE_FAST_LOAD_FAST", -1)
_LOAD_GLOBAL = _OPS["LOAD_GLOBAL"]
_RETURNS = frozenset({_RETURN_VALUE, _RETURN_CONST})
#: What a `break` may do before it leaves the loop (CPython copies a short `return x` there).
_PLAIN = frozenset({_OPS["NOP"], _LOAD_CONST, _LOAD_NAME, _LOAD_GLOBAL, *_LOAD_FASTS})
#: A comparison and the one that holds when it does not (`not a < b` is `a >= b`).
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def loop_bounds(code: Any, instrs: Sequence[Any], n: int) -> tuple[tuple[tuple[str, object], str, tuple[str, object]], ...]:
    """The comparisons that keep the loop of the jump back `instrs[n]` going: for each
    conditional jump of the loop (between its header and `n`) that leaves it, fed by a
    ``COMPARE_OP`` of two loads, the two operands and the comparison under which the
    loop goes on (`a < b`: it ends once `a` has caught up with `b`). An operand is
    ``("local", name)``, ``("name", name)`` (a global, or a module's name) or
    ``("const", value)``. What the on-stack replacement's cost model measures a
    ``while`` loop's progress by: it has no range iterator to count. None at all
    (``()``) where another test leaves the loop (a `break` on ``==``, on a call's
    result): the comparisons would say how far the loop could go, not how far it
    goes, and a loop that breaks early would pay a compile for nothing."""
    at = {i.start: k for k, i in enumerate(instrs)}
    first = at[instrs[n].target]
    last = max(b for b, i in enumerate(instrs) if i.op in LOOP_JUMPS and at[i.target] == first)  # (`continue` jumps back too)

    def leaves(k: int) -> bool:  # (out of the loop, or to a `break`: a jump out, or a return of a load)
        for k in range(k, min(k + 4, len(instrs))):
            i = instrs[k]
            if not first <= k <= last or i.op in _RETURNS or (i.op in UNCONDITIONAL and not first <= at[i.target] <= last):
                return True
            if i.op not in _PLAIN:
                return False
        return False

    found = []
    for j in range(first, last + 1):
        i = instrs[j]
        if i.op not in _CONDITIONAL:
            continue
        jumps_out, falls_out = leaves(at[i.target]), leaves(j + 1)
        if jumps_out == falls_out:
            continue  # (a test inside the loop, or one whose both ways leave it)
        if j < 2 or instrs[j - 1].op != _COMPARE_OP:
            return ()
        op = rawcode.opcode.cmp_op[instrs[j - 1].arg >> COMPARE_SHIFT]
        operands = _operands(code, instrs, j - 2) if op in _NEGATED else None
        if operands is None:
            return ()  # (a way out that says nothing of how far: `==`, a call, ...)
        # The loop goes on where the jump does not leave it.
        goes_on = op if jumps_out != _CONDITIONAL[i.op] else _NEGATED[op]
        found.append((operands[0], goes_on, operands[1]))
    return tuple(found)


def _operands(code: Any, instrs: Sequence[Any], k: int) -> tuple[tuple[str, object], tuple[str, object]] | None:
    """The two loads that end at `instrs[k]` (one ``LOAD_FAST_LOAD_FAST`` on 3.13)."""
    i = instrs[k]
    if i.op == _LOAD_FAST_PAIR:
        return ("local", code.co_varnames[i.arg >> 4]), ("local", code.co_varnames[i.arg & 15])
    if i.op == _STORE_LOAD_PAIR:  # (3.13's `i += 1` at the loop's end, then its test: `i < n`)
        return None
    right = _operand(code, i)
    left = _operand(code, instrs[k - 1]) if k > 0 else None
    if left is None or right is None:
        return None
    return left, right


def _operand(code: Any, i: Any) -> tuple[str, object] | None:
    if i.op == _STORE_LOAD_PAIR:
        return ("local", code.co_varnames[i.arg & 15])  # (the second half: the load)
    if i.op in _LOAD_FASTS:
        return ("local", code.co_varnames[i.arg])
    if i.op == _LOAD_NAME:
        return ("name", code.co_names[i.arg])
    if i.op == _LOAD_GLOBAL and not i.arg & 1:
        return ("name", code.co_names[i.arg >> 1])
    if i.op == _LOAD_CONST:
        return ("const", code.co_consts[i.arg])
    return None


# -- by the offset of a loop's jump (what hook/osr.py knows) ----------------------------

def module_loop_at(code: Any, offset: int) -> tuple[list[Any], int, Region] | None:
    """`code`'s instructions, the index of its module-level loop jump at byte
    `offset` (of the code as written) and that jump's region (`module_loop`); None
    where it has none."""
    raw = rawcode.instructions(code)
    n = rawcode.index_at(raw, offset)
    depth = stack_depths(code, raw) if n is not None else None
    found = module_loop(code, raw, depth, n) if depth is not None and n is not None else None
    return None if found is None or n is None else (raw, n, found)


def module_loop_names(code: Any, offset: int) -> tuple[tuple[str, ...], tuple[str, ...], int] | None:
    """For the module-level loop jump at byte `offset` of `code` (as written): the
    names its region writes and those it only reads, and its size in instructions;
    None where it has no region."""
    found = module_loop_at(code, offset)
    if found is None:
        return None
    raw, _, region = found
    return region.written, read_names(code, raw, region), len(region.instrs)


def loop_bounds_at(code: Any, offset: int) -> tuple[tuple[tuple[str, object], str, tuple[str, object]], ...]:
    """`loop_bounds` of the loop whose jump back is at byte `offset` of `code`
    (as written)."""
    raw = rawcode.instructions(code)
    n = rawcode.index_at(raw, offset)
    return () if n is None else loop_bounds(code, raw, n)
