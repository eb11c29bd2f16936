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

Each point says how to rebuild every value (`Slot`): from words (ints, floats, bools,
NumPy scalars, tuples and unions of them, a range iterator), from a compile-time
constant, from the call's arguments (arrays), or not at all (an unbound local).
"""

from __future__ import annotations

import threading
import types as pytypes
from dataclasses import dataclass, field
from typing import Any

from .frames import hidden_frames
from .typing.types import (
    BOOL, FLOAT, INT, NONE, NP_BOOL, NP_F64, NP_I64, RANGE_ITER, UNDEF, ArrayType, NpScalar, TupleType, Type,
    UnionType,
)

#: Marks an unbound local in a rebuilt state.
UNBOUND = object()


@dataclass(frozen=True)
class Slot:
    """How to rebuild one value: ``("words", type, first word, owns)``,
    ``("const", value)``, ``("arg", index)`` or ``("unbound",)``. A natively allocated
    array in words comes with a reference that the rebuilt ndarray takes over when
    `owns` (the first slot of each owning value)."""

    kind: str
    arg: Any = None
    offset: int = 0
    owns: bool = False


def words(t: Type) -> int | None:
    """How many words a value of type `t` takes in the resume state (None: it cannot
    be rebuilt from words)."""
    if t in (INT, FLOAT, BOOL) or isinstance(t, NpScalar):
        return 1
    if t in (NONE, UNDEF):
        return 0
    if t == RANGE_ITER:
        return 3  # next value, step, items left
    if isinstance(t, ArrayType):
        return 2 + 2 * t.ndim
    if isinstance(t, TupleType):
        parts = [words(i) for i in t.items]
        return None if None in parts else sum(parts)  # type: ignore[arg-type]
    if isinstance(t, UnionType):
        parts = [words(o) for o in t.options]
        return None if None in parts else 1 + sum(parts)  # type: ignore[arg-type]
    return None


class _Arrays:
    """Rebuilds arrays of one resume state: an argument by its index, native memory as
    one ndarray per allocation (two locals naming one array stay one object)."""

    def __init__(self, args: tuple[Any, ...]) -> None:
        self.args = args
        self.made: dict[int, Any] = {}

    def get(self, w: Any, k: int, t: ArrayType, owns: bool) -> Any:
        from .lower.boxing import argument_array, owned_array
        from .lower.runtime import lib

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


def _rebuild(t: Type, w: Any, k: int, arrays: _Arrays | None = None, owns: bool = False) -> Any:
    import numpy as np

    if t == INT:
        return int(w[k].i)
    if t == FLOAT:
        return float(w[k].d)
    if t == BOOL:
        return w[k].i != 0
    if t == NP_F64:
        return np.float64(w[k].d)
    if t == NP_I64:
        return np.int64(w[k].i)
    if t == NP_BOOL:
        return np.bool_(w[k].i != 0)
    if isinstance(t, NpScalar):  # a narrow dtype
        return getattr(np, t.name)(w[k].d if t.base == FLOAT else w[k].i)
    if t == NONE:
        return None
    if t == UNDEF:
        return UNBOUND
    if isinstance(t, ArrayType):
        assert arrays is not None
        return arrays.get(w, k, t, owns)
    if t == RANGE_ITER:
        cur, step, left = int(w[k].i), int(w[k + 1].i), int(w[k + 2].i)
        # The same items as the native iterator has left (`left` is unsigned there).
        left &= (1 << 64) - 1
        return iter(range(cur, cur + left * step, step))
    if isinstance(t, TupleType):
        out = []
        for item in t.items:
            out.append(_rebuild(item, w, k, arrays, owns))
            k += words(item)  # type: ignore[operator]
        return tuple(out)
    assert isinstance(t, UnionType), t
    tag = int(w[k].i)
    k += 1
    for i, opt in enumerate(t.options):
        if i == tag:
            return _rebuild(opt, w, k, arrays, owns)
        k += words(opt)  # type: ignore[operator]
    raise AssertionError(f"bad union tag {tag} for {t}")


@dataclass(eq=False)
class ResumePoint:
    """Resume `pyfunc` at bytecode byte `offset`: local `names[k]` is rebuilt by
    `slots[k]`, the operand stack (bottom first) by the slots after them."""

    pyfunc: pytypes.FunctionType
    offset: int
    line: int
    names: tuple[str, ...]
    slots: tuple[Slot, ...]
    _functions: dict[tuple[str, ...], pytypes.FunctionType] = field(default_factory=dict)

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
                values.append(_rebuild(slot.arg, w, slot.offset, arrays, slot.owns))
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


_points: list[ResumePoint] = []
_lock = threading.Lock()


def register(point: ResumePoint) -> int:
    """Number `point` for native code to report (1, 2, ...)."""
    with _lock:
        _points.append(point)
        return len(_points)


def point(number: int) -> ResumePoint:
    return _points[number - 1]
