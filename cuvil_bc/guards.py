"""What compiled code assumes of the objects it was compiled against, and how those
objects are found again.

A `Guard` says ``namespace[name] is expected`` (for attributes, ``getattr(obj, name)
is expected``). opt/specialize.py makes them as it binds a function's globals; the
dispatcher tests them before native code runs, and the native-code cache
(artifacts/) stores and rebuilds them. They live apart from the optimiser so that
code loaded from the cache is checked without importing the IR (a millisecond each
module).
"""

from __future__ import annotations

import builtins
import types as pytypes

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Callable

#: What a guard expects of a name that is not bound.
MISSING = object()


class Guard:
    """``namespace[name] is expected`` (or, for attributes, ``getattr(obj, name) is expected``).
    Never changed once made; equal only to itself."""

    __slots__ = ("namespace", "name", "expected", "is_attr")

    def __init__(self, namespace: object, name: str, expected: object, is_attr: bool = False) -> None:
        self.namespace = namespace
        self.name = name
        self.expected = expected
        self.is_attr = is_attr

    def holds(self) -> bool:
        if self.is_attr:
            return getattr(self.namespace, self.name, MISSING) is self.expected
        return self.namespace.get(self.name, MISSING) is self.expected  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"Guard(namespace={self.namespace!r}, name={self.name!r}, expected={self.expected!r}, is_attr={self.is_attr!r})"


def builtins_dict(pyfunc: pytypes.FunctionType) -> dict[str, object]:
    b = pyfunc.__builtins__ if hasattr(pyfunc, "__builtins__") else builtins.__dict__
    return b if isinstance(b, dict) else b.__dict__  # type: ignore[return-value]


def function_guards(pyfunc: pytypes.FunctionType) -> list[Guard]:
    """Guards that the function object itself still has the code that was compiled."""
    return [
        Guard(pyfunc, "__code__", pyfunc.__code__, True),
        Guard(pyfunc, "__defaults__", pyfunc.__defaults__, True),
        Guard(pyfunc, "__kwdefaults__", pyfunc.__kwdefaults__, True),
    ]


def compiled_as(value: object, original: Callable[[object], object]) -> object:
    """What compiled code calls for `value`, a global's value: a function that
    cuvil_bc.compile returned is compiled as the original while it has the code its
    dispatcher gave it, and so is one whose code the import hook replaced
    (`original`, its registry)."""
    dispatcher = getattr(value, "dispatcher", None)
    if isinstance(value, pytypes.FunctionType) and dispatcher is not None and value.__code__ is getattr(dispatcher, "installed_code", None):
        value = dispatcher.py_func
    # (a compiled function whose code someone replaced, as hot-reload tools do, runs
    # that code: it is compiled as it is)
    return original(value)
