"""How on-stack replacement's cost model estimates what a ``while`` loop has left
(hook/osr.py `_remaining`, `_distances`; decode/region.py `loop_bounds`).

A ``while`` loop has no range iterator whose items can be counted; the comparisons
that keep it going (``k < samples``) tell how far it has to go, and the gate measures
how fast they close between two exits. These are estimates that only decide when to
compile, so the expectations here are hand-written.
"""

from __future__ import annotations

import time
import types

import pytest

from cuvil_bc.decode import rawcode, region


def counted_up(samples):  # type: ignore[no-untyped-def]
    k = 0
    while k < samples:
        k += 1
    return k


def counted_down(n):  # type: ignore[no-untyped-def]
    while n > 0:
        n -= 3
        if n == 7:
            break
    return n


def counted_down_plain(n):  # type: ignore[no-untyped-def]
    while n > 0:
        n -= 3
    return n


def capped(x, tol, max_iter):  # type: ignore[no-untyped-def]
    it = 0
    while it < max_iter:
        nx = x * 0.5 + 1.0
        if abs(nx - x) < tol:
            break
        x = nx
        it += 1
    return it


def two_bounds(n, m):  # type: ignore[no-untyped-def]
    i = 0
    while i < n and i < m:
        i += 1
    return i


def broken_out(n):  # type: ignore[no-untyped-def]
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


def by_equality(n):  # type: ignore[no-untyped-def]
    i = 0
    while i != n:
        i += 1
    return i


def inner_while(n):  # type: ignore[no-untyped-def]
    t = 0
    for a in range(n):
        b = a
        while b < 1000:
            b = b * 2 + 1
        t += b
    return t


def _bounds(code: types.CodeType) -> set[tuple[object, ...]]:
    instrs = rawcode.instructions(code)
    found: set[tuple[object, ...]] = set()
    for n, i in enumerate(instrs):
        if i.op in region.LOOP_JUMPS:
            found.update(region.loop_bounds(code, instrs, n))
    return found


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (counted_up, {(("local", "k"), "<", ("local", "samples"))}),
        (counted_down_plain, {(("local", "n"), ">", ("const", 0))}),
        (two_bounds, {(("local", "i"), "<", ("local", "n")), (("local", "i"), "<", ("local", "m"))}),
        (broken_out, {(("local", "i"), "<", ("local", "n"))}),  # (the break's test, negated)
        (by_equality, set()),
        # Found by a helper: a loop that also leaves by another test (a break on `==`,
        # on a call's result) may end long before its comparison says: a program
        # whose `while i < 10**9` loop broke after 100k steps paid a compile, 3-10x
        # slower than plain. Such a loop gives nothing to go by.
        (counted_down, set()),
        (capped, set()),
        (inner_while, {(("local", "b"), "<", ("const", 1000))}),
    ],
)
def test_the_comparisons_that_keep_a_loop_going_are_found(fn: types.FunctionType, expected: set[tuple[object, ...]]) -> None:
    assert _bounds(fn.__code__) == expected


def test_module_level_names_are_operands_too() -> None:
    code = compile("i = 0\nlimit = 10\nwhile i < limit:\n    i += 1\n", "<m>", "exec")
    assert _bounds(code) == {(("name", "i"), "<", ("name", "limit"))}


def test_a_while_loop_is_estimated_by_how_fast_its_comparison_closes() -> None:
    # 100 ticks closed the distance from 1000 to 900: 900 ticks are left, at the
    # measured time a tick. Without the distances, the estimate was only the time the
    # loop had run since it got hot (the first 100 ticks).
    from cuvil_bc.hook.osr import State, _remaining

    state = State()
    state.t0 = time.perf_counter()
    assert _remaining(state, 10, 1000, (), (1000.0,)) is None  # the first exit: the measure starts
    time.sleep(0.02)
    plain = State()
    plain.t0, plain.first = state.t0, dict(state.first)
    with_distance = _remaining(state, 10, 1100, (), (900.0,))
    without = _remaining(plain, 10, 1100, (), (None,))
    assert with_distance is not None and without is not None
    assert with_distance > 5 * without, (with_distance, without)
    assert 0.1 < with_distance < 1.0, with_distance  # ~0.18 s: 900 ticks of ~0.2 ms
    # A distance that does not close (the loop's variable went the other way) says nothing.
    assert _remaining(state, 10, 1100, (), (1200.0,)) == pytest.approx(without, rel=0.5)
