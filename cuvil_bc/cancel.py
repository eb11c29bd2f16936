"""Giving up the hook's compile when the interpreter exits.

The import hook's worker compiles with LLVM outside the GIL; at the program's exit it
must be done before the interpreter tears down what LLVM uses (hook/hot.py
`Runtime._at_exit`). Rather than wait for a whole compile (seconds for a large
function), the exit calls `stop(worker)`, and the compiler calls `check()` between its
phases (front end, lowering, LLVM's optimisation, code generation): the worker's
compile ends at the next one, with `Cancelled`. Only that thread's: a compile on any
other thread (a decorated function called from an atexit handler) goes on as usual.
`Cancelled` is a BaseException, so that no handler of compile errors takes it for a
failure of the function's.
"""

from __future__ import annotations

import _thread


class Cancelled(BaseException):
    """A compile given up because the interpreter is exiting."""


_stopped: set[int] = set()


def stop(thread: int) -> None:
    """The compile on `thread` (an identifier, `_thread.get_ident()`) goes no further
    than its current phase, from now on."""
    _stopped.add(thread)


def check() -> None:
    """Raise `Cancelled` on a thread that `stop` named."""
    if _stopped and _thread.get_ident() in _stopped:
        raise Cancelled()
