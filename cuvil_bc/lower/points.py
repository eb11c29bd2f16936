"""Resume points as code generation makes them (see cuvil_bc/resume.py, which runs them).

A function that writes to arrays deoptimises by resuming the interpreter where its
native code stopped. Code generation names each resume point, describes how to
rebuild every value there (`Slot`; the words a value takes: `typing.models.state_words`)
and returns the descriptions by name. The machine code refers to a point's number
through a symbol of that name, which the loader resolves to a number `new_number`
gives (lower/jit.py, or the native-code cache loading code another process made);
the compiled function carries its points by number (`Specialization.resume_points`),
and the dispatcher registers them at call time before the code can run. Nothing here
imports llvmlite.
"""

from __future__ import annotations

import itertools
import types as pytypes

from ..records import record

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any


_numbers = itertools.count(1)  # (0 means "no resume point" in a deopt record)


def new_number() -> int:
    """A number no other resume point of this process has."""
    return next(_numbers)


@record(frozen=True)
class Slot:
    """How to rebuild one value: ``("words", type, first word, owns)``,
    ``("const", value)``, ``("arg", index)`` or ``("unbound",)``. A natively allocated
    array in words comes with a reference that the rebuilt ndarray takes over when
    `owns` (the first slot of each owning value)."""

    kind: str
    arg: Any = None
    offset: int = 0
    owns: bool = False


@record(frozen=True)
class ResumeInfo:
    """Resume `pyfunc` at bytecode byte `offset` (source line `line`): local
    `names[k]` is rebuilt by `slots[k]`, the operand stack (bottom first) by the slots
    after them."""

    pyfunc: pytypes.FunctionType
    offset: int
    line: int
    names: tuple[str, ...]
    slots: tuple[Slot, ...]
