"""On-stack replacement (issue 19), side by side in one run: programs whose only hot
loop sits in a function called once (benchmarks/osr_programs/, written in different
styles: a while loop in a for loop, a while loop with an inline random generator, a
NumPy sieve, a float integration with an inner sampling loop), each run under plain
CPython, then under ``-X importhook cuvil_bc`` with an empty native-code cache (cold:
the loop's entry is compiled while it runs) and with the cache the cold run left
(warm: the entry is loaded), background compilation as users get it. The runs
alternate for `--rounds` rounds; a program's ratios are the medians of its rounds, and
every run's output must be plain CPython's.

    python benchmarks/osr.py [--rounds N]

Target (issue 19): each program >= 10x plain through on-stack replacement (cold).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "osr_programs"
TARGET = 10.0


def _env(cache: Path | None, report: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "CUVIL_BC_SYNC", "CUVIL_BC_REPORT", "CUVIL_BC_CACHE", "CUVIL_BC_CACHE_DIR", "CUVIL_BC_OSR"):
        env.pop(name, None)
    if cache is not None:
        env["CUVIL_BC_CACHE_DIR"] = str(cache)
    if report is not None:
        env["CUVIL_BC_REPORT"] = str(report)
    return env


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=PROGRAMS, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{args} failed:\n{done.stderr}")
    return elapsed, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    failed = False
    for program in sorted(PROGRAMS.glob("*.py")):
        plain, cold, warm, entries = [], [], [], []
        for _ in range(options.rounds):
            cache = Path(tempfile.mkdtemp(prefix="cuvil_bc-osr-"))
            try:
                # (a pycache of their own too: the hook's rewritten modules start cold)
                shutil.rmtree(PROGRAMS / "__pycache__", ignore_errors=True)
                seconds, expected = _timed([program.name], _env(None))
                plain.append(seconds)
                report = cache / "report.json"
                for runs in (cold, warm):
                    seconds, out = _timed(["-X", "importhook", "cuvil_bc", program.name], _env(cache, report))
                    if out != expected:
                        raise SystemExit(f"{program.name}: the hooked output differs:\n{out}\nplain:\n{expected}")
                    runs.append(seconds)
                    entries.append(sum(r["osr_entries"] for r in json.loads(report.read_text())["functions"]))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        p, c, w = statistics.median(plain), statistics.median(cold), statistics.median(warm)
        verdict = "PASS" if p / c >= TARGET else "FAIL"
        failed |= verdict == "FAIL"
        print(
            f"  {verdict}  {program.stem:10s} plain {p:5.2f} s  cold {c:5.2f} s ({p / c:4.1f}x, target >= {TARGET:.0f}x)"
            f"  warm {w:5.2f} s ({p / w:4.1f}x)  on-stack entries {min(entries)}-{max(entries)}"
        )
        print(f"        rounds: cold {', '.join(f'{p_ / c_:.1f}x' for p_, c_ in zip(plain, cold))}; warm {', '.join(f'{p_ / w_:.1f}x' for p_, w_ in zip(plain, warm))}")
    shutil.rmtree(PROGRAMS / "__pycache__", ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
