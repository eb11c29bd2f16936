"""The objects that counted code and trampolines call (see decode/counting.py, hook/hot.py).

Counted code reaches them through constants of its own code objects, never through a
name: a function pickled by value (cloudpickle, as joblib and dask do) carries its code
and only the globals that code names, and must run exactly as the original would in a
process without the hook, where no name of ours exists. So each object pickles as a
harmless builtin: a `Counter` as ``NoneType`` (whose truth, all a tick asks for, is
plain True), a `NativeCall` as None (which the trampoline tests for before using it: it then
runs the function's own code).

The hook's cache is marshal, which cannot hold these objects: on disk a counter is the
placeholder ``(abi.MARK, key)``, and `live` swaps in the counters when a module is loaded.
Kept apart from the bytecode machinery, which only a cache miss needs. The names and
sentinels that the written bytecode shares with this code are `cuvil_bc/abi.py`'s.
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Mapping

from .abi import FALL, MARK, Unfinished, runtime_types


#: ``Counter(left, trigger)``: counted code ticks it with ``not counter``, which CPython
#: runs as a C slot (csrc/counter.c): a tick costs a constant load and a few ns. Its
#: `ticks` count every tick; the tick that brings `left` to zero calls `trigger()`.
#: Pickled, a counter is ``NoneType``.
Counter = runtime_types().Counter
#: ``Known(nargs, keys)``: ``args in known`` (the argument itself when `nargs` is 1)
#: is True, and counts in `ticks`, when the arguments' types are one of `keys` (tuples
#: of types): how a compiled function's prefix recognises calls known to fall back
#: (fastpath.py), in one C slot. ``known.set(keys)`` replaces the keys.
Known = runtime_types().Known
#: ``Sampler(cap)``: false on the calls it samples, true on the others (csrc/counter.c):
#: while nothing of a compiled function is native, its prefix tests only the sampled
#: calls, the first after ``sampler.reset()`` and then with random gaps whose mean
#: doubles up to `cap` calls (fastpath.py). `skipped` counts the others.
Sampler = runtime_types().Sampler
#: ``Entry(nparams, fall, deopt, absent)``: the C call path into a compiled function's
#: native signatures (csrc/entry.c): ``entry(*args)`` is the result, or `fall` (a guard
#: fails, no signature matches), or ``deopt((record,))`` where native code handed the
#: call back (`record`: the call's deopt record, as bytes: resume.read_record);
#: ``entry.set(signatures, guards)``, where a guard's expected value `absent` means
#: the name must stay unbound.
Entry = runtime_types().Entry
_function_changed = runtime_types().function_changed
_KEEP = object()


def set_code(func: types.FunctionType, code: types.CodeType, defaults: Any = _KEEP) -> None:
    """``func.__code__ = code`` (and ``func.__defaults__ = defaults`` if given), and the
    function's calls stay specialisable by CPython 3.13's interpreter, as those of a new
    function with that code (csrc/counter.c, function_changed)."""
    func.__code__ = code
    if defaults is not _KEEP:
        func.__defaults__ = defaults
    _function_changed(func)


#: An entry with no signatures: every call falls.
NO_ENTRY = Entry(0, FALL, Unfinished, None)


class NativeCall:
    """What a trampoline calls (decode/counting.py): first ``entry(*args)``, a C entry
    into native code (csrc/entry.c); where it returns `FALL`, ``function(*args)``, and
    where native code handed the call back (another `Unfinished`), ``deopt(args,
    record)``. Set `function`, then `deopt`, then `entry`: a call never sees an entry
    without the others.
    (Attribute loads and plain calls: ~15 ns less a call than a `functools.partial`.)"""

    __slots__ = ("function", "entry", "deopt")

    def __init__(self, function: Any) -> None:
        self.function = function
        self.entry: Any = NO_ENTRY
        self.deopt: Any = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(None), ())  # None: the trampoline then runs the function's own code

    @staticmethod
    def unlink(prefix: bool = True) -> None:
        """Called by a trampoline's handler (and, with `prefix` False, by the hook's
        sampler): `frames.unlink_prefix` for the caller's frame. (Imported here: the
        hook's startup does without frames.py until an exception passes.)"""
        from .frames import unlink_prefix

        unlink_prefix(sys._getframe(1), prefix)

    def __repr__(self) -> str:
        return f"NativeCall({self.function!r})"


def live(code: types.CodeType, counters: Mapping[str, Counter]) -> types.CodeType:
    """`code` and the code objects in it with each placeholder replaced by the counter
    of its key (code objects without counters are kept, not copied). Raises KeyError
    for a placeholder whose key has no counter."""
    if not counters:
        return code  # no candidate: no placeholder either
    return _live(code, counters)


def _live(code: types.CodeType, counters: Mapping[str, Counter]) -> types.CodeType:
    # On every import from the cache: a plain loop, no call per constant.
    consts = code.co_consts
    new: list[object] | None = None
    i = -1
    for c in consts:
        i += 1
        kind = type(c)
        if kind is types.CodeType:
            replaced: object = _live(c, counters)
        elif kind is tuple and len(c) == 2 and c[0] == MARK:
            # KeyError for a placeholder without a counter: the loader then rebuilds the
            # module, or runs it uncounted, where a call of the tuple would fail.
            replaced = counters[c[1]]
        else:
            continue
        if replaced is not c:
            if new is None:
                new = list(consts)
            new[i] = replaced
    return code if new is None else code.replace(co_consts=tuple(new))
