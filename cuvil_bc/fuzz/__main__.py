"""``python -m cuvil_bc.fuzz``: differential fuzzing of cuvil_bc against CPython.

    python -m cuvil_bc.fuzz --seconds 300 [--seed S] [--kind scalar|array|both] [--jobs 1]
    python -m cuvil_bc.fuzz --programs 500 --kind array --seed 7
    python -m cuvil_bc.fuzz --replay scalar:7:12      # one program again, minimised

Prints the seed, each distinct finding as a minimised, self-contained reproducer, and
one summary line per kind; exits with status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import os
import sys

from .driver import KINDS, fuzz, generate, run_one


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cuvil_bc.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, help="run for this long (default 60 unless --programs)")
    ap.add_argument("--programs", type=int, help="run this many programs of each kind")
    ap.add_argument("--seed", type=int, help="base seed (default: a fresh one, printed)")
    ap.add_argument("--kind", choices=("scalar", "array", "both"), default="both")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--minimize-seconds", type=float, default=60.0, help="time to minimise each finding")
    ap.add_argument("--no-minimize", action="store_true", help="print findings as found")
    ap.add_argument("--reasons", type=int, default=5, help="print this many top fallback reasons per kind")
    ap.add_argument("--replay", metavar="SEED", help='run one program again, e.g. "scalar:7:12"')
    args = ap.parse_args(argv)

    if args.replay:
        prog = generate(args.replay)
        found = False
        for message in run_one(prog, set(), not args.no_minimize, args.minimize_seconds):
            if message[0] == "result":
                print(f"{prog.seed}: {message[2]}{' (' + message[3] + ')' if message[3] else ''}")
            elif message[0] == "report":
                found = True
                print(message[1].text)
        return 1 if found else 0

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    kinds = KINDS if args.kind == "both" else (args.kind,)
    seconds = args.seconds if (args.seconds is not None or args.programs is not None) else 60.0
    print(f"cuvil_bc.fuzz: seed {seed} ({', '.join(kinds)}; Python {sys.version.split()[0]}; "
          f"reproduce with --seed {seed}{f' --programs {args.programs}' if args.programs else ''})", flush=True)
    tallies = fuzz(kinds, seed, seconds=seconds, programs=args.programs, jobs=max(1, args.jobs),
                   minimize=not args.no_minimize, minimize_seconds=args.minimize_seconds)
    print()
    for t in tallies.values():
        for reason, n in t.reasons.most_common(args.reasons):
            print(f"  {t.kind} fallback x{n}: {reason}")
    for t in tallies.values():
        print(t.summary())
    return 1 if any(t.failures for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
