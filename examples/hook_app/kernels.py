"""The numeric work: plain functions over ints and floats, called many times."""

import math

MAX_ITER = 500


def escape_time(cr, ci):
    """Iterations before z -> z*z + c leaves the disc of radius 2 (MAX_ITER if never)."""
    zr = zi = 0.0
    for n in range(MAX_ITER):
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
        if zr * zr + zi * zi > 4.0:
            return n
    return MAX_ITER


def row_total(ci, width):
    """Sum of escape times along one row of the picture."""
    total = 0
    for x in range(width):
        total += escape_time(-2.2 + 3.2 * x / width, ci)
    return total


def collatz_length(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def longest_collatz(lo, hi):
    """(steps, start) of the longest Collatz chain starting in [lo, hi)."""
    best, best_n = -1, lo
    for n in range(lo, hi):
        s = collatz_length(n)
        if s > best:
            best, best_n = s, n
    return best, best_n


def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


def prime_count(lo, hi):
    count = 0
    for n in range(lo, hi):
        if is_prime(n):
            count += 1
    return count


def damped_integral(k, steps):
    """Midpoint rule for the integral of sin(k x) exp(-x / 4) over [0, 10]."""
    h = 10.0 / steps
    total = 0.0
    for i in range(steps):
        x = (i + 0.5) * h
        total += math.sin(k * x) * math.exp(-x / 4.0)
    return total * h


def lcg_walk(seed, steps):
    """A random walk driven by a 64-bit linear congruential generator. Its products
    exceed int64, which CPython handles with big ints; so does cuvil_bc, by handing
    such a call back to the interpreter."""
    x = seed
    pos = 0
    for _ in range(steps):
        x = (x * 6364136223846793005 + 1442695040888963407) % 18446744073709551616
        pos += 1 if (x >> 33) & 1 else -1
    return pos, x
