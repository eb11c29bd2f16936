"""Array kernels: cuvil_bc against Numba and CPython+NumPy, in one process (issue 4).

    python benchmarks/arrays.py [--quick]

Prints per-kernel steady-state times (best of 15 rounds, each round timing cuvil_bc
and Numba in turn) and first-call (compile) times, checks that
cuvil_bc's result equals CPython's (value and type) and, for the kernels that write
into arrays, that every array ends up with the same contents, and measures the throughput of
two threads running a compiled kernel at once against one (native code runs with the
GIL released). Targets (issue 4): steady-state geomean <= 1.0x Numba's, no kernel worse
than 1.5x, median compile latency <= 0.5x Numba's, 2 threads >= 1.8x one thread.
Two-thread throughput is also shown for Numba's nogil code and for the same kernel in C
(c_reference.py), as the machine's reference.
A missed target is printed, not an error; a wrong result exits with status 1.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import array_kernels as K  # noqa: E402
import c_reference  # noqa: E402

import cuvil_bc  # noqa: E402
from cuvil_bc import artifacts  # noqa: E402

artifacts.set_enabled(False)  # (first calls measure compiling, not loading an earlier run's code)

KERNELS = ["dot", "laplacian_energy", "horner", "pairwise_mean_distance", "count_in_band", "running_max_drawdown"] + K.WRITERS


def fresh(args):  # type: ignore[no-untyped-def]
    """Copies of the arrays among `args`, for a run whose writes are compared."""
    return tuple(a.copy() if hasattr(a, "tobytes") else a for a in args)


def same_outcome(expected, got, expected_args, got_args) -> bool:  # type: ignore[no-untyped-def]
    """Same result (value and type) and same final array contents."""
    if type(got) is not type(expected) or repr(got) != repr(expected):
        return False
    return all(
        a.tobytes() == b.tobytes() if hasattr(a, "tobytes") else True for a, b in zip(expected_args, got_args)
    )


def best_of(fn, args, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def best_of_interleaved(fns, args, repeats: int) -> list[float]:  # type: ignore[no-untyped-def]
    """Best time of each of `fns` over `repeats` rounds, each round timing every one
    once in turn: a drift in this machine's speed then hits all of them alike."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn(*args)
            out.append(time.perf_counter() - start)
    return [min(t) for t in times]


def first_call(fn, args) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def threads_speedup(fn, args, calls: int, reps: int = 20, warmup: int = 3) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Throughput of two threads calling `fn` against one thread making the same
    calls, as (best, median). Each round times `2 * calls` calls on this thread, then
    `calls` calls on each of two worker threads at once; the first `warmup` rounds
    are not counted.

    The two workers are started once and wait on a barrier between rounds: a thread
    created per round starts on this VM up to several ms late (the scheduler first
    queues it behind the busy worker), which measured thread creation, not the
    kernel, and hit short kernels hardest.

    best = fastest one-thread round / fastest two-thread round: each configuration's
    best of `reps`, as every other time in this file is taken, and the ratio the
    target is judged on. A two-thread round needs both vCPUs at once and a one-thread
    round only one, so the host's interference (a worker that waits for its vCPU, or
    both workers queued on one) lands on two-thread rounds and drags per-round ratios
    down for any code, Numba's and C's included; the best of each filters that out
    alike for both. median = the median of the per-round ratios, printed beside it to
    show that noise."""

    def work() -> None:
        for _ in range(calls):
            fn(*args)

    fn(*args)  # compiled before timing
    go, done = threading.Barrier(3), threading.Barrier(3)
    stopping = threading.Event()

    def worker() -> None:
        while True:
            go.wait()
            if stopping.is_set():
                return
            work()
            done.wait()

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(2)]
    for t in workers:
        t.start()
    ones, twos = [], []
    for _ in range(warmup + reps):
        start = time.perf_counter()
        work()
        work()
        ones.append(time.perf_counter() - start)  # 2 * calls on one thread
        start = time.perf_counter()
        go.wait()
        done.wait()
        twos.append(time.perf_counter() - start)  # 2 * calls on two threads
    stopping.set()
    go.wait()
    for t in workers:
        t.join()
    ones, twos = ones[warmup:], twos[warmup:]
    return min(ones) / min(twos), statistics.median(o / t for o, t in zip(ones, twos))


def ratio_text(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.2f}x (median round {pair[1]:.2f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    try:
        import numba
    except ImportError:
        numba = None
    inputs = K.make_inputs(opts.quick)
    repeats = 3 if opts.quick else 15
    rows, ratios, compile_ratios, wrong = [], [], [], False
    for name in KERNELS:
        fn, args = getattr(K, name), inputs[name]
        expected_t = best_of(fn, fresh(args), 1)
        expected_args = fresh(args)
        expected = fn(*expected_args)
        compiled = cuvil_bc.compile(fn)
        got_args = fresh(args)
        first_c, got = first_call(compiled, got_args)
        same = same_outcome(expected, got, expected_args, got_args)
        wrong |= not same
        native = compiled.stats["native_calls"] > 0
        steady_n = first_n = None
        if numba is not None:
            jitted = numba.njit(fn)
            first_n, _ = first_call(jitted, fresh(args))
            steady_c, steady_n = best_of_interleaved([compiled, jitted], args, repeats)
            ratios.append(steady_c / steady_n)
            compile_ratios.append(first_c / first_n)
        else:
            steady_c = best_of(compiled, args, repeats)
        rows.append((name, expected_t, steady_n, steady_c, first_c, first_n, same, native))

    print(f"Python {sys.version.split()[0]}, numba {'absent' if numba is None else numba.__version__}")
    print(f"{'kernel':24} {'cpython ms':>10} {'numba ms':>9} {'cuvil ms':>9} {'cuvil/numba':>11} {'1st cuvil ms':>12} {'1st numba ms':>12}  flags")
    for name, cp, sn, sc, fc, fnb, same, native in rows:
        ratio = f"{sc / sn:10.2f}x" if sn else "          -"
        flags = ("" if same else "MISMATCH ") + ("" if native else "INTERPRETED")
        print(f"{name:24} {cp * 1e3:10.1f} {sn * 1e3 if sn else float('nan'):9.2f} {sc * 1e3:9.2f} {ratio} {fc * 1e3:12.1f} {fnb * 1e3 if fnb else float('nan'):12.1f}  {flags}")
    # Two threads on two cores: a compute-bound kernel shows what releasing the GIL
    # gives; a memory-bound one also measures the machine's shared memory bandwidth.
    # Numba's nogil code, measured the same way, shows what this machine allows.
    calls = 4 if opts.quick else 12
    speed = threads_speedup(cuvil_bc.compile(K.pairwise_mean_distance), inputs["pairwise_mean_distance"], calls)
    memory_bound = threads_speedup(cuvil_bc.compile(K.laplacian_energy), inputs["laplacian_energy"], calls)
    print("2 threads / 1 thread throughput, GIL released, best round of each:")
    print(f"  pairwise_mean_distance {ratio_text(speed)} (compute-bound), laplacian_energy {ratio_text(memory_bound)} (memory-bound)")
    # pairwise_mean_distance runs vector square roots and gathers now; horner is a
    # scalar dependency chain: it tells the GIL apart from what the vector code shares.
    chain = threads_speedup(cuvil_bc.compile(K.horner), inputs["horner"], calls)
    print(f"  for comparison, a scalar chain:               horner {ratio_text(chain)}")
    if numba is not None:
        n_speed = threads_speedup(numba.njit(nogil=True)(K.pairwise_mean_distance), inputs["pairwise_mean_distance"], calls)
        n_memory = threads_speedup(numba.njit(nogil=True)(K.laplacian_energy), inputs["laplacian_energy"], calls)
        print(f"  the same for numba (nogil=True):              pairwise_mean_distance {ratio_text(n_speed)}, laplacian_energy {ratio_text(n_memory)}")
    # The machine's own limit for vector square roots: the kernel in C, vectorized by
    # the C compiler, two threads through ctypes (no GIL held in the calls).
    in_c = c_reference.build()
    if in_c is not None:
        c_speed = threads_speedup(in_c, inputs["pairwise_mean_distance"], calls)
        print(f"  the same kernel in C (vector square roots):   pairwise_mean_distance {ratio_text(c_speed)}")
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        worst = max(ratios)
        median_compile = statistics.median(compile_ratios)
        print("TARGETS")
        for label, value, target, ok in [
            ("steady-state geomean cuvil/numba", geo, "<= 1.00x", geo <= 1.0),
            ("worst kernel cuvil/numba", worst, "<= 1.50x", worst <= 1.5),
            ("median first-call latency cuvil/numba", median_compile, "<= 0.50x", median_compile <= 0.5),
            ("2 threads / 1 thread (compute-bound)", speed[0], ">= 1.80x", speed[0] >= 1.8),
        ]:
            print(f"  {'PASS' if ok else 'FAIL'}  {label:40} {value:5.2f}x  {target}")
    print(("  PASS" if not wrong else "  FAIL") + "  all kernels match CPython+NumPy (value and type)")
    raise SystemExit(1 if wrong else 0)


if __name__ == "__main__":
    main()
