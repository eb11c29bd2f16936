"""On-stack replacement (issue 19), side by side in one run: programs whose only hot
loop sits in a function called once (benchmarks/osr_programs/, written in different
styles: a while loop in a for loop, a while loop with an inline random generator, a
NumPy sieve, a float integration with an inner sampling loop), each run under plain
CPython, then under ``-X importhook cuvil_bc`` with an empty native-code cache (cold:
the loop's entry is compiled while it runs) and with the cache the cold run left
(warm: the entry is loaded), background compilation as users get it. The runs
alternate for `--rounds` rounds; a program's ratios are the medians of its rounds, and
every run's output must be plain CPython's.

Then the same for scripts whose hot loops sit at the module's top level
(benchmarks/osr_scripts/: a lattice random walk driven by an inline 64-bit LCG
in a while loop, sums of proper divisors with a while loop in a for loop, an explicit
heat equation on NumPy arrays, streaming statistics with math calls): on-stack
replacement enters the loops of the script's own module code. They have no target of
their own; their lines say "info".

    python benchmarks/osr.py [--rounds N] [--only functions|scripts]

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
SCRIPTS = Path(__file__).resolve().parent / "osr_scripts"
TARGET = 10.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("functions", "scripts"))
    options = parser.parse_args()
    failed = False
    groups = {"functions": (PROGRAMS, True, "functions called once:"), "scripts": (SCRIPTS, False, "module-level loops (no target):")}
    for name, (where, targeted, title) in groups.items():
        if options.only in (None, name):
            print(title)
            failed |= _group(where, targeted, options.rounds)
    return 1 if failed else 0


def _group(where: Path, targeted: bool, rounds: int) -> bool:
    """Run the programs of `where` (see the module docstring); whether one failed its target."""
    failed = False
    for program in sorted(where.glob("*.py")):
        plain, cold, warm, entries = [], [], [], []
        for _ in range(rounds):
            cache = Path(tempfile.mkdtemp(prefix="cuvil_bc-osr-"))
            try:
                # (a pycache of their own too: the hook's rewritten modules start cold)
                shutil.rmtree(where / "__pycache__", ignore_errors=True)
                seconds, expected = timed([program.name], hook_env(None), where)
                plain.append(seconds)
                report = cache / "report.json"
                env = {**hook_env(cache), "CUVIL_BC_REPORT": str(report)}
                for runs in (cold, warm):
                    seconds, out = timed(["-X", "importhook", "cuvil_bc", program.name], env, where)
                    if out != expected:
                        raise SystemExit(f"{program.name}: the hooked output differs:\n{out}\nplain:\n{expected}")
                    runs.append(seconds)
                    entries.append(sum(r["osr_entries"] for r in json.loads(report.read_text())["functions"]))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        p, c, w = statistics.median(plain), statistics.median(cold), statistics.median(warm)
        verdict = ("PASS" if p / c >= TARGET else "FAIL") if targeted else "info"
        failed |= verdict == "FAIL"
        print(
            f"  {verdict}  {program.stem:10s} plain {p:5.2f} s  cold {c:5.2f} s ({p / c:4.1f}x{f', target >= {TARGET:.0f}x' if targeted else ''})"
            f"  warm {w:5.2f} s ({p / w:4.1f}x)  on-stack entries {min(entries)}-{max(entries)}"
        )
        print(f"        rounds: cold {', '.join(f'{p_ / c_:.1f}x' for p_, c_ in zip(plain, cold))}; warm {', '.join(f'{p_ / w_:.1f}x' for p_, w_ in zip(plain, warm))}")
    shutil.rmtree(where / "__pycache__", ignore_errors=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
