"""Loops that run long in their function's only call: on-stack replacement finishes
them natively (tests/test_hook_e2e.py runs this with CUVIL_BC_OSR=always, and compares
everything it prints with plain CPython's)."""

import sys
import traceback

import numpy as np

N = 30000


def count(n):
    total = 0
    for i in range(n):
        total += (i * i) % 7
    return total


def grid(n, m):
    acc = 0.0
    for i in range(n):
        for j in range(m):
            acc += (i ^ j) * 0.5
    return acc


def until(n):
    k = 0
    s = 0
    while k < n:
        s += k % 3
        k += 1
    return s


def grows(n):
    # Past int64 near the end: native code hands the rest to the interpreter.
    x = 1
    for i in range(n):
        if i < n - 3:
            x = x * 3 % 1000003
        else:
            x = x * (1 << 40)
    return x


def fails(n):
    t = 0
    for i in range(n):
        t += 1000 // (n - 1 - i)
    return t


def fills(a, big):
    # Writes to an array; past int64 near the end (precise deoptimisation: the writes
    # made natively are not made again).
    x = 1
    for i in range(1, a.shape[0]):
        a[i] = i * 0.5 + a[i - 1]
        x = x * 7 % 1000003 if i < big else x * (1 << 50)
    return a[a.shape[0] - 1] + a[1], x


def keeps(n):
    found = []  # a list: not an argument native code takes
    t = 0
    for i in range(n):
        t += i % 5
    found.append(t)
    return found


def traced(n):
    t = 0
    for i in range(n):
        t += i
    return t


print(count(N))
print(grid(30, N // 30))
print(until(N))
print(grows(N))
try:
    fails(N)
except ZeroDivisionError:
    traceback.print_exc(file=sys.stdout)
a = np.zeros(N)
print(fills(a, N - 4), a[:3], a[-3:])
print(keeps(N))
lines = []
sys.settrace(lambda frame, event, arg: lines.append(event) or None)
print(traced(N))
sys.settrace(None)
print(len(lines) > 0)
