"""The meta-path finder that puts the rewrite between a module's source and its code.

`HookFinder` sits first on `sys.meta_path` and asks the finders after it for the spec,
so editable installs, zip imports and any other finder keep working. When the spec's
loader is a plain `SourceFileLoader` for a module in scope, it is swapped for a
`HookLoader`: a `SourceFileLoader` subclass (so `isinstance` checks and `inspect` still
work) whose `get_code` returns the counted code. Everything else is returned untouched.
`get_code` is also what `runpy` calls, so ``-m module`` runs counted code too.
"""

from __future__ import annotations

import _thread
import importlib.machinery
import sys
import types

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any

from . import cache, scope
from .hot import RUNTIME
from .rewrite import instrument_module


#: While a `HookLoader` has CPython load a module's code, on this thread: the path of
#: the module's normal .pyc, and the header of the .pyc that CPython last read or wrote
#: there, which is the one the code comes from (the basis of the rewrite's cache file).
_PYC = _thread._local()  # (`threading` would cost each hooked program ~1 ms to import)


class HookLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname: str) -> types.CodeType | None:
        source = self.get_filename(fullname)
        caching = RUNTIME.options.cache
        if caching:
            hit = _from_cache(source, fullname)
            if hit is not None:  # the rewrite is cached: the normal .pyc is not needed
                return hit
        _PYC.path, _PYC.header = (cache.pyc_path(source) if caching else None), None
        try:
            code = super().get_code(fullname)
            basis: bytes | None = _PYC.header
        finally:
            _PYC.path = _PYC.header = None
        if code is None:
            return None
        try:
            return _rewrite(source, fullname, code, basis)
        except Exception as e:  # noqa: BLE001 (never break an import)
            RUNTIME.warn(f"{fullname} runs without acceleration: {type(e).__name__}: {e}")
            return code

    # CPython's get_code reads and writes the .pyc through these two.

    def get_data(self, path: str) -> bytes:
        data: bytes = super().get_data(path)
        if path == getattr(_PYC, "path", None):
            _PYC.header = data[:16]
        return data

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        if path == getattr(_PYC, "path", None):
            _PYC.header = bytes(data[:16])
        super().set_data(path, data, _mode=_mode)


def rewritten(source: str, module: str, code: types.CodeType, source_bytes: bytes) -> types.CodeType:
    """The code of a script, compiled from `source_bytes` (read from `source`), with its
    candidates counted, from the cache when it holds this source's rewrite."""
    hit = _from_cache(source, module, source_bytes) if RUNTIME.options.cache else None
    if hit is not None:
        return hit
    return _rewrite(source, module, code, cache.script_basis(source_bytes))


def _from_cache(source: str, module: str, source_bytes: bytes | None = None) -> types.CodeType | None:
    """The counted code of `source` from the cache, or None. A cached rewrite that cannot
    be set up is a miss too: the caller rebuilds it."""
    try:
        hit = cache.load(source, module, source_bytes)
        if hit is not None:
            return RUNTIME.register(hit[1], source, hit[0])
    except Exception as e:  # noqa: BLE001 (never break an import)
        RUNTIME.warn(f"{module}: ignoring its cached rewrite: {type(e).__name__}: {e}")
    return None


def _rewrite(source: str, module: str, code: types.CodeType, basis: bytes | None) -> types.CodeType:
    """`code` with its candidates counted, cached when `basis` (see `cache.store`) is known."""
    new, fresh = instrument_module(code, module)
    if RUNTIME.options.cache and basis is not None:
        cache.store(source, new, fresh, basis)  # with the counters' placeholders: marshal cannot hold them
    return RUNTIME.register([i for i in fresh if i.candidate], source, new, [i for i in fresh if not i.candidate])


class HookFinder:
    """A meta-path finder; see the module docstring."""

    def __init__(self) -> None:
        self._busy = _thread._local()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec = self._others(fullname, path, target)
        finally:
            self._busy.on = False
        if spec is None:
            return None
        try:
            loader = spec.loader
            if type(loader) is importlib.machinery.SourceFileLoader and scope.in_scope(fullname, spec.origin, RUNTIME.options):
                spec.loader = HookLoader(loader.name, loader.path)
        except Exception as e:  # noqa: BLE001
            RUNTIME.warn(f"{fullname} runs without acceleration: {type(e).__name__}: {e}")
        return spec

    def _others(self, fullname: str, path: Any, target: Any) -> Any:
        for finder in list(sys.meta_path):
            if finder is self or isinstance(finder, HookFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self) -> None:
        pass
