"""What one test of an argument's type costs in a function's own bytecode, per Python
version: the cost floor of the prefix that `cuvil_bc.compile` puts before a function
whose call is known to fall back (fastpath.py). Handwritten functions, side by side in
one run, ns per call from an interpreted loop (best of 25 interleaved rounds):

  plain                 ``return xs[0] + xs[-1]``
  not in Known          the prefix's test: ``if xs not in K:`` (csrc/counter.c)
  sampled               the prefix while nothing is native: ``if not S and xs not in K:``
                        (a `Sampler` whose gap has grown: the ``in`` test is skipped)
  type(xs) is not T     a type test in bytecode
  xs is C               an identity test, the cheapest test there is

    python benchmarks/fallback_tests.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cuvil_bc.counters import Known, Sampler

SOURCE = """
def plain(xs):
    return xs[0] + xs[-1]

def known(xs):
    if xs not in K:
        return 0
    return xs[0] + xs[-1]

def sampled(xs):
    if not S and xs not in K:
        return 0
    return xs[0] + xs[-1]

def type_test(xs):
    if type(xs) is not T:
        return 0
    return xs[0] + xs[-1]

def identity(xs):
    if xs is C:
        return 0
    return xs[0] + xs[-1]
"""


def _loop(fn, arg, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(n):
        fn(arg)
    return (time.perf_counter() - start) / n * 1e9


def main() -> None:
    ns: dict[str, object] = {"K": Known(1, ((list,),)), "S": Sampler(1 << 40), "T": list, "C": object()}
    exec(SOURCE, ns)
    labels = {"plain": "plain", "known": "not in Known", "sampled": "sampled", "type_test": "type(xs) is not T", "identity": "xs is C"}
    best = {name: float("inf") for name in labels}
    for _ in range(25):
        for name in labels:
            best[name] = min(best[name], _loop(ns[name], [1, 2, 3], 100_000))
    print(f"Python {sys.version.split()[0]}; ns per call, best of 25 rounds")
    for name, label in labels.items():
        print(f"{label:20} {best[name]:6.1f}  {best[name] / best['plain']:5.2f}x plain")


if __name__ == "__main__":
    main()
