"""The persistent native-code cache (cuvil_bc/artifacts/).

Programs run in fresh processes, as a user runs them twice: the second run must load
every function it compiled the first time, import no llvmlite, and print what CPython
prints (the same program with the cache off, and plain CPython, are run beside it).
Damaged, foreign and other users' files, concurrent writers, changed globals, the
``-B`` rules, the file's place and its size cap are each checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import cuvil_bc
from cuvil_bc import artifacts
from cuvil_bc.artifacts import artifact, describe, encoding, keys, location

LIB = textwrap.dedent(
    """
    import math
    import os

    import numpy as np

    SCALE = int(os.environ.get("SCALE", "3"))
    OFFSET = 0.25


    def helper(x):
        return math.sqrt(x) * SCALE + OFFSET


    def total(n):
        s = 0.0
        for i in range(n):
            s += helper(i) + np.pi
        return s


    def fill(a, n):
        for i in range(n):
            a[i] = a[i] * SCALE + i
        return a


    def stats(xs):
        lo, hi, s = xs[0], xs[0], 0.0
        for i in range(len(xs)):
            x = xs[i]
            lo = min(lo, x)
            hi = max(hi, x)
            s += x
        return lo, hi, s / len(xs)


    def wide(h):
        for _ in range(4):
            h = (h * 1099511628211) % (1 << 64)
        return h - (1 << 64)


    def spin(z, n):
        for _ in range(n):
            z = z * z * 0.5 + 0.1j
        return z
    """
)

MAIN = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import cuvil_bc
    from cuvil_bc import artifacts
    import lib

    total = cuvil_bc.compile(lib.total)
    fill = cuvil_bc.compile(lib.fill)
    stats = cuvil_bc.compile(lib.stats)
    wide = cuvil_bc.compile(lib.wide)
    spin = cuvil_bc.compile(lib.spin)
    out = []
    out.append(repr(total(50)))
    a = np.arange(6, dtype=np.int64)
    out.append(repr(fill(a, 6).tolist()))
    try:
        fill(a, 9)  # deoptimises at a[6], resumes the interpreter, which raises
    except IndexError as e:
        out.append(f"IndexError: {e} {a.tolist()}")
    out.append(repr(stats(np.linspace(-1.0, 2.0, 7))))
    out.append(repr(wide(12345)))
    out.append(repr(spin(0.3 + 0.2j, 5)))
    functions = (total, fill, stats, wide, spin)
    print(json.dumps({
        "out": out,
        "native": [f.signatures for f in functions],
        "compiles": sum(f.stats["compiles"] for f in functions),
        "loads": sum(f.stats["cache_loads"] for f in functions),
        "counts": artifacts.counts,
        "llvmlite": "llvmlite" in sys.modules,
    }))
    """
)

PLAIN = MAIN.replace("cuvil_bc.compile(lib.", "(lib.").replace('f.stats["compiles"]', "0").replace('f.stats["cache_loads"]', "0").replace("f.signatures", "[]")


def _env(cache: Path | None, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "CUVIL_BC_CACHE", "CUVIL_BC_CACHE_DIR", "CUVIL_BC_CACHE_SIZE"):
        env.pop(name, None)
    if cache is not None:
        env["CUVIL_BC_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "lib.py").write_text(LIB)
    (project / "main.py").write_text(MAIN)
    (project / "plain.py").write_text(PLAIN)
    return project


def _run(project: Path, env: dict[str, str], *flags: str, script: str = "main.py") -> dict:
    done = subprocess.run([sys.executable, *flags, script], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


def _edit(path: Path, text: str) -> None:
    """Rewrite a source of the same size, later by a few seconds: CPython's .pyc knows
    its source by size and whole seconds of modification time."""
    mtime = path.stat().st_mtime
    path.write_text(text)
    os.utime(path, (mtime + 5, mtime + 5))


def _files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.cbn"))


def test_a_second_run_loads_everything_and_never_imports_llvmlite(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cache = tmp_path / "cache"
    plain = _run(project, _env(None), script="plain.py")
    first = _run(project, _env(cache))
    assert first["out"] == plain["out"], (first["out"], plain["out"])
    assert all(first["native"]), first["native"]  # (every function ran natively)
    assert first["compiles"] == 5 and first["loads"] == 0 and first["counts"]["stored"] == 5
    assert len(_files(cache)) == 5
    second = _run(project, _env(cache))
    assert second["out"] == plain["out"]
    assert second["native"] == first["native"]
    assert second["compiles"] == 0 and second["loads"] == 5, second
    assert second["counts"]["refused"] == 0 and second["counts"]["stale"] == 0
    assert not second["llvmlite"]
    assert second["stderr"] == ""
    off = _run(project, _env(cache, CUVIL_BC_CACHE="0"))
    assert off["out"] == plain["out"] and off["compiles"] == 5 and off["loads"] == 0 and off["llvmlite"]


def test_a_changed_global_compiles_again_and_replaces_the_file(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cache = tmp_path / "cache"
    _run(project, _env(cache))
    changed = _run(project, _env(cache, SCALE="5"))
    plain = _run(project, _env(None, SCALE="5"), script="plain.py")
    assert changed["out"] == plain["out"]
    # total (through helper) and fill read SCALE: compiled again; the others loaded.
    assert changed["compiles"] == 2 and changed["loads"] == 3 and changed["counts"]["stale"] == 2
    assert changed["stderr"] == ""
    again = _run(project, _env(cache, SCALE="5"))
    assert again["compiles"] == 0 and again["out"] == plain["out"]


def test_changed_code_is_compiled_again(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cache = tmp_path / "cache"
    _run(project, _env(cache))
    # A callee's code changed: its caller's artifact describes the callee's code.
    _edit(project / "lib.py", LIB.replace("return math.sqrt(x) * SCALE + OFFSET", "return math.sqrt(x) * SCALE - OFFSET"))
    changed = _run(project, _env(cache))
    assert changed["out"] == _run(project, _env(None), script="plain.py")["out"]
    assert changed["compiles"] == 1 and changed["loads"] == 4 and changed["counts"]["stale"] == 1
    # A function's own code changed: another key, another file.
    _edit(project / "lib.py", LIB.replace("a[i] = a[i] * SCALE + i", "a[i] = a[i] * SCALE - i"))
    changed = _run(project, _env(cache))
    assert changed["out"] == _run(project, _env(None), script="plain.py")["out"]
    assert changed["compiles"] == 2 and changed["loads"] == 3 and changed["counts"]["stale"] == 1  # (total: helper is back)


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda data: data[:-7], "damaged"),
        (lambda data: data[:30], "truncated"),
        (lambda data: data[:200] + bytes([data[200] ^ 1]) + data[201:], "damaged"),
        (lambda data: b"not an artifact at all" * 4, "not a cuvil_bc artifact"),
        (lambda data: data[:12] + bytes(32) + data[44:], "key"),
    ],
)
def test_a_damaged_or_foreign_file_is_refused_with_a_warning_and_replaced(tmp_path: Path, damage, says: str) -> None:
    project = _project(tmp_path)
    cache = tmp_path / "cache"
    _run(project, _env(cache))
    victim = _files(cache)[0]
    victim.write_bytes(damage(victim.read_bytes()))
    # (-W error: a bad file must never make a call fail)
    result = _run(project, _env(cache), "-W", "error")
    plain = _run(project, _env(None), script="plain.py")
    assert result["out"] == plain["out"]
    assert result["counts"]["refused"] == 1 and result["compiles"] == 1 and result["loads"] == 4
    assert "ignoring the native code cache file" in result["stderr"] and says in result["stderr"]
    assert _run(project, _env(cache))["compiles"] == 0  # replaced by a sound one


def test_nothing_is_written_under_dont_write_bytecode_but_files_are_read(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cache = tmp_path / "cache"
    assert _run(project, _env(cache), "-B")["counts"]["stored"] == 0
    assert _run(project, _env(cache, PYTHONDONTWRITEBYTECODE="1"))["counts"]["stored"] == 0
    assert not _files(cache)
    _run(project, _env(cache))
    assert _run(project, _env(cache), "-B")["loads"] == 5


def test_files_live_beside_the_pyc_or_under_the_pycache_prefix(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _run(project, _env(None))
    beside = _files(project / "__pycache__")
    assert len(beside) == 5
    assert all(p.parent.name == f"lib.{sys.implementation.cache_tag}.cuvil_bc" for p in beside)
    prefix = tmp_path / "prefix"
    _run(project, _env(None, PYTHONPYCACHEPREFIX=str(prefix)))
    assert len(_files(prefix)) == 5
    assert _run(project, _env(None, PYTHONPYCACHEPREFIX=str(prefix)))["loads"] == 5


def test_the_decorator_can_turn_the_cache_off(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "main.py").write_text(MAIN.replace("cuvil_bc.compile(lib.total)", "cuvil_bc.compile(lib.total, cache=False)"))
    cache = tmp_path / "cache"
    _run(project, _env(cache))
    second = _run(project, _env(cache))
    assert second["compiles"] == 1 and second["loads"] == 4


def test_concurrent_processes_write_and_read_the_same_files(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cache = tmp_path / "cache"
    plain = _run(project, _env(None), script="plain.py")
    runs = [subprocess.Popen([sys.executable, "main.py"], cwd=project, env=_env(cache), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(4)]
    for p in runs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        result = json.loads(out.strip().splitlines()[-1])
        assert result["out"] == plain["out"] and result["counts"]["refused"] == 0 and err == ""
    assert len(_files(cache)) == 5
    assert not list(cache.glob("*.tmp"))
    assert _run(project, _env(cache))["loads"] == 5


def test_artifacts_are_deterministic(tmp_path: Path) -> None:
    project = _project(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    _run(project, _env(one))
    _run(project, _env(two))
    first, second = _files(one), _files(two)
    assert [p.name for p in first] == [p.name for p in second] and first
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


# -- in this process -------------------------------------------------------------------


def _kernel_source(tmp_path: Path) -> object:
    """A function defined in a file (artifacts live beside a file's .pyc)."""
    path = tmp_path / "kernelmod.py"
    path.write_text("def kernel(n):\n    s = 0\n    for i in range(n):\n        s += i * 3 % 7\n    return s\n")
    namespace: dict[str, object] = {"__name__": "kernelmod"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["kernel"]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    artifacts.set_directory(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    yield folder
    artifacts.set_directory(None)


def test_another_users_file_is_refused(cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = _kernel_source(tmp_path)
    f = cuvil_bc.compile(kernel)
    assert f(100) == kernel(100) and f.stats["compiles"] == 1
    assert len(_files(cache_dir)) == 1
    g = cuvil_bc.compile(kernel)
    assert g(100) == kernel(100) and g.stats["cache_loads"] == 1 and g.stats["compiles"] == 0
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)  # the file is now someone else's
    h = cuvil_bc.compile(kernel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert h(100) == kernel(100)
    assert h.stats["compiles"] == 1 and h.stats["cache_loads"] == 0
    assert any("belongs to another user" in str(w.message) for w in caught), [str(w.message) for w in caught]


def test_the_directory_keeps_to_its_size_cap(cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache_dir.mkdir(parents=True)
    old = [cache_dir / f"old{k}{location.SUFFIX}" for k in range(3)]
    for k, p in enumerate(old):
        p.write_bytes(bytes(400 << 10))
        os.utime(p, ns=(k * 10**9, k * 10**9))  # old0 is the least recently used
    other = cache_dir / "notes.txt"
    other.write_bytes(bytes(900 << 10))  # not an artifact: never removed
    monkeypatch.setenv("CUVIL_BC_CACHE_SIZE", "1")  # MiB
    f = cuvil_bc.compile(_kernel_source(tmp_path))
    f(10)
    kept = {p.name for p in _files(cache_dir)}
    assert "old0.cbn" not in kept and "old2.cbn" in kept and other.exists()
    assert sum(p.stat().st_size for p in _files(cache_dir)) <= 1 << 20


def test_the_hook_asks_the_cache_by_name_before_making_a_key(cache_dir: Path, tmp_path: Path) -> None:
    # The hook's first question for each hot function (and each loop entry) on a cold
    # cache: whether its directory holds a file of the function's name, answered
    # without the code as written and its digest (a few ms a function). The
    # directory is listed once a process; what this process stores is added.
    kernel = _kernel_source(tmp_path)
    other = tmp_path / "othermod.py"
    other.write_text("def kernel(n):\n    return n\n\n\ndef lone(n):\n    return -n\n")
    namespace: dict[str, object] = {}
    exec(compile(other.read_text(), str(other), "exec"), namespace)
    lone = namespace["lone"]
    assert not location.may_hold(kernel.__code__)  # type: ignore[attr-defined]  # (no directory yet)
    f = cuvil_bc.compile(kernel)
    assert f(100) == kernel(100) and f.stats["compiles"] == 1  # type: ignore[operator]
    assert location.may_hold(kernel.__code__)  # type: ignore[attr-defined]  # (stored by this process)
    assert not location.may_hold(lone.__code__)  # type: ignore[attr-defined]
    location._names.clear()  # (as a new process sees the directory)
    assert location.may_hold(kernel.__code__) and not location.may_hold(lone.__code__)  # type: ignore[attr-defined]


def test_a_fallback_is_not_stored(cache_dir: Path) -> None:
    def text(n):
        return "x" * n

    f = cuvil_bc.compile(text)
    assert f(3) == "xxx" and not f.signatures
    assert not _files(cache_dir)


def test_encoding_round_trips_and_refuses_what_it_did_not_write() -> None:
    values = [None, True, False, 0, -1, 2**100, -(2**70), 0.0, -0.0, float("inf"), float("nan"), "", "é\udc80", b"\x00\xff",
              (), (1, (2.5, "x", (None,))), tuple(range(40))]
    for v in values:
        back = encoding.decode(encoding.encode(v))
        assert encoding.encode(back) == encoding.encode(v) and type(back) is type(v)
    assert np.isnan(encoding.decode(encoding.encode(float("nan"))))
    data = encoding.encode((1, "two", b"three", (4.0,)))
    for cut in range(len(data)):
        with pytest.raises(encoding.Malformed):
            encoding.decode(data[:cut])
    for bad in (b"X", b"t\xff\xff\xff\xff", b"s\x05\x00\x00\x00ab", b"NN", b"t\x01\x00\x00\x00" * 40 + b"N", b"i\x00\x00\x00\x00"):
        with pytest.raises(encoding.Malformed):
            encoding.decode(bad)
    with pytest.raises(TypeError):
        encoding.encode([1, 2])


def test_descriptions_tell_apart_what_guards_tell_apart() -> None:
    import math

    original = lambda v: v  # noqa: E731

    def same(a: object, b: object) -> bool:
        return encoding.encode(describe.value(a, original)) == encoding.encode(describe.value(b, original))

    assert not same(1, 1.0) and not same(1, True) and not same(0.0, -0.0) and same(float("nan"), float("nan"))
    assert not same(math.sqrt, math.cos) and same(math.sqrt, math.sqrt) and not same(np.float64(1.5), 1.5)
    assert not same(np.float64(1.5), np.float32(1.5)) and same(np, np)
    with pytest.raises(describe.Undescribable):
        describe.value(object(), original)
    with pytest.raises(describe.Undescribable):
        describe.value([1, 2], original)


def test_a_key_covers_the_signature_and_the_compile_settings() -> None:
    from cuvil_bc.typing.types import FLOAT, INT

    def f(x):
        return x + 1

    base = keys.key(f, (INT,), frozenset(), True)
    assert keys.key(f, (INT,), frozenset(), True) == base
    assert len({base, keys.key(f, (FLOAT,), frozenset(), True), keys.key(f, (INT,), frozenset({"entry bounds"}), True),
                keys.key(f, (INT,), frozenset(), False)}) == 4


def test_an_artifact_holds_its_key_and_its_fingerprint() -> None:
    from cuvil_bc.compiler import COMPILER
    from cuvil_bc.typing.types import INT

    def f(x):
        return x * 2 + 1

    spec = COMPILER.compile(f, (INT,))
    key = keys.key(f, (INT,), frozenset(), True)
    data = artifact.build(spec, key, frozenset(), COMPILER.original)
    loaded = artifact.load(data, key, f, (INT,), COMPILER.original)
    assert loaded.entry == spec.entry and loaded.return_type == spec.return_type
    other = keys.key(f, (INT,), frozenset(), False)
    with pytest.raises(artifact.Refused, match="key"):
        artifact.load(data, other, f, (INT,), COMPILER.original)


def test_a_loaded_function_that_stops_speculating_takes_its_callees_along(cache_dir: Path, tmp_path: Path) -> None:
    """A specialisation loaded from the cache does not know its callees: when its
    speculation fails (or an assumption is dropped), this process types it to find
    them, so that its next compile builds them without speculation too."""
    from cuvil_bc.compiler import COMPILER

    path = tmp_path / "callermod.py"
    path.write_text("def inner(x):\n    return x * 3 + 1\n\n\ndef outer(n):\n    s = 0\n    for i in range(n):\n        s += inner(i)\n    return s\n")
    namespace: dict[str, object] = {"__name__": "callermod"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    outer, inner = namespace["outer"], namespace["inner"]
    first = cuvil_bc.compile(outer)
    assert first(10) == outer(10) and first.stats["compiles"] == 1
    second = cuvil_bc.compile(outer)
    assert second(10) == outer(10) and second.stats["cache_loads"] == 1
    (native,) = second.dispatcher._native.values()
    assert native.spec.from_cache and native.spec.calls_native
    COMPILER.stop_speculating(native.spec)
    assert outer in COMPILER.no_speculation and inner in COMPILER.no_speculation


SIGNALLED = textwrap.dedent(
    """
    import json, signal, sys, time
    import cuvil_bc
    import spin

    class Alarm(Exception):
        pass

    def ring(signum, frame):
        raise Alarm

    f = cuvil_bc.compile(spin.spin)
    f(1000)  # compiled, or loaded from the cache
    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    start = time.perf_counter()
    try:
        f(10**10)  # seconds of work unless the alarm stops it
        stopped = None
    except Alarm:
        stopped = time.perf_counter() - start
    print(json.dumps({"stopped": stopped, "loads": f.stats["cache_loads"], "llvmlite": "llvmlite" in sys.modules}))
    """
)


def test_a_program_that_loads_everything_still_sees_its_signals(tmp_path: Path) -> None:
    """Native loops see signals through the runtime's handler, which the JIT used to
    install when it started: a process that loads all its code never starts one."""
    project = tmp_path / "signalled"
    project.mkdir()
    (project / "spin.py").write_text("def spin(n):\n    t = 0\n    i = 0\n    while i < n:\n        t = (t * 3 + i) % 1000003\n        i += 1\n    return t\n")
    (project / "main.py").write_text(SIGNALLED)
    cache = tmp_path / "cache"
    first = _run(project, _env(cache))
    second = _run(project, _env(cache))
    assert second["loads"] == 1 and not second["llvmlite"]
    for result in (first, second):
        assert result["stopped"] is not None and result["stopped"] < 0.2 + 0.5, result


# -- ahead of time (python -m cuvil_bc compile) -----------------------------------------

HOOKED_LIB = textwrap.dedent(
    """
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps


    def longest(lo, hi):
        best, at = 0, lo
        for k in range(lo, hi):
            s = collatz(k)
            if s > best:
                best, at = s, k
        return at, best


    def wave(x, n):
        t = 0.0
        for k in range(n):
            t += (x * k) % 1.7 - 0.85
        return t


    def tail(n):
        t = 0
        for k in range(n):
            t ^= k * 3
        return t
    """
)
HOOKED_MAIN = textwrap.dedent(
    """
    import json, sys
    import pkglib.work as work

    out = [work.longest(k * 500 + 1, k * 500 + 500) for k in range(30)]
    out += [round(work.wave(k / 7.0, 3000), 9) for k in range(200)]
    print(json.dumps(out))
    print("llvmlite" in sys.modules, file=sys.stderr)
    """
)


def _hooked_project(tmp_path: Path) -> Path:
    project = tmp_path / "hooked"
    (project / "pkglib").mkdir(parents=True)
    (project / "pkglib" / "__init__.py").write_text("")
    (project / "pkglib" / "work.py").write_text(HOOKED_LIB)
    (project / "main.py").write_text(HOOKED_MAIN)
    return project


def _hooked(project: Path, env: dict[str, str], sync: bool = True) -> tuple[str, str]:
    env = {**env, "CUVIL_BC_SYNC": "1"} if sync else env
    done = subprocess.run([sys.executable, "-X", "importhook", "cuvil_bc", "main.py"], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def _compile_ahead(project: Path, report: Path, cache: Path, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "cuvil_bc", "compile", str(project), "--signatures-from", str(report), "--cache-dir", str(cache)],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_ahead_of_time_artifacts_let_a_program_run_without_llvm(tmp_path: Path) -> None:
    project = _hooked_project(tmp_path)
    plain = subprocess.run([sys.executable, "main.py"], cwd=project, env=_env(None), capture_output=True, text=True, timeout=300).stdout
    report = tmp_path / "report.json"
    first, _ = _hooked(project, _env(None, CUVIL_BC_CACHE="0", CUVIL_BC_REPORT=str(report)))
    assert first == plain
    rows = {r["qualname"]: r for r in json.loads(report.read_text())["functions"]}
    assert rows["longest"]["signatures"] == ["(int, int)"] and rows["wave"]["signatures"] == ["(float, int)"]
    cache = tmp_path / "aot"
    out = _compile_ahead(project, report, cache, _env(None))
    assert "built pkglib.work.longest (int, int)" in out and "built pkglib.work.wave (float, int)" in out, out
    report2 = tmp_path / "report2.json"
    again, err = _hooked(project, _env(cache, CUVIL_BC_REPORT=str(report2)))
    assert again == plain
    assert err.strip().splitlines()[-1] == "False"  # llvmlite never imported
    rows = {r["qualname"]: r for r in json.loads(report2.read_text())["functions"]}
    assert rows["longest"]["status"] == rows["wave"]["status"] == "native"
    assert rows["longest"]["calls_native"] > 0 and rows["wave"]["calls_native"] > 0
    # Compiling in the background, as users run it: a function found in the cache is
    # loaded at once, and LLVM is not loaded for the worker.
    background, err = _hooked(project, _env(cache), sync=False)
    assert background == plain and err.strip().splitlines()[-1] == "False"


WARM_MAIN = textwrap.dedent(
    """
    import json, sys
    import pkglib.work as work

    out = [round(work.wave(k / 7.0, 3000), 9) for k in range(6000)]
    out += [work.tail(600) for _ in range(5)]  # hot in its 4th call: compiling as the program ends
    print(json.dumps(out))
    heavy = ("llvmlite", "bytecode", "cuvil_bc.compiler", "cuvil_bc.pipeline", "typing", "dataclasses", "inspect")
    print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)
    """
)


def test_a_warm_run_of_the_hook_loads_everything_without_the_compiler(tmp_path: Path) -> None:
    # Compiling in the background, as users run it. The first run's exit waits for the
    # compile it started last (its native code saved more time than that), so that the
    # second run loads everything, and imports neither LLVM nor the compiler's front
    # end (which, asked whether a hot function compiles, it used to import to learn
    # what the artifact proves), nor typing, dataclasses and inspect (~10 ms: the
    # loader's modules import typing only to type-check, and records.py makes their
    # data classes).
    project = _hooked_project(tmp_path)
    (project / "main.py").write_text(WARM_MAIN)
    plain = subprocess.run([sys.executable, "main.py"], cwd=project, env=_env(None), capture_output=True, text=True, timeout=300).stdout
    cache = tmp_path / "cache"
    first, err = _hooked(project, _env(cache), sync=False)
    assert first == plain
    assert "'llvmlite'" in err.strip().splitlines()[-1]
    report = tmp_path / "report.json"
    again, err = _hooked(project, _env(cache, CUVIL_BC_REPORT=str(report)), sync=False)
    assert again == plain
    assert err.strip().splitlines()[-1] == "[]", err
    rows = {r["qualname"]: r for r in json.loads(report.read_text())["functions"]}
    assert rows["wave"]["status"] == rows["tail"]["status"] == "native", rows
    assert rows["tail"]["calls_native"] > 0


ONCE_MAIN = textwrap.dedent(
    """
    import sys

    def simulate(steps):
        t = 0
        for i in range(steps):
            t = (t + i * i) % 1000003
        return t

    print(simulate(6_000_000))  # called once: on-stack replacement
    print(sorted(m for m in ("llvmlite", "bytecode", "cuvil_bc.compiler", "cuvil_bc.pipeline") if m in sys.modules), file=sys.stderr)
    """
)


def test_a_warm_run_enters_a_loop_from_the_cache_without_the_compiler(tmp_path: Path) -> None:
    # The first run compiles the loop's entry in the background and stores it; the
    # second finds it in the cache and loads it on the program's thread (it used to
    # load the compiler and queue the compile, which then loaded it), without the
    # bytecode library either (decode/resume.osr_code splices the entry's prologue in).
    project = tmp_path / "once"
    project.mkdir()
    (project / "main.py").write_text(ONCE_MAIN)
    plain = subprocess.run([sys.executable, "main.py"], cwd=project, env=_env(None), capture_output=True, text=True, timeout=300).stdout
    cache = tmp_path / "cache"
    reports = [tmp_path / "first.json", tmp_path / "second.json"]
    errs = []
    for report in reports:
        out, err = _hooked(project, _env(cache, CUVIL_BC_REPORT=str(report)), sync=False)
        assert out == plain
        errs.append(err.strip().splitlines()[-1])
    rows = [{r["qualname"]: r for r in json.loads(report.read_text())["functions"]} for report in reports]
    assert rows[0]["simulate"]["osr_entries"] == 1 and errs[0] != "[]"
    assert rows[1]["simulate"]["osr_entries"] == 1 and errs[1] == "[]", (rows[1]["simulate"], errs[1])


def test_ahead_of_time_artifacts_are_deterministic(tmp_path: Path) -> None:
    project = _hooked_project(tmp_path)
    report = tmp_path / "report.json"
    _hooked(project, _env(None, CUVIL_BC_CACHE="0", CUVIL_BC_REPORT=str(report)))
    one, two = tmp_path / "one", tmp_path / "two"
    _compile_ahead(project, report, one, _env(None))
    _compile_ahead(project, report, two, _env(None, PYTHONHASHSEED="12345"))
    first, second = _files(one), _files(two)
    assert len(first) >= 2 and [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_compile_says_what_it_skips(tmp_path: Path) -> None:
    project = tmp_path / "script"
    project.mkdir()
    (project / "main.py").write_text("def spin(n):\n    t = 0\n    for k in range(n):\n        t += k % 7\n    return t\n\nprint(sum(spin(k) for k in range(3000)))\n")
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-X", "importhook", "cuvil_bc", "main.py"], cwd=project,
                          env=_env(None, CUVIL_BC_CACHE="0", CUVIL_BC_SYNC="1", CUVIL_BC_REPORT=str(report)), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = _compile_ahead(project, report, tmp_path / "aot", _env(None))
    assert "skipped __main__.spin: a script's own function" in out, out


# -- worker processes -------------------------------------------------------------------

WORKER_LIB = textwrap.dedent(
    """
    import sys
    import cuvil_bc


    @cuvil_bc.compile
    def work(n):
        t = 0
        for k in range(n):
            t += (k * k) % 11
        return t


    def task(n):
        return work(n), work.stats["compiles"], work.stats["cache_loads"], "llvmlite" in sys.modules
    """
)
WORKER_MAIN = textwrap.dedent(
    """
    import json, multiprocessing, pickle
    from concurrent.futures import ProcessPoolExecutor
    import wlib

    if __name__ == "__main__":
        first = wlib.task(1000)  # compiled here, and stored
        assert pickle.loads(pickle.dumps(wlib.work)) is wlib.work  # (by reference)
        out = {"parent": first}
        for method in ("spawn", "fork", "forkserver"):
            with multiprocessing.get_context(method).Pool(2) as pool:
                out[method] = pool.map(wlib.task, [2000, 3000, 4000])
        with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as ex:
            out["executor"] = list(ex.map(wlib.task, [2000, 3000]))
        print(json.dumps(out))
    """
)


def test_worker_processes_load_compiled_code_instead_of_compiling(tmp_path: Path) -> None:
    project = tmp_path / "workers"
    project.mkdir()
    (project / "wlib.py").write_text(WORKER_LIB)
    (project / "main.py").write_text(WORKER_MAIN)
    result = _run(project, _env(tmp_path / "cache"))
    expected = {n: sum((k * k) % 11 for k in range(n)) for n in (1000, 2000, 3000, 4000)}
    assert result["parent"][:3] == [expected[1000], 1, 0]
    for method in ("spawn", "forkserver", "executor"):
        for (value, compiles, loads, llvmlite), n in zip(result[method], (2000, 3000, 4000)):
            # A fresh interpreter: the function came from the cache, and LLVM never loaded.
            assert (value, compiles, loads, llvmlite) == (expected[n], 0, 1, False), (method, result[method])
    for (value, compiles, loads, _), n in zip(result["fork"], (2000, 3000, 4000)):
        assert (value, compiles, loads) == (expected[n], 1, 0)  # the parent's code, inherited: nothing compiled again


DASK_MAIN = textwrap.dedent(
    """
    import json
    import wlib

    if __name__ == "__main__":
        from dask.distributed import Client, LocalCluster

        first = wlib.task(1000)  # compiled here, and stored
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
            out = client.gather(client.map(wlib.task, [2000, 3000, 4000], pure=False))
        print(json.dumps({"parent": first, "workers": out}))
    """
)


def test_a_dask_cluster_loads_compiled_code_instead_of_compiling(tmp_path: Path) -> None:
    # A real cluster (dask.distributed, in the test extra): its worker processes get
    # the task by reference, import the module, and load the function's native code
    # from the cache the parent filled.
    project = tmp_path / "dask"
    project.mkdir()
    (project / "wlib.py").write_text(WORKER_LIB)
    (project / "main.py").write_text(DASK_MAIN)
    env = _env(tmp_path / "cache", PYTHONPATH=os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")]))
    result = _run(project, env)
    expected = {n: sum((k * k) % 11 for k in range(n)) for n in (1000, 2000, 3000, 4000)}
    assert result["parent"] == [expected[1000], 1, 0, True]
    assert result["workers"] == [[expected[n], 0, 1, False] for n in (2000, 3000, 4000)], result["workers"]


# -- what a helper found (each failed before its fix) -----------------------------------

ALIASED = textwrap.dedent(
    """
    import json, sys
    import cuvil_bc

    def make_scaler(k):
        def scale(x, k=k):
            return x * k
        return scale

    scale_a = make_scaler(2)
    scale_b = scale_a if sys.argv[1] == "shared" else make_scaler(3)
    relu, leaky = make_scaler(0), make_scaler(0)
    CHOSEN = relu if sys.argv[1] == "shared" else leaky

    def f(x):
        return scale_a(x) + scale_b(x)

    def g(x):
        return relu is CHOSEN

    cf, cg = cuvil_bc.compile(f), cuvil_bc.compile(g)
    print(json.dumps({"out": [cf(10), f(10), cg(1), g(1)], "loads": cf.stats["cache_loads"] + cg.stats["cache_loads"], "native": [cf.signatures, cg.signatures]}))
    """
)


def test_objects_that_were_one_must_be_one_again(tmp_path: Path) -> None:
    """Two globals that named one function when the code was compiled, and two
    functions in the next run: the code checked the defaults of the one (and folded
    ``relu is CHOSEN``). The identities of the guards' values are part of the
    artifact."""
    project = tmp_path / "aliased"
    project.mkdir()
    (project / "m.py").write_text(ALIASED)
    cache = tmp_path / "cache"
    env = _env(cache)
    for first, second in (("shared", "separate"), ("separate", "shared")):
        for mode in (first, second):
            done = subprocess.run([sys.executable, "m.py", mode], cwd=project, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
            result = json.loads(done.stdout)
            cf, f, cg, g = result["out"]
            assert (cf, cg) == (f, g) and all(result["native"]), (mode, result)
        assert result["loads"] == 0  # (the second mode compiled again)


def test_a_callee_with_other_globals_is_not_taken_for_the_callers(tmp_path: Path) -> None:
    project = tmp_path / "globals"
    project.mkdir()
    (project / "m.py").write_text(textwrap.dedent(
        """
        import json, sys
        import cuvil_bc
        K = 1

        def g(x):
            return x + K

        if sys.argv[1] == "other":
            ns = {"__name__": __name__, "K": 100}
            exec(compile("\\n" * 5 + "def g(x):\\n    return x + K\\n", __file__, "exec"), ns)
            g = ns["g"]

        def f(x):
            return g(x)

        cf = cuvil_bc.compile(f)
        print(json.dumps([cf(5), f(5), cf.stats["cache_loads"]]))
        """))
    env = _env(tmp_path / "cache")
    for mode in ("same", "other"):
        done = subprocess.run([sys.executable, "m.py", mode], cwd=project, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        compiled, plain, loads = json.loads(done.stdout)
        assert compiled == plain, (mode, compiled, plain)


def test_values_that_cannot_be_stored_leave_the_function_native(cache_dir: Path) -> None:
    from cuvil_bc.testing import compile_source

    deep: object = 0
    for _ in range(40):
        deep = (deep, 2)
    f = compile_source("def f(x):\n    return x + T[1]\n", T=deep)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(10) == 12
    assert f.signatures and f.stats["compiles"] == 1
    strict = cuvil_bc.compile(f.py_func, strict=True)
    assert strict(10) == 12
    big = compile_source("def f(x):\n    return x + len(S)\n", S="x" * (1 << 20))
    assert big(1) == (1 << 20) + 1 and big.signatures
    sizes = [p.stat().st_size for p in _files(cache_dir)]
    assert sizes and max(sizes) < 64 << 10  # (the string is described by a digest)


def test_siblings_made_by_one_factory_share_their_artifact(tmp_path: Path) -> None:
    project = tmp_path / "siblings"
    project.mkdir()
    (project / "m.py").write_text(textwrap.dedent(
        """
        import json
        import cuvil_bc

        def make(k):
            def scaled(x, k=k):
                t = 0
                for i in range(x):
                    t += i * k
                return t
            return scaled

        a, b = cuvil_bc.compile(make(2)), cuvil_bc.compile(make(3))
        print(json.dumps([a(10), b(10), a.stats["cache_loads"] + b.stats["cache_loads"]]))
        """))
    env = _env(tmp_path / "cache")
    runs = [json.loads(subprocess.run([sys.executable, "m.py"], cwd=project, env=env, capture_output=True, text=True, timeout=300, check=True).stdout) for _ in range(2)]
    assert runs[0] == [90, 135, 1] and runs[1] == [90, 135, 2]  # (the defaults are bound by the dispatcher)


def test_a_crafted_file_with_sound_hashes_is_refused_and_replaced(cache_dir: Path, tmp_path: Path) -> None:
    import hashlib

    kernel = _kernel_source(tmp_path)
    f = cuvil_bc.compile(kernel)
    f(10)
    (path,) = _files(cache_dir)
    data = path.read_bytes()
    size = artifact._HEADER.size
    fields, obj = encoding.decode(data[size:])
    owners, entries, identities = fields[8]
    crafted = (owners, ((0, (), "x", False, ("=", 1)),), (-1, -1))
    fields = (*fields[:8], crafted, *fields[9:])
    body = encoding.encode((fields, obj))
    key = data[12:44]
    path.write_bytes(artifact._HEADER.pack(artifact.MAGIC, keys.FORMAT, key, artifact._fingerprint(key, crafted), hashlib.sha256(body).digest()) + body)
    g = cuvil_bc.compile(kernel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert g(10) == kernel(10) and g.signatures
    assert any("ignoring the native code cache file" in str(w.message) for w in caught)
    assert g.stats["compiles"] == 1
    h = cuvil_bc.compile(kernel)
    assert h(10) == kernel(10) and h.stats["cache_loads"] == 1  # (replaced by a sound one)


def test_a_loaded_function_can_still_be_inspected(cache_dir: Path, tmp_path: Path) -> None:
    kernel = _kernel_source(tmp_path)
    f = cuvil_bc.compile(kernel)
    f(10)
    g = cuvil_bc.compile(kernel)
    g(10)
    assert g.stats["cache_loads"] == 1
    (native,) = g.dispatcher._native.values()
    assert native.spec.fn is not None
    assert g.inspect_ir() == f.inspect_ir() != ""
    assert "define" in g.inspect_llvm() and g.inspect_asm()
