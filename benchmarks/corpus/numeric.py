"""Small numeric kernels: test functions, fractals, quadrature, root finding."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def rosenbrock_sum(x):
    """The n-dimensional Rosenbrock function and its gradient norm."""
    n = len(x)
    f = 0.0
    g2 = 0.0
    for i in range(n - 1):
        f += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    for i in range(n):
        g = 0.0
        if i < n - 1:
            g += -400.0 * x[i] * (x[i + 1] - x[i] ** 2) - 2.0 * (1.0 - x[i])
        if i > 0:
            g += 200.0 * (x[i] - x[i - 1] ** 2)
        g2 += g * g
    return f, math.sqrt(g2)


def mandelbrot_counts(width, height, max_iter, x0, x1, y0, y1):
    """Escape-time counts over a grid of c values, scalar floats; returns an int32
    image and the number of points that never escaped."""
    out = np.zeros((height, width), dtype=np.int32)
    inside = 0
    for row in range(height):
        ci = y0 + (y1 - y0) * row / (height - 1)
        for col in range(width):
            cr = x0 + (x1 - x0) * col / (width - 1)
            zr = 0.0
            zi = 0.0
            k = 0
            while k < max_iter and zr**2 + zi**2 <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                k += 1
            out[row, col] = k
            if k == max_iter:
                inside += 1
    return out, inside


def simpson_integral(a, b, n):
    """Composite Simpson rule for exp(-x^2) cos(3x) + 1/(1 + x^2) on [a, b]."""
    h = (b - a) / n
    s = 0.0
    for i in range(n + 1):
        x = a + i * h
        fx = math.exp(-(x**2)) * math.cos(3.0 * x) + 1.0 / (1.0 + x * x)
        if i == 0 or i == n:
            w = 1
        elif i % 2 == 1:
            w = 4
        else:
            w = 2
        s += w * fx
    return s * h / 3.0


def newton_cube_roots(values, out):
    """Real cube roots by Newton's method (a while loop to a relative tolerance, capped
    iterations); writes out and returns the total iteration count."""
    total_iters = 0
    for i in range(len(values)):
        v = values[i]
        if v == 0.0:
            out[i] = 0.0
            continue
        x = abs(v) if abs(v) > 1.0 else 1.0
        it = 0
        while it < 100:
            fx = x * x * x - abs(v)
            step = fx / (3.0 * x * x)
            x -= step
            it += 1
            if abs(step) <= 1e-15 * abs(x):
                break
        out[i] = x if v > 0 else -x
        total_iters += it
    return total_iters


def clip_and_scale(x, lo, hi):
    """Clip a float array to [lo, hi] with min/max and rescale into [0, 1]; returns
    the new array and how many values were clipped."""
    n = x.shape[0]
    out = np.empty(n)
    clipped = 0
    span = hi - lo
    for i in range(n):
        v = x[i]
        c = min(max(v, lo), hi)
        if c != v:
            clipped += 1
        out[i] = (c - lo) / span
    return out, clipped


def collatz_longest(limit):
    """The start below `limit` with the longest Collatz chain (pure Python ints)."""
    best = 0
    best_n = 1
    for start in range(1, limit):
        n = start
        steps = 0
        while n != 1:
            if n % 2 == 0:
                n //= 2
            else:
                n = 3 * n + 1
            steps += 1
        if steps > best:
            best = steps
            best_n = start
    return best_n, best


CASES = [
    Case("rosenbrock_sum", rosenbrock_sum, lambda: (rng(1201).uniform(-2, 2, 100000),), "numeric"),
    Case("mandelbrot_counts", mandelbrot_counts, lambda: (120, 80, 100, -2.2, 0.8, -1.2, 1.2), "numeric"),
    Case("simpson_integral", simpson_integral, lambda: (-3.0, 5.0, 200000), "numeric"),
    Case("newton_cube_roots", newton_cube_roots, lambda: (rng(1204).normal(0, 50, 20000), np.zeros(20000)), "numeric"),
    Case("clip_and_scale", clip_and_scale, lambda: (rng(1205).normal(0, 1, 200000), -1.5, 1.5), "numeric"),
    Case("collatz_longest", collatz_longest, lambda: (30000,), "numeric"),
]
