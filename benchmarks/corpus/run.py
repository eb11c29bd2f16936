"""The kernel corpus: cuvil_bc against CPython and Numba on loop kernels written the way
scientists and engineers write them (one module per domain, see CASES in each).

    python benchmarks/corpus/run.py [--only NAME,DOMAIN,...] [--quick] [--no-numba] [--json out.json]

For every case, in one process:

1. exactness: the plain function (CPython) and `cuvil_bc.compile(func)` run on separate
   copies of the same arguments. The compiled function is called a few times (the
   first call compiles); every one of those calls must give the same result as
   CPython: same type; floats bit for bit (NaN and -0.0 count); tuples and lists item
   by item; arrays by dtype, shape and bytes; ints by value; the same exception (type
   and message) if one is raised; and every array argument must end with the same
   bytes;
2. native: the dispatcher's `stats`. A kernel is native when native_calls > 0 and most
   of its timed calls ran natively (not deoptimised or interpreted); otherwise the
   first lines of `explain()` say why;
3. Numba (`numba.njit(func)`), optional: compiled or "n/a" with the error's first
   line, and whether its result is exact by the same rules ("no*": the values are
   the same but a scalar's type is not, e.g. float for np.float64);
4. timing: best-of-N steady-state time per call, cuvil_bc and Numba alternated in
   rounds (each round timing enough calls to last >= 20 ms), CPython timed one call
   in each of the first rounds. Cases marked `fresh_args` get fresh copies of their
   arrays for every call (made before the timed region); the others are timed on the
   same arrays over and over.

Prints one line per kernel and a summary with the targets (geomean <= 1.0x Numba,
no kernel above 2x, 100% exact, >= 95% native, kernels where Numba is inexact within
1.5x of Numba). Exit status 1 if any kernel is not exact (or could not be checked),
else 0: a missed speed target is printed, not an error.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import struct
import sys
import time
import traceback
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent
REPO_ROOT = CORPUS_DIR.parents[1]
sys.path.insert(0, str(CORPUS_DIR))
try:
    import cuvil_bc  # noqa: E402
except ImportError:  # not installed: use the checkout
    sys.path.append(str(REPO_ROOT))
    import cuvil_bc  # noqa: E402

import numpy as np  # noqa: E402

from cuvil_bc import artifacts  # noqa: E402

artifacts.set_enabled(False)  # (first calls measure compiling, not an earlier run's cache)

MODULES = [
    "physics",
    "image",
    "signals",
    "finance",
    "stats",
    "linalg",
    "graphs",
    "dynprog",
    "rng_hash",
    "geometry",
    "automata",
    "numeric",
]

# Targets (the issue's): cuvil_bc time / Numba time.
TARGET_GEOMEAN = 1.0
TARGET_WORST = 2.0
TARGET_NATIVE = 0.95
TARGET_NUMBA_INEXACT = 1.5

WARM_CALLS = 4  # compiled calls checked for exactness (the first one compiles)
FRESH_BYTES_CAP = 256 << 20  # memory for pre-made argument copies, per batch


# -- comparing outcomes ---------------------------------------------------------------


def fresh(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


def difference(x: Any, y: Any, path: str = "result", loose: bool = False) -> str | None:
    """Why `y` is not exactly `x` (None when it is). `loose`: NumPy and Python scalars
    of the same value count as the same (for telling Numba's type-only differences)."""
    if loose:
        if isinstance(x, np.generic) and not isinstance(x, np.ndarray):
            x = x.item()
        if isinstance(y, np.generic) and not isinstance(y, np.ndarray):
            y = y.item()
        if type(x) is not type(y) and isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if isinstance(x, bool) or isinstance(y, bool):
                return f"{path}: type {type(x).__name__} vs {type(y).__name__}"
            if isinstance(x, float) or isinstance(y, float):
                return f"{path}: type {type(x).__name__} vs {type(y).__name__}"
    if type(x) is not type(y):
        return f"{path}: type {type(x).__name__} vs {type(y).__name__} ({_short(x)} vs {_short(y)})"
    if isinstance(x, np.ndarray):
        if x.dtype != y.dtype:
            return f"{path}: dtype {x.dtype} vs {y.dtype}"
        if x.shape != y.shape:
            return f"{path}: shape {x.shape} vs {y.shape}"
        if x.tobytes() != y.tobytes():
            return f"{path}: array contents differ ({_array_diff(x, y)})"
        return None
    if isinstance(x, (tuple, list)):
        if len(x) != len(y):
            return f"{path}: length {len(x)} vs {len(y)}"
        for i, (a, b) in enumerate(zip(x, y)):
            d = difference(a, b, f"{path}[{i}]", loose)
            if d:
                return d
        return None
    if isinstance(x, float):  # float and np.float64
        if _float_bits(x) != _float_bits(y):
            return f"{path}: {x!r} vs {y!r}"
        return None
    if isinstance(x, complex):
        if _float_bits(x.real) + _float_bits(x.imag) != _float_bits(y.real) + _float_bits(y.imag):
            return f"{path}: {x!r} vs {y!r}"
        return None
    if isinstance(x, np.generic):  # np.float32, np.int32, ... (same type already)
        if x.tobytes() != y.tobytes():
            return f"{path}: {x!r} vs {y!r}"
        return None
    if isinstance(x, int):
        if x != y:
            return f"{path}: {x!r} vs {y!r}"
        return None
    if x is None:
        return None
    if x != y:
        return f"{path}: {_short(x)} vs {_short(y)}"
    return None


def _short(x: Any) -> str:
    r = repr(x).replace("\n", " ")
    return r if len(r) < 70 else r[:67] + "..."


def _array_diff(x: np.ndarray, y: np.ndarray) -> str:
    xb = np.frombuffer(x.tobytes(), np.uint8).reshape(-1, x.itemsize)
    yb = np.frombuffer(y.tobytes(), np.uint8).reshape(-1, y.itemsize)
    bad = np.nonzero((xb != yb).any(axis=1))[0]
    first = int(bad[0])
    idx = tuple(int(i) for i in np.unravel_index(first, x.shape))
    fx = np.ascontiguousarray(x).reshape(-1)[first]
    fy = np.ascontiguousarray(y).reshape(-1)[first]
    return f"{len(bad)} of {x.size} elements, first at {idx}: {fx!r} vs {fy!r}"


class Outcome:
    """What one call did: its result or exception, and the arrays it was given."""

    def __init__(self, fn: Any, args: tuple) -> None:
        self.args = args
        self.result: Any = None
        self.exc: tuple[str, str] | None = None
        try:
            self.result = fn(*args)
        except Exception as e:  # noqa: BLE001 - any exception is an outcome
            self.exc = (type(e).__name__, str(e))


def outcome_difference(ref: Outcome, got: Outcome, loose: bool = False) -> str | None:
    if ref.exc or got.exc:
        if ref.exc != got.exc:
            return f"exception: {ref.exc} vs {got.exc}"
    else:
        d = difference(ref.result, got.result, loose=loose)
        if d:
            return d
    for i, (a, b) in enumerate(zip(ref.args, got.args)):
        if isinstance(a, np.ndarray):
            d = difference(a, b, f"argument {i} after the call")
            if d:
                return d
    return None


# -- timing ---------------------------------------------------------------------------


def _args_bytes(args: tuple) -> int:
    return sum(a.nbytes for a in args if isinstance(a, np.ndarray))


def _swallowing(fn: Any) -> Any:
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001
            return None

    return call


class Timer:
    """Times one implementation: batches of `calls` calls lasting >= `min_time`."""

    def __init__(self, fn: Any, base: tuple, fresh_args: bool, min_time: float, raises: bool = False) -> None:
        if raises:  # the kernel raises (as CPython does): time the calls with the raise
            fn = _swallowing(fn)
        self.fn = fn
        self.base = base
        self.fresh_args = fresh_args
        self.args = fresh(base)
        self.best = math.inf
        start = time.perf_counter()
        self.fn(*(fresh(base) if fresh_args else self.args))
        one = max(time.perf_counter() - start, 1e-7)
        self.calls = max(1, min(200000, math.ceil(min_time / one)))
        if fresh_args:
            cap = max(1, FRESH_BYTES_CAP // max(1, _args_bytes(base)))
            self.calls = min(self.calls, cap)

    def round(self) -> None:
        fn = self.fn
        calls = self.calls
        if self.fresh_args:
            arglists = [fresh(self.base) for _ in range(calls)]
            gc.disable()
            try:
                start = time.perf_counter()
                for a in arglists:
                    fn(*a)
                elapsed = time.perf_counter() - start
            finally:
                gc.enable()
            del arglists
        else:
            args = self.args
            gc.disable()
            try:
                start = time.perf_counter()
                for _ in range(calls):
                    fn(*args)
                elapsed = time.perf_counter() - start
            finally:
                gc.enable()
        self.best = min(self.best, elapsed / calls)


# -- one case -------------------------------------------------------------------------


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


class NumbaFailed(Exception):
    pass


def numba_reason(text: str) -> str:
    """The informative part of a Numba error: its first line and the line that names
    what failed (the `>>> op(types)` signature, or the line after the first)."""
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    if not lines:
        return ""
    detail = next((l for l in lines if l.startswith(">>>")), lines[1] if len(lines) > 1 else "")
    out = lines[0] + (f" | {detail}" if detail else "")
    return out if len(out) < 160 else out[:157] + "..."


def run_case(case: Any, numba: Any, opts: argparse.Namespace) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "name": case.name,
        "domain": case.domain,
        "native": False,
        "exact": False,
        "numba_exact": "n/a",
        "cuvil_ms": None,
        "numba_ms": None,
        "cpython_ms": None,
        "ratio": None,
        "speedup": None,
        "deopts": None,
        "error": None,
    }
    stage = "make_args"
    try:
        base = case.make_args()
        stage = "CPython"
        ref = Outcome(case.func, fresh(base))
        if ref.exc:
            rec["cpython_exception"] = list(ref.exc)
        stage = "cuvil_bc.compile"
        d = cuvil_bc.compile(case.func)
        stage = "cuvil_bc calls"
        problems = []
        t0 = time.perf_counter()
        for k in range(WARM_CALLS):
            got = Outcome(d, fresh(base))
            if k == 0:
                rec["cuvil_first_call_ms"] = (time.perf_counter() - t0) * 1e3
            diff = outcome_difference(ref, got)
            if diff:
                problems.append(f"call {k + 1}: {diff}")
        rec["exact"] = not problems
        rec["exact_detail"] = problems[:3]
        if ref.exc:
            rec["exception_matches"] = not problems

        numba_fn = None
        if numba is not None:
            stage = "numba"
            try:
                nb = numba.njit(case.func)
                t0 = time.perf_counter()
                got = Outcome(nb, fresh(base))
                rec["numba_first_call_ms"] = (time.perf_counter() - t0) * 1e3
                if got.exc and not ref.exc:
                    raise NumbaFailed(f"{got.exc[0]}: {numba_reason(got.exc[1])}")
                got = Outcome(nb, fresh(base))
                strict = outcome_difference(ref, got)
                if strict is None:
                    rec["numba_exact"] = "yes"
                elif outcome_difference(ref, got, loose=True) is None:
                    rec["numba_exact"] = "no*"
                else:
                    rec["numba_exact"] = "no"
                rec["numba_detail"] = strict
                numba_fn = nb
            except NumbaFailed as e:
                rec["numba_exact"] = "n/a"
                rec["numba_error"] = str(e)
            except Exception as e:  # noqa: BLE001
                rec["numba_exact"] = "n/a"
                rec["numba_error"] = first_line(e)

        stage = "timing"
        before = dict(d.stats)
        rounds = opts.rounds
        min_time = opts.min_time
        raises = ref.exc is not None
        cv = Timer(d, base, case.fresh_args, min_time, raises)
        nbt = Timer(numba_fn, base, case.fresh_args, min_time, raises) if numba_fn is not None else None
        py = Timer(case.func, base, case.fresh_args, 0.0, raises)
        py.calls = 1
        py_rounds = opts.py_rounds
        for r in range(rounds):
            order = [cv, nbt] if r % 2 == 0 else [nbt, cv]
            for t in order:
                if t is not None:
                    t.round()
            if r < py_rounds:
                py.round()
        after = dict(d.stats)
        native_calls = after["native_calls"] - before["native_calls"]
        interpreted = after["interpreted_calls"] - before["interpreted_calls"]
        deopts = after["deopts"] - before["deopts"]
        rec["timed_native_calls"] = native_calls
        rec["timed_interpreted_calls"] = interpreted
        rec["timed_deopts"] = deopts
        rec["deopts"] = after["deopts"]
        rec["stats"] = {k: after[k] for k in after}
        rec["native"] = after["native_calls"] > 0 and native_calls > interpreted
        if not rec["native"]:
            rec["reason"] = "\n".join(d.explain().splitlines()[:5])
        rec["cuvil_ms"] = cv.best * 1e3
        rec["cpython_ms"] = py.best * 1e3
        rec["speedup"] = py.best / cv.best
        if nbt is not None:
            rec["numba_ms"] = nbt.best * 1e3
            rec["ratio"] = cv.best / nbt.best
    except Exception as e:  # noqa: BLE001 - report and go on
        rec["error"] = f"{stage}: {first_line(e)}"
        rec["traceback"] = traceback.format_exc()
        if stage in ("make_args", "CPython", "cuvil_bc.compile", "cuvil_bc calls"):
            rec["exact"] = False
    return rec


# -- report ---------------------------------------------------------------------------


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.4f}"


def _x(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


HEADER = (
    f"{'kernel':32s} {'domain':9s} {'native':6s} {'exact':5s} {'nb-exact':8s} "
    f"{'cuvil ms':>9s} {'numba ms':>9s} {'CPython ms':>10s} {'cuv/nb':>7s} {'speedup':>8s} {'deopts':>6s}"
)


def line(rec: dict[str, Any]) -> str:
    s = (
        f"{rec['name']:32s} {rec['domain']:9s} {'yes' if rec['native'] else 'NO':6s} "
        f"{'yes' if rec['exact'] else 'NO':5s} {rec['numba_exact']:8s} "
        f"{_ms(rec['cuvil_ms']):>9s} {_ms(rec['numba_ms']):>9s} {_ms(rec['cpython_ms']):>10s} "
        f"{_x(rec['ratio']):>7s} {_x(rec['speedup']):>8s} "
        f"{'-' if rec['deopts'] is None else int(rec['deopts']):>6}"
    )
    if rec["error"]:
        s += f"   ERROR {rec['error']}"
    return s


def geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summary(recs: list[dict[str, Any]]) -> list[str]:
    out = []
    n = len(recs)
    native = [r for r in recs if r["native"]]
    exact = [r for r in recs if r["exact"]]
    errors = [r for r in recs if r["error"]]
    both = [r for r in recs if r["ratio"] is not None]
    both_native = [r for r in both if r["native"]]
    g_all = geomean([r["ratio"] for r in both])
    g_native = geomean([r["ratio"] for r in both_native])
    above = [r for r in both if r["ratio"] > TARGET_WORST]
    nb_inexact = [r for r in both if r["numba_exact"] in ("no", "no*")]
    nb_inexact_slow = [r for r in nb_inexact if r["ratio"] > TARGET_NUMBA_INEXACT]
    nb_value = [r for r in both if r["numba_exact"] == "no"]
    nb_value_ok = [r for r in nb_value if r["ratio"] <= TARGET_NUMBA_INEXACT]
    pct = lambda k: 100.0 * k / n if n else 0.0  # noqa: E731
    out.append("")
    out.append(f"kernels: {n}" + (f" ({len(errors)} with errors)" if errors else ""))
    out.append(f"native:  {len(native)}/{n} ({pct(len(native)):.1f}%)")
    out.append(f"exact:   {len(exact)}/{n} ({pct(len(exact)):.1f}%)")
    out.append(
        f"numba:   ran on {len(both)}; exact on {sum(r['numba_exact'] == 'yes' for r in recs)}, "
        f"inexact on {len(nb_inexact)} (of which only a scalar's type: {sum(r['numba_exact'] == 'no*' for r in recs)}), "
        f"n/a on {sum(r['numba_exact'] == 'n/a' for r in recs)}"
    )
    out.append(f"geomean cuvil/numba: {_x(g_all)} over {len(both)} kernels; {_x(g_native)} over the {len(both_native)} native ones")
    sp = [r["speedup"] for r in recs if r["speedup"]]
    out.append(f"geomean CPython/cuvil speedup: {_x(geomean(sp))} over {len(sp)} kernels")
    out.append(f"kernels above {TARGET_WORST:.1f}x Numba: {len(above)}" + (f" ({', '.join(r['name'] for r in above)})" if above else ""))
    slowest = sorted(both, key=lambda r: -r["ratio"])[:5]
    out.append("slowest 5 by cuvil/numba: " + ", ".join(f"{r['name']} {r['ratio']:.2f}x" for r in slowest))
    not_native = [r for r in recs if not r["native"]]
    if not_native:
        out.append("")
        out.append("not native:")
        for r in not_native:
            reason = r.get("reason") or r.get("error") or "?"
            out.append(f"  {r['name']}:")
            out.extend("    " + l for l in reason.splitlines())
    inexact = [r for r in recs if not r["exact"]]
    if inexact:
        out.append("")
        out.append("NOT EXACT (cuvil_bc vs CPython):")
        for r in inexact:
            detail = "; ".join(r.get("exact_detail") or []) or r.get("error") or "?"
            out.append(f"  {r['name']}: {detail}")
    nb_fail = [r for r in recs if r.get("numba_error")]
    if nb_fail:
        out.append("")
        out.append("numba n/a:")
        for r in nb_fail:
            out.append(f"  {r['name']}: {r['numba_error']}")
    out.append("")

    def target(ok: bool, text: str) -> None:
        out.append(f"  {'PASS' if ok else 'FAIL'}  {text}")

    out.append("targets:")
    target(g_all is not None and g_all <= TARGET_GEOMEAN, f"geomean cuvil/numba {_x(g_all)} (target <= {TARGET_GEOMEAN:.1f}x)")
    target(both != [] and not above, f"kernels above {TARGET_WORST:.1f}x Numba: {len(above)} (target 0)")
    target(len(exact) == n, f"exact {pct(len(exact)):.1f}% (target 100%)")
    target(n > 0 and len(native) >= TARGET_NATIVE * n, f"native {pct(len(native)):.1f}% (target >= {100 * TARGET_NATIVE:.0f}%)")
    target(
        not nb_inexact_slow,
        f"kernels where Numba is inexact within {TARGET_NUMBA_INEXACT:.1f}x of Numba: "
        f"{len(nb_inexact) - len(nb_inexact_slow)}/{len(nb_inexact)}"
        + (f" (over: {', '.join(f'{r['name']} {r['ratio']:.2f}x' for r in nb_inexact_slow)})" if nb_inexact_slow else ""),
    )
    out.append(
        f"        (counting only kernels where Numba's values differ, not just a scalar's type: "
        f"{len(nb_value_ok)}/{len(nb_value)} within {TARGET_NUMBA_INEXACT:.1f}x)"
    )
    return out


def load_cases(only: set[str] | None) -> list[Any]:
    cases = []
    seen: set[str] = set()
    for m in MODULES:
        mod = importlib.import_module(m)
        for c in mod.CASES:
            if c.name in seen:
                raise SystemExit(f"duplicate case name {c.name}")
            seen.add(c.name)
            if only is None or c.name in only or c.domain in only:
                cases.append(c)
    if only:
        unknown = only - seen - {c.domain for c in cases} - set(MODULES)
        if unknown:
            raise SystemExit(f"unknown kernel or domain: {', '.join(sorted(unknown))}")
    return cases


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", help="comma-separated kernel names or domains")
    p.add_argument("--quick", action="store_true", help="fewer, shorter timing rounds")
    p.add_argument("--no-numba", action="store_true", help="skip Numba")
    p.add_argument("--json", help="write per-kernel records here")
    opts = p.parse_args(argv)
    only = None
    if opts.only:
        only = {x.strip() for arg in opts.only for x in arg.split(",") if x.strip()}
    opts.rounds, opts.py_rounds, opts.min_time = (3, 1, 0.005) if opts.quick else (7, 3, 0.02)

    numba = None
    if not opts.no_numba:
        try:
            import numba  # noqa: F811
        except ImportError as e:
            print(f"note: numba not available ({e}); running without it")
            numba = None
    cases = load_cases(only)
    print(
        f"cuvil_bc {cuvil_bc.__version__}, Python {sys.version.split()[0]}, NumPy {np.__version__}, "
        f"Numba {numba.__version__ if numba else 'off'}; {len(cases)} kernels, "
        f"{opts.rounds} rounds (CPython {opts.py_rounds}), batches >= {opts.min_time * 1e3:.0f} ms"
    )
    print(HEADER)
    recs = []
    for case in cases:
        rec = run_case(case, numba, opts)
        recs.append(rec)
        print(line(rec), flush=True)
    for text in summary(recs):
        print(text)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(recs, f, indent=1, default=str)
    return 0 if all(r["exact"] for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
