"""Ahead-of-time artifacts: ``python -m cuvil_bc compile PATH... [--signatures-from
report.json] [--cache-dir DIR]``.

Builds the native-code cache (artifacts/) for a program before it runs, so that the
run compiles nothing and, if every hot function is covered, never imports llvmlite.
What to build comes from a report of an earlier run (``CUVIL_BC_REPORT=report.json
python -X importhook cuvil_bc app.py``): each native function's module, name and
signatures. The functions of the report that live under the PATHs (files or
directories) are imported without the hook, as their modules, and compiled for each
signature; artifacts go where the program would look for them (beside the ``.pyc``,
or in ``--cache-dir``/``CUVIL_BC_CACHE_DIR``). Importing a module also builds the
signatures its ``@cuvil_bc.compile(signatures=[...])`` functions declare.

A script's own functions (module ``__main__``) cannot be imported under that name
without running the script: they are listed as skipped, and compiled when the
program runs. The same inputs give the same artifact bytes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import types as pytypes
from typing import Any


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m cuvil_bc compile", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories of the program's modules")
    parser.add_argument("--signatures-from", metavar="REPORT", help="a report (CUVIL_BC_REPORT) of an earlier run")
    parser.add_argument("--cache-dir", metavar="DIR", help="where to write the artifacts (default: beside each .pyc)")
    args = parser.parse_args(argv)
    from . import artifacts

    roots = [os.path.realpath(p) for p in args.paths]
    for path, root in zip(args.paths, roots):
        if not os.path.exists(root):
            parser.error(f"{path}: no such file or directory")
    if args.cache_dir is not None:
        artifacts.set_directory(args.cache_dir)
    artifacts.set_enabled(True)
    sys.dont_write_bytecode = False  # (the point of this command is to write them)
    for root in reversed(roots):
        folder = root if os.path.isdir(root) else os.path.dirname(root)
        if folder not in sys.path:
            sys.path.insert(0, folder)
    rows = _rows(args.signatures_from, roots) if args.signatures_from else []
    built = failed = 0
    for row in rows:
        where = f"{row['module']}.{row['qualname']}"
        fn, why = _function(row)
        if fn is None:
            print(f"skipped {where}: {why}")
            continue
        for signature in row.get("signatures") or ():
            ok, why = _build(fn, signature)
            built += ok
            failed += not ok
            print(f"{'built' if ok else 'failed'} {where} {signature}" + ("" if ok else f": {why}"))
    stored = artifacts.counts["stored"] + artifacts.counts["loaded"]
    print(f"{built} signatures built, {failed} failed; {stored} artifacts in the cache")
    return 1 if failed else 0


def _rows(report: str, roots: list[str]) -> list[dict[str, Any]]:
    """The report's native functions whose source file is under one of `roots`."""
    try:
        with open(report, encoding="utf-8") as f:
            data = json.load(f)
        rows = [r for r in data["functions"] if r.get("status") == "native" and r.get("signatures")]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"cuvil_bc compile: cannot read {report}: {e}") from None
    base = os.path.dirname(os.path.abspath(report))
    chosen = []
    for r in rows:
        candidates = [r["file"]] if os.path.isabs(r["file"]) else [os.path.join(d, r["file"]) for d in (os.getcwd(), base, *roots)]
        files = {os.path.realpath(c) for c in candidates if os.path.isfile(c)}
        if any(f == root or f.startswith(root + os.sep) for f in files for root in roots):
            chosen.append(r)
    return chosen


def _function(row: dict[str, Any]) -> tuple[pytypes.FunctionType | None, str]:
    module, qualname = row["module"], row["qualname"]
    if module == "__main__":
        return None, "a script's own function (it is compiled when the script runs)"
    if "<" in qualname:
        return None, "a nested function or lambda (it is compiled when the program runs)"
    try:
        found: Any = importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 (whatever importing the program's module raises)
        return None, f"importing {module} failed: {type(e).__name__}: {e}"
    for part in qualname.split("."):
        found = getattr(found, part, None)
    found = getattr(found, "py_func", found)  # (a function that cuvil_bc.compile returned)
    if not isinstance(found, pytypes.FunctionType):
        return None, f"{module}.{qualname} is not a function"
    return found, ""


def _build(fn: pytypes.FunctionType, signature: str) -> tuple[bool, str]:
    from .dispatcher import Dispatcher
    from .errors import CompileError

    try:
        dispatcher = Dispatcher(fn, signatures=[signature])
    except (CompileError, ValueError) as e:
        return False, str(e)
    if not dispatcher.signatures:
        return False, "; ".join(dispatcher._failed.values()) or "not compiled"
    return True, ""
