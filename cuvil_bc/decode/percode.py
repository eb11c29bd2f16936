"""`per_code`: a cache of what is read from a code object, one entry per code.

Code objects that compare equal may differ in their file and qualified name (two equal
functions of two modules): what is read from one must not be handed out for the other,
or tracebacks and messages name the wrong module. So the key is the code with both.
"""

from __future__ import annotations

import functools
import types

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Callable, TypeVar

    T = TypeVar("T")


def per_code(maxsize: int) -> "Callable[[Callable[[types.CodeType], T]], Callable[[types.CodeType], T]]":
    """Decorate a function of one code object whose result nothing changes: it runs
    once per code (of the last `maxsize`), with its file and qualified name."""

    def decorate(read: "Callable[[types.CodeType], T]") -> "Callable[[types.CodeType], T]":
        @functools.lru_cache(maxsize=maxsize)
        def keyed(code: types.CodeType, filename: str, qualname: str) -> "T":
            return read(code)

        @functools.wraps(read)
        def cached(code: types.CodeType) -> "T":
            return keyed(code, code.co_filename, code.co_qualname)

        return cached

    return decorate
