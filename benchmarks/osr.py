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
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from warm_start import hook_env, timed  # (benchmarks/: the script's own directory)

PROGRAMS = Path(__file__).resolve().parent / "osr_programs"
TARGET = 10.0


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
                seconds, expected = timed([program.name], hook_env(None), PROGRAMS)
                plain.append(seconds)
                report = cache / "report.json"
                env = {**hook_env(cache), "CUVIL_BC_REPORT": str(report)}
                for runs in (cold, warm):
                    seconds, out = timed(["-X", "importhook", "cuvil_bc", program.name], env, PROGRAMS)
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
