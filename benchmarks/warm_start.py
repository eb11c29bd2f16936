"""Warm start (issue 19), side by side in one run:

1. examples/numeric_app.py under plain CPython and under ``-X importhook cuvil_bc``,
   with an empty native-code cache (cold: every hot function is compiled) and with the
   cache the cold run left (warm: every one is loaded), background compilation as users
   get it. The runs alternate (plain, cold, warm) for `--rounds` rounds; each round's
   ratios are printed, and the targets are judged on the medians. Each run's output
   must be plain CPython's.
2. Load from cache: a fresh process imports a module with a compiled function whose
   artifact is in the cache, and times its first call (the load, then the call):
   median over `--rounds` processes.

    python benchmarks/warm_start.py [--rounds N] [--scale S]

Targets (issue 19): cold >= 6x plain, warm >= 12x plain, load <= 5 ms.
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
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TARGET_COLD = 6.0
TARGET_WARM = 12.0
TARGET_LOAD_MS = 5.0


def hook_env(cache: Path | None) -> dict[str, str]:
    """The environment of a measured run: none of cuvil_bc's settings but the cache
    directory (None: the default cache)."""
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "CUVIL_BC_SYNC", "CUVIL_BC_REPORT", "CUVIL_BC_CACHE", "CUVIL_BC_CACHE_DIR", "CUVIL_BC_OSR"):
        env.pop(name, None)
    if cache is not None:
        env["CUVIL_BC_CACHE_DIR"] = str(cache)
    return env


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """Seconds `python args...` took, and its output (it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{args} failed:\n{done.stderr}")
    return elapsed, done.stdout


def app(rounds: int, scale: str) -> tuple[list[float], list[float], list[float]]:
    from cuvil_bc.hook.cache import TAG

    plain_runs, cold_runs, warm_runs = [], [], []
    for k in range(rounds):
        cache = Path(tempfile.mkdtemp(prefix="cuvil_bc-warm-start-"))
        try:
            for path in EXAMPLES.rglob(f"*.{TAG}.pyc"):  # (the rewritten modules too: a cold start)
                path.unlink()
            plain, expected = timed(["numeric_app.py", scale], hook_env(None), EXAMPLES)
            cold, out_cold = timed(["-X", "importhook", "cuvil_bc", "numeric_app.py", scale], hook_env(cache), EXAMPLES)
            warm, out_warm = timed(["-X", "importhook", "cuvil_bc", "numeric_app.py", scale], hook_env(cache), EXAMPLES)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        if not (out_cold == expected == out_warm):
            raise SystemExit("the hooked runs printed something else than plain CPython")
        plain_runs.append(plain)
        cold_runs.append(cold)
        warm_runs.append(warm)
        print(f"  round {k + 1}: plain {plain:.2f} s, cold {cold:.2f} s ({plain / cold:.1f}x), warm {warm:.2f} s ({plain / warm:.1f}x)")
    return plain_runs, cold_runs, warm_runs


LOADER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    import cuvil_bc
    import kernel
    f = cuvil_bc.compile(kernel.smooth)
    a = np.linspace(0.0, 1.0, 1000)
    start = time.perf_counter()
    f(a, 0.25)
    first = time.perf_counter() - start
    print(json.dumps({"ms": first * 1e3, "loads": f.stats["cache_loads"], "llvmlite": "llvmlite" in sys.modules}))
    """
)
KERNEL = textwrap.dedent(
    """
    def smooth(a, w):
        out = a.copy()
        for i in range(1, a.shape[0] - 1):
            out[i] = (1.0 - 2.0 * w) * a[i] + w * (a[i - 1] + a[i + 1])
        return out
    """
)


def load_times(rounds: int) -> list[float]:
    folder = Path(tempfile.mkdtemp(prefix="cuvil_bc-load-"))
    try:
        (folder / "kernel.py").write_text(KERNEL)
        (folder / "loader.py").write_text(LOADER)
        env = hook_env(folder / "cache")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        timed(["loader.py"], env, folder)  # (compiles and stores)
        times = []
        for _ in range(rounds):
            result = json.loads(timed(["loader.py"], env, folder)[1])
            if result["loads"] != 1 or result["llvmlite"]:
                raise SystemExit(f"the function was not loaded from the cache: {result}")
            times.append(result["ms"])
        return times
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", default="10")
    args = parser.parse_args()
    print(f"examples/numeric_app.py {args.scale}, {args.rounds} rounds (plain, cold cache, warm cache):")
    plain, cold, warm = app(args.rounds, args.scale)
    p, c, w = statistics.median(plain), statistics.median(cold), statistics.median(warm)
    loads = load_times(max(5, args.rounds))
    load = statistics.median(loads)
    print(f"load from cache, first call after import: {', '.join(f'{t:.2f}' for t in loads)} ms")
    print()
    checks = [
        (f"cold cache: plain / hooked (median)      {p / c:5.1f}x  >= {TARGET_COLD:.0f}x", p / c >= TARGET_COLD),
        (f"warm cache: plain / hooked (median)      {p / w:5.1f}x  >= {TARGET_WARM:.0f}x", p / w >= TARGET_WARM),
        (f"cached function callable after import    {load:5.2f} ms <= {TARGET_LOAD_MS:.0f} ms", load <= TARGET_LOAD_MS),
    ]
    for text, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
