"""Signals reach native loops (issue 15, item 8): Ctrl-C stops a long native loop at
once with KeyboardInterrupt, and so does a program's own signal handler that raises,
in functions that only read and in functions that write. Without that, each loop
here runs for seconds, and the KeyboardInterrupt comes only after it returns."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from cuvil_bc.testing import check, compile_source, native_ran

LOOPS = {
    "while": ("def f(n):\n    i = 0\n    t = 0\n    while i < n:\n        t = (t * 3 + i) % 1000003\n        i += 1\n    return t\n", (10**10,), (1000,)),
    "nested ranges": ("def f(n):\n    t = 0.0\n    for i in range(n):\n        for j in range(1000):\n            t += (i * j) % 7\n    return t\n", (10**7,), (3,)),
    "innermost range": ("def f(n):\n    t = 0\n    for i in range(n):\n        t += i % 7\n    return t\n", (10**10,), (100000,)),
    "innermost range, writes": ("def f(a, n):\n    for i in range(n):\n        a[0] = a[0] * 0.5 + 1.0\n    return 0\n", (np.zeros(2), 3 * 10**9), (np.zeros(2), 100000)),
    "writes": ("def f(a, n):\n    for k in range(n):\n        for i in range(len(a)):\n            a[i] = a[i] + 1.0\n    return 0\n", (np.zeros(100), 10**8), (np.zeros(4), 3)),
}


@pytest.fixture(autouse=True)
def ctrl_c_raises():  # type: ignore[no-untyped-def]
    """Ctrl-C as at a terminal: where the suite was started in the background, CPython
    left SIGINT ignored (as it found it), and a SIGINT would do nothing."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _send_later(sig: int, delay: float) -> threading.Thread:
    def go() -> None:
        time.sleep(delay)
        os.kill(os.getpid(), sig)

    t = threading.Thread(target=go)
    t.start()
    return t


@pytest.mark.parametrize("kind", list(LOOPS))
def test_ctrl_c_stops_a_native_loop(kind: str) -> None:
    src, long_args, short_args = LOOPS[kind]
    f = compile_source(src, np=np)
    check(f, *short_args)
    assert native_ran(f)
    sender = _send_later(signal.SIGINT, 0.2)
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        f(*long_args)  # seconds of work if nothing stops it (then this test fails)
    elapsed = time.perf_counter() - start
    sender.join()
    assert elapsed < 0.2 + 0.5, f"KeyboardInterrupt came {elapsed - 0.2:.3f} s late"
    check(f, *short_args)  # and it still runs natively afterwards
    assert f.stats["native_calls"] >= 2


class _Timeout(Exception):
    pass


def test_a_handler_the_program_sets_runs_during_a_native_loop() -> None:
    src, long_args, short_args = LOOPS["while"]
    f = compile_source(src)
    check(f, *short_args)

    def on_alarm(signum, frame):  # type: ignore[no-untyped-def]
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, on_alarm)  # set after the first compile
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        start = time.perf_counter()
        with pytest.raises(_Timeout):
            f(*long_args)
        assert time.perf_counter() - start < 0.7
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_interrupted_writer_leaves_no_resume_point_behind() -> None:
    # The writer deopts for the signal and stores its resume point; the KeyboardInterrupt
    # is raised as the call returns, before anyone takes that point. A function that
    # only reads and deopts next must not be resumed at the writer's point.
    src, long_args, short_args = LOOPS["writes"]
    writer = compile_source(src, np=np)
    check(writer, *short_args)
    reader = compile_source("def f(x):\n    return x * 3 if x > 0 else -x\n")
    check(reader, 5)
    sender = _send_later(signal.SIGINT, 0.2)
    with pytest.raises(KeyboardInterrupt):
        writer(*long_args)
    sender.join()
    check(reader, 2**62)  # overflows int64: deopts, and CPython runs it
    check(reader, -(2**63))


class _Alarm(Exception):
    pass


def test_a_handler_that_raises_during_a_math_callback() -> None:
    # math.gamma is computed by CPython's own code, called from native code. It was a
    # cffi Python callback, where a pending signal's handler ran: its exception was
    # printed as "ignored" and the native loop went on with an unset result, a wrong
    # sum returned in 3 or 4 calls out of 5. Now the callback runs no Python code: the
    # handler runs in the interpreter, and its exception reaches the program.
    import math

    f = compile_source("def f(n):\n    s = 0.0\n    for i in range(n):\n        s += math.gamma(1.5 + (i % 7) * 0.1)\n    return s\n", math=math)
    check(f, 10)
    assert native_ran(f)
    expected = f.py_func(16000)

    def handler(signum, frame):  # type: ignore[no-untyped-def]
        raise _Alarm

    before = signal.signal(signal.SIGALRM, handler)
    returned, raised = [], 0
    try:
        for _ in range(5):
            signal.setitimer(signal.ITIMER_REAL, 0.0003)
            try:
                returned.append(f(16000))
                time.sleep(0.05)  # (an alarm after the call arrives here)
            except _Alarm:
                raised += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert raised == 5
    assert all(r == expected for r in returned), (returned, expected)
