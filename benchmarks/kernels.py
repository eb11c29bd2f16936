"""Scalar benchmark kernels for cuvil_bc.

Every kernel is a plain, undecorated Python function over scalars (int, float,
bool) and tuples of them, written only in the subset of Python that cuvil_bc
supports: arithmetic, comparisons, if/while/for-range loops, tuples, a few
builtins, the ``math`` module, module-level numeric constants and calls to
other module-level functions.

All integer intermediates stay well within int64, so results are identical
under CPython (unbounded ints), Numba (wrapping int64) and cuvil_bc (which
falls back to CPython on int64 overflow).

``BENCHMARKS`` maps each kernel name to its argument tuples: the default size
(roughly 0.2-1 s per call under CPython) and a ``--quick`` size (a few tens
of ms under CPython).  The runner loads this file as a fresh module once per
engine, so keep it free of side effects.
"""

import math

#: Modulus of the hash chain (module-level int constant read by a kernel).
MODULUS = 1_000_000_007
#: Squared escape radius of the Mandelbrot iteration (module-level float constant).
ESCAPE_RADIUS_SQ = 4.0
#: All-ones mask of a 32-bit word.
MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------
# Integer loops
# --------------------------------------------------------------------------


def sum_squares_mod(n: int, m: int) -> int:
    """Return (sum of i*i for i in [0, n)) mod m, reduced at every step."""
    s = 0
    for i in range(n):
        s = (s + i * i) % m
    return s


def collatz_total_steps(limit: int) -> int:
    """Return the total number of Collatz steps for every start in [1, limit)."""
    total = 0
    for start in range(1, limit):
        x = start
        while x != 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            total += 1
    return total


def gcd_sum(n: int) -> int:
    """Return the sum of gcd(i, j) over 1 <= i, j <= n (Euclid's loop)."""
    total = 0
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            a, b = i, j
            while b:
                a, b = b, a % b
            total += a
    return total


def count_primes(limit: int) -> int:
    """Return the number of primes below limit, by trial division."""
    if limit <= 2:
        return 0
    count = 1  # the prime 2
    for k in range(3, limit, 2):
        is_prime = True
        d = 3
        while d * d <= k:
            if k % d == 0:
                is_prime = False
                break
            d += 2
        if not is_prime:
            continue
        count += 1
    return count


def xorshift32_stats(n: int, seed: int) -> tuple[int, int, int]:
    """Run n steps of a 32-bit xorshift generator; return (min, max, low-bit count).

    Exercises shifts, xor, and, min/max and divmod.
    """
    x = seed & MASK32
    lo = MASK32
    hi = 0
    odd = 0
    for _ in range(n):
        x ^= (x << 13) & MASK32
        x ^= x >> 17
        x ^= (x << 5) & MASK32
        lo = min(lo, x)
        hi = max(hi, x)
        q, r = divmod(x, 2)
        odd += r
    return lo, hi, odd


# --------------------------------------------------------------------------
# Recursion, tuples, constants and helper calls
# --------------------------------------------------------------------------


def fib_recursive(n: int) -> int:
    """Return the n-th Fibonacci number by naive double recursion."""
    if n < 2:
        return n
    return fib_recursive(n - 1) + fib_recursive(n - 2)


def fib_pair_mod(n: int, m: int) -> tuple[int, int]:
    """Iterate (a, b) -> (b, (a + b) mod m) n times from (0, 1); return the pair."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, (a + b) % m
    return a, b


def mix(h: int, i: int) -> int:
    """Polynomial-hash step (helper called from ``hash_chain``)."""
    return (h * 31 + (i ^ (i >> 3))) % MODULUS


def hash_chain(n: int) -> int:
    """Fold ``mix`` over range(n), starting from 17."""
    h = 17
    for i in range(n):
        h = mix(h, i)
    return h


# --------------------------------------------------------------------------
# Float math
# --------------------------------------------------------------------------


def leibniz_pi(terms: int) -> float:
    """Approximate pi with the first ``terms`` terms of the Leibniz series."""
    s = 0.0
    sign = 1.0
    for k in range(terms):
        s += sign / (2 * k + 1)
        sign = -sign
    return 4.0 * s


def integrate_midpoint(a: float, b: float, steps: int) -> float:
    """Integrate sin(x) * exp(-x / 4) over [a, b] with the midpoint rule."""
    h = (b - a) / steps
    total = 0.0
    for i in range(steps):
        x = a + (i + 0.5) * h
        total += math.sin(x) * math.exp(-x / 4.0)
    return total * h


def newton_sqrt_error(n: int, max_iter: int) -> float:
    """Sum |newton_sqrt(x) - math.sqrt(x)| for x = 1..n, Newton from x0 = x."""
    err = 0.0
    for i in range(1, n + 1):
        x = float(i)
        g = x
        it = 0
        while it < max_iter:
            g_next = 0.5 * (g + x / g)
            if abs(g_next - g) <= 1e-15 * g:
                g = g_next
                break
            g = g_next
            it += 1
        err += abs(g - math.sqrt(x))
    return err


def mandelbrot_escape(width: int, height: int, max_iter: int) -> int:
    """Return the total escape-iteration count over a width x height grid."""
    x_min, x_max = -2.0, 0.5
    y_min, y_max = -1.25, 1.25
    dx = (x_max - x_min) / width
    dy = (y_max - y_min) / height
    total = 0
    for py in range(height):
        cy = y_min + py * dy
        for px in range(width):
            cx = x_min + px * dx
            zx = 0.0
            zy = 0.0
            n = 0
            while n < max_iter and zx * zx + zy * zy <= ESCAPE_RADIUS_SQ:
                zx, zy = zx * zx - zy * zy + cx, 2.0 * zx * zy + cy
                n += 1
            total += n
    return total


# --------------------------------------------------------------------------
# Registry: name -> (default args, quick args)
# --------------------------------------------------------------------------

Args = tuple[int | float, ...]

BENCHMARKS: dict[str, tuple[Args, Args]] = {
    "sum_squares_mod": ((4_000_000, 1_000_003), (300_000, 1_000_003)),
    "collatz_total_steps": ((60_000,), (6_000,)),
    "gcd_sum": ((1_400,), (300,)),
    "count_primes": ((300_000,), (30_000,)),
    "xorshift32_stats": ((800_000, 2_463_534_242), (60_000, 2_463_534_242)),
    "fib_recursive": ((31,), (24,)),
    "fib_pair_mod": ((4_000_000, 1_000_000_007), (300_000, 1_000_000_007)),
    "hash_chain": ((3_000_000,), (250_000,)),
    "leibniz_pi": ((4_000_000,), (300_000,)),
    "integrate_midpoint": ((0.0, 10.0, 2_000_000), (0.0, 10.0, 150_000)),
    "newton_sqrt_error": ((200_000, 60), (15_000, 60)),
    "mandelbrot_escape": ((240, 180, 200), (60, 45, 200)),
}
