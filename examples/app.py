"""A small numeric program accelerated with cuvil_bc.

It counts primes, integrates a function, iterates a recurrence with big-int overflow
(cuvil_bc hands that call back to CPython, so the answer is still exact) and renders a
Mandelbrot set as text, first interpreted and then compiled, checks that both give the
same answers and prints the speedup.

    python examples/app.py
"""

from __future__ import annotations

import math
import time

import cuvil_bc

WIDTH = 60
HEIGHT = 20
MAX_ITER = 200


def count_primes(n):
    count = 0
    for k in range(2, n):
        d = 2
        prime = True
        while d * d <= k:
            if k % d == 0:
                prime = False
                break
            d += 1
        if prime:
            count += 1
    return count


def integrate(a, b, steps):
    h = (b - a) / steps
    total = 0.0
    for i in range(steps):
        x = a + (i + 0.5) * h
        total += math.sin(x) * math.exp(-x / 3.0)
    return total * h


def escape(cr, ci):
    zr, zi = 0.0, 0.0
    for n in range(MAX_ITER):
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
        if zr * zr + zi * zi > 4.0:
            return n
    return MAX_ITER


def mandelbrot_rows():
    total = 0
    for y in range(HEIGHT):
        for x in range(WIDTH):
            total += escape(-2.2 + 3.2 * x / WIDTH, -1.2 + 2.4 * y / HEIGHT)
    return total


def fib_pair(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a  # fib(100) does not fit in int64: CPython finishes this call


def render():
    rows = []
    for y in range(HEIGHT):
        rows.append("".join(" .:-=+*#%@"[min(9, escape(-2.2 + 3.2 * x / WIDTH, -1.2 + 2.4 * y / HEIGHT) // 20)] for x in range(WIDTH)))
    return "\n".join(rows)


def work(primes, integ, mandel, fib):
    return primes(150000), integ(0.0, 10.0, 4_000_000), mandel(), fib(50), fib(100)


def main() -> None:
    print(render())
    start = time.perf_counter()
    expected = work(count_primes, integrate, mandelbrot_rows, fib_pair)
    interpreted = time.perf_counter() - start

    compiled = [cuvil_bc.compile(f) for f in (count_primes, integrate, mandelbrot_rows, fib_pair)]
    # mandelbrot_rows calls escape(): cuvil_bc compiles the callee into the same native code.
    start = time.perf_counter()
    got = work(*compiled)
    native = time.perf_counter() - start

    print(f"primes below 150000: {got[0]}")
    print(f"integral:           {got[1]!r}")
    print(f"mandelbrot sum:     {got[2]}")
    print(f"fib(50), fib(100):  {got[3]}, {got[4]}")
    same = all(repr(a) == repr(b) and type(a) is type(b) for a, b in zip(expected, got))
    print(f"same results as CPython: {same}")
    print(f"CPython {interpreted:.2f} s, cuvil_bc {native:.2f} s (compile time included): {interpreted / native:.1f}x")
    for d in compiled:
        print(f"  {d.__name__}: {dict(d.stats)}")
    if not same:
        raise SystemExit("results differ from CPython")


if __name__ == "__main__":
    main()
