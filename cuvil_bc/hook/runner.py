"""Run the program as ``__main__``, exactly as ``python app.py`` or ``python -m mod`` would,
with its functions counted.

`run_path` rebuilds ``__main__``'s namespace as CPython's own script runner does
(``__spec__`` None, ``__file__`` absolute, a `SourceFileLoader` named ``__main__``), puts
the script's directory first on `sys.path`, compiles the script, counts its
functions, and runs it. `run_module` hands over to `runpy`, as ``python -m`` does. An
uncaught exception is printed through `sys.excepthook` with cuvil_bc's own frames cut
from its traceback, and the process exits with status 1, as CPython's would.
"""

from __future__ import annotations

import importlib.machinery
import os
import runpy
import sys
import types

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

from .finder import rewritten

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_path(path: str, argv: list[str], replaced_path0: str | None) -> None:
    """Run the script at `path` with ``sys.argv = argv``; `replaced_path0` is the
    ``sys.path[0]`` entry that stands where CPython would have put the script's
    directory (None: leave `sys.path` alone)."""
    main = sys.modules["__main__"]
    g = main.__dict__
    builtins_module = sys.modules["builtins"]
    abspath = _absolute(path)
    g.clear()
    g.update(
        __name__="__main__",
        __doc__=None,
        __package__=None,
        __loader__=importlib.machinery.SourceFileLoader("__main__", abspath),
        __spec__=None,
        __annotations__={},
        __builtins__=builtins_module,
        __file__=abspath,
        __cached__=None,
    )
    sys.argv[:] = argv
    if replaced_path0 is not None and sys.path and os.path.normpath(sys.path[0]) == os.path.normpath(replaced_path0):
        if sys.flags.safe_path:
            del sys.path[0]
        else:
            sys.path[0] = os.path.dirname(os.path.realpath(abspath))
    with open(abspath, "rb") as f:
        source = f.read()
    code = compile(source, abspath, "exec", dont_inherit=True)
    try:
        code = rewritten(abspath, "__main__", code, source)
    except Exception as e:  # noqa: BLE001 (run the program unaccelerated rather than not at all)
        from .hot import RUNTIME

        RUNTIME.warn(f"{path} runs without acceleration: {type(e).__name__}: {e}")
    _run_as_program(lambda: exec(code, g))


def _absolute(path: str) -> str:
    """The script path as CPython makes it absolute: joined to the working directory,
    not normalised ("a/../app.py" stays as it is)."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def cannot_open(path: str) -> None:
    """Exit as CPython does when the script does not exist."""
    program = sys.orig_argv[0] if sys.orig_argv else sys.executable
    sys.stderr.write(f"{program}: can't open file {_absolute(path)!r}: [Errno 2] No such file or directory\n")
    raise SystemExit(2)


def run_module(name: str, args: list[str], replaced_path0: str | None) -> None:
    """``python -m name args...``; `replaced_path0` is the ``sys.path[0]`` entry that
    stands where CPython would have put the working directory (None: leave `sys.path`
    alone)."""
    g = sys.modules["__main__"].__dict__
    # `__main__` as CPython hands it to runpy: our own bootstrap's names must not show
    # in the program's globals.
    g.clear()
    g.update(
        __name__="__main__",
        __doc__=None,
        __package__=None,
        __loader__=importlib.machinery.BuiltinImporter,
        __spec__=None,
        __annotations__={},
        __builtins__=sys.modules["builtins"],
    )
    # "-m" until runpy has found the module: a package's __init__ sees it, as under CPython.
    sys.argv[:] = ["-m", *args]
    if replaced_path0 is not None and sys.path and os.path.normpath(sys.path[0]) == os.path.normpath(replaced_path0):
        if sys.flags.safe_path:
            del sys.path[0]
        else:
            sys.path[0] = os.getcwd()
    _run_as_program(lambda: runpy._run_module_as_main(name))  # type: ignore[attr-defined]


def module_option(args: list[str]) -> tuple[str, list[str]] | None:
    """(module, its arguments) when `args` start with CPython's ``-m module`` (or
    ``-mmodule``); None when they do not name a module that way."""
    if not args or not args[0].startswith("-m"):
        return None
    if args[0] != "-m":
        return args[0][2:], args[1:]
    if len(args) < 2:
        return None
    return args[1], args[2:]


def argument_expected() -> None:
    """Exit as CPython does for ``-m`` without a module name."""
    program = sys.orig_argv[0] if sys.orig_argv else sys.executable
    sys.stderr.write(
        "Argument expected for the -m option\n"
        f"usage: {program} [option] ... [-c cmd | -m mod | file | -] [arg] ...\n"
        "Try `python -h' for more information.\n"
    )
    raise SystemExit(2)


def _run_as_program(body: Callable[[], Any]) -> None:
    try:
        body()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        raise  # CPython's exit status for it comes from re-raising (a SIGINT exit)
    except BaseException as e:  # noqa: BLE001
        tb = _program_traceback(e.__traceback__)
        e.__traceback__ = tb  # what CPython's own display prints (3.12+ reads it from e)
        sys.excepthook(type(e), e, tb)
        raise SystemExit(1) from None


def _program_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` from the frame after cuvil_bc's last leading one: what CPython would have
    printed had it run the program itself (``-m`` keeps its two runpy frames)."""
    start = tb
    t = tb
    while t is not None:
        filename = t.tb_frame.f_code.co_filename
        if _is_own(filename):
            start = t.tb_next
        elif not _is_runpy(filename):
            break
        t = t.tb_next
    return start


def _is_own(filename: str) -> bool:
    return filename == "<cuvil_bc>" or os.path.abspath(filename).startswith(_OWN_DIR + os.sep)


def _is_runpy(filename: str) -> bool:
    return filename == "<frozen runpy>" or os.path.basename(filename) == "runpy.py"
