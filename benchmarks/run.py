"""Benchmark runner: cuvil_bc versus Numba versus CPython on scalar kernels.

Run from the repository root::

    python benchmarks/run.py [--quick] [--only NAME[,NAME...]] [--no-numba]

For every kernel in ``benchmarks/kernels.py`` the runner measures, in one
process:

* first-call latency (the first call includes compilation) of cuvil_bc and
  Numba;
* steady-state time per call (best of several repeats, each repeat timing
  enough calls to last at least ``min_time``) of CPython, cuvil_bc and Numba;
* correctness: cuvil_bc's result must have the same ``type`` and ``repr`` as
  CPython's, otherwise the kernel is reported as a MISMATCH and the runner
  exits with status 1;
* whether cuvil_bc really ran natively (``stats['native_calls'] > 0``).

It then measures ``import`` time (fresh subprocesses) and per-call overhead on
a trivial function, and ends with a PASS/FAIL summary of the performance
targets.  Exit status: 0 if every kernel matched CPython, 1 if any kernel
mismatched or raised, 2 if cuvil_bc could not be imported.  Missed performance
targets are reported but do not change the exit status.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
KERNELS_PATH = BENCH_DIR / "kernels.py"

# Fall back to the checkout when cuvil_bc is not installed (`pip install -e .`).
if importlib.util.find_spec("cuvil_bc") is None:
    sys.path.append(str(REPO_ROOT))

Kernel = Callable[..., Any]
JitFactory = Callable[[Kernel], Kernel]

# Performance targets: measured ratio (cuvil_bc / numba) must be <= the limit.
TARGET_STEADY_GEOMEAN = 1.0
TARGET_STEADY_WORST = 1.5
TARGET_COMPILE_MEDIAN = 0.5
TARGET_IMPORT = 0.25
TARGET_CALL_OVERHEAD = 1.0

EXPLAIN_MAX_LINES = 15


@dataclass(frozen=True)
class Settings:
    """Timing parameters of one run."""

    repeats: int  # repeats per steady-state measurement (best is kept)
    min_time: float  # seconds each steady-state repeat must last (>= 1 call)
    import_runs: int  # fresh subprocesses per import-time measurement
    overhead_repeats: int
    overhead_min_time: float


FULL_SETTINGS = Settings(
    repeats=5, min_time=0.1, import_runs=5, overhead_repeats=7, overhead_min_time=0.2
)
QUICK_SETTINGS = Settings(
    repeats=2, min_time=0.02, import_runs=3, overhead_repeats=3, overhead_min_time=0.05
)


# --------------------------------------------------------------------------
# Timing primitives
# --------------------------------------------------------------------------


def calls_per_repeat(timer: timeit.Timer, min_time: float, one_call: float | None = None) -> int:
    """Return how many calls one repeat needs to last at least ``min_time`` (>= 1).

    ``one_call`` is a known duration of a single (already warm) call, which
    saves a calibration run for slow calls.
    """
    number = 1
    elapsed = one_call if one_call is not None else timer.timeit(number)
    while elapsed < min_time:
        scale = min_time / elapsed if elapsed > 0 else 1000.0
        number = max(number * 2, math.ceil(number * scale * 1.1))
        elapsed = timer.timeit(number)
    return number


def best_seconds_per_call(
    timer: timeit.Timer, repeats: int, min_time: float, one_call: float | None = None
) -> float:
    """Return the best (minimum over ``repeats``) time per call, in seconds."""
    number = calls_per_repeat(timer, min_time, one_call)
    return min(timer.repeat(repeat=repeats, number=number)) / number


def call_timer(fn: Kernel, args: tuple[Any, ...]) -> timeit.Timer:
    """Return a timer of ``fn(*args)``."""
    return timeit.Timer("fn(*args)", globals={"fn": fn, "args": args})


def timed_call(fn: Kernel, args: tuple[Any, ...]) -> tuple[Any, float]:
    """Call ``fn(*args)`` once; return (result, elapsed seconds)."""
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


@dataclass
class Measurement:
    """Timings and result of one kernel under one engine."""

    result: Any
    first_call: float  # seconds; includes compilation for JIT engines
    steady: float  # best seconds per call
    stages: dict[str, float] | None = None  # cuvil_bc: the first call's seconds per compile stage


def measure(
    fn: Kernel, args: tuple[Any, ...], settings: Settings, *, jit: bool,
    stage_clock: Callable[[], dict[str, float]] | None = None,
) -> Measurement:
    """Measure first-call latency and steady-state time of ``fn(*args)``.

    For a JIT engine the first call includes compilation, so it cannot serve
    as a calibration hint for the steady-state loop. With `stage_clock` (cuvil_bc's
    seconds per compile stage so far), the first call's share of each stage too.
    """
    before = stage_clock() if stage_clock else None
    result, first = timed_call(fn, args)
    stages = None
    if stage_clock and before is not None:
        after = stage_clock()
        stages = {k: after[k] - before.get(k, 0.0) for k in after}
    steady = best_seconds_per_call(
        call_timer(fn, args), settings.repeats, settings.min_time, None if jit else first
    )
    return Measurement(result=result, first_call=first, steady=steady, stages=stages)


# --------------------------------------------------------------------------
# Engines
# --------------------------------------------------------------------------


def load_kernels(module_name: str) -> ModuleType:
    """Execute ``kernels.py`` as a fresh module registered under ``module_name``."""
    spec = importlib.util.spec_from_file_location(module_name, KERNELS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def jit_all_functions(module: ModuleType, jit: JitFactory) -> None:
    """Rebind every function defined in ``module`` to ``jit(function)``.

    Kernels look their helpers (and themselves, when recursive) up in the
    module globals, so after rebinding a jitted kernel calls jitted helpers.
    """
    for name, obj in list(vars(module).items()):
        if isinstance(obj, FunctionType) and obj.__module__ == module.__name__:
            setattr(module, name, jit(obj))


def import_numba_njit(disabled: bool) -> JitFactory | None:
    """Return ``numba.njit``, or None (with a note) if disabled or not installed."""
    if disabled:
        print("note: --no-numba given; Numba columns and targets are skipped.")
        return None
    try:
        import numba
    except ImportError as exc:
        print(f"note: numba is not importable ({exc}); Numba columns and targets are skipped.")
        return None
    njit: JitFactory = numba.njit
    return njit


def native_calls(dispatcher: Any) -> int:
    """Return the number of native calls recorded by a cuvil_bc dispatcher."""
    return int(dispatcher.stats.get("native_calls", 0))


def deopts(dispatcher: Any) -> int:
    """Return the number of deoptimisations recorded by a cuvil_bc dispatcher."""
    return int(dispatcher.stats.get("deopts", 0))


def explain_excerpt(dispatcher: Any) -> str:
    """Return the first lines of ``dispatcher.explain()``, indented."""
    try:
        lines = str(dispatcher.explain()).splitlines()
    except Exception as exc:  # noqa: BLE001 - diagnostics only
        return f"      (explain() raised {type(exc).__name__}: {exc})"
    if len(lines) > EXPLAIN_MAX_LINES:
        lines = lines[:EXPLAIN_MAX_LINES] + ["..."]
    return "\n".join("      " + line for line in lines)


def describe_error(exc: BaseException) -> str:
    """Return a one-line description of an exception."""
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------
# Per-kernel benchmark
# --------------------------------------------------------------------------


@dataclass
class KernelReport:
    """Everything measured for one kernel."""

    name: str
    cpython: Measurement
    cuvil: Measurement | None = None
    numba: Measurement | None = None
    cuvil_error: str | None = None
    numba_error: str | None = None
    native: bool | None = None
    deopts: int = 0
    mismatch: bool = False
    numba_differs: bool = False

    @property
    def steady_ratio(self) -> float | None:
        """Steady-state time ratio cuvil_bc / numba."""
        return ratio(steady_of(self.cuvil), steady_of(self.numba))

    @property
    def compile_ratio(self) -> float | None:
        """First-call latency ratio cuvil_bc / numba."""
        return ratio(first_call_of(self.cuvil), first_call_of(self.numba))

    @property
    def speedup(self) -> float | None:
        """Steady-state speed-up of cuvil_bc over CPython."""
        return ratio(self.cpython.steady, steady_of(self.cuvil))

    @property
    def flags(self) -> str:
        """Problems worth flagging in the table."""
        flags: list[str] = []
        if self.cuvil_error is not None:
            flags.append("ERROR")
        if self.mismatch:
            flags.append("MISMATCH")
        if self.native is False:
            flags.append("INTERPRETED")
        if self.deopts:
            flags.append(f"deopts={self.deopts}")
        if self.numba_error is not None:
            flags.append("numba-error")
        if self.numba_differs:
            flags.append("numba-differs")
        return " ".join(flags)


def steady_of(m: Measurement | None) -> float | None:
    """Steady-state seconds per call, if measured."""
    return None if m is None else m.steady


def first_call_of(m: Measurement | None) -> float | None:
    """First-call seconds, if measured."""
    return None if m is None else m.first_call


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """Return numerator / denominator, or None if either is missing or zero."""
    if not numerator or not denominator:
        return None
    return numerator / denominator


def same_value(expected: Any, actual: Any) -> bool:
    """Exact equality as the benchmark defines it: same type and same repr."""
    return type(expected) is type(actual) and repr(expected) == repr(actual)


def show_value(value: Any) -> str:
    """Return ``repr(value)`` annotated with its type."""
    return f"{value!r} ({type(value).__name__})"


def bench_kernel(
    name: str,
    args: tuple[Any, ...],
    plain: ModuleType,
    numba_module: ModuleType | None,
    cuvil: Any,
    settings: Settings,
) -> KernelReport:
    """Benchmark one kernel under CPython, cuvil_bc and (optionally) Numba."""
    cpython = measure(getattr(plain, name), args, settings, jit=False)
    report = KernelReport(name=name, cpython=cpython)
    expected = report.cpython.result

    try:
        dispatcher = cuvil.compile(getattr(plain, name))
        report.cuvil = measure(dispatcher, args, settings, jit=True, stage_clock=stage_clock(cuvil))
        # Check a warm call too, in case the first call took a different path.
        results = [report.cuvil.result, dispatcher(*args)]
        report.native = native_calls(dispatcher) > 0
        report.deopts = deopts(dispatcher)
    except Exception as exc:  # noqa: BLE001 - cuvil_bc is under development
        report.cuvil_error = describe_error(exc)
        print(f"  ERROR: cuvil_bc raised on {name}: {report.cuvil_error}")
    else:
        for which, result in zip(("first", "warm"), results, strict=True):
            if not same_value(expected, result):
                report.mismatch = True
                print(f"  !!! MISMATCH in {name} ({which} call): cpython={show_value(expected)}"
                      f" cuvil_bc={show_value(result)}")
        if not report.native:
            print(f"  INTERPRETED: cuvil_bc made no native call for {name}; explain():")
            print(explain_excerpt(dispatcher))

    if numba_module is not None:
        try:
            report.numba = measure(getattr(numba_module, name), args, settings, jit=True)
        except Exception as exc:  # noqa: BLE001 - keep going with the other kernels
            report.numba_error = describe_error(exc)
            print(f"  note: numba raised on {name}: {report.numba_error}")
        else:
            if not same_value(expected, report.numba.result):
                report.numba_differs = True
                print(f"  note: numba result differs from CPython on {name}: "
                      f"{show_value(report.numba.result)} vs {show_value(expected)}")
    return report


def stage_clock(cuvil: Any) -> Callable[[], dict[str, float]] | None:
    """cuvil_bc's seconds per compile stage so far (`cuvil_bc.stages`), if it has them."""
    try:
        from cuvil_bc.stages import seconds
    except ImportError:
        return None
    return seconds


def print_stages(reports: Sequence[KernelReport]) -> None:
    """Where cuvil_bc's first calls spent their time: each compile stage's median over
    the kernels, and its share of the summed first-call time ("rest": the dispatch,
    the C entry's signature, running the call)."""
    measured = [r.cuvil for r in reports if r.cuvil is not None and r.cuvil.stages is not None]
    if not measured:
        return
    names = list(measured[0].stages or {})
    total = sum(m.first_call for m in measured)
    rows = {n: [(m.stages or {})[n] for m in measured] for n in names}
    rows["rest"] = [m.first_call - sum((m.stages or {}).values()) for m in measured]
    print()
    print(f"first-call time by stage (cuvil_bc, {len(measured)} kernels): median ms, share of the total")
    for n, values in rows.items():
        print(f"  {n:<18} {statistics.median(values) * 1e3:7.1f} ms  {100 * sum(values) / total:5.1f}%")


def warm_up(jits: dict[str, JitFactory]) -> None:
    """Compile a throw-away function with each engine and print how long it took.

    This keeps one-time engine initialisation (LLVM target setup, lazy
    imports) out of the first kernel's first-call latency.
    """

    def warm(x: int, y: float) -> float:
        return x * y + 1.0

    parts: list[str] = []
    for label, jit in jits.items():
        start = time.perf_counter()
        try:
            jit(warm)(2, 0.5)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            parts.append(f"{label} failed ({describe_error(exc)})")
            continue
        parts.append(f"{label} {fmt_ms(time.perf_counter() - start)} ms")
    print("engine warm-up (first compile in process): " + ", ".join(parts))


# --------------------------------------------------------------------------
# Import time and call overhead
# --------------------------------------------------------------------------


def import_seconds(module: str, runs: int, search_dir: Path) -> float | None:
    """Best wall time of ``import module`` in fresh interpreters, or None on failure.

    ``search_dir`` is prepended to PYTHONPATH so that the subprocess imports
    the same cuvil_bc as this process.
    """
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(search_dir), env.get("PYTHONPATH")]))
    best: float | None = None
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
        if proc.returncode != 0:
            last = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
            print(f"  note: importing {module} failed: {last[0]}")
            return None
        seconds = float(proc.stdout.strip().splitlines()[-1])
        best = seconds if best is None else min(best, seconds)
    return best


def add(a: int, b: int) -> int:
    """Trivial function used to measure call overhead."""
    return a + b


def overhead_ns(fn: Kernel, settings: Settings) -> float:
    """Best nanoseconds per call of ``fn(1, 2)`` (after one warm-up call)."""
    fn(1, 2)
    timer = timeit.Timer("fn(1, 2)", globals={"fn": fn})
    return 1e9 * best_seconds_per_call(timer, settings.overhead_repeats, settings.overhead_min_time)


def measure_import_ratio(cuvil: ModuleType, with_numba: bool, settings: Settings) -> float | None:
    """Print ``import`` times of cuvil_bc and numba; return their ratio."""
    print(f"import time (best of {settings.import_runs} fresh interpreters):")
    search_dir = Path(next(iter(cuvil.__path__))).resolve().parent
    cuvil_s = import_seconds("cuvil_bc", settings.import_runs, search_dir)
    line = f"  cuvil_bc {fmt_ms(cuvil_s)} ms"
    if not with_numba:
        print(line)
        return None
    numba_s = import_seconds("numba", settings.import_runs, search_dir)
    import_ratio = ratio(cuvil_s, numba_s)
    print(f"{line} | numba {fmt_ms(numba_s)} ms | ratio cuvil/numba {fmt_ratio(import_ratio)}")
    return import_ratio


def measure_call_overhead_ratio(jits: dict[str, JitFactory], settings: Settings) -> float | None:
    """Print ns per call of ``add(1, 2)`` for CPython and each engine; return cuvil/numba."""
    overheads: dict[str, float | None] = {"cpython": overhead_ns(add, settings)}
    for label, jit in jits.items():
        try:
            compiled = jit(add)
            overheads[label] = overhead_ns(compiled, settings)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            overheads[label] = None
            print(f"  note: {label} failed on add: {describe_error(exc)}")
            continue
        if label == "cuvil_bc" and native_calls(compiled) == 0:
            print("  INTERPRETED: cuvil_bc made no native call for add")
    call_ratio = ratio(overheads.get("cuvil_bc"), overheads.get("numba"))
    timings = " | ".join(
        f"{label} {'-' if ns is None else f'{ns:.0f}'} ns" for label, ns in overheads.items()
    )
    if "numba" in jits:
        timings += f" | ratio cuvil/numba {fmt_ratio(call_ratio)}"
    print(f"call overhead, add(1, 2): {timings}")
    return call_ratio


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def fmt_ms(seconds: float | None) -> str:
    """Format seconds as milliseconds with about three significant digits."""
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def fmt_ratio(value: float | None) -> str:
    """Format a ratio as ``1.23x``."""
    if value is None:
        return "-"
    return f"{value:.2f}x" if value < 100 else f"{value:.0f}x"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print a plain-text table: first column left-aligned, others right-aligned."""
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out += [cell.rjust(width) for cell, width in zip(cells[1:-1], widths[1:-1], strict=True)]
        out.append(cells[-1])  # trailing flags column: no padding
        return "  ".join(out).rstrip()

    print(line(headers))
    print("  ".join("-" * width for width in widths))
    for row in rows:
        print(line(row))


# (header, cell formatter, needs numba)
COLUMNS: list[tuple[str, Callable[[KernelReport], str], bool]] = [
    ("kernel", lambda r: r.name, False),
    ("cpython ms", lambda r: fmt_ms(r.cpython.steady), False),
    ("numba ms", lambda r: fmt_ms(steady_of(r.numba)), True),
    ("cuvil ms", lambda r: fmt_ms(steady_of(r.cuvil)), False),
    ("cuvil/numba", lambda r: fmt_ratio(r.steady_ratio), True),
    ("vs cpython", lambda r: fmt_ratio(r.speedup), False),
    ("1st cuvil ms", lambda r: fmt_ms(first_call_of(r.cuvil)), False),
    ("1st numba ms", lambda r: fmt_ms(first_call_of(r.numba)), True),
    ("1st ratio", lambda r: fmt_ratio(r.compile_ratio), True),
    ("flags", lambda r: r.flags, False),
]


def print_kernel_table(reports: Sequence[KernelReport], with_numba: bool) -> None:
    """Print the per-kernel results table (Numba columns only if ``with_numba``)."""
    columns = [(header, cell) for header, cell, needs_numba in COLUMNS
               if with_numba or not needs_numba]
    print_table([header for header, _ in columns],
                [[cell(r) for _, cell in columns] for r in reports])


def geomean(values: Sequence[float]) -> float | None:
    """Geometric mean, or None for an empty sequence."""
    if not values:
        return None
    return math.exp(statistics.fmean(math.log(v) for v in values))


@dataclass
class TargetResult:
    """One line of the target summary."""

    label: str
    value: float | None  # measured ratio; None means not measurable
    limit: float
    detail: str = ""

    @property
    def status(self) -> str:
        if self.value is None:
            return "SKIP"
        return "PASS" if self.value <= self.limit else "FAIL"


def print_summary(
    reports: Sequence[KernelReport],
    import_ratio: float | None,
    call_ratio: float | None,
    with_numba: bool,
) -> bool:
    """Print aggregate metrics and the target summary; return True if all kernels are correct."""
    steady = {r.name: r.steady_ratio for r in reports if r.steady_ratio is not None}
    compile_ratios = [r.compile_ratio for r in reports if r.compile_ratio is not None]
    steady_geomean = geomean(list(steady.values()))
    worst_name = max(steady, key=lambda name: steady[name]) if steady else None
    worst = steady[worst_name] if worst_name is not None else None
    compile_median = statistics.median(compile_ratios) if compile_ratios else None

    if with_numba:
        print()
        print(f"steady-state geomean cuvil/numba : {fmt_ratio(steady_geomean)}"
              f"  (over {len(steady)} kernels)")
        print(f"worst kernel cuvil/numba         : {fmt_ratio(worst)}"
              + (f"  ({worst_name})" if worst_name else ""))
        print(f"median first-call ratio          : {fmt_ratio(compile_median)}"
              f"  (over {len(compile_ratios)} kernels)")

    failed = [r.name for r in reports if r.cuvil_error is not None or r.mismatch]
    interpreted = [r.name for r in reports if r.native is not True]
    targets = [
        TargetResult("steady-state geomean cuvil/numba", steady_geomean, TARGET_STEADY_GEOMEAN),
        TargetResult("worst kernel cuvil/numba", worst, TARGET_STEADY_WORST, worst_name or ""),
        TargetResult(
            "median first-call latency cuvil/numba", compile_median, TARGET_COMPILE_MEDIAN
        ),
        TargetResult("import time cuvil/numba", import_ratio, TARGET_IMPORT),
        TargetResult("call overhead cuvil/numba", call_ratio, TARGET_CALL_OVERHEAD),
    ]

    print()
    print("TARGETS")
    for t in targets:
        detail = f"  ({t.detail})" if t.detail else ""
        print(f"  {t.status}  {t.label:<40} {fmt_ratio(t.value):>8}  <= {t.limit:.2f}x{detail}")
    checks = [
        ("all kernels match CPython (type+repr)", failed),
        ("all kernels ran natively in cuvil_bc", interpreted),
    ]
    for label, offenders in checks:
        status = "FAIL" if offenders else "PASS"
        print(f"  {status}  {label}" + (f"  ({', '.join(offenders)})" if offenders else ""))
    if failed:
        print()
        print(f"!!! {len(failed)} kernel(s) MISMATCHED or raised: {', '.join(failed)}")
    return not failed


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None, names: Sequence[str]) -> argparse.Namespace:
    """Parse the command line; ``--only`` is validated against ``names``."""
    parser = argparse.ArgumentParser(description="Benchmark cuvil_bc against Numba and CPython.")
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes and fewer repeats (smoke run)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only these kernels (repeatable or comma-separated)")
    parser.add_argument("--no-numba", action="store_true",
                        help="skip Numba (columns and targets)")
    ns = parser.parse_args(argv)
    only = [n.strip() for item in ns.only for n in item.split(",") if n.strip()]
    unknown = sorted(set(only) - set(names))
    if unknown:
        parser.error(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(names)}")
    ns.only = only
    return ns


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark suite; return the process exit status."""
    plain = load_kernels("_bench_kernels")
    benchmarks: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = plain.BENCHMARKS
    opts = parse_args(argv, list(benchmarks))
    settings = QUICK_SETTINGS if opts.quick else FULL_SETTINGS
    names = opts.only or list(benchmarks)

    try:
        import cuvil_bc
    except Exception as exc:  # noqa: BLE001 - anything here is fatal
        print(f"error: cannot import cuvil_bc: {describe_error(exc)}", file=sys.stderr)
        return 2
    if not callable(getattr(cuvil_bc, "compile", None)):
        print(f"error: cuvil_bc (from {list(cuvil_bc.__path__)}) has no compile()",
              file=sys.stderr)
        return 2

    # First calls are to measure compiling: nothing is loaded from (or written to)
    # the native-code cache that an earlier run of this script filled.
    from cuvil_bc import artifacts

    artifacts.set_enabled(False)
    jits: dict[str, JitFactory] = {"cuvil_bc": cuvil_bc.compile}
    njit = import_numba_njit(opts.no_numba)
    numba_module: ModuleType | None = None
    if njit is not None:
        jits["numba"] = njit
        numba_module = load_kernels("_bench_kernels_numba")
        jit_all_functions(numba_module, njit)

    print(f"python {sys.version.split()[0]} | {'quick' if opts.quick else 'full'} run | "
          f"best of {settings.repeats}, >= {settings.min_time:g} s per repeat")
    warm_up(jits)

    reports: list[KernelReport] = []
    for name in names:
        default_args, quick_args = benchmarks[name]
        args = quick_args if opts.quick else default_args
        print(f"- {name}{args!r}", flush=True)
        reports.append(bench_kernel(name, args, plain, numba_module, cuvil_bc, settings))

    print()
    print_kernel_table(reports, njit is not None)
    print_stages(reports)

    print()
    import_ratio = measure_import_ratio(cuvil_bc, njit is not None, settings)
    call_ratio = measure_call_overhead_ratio(jits, settings)

    all_correct = print_summary(reports, import_ratio, call_ratio, njit is not None)
    return 0 if all_correct else 1


if __name__ == "__main__":
    sys.exit(main())
