"""Array kernels for cuvil_bc (issue 4): plain functions that read NumPy arrays.

Only kernels that read their arrays: writing to arrays does not compile yet. Each
returns NumPy scalars, as CPython with NumPy does (Numba returns Python floats and
ints instead; the runner compares cuvil_bc with CPython, value and type).
"""

import math


def dot(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    return s


def laplacian_energy(m):
    """Sum of squared 5-point Laplacians over the interior of a 2-D grid."""
    n, k = m.shape
    e = 0.0
    for i in range(1, n - 1):
        for j in range(1, k - 1):
            d = m[i - 1, j] + m[i + 1, j] + m[i, j - 1] + m[i, j + 1] - 4.0 * m[i, j]
            e += d * d
    return e


def horner(coeffs, xs):
    """Sum over xs of the polynomial with these coefficients (a recurrence per x)."""
    total = 0.0
    for j in range(len(xs)):
        x = xs[j]
        acc = coeffs[0] * 0.0
        for i in range(len(coeffs)):
            acc = acc * x + coeffs[i]
        total += acc
    return total


def pairwise_mean_distance(pts):
    """Mean Euclidean distance between all pairs of 2-D points (rows of pts)."""
    n = pts.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pts[i, 0] - pts[j, 0]
            dy = pts[i, 1] - pts[j, 1]
            s += math.sqrt(dx * dx + dy * dy)
    return s / (n * (n - 1) / 2)


def count_in_band(v, lo, hi):
    """How many int64 values fall in [lo, hi), and their sum modulo a prime."""
    count = 0
    total = 0
    for i in range(len(v)):
        x = v[i]
        if lo <= x < hi:
            count += 1
            total = (total + x) % 1000003
    return count, total


def running_max_drawdown(prices):
    """Largest drop from a running maximum (one pass, a recurrence)."""
    peak = prices[0]
    worst = prices[0] * 0.0
    for i in range(len(prices)):
        p = prices[i]
        if p > peak:
            peak = p
        if peak - p > worst:
            worst = peak - p
    return worst


def make_inputs(quick: bool):  # type: ignore[no-untyped-def]
    import numpy as np

    rng = np.random.default_rng(12345)
    scale = 1 if quick else 4
    return {
        "dot": (rng.random(250_000 * scale), rng.random(250_000 * scale)),
        "laplacian_energy": (rng.random((250 * scale, 500)),),
        "horner": (rng.random(16) - 0.5, rng.random(20_000 * scale)),
        "pairwise_mean_distance": (rng.random((300 * scale, 2)),),
        "count_in_band": (rng.integers(-1000, 1000, 250_000 * scale), -100, 400),
        "running_max_drawdown": (np.cumsum(rng.random(250_000 * scale) - 0.5),),
    }
