"""Running many programs: in this process (`run_batch`, for tests) or in worker
processes (`fuzz`, for the command line).

Program `i` of base seed `S` is drawn from `random.Random("<kind>:S:i")`, so a seed
reproduces a run on every Python version. A program whose calls all raise in CPython
exercises little of the compiler (every call goes back to CPython at the first
failing guard), so such a draw is usually replaced by another (`make_program`).

The command line runs programs in worker processes, so that a crash (a segfault in
native code) or a hang is a finding instead of the end of the run: the parent
watches the workers, restarts them, and records the program they were running.
Workers also restart every few hundred programs, because every compilation adds
machine code to the process.
"""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.connection import wait
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .program import Program

KINDS = ("scalar", "array")
#: How often a program whose every call raises in CPython is kept anyway.
KEEP_ALL_RAISING = 0.3
#: Programs a worker runs before it is replaced by a fresh process.
PROGRAMS_PER_WORKER = 250
#: No word from a worker for this long is a hang (minimising sends word as it goes).
HANG_SECONDS = 120.0


def generate(seed: str) -> Program:
    """The program of a seed string such as "scalar:7:12" (or "array:7:3.1")."""
    from . import array_gen, scalar_gen

    kind = seed.split(":", 1)[0]
    gen = scalar_gen.generate if kind == "scalar" else array_gen.generate
    return gen(random.Random(seed), seed)


def make_program(kind: str, base_seed: int, index: int) -> Program:
    """Program `index` of `base_seed`: redrawn (up to 3 times) when every call raises
    in CPython, except in a `KEEP_ALL_RAISING` share of cases."""
    prog = generate(f"{kind}:{base_seed}:{index}")
    for attempt in range(1, 4):
        if not _all_raise(prog) or random.Random(prog.seed + "/keep").random() < KEEP_ALL_RAISING:
            break
        prog = generate(f"{kind}:{base_seed}:{index}.{attempt}")
    return prog


def _all_raise(prog: Program) -> bool:
    import math

    import numpy as np

    from .program import make_args
    from .runner import FILENAME, run

    ns: dict[str, Any] = {"__name__": "cuvil_bc_fuzz_program", "math": math, "np": np}
    try:
        exec(compile(prog.source, FILENAME, "exec"), ns)
        return all(run(ns[prog.entry], make_args(block), False).outcome == "raise" for block in prog.calls)
    except Exception:  # noqa: BLE001 - a program that does not load is reported by the runner
        return False


@dataclass
class Tally:
    """Counts per kind of program."""

    kind: str
    programs: int = 0
    native: int = 0
    fallback: int = 0
    deopt_only: int = 0  # compiled, but every call went back to CPython
    divergences: int = 0
    internal: int = 0
    invalid: int = 0  # generator bugs: the program did not even load
    crashes: int = 0
    hangs: int = 0
    seconds: float = 0.0
    reasons: Counter[str] = field(default_factory=Counter)

    def add(self, status: str, fallback: str) -> None:
        self.programs += 1
        if status == "native":
            self.native += 1
        elif status == "fallback":
            self.fallback += 1
            self.reasons[fallback] += 1
            if fallback == "every call deoptimised":
                self.deopt_only += 1
        elif status == "divergence":
            self.divergences += 1
        elif status == "internal":
            self.internal += 1
        elif status == "invalid":
            self.invalid += 1
        elif status == "crash":
            self.crashes += 1
        elif status == "hang":
            self.hangs += 1

    @property
    def failures(self) -> int:
        return self.divergences + self.internal + self.invalid + self.crashes + self.hangs

    @property
    def native_rate(self) -> float:
        return self.native / self.programs if self.programs else 0.0

    def summary(self) -> str:
        return (f"{self.kind}: {self.programs} programs, {self.native} native, {self.divergences} divergences, "
                f"{self.internal} internal errors ({100 * self.native_rate:.0f}% native; {self.fallback} fell back, "
                f"{self.deopt_only} of them compiled but every call went back to CPython; {self.crashes} crashes, "
                f"{self.hangs} hangs, {self.invalid} generator errors; {self.seconds:.0f} s)")


@dataclass
class Report:
    """A finding as printed: the first program that showed it, minimised."""

    kind: str
    key: str
    seed: str
    text: str  # the reproducer (or what is known when there is none)


def run_batch(kind: str, base_seed: int, count: int, *, start: int = 0, minimize: bool = False,
              minimize_seconds: float = 60.0, on_report: Callable[[Report], None] | None = None) -> tuple[Tally, list[Report]]:
    """Run programs `start .. start+count-1` of `kind` in this process."""
    tally = Tally(kind)
    reports: list[Report] = []
    seen: set[str] = set()
    t0 = time.monotonic()
    for index in range(start, start + count):
        prog = make_program(kind, base_seed, index)
        for message in run_one(prog, seen, minimize, minimize_seconds):
            if message[0] == "result":
                tally.add(message[2], message[3])
            elif message[0] == "report":
                reports.append(message[1])
                if on_report:
                    on_report(message[1])
    tally.seconds = time.monotonic() - t0
    return tally, reports


def run_one(prog: Program, seen: set[str], minimize: bool, minimize_seconds: float) -> Iterator[tuple[Any, ...]]:
    """Messages about one program: ("result", kind, status, fallback); for a finding
    whose key is new, ("finding", Report) at once and ("report", Report) minimised."""
    from .minimize import minimize as shrink
    from .minimize import reproducer
    from .runner import run_program

    result = run_program(prog)
    yield ("result", prog.kind, result.status, result.fallback)
    f = result.finding
    if f is None or f.key in seen:
        return
    seen.add(f.key)
    if not minimize or f.kind == "invalid":
        yield ("report", Report(prog.kind, f.key, prog.seed, reproducer(prog, f)))
        return
    yield ("finding", Report(prog.kind, f.key, prog.seed, reproducer(prog, f)))
    small = shrink(prog, f, seconds=minimize_seconds)
    final = run_program(small).finding or f
    yield ("report", Report(prog.kind, f.key, prog.seed, reproducer(small, final)))


# -- worker processes ---------------------------------------------------------------------


def _worker(slot: int, kinds: tuple[str, ...], base_seed: int, start: int, stride: int, limit: int | None,
            stop: Any, out: Any, seen: list[str], minimize: bool, minimize_seconds: float) -> None:
    seen_keys = set(seen)
    index = start
    for _ in range(PROGRAMS_PER_WORKER):
        if stop.is_set() or (limit is not None and index >= limit):
            out.send((slot, "done", index))
            return
        for kind in kinds:
            prog = make_program(kind, base_seed, index)
            out.send((slot, "start", kind, prog.seed, prog.source, prog.calls))  # (sent at once: a Pipe, not a Queue)
            for message in run_one(prog, seen_keys, minimize, minimize_seconds):
                out.send((slot, *message))
        index += stride
    out.send((slot, "restart", index))


@dataclass
class _Slot:
    process: Any
    conn: Any  # the read end of the worker's pipe
    heard: float  # when it last sent something
    running: tuple[str, str, str, list[str]] | None = None  # (kind, seed, source, calls)
    pending: Report | None = None  # a finding being minimised


def fuzz(kinds: tuple[str, ...], base_seed: int, *, seconds: float | None = None, programs: int | None = None,
         jobs: int = 1, minimize: bool = True, minimize_seconds: float = 60.0, out: Any = sys.stdout) -> dict[str, Tally]:
    """Run until `seconds` pass or `programs` of each kind ran, with `jobs` worker
    processes; print each new finding as it comes; return the tallies."""
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    tallies = {k: Tally(k) for k in kinds}
    seen: set[str] = set()
    hang_seconds = HANG_SECONDS + minimize_seconds
    t0 = time.monotonic()
    slots: dict[int, _Slot] = {}

    def launch(slot: int, start: int) -> None:
        read, write = ctx.Pipe(duplex=False)
        args = (slot, kinds, base_seed, start, jobs, programs, stop, write, sorted(seen), minimize, minimize_seconds)
        p = ctx.Process(target=_worker, args=args, daemon=True)
        p.start()
        write.close()  # (the worker holds the write end: reading then fails once it is gone)
        slots[slot] = _Slot(p, read, time.monotonic())

    def report(r: Report, note: str = "") -> None:
        if r.key in seen:
            return
        seen.add(r.key)
        print(f"\n=== {r.kind} finding: {r.key} (program {r.seed}){note}\n{r.text}", file=out, flush=True)

    def lost(slot: int, what: str) -> None:
        """The worker of `slot` died or hung: record what it was doing; go on after it."""
        s = slots.pop(slot)
        s.conn.close()
        if s.running is None:
            raise RuntimeError(f"a fuzz worker {what} before running any program (exit code {s.process.exitcode})")
        kind, seed, source, calls = s.running
        if s.pending is not None:  # (the program was run and counted: a minimising candidate failed)
            report(s.pending, f" [not minimised: the worker {what} while minimising it]")
        else:
            from .minimize import reproducer
            from .runner import Finding

            tallies[kind].add({"crashed": "crash", "hung": "hang"}[what], "")
            key = f"{what}: program {seed}"
            why = f"the worker {what} (exit code {s.process.exitcode}) running this program (not minimised)"
            report(Report(kind, key, seed, reproducer(Program(kind, seed, source, calls, [False, True]), Finding(what, key, why))))
        if not stop.is_set():
            launch(slot, _index(seed) + jobs)

    for slot in range(jobs):
        launch(slot, slot)
    while slots:
        if seconds is not None and time.monotonic() - t0 > seconds:
            stop.set()
        msg = None
        for conn in wait([s.conn for s in slots.values()], timeout=0.5):
            try:
                msg = conn.recv()
                break
            except EOFError:  # the worker is gone; what it was running is found below
                pass
        if msg is not None:
            slot, tag, *rest = msg
            s = slots.get(slot)
            if s is None:
                continue
            s.heard = time.monotonic()
            if tag == "start":
                s.running, s.pending = (rest[0], rest[1], rest[2], rest[3]), None
            elif tag == "result":
                tallies[rest[0]].add(rest[1], rest[2])
            elif tag == "finding":
                s.pending = rest[0]
            elif tag == "report":
                s.pending = None
                report(rest[0])
            elif tag in ("done", "restart"):
                s.process.join()
                s.conn.close()
                del slots[slot]
                if tag == "restart" and not stop.is_set():
                    launch(slot, rest[0])
            continue
        for slot, s in list(slots.items()):
            if not s.process.is_alive() and s.process.exitcode not in (0, None):
                lost(slot, "crashed")
            elif time.monotonic() - s.heard > hang_seconds:
                s.process.kill()
                s.process.join()
                lost(slot, "hung")
    for t in tallies.values():
        t.seconds = time.monotonic() - t0
    return tallies


def _index(seed: str) -> int:
    return int(seed.split(":")[2].split(".")[0])
