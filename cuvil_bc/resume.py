"""Precise deoptimisation: the interpreter takes a call over where native code stopped.

A compiled function that only reads memory deoptimises by re-running the whole call
in CPython: nothing it did is visible, so that is exact. A function that writes to
arrays cannot be re-run (its writes would be applied twice). Its IR has resume points
(`ir.ops.Checkpoint`): one at the start of every block and one after every write.
When a guard fails, native code stores the values of the locals and of the operand
stack at the last resume point in the thread's resume words (`csrc/runtime.c`) and
returns DEOPT with that point's number. The dispatcher then calls `resume`, which
rebuilds those values as Python objects and runs the function's own bytecode from that
instruction (`decode/resume.py`). Between a resume point and any guard after it nothing
is written, so the interpreter redoes only side-effect-free work, and the final state
and the result or exception are CPython's own.

Code generation describes each point (lower/points.py) and returns the descriptions with
the compiled function; the dispatcher `register`s them before its code can run. Each
point says how to rebuild every value (`Slot`): from words (as its type's model says,
typing/models.py: ints, floats, bools, NumPy scalars, tuples and unions of them, a range
iterator), from a compile-time constant, from the call's arguments (arrays), or not at
all (an unbound local).
"""

from __future__ import annotations

import struct
import threading
import types as pytypes

from .abi import RECORD_WORDS
from .frames import hidden_frames
from .lower.points import ResumeInfo
from .typing.models import UNBOUND, model
from .typing.types import ArrayType

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Mapping


class _Arrays:
    """Rebuilds arrays of one resume state: an argument by its index, native memory as
    one ndarray per allocation (two locals naming one array stay one object)."""

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args
        self.made: dict[int, Any] = {}

    def get(self, w: Any, k: int, t: ArrayType, owns: bool) -> Any:
        from ._runtime import lib  # type: ignore[attr-defined]
        from .boxing import argument_array, owned_array

        meminfo = int(w[k + 1 + 2 * t.ndim].i)
        data = int(w[k].i)
        shape = tuple(int(w[k + 1 + i].i) for i in range(t.ndim))
        strides = tuple(int(w[k + 1 + t.ndim + i].i) for i in range(t.ndim))
        key = (meminfo, data, shape, strides)  # one allocation may back several views
        found = self.made.get(key)
        if found is not None:
            if owns and meminfo > 0:
                lib.cb_decref(meminfo)  # a second owner of the same array
            return found
        if meminfo < 0:
            found = argument_array(self.args, meminfo, data, shape, strides, t.dtype)
        else:
            if not owns:
                lib.cb_incref(meminfo)
            found = owned_array(meminfo, data, shape, strides, t.dtype)
        self.made[key] = found
        return found


class ResumePoint:
    """A resume point (`ResumeInfo`) and the continuations made for it."""

    def __init__(self, info: ResumeInfo) -> None:
        self.pyfunc = info.pyfunc
        self.offset = info.offset
        self.line = info.line
        self.names = info.names
        self.slots = info.slots
        self._functions: dict[tuple[str, ...], pytypes.FunctionType] = {}

    def function(self, bound: tuple[str, ...]) -> pytypes.FunctionType:
        """The continuation taking the values of the `bound` locals and the stack."""
        fn = self._functions.get(bound)
        if fn is None:
            from .decode.resume import resume_code

            code = resume_code(self.pyfunc.__code__, self.offset, bound, len(self.slots) - len(self.names))
            fn = pytypes.FunctionType(code, self.pyfunc.__globals__, self.pyfunc.__name__)
            fn.__qualname__ = self.pyfunc.__qualname__
            self._functions[bound] = fn
        return fn

    @hidden_frames
    def run(self, args: tuple[Any, ...], w: Any) -> Any:
        values = []
        arrays = _Arrays(args)
        for slot in self.slots:
            if slot.kind == "words":
                values.append(model(slot.arg).rebuild(slot.arg, w, slot.offset, arrays, slot.owns))
            elif slot.kind == "const":
                values.append(slot.arg)
            elif slot.kind == "arg":
                values.append(args[slot.arg])
            else:
                values.append(UNBOUND)
        n = len(self.names)
        bound = tuple(name for name, v in zip(self.names, values) if v is not UNBOUND)
        state = tuple(v for v in values[:n] if v is not UNBOUND) + (tuple(reversed(values[n:])),)
        return self.function(bound)(state)


_points: dict[int, ResumePoint] = {}
_lock = threading.Lock()


def register(infos: Mapping[int, ResumeInfo]) -> None:
    """Make the resume points of newly compiled code (by number) known to `point`."""
    with _lock:
        for number, info in infos.items():
            if number not in _points:
                _points[number] = ResumePoint(info)


def point(number: int) -> ResumePoint:
    return _points[number]


def unpark(address: int) -> bytes:
    """The deopt record that a compiled function's cffi entry parked at `address`
    (cb_park_deopt), as bytes, as the C entry gives it; its memory is freed."""
    from ._runtime import ffi, lib  # type: ignore[attr-defined]

    record = ffi.cast("cb_word *", address)
    data = ffi.buffer(record, 8 * (RECORD_WORDS + int(record[2].i)))[:]
    lib.cb_free_record(record)
    return data


def read_record(record: bytes) -> tuple[int, int, Any]:
    """A deopt record's line (with SPECULATIVE_DEOPT), resume point (0: none) and
    resume words (a `cb_word` array of their own)."""
    from ._runtime import ffi  # type: ignore[attr-defined]

    line, number, count = struct.unpack_from(f"{RECORD_WORDS}q", record)
    words = ffi.new("cb_word[]", max(1, count))
    ffi.memmove(words, record[8 * RECORD_WORDS :], 8 * count)
    return line, number, words
