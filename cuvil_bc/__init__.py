"""cuvil_bc: compile numeric Python functions to native code with CPython's exact results.

    import cuvil_bc

    @cuvil_bc.compile
    def f(n):
        ...

Importing this package is cheap: nothing heavy (the bytecode decoder, llvmlite) is
imported until the first function is compiled.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

from .abi import VERSION as __version__
from .errors import CompileError

__all__ = ["compile", "install", "uninstall", "CompileError", "__version__"]


def compile(fn: Callable[..., Any] | None = None, *, signatures: list[str] | None = None, strict: bool = False, cache: bool = True) -> Any:
    """Compile a function to native code (see `cuvil_bc.dispatcher.compile`).

    Works as ``@compile``, ``@compile(strict=True, signatures=["(int, float)"])`` and
    ``compile(f)``. Returns a dispatcher that behaves like the function. With `cache`
    (the default) its machine code is stored beside the source's ``.pyc`` and loaded
    by later runs (``CUVIL_BC_CACHE=0`` turns that off for the whole process).
    """
    from .dispatcher import compile as _compile

    return _compile(fn, signatures=signatures, strict=strict, cache=cache)


def install(include: Any = None, exclude: Any = None) -> None:
    """Install the import hook: modules imported from now on get their hot numeric
    functions compiled (see `cuvil_bc.hook`). `include`/`exclude`: module-name patterns."""
    from .hook import install as _install

    _install(include, exclude)


def uninstall() -> None:
    """Remove the import hook (functions already compiled stay compiled)."""
    from .hook import uninstall as _uninstall

    _uninstall()
