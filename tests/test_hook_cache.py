"""The cache of rewritten modules, and the hook used from code (install/uninstall).

Subprocess runs check the on-disk behaviour as a user sees it (-B, -O, -OO,
pycache_prefix, concurrent imports); in-process tests check what is rewritten and
when, by counting calls to the rewrite.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
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
        return "x" * n
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
    loaded = cache.load(str(project / "numlib.py"))
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
    module = _import_fresh("cachetest_b")
    assert calls == ["cachetest_b", "cachetest_b"]
    assert module.kernel(50) == sum(i % 7 for i in range(50))
    assert cache.load(str(source)) is not None  # rebuilt


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
