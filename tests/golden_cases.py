"""Source functions for the golden tests (tests/test_golden.py).

Each is a small, readable function exercising one part of the pipeline; the expected
text for every stage lives in tests/golden/<case>.<stage>.txt.
"""

from __future__ import annotations

import math

import numpy as np

LIMIT = 10


def arith(a, b):
    c = a * 2 + b
    c -= 3
    return -c // b, c % 7, not a


def folding(x):
    k = 2**10 + 3 * 4
    if k > 1000:
        return x + k
    return x - (1 // 1)


def loop_sum(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        s += i
    return s


def while_else(n):
    i = 0
    while i < n:
        if i * i > 50:
            break
        i += 1
    else:
        return -1
    return i


def chained(a, b, c):
    return a < b <= c


def swap(a, b):
    for _ in range(3):
        a, b = b, a + b
    return a, b


def globals_math(x):
    return math.sqrt(x) * LIMIT + math.pi


def mixed_return(x):
    if x > 0:
        return x
    if x < 0:
        return 0.5
    return None


def float_accumulate(n):
    t = 0
    for i in range(n):
        t += 0.5
    return t


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def optional_arg(x, y=None):
    if y is None:
        y = 10
    return x * y


def assert_message(x):
    assert x != 3, "x must not be 3"
    return x


def array_writes(a, k):
    for i in range(len(a)):
        if a[i] > k:
            raise ValueError("too big")
        a[i] = a[i] * 2
    return k


def complex_steps(c, n):
    z = 0j
    for k in range(n):
        z = z * z + c
        if abs(z) > 2.0:
            return k, z.real
    return n, (z / (1 - 0j)).imag


def dot_sqrt(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    return math.sqrt(s)


def smooth_into(out, a, k):
    for i in range(1, len(a) - 1):
        out[i] = (a[i - 1] + a[i] + a[i + 1]) * k
    return k


def running_sum(a):
    out = np.empty_like(a)
    acc = 0.0
    for i in range(len(a)):
        acc += a[i]
        out[i] = acc
    return out


def stencil3(out, a, w):
    for i in range(1, len(a) - 1):
        s = 0.0
        for d in range(3):  # unrolled (opt/unroll.py): the loop over i gets one block
            s += w[d] * a[i + d - 1]
        out[i] = s
    return out


def row_norms(out, m):
    for i in range(m.shape[0]):
        s = 0.0
        for j in range(m.shape[1]):  # only reads: a resume region (opt/regions.py)
            s += m[i, j] * m[i, j]
        out[i] = s
    return out


#: case name -> argument types for the typed stage
CASES = {
    "arith": "(int, int)",
    "folding": "(float)",
    "loop_sum": "(int)",
    "while_else": "(int)",
    "chained": "(int, float, int)",
    "swap": "(int, int)",
    "globals_math": "(float)",
    "mixed_return": "(int)",
    "float_accumulate": "(int)",
    "fib": "(int)",
    "optional_arg": "(int, None)",
    "assert_message": "(int)",
    "array_writes": "(array[float64, 1d], float)",
    "complex_steps": "(complex, int)",
    "dot_sqrt": "(array[float64, 1d, unit-stride], array[float64, 1d, unit-stride])",
    "smooth_into": "(array[float64, 1d, unit-stride], array[float64, 1d, unit-stride], float)",
    "running_sum": "(array[float64, 1d, unit-stride])",
    "stencil3": "(array[float64, 1d, unit-stride], array[float64, 1d, unit-stride], array[float64, 1d, unit-stride])",
    "row_norms": "(array[float64, 1d, unit-stride], array[float64, 2d, unit-stride])",
}
