"""Errors that cuvil_bc reports to its users.

`CompileError` is the one public error: it names the source location and the construct
or type that stopped compilation. Inside the compiler, every layer raises it (or its
subclass `Unsupported`) so that the dispatcher can turn it into a fallback with a reason.
"""

from __future__ import annotations


#: Why a function with ``*args``, ``**kwargs`` or keyword-only parameters never compiles
#: (the hook's rewrite and strict mode say it alike).
VARIADIC = "*args, **kwargs or keyword-only parameters"


class CompileError(Exception):
    """A function (or one signature of it) cannot be compiled natively.

    `location` is ``"file:line"`` where known; `construct` says what stopped compilation.
    """

    def __init__(self, construct: str, location: str | None = None) -> None:
        self.construct = construct
        self.location = location
        #: Global guards of the functions being compiled: the failure may depend on them.
        self.guards: list[object] = []
        super().__init__(f"{location}: {construct}" if location else construct)

    def again(self) -> "CompileError":
        """A new error like this one, to raise afresh (without this one's traceback),
        with the same cause."""
        fresh = type(self)(self.construct, self.location)
        fresh.guards = self.guards
        fresh.__cause__ = self.__cause__
        return fresh

    def at(self, location: str | None) -> "CompileError":
        """Return this error with `location` filled in if it had none."""
        if self.location is None and location is not None:
            located = type(self)(self.construct, location)
            located.guards = self.guards
            return located
        return self


class Unsupported(CompileError):
    """The construct is outside what cuvil_bc compiles; the interpreter runs it instead."""
