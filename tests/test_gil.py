"""Native code that runs long releases the GIL; short calls keep it.

With a huge switch interval the main thread never hands the GIL over on its own, so a
second thread can only run while the main thread is blocked, and the only blocking
thing it does here is the native call. The other thread counts; if the count moves
during the native call, the GIL was released for it. (The counter thread releases the
GIL itself after every step, so the main thread gets it back at once afterwards.)
"""

from __future__ import annotations

import math
import sys
import threading
import time

import cuvil_bc


def spin(n):
    s = 0
    for i in range(n):
        s = (s + i * i) % 1000003
    return s


def _progress_during(call) -> int:  # type: ignore[no-untyped-def]
    """How far a counting thread gets while `call()` runs, with the switch interval so
    large that the main thread only gives up the GIL when it blocks."""
    count = 0
    stop = threading.Event()
    started = threading.Event()

    def counter() -> None:
        nonlocal count
        started.set()
        while not stop.is_set():
            count += 1
            time.sleep(0)  # give the GIL back after every step

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    thread = threading.Thread(target=counter)
    try:
        thread.start()
        started.wait()
        before = count
        call()
        return count - before
    finally:
        stop.set()
        sys.setswitchinterval(old)
        thread.join()


def test_native_call_releases_the_gil() -> None:
    native = cuvil_bc.compile(spin)
    assert native(10) == spin(10)  # compile first: compilation itself holds the GIL
    during = _progress_during(lambda: native(30_000_000))
    assert native.stats["native_calls"] == 2, native.explain()
    assert during > 0, "the counter thread never ran during the native call: the GIL was held"


def test_short_native_calls_keep_the_gil() -> None:
    # Issue 16: releasing and taking back the GIL cost each call ~40 ns, more than a
    # short loop's whole work. Native loops let it go only once they have run long.
    native = cuvil_bc.compile(spin)
    assert native(10) == spin(10)
    during = _progress_during(lambda: [native(20) for _ in range(20_000)])
    assert native.stats["native_calls"] == 20_001, native.explain()
    assert during == 0, "short native calls let the GIL go"


def caller(n):
    return spin(n) + spin(3)


def test_a_loop_free_caller_lets_its_callees_loops_release_the_gil() -> None:
    native = cuvil_bc.compile(caller)
    assert native(10) == caller(10)
    during = _progress_during(lambda: native(30_000_000))
    assert native.stats["native_calls"] == 2, native.explain()
    assert during > 0, "the counter thread never ran during the native call: the GIL was held"
    assert native(1000) == caller(1000)  # and the GIL came back: Python runs on


def inner_sum(n):
    s = 0.0
    for j in range(n):
        s = math.sqrt(s + j + 1.0)  # a chain of dependent square roots: no shortcut
    return s


def outer_sum(m, n):
    t = 0.0
    for i in range(m):
        t += inner_sum(n)
    return t


def nested_sum(m, n):
    t = 0.0
    for i in range(m):
        for j in range(n):
            t = math.sqrt(t + i * j + 1.0)
    return t


def test_many_short_loops_release_the_gil() -> None:
    # Each loop alone is short; the call is long. The GIL was held for the whole call
    # when only a single loop's own length (a full 16384-iteration chunk) counted.
    for f, args in ((outer_sum, (5000, 1000)), (nested_sum, (500, 10000))):
        native = cuvil_bc.compile(f)
        assert native(2, 3) == f(2, 3)
        during = _progress_during(lambda: native(*args))  # noqa: B023
        assert native.stats["native_calls"] == 2, native.explain()
        assert during > 0, f"{f.__name__}: the GIL was held for the whole call"


#: A signal handler runs inside a math callback of a native call that still holds the
#: GIL (its loop has done few iterations), and calls a compiled function whose first
#: call runs native code through cffi, without the GIL, while another thread holds it.
#: On 3.11 the runtime took the thread state of the GIL's holder for its own and
#: released the GIL from the wrong thread: "Fatal Python error: ... tstate mix-up".
SIGNAL_IN_CALLBACK = """
import math, signal, threading
import cuvil_bc
import cuvil_bc.lower.builtins

# math.erf goes through the callback where the C library's erf is not CPython's; make
# it do so here too.
cuvil_bc.lower.builtins.libm_agrees = lambda name: False


@cuvil_bc.compile
def outer(n):
    s = 0.0
    for i in range(n):
        x = 1.5 + (i % 7) * 0.1
        s += math.erf(x) + math.erf(x + 1) + math.erf(x + 2) + math.erf(x + 3)
        s += math.erf(x + 4) + math.erf(x + 5) + math.erf(x + 6) + math.erf(x + 7)
    return s


def spin(n):
    s = 0
    for i in range(n):
        s = (s + i * i) % 1000003
    return s


outer(10)
assert "cb_math_call" in outer.inspect_llvm()  # (the callback this test is about)
results = []


def handler(signum, frame):
    results.append(cuvil_bc.compile(spin)(2_000_000))


stop = False


def busy():
    x = 0
    while not stop:
        x += 1


thread = threading.Thread(target=busy, daemon=True)
thread.start()
signal.signal(signal.SIGALRM, handler)
ok = True
for _ in range(5):
    signal.setitimer(signal.ITIMER_REAL, 0.0003)
    ok = ok and outer(900) == outer.py_func(900)
stop = True
thread.join()
print(ok, results[:1], len(results) > 0)
"""


def test_a_handler_that_runs_native_code_inside_a_callback(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    program = tmp_path / "handler.py"
    program.write_text(SIGNAL_IN_CALLBACK)
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"True [{spin(2_000_000)}] True\n", done.stdout + done.stderr


def test_the_measurement_detects_a_held_gil() -> None:
    # The control: interpreted code holds the GIL, so the counter must not move.
    assert _progress_during(lambda: spin(200_000)) == 0


def test_native_result_is_unchanged_by_threads() -> None:
    native = cuvil_bc.compile(spin)
    assert native(100_000) == spin(100_000)


def test_native_calls_counted_exactly_across_threads() -> None:
    # The fast path counts in native code, atomically, while the GIL is released.
    f = cuvil_bc.compile(spin)
    f(10)
    threads = [threading.Thread(target=lambda: [f(50) for _ in range(2000)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert f.stats["native_calls"] == 1 + 4 * 2000
    assert f.stats["interpreted_calls"] == 0


def wait_for_flag(flag, k, limit):  # type: ignore[no-untyped-def]
    """Spin until another thread sets flag[0], announcing itself in flag[k] (k is an
    argument, so LLVM cannot prove the store leaves flag[0] alone and must re-read it)."""
    i = 0
    while i < limit and flag[0] == 0:
        flag[k] = i + 1
        i += 1
    return flag[0]


def test_native_call_with_arrays_releases_the_gil() -> None:
    """A handshake rather than a measurement: the native call only ends early if a
    Python thread runs *during* it (it waits for the call to write flag[1], then sets
    flag[0]). With the GIL held, that thread could not run before the call's bound of
    10**10 iterations (seconds), and the result would be 0."""
    import numpy as np

    native = cuvil_bc.compile(wait_for_flag)
    assert native(np.array([1, 0]), 1, 10) == 1  # compile first (compilation holds the GIL)
    flag = np.zeros(2, dtype=np.int64)
    seen = []

    def other() -> None:
        deadline = time.monotonic() + 60
        while flag[1] == 0 and time.monotonic() < deadline:
            time.sleep(0)
        seen.append(int(flag[1]))
        flag[0] = 7

    thread = threading.Thread(target=other)
    thread.start()
    result = native(flag, 1, 10**10)
    thread.join()
    assert native.stats["native_calls"] == 2, native.explain()
    assert seen and seen[0] > 0, "the other thread never saw the native call running"
    assert result == 7, "the native call never saw the other thread's write: the GIL was held"


def test_first_calls_from_several_threads_compile_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from cuvil_bc import compiler

    compiles = []
    real = compiler.COMPILER.compile

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        compiles.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(compiler.COMPILER, "compile", counting)
    source = "def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i] * a[i]\n    return s\n"
    from cuvil_bc.testing import compile_source

    f = compile_source(source)
    a = np.arange(1000.0)
    barrier = threading.Barrier(4)
    results = []

    def first_call() -> None:
        barrier.wait()
        results.append(repr(f(a)))

    threads = [threading.Thread(target=first_call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [repr(f.py_func(a))] * 4
    assert len(compiles) == 1 and f.signatures == ["(array[float64, 1d, unit-stride])"]


def test_signatures_replaced_while_a_call_runs_without_the_gil() -> None:
    # A thread runs a long native call without the GIL while another rebinds a global
    # the signature is guarded on: the C entry's signatures are replaced, and were
    # freed under the running call, which then boxed its result from freed memory.
    import threading

    import numpy as np

    from cuvil_bc.testing import compile_source

    ns_src = "def f(a):\n    s = 0.0\n    for i in range(a.shape[0]):\n        s += a[i] * SCALE\n    return s\n"
    f = compile_source(ns_src, SCALE=2.0)
    g = f.py_func.__globals__
    big, small = np.ones(400_000), np.ones(3)
    assert f(small) == 6.0 and f(big) == 800_000.0
    bad: list[float] = []
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            r = f(big)
            if r not in (800_000.0, 1_200_000.0):
                bad.append(r)

    t = threading.Thread(target=worker)
    t.start()
    try:
        for n in range(60):
            g["SCALE"] = float(2 + n % 2)
            f(small)
    finally:
        stop.set()
        t.join()
    assert bad == []
