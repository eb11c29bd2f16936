"""What the import hook does, from the environment and `[tool.cuvil_bc]` in pyproject.toml.

Environment variables (each overrides the pyproject setting):

    CUVIL_BC_SYNC=1             compile hot functions on the calling thread, not in the
                                background (for tests and reproducible benchmarks)
    CUVIL_BC_THRESHOLD=N        calls after which a function is compiled (default 100)
    CUVIL_BC_LOOP_THRESHOLD=N   loop iterations after which it is compiled (default 2000)
    CUVIL_BC_INCLUDE=p1,p2      module-name patterns (fnmatch) to accelerate even when
                                they are in the standard library or site-packages
    CUVIL_BC_EXCLUDE=p1,p2      module-name patterns never to touch
    CUVIL_BC_CACHE=0            neither read nor write the rewritten-module cache, nor
                                the native-code cache (cuvil_bc/artifacts/)
    CUVIL_BC_CACHE_DIR=path     keep native code there, not beside the .pyc files
    CUVIL_BC_REPORT=path.json   write a report of every counted function at exit
    CUVIL_BC_OSR=mode           on-stack replacement of a loop that runs long in its
                                function's first call (hook/osr.py): auto (default:
                                where its remaining time is estimated to repay the
                                compile), always (wherever it can), off

pyproject.toml (the first one found walking up from the program's directory):

    [tool.cuvil_bc]
    include = ["mylib.*"]
    exclude = ["myapp.slow_start"]
    threshold = 100
    loop_threshold = 2000
    sync = false
    cache = true
    osr = "auto"
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any


class Options:
    """The hook's settings (immutable: `merged` returns a changed copy)."""

    FIELDS = ("threshold", "loop_threshold", "include", "exclude", "sync", "cache", "report", "warnings", "osr")

    def __init__(
        self,
        threshold: int = 100,
        loop_threshold: int = 2000,
        include: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
        sync: bool = False,
        cache: bool = True,
        report: str | None = None,
        warnings: tuple[str, ...] = (),
        osr: str = "auto",
    ) -> None:
        self.threshold = threshold
        self.loop_threshold = loop_threshold
        self.include = include
        self.exclude = exclude
        self.sync = sync
        self.cache = cache
        self.report = report
        self.warnings = warnings
        self.osr = osr

    def merged(self, **changes: Any) -> "Options":
        """A copy with the given settings changed (None means: keep this one)."""
        values = {name: getattr(self, name) for name in self.FIELDS}
        values.update({k: v for k, v in changes.items() if v is not None})
        return Options(**values)

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS) + ")"


def _patterns(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(p, str) for p in value):
        return tuple(value)
    raise ValueError(f"expected a list of module-name patterns, got {value!r}")


def _flag(value: str | None) -> bool | None:
    if value is None or value == "":
        return None
    return value.strip().lower() not in ("0", "false", "no", "off")


def _int(value: object, name: str) -> int | None:
    if value is None or value == "":
        return None
    n = int(value)  # type: ignore[call-overload]
    if n < 1:
        raise ValueError(f"{name} must be at least 1, got {n}")
    return n


#: The settings of on-stack replacement (`Options.osr`).
OSR_MODES = ("auto", "always", "off")


def _osr(value: object, name: str) -> str | None:
    if value is None or value == "":
        return None
    if value not in OSR_MODES:
        raise ValueError(f"{name} must be one of {', '.join(OSR_MODES)}, got {value!r}")
    return str(value)


def find_pyproject(start: str) -> str | None:
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _may_name_our_table(data: bytes) -> bool:
    """Whether TOML text `data` may hold a ``cuvil_bc`` key (under ``tool``): some
    ``cuvil_bc`` is a key, bare or quoted, followed by ``=``, ``.`` or, in a table's
    header, ``]`` (``[tool.cuvil_bc]``, ``cuvil_bc = {...}``,
    ``tool.cuvil_bc.threshold = 5``), or the text
    has escapes, which may spell a quoted key. False only where no such key can be: a
    project's name or package list (``"cuvil_bc"``, ``"cuvil_bc.decode"``) is not one."""
    if b"\\u" in data or b"\\U" in data:
        return True
    at = data.find(b"cuvil_bc")
    while at >= 0:
        end = at + len(b"cuvil_bc")
        quote = data[at - 1 : at] if at > 0 else b""
        if quote in (b'"', b"'"):
            end = end + 1 if data[end : end + 1] == quote else -1  # a key is exactly "cuvil_bc"
        if end >= 0:
            while data[end : end + 1] in (b" ", b"\t"):
                end += 1
            follows = data[end : end + 1]
            line = data[data.rfind(b"\n", 0, at) + 1 : at].lstrip()
            if follows in (b"=", b".") or (follows == b"]" and line.startswith(b"[")):
                return True  # (a "]" ends a key only in a table's header)
        at = data.find(b"cuvil_bc", at + 1)
    return False


def from_pyproject(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    with open(path, "rb") as f:
        data = f.read()
    if not _may_name_our_table(data):
        # tomllib and what it imports (typing, datetime, re) cost ~10 ms, which
        # every hooked run of a project with a pyproject.toml would pay.
        return {}
    import tomllib

    table = tomllib.loads(data.decode("utf-8")).get("tool", {}).get("cuvil_bc", {})
    known = {"include", "exclude", "threshold", "loop_threshold", "sync", "cache", "osr"}
    unknown = set(table) - known
    if unknown:
        raise ValueError(f"{path}: unknown [tool.cuvil_bc] keys: {', '.join(sorted(unknown))}")
    return {
        "include": _patterns(table.get("include")),
        "exclude": _patterns(table.get("exclude")),
        "threshold": _int(table.get("threshold"), "threshold"),
        "loop_threshold": _int(table.get("loop_threshold"), "loop_threshold"),
        "sync": table.get("sync"),
        "cache": table.get("cache"),
        "osr": _osr(table.get("osr"), "osr"),
    }


def load(program_dir: str | None = None, **explicit: Any) -> Options:
    """Options for a run: defaults, then pyproject.toml, then the environment, then
    `explicit` (arguments of `cuvil_bc.install`). A malformed setting is reported as a
    warning and ignored: configuration never stops the program."""
    options = Options()
    problems: list[str] = []
    try:
        options = options.merged(**from_pyproject(find_pyproject(program_dir or os.getcwd())))
    except Exception as e:  # noqa: BLE001
        problems.append(f"ignoring [tool.cuvil_bc]: {e}")
    env = os.environ
    try:
        options = options.merged(
            sync=_flag(env.get("CUVIL_BC_SYNC")),
            cache=_flag(env.get("CUVIL_BC_CACHE")),
            threshold=_int(env.get("CUVIL_BC_THRESHOLD"), "CUVIL_BC_THRESHOLD"),
            loop_threshold=_int(env.get("CUVIL_BC_LOOP_THRESHOLD"), "CUVIL_BC_LOOP_THRESHOLD"),
            include=_patterns(env.get("CUVIL_BC_INCLUDE")),
            exclude=_patterns(env.get("CUVIL_BC_EXCLUDE")),
            report=env.get("CUVIL_BC_REPORT") or None,
            osr=_osr(env.get("CUVIL_BC_OSR"), "CUVIL_BC_OSR"),
        )
    except ValueError as e:
        problems.append(f"ignoring an environment setting: {e}")
    for name in ("include", "exclude"):
        if explicit.get(name) is not None:
            options = options.merged(**{name: _patterns(explicit[name])})
    return options.merged(warnings=tuple(problems))
