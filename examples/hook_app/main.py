"""Run every computation and print the results (deterministic: no timings)."""

import sys

from . import kernels
from .report import shade_rows, summary


def picture(width, height):
    rows = []
    for y in range(height):
        ci = -1.2 + 2.4 * y / height
        rows.append([kernels.escape_time(-2.2 + 3.2 * x / width, ci) for x in range(width)])
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    scale = int(argv[0]) if argv else 10
    print("\n".join(shade_rows(picture(72, 24))))
    height = 20 * scale
    blocks = [(k * 2000 * scale, (k + 1) * 2000 * scale) for k in range(20)]
    results = {
        "mandelbrot sum": sum(kernels.row_total(-1.2 + 2.4 * y / height, 40 * scale) for y in range(height)),
        "longest collatz": max(kernels.longest_collatz(max(1, lo // 2), hi // 2) for lo, hi in blocks),
        "primes": sum(kernels.prime_count(lo, hi) for lo, hi in blocks),
        "integrals": [round(kernels.damped_integral(k / 4.0, 400 * scale), 12) for k in range(1, 41)],
        "walks": [kernels.lcg_walk(seed, 50 * scale) for seed in range(1, 6)],
    }
    print(summary(results))
    return 0
