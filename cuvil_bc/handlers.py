"""The program's signal handlers written in Python, as CPython holds them now.

Read through `_signal`, the C module that `signal` wraps (`signal.signal` and
`signal.getsignal` call it by name): importing `signal` costs a millisecond of enums,
which a hooked program or a function loaded from the cache need not pay.
"""

from __future__ import annotations

import _signal


def python_handlers() -> dict[int, object]:
    """Each signal whose handler is a Python callable, and that handler."""
    found = {}
    for sig in _signal.valid_signals():
        try:
            handler = _signal.getsignal(sig)
        except (OSError, ValueError):
            continue
        if callable(handler):
            found[int(sig)] = handler
    return found
