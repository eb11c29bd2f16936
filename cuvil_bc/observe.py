"""Whether a tracing or profiling tool is watching the program.

Native code has no lines, calls or frames for `sys.settrace`, `sys.setprofile` or
`sys.monitoring` tools (debuggers, coverage.py, profilers) to see. So while any such
tool is active, compiled functions run interpreted: the dispatcher's entry and the
import hook's functions switch back to the original bytecode, and switch again to
native code when the last tool goes away. Nothing is checked per call; instead the
functions that start and stop tools are wrapped, and each `Listener` is told when
the answer changes:

    sys.settrace(tracer)     ->  observed() is True; listeners switch to bytecode
    sys.settrace(None)       ->  observed() is False; listeners switch back

The wrappers call the original functions with the same arguments and return what
they return, so tools behave exactly as without cuvil_bc. Conservatively, a trace
function set in any thread counts for every thread until that thread removes it.
"""

from __future__ import annotations

import _thread
import sys
from _weakref import ref

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol

    class Listener(Protocol):
        def observed_changed(self, observed: bool) -> None: ...


# (`threading` and `weakref` are not imported: the hook installs this at startup, and
# they would cost every hooked program ~1.5 ms. `threading`'s functions are wrapped
# once it is imported, at the next update: a thread that `threading.settrace` applies
# to starts by calling `sys.settrace`, which is wrapped, so the first traced thread
# gets them wrapped, and its hooks for later threads are read from the module.)
_listeners: list["ref[Any]"] = []
_lock = _thread.RLock()
_threads: dict[int, list[bool]] = {}  # thread id -> [has a trace function, has a profile function]
_all = [False, False]  # a trace, a profile function was set for all threads
_installed = False
_state = False


def observed() -> bool:
    """Whether some tool may be watching: compiled functions should run interpreted."""
    if not _installed:
        install()
    return _state


def listen(listener: Listener) -> None:
    """Tell `listener` (held weakly) whenever `observed()` changes."""
    if not _installed:
        install()
    with _lock:
        _listeners[:] = [r for r in _listeners if r() is not None]
        _listeners.append(ref(listener))


def _monitoring_tools() -> bool:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    return any(monitoring.get_tool(i) is not None for i in range(6))


def _update(kind: int | None = None, on: bool = False, scope: str = "thread") -> None:
    """Recompute `observed()`, first noting that the trace (`kind` 0) or profile (1)
    function of this thread or of all threads (`scope`) is about to be set (`on`) or
    removed."""
    global _state
    with _lock:
        alive = sys._current_frames()
        for ident in [i for i in _threads if i not in alive]:
            del _threads[ident]  # a thread that ended
        me = _thread.get_ident()
        mine = _threads.setdefault(me, [sys.gettrace() is not None, sys.getprofile() is not None])
        if kind is not None:
            if scope == "thread":
                mine[kind] = on
            else:
                _all[kind] = on
                for hooks in _threads.values():
                    hooks[kind] = on
        threading = sys.modules.get("threading")
        if threading is not None:
            _wrap_threading(threading)
        later = threading is not None and (getattr(threading, "_trace_hook", None) is not None or getattr(threading, "_profile_hook", None) is not None)
        now = any(any(h) for h in _threads.values()) or any(_all) or later or _monitoring_tools()
        changed, _state = now != _state, now
        listeners = [r() for r in _listeners] if changed else []
    for listener in listeners:
        if listener is not None:
            listener.observed_changed(now)


def _wrap_setter(owner: Any, name: str, kind: int, scope: str) -> None:
    """Wrap sys.settrace-like `owner.name`. The bookkeeping comes first and the real
    call last: once a trace function is set, any Python code of ours would be traced
    (a debugger in step mode would stop in it)."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__cuvil_bc_wrapped__", False):
        return

    def wrapper(function: Any, *args: Any, **kwargs: Any) -> Any:
        _update(kind, function is not None, scope)
        return original(function, *args, **kwargs)

    _install_wrapper(owner, name, original, wrapper)


def _wrap_threading(threading: Any) -> None:
    """Wrap `threading.settrace` and `setprofile` (for threads started later): their
    hooks are read back from the module after each call."""
    for name in ("settrace", "setprofile"):
        _wrap_after(threading, name)


def _wrap_after(owner: Any, name: str) -> None:
    """Wrap a function that starts or stops a tool without tracing this thread (of
    `sys.monitoring`, or `threading.settrace`): the bookkeeping after the call (a tool
    is registered before it asks for events, so none is delivered to it yet)."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__cuvil_bc_wrapped__", False):
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        finally:
            _update()

    _install_wrapper(owner, name, original, wrapper)


def _install_wrapper(owner: Any, name: str, original: Any, wrapper: Any) -> None:
    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__qualname__ = getattr(original, "__qualname__", name)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    wrapper.__cuvil_bc_wrapped__ = True
    setattr(owner, name, wrapper)


def install() -> None:
    """Wrap the functions that start and stop tools (once), and note any tool that is
    already active (`python -m pdb`, coverage started before cuvil_bc)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        for kind, what in enumerate(("trace", "profile")):
            _wrap_setter(sys, f"set{what}", kind, "thread")
            _wrap_setter(sys, f"_set{what}allthreads", kind, "all")  # 3.12+, for threading's
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            for name in ("use_tool_id", "free_tool_id", "clear_tool_id", "set_events", "set_local_events"):
                _wrap_after(monitoring, name)
    _update()
