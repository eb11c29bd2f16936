"""On-stack replacement: a loop that runs long in its function's first call finishes natively.

Native code starts at a call (the trampoline of hook/hot.py), so a function called once
(a ``main()``, a setup step) would run interpreted to its end. The rewrite therefore
gives each statement loop's jump back a way out (decode/counting.py): the loop's counter
is followed by a jump, taken when its ``enter`` is set, to a stub after the code's end
that asks the function's `Gate` ``gate[(offset, *stack)]``: `offset` is the jump's, in
the code as written, and `stack` the values on the operand stack there (the iterators
of the ``for`` loops around it). The gate answers itself ("not entered": the loop goes
on as the jump would have) or the function's result, which the frame returns.

Entering. The rest of the function is compiled as its own function (`osr_code`): its
parameters are the bound locals and the stack's values, each range iterator passed as
the start, stop and step of the range of items it has left. Native code then runs the
loop and everything after it; where a guard fails, precise deoptimisation hands the
rest to the interpreter (resume.py), as for any compiled call. The result is the
function's own, computed from the same state. A frame is entered only with the
locals and stack types its code was compiled for, and never while a tool observes
(observe.py): otherwise the loop goes on interpreted.

When. The loop counter's trigger in a function's first call (hot.py's `on_hot`) sets
``enter``: the next exit asks the gate, which starts measuring there and asks again
after `TIMING_TICKS` more ticks. It then estimates the loop's remaining interpreted
time (`_remaining`): a tick's time, times the ticks left as the range iterators' items
left tell (at the rate the outermost has been consumed, or by their product), and at
least as long as the loop has run since the trigger (a loop that has run for a while
is taken to run as long again). Only when that is well over what entering costs
(`worth`: loading the compiler, compiling, or loading from the native-code cache) does
it compile, on the worker unless ``sync``; otherwise the counter is re-armed for as
many ticks again and asks again. A program whose loops are short loads nothing. The
option ``osr`` (hook/options.py) can make it enter wherever it can, or never.

Tracebacks. An exception that leaves the entered code passes through the stub's
handler, which asks ``gate[exception]`` (`unlink`): the frame's own traceback entry (at
the loop's jump) and those of our frames are taken out when the interpreted rest of
the function (a frame of the same function) shows where it was raised, so the
traceback reads as CPython's.
"""

from __future__ import annotations

import sys
import time
import types

from _weakref import getweakrefcount

from ..frames import OWN_CODE, handler_part, hidden_frames, local_values, raised_by_program
from ..typing.arguments import may_compile
from .cost import compile_seconds

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any

#: Loop ticks between an exit's first ask and its second, over which a tick's time is measured.
TIMING_TICKS = 1000

#: Loop ticks of a module's code between the gate's answer at an exit and the next
#: ask (`_rearm`), at least.
REARM_TICKS = 10_000

#: Compiled entries a function may have (one per loop jump it was entered at).
MAX_ENTRIES = 3

#: The remaining interpreted time must be this many times what entering costs.
MARGIN = 2.0

_RANGE_ITERATOR = type(iter(range(0)))
_NEWLOCALS = 0x02  # (a module's code has not)


class Entry:
    """The compiled rest of a function from one loop jump, for one set of bound local
    names, stack kinds and argument types."""

    def __init__(self, dispatcher: Any, namespace: dict[str, Any], names: tuple[str, ...], kinds: tuple[str, ...], key: tuple[object, ...],
                 exits: int = 0, written: tuple[str, ...] = ()) -> None:
        self.dispatcher = dispatcher
        self.namespace = namespace  # the globals it was compiled in (a frame of the same code may have others)
        self.names = names
        self.kinds = kinds
        self.key = key
        self.exits = exits  # a module-level loop's: the exits of its region (else 0)
        self.written = written  # and the names it writes (the first of `names`)

    def run(self, args: tuple[Any, ...]) -> Any:
        """Run the entry: a function's result, or for a module-level loop, once its
        names are written back, which exit the stub goes on to (`counting._stub`)."""
        result = self.dispatcher._call_generic(args, {})
        if not self.exits:
            return result
        self.namespace.update(zip(self.written, result[1:]))  # (every name is bound already: the dict keeps its order)
        return tuple(k == result[0] for k in range(self.exits))


class State:
    """A function's on-stack replacement so far (`Record.osr`)."""

    def __init__(self) -> None:
        self.t0 = 0.0  # when its loop counter first triggered
        #: By the offset of a loop's jump: the time, the ticks, the items its range
        #: iterators had left and the gate's time so far when an exit there first
        #: asked (`_remaining`).
        self.first: dict[int, tuple[float, int, tuple[int, ...], float]] = {}
        self.entries: dict[int, Entry] = {}  # by the offset of the loop's jump
        self.refused: dict[int, str] = {}
        self.compiling = False
        self.entered = 0  # frames that left a loop for native code
        self.compile_seconds = 0.0
        self.lengths: dict[int, list[int]] = {}  # the most items seen left, by loop depth (`_remaining`)
        self.cached: dict[int, bool] = {}  # whether the cache holds an offset's entry (`worth`)
        #: Seconds the gate has spent deciding, which the loop's ticks did not (`_remaining`).
        self.spent = 0.0
        self.plain: types.CodeType | None = None  # the function's code as written (`plain_code`)
        #: A module's loops: by the offset of a loop's jump, what its region writes and
        #: reads, and its size (`decode/region.module_loop_names`).
        self.regions: dict[int, tuple[tuple[str, ...], tuple[str, ...], int] | None] = {}
        self.rearmed = False  # a module's counter was re-armed (`_rearm`)
        self.bounds: dict[int, tuple[Any, ...]] = {}  # by the offset of a loop's jump (`_distances`)

    def plain_code(self, counted: types.CodeType) -> types.CodeType:
        """The function's code as written (made once a function, when first needed:
        ~4 us a code unit)."""
        if self.plain is None:
            self.plain = _plain(counted)
        return self.plain


def on_loop_hot(runtime: Any, record: Any) -> None:
    """The loop counter of `record`'s function triggered in its first call: the next
    exit asks the gate."""
    if runtime.options.osr == "off":
        return
    if record.osr is None:
        record.osr = State()
        record.osr.t0 = time.perf_counter()
    elif record.osr.rearmed:  # (a module's next loop: its time starts now)
        record.osr.t0, record.osr.rearmed = time.perf_counter(), False
    record.loop_counter.enter = True


def _rearm(state: State, counter: Any) -> None:
    """A module's loops go on after an exit's answer (an entry that is done, a loop
    left interpreted): its counter triggers again, for the next loop that runs long.
    Less often the longer the module has run (an answer costs a few microseconds)."""
    if counter.left <= 0 and not state.compiling:
        counter.left = max(REARM_TICKS, counter.ticks // 8)
        state.rearmed = True


class _Plan:
    """What a compile of an entry needs, taken from the frame at the exit."""

    def __init__(self, state: State, counted: types.CodeType, namespace: dict[str, Any], offset: int, names: tuple[str, ...],
                 kinds: tuple[str, ...], args: tuple[Any, ...]) -> None:
        self.state, self.counted, self.namespace, self.offset = state, counted, namespace, offset
        self.names, self.kinds, self.args = names, kinds, args
        self.units = len(counted.co_code) // 2  # (the function's size, for the costs of `worth`)
        self.function: types.FunctionType | None = None  # (`_function`)
        self.module = not counted.co_flags & _NEWLOCALS  # a module-level loop's entry
        self.exits = 0  # (a module-level loop's: `_function`)
        self.written: tuple[str, ...] = ()  # (the same)

    @property
    def code(self) -> types.CodeType:
        return self.state.plain_code(self.counted)


@hidden_frames
def ask(runtime: Any, gate: Any, key: Any, frame: types.FrameType) -> Any:
    """The gate's answer to an exit's stub (see the module docstring). Only the
    entered code's own exceptions propagate: an internal error is warned about, and
    the loop goes on interpreted."""
    record = gate.record
    if isinstance(key, BaseException):
        unlink(key, frame)
        return None
    record.loop_counter.enter = False
    from .signals import DeferredSignals

    started = time.perf_counter()
    try:
        with DeferredSignals():  # (not while the entered code runs: it polls for them)
            found = _entry(runtime, record, key, frame)
    except Exception as e:  # noqa: BLE001 (never break the program)
        if raised_by_program(e):
            raise  # (a signal handler's, say: the program's; `unlink` trims the traceback)
        if record.osr is not None:
            record.osr.refused.setdefault(key[0], f"internal error: {type(e).__name__}: {e}")
        runtime.warn(f"{record.info.module}.{record.info.qualname}: internal error in on-stack replacement: {type(e).__name__}: {e}")
        return gate
    finally:
        if record.osr is not None:
            record.osr.spent += time.perf_counter() - started
    module = not frame.f_code.co_flags & _NEWLOCALS
    if found is None:
        if module and record.osr is not None:
            _rearm(record.osr, record.loop_counter)
        return gate
    entry, args = found
    record.osr.entered += 1
    record.status, record.reason = "native", ""
    try:
        return entry.run(args)
    finally:
        if module:
            _rearm(record.osr, record.loop_counter)


def _entry(runtime: Any, record: Any, key: tuple[Any, ...], frame: types.FrameType) -> tuple[Entry, tuple[Any, ...]] | None:
    """The compiled entry that `frame`, at the exit of `key`, is to run, and its
    arguments; None when it goes on interpreted (an entry may be compiled meanwhile)."""
    from .. import observe

    state = record.osr
    if state is None or runtime.closing or runtime.options.osr == "off" or observe.observed():
        return None
    references = _references(key)  # (first: the slice below refers to them too)
    offset, stack = key[0], key[1:]
    counter = record.loop_counter
    if frame.f_code.co_flags & _NEWLOCALS:
        arguments = _arguments(frame, stack, references)
    else:
        arguments = _module_arguments(state, frame, offset, stack, references)
        if arguments is None:  # (not yet: asks again later, `_rearm`)
            return None
    if isinstance(arguments, str):
        state.refused.setdefault(offset, arguments)
        return None
    names, kinds, args, lengths = arguments
    entry = state.entries.get(offset)
    if entry is not None:
        from ..dispatcher import argument_key

        if frame.f_globals is entry.namespace and entry.names == names and entry.kinds == kinds and argument_key(args) == entry.key:
            return entry, args
        return None  # (another frame's types: it goes on interpreted)
    if offset in state.refused or state.compiling or len(state.entries) >= MAX_ENTRIES:
        return None
    if "range" in frame.f_globals or frame.f_builtins.get("range") is not range:
        state.refused[offset] = "a global named range"  # (the entry's prologue calls range)
        return None
    plan = _Plan(state, frame.f_code, frame.f_globals, offset, names, kinds, args)
    if plan.module:
        plan.units = state.regions[offset][2]  # type: ignore[index] (only the loop compiles)
    if runtime.options.osr != "always":
        remaining = _remaining(state, offset, counter.ticks, lengths, _distances(state, frame, offset))
        if remaining is None or not worth(runtime, state, plan, remaining):
            # Asks again once the loop has run as long again (`TIMING_TICKS` at first).
            first = state.first[offset][1]
            counter.left = max(TIMING_TICKS, counter.ticks - first)
            return None
    state.compiling = True
    if not runtime.options.sync and not (runtime.options.cache and _known_cached(state, plan)):
        if not runtime.compiler_loaded:
            # (type inference first: an entry it refuses loads no LLVM, ~45 ms)
            refused = _typing_reason(plan)
            if refused:
                state.compiling = False
                state.refused[offset] = refused
                return None
        runtime.load_compiler()
        runtime.submit(record, lambda: compile_entry(runtime, record, plan), plan.units)
        return None
    # (an entry from the cache loads in milliseconds, and without the compiler: here)
    compile_entry(runtime, record, plan)
    counter.enter = False
    entry = state.entries.get(offset)
    return None if entry is None else (entry, args)


def _remaining(state: State, offset: int, ticks: int, lengths: tuple[int, ...], distances: tuple[float | None, ...] = ()) -> float | None:
    """About how long, interpreted, the loops around the jump at `offset` have left
    (None at the first exit there: the measure starts). A tick's time is measured from
    the first exit; the ticks left are estimated from the range iterators' items left
    (outermost first) in two ways, and the larger is taken: the outermost's items
    times the ticks one of them has taken so far, and the product of the items left at
    each depth (an inner loop at the most it has been seen to have: near its end, it
    still starts again from its full length). And a loop is taken to run at least as
    long again as it has run since its function's loops got hot. The gate's own time
    (`State.spent`: its decisions, the imports of a first look in the cache) counts
    in neither: with it, a function of a few hundred lines took a loop with 30 ms
    left for one with seconds left, and paid a compile for nothing.

    A ``while`` loop has no iterator to count: its `distances` (`_distances`) tell
    how far each comparison that keeps it going has left to go; at the rate they
    have closed since the first exit, the first to close ends the loop. (Without
    them, a loop of seconds ran interpreted until it had run as long as entering
    costs, twice over.)"""
    now = time.perf_counter()
    first = state.first.get(offset)
    if first is None:
        state.first[offset] = (now, ticks, lengths, state.spent, distances)
        return None
    then, ticks0, lengths0, spent0, distances0 = first
    ticks_run = max(1, ticks - ticks0)
    tick_seconds = max(0.0, now - then - (state.spent - spent0)) / ticks_run
    left = 0
    if lengths:
        seen = state.lengths.setdefault(offset, list(lengths))
        product = 1
        for k, n in enumerate(lengths):
            seen[k] = max(seen[k], n)
            product *= max(1, seen[k] if k else n)
        consumed = lengths0[0] - lengths[0] if lengths0 else 0
        # (no outer item done yet: each takes more than the ticks run so far)
        per_item = ticks_run / consumed if consumed > 0 else ticks_run
        left = max(product, int(lengths[0] * per_item))
    closing = [d / ((d0 - d) / ticks_run) for d0, d in zip(distances0, distances) if d0 is not None and d is not None and 0 < d < d0]
    if closing:
        left = max(left, int(min(closing)))
    return max(left * tick_seconds, now - state.t0 - state.spent)


def _distances(state: State, frame: types.FrameType, offset: int) -> tuple[float | None, ...]:
    """How far each comparison that keeps the loop at `offset` going
    (`region.loop_bounds`) is from failing, in the frame now (`b - a` for `a < b`);
    None where an operand is not a number."""
    bounds = state.bounds.get(offset)
    if bounds is None:
        from ..decode.region import loop_bounds_at

        bounds = state.bounds[offset] = loop_bounds_at(state.plain_code(frame.f_code), offset)
    if not bounds:
        return ()
    f_locals, namespace, builtins = local_values(frame), frame.f_globals, frame.f_builtins

    def value(operand: tuple[str, object]) -> object:
        kind, what = operand
        if kind == "const":
            return what
        if kind == "local":
            return f_locals.get(what)  # type: ignore[call-overload]
        return namespace[what] if what in namespace else builtins.get(what)  # type: ignore[operator,call-overload]

    found: list[float | None] = []
    for left, op, right in bounds:
        a, b = value(left), value(right)
        if type(a) not in (int, float) or type(b) not in (int, float):
            found.append(None)
            continue
        try:
            found.append(float(b - a if op in ("<", "<=") else a - b))  # type: ignore[operator]
        except OverflowError:
            found.append(None)
    return tuple(found)


def _references(key: tuple[Any, ...]) -> list[int]:
    """The reference counts of an exit's stack values (`key[1:]`), as the gate gets
    them: compared with `_ALONE`."""
    return [sys.getrefcount(key[k]) for k in range(1, len(key))]


#: What `_references` finds for an iterator that only the frame's stack (here a global)
#: and the exit's key refer to.
_PROBE = iter(range(0))
_ALONE = _references((0, _PROBE))[0]


def _arguments(frame: types.FrameType, stack: tuple[Any, ...], references: list[int]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Any, ...], tuple[int, ...]] | str:
    """The entry's parameters from the frame: the bound locals' names, the stack
    values' kinds, the arguments, and the items each range iterator has left; or why
    there is none. A range iterator is rebuilt from the range it has left, and the
    frame's own never advances again: one that something else refers to too (``for i
    in IT`` over a global) must not be entered."""
    code = frame.f_code
    f_locals = local_values(frame)
    names = tuple(n for n in code.co_varnames if n in f_locals)
    return _with_stack(names, [f_locals[n] for n in names], stack, references, "local")


def _with_stack(names: tuple[str, ...], args: list[Any], stack: tuple[Any, ...], references: list[int],
                kind: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Any, ...], tuple[int, ...]] | str:
    """`_arguments` from the names' values `args` and the stack."""
    from ..decode.counting import RANGE, VALUE

    bad = [(n, v) for n, v in zip(names, args) if not may_compile(v)]
    if bad:
        return f"{kind} {bad[0][0]} of type {type(bad[0][1]).__name__}"
    # (the frame, or the module's dict, and the entry's arguments keep such a value
    # alive until the entry returns: rebound in the loop, CPython would let it go, and
    # a finalizer or weakref callback would run then)
    weak = [n for n, v in zip(names, args) if getweakrefcount(v)]
    if weak:
        return f"{kind} {weak[0]} is referred to weakly"
    kinds = []
    lengths = []
    for value, count in zip(stack, references):
        if type(value) is _RANGE_ITERATOR:
            if count > _ALONE:
                return "a loop over a range iterator that something else refers to"
            _, (rng,), index = value.__reduce__()
            rest = rng[index:] if index else rng
            kinds.append(RANGE)
            args += [rest.start, rest.stop, rest.step]
            lengths.append(len(rest))
        elif may_compile(value):
            kinds.append(VALUE)
            args.append(value)
        else:
            return f"a loop over a value of type {type(value).__name__}"
    return names, tuple(kinds), tuple(args), tuple(lengths)


def _module_arguments(state: State, frame: types.FrameType, offset: int, stack: tuple[Any, ...],
                      references: list[int]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Any, ...], tuple[int, ...]] | str | None:
    """`_arguments` for a module-level loop: its parameters are the names the loop
    writes (decode/resume.py's `module_osr_code`), whose values the module's dict
    holds; None where it cannot be entered yet: a name it writes is not bound yet (the
    entry reads it as a local), or something else could see the module's names while
    native code has them (`_alone`).

    While the entry runs, the names it writes are its locals, and the module's dict
    gets them when it is done (`Entry.run`, or `unlink` as an exception leaves it).
    Nothing else may read them meanwhile: a function the loop calls (`_shared`),
    another thread, or a signal handler."""
    from ..decode.region import module_loop_names

    if offset not in state.regions:
        state.regions[offset] = module_loop_names(state.plain_code(frame.f_code), offset)
    found = state.regions[offset]
    if found is None:
        return "no region the entry can stand in for"
    written, read, _ = found
    namespace = frame.f_globals
    if frame.f_locals is not namespace:
        return "a module run with locals other than its globals"
    unusable = [n for n in read if n in namespace and _unusable(namespace[n])]
    if unusable:  # (said here, type inference would load the front end first: ~50 ms)
        return f"module-level name {unusable[0]} of type {type(namespace[unusable[0]]).__name__}"
    if any(name not in namespace for name in written) or _alone():
        return None
    # (an array the loop reads is passed too: native code takes no array from a global)
    numpy = sys.modules.get("numpy")
    names = written + tuple(n for n in read if numpy is not None and type(namespace.get(n)) is numpy.ndarray)
    shared = _shared(namespace, frame.f_builtins, written, names, read)
    if shared:
        return shared
    return _with_stack(names, [namespace[n] for n in names], stack, references, "module-level name")


_CONTAINERS = (list, dict, set, frozenset, bytearray)
_HEAPTYPE = 1 << 9  # (Py_TPFLAGS_HEAPTYPE: a class made by a `class` statement)


def _unusable(value: object) -> bool:
    """Whether type inference refuses `value` as a global that the loop reads: a
    container, or an instance of a class of the program's."""
    return isinstance(value, _CONTAINERS) or (bool(type(value).__flags__ & _HEAPTYPE) and not isinstance(value, type))


def _alone() -> str:
    """Why something besides the module's frame could look at the module's names
    while a loop's entry runs, or "" when nothing can: another thread (native code
    lets the GIL go), or Python code that the interpreter or a library calls on its
    own in the middle of the loop: a signal handler (it runs where native code
    deoptimises, in the entry's frame, which has the names), a `gc` callback, a
    replaced `warnings.showwarning` or `sys.unraisablehook`, a NumPy error callback
    (`numpy.seterrcall`). (An audit hook cannot be seen; it is not looked for.)"""
    if len(sys._current_frames()) > 1:
        return "another thread runs"
    import _signal
    import gc

    from ..handlers import python_handlers

    if any(h is not _signal.default_int_handler for h in python_handlers().values()):
        return "a signal handler in Python"
    if gc.callbacks:
        return "a gc callback"
    warnings = sys.modules.get("warnings")
    if warnings is not None and (getattr(warnings, "showwarning", None) is not getattr(warnings, "_showwarning_orig", None)
                                 or getattr(getattr(warnings, "_showwarnmsg", None), "__module__", None) != "warnings"):
        return "a replaced warnings.showwarning"
    if sys.unraisablehook is not sys.__unraisablehook__:
        return "a replaced sys.unraisablehook"
    numpy = sys.modules.get("numpy")
    if numpy is not None and numpy.geterrcall() is not None:
        return "a NumPy error callback"
    return ""


#: Builtins that see or run code that sees a frame's names other than by name.
_INTROSPECTIVE = frozenset({"globals", "locals", "vars", "dir", "eval", "exec", "compile", "breakpoint", "__import__", "help", "input"})


def _shared(namespace: dict[str, Any], builtins: dict[str, Any], written: tuple[str, ...], names: tuple[str, ...], read: tuple[str, ...]) -> str:
    """Why a module-level loop's entry may not have `names` (those it writes, first)
    as its locals: code it may run reads one it writes, assigns one with ``global``, or
    introspects. That code is the
    module's own (functions and classes defined in it, reached from the names the loop
    reads, and from their code's names in turn); a function of another module would
    have to import the module to see its names, which is not looked for. "" when none
    does. (Over-approximated: any name in the code counts, attributes' too.)"""
    module = namespace.get("__name__")
    names_written, names_local = set(written), set(names)
    seen: set[int] = set()
    work: list[Any] = []
    for name in read:
        if name in _INTROSPECTIVE and name not in namespace:
            return f"a call of {name}()"
        work.append(namespace[name] if name in namespace else builtins.get(name))
    while work:
        value = work.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, types.FunctionType):
            if value.__globals__ is not namespace:
                continue
            used, assigns = _code_names(value.__code__)
            hit = sorted(used & names_written) or sorted(used & _INTROSPECTIVE) or sorted(used & names_local if assigns else ())
            if hit:
                return f"{value.__qualname__} may use the module's {hit[0]}"
            work += [namespace[n] for n in used if n in namespace]
            work += [cell.cell_contents for cell in value.__closure__ or () if _filled(cell)]
            work += [*(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]
        elif isinstance(value, type):
            if value.__module__ == module:
                work += list(vars(value).values())
        elif isinstance(value, (staticmethod, classmethod, types.MethodType)):
            work.append(value.__func__)
        elif isinstance(value, property):
            work += [value.fget, value.fset, value.fdel]
        elif type(value).__module__ == module:
            work.append(type(value))  # (an instance of the module's class: its methods)
    return ""


def _code_names(code: types.CodeType) -> tuple[set[str], bool]:
    """The names `code` and the code nested in it use (globals, attributes), and
    whether any of them assigns or deletes a global."""
    import opcode  # (~0.6 ms, where a module's loop gets this far)

    names = set(code.co_names)
    assigns = not {opcode.opmap["STORE_GLOBAL"], opcode.opmap["DELETE_GLOBAL"]}.isdisjoint(code.co_code[::2])
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            more, more_assigns = _code_names(c)
            names |= more
            assigns = assigns or more_assigns
    return names, assigns


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _plain(code: types.CodeType) -> types.CodeType:
    from ..decode.counting import without_counters

    return without_counters(code)


#: What entering from the native-code cache costs the program, roughly, in seconds
#: (the imports of the loader and of the code's description, the load; measured on a
#: 2-vCPU VM with 3.11-3.13: ~17 ms), and what grows with the function (its code
#: units, as counted): asking the cache (the code as written, the entry's code and its
#: key: ~12 us a unit, 60 ms for a 400-line function). Compiling: `cost.compile_seconds`.
CACHED_COST = 0.03
ASK_UNIT_COST = 12e-6


def worth(runtime: Any, state: State, plan: _Plan, remaining: float) -> bool:
    """Whether `remaining` seconds of the loop, interpreted, repay entering it. Asking
    the cache costs imports and work on the code: only where a load would repay it."""
    if remaining < MARGIN * (CACHED_COST + ASK_UNIT_COST * plan.units):
        return False
    if runtime.options.cache and _known_cached(state, plan):
        return True
    return remaining >= MARGIN * compile_seconds(runtime.compile_rate(), plan.units, runtime.compiler_loaded)


def _known_cached(state: State, plan: _Plan) -> bool:
    """Whether the cache holds the entry of `plan` (asked once an offset)."""
    cached = state.cached.get(plan.offset)
    if cached is None:
        cached = state.cached[plan.offset] = _cached(plan)
    return cached


def _function(plan: _Plan) -> types.FunctionType:
    """The entry of `plan` as a function (made once: asking the cache makes it too)."""
    if plan.function is None:
        from ..decode.resume import module_osr_code, osr_code

        if plan.module:
            code, plan.written, plan.exits = module_osr_code(plan.code, plan.offset, plan.names, plan.kinds)
        else:
            code = osr_code(plan.code, plan.offset, plan.names, plan.kinds)
        plan.function = types.FunctionType(code, plan.namespace, plan.code.co_name)
        plan.function.__qualname__ = plan.code.co_qualname
    return plan.function


def _cached(plan: _Plan) -> bool:
    from .. import artifacts

    if not artifacts.may_hold(plan.counted):
        return False  # (a cold cache: no entry's code and key to make)
    from ..dispatcher import argument_types

    argtypes = argument_types(plan.args)
    if argtypes is None:
        return False
    try:
        fn = _function(plan)
    except ValueError:
        return False
    key = artifacts.key(fn, argtypes, frozenset(), True)
    return key is not None and artifacts.stored(fn, key)


def _typing_reason(plan: _Plan) -> str:
    from .rewrite import typing_reason

    try:
        fn = _function(plan)
    except ValueError as e:  # (a stack that the entry cannot rebuild)
        return str(e)
    return typing_reason(fn, plan.args)


def compile_entry(runtime: Any, record: Any, plan: _Plan) -> None:
    """Compile (or load) the entry of `plan`; once it is ready, the next exit of the
    function's loops asks the gate again."""
    from ..dispatcher import Dispatcher, argument_key

    state = record.osr
    started = time.perf_counter()
    try:
        try:
            fn = _function(plan)
        except ValueError as e:  # (a stack that the entry cannot rebuild)
            state.refused[plan.offset] = str(e)
            return
        dispatcher = Dispatcher(fn, cache=runtime.options.cache)
        key = argument_key(plan.args)
        if dispatcher._compile_for(key, plan.args) is None:
            state.refused[plan.offset] = dispatcher.failure(key) or "not compilable for these locals"
            return
        state.entries[plan.offset] = Entry(dispatcher, plan.namespace, plan.names, plan.kinds, key, plan.exits, plan.written)
        record.loop_counter.enter = True
    finally:
        state.compiling = False
        state.compile_seconds += time.perf_counter() - started


def unlink(e: BaseException, frame: types.FrameType) -> None:
    """Called by an exit's handler in `frame` with the exception leaving it. Where a
    frame of the same function follows (the interpreted rest, at the line that
    raised), the traceback goes on from there: the frame's own entry (at the loop's
    jump) and ours in between go. Otherwise the frame's entry stays, followed by the
    signal handler that raised while the gate worked, if any, as in CPython."""
    tb = e.__traceback__
    if tb is None or tb.tb_frame is not frame:
        return
    code = frame.f_code
    rest = tb.tb_next
    while rest is not None and (rest.tb_frame.f_code.co_qualname, rest.tb_frame.f_code.co_filename) != (code.co_qualname, code.co_filename):
        rest = rest.tb_next
    if rest is not None:
        e.__traceback__ = rest
        if not code.co_flags & _NEWLOCALS:
            # A module's: its names go back to its dict, and the traceback shows the
            # module's own frame (its globals are its locals), at the entry's line.
            _write_back(rest.tb_frame, frame.f_globals)
            e.__traceback__ = types.TracebackType(rest.tb_next, frame, _same_position(rest, frame.f_code, tb.tb_lasti), rest.tb_lineno)
        return
    e.__traceback__ = types.TracebackType(handler_part(tb.tb_next), frame, tb.tb_lasti, tb.tb_lineno)


def _same_position(tb: types.TracebackType, code: types.CodeType, default: int) -> int:
    """The offset in `code` of an instruction at the source position where `tb`
    stands in its own code (the entry's: made from the same instructions, with their
    positions), for a traceback entry that shows `code`'s frame there; `default`
    where none is found."""
    positions = list(tb.tb_frame.f_code.co_positions())
    unit = tb.tb_lasti // 2
    if not 0 <= unit < len(positions):
        return default
    wanted = positions[unit]
    for k, position in enumerate(code.co_positions()):
        if position == wanted:
            return 2 * k
    return default


def _write_back(entered: types.FrameType, namespace: dict[str, Any]) -> None:
    """A module-level loop's entry raised (interpreted, after a deopt): its frame's
    names go to the module's dict, which would have had them in CPython. (Its other
    locals, the entry's own, were deleted by its prologue.)"""
    from ..abi import OWN_NAMES

    for name, value in list(entered.f_locals.items()):
        if name.isidentifier() and not name.startswith(OWN_NAMES) and name in namespace:
            namespace[name] = value


def own_code(gate_type: type) -> None:
    """The gate's frames never show in a traceback."""
    OWN_CODE.add(gate_type.__getitem__.__code__)

