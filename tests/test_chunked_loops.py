"""Innermost ``for ... in range()`` loops run in chunks of `CHUNK` iterations, testing
for signals between chunks (loops.Chunked). Every value must be CPython's whatever
the trip count: exactly a chunk, one more or less, several chunks, a negative step, a
break or a deoptimisation after the first chunk (a writer resumes at the header of a
later chunk), and the loop's values after it (for-else, the last item)."""

from __future__ import annotations

import numpy as np
import pytest

from cuvil_bc.lower.loops import CHUNK
from cuvil_bc.testing import check, compile_source

SUM = "def f(a, b, s):\n    t = 0\n    last = -1\n    for i in range(a, b, s):\n        t += i * 3 - (i % 7)\n        last = i\n    return t, last\n"
FLOATS = "def f(n):\n    s = 0.0\n    for k in range(n):\n        s += 1.0 / (2 * k + 1)\n    return s\n"
BREAK = "def f(n, stop):\n    t = 0\n    last = -1\n    for i in range(n):\n        if i == stop:\n            break\n        t += i\n        last = i\n    else:\n        t = -t\n    return t, last\n"
NESTED = "def f(m, n):\n    t = 0\n    for j in range(m):\n        for i in range(n):\n            t += i ^ j\n    return t\n"
# The int64 sum overflows halfway through the 5th chunk; CPython finishes the call.
WRITER = "def f(a, n, big):\n    t = 0\n    for i in range(n):\n        t += big\n        a[i % 3] = i\n    return t\n"


@pytest.mark.parametrize(
    "args",
    [
        (0, CHUNK, 1),
        (0, CHUNK - 1, 1),
        (0, CHUNK + 1, 1),
        (5, 3 * CHUNK + 7, 1),
        (50_000, -3, -7),
        (-40_000, 40_000, 3),
        (0, 10, 1),
        (0, 0, 1),
    ],
)
def test_range_loops_across_chunks(args: tuple[int, int, int]) -> None:
    f = compile_source(SUM)
    check(f, *args)


def test_a_float_reduction_across_chunks() -> None:
    f = compile_source(FLOATS)
    for n in (CHUNK - 1, CHUNK, 2 * CHUNK + 3):
        check(f, n)


@pytest.mark.parametrize("stop", [3, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 5, 10**9])
def test_break_and_else_after_some_chunks(stop: int) -> None:
    f = compile_source(BREAK)
    check(f, 3 * CHUNK, stop)


def test_an_inner_chunked_loop_inside_an_outer_loop() -> None:
    f = compile_source(NESTED)
    check(f, 3, CHUNK + 11)
    check(f, 0, CHUNK)


def test_a_writer_deoptimises_after_some_chunks_and_resumes() -> None:
    f = compile_source(WRITER)
    check(f, np.zeros(3), 10, 5)
    check(f, np.zeros(3), 6 * CHUNK, 2**63 // (4 * CHUNK + CHUNK // 2))
    assert f.stats["deopts"] >= 1
