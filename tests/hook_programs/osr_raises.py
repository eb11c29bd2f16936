"""A loop whose exit asked the hook several times before it was entered (the first
asks time it), then raises in its entered rest: the traceback must be CPython's (on
3.13 it showed the exit's frame and the hook's own, found by a helper)."""

import sys
import traceback


def work(n):
    t = 0.5
    s = 0
    for i in range(n):
        s += (i * 7) % 13
        t = t * 0.999 + 0.25
        if i == n - 5:
            t = t / (i - i)
    return s, t


try:
    work(6_000_000)
except ZeroDivisionError:
    traceback.print_exc(file=sys.stdout)
