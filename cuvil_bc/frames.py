"""Tracebacks through cuvil_bc read as CPython's.

Between a caller and the function it calls, cuvil_bc runs frames of its own: the
dispatcher's generated entry, its slow paths (compiling, deoptimising, interpreting),
the code that resumes the interpreter. An exception the function raises passes
through them, and each would add a traceback entry. Their code is registered in
`OWN_CODE`; the outermost of them (the generated entry, or `hidden_frames` around a
method called directly) removes the leading entries of our own code as the exception
passes (`strip_own_frames`) and re-raises it with a bare ``raise``, which adds no
entry again:

    caller -> f (entry) -> _call_generic -> _interpret -> f      (before)
    caller -> f                                                   (after)
"""

from __future__ import annotations

import functools
import sys
import types
from _weakrefset import WeakSet  # (what `weakref` re-exports: the hook imports `weakref` nowhere else)

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

#: Code of cuvil_bc's own frames between a caller and its function (the generated
#: entries, the dispatcher's slow paths): `strip_own_frames` takes them out of an
#: exception's traceback, so that it reads as CPython's.
OWN_CODE: "WeakSet[types.CodeType]" = WeakSet()


#: The file name of the code cuvil_bc generates (the dispatcher's entries).
OWN_FILENAME = "<cuvil_bc>"


def strip_own_frames(e: BaseException) -> None:
    """Drop the leading traceback entries of our own frames. Called by each of them
    as the exception passes (a bare ``raise`` after it adds no entry again)."""
    tb = e.__traceback__
    while tb is not None and (tb.tb_frame.f_code in OWN_CODE or tb.tb_frame.f_code.co_filename == OWN_FILENAME):
        tb = tb.tb_next
    e.__traceback__ = tb


def _handler_code() -> set[types.CodeType]:
    """The code of the Python signal handlers installed now."""
    from .handlers import python_handlers

    codes = (getattr(getattr(h, "__func__", h), "__code__", None) for h in python_handlers().values())
    return {code for code in codes if code is not None}


def handler_part(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The part of a traceback from its first entry that runs an installed signal
    handler on (None: no handler's)."""
    handlers = _handler_code()
    while tb is not None and tb.tb_frame.f_code not in handlers:
        tb = tb.tb_next
    return tb


def raised_by_program(e: BaseException) -> bool:
    """Whether `e`, caught around cuvil_bc's own work (deciding, compiling), was raised
    by one of the program's signal handlers that ran meanwhile. That work calls none
    of the program's code, so such an exception is the program's to see, not an
    internal error."""
    return handler_part(e.__traceback__) is not None


def unlink_own() -> None:
    """Called by the handler in a compiled function's prefix (fastpath.py): see
    `unlink_prefix`."""
    unlink_prefix(sys._getframe(1))


def unlink_prefix(frame: types.FrameType, prefix: bool = True) -> None:
    """Take the traceback entry of `frame` (whose handler calls this) out of the
    exception being handled, and the entries of our frames after it: the function's
    frame shows again where its body, interpreted, raised (it then runs in another
    frame). Where the exception came from elsewhere (a signal handler's, raised as
    native code returned, before any of the function's code ran again), the entry of a
    `prefix` frame (the function's own code) stays, at the line after its ``def``."""
    e = sys.exc_info()[1]
    tb = e.__traceback__ if e is not None else None
    if tb is None or tb.tb_frame is not frame:
        return
    e.__traceback__ = tb.tb_next  # type: ignore[union-attr]
    strip_own_frames(e)  # type: ignore[arg-type]
    rest = e.__traceback__  # type: ignore[union-attr]
    code = frame.f_code
    if prefix and (rest is None or (rest.tb_frame.f_code.co_qualname, rest.tb_frame.f_code.co_filename) != (code.co_qualname, code.co_filename)):
        e.__traceback__ = types.TracebackType(rest, frame, tb.tb_lasti, code.co_firstlineno + 1)  # type: ignore[union-attr]


def hidden_frames(method: Callable[..., Any]) -> Callable[..., Any]:
    """`method`, whose frame (and this wrapper's) never show in a traceback."""

    @functools.wraps(method)
    def hidden(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except BaseException as e:
            strip_own_frames(e)
            raise

    OWN_CODE.add(hidden.__code__)
    OWN_CODE.add(method.__code__)
    return hidden


_OPTIMIZED = 0x01  # CO_OPTIMIZED: a function's frame, whose locals live in the frame itself
#: 3.11 and 3.12 give `frame.f_locals` of a function's frame as a dict that the frame
#: keeps (the one `locals()` returns), filled with every local when it is read; 3.13's
#: is a view of the frame (PEP 667).
_SNAPSHOTS = sys.version_info < (3, 13)


def local_values(frame: types.FrameType) -> dict[str, object]:
    """A copy of the bound locals of `frame`, a running frame of the program's, read
    leaving nothing behind where that can be done. On 3.11 and 3.12, reading
    `frame.f_locals` fills the frame's own dict, which then keeps every local alive
    until the frame ends: a local the function rebinds was finalized late (a `__del__`
    after the function's later output), found by a helper. Where nothing but the frame
    refers to that dict (the program never called ``locals()``), it is emptied again
    (a tracer's call refills it first, so it loses nothing). Where the program holds
    it, it stays refreshed, as a debugger's read leaves it."""
    d = frame.f_locals
    values = dict(d)
    if _SNAPSHOTS and frame.f_code.co_flags & _OPTIMIZED and sys.getrefcount(d) <= _alone_count():
        d.clear()
    return values


@functools.lru_cache(maxsize=1)
def _alone_count() -> int:
    """`sys.getrefcount` of a function frame's locals dict that only the frame and
    `local_values` refer to (measured once: the frame, the local, the argument)."""

    def probe() -> int:
        d = sys._getframe().f_locals
        return sys.getrefcount(d)

    return probe()
