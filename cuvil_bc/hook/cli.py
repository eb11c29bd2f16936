"""The command line.

    python -m cuvil_bc app.py [args]              run app.py accelerated
    python -m cuvil_bc -m package.module [args]   run a module accelerated, as python -m
    python -m cuvil_bc report app.py [args]       run it, then print what was compiled
    python -m cuvil_bc report -m package.module [args]
    python -m cuvil_bc report --html out.html app.py [args]
                                                  also write the sources, coloured by
                                                  what ran each hot line
    python -m cuvil_bc report --html out.html --from report.json
                                                  the same from a CUVIL_BC_REPORT file
    python -m cuvil_bc compile PATH... --signatures-from report.json [--cache-dir DIR]
                                                  build native code ahead of time for
                                                  the signatures a report recorded
                                                  (cuvil_bc/aot.py)
"""

from __future__ import annotations

import atexit
import os
import sys

USAGE = __doc__.split("\n\n", 1)[1]


def main() -> None:
    args = sys.argv[1:]
    report = False
    html_path = None
    if len(args) >= 2 and args[0] == "report":
        report = True
        args = args[1:]
        if len(args) >= 2 and args[0] == "--html":
            html_path, args = args[1], args[2:]
            if len(args) == 2 and args[0] == "--from":
                _html_from(args[1], html_path)
                return
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
            _print_report_at_exit(html_path)
        # `python -m cuvil_bc` already put the working directory first on sys.path.
        run_module(module[0], module[1], replaced_path0=None)
        return
    script = args[0]
    if not os.path.isfile(script):
        cannot_open(script)
    install(program_dir=os.path.dirname(os.path.abspath(script)))
    if report:
        _print_report_at_exit(html_path)
    run_path(script, args, replaced_path0=path0)


def _html_from(report_path: str, html_path: str) -> None:
    import json

    from .report import write_html

    try:
        with open(report_path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"cuvil_bc report: cannot read {report_path}: {e}\n")
        raise SystemExit(2) from None
    write_html(data, html_path)


def _print_report_at_exit(html_path: str | None) -> None:
    def _print() -> None:
        from .report import collect, table, write_html

        sys.stdout.flush()
        data = collect()
        sys.stderr.write("\ncuvil_bc report (hottest first)\n")
        table(data, sys.stderr)
        if html_path is not None:
            write_html(data, html_path)
            sys.stderr.write(f"cuvil_bc report: the sources, coloured, are in {html_path}\n")

    atexit.register(_print)
