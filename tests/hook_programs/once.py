"""Loops that get hot in their function's first call. `setup` is called once: native
code could only start at a next call, so the hook leaves it alone and loads nothing.
`step` is called again: its second call makes it hot, and the calls after that run
natively. `--once` runs only `setup`, and prints whether the compiler's front end (or
LLVM) was loaded, which plain CPython answers with False."""

import sys


def setup(n):
    total = 0
    for i in range(n):
        total += (i * i) % 7
    return total


def step(n):
    total = 0.0
    for i in range(n):
        total += (i % 11) * 0.25
    return total


print(setup(20000))
if sys.argv[1:] == ["--once"]:
    print(any(m in sys.modules for m in ("bytecode", "llvmlite", "cuvil_bc.ir")))
else:
    for k in range(4):
        print(step(5000 + k))
