"""Native functions whose calls end in exceptions that the program catches and whose
tracebacks it formats itself (as logging.exception does)."""
import math
import traceback

import numpy as np


def root(x):
    s = 0.0
    for i in range(x):
        s += math.sqrt(i)
    return math.sqrt(s - (1000 if x == 1 else 0))  # raises for x == 1: deoptimised, re-run


def outer(x):
    return root(x) + 1


def bump(a, n):
    for i in range(n):
        a[i] = a[i] + 1.0  # raises past the end: resumed in the middle of the loop
    return a[0]


a = np.zeros(5)
for _ in range(300):
    outer(10)
    bump(a, 5)
for call in (lambda: outer(1), lambda: bump(a, 7), lambda: root("s")):
    try:
        call()
    except Exception:
        print(traceback.format_exc())
print(a)
