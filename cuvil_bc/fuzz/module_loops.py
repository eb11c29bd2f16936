"""Differential fuzzing of module-level loops (on-stack replacement of a script's own
loops, hook/osr.py) against CPython.

    python -m cuvil_bc.fuzz.module_loops [--seconds 60] [--programs N] [--seed S]

Each random program is a script: names set at module level, then loops over ``range``
and ``while`` loops (nested, with ``break``, ``continue`` and ``else:``), whose bodies
do int and float arithmetic that may grow past 64 bits or divide by zero, and an
``atexit`` handler that prints the names however the script ends. It runs as a
process under plain CPython and under ``-X importhook cuvil_bc`` with on-stack
replacement forced; output, errors and exit status must be the same. Prints each
program that differs, and a summary: how many programs ran, and in how many the
module's code entered native code.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INTS = ("a", "b", "c")
FLOATS = ("x", "y")


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counters = 0

    def int_expr(self, depth: int = 0) -> str:
        r = self.rng
        if depth > 2 or r.random() < 0.35:
            return r.choice([*INTS, *INTS, str(r.randint(-9, 99)), "i"] if self.counters else [*INTS, str(r.randint(-9, 99))])
        op = r.choice(["+", "-", "*", "%", "//", "+", "-", "&", "^"])
        right = self.int_expr(depth + 1)
        if op in ("%", "//") and r.random() < 0.8:
            right = str(r.randint(1, 50))
        return f"({self.int_expr(depth + 1)} {op} {right})"

    def float_expr(self, depth: int = 0) -> str:
        r = self.rng
        if depth > 2 or r.random() < 0.35:
            return r.choice([*FLOATS, f"{r.uniform(-3, 3):.3f}", f"{r.choice(INTS)} * 0.5"])
        op = r.choice(["+", "-", "*", "/", "+"])
        right = self.float_expr(depth + 1)
        if op == "/" and r.random() < 0.8:
            right = f"{r.uniform(0.5, 4):.2f}"
        return f"({self.float_expr(depth + 1)} {op} {right})"

    def cond(self) -> str:
        r = self.rng
        if r.random() < 0.5:
            return f"{self.int_expr(1)} {r.choice(['<', '>', '==', '!=', '<=', '>='])} {self.int_expr(1)}"
        return f"{self.float_expr(1)} {r.choice(['<', '>'])} {self.float_expr(1)}"

    def stmt(self, indent: str, in_loop: bool, depth: int) -> list[str]:
        r = self.rng
        roll = r.random()
        if roll < 0.3:  # (bounded: products of products would grow without end)
            return [f"{indent}{r.choice(INTS)} = ({self.int_expr()}) % {r.choice([97, 65536, 10**6, 2**40])}"]
        if roll < 0.4:
            return [f"{indent}{r.choice(INTS)} {r.choice(['+=', '-='])} {r.choice(['i', str(r.randint(1, 9))]) if self.counters else '1'}"]
        if roll < 0.45:  # past 64 bits, but not without end
            v = r.choice(INTS)
            return [f"{indent}if -10**30 < {v} < 10**30:", f"{indent}    {v} = {v} * {r.randint(2, 9)} + {r.randint(-3, 3)}"]
        if roll < 0.6:
            return [f"{indent}{r.choice(FLOATS)} = {self.float_expr()}"]
        if roll < 0.72:
            lines = [f"{indent}if {self.cond()}:", *self.stmt(indent + "    ", in_loop, depth + 1)]
            if r.random() < 0.4:
                lines += [f"{indent}else:", *self.stmt(indent + "    ", in_loop, depth + 1)]
            return lines
        if roll < 0.8 and in_loop:
            return [f"{indent}if {self.cond()}:", f"{indent}    {r.choice(['break', 'continue'])}"]
        if roll < 0.9 and depth < 1:
            return self.loop(indent, depth + 1)
        return [f"{indent}{r.choice(FLOATS)} = {r.choice(['abs', 'float'])}({self.float_expr(1)})"]

    def loop(self, indent: str, depth: int) -> list[str]:
        r = self.rng
        n = r.choice([3, 10, 30]) if depth else r.choice([3000, 10000, 30000])
        self.counters += 1
        if r.random() < 0.7:
            head = [f"{indent}for i in range({r.choice(['', '1, '])}{n}):"]
            step = []
        else:
            k = f"k{self.counters}"
            head = [f"{indent}{k} = 0", f"{indent}while {k} < {n}:"]
            step = [f"{indent}    {k} += 1"]
        body = step[:]
        for _ in range(r.randint(1, 4)):
            body += self.stmt(indent + "    ", True, depth)
        lines = head + body
        if r.random() < 0.25:
            lines += [f"{indent}else:", *self.stmt(indent + "    ", False, depth)]
        return lines

    def program(self) -> str:
        r = self.rng
        lines = ["import atexit", ""]
        lines += [f"{v} = {r.randint(-5, 50)}" for v in INTS]
        lines += [f"{v} = {r.uniform(-2, 2):.3f}" for v in FLOATS]
        lines.append("i = 0")
        names = ", ".join([*INTS, *FLOATS, "i"])
        lines.append(f"atexit.register(lambda: print('at exit', {names}))")
        for _ in range(r.randint(1, 2)):
            lines += self.loop("", 0)
        lines.append(f"print({names})")
        return "\n".join(lines) + "\n"


def generate(seed: int) -> str:
    return _Gen(random.Random(seed)).program()


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, str, int]:
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    return done.stdout, done.stderr, done.returncode


def check(seed: int, workdir: Path) -> tuple[bool, int, str]:
    """Run program `seed` plain and hooked: (same, the module's entries, the source)."""
    source = generate(seed)
    (workdir / "prog.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUVIL_BC_")}
    plain = _run(["prog.py"], workdir, env)
    report = workdir / "report.json"
    hooked_env = {**env, "CUVIL_BC_OSR": "always", "CUVIL_BC_SYNC": "1", "CUVIL_BC_CACHE": "0", "CUVIL_BC_REPORT": str(report)}
    hooked = _run(["-X", "importhook", "cuvil_bc", "prog.py"], workdir, hooked_env)
    entries = 0
    if report.exists():
        entries = sum(f["osr_entries"] for f in json.loads(report.read_text())["functions"] if f["qualname"] == "<module>")
        report.unlink()
    return plain == hooked, entries, source


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cuvil_bc.fuzz.module_loops", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--programs", type=int)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"module_loops fuzz: seed {seed} (Python {sys.version.split()[0]})", flush=True)
    ran = entered = failed = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory(prefix="cuvil_bc-mfuzz-") as tmp:
        while (ran < args.programs) if args.programs is not None else (time.monotonic() < deadline):
            same, entries, source = check(seed * 100_003 + ran, Path(tmp))
            ran += 1
            entered += entries > 0
            if not same:
                failed += 1
                print(f"--- program {seed * 100_003 + ran - 1} differs:\n{source}", flush=True)
    print(f"module_loops: {ran} programs, {entered} entered natively, {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
