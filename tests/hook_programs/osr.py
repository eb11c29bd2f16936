"""Loops that run long in their function's only call: on-stack replacement finishes
them natively (tests/test_hook_e2e.py runs this with CUVIL_BC_OSR=always, and compares
everything it prints with plain CPython's)."""

import sys
import traceback
import types

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


SHARED = iter(range(3 * N))


def shared(n):
    # The loop's iterator is a global's too: it must advance as CPython's does.
    s = 0
    for i in SHARED:
        s += i
        if i == n:
            break
    return s


K = 1


def scaled(n, again):
    # A function made from the same code with other globals (`other`) runs the loop
    # too, while this frame's entry is being compiled: each its own K.
    s = 0
    for i in range(n):
        s += K
        if i == n // 2 and again:
            s += other(n, 0)
    return s


other = types.FunctionType(scaled.__code__, {"K": 1000, "__builtins__": __builtins__})
other.__globals__["other"] = other


def deopts(n):
    s = 0
    for i in range(n):
        s += 1 // (n - 15000 - i)
    return s


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
print(shared(N), next(SHARED))
print(scaled(N, 1))
try:
    deopts(N)
except ZeroDivisionError as e:
    frame = e.__traceback__.tb_next.tb_frame  # the frame that raised: its locals as written
    print(frame.f_code.co_name, sorted(frame.f_locals))
lines = []
sys.settrace(lambda frame, event, arg: lines.append(event) or None)
print(traced(N))
sys.settrace(None)
print(len(lines) > 0)
