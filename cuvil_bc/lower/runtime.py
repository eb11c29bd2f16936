"""The Python side of the C runtime (`csrc/`, built into `cuvil_bc._runtime`).

It hands `cb_math_call` (csrc/entry.c), through which native code computes the `math`
functions whose bits only CPython's own code guarantees, those functions, and
resolves the symbols that compiled code uses (`resolve`). It imports no llvmlite: the
native-code cache loads code without it.
"""

from __future__ import annotations

import ctypes

from .._runtime import ffi, lib  # type: ignore[import-not-found]
from .. import abi

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any

# The C runtime must be the one this Python code was written against (abi.ABI_VERSION).
# A build left over from older sources (an editable install not rebuilt) would be called
# with the wrong signatures, so it is refused: compiling then fails, calls run in CPython.
if lib.cb_abi_version() != abi.ABI_VERSION:
    raise ImportError(
        f"cuvil_bc._runtime is a stale build (ABI {lib.cb_abi_version()}, expected {abi.ABI_VERSION}): "
        "reinstall cuvil_bc (pip install -e .) to rebuild it"
    )

_math: tuple[Any, ...] | None = None


def math_via_cpython() -> tuple[Any, ...]:
    """What ``cb_math_call(fn, n, args, out)`` calls: ``math_via_cpython()[fn](*args[:n])``,
    the primitives' CPYTHON rows in their order. Handed to the C runtime when code
    that calls it is first loaded (`resolve`): the primitives' table takes ~3 ms to
    import, which a function loaded from the cache that needs none of it does not pay."""
    global _math
    if _math is None:
        from ..typing.primitives import VIA_CPYTHON

        _math = tuple(row.obj for row in VIA_CPYTHON)
        abi.runtime_types().set_math_functions(_math)
    return _math


_errstate_watched = False


def watch_numpy_errstate() -> None:
    """Let the C entry and the dispatcher see NumPy's error state (csrc/entry.c,
    underflow_ignored): NumPy 2 keeps it in a context variable. Called once NumPy
    floats are compiled (NumPy is imported by then)."""
    global _errstate_watched
    if _errstate_watched:
        return
    import numpy as np

    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
    except ImportError:  # (not NumPy 2's layout: every call asks NumPy itself)
        import contextvars

        var = contextvars.ContextVar("cuvil_bc.numpy.errstate")  # (never set: always its default)

        def probe() -> bool:
            return False  # (unknown: the calls run interpreted)
    else:

        def probe() -> bool:
            return np.geterr()["under"] == "ignore"

    abi.runtime_types().set_numpy_errstate(var, probe)
    _errstate_watched = True


#: Symbols of the C runtime that compiled code may call.
RUNTIME_SYMBOLS = frozenset(
    {"cb_math_call", "cb_complex_prod", "cb_complex_quot", "cb_complex_abs", "cb_tgamma", "cb_lgamma", "cb_remainder", "cb_hypot", "cb_set_deopt_line", "cb_deopt_slots", "cb_set_deopt_resume", "cb_park_deopt", "cb_alloc", "cb_alloc_zeroed", "cb_signal_generation", "cb_gil_work", "cb_incref", "cb_decref", "cb_new_strides"}
)
_prepared = False


def resolve(name: str) -> int | None:
    """The address of a symbol that compiled code may use and no compiled code
    defines: the runtime's functions, the C library's."""
    if name in RUNTIME_SYMBOLS:
        if name == "cb_math_call":
            math_via_cpython()
        return int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))
    function = c_function(name)
    return ctypes.cast(function, ctypes.c_void_p).value if function is not None else None


def c_function(name: str) -> Any:
    """The C function `name` as the process (or its C math library) provides it, as
    a ctypes function, or None."""
    global _process
    if _process is None:
        _process = ctypes.CDLL(None)
    found = getattr(_process, name, None)
    if found is None:
        from ctypes.util import find_library  # (only here: it imports subprocess, ~15 ms)

        path = find_library("m")
        found = getattr(ctypes.CDLL(path), name, None) if path else None
    return found


_process: Any = None


def prepare() -> None:
    """What native code needs of the process before any of it runs, once: native loops
    watch the program's signal handlers (`watch_signals`). The JIT calls it, and so
    does the native-code cache before it loads code."""
    global _prepared
    if not _prepared:
        watch_signals()
        _prepared = True


def watch_signals() -> None:
    """Let native loops see the signals the program handles in Python (Ctrl-C's
    KeyboardInterrupt, a SIGTERM or SIGALRM handler): the runtime's counting handler
    runs before CPython's for each of them (`cb_watch_signal`), and again after the
    program sets a handler, since CPython then puts its own back in front."""
    # The C module `signal` wraps: its `signal.signal` calls `_signal.signal` by name,
    # so one wrapper here sees both (handlers.py says why not `signal`).
    import _signal

    from ..handlers import python_handlers

    for sig in python_handlers():
        lib.cb_watch_signal(sig)
    original = _signal.signal
    if getattr(original, "__cuvil_bc_wrapped__", False):
        return

    def watched_signal(signalnum: int, handler: object) -> object:
        previous = original(signalnum, handler)  # type: ignore[arg-type]
        if callable(handler):
            lib.cb_watch_signal(int(signalnum))
        return previous

    watched_signal.__doc__ = original.__doc__
    watched_signal.__wrapped__ = original  # type: ignore[attr-defined]
    watched_signal.__cuvil_bc_wrapped__ = True  # type: ignore[attr-defined]
    _signal.signal = watched_signal  # type: ignore[assignment]
