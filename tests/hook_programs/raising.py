"""A native function whose call ends in an exception CPython raises (uncaught)."""
import math


def root_of_sum(x):
    t = 0
    for i in range(3):
        t += x
    return math.sqrt(t)


for _ in range(300):
    root_of_sum(2)
print(root_of_sum(5))
root_of_sum(-5)  # ValueError: math domain error, from the function's last line
