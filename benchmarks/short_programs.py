"""Never slower on short numeric programs (the hook's compile gate, hook/cost.py).

A numeric script whose kernel gets hot in its first milliseconds, at sizes from a
few tens of milliseconds to about a second of plain CPython: plain and under
``-X importhook cuvil_bc`` (cold cache, background compilation, as users run it),
alternately, `--rounds` rounds. The hooked output must equal the plain output.

Reported per size: the median and range of plain/hooked wall time (> 1: the hook made
it faster), and whether the kernel ran natively. Target, as for
`benchmarks/programs.py`: every size's median ratio >= 0.97. The hook compiles only
once the program has run as long as compiling takes (~0.1-0.15 s for this kernel
the first time), so a shorter program pays only the hook's start-up and counting; a
longer one gets faster.

    python benchmarks/short_programs.py [--rounds N]
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

HERE = Path(__file__).resolve().parent / "short"
PROGRAM = "projectile.py"
SCALES = (1, 4, 16, 64)
TARGET = 0.97


def _env(cache: str, report: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "CUVIL_BC_SYNC", "CUVIL_BC_REPORT", "CUVIL_BC_CACHE", "CUVIL_BC_OSR"):
        env.pop(name, None)
    env["CUVIL_BC_CACHE_DIR"] = cache
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.rounds} rounds, {PROGRAM}; ratio = plain time / hooked time")
    print(f"{'scale':>5} {'plain s':>8} {'hooked s':>9} {'median':>7} {'range':>13}  kernel")
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in SCALES:
            plain, hooked = [], []
            for k in range(args.rounds):
                t, expected = _timed([PROGRAM, str(scale)], _env(os.path.join(tmp, f"plain{scale}")))
                plain.append(t)
                cache = os.path.join(tmp, f"cache{scale}.{k}")  # (a new, empty cache: cold)
                t, got = _timed(["-X", "importhook", "cuvil_bc", PROGRAM, str(scale)], _env(cache))
                if got != expected:
                    raise SystemExit(f"scale {scale}: hooked output differs:\n{got}\nplain:\n{expected}")
                hooked.append(t)
            report = os.path.join(tmp, f"report{scale}.json")
            _timed(["-X", "importhook", "cuvil_bc", PROGRAM, str(scale)], _env(os.path.join(tmp, f"last{scale}"), report))
            rows = {r["qualname"]: r for r in json.loads(Path(report).read_text())["functions"]}
            kernel = rows.get("flight", {})
            ran = f"native ({kernel.get('calls_native', 0)} calls)" if kernel.get("status") == "native" else kernel.get("reason", "-")
            ratios = [p / h for p, h in zip(plain, hooked)]
            median = statistics.median(ratios)
            if median < TARGET:
                failed.append(scale)
            print(f"{scale:>5} {statistics.median(plain):8.3f} {statistics.median(hooked):9.3f} {median:6.2f}x"
                  f" {min(ratios):5.2f}-{max(ratios):.2f}x  {ran}")
    print()
    print(f"  {'FAIL' if failed else 'PASS'}  every size's median ratio >= {TARGET}" + (f" (not: scales {failed})" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
