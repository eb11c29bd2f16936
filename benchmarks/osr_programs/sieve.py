"""Primes below a limit with a NumPy sieve filled by hand, then a twin-prime count:
two loop nests writing and reading one array, in a function called once."""
import sys

import numpy as np


def twin_primes(limit):
    composite = np.zeros(limit, dtype=np.uint8)
    for p in range(2, limit):
        if composite[p] == 0:
            for multiple in range(p * p, limit, p):
                composite[multiple] = 1
    twins = 0
    for p in range(3, limit - 2):
        if composite[p] == 0 and composite[p + 2] == 0:
            twins += 1
    return twins


print(twin_primes(int(sys.argv[1]) if len(sys.argv) > 1 else 3000000))
