"""Benchmarks of the import hook (issue 3), side by side in one run:

1. End to end: examples/numeric_app.py under plain CPython and under each activation
   form, on a cold cache (cuvil_bc's cache files are deleted before every run), with
   background compilation as users get it, the runs alternated (plain, then each
   form, three rounds). Target: each form >= 5x faster, fastest plain run over
   fastest hooked run; each round's own ratio is shown beside it.
2. Import cost: importing a module without numeric functions, with the hook (cache
   warm) against without it, in one process. Target: <= 1.05x.
3. Counting cost: what the counter adds to a call (and to a loop iteration) before a
   function turns hot. Target: <= 100 ns a call. On 3.12+ the same count through a
   sys.monitoring PY_START callback is measured for comparison.

    python benchmarks/hook.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FORMS = {
    "-X importhook cuvil_bc": ["-X", "importhook", "cuvil_bc", "numeric_app.py"],
    "-X importhook=cuvil_bc": ["-X", "importhook=cuvil_bc", "numeric_app.py"],
    "-m cuvil_bc": ["-m", "cuvil_bc", "numeric_app.py"],
}
TARGET_SPEEDUP = 5.0
TARGET_IMPORT = 1.05
TARGET_COUNT_NS = 100.0


def _clean_cache() -> None:
    """Both caches: the rewritten modules and the native code (artifacts/)."""
    import shutil

    from cuvil_bc.hook.cache import TAG

    for path in EXAMPLES.rglob(f"*.{TAG}.pyc"):
        path.unlink()
    for path in EXAMPLES.rglob("*.cuvil_bc"):
        shutil.rmtree(path, ignore_errors=True)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "CUVIL_BC_SYNC", "CUVIL_BC_REPORT", "CUVIL_BC_CACHE_DIR"):
        env.pop(name, None)
    return env


def end_to_end(scale: str, repeats: int) -> list[tuple[str, float, float, list[float]]]:
    """Per activation form: the fastest plain run, the fastest hooked run, and each
    round's plain/hooked ratio. The runs alternate (plain, then each form, in every
    round), so that the machine's drifts in speed hit all of them alike."""

    def timed(args: list[str]) -> tuple[float, str]:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *args, scale], cwd=EXAMPLES, capture_output=True, text=True, env=_env())
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{args} failed:\n{done.stderr}")
        return elapsed, done.stdout

    plain: list[float] = []
    hooked: dict[str, list[float]] = {name: [] for name in FORMS}
    for _ in range(repeats):
        t, expected = timed(["numeric_app.py"])
        plain.append(t)
        for name, args in FORMS.items():
            _clean_cache()
            t, out = timed(args)
            if out != expected:
                raise SystemExit(f"{name}: output differs from plain CPython")
            hooked[name].append(t)
    return [(name, min(plain), min(times), [p / h for p, h in zip(plain, times)]) for name, times in hooked.items()]


def _write_module(directory: Path, name: str) -> None:
    parts = ['"""A module with no numeric functions."""', "import os", "import re", ""]
    for k in range(40):
        parts.append(
            textwrap.dedent(
                f"""
                class Thing{k}:
                    kind = "thing{k}"

                    def __init__(self, name, tags=None):
                        self.name = name
                        self.tags = list(tags or [])

                    def describe(self):
                        return f"{{self.kind}}:{{self.name}}[{{', '.join(self.tags)}}]"

                    def matches(self, pattern):
                        return re.search(pattern, self.name) is not None


                def helper_{k}(items):
                    return {{str(i): os.path.basename(str(i)) for i in items}}
                """
            )
        )
    (directory / f"{name}.py").write_text("\n".join(parts))


def import_cost(rounds: int) -> tuple[float, float]:
    import cuvil_bc
    from cuvil_bc.hook import uninstall

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        _write_module(directory, "bench_plainmod")
        sys.path.insert(0, tmp)
        saved = sys.dont_write_bytecode
        sys.dont_write_bytecode = False

        def once() -> float:
            sys.modules.pop("bench_plainmod", None)
            start = time.perf_counter()
            importlib.import_module("bench_plainmod")
            return time.perf_counter() - start

        try:
            once()  # the normal .pyc, warm
            plain, hooked = [], []
            cuvil_bc.install(include=["bench_plainmod"])
            once()  # the rewrite's cache, warm
            uninstall()
            for _ in range(rounds):  # interleaved, so drifts of the machine hit both
                plain.append(once())
                cuvil_bc.install(include=["bench_plainmod"])
                hooked.append(once())
                uninstall()
            return min(plain), min(hooked)  # the least-disturbed import of each
        finally:
            sys.dont_write_bytecode = saved
            sys.path.remove(tmp)
            uninstall()


def counting_cost() -> tuple[float, float, float | None]:
    """(ns per call, ns per loop iteration) that the counter adds, and on 3.12+ the
    ns per call of counting with a sys.monitoring PY_START callback instead."""
    import types

    from cuvil_bc.counters import Counter, live
    from cuvil_bc.decode.counting import add_counters

    def f(x):
        return x + 1

    def g(n):
        s = 0
        for i in range(n):
            s += i
        return s

    def cold() -> Counter:
        # A cold counter, as the hook makes one (hook/hot.py): it never reaches its
        # trigger here.
        return Counter(10**12, None)

    counters = {key: cold() for key in ("bench:f", "bench:f@loop", "bench:g", "bench:g@loop")}
    fc = types.FunctionType(live(add_counters(f.__code__, "bench:f", "bench:f@loop"), counters), {})
    gc = types.FunctionType(live(add_counters(g.__code__, "bench:g", "bench:g@loop"), counters), {})

    def difference(plain, counted, arg: int, number: int) -> float:  # type: ignore[no-untyped-def]
        """Best time of `counted` minus best time of `plain`, measured alternately."""
        a, b = [], []
        for _ in range(15):
            a.append(timeit.timeit(lambda: plain(arg), number=number))
            b.append(timeit.timeit(lambda: counted(arg), number=number))
        return (min(b) - min(a)) / number

    per_call = difference(f, fc, 1, 100_000) * 1e9
    per_iter = difference(g, gc, 1000, 300) / 1000 * 1e9
    monitoring = None
    if sys.version_info >= (3, 12):
        mon = sys.monitoring
        tool = 3
        mon.use_tool_id(tool, "cuvil_bc-bench")
        counts = {}

        def on_start(code, offset):  # type: ignore[no-untyped-def]
            counts[code] = counts.get(code, 0) + 1

        h = types.FunctionType(f.__code__.replace(), {})
        mon.register_callback(tool, mon.events.PY_START, on_start)
        mon.set_local_events(tool, h.__code__, mon.events.PY_START)
        try:
            monitoring = difference(f, h, 1, 100_000) * 1e9
        finally:
            mon.set_local_events(tool, h.__code__, 0)
            mon.register_callback(tool, mon.events.PY_START, None)
            mon.free_tool_id(tool)
    return per_call, per_iter, monitoring


def pth_line_cost() -> float:
    """ns that site spends on cuvil_bc-hook.pth when no -X importhook is given (the
    line it executes; opening the file is site's own per-.pth cost)."""
    line = (ROOT / "cuvil_bc-hook.pth").read_text().strip()
    saved = dict(sys._xoptions)
    sys._xoptions.pop("importhook", None)
    try:
        code = compile(line, "cuvil_bc-hook.pth", "exec")
        number = 200_000
        return min(timeit.repeat(lambda: exec(code), number=number, repeat=5)) / number * 1e9
    finally:
        sys._xoptions.clear()
        sys._xoptions.update(saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run of the example program")
    opts = parser.parse_args()
    scale, repeats = ("4", 1) if opts.quick else ("10", 3)
    failed = False

    print(f"Python {sys.version.split()[0]}; examples/numeric_app.py {scale}, cold cache, background compilation, {repeats} alternated rounds")
    for name, plain, hooked, ratios in end_to_end(scale, repeats):
        ok = plain / hooked >= TARGET_SPEEDUP
        failed |= not ok
        spread = f"rounds {min(ratios):.1f}-{max(ratios):.1f}x"
        print(f"  {'PASS' if ok else 'FAIL'}  {name:<24} plain {plain:6.2f} s  hooked {hooked:6.2f} s  speedup {plain / hooked:5.1f}x  {spread}  (target >= {TARGET_SPEEDUP}x)")

    plain, hooked = import_cost(rounds=60 if opts.quick else 200)
    ok = hooked / plain <= TARGET_IMPORT
    failed |= not ok
    print(f"  {'PASS' if ok else 'FAIL'}  import without numeric functions, warm cache: plain {plain * 1e6:6.0f} us  hooked {hooked * 1e6:6.0f} us  ratio {hooked / plain:4.2f}x  (target <= {TARGET_IMPORT}x)")

    per_call, per_iter, monitoring = counting_cost()
    ok = per_call <= TARGET_COUNT_NS
    failed |= not ok
    print(f"  {'PASS' if ok else 'FAIL'}  counting before hot: {per_call:5.1f} ns a call, {per_iter:5.1f} ns a loop iteration  (target <= {TARGET_COUNT_NS:.0f} ns a call)")
    if monitoring is not None:
        print(f"        for comparison, a sys.monitoring PY_START callback: {monitoring:5.1f} ns a call")
    print(f"        startup without -X importhook: the .pth line costs {pth_line_cost():.0f} ns")
    print("TARGETS " + ("all met" if not failed else "NOT all met") + " (a missed target is reported, not an error)")


if __name__ == "__main__":
    main()
