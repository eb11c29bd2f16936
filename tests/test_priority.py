"""The background compile's priority over the functions it compiles (cuvil_bc/priority.py,
csrc/counter.c): a tick of a counter that waits lets a claiming thread run, until the
claim ends, never past its deadline; everything else runs on as before."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from cuvil_bc import priority
from cuvil_bc.counters import Counter

from .test_hook_e2e import hooked_like_plain, run


def _tick_time(counter: Counter) -> float:
    start = time.perf_counter()
    assert not (not counter)  # the tick, as counted code makes it
    return time.perf_counter() - start


@contextlib.contextmanager
def _claim_held_by_a_thread(budget: float, hold: float) -> Iterator[None]:
    """Another thread claims priority for `budget` s, and lets go after `hold` s."""
    claimed = threading.Event()

    def claimer() -> None:
        with priority.claimed(budget):
            claimed.set()
            time.sleep(hold)

    thread = threading.Thread(target=claimer)
    thread.start()
    claimed.wait()
    try:
        yield
    finally:
        thread.join()


def _waiting_counter() -> Counter:
    counter = Counter(10**12, None)
    counter.waits = True
    return counter


def test_a_tick_of_a_waiting_counter_waits_for_the_claim_to_end() -> None:
    counter = _waiting_counter()
    with _claim_held_by_a_thread(budget=30.0, hold=0.4):
        waited = _tick_time(counter)
    assert waited > 0.2, waited
    assert counter.ticks == 1
    assert _tick_time(counter) < 0.1  # no claim: no wait


def test_a_tick_waits_no_longer_than_the_claims_deadline() -> None:
    counter = _waiting_counter()
    with _claim_held_by_a_thread(budget=0.2, hold=3.0):
        first = _tick_time(counter)
        time.sleep(0.3)
        later = _tick_time(counter)  # past the deadline, while the claim is still held
    assert 0.05 < first < 2.0, first
    assert later < 0.1, later


def test_past_the_deadline_ticks_stop_reading_the_clock() -> None:
    # Every tick past the deadline read the thread's identity and the clock again
    # (~20 ns a tick, a fifth of a short loop's iteration) for the rest of the claim.
    # The first such tick now ends the waiting for the others.
    from cuvil_bc._runtime import lib

    counter = _waiting_counter()
    with _claim_held_by_a_thread(budget=0.05, hold=1.0):
        assert lib.cb_priority_claimed() == 1
        time.sleep(0.1)
        assert lib.cb_priority_claimed() == 1  # (no tick yet)
        _tick_time(counter)
        assert lib.cb_priority_claimed() == 0
    assert lib.cb_priority_claimed() == 0


def test_a_claim_before_any_counter_exists() -> None:
    # The lock a claim holds was made with the counters' type: claiming priority in a
    # process that had not imported cuvil_bc.counters crashed it.
    code = "from cuvil_bc import priority\nwith priority.claimed(1.0):\n    pass\nprint('ok')\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")
def test_a_child_forked_while_a_claim_is_held_can_claim() -> None:
    # The child of a fork inherits the lock as it was, held by a thread it does not
    # have: its first claim waited forever. (The hook's worker holds no claim at a
    # fork, but a tick's thread holds the lock for a moment while it waits.)
    with _claim_held_by_a_thread(budget=30.0, hold=0.5):
        pid = os.fork()
        if pid == 0:  # the child: claim and go, or be killed by the parent
            try:
                with priority.claimed(1.0):
                    pass
                os._exit(0)
            finally:
                os._exit(1)
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.02)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child's claim waited for a lock held by a thread it does not have")
    assert os.waitstatus_to_exitcode(status) == 0  # type: ignore[arg-type]


def test_counters_that_do_not_wait_run_on() -> None:
    counter = Counter(10**12, None)
    assert counter.waits is False
    with _claim_held_by_a_thread(budget=30.0, hold=0.5):
        assert _tick_time(counter) < 0.2


def test_the_claiming_thread_itself_never_waits() -> None:
    counter = _waiting_counter()
    with priority.claimed(30.0):
        assert _tick_time(counter) < 0.2


def test_ticks_run_on_while_the_claim_is_paused() -> None:
    counter = _waiting_counter()
    in_pause, resume = threading.Event(), threading.Event()
    waited: list[float] = []

    def claimer() -> None:
        with priority.claimed(30.0):
            with priority.paused():
                in_pause.set()
                resume.wait()
            time.sleep(0.4)  # claimed again: a tick waits

    thread = threading.Thread(target=claimer)
    thread.start()
    in_pause.wait()
    during_pause = _tick_time(counter)
    resume.set()
    time.sleep(0.1)
    waited.append(_tick_time(counter))
    thread.join()
    assert during_pause < 0.2, during_pause
    assert waited[0] > 0.1, waited


def test_paused_does_nothing_for_a_thread_without_the_claim() -> None:
    from cuvil_bc._runtime import lib

    counter = _waiting_counter()
    with _claim_held_by_a_thread(budget=0.5, hold=0.3):
        with priority.paused():  # another thread's claim: not this one's to let go of
            assert lib.cb_priority_claimed() == 1
    with priority.paused():
        pass  # (no claim at all: nothing to take again)
    assert lib.cb_priority_claimed() == 0
    assert _tick_time(counter) < 0.1


def test_llvm_runs_with_the_claim_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    # LLVM works without the GIL: the program's thread should run meanwhile.
    import llvmlite.binding as llvm

    import cuvil_bc
    from cuvil_bc.lower import jit

    jit.get_jit()  # (its own making is not what is tested)
    counter = _waiting_counter()
    ticks: list[float] = []
    real = llvm.parse_assembly

    def parse(text: str) -> object:
        ticker = threading.Thread(target=lambda: ticks.append(_tick_time(counter)))
        ticker.start()
        ticker.join()
        return real(text)

    monkeypatch.setattr(jit.llvm, "parse_assembly", parse)

    @cuvil_bc.compile
    def f(n: int) -> int:
        s = 0
        for i in range(n):
            s += i
        return s

    with priority.claimed(2.0):
        assert f(10) == 45
    assert ticks and max(ticks) < 0.5, ticks
    assert f.stats["native_calls"] == 1


def test_the_hook_claims_priority_over_the_function_it_compiles(tmp_path: Path) -> None:
    # While the worker compiles a hot function, its counters wait (the program's thread
    # was running it interpreted, and slowed the compile down by sharing the GIL), and
    # once it is decided they no longer do.
    program = tmp_path / "prio.py"
    program.write_text(
        "import _thread, time\n"
        "from cuvil_bc import priority\n"
        "from cuvil_bc.hook.hot import RUNTIME\n"
        "seen = []\n"
        "real = RUNTIME.compile\n"
        "def spy(record, *rest):\n"
        "    claim = priority._claim\n"
        "    seen.append((record.info.qualname, record.loop_counter.waits, record.call_counter.waits,\n"
        "                 claim is not None and claim[0] == _thread.get_ident()))\n"
        "    real(record, *rest)\n"
        "RUNTIME.compile = spy\n"
        "def kern(n):\n"
        "    t = 0\n"
        "    for i in range(n):\n"
        "        t += i % 7\n"
        "    return t\n"
        "time.sleep(0.3)\n"  # (a program that has run longer than compiling kern takes: see cost.py)
        "total = 0\n"
        "for k in range(3000):\n"
        "    total += kern(300)\n"
        "    record = next(r for r in RUNTIME.records.values() if r.info.qualname == 'kern')\n"
        "    if record is not None and record.status != 'interpreted':\n"
        "        break\n"
        "print(total > 0)\n"
        "deadline = time.monotonic() + 60\n"
        "while (record.status == 'interpreted' or RUNTIME.worker_running) and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "print(record.status, seen, record.loop_counter.waits, record.call_counter.waits)\n"
    )
    hooked = run(["-X", "importhook", "cuvil_bc", str(program)], cwd=tmp_path, env={"CUVIL_BC_SYNC": "0", "CUVIL_BC_CACHE": "0"})
    assert hooked.returncode == 0, hooked.stderr
    assert hooked.stdout.splitlines()[-1] == "native [('kern', True, True, True)] False False", hooked.stdout


ONCE = """
def once(n):
    t = 0
    for i in range(n):
        t = (t + i * i) % 1000003
    return t
"""


def test_the_hook_claims_priority_over_a_loop_whose_entry_it_compiles(tmp_path: Path) -> None:
    # The same for on-stack replacement: while the worker compiles the entry of a loop
    # that runs in a function called once, the loop's ticks wait (running on, they took
    # the GIL from the compile at every switch interval: it took three times as long),
    # and once the entry is decided they no longer do.
    program = tmp_path / "prio_osr.py"
    program.write_text(
        "import _thread\n"
        "from cuvil_bc import priority\n"
        "from cuvil_bc.hook import osr\n"
        "from cuvil_bc.hook.hot import RUNTIME\n"
        "seen = []\n"
        "real = osr.compile_entry\n"
        "def spy(runtime, record, plan):\n"
        "    claim = priority._claim\n"
        "    seen.append((record.info.qualname, record.loop_counter.waits, claim is not None and claim[0] == _thread.get_ident()))\n"
        "    real(runtime, record, plan)\n"
        "osr.compile_entry = spy\n"
        + ONCE +
        "print(once(8_000_000))\n"
        "record = next(r for r in RUNTIME.records.values() if r.info.qualname == 'once')\n"
        "print(seen, record.loop_counter.waits, record.osr.entered)\n"
    )
    hooked = run(["-X", "importhook", "cuvil_bc", str(program)], cwd=tmp_path, env={"CUVIL_BC_SYNC": "0", "CUVIL_BC_CACHE": "0"})
    assert hooked.returncode == 0, hooked.stderr
    namespace: dict[str, object] = {}
    exec(ONCE, namespace)  # noqa: S102 (the same function, uncompiled)
    assert hooked.stdout.splitlines()[0] == str(namespace["once"](8_000_000))  # type: ignore[operator]
    assert hooked.stdout.splitlines()[-1] == "[('once', True, True)] False 1", hooked.stdout


def test_a_functions_ticks_wait_until_its_last_queued_compile_is_done() -> None:
    # Found by a helper: a loop's entry and then the function's calls can be queued
    # for the worker one after the other; the first job done made the function's
    # ticks stop waiting while the second was still to come.
    import types as pytypes

    from cuvil_bc.hook.hot import Runtime

    runtime = Runtime()
    record = pytypes.SimpleNamespace(call_counter=Counter(10**9, None), loop_counter=Counter(10**9, None))
    seen: list[tuple[bool, bool]] = []

    def job() -> None:
        seen.append((record.call_counter.waits, record.loop_counter.waits))

    runtime.worker_running = True  # (queued only: this test runs the worker's jobs itself)
    runtime.submit(record, job, 10)  # type: ignore[arg-type]
    runtime.submit(record, job, 10)  # type: ignore[arg-type]
    runtime._do(runtime.pending.popleft())
    assert (record.call_counter.waits, record.loop_counter.waits) == (True, True)
    runtime._do(runtime.pending.popleft())
    assert (record.call_counter.waits, record.loop_counter.waits) == (False, False)
    assert seen == [(True, True), (True, True)]


def test_a_new_worker_gets_the_gil_without_waiting_out_the_programs_switch_interval() -> None:
    # A new worker thread waited for the GIL until the program's thread let it go: at
    # CPython's default switch interval every compile that started a worker began
    # ~5 ms late (measured on examples/numeric_app.py: 5 ms between a function getting
    # hot and its compile starting, each time). Here the interval is 1 s: the worker
    # would start only after the spin below gives up.
    import types as pytypes

    from cuvil_bc.hook.hot import COMPILE_SWITCH_INTERVAL, Runtime

    runtime = Runtime()
    runtime.exit_registered = True  # (no atexit handler for this test's runtime)
    record = pytypes.SimpleNamespace(call_counter=Counter(10**9, None), loop_counter=Counter(10**9, None))
    started: list[float] = []
    seen_interval: list[float] = []

    def job() -> None:
        started.append(time.perf_counter())
        seen_interval.append(sys.getswitchinterval())

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    try:
        submitted = time.perf_counter()
        runtime._submit((record, job, 1))  # type: ignore[arg-type]
        while not started and time.perf_counter() - submitted < 0.9:
            pass  # (pure bytecode: the GIL changes hands only at the switch interval)
        assert started, "the worker did not start while the program's thread ran"
        assert started[0] - submitted < 0.5
        while runtime.worker_running:
            time.sleep(0.001)
        assert seen_interval == [pytest.approx(COMPILE_SWITCH_INTERVAL)]  # (the job's own, as before)
        assert sys.getswitchinterval() == 1.0  # the program's, back once the worker ran
    finally:
        sys.setswitchinterval(old)


def test_a_fork_while_a_worker_starts_gives_the_child_the_programs_switch_interval() -> None:
    # The worker thread that would give the interval back is not copied by a fork.
    from cuvil_bc.hook.hot import COMPILE_SWITCH_INTERVAL, Runtime

    runtime = Runtime()
    old = sys.getswitchinterval()
    try:
        sys.setswitchinterval(COMPILE_SWITCH_INTERVAL)
        runtime.handoff = (0.004, sys.getswitchinterval())  # as `_submit` leaves it
        runtime._after_fork_in_child()
        assert sys.getswitchinterval() == 0.004
        assert runtime.handoff is None
    finally:
        sys.setswitchinterval(old)


def test_the_programs_switch_interval_survives_background_compiles_exactly(tmp_path: Path) -> None:
    # Found by a helper: each worker start and each compile set back the value that
    # sys.getswitchinterval() had given, and CPython keeps whole microseconds,
    # truncating: 0.000241 came back 0.00024, then 0.000239, a step per round trip.
    # (While a compile runs the program sees the worker's interval: it reads its own
    # at exit, after the exit has waited for the worker.)
    program = tmp_path / "interval.py"
    program.write_text(
        "import atexit\nimport sys\n\n"
        "sys.setswitchinterval(0.000241)\n"
        "atexit.register(lambda: print(repr(sys.getswitchinterval())))  # (once the exit has stopped the worker)\n\n\n"
        "def a(n):\n    s = 0\n    for i in range(n):\n        s += i * i % 7\n    return s\n\n\n"
        "def b(n):\n    s = 0.0\n    for i in range(n):\n        s += i / 7\n    return s\n\n\n"
        "t = 0.0\n"
        "for k in range(2500):\n    t += a(3000) + b(3000)\n"
        "print(t)\n"
    )
    _, rows = hooked_like_plain(str(program), tmp_path, env={"CUVIL_BC_SYNC": "0", "CUVIL_BC_CACHE": "0"})
    # (the worker ran: under load the second may still be compiling at the end)
    assert "native" in (rows["a"]["status"], rows["b"]["status"]), rows
