"""Priority for the import hook's background compile over the function it compiles.

The hook compiles on a worker thread while the program goes on. Most of a compile
holds the GIL (the front end, lowering, the hook's own bookkeeping), and the program's
thread, meanwhile running the very function being compiled interpreted, wants it too:
the two shared it by switch intervals, so the compile took about half as long again as
on an idle interpreter while the function ran at half its interpreted speed, and native
code came late. So while the worker compiles it claims priority (`claimed`): a tick of
a counter whose ``waits`` is set (the hook sets it on the counters of functions queued
or being compiled) waits, without the GIL, until the claim ends, but never past the
claim's deadline, so that a long compile costs the program no more than that. The
compiler lets go of the claim while LLVM works without the GIL (`paused`), and the
program runs meanwhile. Counters that do not wait, and code without counters, share
the GIL as before. The mechanism is csrc/counter.c's; only one claim is held at a time.
"""

from __future__ import annotations

import _thread
import contextlib
import os

from ._runtime import lib
from .abi import runtime_types

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Iterator

runtime_types()  # (made with the runtime's types: the lock a claim holds)

_claim: tuple[int, int] | None = None  # (thread, deadline in cb_monotonic_ns)


def _after_fork_in_child() -> None:
    global _claim
    _claim = None
    lib.cb_priority_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def claimed(budget: float) -> Iterator[None]:
    """Priority for this thread while the block runs, for at most `budget` seconds."""
    global _claim
    deadline = lib.cb_monotonic_ns() + int(budget * 1e9)
    lib.cb_priority_claim(deadline)
    _claim = (_thread.get_ident(), deadline)
    try:
        yield
    finally:
        _claim = None
        lib.cb_priority_release()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Around work that runs without the GIL: if this thread holds the claim, ticks
    run freely until the block ends, and the claim is then taken again."""
    claim = _claim
    if claim is None or claim[0] != _thread.get_ident():
        yield
        return
    lib.cb_priority_release()
    try:
        yield
    finally:
        lib.cb_priority_claim(claim[1])
