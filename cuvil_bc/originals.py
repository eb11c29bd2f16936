"""What to compile for a function whose code the import hook replaced.

When the hook makes a function native, its ``__code__`` becomes a trampoline into a
dispatcher over a copy of the function. Compiled code that calls the function (found
through a module global) must compile the copy, which has the real code; this registry
maps the trampoline to it. The hook fills it; the compiler and the native-code cache
read it (`Compiler.original`), without importing the hook. In a process without the
hook it is empty, and every function stands for itself.
"""

from __future__ import annotations

import types
import weakref

_COPIES: "weakref.WeakKeyDictionary[types.CodeType, types.FunctionType]" = weakref.WeakKeyDictionary()


def register(trampoline: types.CodeType, copy: types.FunctionType) -> None:
    _COPIES[trampoline] = copy


def original(value: object) -> object:
    """The function to compile in place of `value` (`value` itself unless replaced)."""
    if isinstance(value, types.FunctionType) and _COPIES:
        return _COPIES.get(value.__code__, value)
    return value
