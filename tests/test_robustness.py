"""Robustness of the hook and the compiler against what programs do around them
(issue 15): functions pickled by value into processes without the hook, fork while a
thread compiles, Ctrl-C during a compile, a compile that fails half way, and internal
errors under ``-W error``.

Programs run in subprocesses, against plain CPython where the comparison means
something; the rest run in this process.
"""

from __future__ import annotations

import signal
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

import cuvil_bc
from cuvil_bc import artifacts
from cuvil_bc.compiler import COMPILER
from cuvil_bc.lower import jit as jit_module
from cuvil_bc.testing import compile_source
from cuvil_bc.warn import internal_warning

from .test_hook_e2e import report, run, same

HOOK = ["-X", "importhook", "cuvil_bc"]


def program(tmp_path: Path, source: str, name: str = "app.py") -> str:
    (tmp_path / name).write_text(textwrap.dedent(source))
    return name


# -- functions pickled by value (issue 15, item 12) ----------------------------------

#: Two numeric functions, one made native by the hook, one left cold, shipped by value
#: to a process without the hook: as cloudpickle does, each code object with its fields
#: as they are and its constants pickled one by one, and as globals only those the code
#: names. The child rebuilds them with `types.FunctionType` and calls them.
SHIP_BY_VALUE = """
import marshal
import pickle
import subprocess
import sys
import types

MODULUS = 13


def cold(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s


def hot(n):
    t = 0
    for i in range(n):
        t += i * i % MODULUS
    return t


for k in range(300):
    hot(k)


def by_value(code):
    consts = tuple(by_value(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return ("code", marshal.dumps(code.replace(co_consts=())), consts)


def names(code):
    return set(code.co_names).union(*(names(c) for c in code.co_consts if isinstance(c, types.CodeType)))


def ship(f):
    g = {n: f.__globals__[n] for n in names(f.__code__) if n in f.__globals__}
    return (f.__name__, by_value(f.__code__), g)


# What cloudpickle does in the same process: a new function over the same code, with
# only the globals it names.
for f in (cold, hot):
    clone = types.FunctionType(f.__code__, {n: f.__globals__[n] for n in names(f.__code__) if n in f.__globals__})
    print("clone", f.__name__, clone(1000), clone(37))

LAND = '''
import marshal, pickle, sys, types

def land(state):
    _, raw, consts = state
    consts = tuple(land(c) if type(c) is tuple and len(c) == 3 and c[0] == "code" else c for c in consts)
    return marshal.loads(raw).replace(co_consts=consts)

for name, state, g in pickle.load(sys.stdin.buffer):
    f = types.FunctionType(land(state), {"__builtins__": __builtins__, **g}, name)
    print("child", name, f(1000), f(37))
'''
child = subprocess.run([sys.executable, *sys.argv[1:], "-c", LAND], input=pickle.dumps([ship(cold), ship(hot)]), capture_output=True)
sys.stdout.write(child.stdout.decode())
sys.stdout.write(child.stderr.decode())
print("exit", child.returncode)
"""


@pytest.mark.parametrize("child_flags", [[], ["-X", "importhook=cuvil_bc"]], ids=["plain child", "hooked child"])
def test_functions_shipped_by_value_run_where_the_hook_is_not(child_flags: list[str], tmp_path: Path) -> None:
    app = program(tmp_path, SHIP_BY_VALUE)
    plain = run([app, *child_flags], cwd=tmp_path)
    out = tmp_path / "report.json"
    hooked = run(HOOK + [app, *child_flags], cwd=tmp_path, env={"CUVIL_BC_REPORT": str(out)})
    assert plain.returncode == 0 and "exit 0" in plain.stdout, plain.stdout + plain.stderr
    assert plain.stdout.count("child ") == 2 and plain.stdout.count("clone ") == 2
    same(plain, hooked)
    rows = report(out)
    assert rows["hot"]["status"] == "native" and rows["cold"]["status"] == "interpreted"


CLOUDPICKLE = """
import subprocess
import sys

import cloudpickle


def cold(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s


def hot(n):
    t = 0
    for i in range(n):
        t += i * i % 13
    return t


for k in range(300):
    hot(k)

LOAD = "import pickle, sys\\nfor f in pickle.load(sys.stdin.buffer): print(f.__name__, f(1000), f(37))"
child = subprocess.run([sys.executable, "-c", LOAD], input=cloudpickle.dumps([cold, hot]), capture_output=True)
sys.stdout.write(child.stdout.decode())
sys.stdout.write(child.stderr.decode())
print("exit", child.returncode)
"""


def test_cloudpickle_ships_hooked_main_functions(tmp_path: Path) -> None:
    app = program(tmp_path, CLOUDPICKLE)
    plain = run([app], cwd=tmp_path)
    out = tmp_path / "report.json"
    hooked = run(HOOK + [app], cwd=tmp_path, env={"CUVIL_BC_REPORT": str(out)})
    assert plain.returncode == 0 and "exit 0" in plain.stdout, plain.stdout + plain.stderr
    same(plain, hooked)
    assert report(out)["hot"]["status"] == "native"


# -- fork while a thread compiles (issue 15, item 9) -----------------------------------

FORK_COMMON = """
import os
import sys
import threading
import time

import cuvil_bc
from cuvil_bc import artifacts
from cuvil_bc.compiler import COMPILER


def make(k):
    ns = {}
    exec(f"def f(n):\\n    s = 0\\n    for i in range(n):\\n        s += (i * {k}) % 7\\n    return s\\n", ns)
    return cuvil_bc.compile(ns["f"])


def child_compiles():
    f = make(3)
    result = f(1000)
    os.write(1, f"child {result} {'native' if f.stats['native_calls'] else 'interpreted'}\\n".encode())
    os._exit(0)


def fork_and_wait():
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        child_compiles()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("child exit", os.waitstatus_to_exitcode(status))
            return
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print("child hung")
"""

FORK_WHILE_LOCKED = FORK_COMMON + """
held = threading.Event()
release = threading.Event()


def hold():
    with COMPILER.lock:  # as a thread in the middle of a compile does
        held.set()
        release.wait()


thread = threading.Thread(target=hold)
thread.start()
held.wait()
fork_and_wait()
release.set()
thread.join()
"""

FORK_WHILE_COMPILING = FORK_COMMON + """
stop = threading.Event()
compiled = []


def churn():
    k = 100
    while not stop.is_set():
        compiled.append(make(k)(50))
        k += 1


thread = threading.Thread(target=churn)
thread.start()
while len(compiled) < 2:
    time.sleep(0.01)
for j in range(6):
    time.sleep(0.013 * j)
    fork_and_wait()
stop.set()
thread.join()
"""


@pytest.mark.parametrize("body", [FORK_WHILE_LOCKED, FORK_WHILE_COMPILING], ids=["lock held", "compiling"])
def test_fork_while_another_thread_compiles(body: str, tmp_path: Path) -> None:
    expected = f"child {sum((i * 3) % 7 for i in range(1000))} native\nchild exit 0\n"
    done = run(["-W", "ignore::DeprecationWarning", program(tmp_path, body)], cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected * done.stdout.count("child exit"), done.stdout + done.stderr
    assert done.stdout.count("child exit") == (1 if body is FORK_WHILE_LOCKED else 6)


FORK_HOOKED = """
import os
import sys
import time


def before(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s


def after(n):
    s = 0
    for i in range(n):
        s += i % 5
    return s


def statuses(names, seconds=60):
    from cuvil_bc.hook.hot import RUNTIME

    deadline = time.monotonic() + seconds
    while True:
        found = {r.info.qualname: r.status for r in RUNTIME.records.values() if r.info.qualname in names}
        if all(found.get(n) != "interpreted" for n in names) or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


time.sleep(0.3)  # (a program that has run longer than compiling takes: see hook/cost.py)
for k in range(120):
    before(k)
# The parent's worker is compiling `before` now (or about to): the fork copies only
# this thread.
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    for k in range(120):
        after(k)
    found = statuses(["before", "after"])
    os.write(1, f"child {found['before']} {found['after']} {before(500)} {after(500)}\\n".encode())
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("parent", statuses(["before"])["before"], os.waitstatus_to_exitcode(status))
"""


def test_forked_child_of_a_hooked_program_compiles(tmp_path: Path) -> None:
    app = program(tmp_path, FORK_HOOKED)
    done = run(["-W", "ignore::DeprecationWarning", *HOOK, app], cwd=tmp_path, env={"CUVIL_BC_SYNC": ""}, timeout=600)
    assert done.returncode == 0, done.stderr
    child = f"child native native {sum(i % 7 for i in range(500))} {sum(i % 5 for i in range(500))}\n"
    assert done.stdout == child + "parent native 0\n", done.stdout + done.stderr


POOL = """
import multiprocessing
import time


def f(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


time.sleep(0.3)  # (a program that has run longer than compiling takes: see hook/cost.py)
print(sum(f(k) for k in range(150)))
# f got hot during the line above: the worker is compiling it (and importing the
# compiler) while the pool forks its processes.
with multiprocessing.get_context("fork").Pool(2) as pool:
    print(sum(pool.map(f, range(2000))))
"""


def test_fork_pool_started_while_the_worker_compiles(tmp_path: Path) -> None:
    app = program(tmp_path, POOL)
    plain = run([app], cwd=tmp_path)
    hooked = run(HOOK + [app], cwd=tmp_path, env={"CUVIL_BC_SYNC": ""})
    assert plain.returncode == 0, plain.stderr
    same(plain, hooked)


# -- a compile that fails half way (issue 15, item 8) ----------------------------------

SUM_MOD = "def f(n):\n    s = 0\n    for i in range(n):\n        s += i % 7\n    return s\n"


def _failing_jit_compile(monkeypatch: pytest.MonkeyPatch, error: BaseException, *, after_loading: bool) -> list[object]:
    """Make the next `JIT.compile` raise `error`, before or after it loads the module
    (with the native-code cache off for the test).
    Returns the calls, and after the first one the specialisations the compiler had
    then: held, so that they stay cached (as they do while anything else uses them)."""
    real = jit_module.JIT.compile
    calls: list[object] = []
    # (compiled, not loaded: an earlier test may have stored this very function)
    monkeypatch.setattr(artifacts.location, "_enabled", False)

    def compile(self: Any, module: Any, numbers: Any = None) -> Any:
        if calls:
            calls.append("compiled")
            return real(self, module, numbers)
        calls.append(list(COMPILER.done.values()))
        if after_loading:
            real(self, module, numbers)
        raise error

    monkeypatch.setattr(jit_module.JIT, "compile", compile)
    return calls


@pytest.mark.parametrize("after_loading", [False, True], ids=["before loading", "after loading"])
def test_failed_jit_compile_leaves_nothing_half_done(monkeypatch: pytest.MonkeyPatch, after_loading: bool) -> None:
    calls = _failing_jit_compile(monkeypatch, RuntimeError("injected"), after_loading=after_loading)
    f = compile_source(SUM_MOD)
    with pytest.warns(RuntimeWarning, match="internal compiler error: RuntimeError: injected"):
        assert f(100) == f.py_func(100)
    assert f.stats["native_calls"] == 0 and len(calls) == 1
    assert any(spec.pyfunc is f.py_func for spec in calls[0])  # type: ignore[attr-defined]
    # Another dispatcher over the same function compiles it again, and it runs natively
    # (it used to find the entry of the failed compile: "JIT has no symbol").
    again = cuvil_bc.compile(f.py_func)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert again(100) == f.py_func(100)
    assert again.stats["native_calls"] == 1 and calls[1:] == ["compiled"]


def test_keyboard_interrupt_in_jit_compile_propagates_and_the_next_call_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _failing_jit_compile(monkeypatch, KeyboardInterrupt(), after_loading=False)
    f = compile_source(SUM_MOD)
    with pytest.raises(KeyboardInterrupt):
        f(100)
    assert any(spec.pyfunc is f.py_func for spec in calls[0])  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(100) == f.py_func(100)
    assert f.stats["native_calls"] == 1


INTERRUPTED = """
import signal
import sys
import time

import cuvil_bc.compiler
import cuvil_bc.lower.jit

# Ctrl-C raises KeyboardInterrupt only where SIGINT was not ignored at startup, as it
# is for a job a shell starts in the background (so is the test suite, at times).
signal.signal(signal.SIGINT, signal.default_int_handler)


def kernel(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s


def interrupt_once(module, name):
    real = getattr(module, name)

    def interrupted(*args, **kwargs):
        setattr(module, name, real)
        signal.raise_signal(signal.SIGINT)  # what Ctrl-C does
        return real(*args, **kwargs)

    setattr(module, name, interrupted)


if sys.argv[1] == "compile":  # CUVIL_BC_SYNC: the compile runs on this thread
    interrupt_once(cuvil_bc.compiler.COMPILER, "compile")
else:  # in the background, but the first time LLVM loads on this thread
    interrupt_once(cuvil_bc.lower.jit, "get_jit")
time.sleep(0.3)  # (a program that has run longer than compiling takes: see hook/cost.py)
total = 0
try:
    for k in range(300):
        total += kernel(k % 10)  # few iterations: the call counter triggers first
except KeyboardInterrupt:
    print("interrupted at call", k + 1)
    if sys.argv[2] == "uncaught":
        raise
print(total, sum(kernel(k % 10) for k in range(300)))
"""


@pytest.mark.parametrize("where", ["compile", "get_jit"])
@pytest.mark.parametrize("caught", ["caught", "uncaught"])
def test_ctrl_c_during_a_compile_reaches_the_program(where: str, caught: str, tmp_path: Path) -> None:
    app = program(tmp_path, INTERRUPTED)
    sync = {"CUVIL_BC_SYNC": "1" if where == "compile" else ""}
    done = run(HOOK + [app, where, caught], cwd=tmp_path, env=sync)
    # The threshold is 100 calls: the 101st triggers the compile.
    assert done.stdout.startswith("interrupted at call 101\n"), done.stdout + done.stderr
    assert "cuvil_bc: " not in done.stderr  # no warning: nothing went wrong
    if caught == "uncaught":
        assert done.returncode == -signal.SIGINT  # CPython's exit for an uncaught Ctrl-C
        assert done.stderr.splitlines()[-1] == "KeyboardInterrupt"
    else:
        assert done.returncode == 0, done.stderr
        full = sum(sum(i % 7 for i in range(k % 10)) for k in range(300))
        partial = sum(sum(i % 7 for i in range(k % 10)) for k in range(100))
        assert done.stdout.splitlines()[1] == f"{partial} {full}"


# -- internal errors under -W error (issue 15, item 7) ---------------------------------

INTERNAL_ERRORS = """
import sys
import time

import cuvil_bc.compiler

real = cuvil_bc.compiler.COMPILER.compile


def compile(pyfunc, argtypes, name=None):
    if pyfunc.__name__.startswith("bad"):
        raise RuntimeError("injected internal error")
    return real(pyfunc, argtypes, name)


cuvil_bc.compiler.COMPILER.compile = compile


def bad_one(n):
    s = 0
    for i in range(n):
        s += i % 3
    return s


def bad_two(n):
    s = 0
    for i in range(n):
        s += i % 5
    return s


def good(n):
    s = 0
    for i in range(n):
        s += i % 7
    return s


time.sleep(0.3)  # (a program that has run longer than compiling takes: see hook/cost.py)
for f in (bad_one, bad_two, good):
    print(f.__name__, sum(f(k) for k in range(150)))
if "cuvil_bc.hook.hot" in sys.modules:  # in the background: let the worker finish
    from cuvil_bc.hook.hot import RUNTIME

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(r.status == "interpreted" for r in RUNTIME.records.values()):
        time.sleep(0.01)
print("good again", good(1000))
"""


@pytest.mark.parametrize("sync", ["1", ""], ids=["sync", "background"])
def test_internal_errors_under_w_error_do_not_stop_the_program(sync: str, tmp_path: Path) -> None:
    app = program(tmp_path, INTERNAL_ERRORS)
    plain = run(["-W", "error", app], cwd=tmp_path)
    out = tmp_path / "report.json"
    hooked = run(["-W", "error", *HOOK, app], cwd=tmp_path, env={"CUVIL_BC_SYNC": sync, "CUVIL_BC_REPORT": str(out)})
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr
    assert hooked.stdout == plain.stdout and hooked.returncode == 0, hooked.stderr
    # The warning is still shown, on stderr, as `warnings` would show it.
    assert "RuntimeWarning: cuvil_bc: " in hooked.stderr and "injected internal error" in hooked.stderr
    rows = report(out)
    assert rows["bad_one"]["status"] == rows["bad_two"]["status"] == "unsupported"
    assert rows["good"]["status"] == "native"  # the worker survived both


def test_internal_error_of_compile_under_w_error(tmp_path: Path) -> None:
    app = program(tmp_path, """
        import cuvil_bc
        import cuvil_bc.compiler


        def broken(pyfunc, argtypes, name=None):
            raise RuntimeError("injected internal error")


        cuvil_bc.compiler.COMPILER.compile = broken


        def f(n):
            return n * 2 + 1


        g = cuvil_bc.compile(f)
        print(g(20), g(21), g.stats["interpreted_calls"])
    """)
    done = run(["-W", "error", app], cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "41 43 2\n", done.stderr
    assert "RuntimeWarning: cuvil_bc: f runs interpreted: internal compiler error: RuntimeError: injected internal error" in done.stderr


def test_internal_warning_never_raises(capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        internal_warning("cuvil_bc: something broke", stacklevel=1)
    err = capsys.readouterr().err
    assert err.startswith(f"{__file__}:") and "RuntimeWarning: cuvil_bc: something broke" in err
    with pytest.warns(RuntimeWarning, match="something else"):  # the filters still apply
        internal_warning("cuvil_bc: something else")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        internal_warning("cuvil_bc: ignored")
    assert capsys.readouterr().err == ""
