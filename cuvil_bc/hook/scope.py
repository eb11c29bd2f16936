"""Which modules the hook rewrites.

By default: every module whose file is outside the standard library and outside
site-packages (the program's own code), never cuvil_bc itself. `exclude` patterns win
over everything; `include` patterns add modules the default leaves out. Patterns are
`fnmatch` patterns on dotted module names: ``"mylib"``, ``"mylib.*"``.
"""

from __future__ import annotations

import os
import site
import sys
from functools import lru_cache

from .options import Options


def _matches(patterns: tuple[str, ...], name: str) -> bool:
    if not patterns:
        return False
    from fnmatch import fnmatchcase

    return any(fnmatchcase(name, p) for p in patterns)


@lru_cache(maxsize=1)
def library_dirs() -> tuple[str, ...]:
    # The standard library where `sysconfig` puts it (not imported: with its data it
    # costs every hooked program ~1.3 ms), and where this interpreter's modules are.
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    dirs = {os.path.join(p, d, version) for p in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix} for d in {"lib", sys.platlibdir}}
    for module in (os, sys.modules.get("_struct"), sys.modules.get("_json")):
        where = getattr(module, "__file__", None)
        if where:
            dirs.add(os.path.dirname(where))
    for getter in (getattr(site, "getsitepackages", None), getattr(site, "getusersitepackages", None)):
        try:
            found = getter() if getter else []
        except Exception:  # noqa: BLE001 (site functions can fail in embedded interpreters)
            found = []
        dirs.update([found] if isinstance(found, str) else found)
    dirs.update(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))
    dirs.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # cuvil_bc itself
    return tuple(sorted({os.path.join(os.path.realpath(d), "") for d in dirs if d}))


def in_scope(name: str, filename: str | None, options: Options) -> bool:
    if name == "cuvil_bc" or name.startswith("cuvil_bc."):
        return False
    if _matches(options.exclude, name):
        return False
    if _matches(options.include, name):
        return True
    if not filename:
        return False
    return _directory_in_scope(os.path.dirname(filename))


@lru_cache(maxsize=1024)
def _directory_in_scope(directory: str) -> bool:
    real = os.path.join(os.path.realpath(directory), "")
    return not any(real.startswith(d) for d in library_dirs())
