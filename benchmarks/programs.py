"""Never slower (issue 16): ordinary object-oriented and list-heavy programs that nobody
tuned the compiler on, run plain and under ``-X importhook cuvil_bc`` side by side.

Each program in ``benchmarks/programs/`` prints a deterministic result. Every round
runs each program once plain and once hooked, alternately, the hooked run on a cold
cache (cuvil_bc's cache files are deleted first) with background compilation and no
report, as users get it by default; one more hooked run, untimed, writes the report
that the last column shows. The hooked output must equal the plain output. Reported per program: the
median and the range over rounds of plain/hooked wall time (> 1 means the hook made it
faster), and the hook's report of what it compiled. Target: every program's median
ratio >= 0.97 (at most 3% slower), and `examples/numeric_app.py` stays >= 5x
(benchmarks/hook.py).

    python benchmarks/programs.py [--rounds N] [--only NAME[,NAME...]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent / "programs"
TARGET = 0.97


def _clean_cache() -> None:
    from cuvil_bc.hook.cache import TAG

    for path in HERE.rglob(f"*.{TAG}.pyc"):
        path.unlink()


def _env(report: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "CUVIL_BC_SYNC", "CUVIL_BC_REPORT"):
        env.pop(name, None)
    if report is not None:
        env["CUVIL_BC_REPORT"] = report
    return env


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=HERE, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{args} failed:\n{done.stderr}")
    return elapsed, done.stdout


def _compiled(report: str) -> str:
    rows = json.loads(Path(report).read_text())["functions"]
    native = sorted(r["qualname"] for r in rows if r["status"] == "native")
    return ", ".join(native) if native else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated program names (without .py)")
    args = parser.parse_args(argv)
    names = sorted(p.stem for p in HERE.glob("*.py"))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.rounds} rounds; ratio = plain time / hooked time")
    print(f"{'program':14} {'plain s':>8} {'hooked s':>9} {'median':>7} {'range':>13}  compiled natively")
    failed = []
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        for name in names:
            plain_times, hooked_times = [], []
            for _ in range(args.rounds):
                t, expected = _timed([f"{name}.py"], _env())
                plain_times.append(t)
                _clean_cache()
                t, got = _timed(["-X", "importhook", "cuvil_bc", f"{name}.py"], _env())
                if got != expected:
                    raise SystemExit(f"{name}: the hooked output differs from plain CPython's")
                hooked_times.append(t)
            _clean_cache()
            if _timed(["-X", "importhook", "cuvil_bc", f"{name}.py"], _env(report))[1] != expected:
                raise SystemExit(f"{name}: the hooked output differs from plain CPython's (with a report)")
            per_round = [p / h for p, h in zip(plain_times, hooked_times)]
            median = statistics.median(per_round)
            ratios.append(median)
            if median < TARGET:
                failed.append(name)
            print(
                f"{name:14} {statistics.median(plain_times):8.3f} {statistics.median(hooked_times):9.3f} "
                f"{median:6.2f}x {min(per_round):5.2f}-{max(per_round):.2f}x  {_compiled(report)}"
            )
    print("TARGETS")
    verdict = "PASS" if not failed else "FAIL"
    print(f"  {verdict}  every program's median plain/hooked >= {TARGET}  (worst {min(ratios):.2f}x; below: {', '.join(failed) or 'none'})")
    print(f"        geomean plain/hooked {statistics.geometric_mean(ratios):.2f}x over {len(ratios)} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
