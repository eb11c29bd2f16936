"""Random programs that move arrays around (issue 4: reference counting).

Each program is a few statements drawn from a pool that allocates, copies, aliases,
rebinds in branches and loops, packs into tuples, passes through native callees,
returns early and raises. Compiled, it must give CPython's results (arrays included)
and leave no native allocation behind, whatever path it takes.
"""

from __future__ import annotations

import gc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cuvil_bc._runtime import lib
from cuvil_bc.testing import check, compile_source, native_ran

HELPERS: dict = {"np": np}
exec(
    "def make(n):\n    return np.ones(n)\n"
    "def same(a):\n    return a\n"
    "def first_row(m):\n    return m[0]\n",
    HELPERS,
)

NAMES = ("a", "b", "c")
STATEMENTS = [
    "{x} = np.ones(n)",
    "{x} = {y}",
    "{x} = {y}.copy()",
    "{x} = same({y})",
    "{x} = make(n)",
    "{x} = first_row(np.zeros((2, n)))",
    "if k > {i}:\n    {x} = {y}",
    "for i in range(k):\n    {x} = np.full(n, i * 1.0)",
    "if n > 0:\n    {x}[0] = {x}[0] + {i}",
    "if k == {i}:\n    return {x}, {y}, {x}",
    "if k == {i} + 10:\n    raise ValueError('stop')",
    "t = ({x}, {y})\n{y}, {x} = t",
    "t = ({x}, {y})\n{x} = t[1]",  # (an indexed item borrows from its tuple)
    "{x} = ({y}, n)[0]",
    "t = ({x}, np.ones(n))\nif n > 0:\n    t[1][0] = t[0][0]",
    "while k > {i}:\n    {x} = np.zeros(n)\n    break",
    "{x} = {y}.T",
    "{x} = np.zeros((2, n))[1]",
    "if n > 0:\n    {x}[0] = {y}[0] * 1e300 + 1.0",  # twice: NumPy warns, the call resumes in CPython
]


@st.composite
def programs(draw):  # type: ignore[no-untyped-def]
    lines = ["def f(n, k):", "    a = np.zeros(n)", "    b = np.full(n, 2.0)", "    c = a"]
    for _ in range(draw(st.integers(1, 6))):
        template = draw(st.sampled_from(STATEMENTS))
        x, y = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
        text = template.format(x=x, y=y, i=draw(st.integers(0, 3)))
        lines += ["    " + line for line in text.split("\n")]
    lines.append("    return a, b, c")
    return "\n".join(lines) + "\n"


@settings(max_examples=120, deadline=None, database=None)
@given(programs())
def test_random_array_programs(src: str) -> None:
    fn = compile_source(src, **HELPERS)
    gc.collect()
    before = lib.cb_live_allocations()
    for n, k in ((0, 0), (3, 1), (2, 3), (4, 11), (1, 5)):
        check(fn, n, k)
    gc.collect()
    assert lib.cb_live_allocations() == before, src
    assert native_ran(fn), fn.explain() + src
