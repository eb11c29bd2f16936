"""The program's signals while the hook works on its thread."""

from __future__ import annotations


class DeferredSignals:
    """While the hook works on the program's thread (deciding, importing the compiler,
    compiling): the signals the program handles in Python stay pending, and their
    handlers run as it ends. A handler's exception raised in the middle of an import
    left the compiler's modules half made, and one raised in the middle of a decision
    was taken for an internal error. (Blocked for this thread only: with other threads,
    a handler may still run meanwhile, and `frames.raised_by_program` tells its
    exception from an internal error.)"""

    def __enter__(self) -> None:
        import _signal  # (handlers.py says why not `signal`)

        from ..handlers import python_handlers

        self.mask = None
        if hasattr(_signal, "pthread_sigmask"):
            # (Ctrl-C's KeyboardInterrupt is not deferred: it is a BaseException, which
            # the hook never takes for an internal error, and it stops the work at once.)
            handled = {n for n, h in python_handlers().items() if h is not _signal.default_int_handler}
            if handled:
                self.mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, handled)

    def __exit__(self, *exc: object) -> None:
        if self.mask is not None:
            import _signal

            _signal.pthread_sigmask(_signal.SIG_SETMASK, self.mask)
