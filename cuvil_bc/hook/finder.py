"""The meta-path finder that puts the rewrite between a module's source and its code.

`HookFinder` sits first on `sys.meta_path` and asks the finders after it for the spec,
so editable installs, zip imports and any other finder keep working. When the spec's
loader is a plain `SourceFileLoader` for a module in scope, it is swapped for a
`HookLoader`: a `SourceFileLoader` subclass (so `isinstance` checks and `inspect` still
work) whose `get_code` returns the counted code. Everything else is returned untouched.
`get_code` is also what `runpy` calls, so ``-m module`` runs counted code too.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
import types
from typing import Any

from . import cache, scope
from .hot import RUNTIME
from .rewrite import instrument_module


class HookLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname: str) -> types.CodeType | None:
        source = self.get_filename(fullname)
        try:
            hit = cache.load(source) if RUNTIME.options.cache else None
            if hit is not None:  # the rewrite is cached: the normal .pyc is not needed
                RUNTIME.register(hit[1], source)
                return hit[0]
        except Exception as e:  # noqa: BLE001 (never break an import)
            RUNTIME.warn(f"{fullname}: ignoring its cached rewrite: {type(e).__name__}: {e}")
        code = super().get_code(fullname)
        if code is None:
            return None
        try:
            return rewritten(source, fullname, code, cached=False)
        except Exception as e:  # noqa: BLE001 (never break an import)
            RUNTIME.warn(f"{fullname} runs without acceleration: {type(e).__name__}: {e}")
            return code


def rewritten(source: str, module: str, code: types.CodeType, *, cached: bool | None = None) -> types.CodeType:
    """`code` (compiled from `source`) with its candidates counted, from the cache when
    it holds this source's rewrite (`cached=False`: it was just found not to)."""
    options = RUNTIME.options
    hit = cache.load(source) if options.cache and cached is None else None
    if hit is not None:
        new, infos = hit
        RUNTIME.register(infos, source)
        return new
    new, fresh = instrument_module(code, module)
    if options.cache:
        cache.store(source, new, fresh)
    RUNTIME.register([i for i in fresh if i.candidate], source, [i for i in fresh if not i.candidate])
    return new


class HookFinder:
    """A meta-path finder; see the module docstring."""

    def __init__(self) -> None:
        self._busy = threading.local()

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
