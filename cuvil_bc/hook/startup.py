"""Activation from the command line, imported by ``cuvil_bc-hook.pth`` at startup when
any ``-X importhook`` option is given.

* ``python -X importhook cuvil_bc app.py args``: CPython takes ``cuvil_bc`` for the
  script. Before it tries to open it, it asks `sys.path_hooks` whether that path is an
  import location (as for a directory or zip with ``__main__.py``); our path hook says
  yes, so CPython runs module ``__main__`` from it, which is a bootstrap that runs
  ``app.py`` with ``sys.argv = ["app.py", args...]`` (`runner.run_path`).
* ``python -X importhook cuvil_bc -m package.module args``: the same stand-in, whose
  bootstrap runs the module as ``python -m package.module args`` would
  (`runner.run_module`).
* ``python -X importhook=cuvil_bc app.py args``: the same, for the real script path, so
  that the script's own functions are counted too.

In both cases the import hook is installed first. Anything that goes wrong here is a
warning, and the program then runs as it would have without the option.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any

BOOTSTRAP = "import cuvil_bc.hook.startup as _cb_startup; _cb_startup.bootstrap()"


class _MainFinder:
    """The path-entry finder for the stand-in script path: it finds only ``__main__``.

    `argv` is the program's command line after the stand-in: a script and its
    arguments, or ``-m module`` and its arguments."""

    def __init__(self, entry: str, script: str, argv: list[str]) -> None:
        self.entry, self.script, self.argv = entry, script, argv
        self.seen: list[str] = []  # the spellings of `entry` CPython asked about

    def find_spec(self, fullname: str, target: Any = None) -> Any:
        import importlib.util

        if fullname != "__main__":
            return None
        return importlib.util.spec_from_loader("__main__", _MainLoader(self), origin=self.script)  # type: ignore[arg-type]

    def invalidate_caches(self) -> None:
        pass


class _MainLoader:
    def __init__(self, finder: _MainFinder) -> None:
        self.finder = finder

    def get_code(self, fullname: str) -> Any:
        return compile(BOOTSTRAP, "<cuvil_bc>", "exec")

    def is_package(self, fullname: str) -> bool:
        return False

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        exec(self.get_code(module.__name__), module.__dict__)


_pending: _MainFinder | None = None


def bootstrap() -> None:
    """Run by CPython as ``__main__``: run the real script."""
    from .runner import argument_expected, cannot_open, module_option, run_module, run_path

    assert _pending is not None
    # CPython has found __main__: forget the stand-in path entry. It can be a real
    # directory (run from a checkout of cuvil_bc, ./cuvil_bc is the package), whose
    # imports must not keep going to our finder.
    if _path_hook in sys.path_hooks:
        sys.path_hooks.remove(_path_hook)
    for entry in _pending.seen:
        if sys.path_importer_cache.get(entry) is _pending:
            del sys.path_importer_cache[entry]
    if _pending.argv[0].startswith("-m"):
        module = module_option(_pending.argv)
        if module is None:
            argument_expected()
            return
        run_module(module[0], module[1], replaced_path0=_pending.entry)
        return
    if not os.path.isfile(_pending.script):
        cannot_open(_pending.script)
    run_path(_pending.script, _pending.argv, replaced_path0=_pending.entry)


def _path_hook(entry: str) -> _MainFinder:
    # CPython makes the script path absolute without normalising it ("a/../app.py").
    if _pending is not None and os.path.normpath(entry) == _pending.entry:
        _pending.seen.append(entry)
        return _pending
    raise ImportError("not cuvil_bc's stand-in script")


def activate() -> None:
    global _pending
    option = sys._xoptions.get("importhook")
    if option is True and sys.argv[:1] == ["cuvil_bc"]:
        argv = sys.argv[1:]
        if not argv:
            return  # CPython reports the missing script ("can't open file 'cuvil_bc'")
        entry = os.path.abspath("cuvil_bc")
        # A module's program directory is the working directory, as under
        # ``python -m cuvil_bc -m``.
        program_dir = os.getcwd() if argv[0].startswith("-m") else os.path.dirname(os.path.abspath(argv[0]))
    elif option == "cuvil_bc" and sys.argv[:1] not in ([""], ["-c"], ["-m"]) and os.path.isfile(sys.argv[0]):
        argv = list(sys.argv)
        entry = os.path.abspath(sys.argv[0])
        program_dir = os.path.dirname(entry)
    else:
        if option == "cuvil_bc":
            _install_quietly()  # -c, -m or stdin: modules are still counted
        return
    _install_quietly(program_dir=program_dir)
    _pending = _MainFinder(entry, argv[0], argv)
    sys.path_hooks.insert(0, _path_hook)
    sys.path_importer_cache.pop(entry, None)


def _install_quietly(program_dir: str | None = None) -> None:
    from . import install

    install(program_dir=program_dir)


if not getattr(sys, "_cuvil_bc_startup_done", False):  # site may process the .pth twice
    sys._cuvil_bc_startup_done = True  # type: ignore[attr-defined]
    try:
        activate()
    except Exception as e:  # noqa: BLE001
        from ..warn import internal_warning

        internal_warning(f"cuvil_bc: the import hook is off: {type(e).__name__}: {e}", stacklevel=1)
