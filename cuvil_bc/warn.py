"""Reporting an internal error without ever raising.

An internal compiler error makes a function run interpreted, which is always correct;
the report is a RuntimeWarning through `warnings`, so that filters and
``catch_warnings`` work as for any warning. But a filter can turn a warning into an
exception (``-W error``, ``filterwarnings("error")``), and a replaced `showwarning` can
raise anything: raised from the hook's trigger or worker, that would end the program
(or the compile thread) for something that is not the program's fault. So when warning
raises, the same text goes straight to stderr, formatted as `warnings` would show it.
"""

from __future__ import annotations

import sys
import warnings


def internal_warning(message: str, stacklevel: int = 2) -> None:
    """`warnings.warn(message, RuntimeWarning)`, attributed to the caller `stacklevel`
    frames up (1: the caller of this function), that never raises."""
    try:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel + 1)
        return
    except Exception:  # noqa: BLE001 (the filter is "error", or showwarning failed)
        pass
    try:
        filename, lineno, line = "sys", 1, None
        frame = sys._getframe(stacklevel)
        filename, lineno = frame.f_code.co_filename, frame.f_lineno or 1
    except ValueError:  # fewer frames than stacklevel: `warnings` then says "sys", 1
        pass
    try:
        text = warnings.formatwarning(message, RuntimeWarning, filename, lineno, line)
    except Exception:  # noqa: BLE001 (linecache failed to read the source)
        text = f"{filename}:{lineno}: RuntimeWarning: {message}\n"
    try:
        stream = sys.stderr
        if stream is not None:
            stream.write(text)
            stream.flush()
    except Exception:  # noqa: BLE001 (no usable stderr: nowhere to report to)
        pass
