"""The command line.

    python -m cuvil_bc app.py [args]              run app.py accelerated
    python -m cuvil_bc -m package.module [args]   run a module accelerated, as python -m
    python -m cuvil_bc report app.py [args]       run it, then print what was compiled
    python -m cuvil_bc report -m package.module [args]
"""

from __future__ import annotations

import atexit
import os
import sys

USAGE = __doc__.split("\n\n", 1)[1]


def main() -> None:
    args = sys.argv[1:]
    report = False
    if len(args) >= 2 and args[0] == "report":
        report = True
        args = args[1:]
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        sys.stderr.write("usage:\n" + USAGE)
        raise SystemExit(2)
    from . import install
    from .runner import cannot_open, module_option, run_module, run_path

    path0 = None if sys.flags.safe_path else (sys.path[0] if sys.path else None)
    module = module_option(args)
    if module is not None:
        install(program_dir=os.getcwd())
        if report:
            _print_report_at_exit()
        # `python -m cuvil_bc` already put the working directory first on sys.path.
        run_module(module[0], module[1], replaced_path0=None)
        return
    script = args[0]
    if not os.path.isfile(script):
        cannot_open(script)
    install(program_dir=os.path.dirname(os.path.abspath(script)))
    if report:
        _print_report_at_exit()
    run_path(script, args, replaced_path0=path0)


def _print_report_at_exit() -> None:
    def _print() -> None:
        from .report import collect, table

        sys.stdout.flush()
        sys.stderr.write("\ncuvil_bc report (hottest first)\n")
        table(collect(), sys.stderr)

    atexit.register(_print)
