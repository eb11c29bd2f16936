"""The import hook: unmodified programs get native code for their hot numeric functions.

    python -X importhook cuvil_bc app.py [args]     (or -X importhook=cuvil_bc app.py)
    python -X importhook cuvil_bc -m package.module [args]
    python -m cuvil_bc app.py [args]                (or -m cuvil_bc -m package.module)
    cuvil_bc.install(include=..., exclude=...)      (from code; cuvil_bc.uninstall())

Modules: `startup` (command-line activation, from the .pth file), `runner` (running
the program as ``__main__``), `finder` (the meta-path finder and loader), `scope` (which
modules), `rewrite` (counting candidates), `cache` (rewritten modules on disk), `hot`
(counters, compiling hot functions, trampolines), `cost` (timing new native functions
against their code as written), `report` and `htmlview` (CUVIL_BC_REPORT and
``python -m cuvil_bc report [--html]``), `options` (every setting and environment
variable).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Iterable

from . import options as _options
from . import scope
from .finder import HookFinder
from .hot import RUNTIME

__all__ = ["install", "uninstall", "installed"]


def install(include: Iterable[str] | str | None = None, exclude: Iterable[str] | str | None = None, *, program_dir: str | None = None) -> None:
    """Rewrite modules imported from now on so that their hot functions turn native.

    `include` and `exclude` are module-name patterns (see `hook/scope.py`); settings
    also come from `[tool.cuvil_bc]` in pyproject.toml and the CUVIL_BC_* environment
    variables (`hook/options.py`). Installing again replaces the settings.
    """
    opts = _options.load(
        program_dir,
        include=None if include is None else (include if isinstance(include, str) else list(include)),
        exclude=None if exclude is None else (exclude if isinstance(exclude, str) else list(exclude)),
    )
    RUNTIME.options = opts
    if program_dir is not None:
        RUNTIME.program_dir = program_dir
    for problem in opts.warnings:
        RUNTIME.warn(problem)
    scope.library_dirs()  # now: computing it inside an import could import sysconfig's data
    if not installed():
        sys.meta_path.insert(0, HookFinder())
    if opts.report:
        from .report import write_at_exit

        write_at_exit(opts.report)


def uninstall() -> None:
    """Stop rewriting imports. Functions already counted or compiled stay as they are."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, HookFinder)]


def installed() -> bool:
    return any(isinstance(f, HookFinder) for f in sys.meta_path)
