"""The cache of rewritten modules, and the hook used from code (install/uninstall).

Subprocess runs check the on-disk behaviour as a user sees it (-B, -O, -OO,
pycache_prefix, concurrent imports); in-process tests check what is rewritten and
when, by counting calls to the rewrite.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import cuvil_bc
from cuvil_bc.hook import cache, finder, rewrite
from cuvil_bc.hook.hot import RUNTIME

MODULE = textwrap.dedent(
    """
    def kernel(n):
        s = 0
        for i in range(n):
            s += i % 7
        return s


    def text(n):
        out = ""
        for _ in range(n):
            out += "x"
        return out
    """
)


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "CUVIL_BC_REPORT", "PYTHONOPTIMIZE"):
        env.pop(name, None)
    env["CUVIL_BC_SYNC"] = "1"
    env.update(extra)
    return env


def _project(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "numlib.py").write_text(MODULE)
    (tmp_path / "main.py").write_text("import numlib\nprint(sum(numlib.kernel(k) for k in range(300)))\n")
    return tmp_path


def _run(project: Path, *flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *flags, "-X", "importhook=cuvil_bc", "main.py"],
        cwd=project, capture_output=True, text=True, env=env or _env(), timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done


def _ours(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob(f"*.{cache.TAG}.pyc"))


def test_cache_files_beside_the_pyc(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _run(project)
    tag = sys.implementation.cache_tag
    assert _ours(project) == sorted([f"main.{tag}.{cache.TAG}.pyc", f"numlib.{tag}.{cache.TAG}.pyc"])
    assert (project / "__pycache__" / f"numlib.{tag}.pyc").is_file()  # the normal .pyc is untouched
    assert _run(project).stdout == first.stdout


@pytest.mark.parametrize("flag, suffix", [("-O", ".opt-1"), ("-OO", ".opt-2")])
def test_optimisation_levels_get_their_own_files(tmp_path: Path, flag: str, suffix: str) -> None:
    project = _project(tmp_path)
    _run(project, flag)
    assert f"numlib.{sys.implementation.cache_tag}{suffix}.{cache.TAG}.pyc" in _ours(project)
    assert f"numlib.{sys.implementation.cache_tag}.{cache.TAG}.pyc" not in _ours(project)


def test_dont_write_bytecode_is_respected(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _run(project, "-B")
    _run(project, env=_env(PYTHONDONTWRITEBYTECODE="1"))
    assert _ours(project) == []


def test_pycache_prefix_is_respected(tmp_path: Path) -> None:
    project = _project(tmp_path / "src")
    prefix = tmp_path / "prefix"
    _run(project, "-X", f"pycache_prefix={prefix}")
    assert _ours(project) == []
    assert any(name.startswith("numlib.") for name in _ours(prefix))


def test_concurrent_first_imports(tmp_path: Path) -> None:
    project = _project(tmp_path)
    procs = [
        subprocess.Popen([sys.executable, "-X", "importhook=cuvil_bc", "main.py"], cwd=project, env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert len({out for out, _ in outputs}) == 1 and all(err == "" for _, err in outputs)
    assert not list(project.rglob("*.tmp"))
    loaded = cache.load(str(project / "numlib.py"), "numlib")
    assert loaded is not None and [fields[2] for fields in loaded[1]] == ["kernel", "text"]  # (key, module, qualname, ...)


# -- in-process: what gets rewritten, and when -------------------------------------------


@pytest.fixture
def hooked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Install the hook for modules in tmp_path; count the rewrites."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.syspath_prepend(str(tmp_path))
    calls: list[str] = []
    real = rewrite.instrument_module

    def counting(code, module):  # type: ignore[no-untyped-def]
        calls.append(module)
        return real(code, module)

    monkeypatch.setattr(finder, "instrument_module", counting)
    saved = RUNTIME.options
    cuvil_bc.install(include=["cachetest_*"])
    try:
        yield tmp_path, calls
    finally:
        cuvil_bc.uninstall()
        RUNTIME.options = saved
        for name in [m for m in sys.modules if m.startswith("cachetest_")]:
            del sys.modules[name]


def _import_fresh(name: str):  # type: ignore[no-untyped-def]
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def test_second_import_reads_the_cache(hooked) -> None:  # type: ignore[no-untyped-def]
    directory, calls = hooked
    (directory / "cachetest_a.py").write_text(MODULE)
    first = _import_fresh("cachetest_a")
    assert calls == ["cachetest_a"]
    assert first.kernel.__code__.co_consts != compile(MODULE, "x", "exec").co_consts[0].co_consts  # counted
    second = _import_fresh("cachetest_a")
    assert calls == ["cachetest_a"]  # no second rewrite
    assert second.kernel(100) == sum(i % 7 for i in range(100))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "foreign", "stale"])
def test_damaged_cache_is_ignored_and_rebuilt(hooked, damage: str) -> None:  # type: ignore[no-untyped-def]
    directory, calls = hooked
    source = directory / "cachetest_b.py"
    source.write_text(MODULE)
    _import_fresh("cachetest_b")
    path = Path(cache.cache_path(str(source)) or "")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(data[:32] + b"\x00garbage" * 10)
    elif damage == "foreign":
        path.write_bytes(b"NOTOURS!" + data[8:])
    else:  # the source changed since
        source.write_text(MODULE + "\nEXTRA = 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = _import_fresh("cachetest_b")
    # Out of date: rebuilt without a word; damaged or foreign: rebuilt, with a warning.
    said = [str(w.message) for w in caught if str(w.message).startswith("cuvil_bc: ignoring")]
    assert len(said) == (damage != "stale"), said
    assert calls == ["cachetest_b", "cachetest_b"]
    assert module.kernel(50) == sum(i % 7 for i in range(50))
    assert cache.load(str(source), "cachetest_b") is not None  # rebuilt


def test_unwritable_cache_directory(hooked) -> None:  # type: ignore[no-untyped-def]
    directory, calls = hooked
    (directory / "cachetest_c.py").write_text(MODULE)
    (directory / "__pycache__").write_text("a file where the cache directory would be")
    module = _import_fresh("cachetest_c")
    assert module.kernel(10) == sum(i % 7 for i in range(10))
    assert calls == ["cachetest_c"]
    assert not list(directory.glob("*.tmp"))


def test_out_of_scope_modules_are_untouched(hooked) -> None:  # type: ignore[no-untyped-def]
    directory, calls = hooked
    (directory / "other_mod.py").write_text(MODULE)
    cuvil_bc.install(exclude=["other_*"])
    module = _import_fresh("other_mod")
    assert calls == []
    assert type(module.__loader__).__name__ == "SourceFileLoader"
    sys.modules.pop("other_mod", None)


def test_uninstall_stops_rewriting(hooked) -> None:  # type: ignore[no-untyped-def]
    directory, calls = hooked
    (directory / "cachetest_d.py").write_text(MODULE)
    cuvil_bc.uninstall()
    _import_fresh("cachetest_d")
    assert calls == []


def test_a_failing_rewrite_warns_once_and_the_module_runs(hooked, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    directory, _ = hooked

    def broken(code, module):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated rewrite failure")

    monkeypatch.setattr(finder, "instrument_module", broken)
    (directory / "cachetest_e.py").write_text(MODULE)
    RUNTIME.warned.clear()
    with pytest.warns(RuntimeWarning, match="cachetest_e runs without acceleration: RuntimeError: simulated"):
        module = _import_fresh("cachetest_e")
    assert module.kernel(30) == sum(i % 7 for i in range(30))
    assert module.kernel.__code__.co_consts == compile(MODULE, "x", "exec").co_consts[0].co_consts  # untouched


# -- the cache as an attack surface (issue 15 item 15) -----------------------------------


def _launch(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=project, capture_output=True, text=True, env=env or _env(), timeout=120)


def _report(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run with the hook and a report: the run, and each function's status."""
    out = project / "report.json"
    done = _launch(project, "-X", "importhook=cuvil_bc", *args, env={**(env or _env()), "CUVIL_BC_REPORT": str(out)})
    statuses = {r["qualname"]: r["status"] for r in json.loads(out.read_text())["functions"]} if out.exists() else {}
    return done, statuses


def test_cache_files_keep_the_sources_permissions(tmp_path: Path) -> None:
    # importlib gives a .pyc its source's mode (plus write for the owner): a constant in
    # a 0600 source must not become readable by others through the rewrite's files.
    project = _project(tmp_path)
    (project / "numlib.py").chmod(0o600)
    _run(project)
    normal = project / "__pycache__" / f"numlib.{sys.implementation.cache_tag}.pyc"
    ours = [project / "__pycache__" / name for name in _ours(project) if name.startswith("numlib.")]
    ours.append(ours[0].with_name(ours[0].name[:-4] + ".report.pyc"))
    assert normal.stat().st_mode & 0o777 == 0o600
    assert [p.stat().st_mode & 0o777 for p in ours] == [0o600, 0o600]


def test_a_planted_symlink_is_not_written_through(hooked, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # Whoever can write the __pycache__ directory may put a symlink where the temporary
    # file will be: the write must not follow it (importlib opens with O_EXCL).
    directory, _ = hooked
    victim = directory / "victim.txt"
    victim.write_bytes(b"precious\n")
    planted: list[str] = []
    real_open, real_os_open = open, os.open

    def plant(path: object) -> None:
        name = os.fspath(path)  # type: ignore[call-overload]
        if isinstance(name, str) and name.endswith(".tmp") and "cachetest_f" in name and not os.path.lexists(name):
            os.symlink(victim, name)
            planted.append(name)

    def spying_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        plant(path)
        return real_open(path, *args, **kwargs)

    def spying_os_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        plant(path)
        return real_os_open(path, *args, **kwargs)

    (directory / "cachetest_f.py").write_text(MODULE)
    with monkeypatch.context() as patched:
        patched.setattr("builtins.open", spying_open)
        patched.setattr(os, "open", spying_os_open)
        module = _import_fresh("cachetest_f")
    assert planted  # the writer did try
    assert victim.read_bytes() == b"precious\n"
    assert module.kernel(20) == sum(i % 7 for i in range(20))
    assert not Path(cache.cache_path(str(directory / "cachetest_f.py")) or "").is_symlink()


HASHED = 'def kernel(n):\n    s = 0\n    for i in range(n):\n        s += i % 7\n    return s\n\n\nVERSION = "A"\n'


@pytest.mark.parametrize(
    "invalidation, check",
    [("checked-hash", "default"), ("checked-hash", "never"), ("unchecked-hash", "default"),
     ("unchecked-hash", "always"), ("timestamp", "default")],
)
def test_hash_based_pycs_are_checked_as_cpython_checks_them(tmp_path: Path, invalidation: str, check: str) -> None:
    # PEP 552: a hash-based .pyc is validated by the source's hash (when it is checked),
    # so CPython sees an edit that keeps the source's mtime and size; with the hook, the
    # same code must run as without it, whether or not CPython sees the edit.
    project = tmp_path
    (project / "hashmod.py").write_text(HASHED)
    (project / "main.py").write_text("import hashmod\nprint(hashmod.VERSION, sum(hashmod.kernel(k) for k in range(300)))\n")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode", invalidation, "hashmod.py"],
                   cwd=project, check=True, env=_env())
    flags = ["--check-hash-based-pycs", check]
    _run(project, *flags)  # the rewrite's cache, from that .pyc
    source = project / "hashmod.py"
    st = source.stat()
    source.write_text(HASHED.replace('"A"', '"B"'))  # same size
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    plain = _launch(project, *flags, "main.py")
    assert plain.returncode == 0, plain.stderr
    assert _run(project, *flags).stdout == plain.stdout


def _copy_of_cuvil_bc(tmp_path: Path) -> Path:
    """A copy of the package whose rewrite says on stderr which module it rewrites (put
    its parent first on PYTHONPATH to run it)."""
    copy = tmp_path / "other_build" / "cuvil_bc"
    shutil.copytree(Path(cuvil_bc.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / "hook" / "rewrite.py"
    source.write_text(
        source.read_text()
        + "\n\n_instrument_module = instrument_module\n\n\ndef instrument_module(code, module):\n"
        + "    import sys\n\n    sys.stderr.write(f'rewriting {module}\\n')\n    return _instrument_module(code, module)\n"
    )
    return copy.parent


def test_a_cache_from_another_build_is_not_used(tmp_path: Path) -> None:
    # Same version, same FORMAT, same file name; but another rewrite wrote it.
    project = _project(tmp_path / "project")
    first = _run(project)
    other = _launch(project, "-X", "importhook=cuvil_bc", "main.py", env=_env(PYTHONPATH=str(_copy_of_cuvil_bc(tmp_path))))
    assert other.returncode == 0, other.stderr
    assert other.stdout == first.stdout
    assert other.stderr.splitlines() == ["rewriting __main__", "rewriting numlib"]
    assert _run(project).stdout == first.stdout  # and back: rebuilt again, silently


SABOTEUR = """
import cuvil_bc.hook.cache as _cache

_store = _cache.store


def _store_without_candidates(source, code, infos, *rest):
    _store(source, code, [i for i in infos if not i.candidate], *rest)


_cache.store = _store_without_candidates
"""


@pytest.mark.parametrize("program", ["script", "module"])
def test_an_inconsistent_cache_is_rebuilt(tmp_path: Path, program: str) -> None:
    # A well-formed file whose code counts a function that its records lack (here, a
    # writer that drops them): the program must run as written, and the file be rebuilt.
    project = _project(tmp_path / "project")
    if program == "script":
        (project / "main.py").write_text(MODULE + "\nprint(sum(kernel(k) for k in range(300)))\n")
    saboteur = tmp_path / "saboteur"
    saboteur.mkdir()
    (saboteur / "sitecustomize.py").write_text(SABOTEUR)
    expected = _launch(project, "main.py").stdout
    sabotaged = _env(PYTHONPATH=os.pathsep.join([str(saboteur), os.environ.get("PYTHONPATH", "")]))
    first = _launch(project, "-X", "importhook=cuvil_bc", "main.py", env=sabotaged)
    assert (first.returncode, first.stdout) == (0, expected), first.stderr
    second, _ = _report(project, "main.py")
    assert second.returncode == 0 and second.stdout == expected, second.stderr
    third, statuses = _report(project, "main.py")
    assert (third.returncode, third.stdout, third.stderr) == (0, expected, "")
    assert statuses["kernel"] == "native"


def test_damage_that_still_unmarshals_is_noticed(tmp_path: Path) -> None:
    # A changed byte in a string constant still unmarshals: it must not run. The
    # warning that says so must not make the import fail under -W error.
    project = _project(tmp_path)
    (project / "numlib.py").write_text(MODULE + '\nCANARY = "canary-A"\n')
    (project / "main.py").write_text("import numlib\nprint(numlib.CANARY, numlib.kernel(300))\n")
    expected = _run(project).stdout
    path = Path(cache.cache_path(str(project / "numlib.py")) or "")
    data = path.read_bytes()
    assert data.count(b"canary-A") == 1
    path.write_bytes(data.replace(b"canary-A", b"canary-B"))
    done = _launch(project, "-W", "error", "-X", "importhook=cuvil_bc", "main.py")
    assert (done.returncode, done.stdout) == (0, expected), done.stderr
    assert _run(project).stdout == expected  # rebuilt: no warning any more


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away takes root")
def test_a_cache_of_another_user_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    expected = _run(project).stdout
    path = Path(cache.cache_path(str(project / "numlib.py")) or "")
    os.chown(path, 4242, 4242)
    done = _launch(project, "-X", "importhook=cuvil_bc", "main.py")
    assert (done.returncode, done.stdout) == (0, expected), done.stderr
    assert "belongs to another user" in done.stderr
    assert path.stat().st_uid == os.geteuid()  # rebuilt as ours


def test_the_fingerprint_covers_every_module_a_rewrite_runs() -> None:
    # The fingerprint hashes the sources of `cache.SHAPERS`: a module of cuvil_bc that a
    # rewrite runs and that is not among them could change without invalidating caches.
    script = textwrap.dedent(
        """
        import sys
        import cuvil_bc.hook.finder
        from cuvil_bc.hook.rewrite import instrument_module
        before = set(sys.modules)
        source = "def f(n):\\n    s = 0\\n    for i in range(n):\\n        s += i * 2\\n    return s\\n"
        instrument_module(compile(source, "m.py", "exec"), "m")
        for name in sorted(set(sys.modules) - before):
            if name.startswith("cuvil_bc"):
                print(sys.modules[name].__file__)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=_env())
    package = Path(cuvil_bc.__file__).parent
    ran = {Path(line).relative_to(package).as_posix() for line in done.stdout.split()}
    assert ran and ran <= set(cache.SHAPERS), ran - set(cache.SHAPERS)
    assert {"hook/rewrite.py", "hook/cache.py", "hook/hot.py", "counters.py", "decode/counting.py"} <= set(cache.SHAPERS)
