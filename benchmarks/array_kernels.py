"""Array kernels for cuvil_bc (issue 4): plain functions over NumPy arrays.

The first group reads its arrays and returns NumPy scalars, as CPython with NumPy does
(Numba returns Python floats and ints instead; the runner compares cuvil_bc with
CPython, value and type). The second group (`WRITERS`) writes into arrays it is given:
the runner compares the arrays' final contents as well.
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


def jacobi_step(src, dst):
    """One 5-point Jacobi relaxation step of a 2-D grid, into dst."""
    n, m = src.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            dst[i, j] = 0.25 * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1])


def mandelbrot_into(out, x0, y0, step, maxiter):
    """Escape-time counts of the Mandelbrot set over a grid, written into out."""
    n, m = out.shape
    for i in range(n):
        cy = y0 + i * step
        for j in range(m):
            cx = x0 + j * step
            x = 0.0
            y = 0.0
            k = 0
            while k < maxiter and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                k += 1
            out[i, j] = k


def histogram(values, counts, lo, hi):
    """Counts of values in equal-width bins over [lo, hi): indirect accumulation."""
    nbins = len(counts)
    width = (hi - lo) / nbins
    for i in range(len(values)):
        k = int((values[i] - lo) / width)
        if 0 <= k < nbins:
            counts[k] += 1


def pairwise_distances(pts, out):
    """The full matrix of Euclidean distances between 2-D points, into out."""
    n = pts.shape[0]
    for i in range(n):
        for j in range(n):
            dx = pts[i, 0] - pts[j, 0]
            dy = pts[i, 1] - pts[j, 1]
            out[i, j] = math.sqrt(dx * dx + dy * dy)


def prefix_sums(a, out):
    """Running sums of a, into out (a recurrence through memory)."""
    acc = 0.0
    for i in range(len(a)):
        acc += a[i]
        out[i] = acc


def monte_carlo_flips(grid, seed, sweeps):
    """Random spin flips on a +1/-1 grid, driven by an integer LCG (Python ints)."""
    n, m = grid.shape
    state = seed
    flips = 0
    for _ in range(sweeps):
        for i in range(n):
            for j in range(m):
                state = (state * 1103515245 + 12345) & 0x7FFFFFFF
                neighbours = grid[(i + 1) % n, j] + grid[i - 1, j] + grid[i, (j + 1) % m] + grid[i, j - 1]
                if neighbours * grid[i, j] <= 0 or state < 1 << 27:
                    grid[i, j] = -grid[i, j]
                    flips += 1
    return flips, state


WRITERS = ["jacobi_step", "mandelbrot_into", "histogram", "pairwise_distances", "prefix_sums", "monte_carlo_flips"]


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
        "jacobi_step": (rng.random((250 * scale, 500)), np.zeros((250 * scale, 500))),
        "mandelbrot_into": (np.zeros((60 * scale, 120), dtype=np.int64), -2.0, -1.0, 2.0 / 120, 100),
        "histogram": (rng.normal(0.0, 1.0, 250_000 * scale), np.zeros(64, dtype=np.int64), -3.0, 3.0),
        "pairwise_distances": (rng.random((200 * scale, 2)), np.zeros((200 * scale, 200 * scale))),
        "prefix_sums": (rng.random(250_000 * scale), np.zeros(250_000 * scale)),
        "monte_carlo_flips": (np.where(rng.random((100 * scale, 100)) < 0.5, 1, -1).astype(np.int64), 12345, 5),
    }
