"""Where artifacts live, and how many of them are kept.

By default an artifact lives beside the ``.pyc`` of the function's source file, as
CPython places that (``__pycache__``, or under `sys.pycache_prefix`):

    pkg/__pycache__/mod.cpython-312.cuvil_bc/<qualname>.<key>.cbn

A settable directory (`set_directory`, or the ``CUVIL_BC_CACHE_DIR`` environment
variable) holds them all instead, also those of functions without a source file
(defined in ``exec``'d text, a notebook), which otherwise are not stored.

``CUVIL_BC_CACHE=0`` (or `set_enabled(False)`) turns the cache off. Under ``-B`` or
``PYTHONDONTWRITEBYTECODE`` artifacts are still read but never written, as ``.pyc``
files are. Each directory keeps at most `size_limit` bytes of artifacts (by default
256 MiB, ``CUVIL_BC_CACHE_SIZE`` in MiB): after a write, the least recently used go
first (a load marks a file used by its modification time).
"""

from __future__ import annotations

import _thread
import importlib.util
import os
import re
import sys
import time
import types as pytypes

SUFFIX = ".cbn"

_enabled: bool | None = None
_directory: str | None = None


def enabled() -> bool:
    if _enabled is not None:
        return _enabled
    return os.environ.get("CUVIL_BC_CACHE", "").strip().lower() not in ("0", "false", "no", "off")


def set_enabled(on: bool | None) -> None:
    """Turn the cache on or off for this process (None: as the environment says)."""
    global _enabled
    _enabled = on


def directory() -> str | None:
    return _directory if _directory is not None else (os.environ.get("CUVIL_BC_CACHE_DIR") or None)


def set_directory(path: str | None) -> None:
    """Keep every artifact in `path` (None: beside the ``.pyc`` files, or as the
    environment says)."""
    global _directory
    _directory = os.path.abspath(path) if path is not None else None


def size_limit() -> int:
    try:
        return max(1, int(os.environ.get("CUVIL_BC_CACHE_SIZE", "256"))) << 20
    except ValueError:
        return 256 << 20


def path(pyfunc: pytypes.FunctionType, key: bytes) -> str | None:
    """The file of `pyfunc`'s artifact with `key`, or None where it has none."""
    folder = _folder(pyfunc.__code__.co_filename)
    return None if folder is None else os.path.join(folder, f"{_safe(pyfunc.__qualname__)}.{key.hex()[:40]}{SUFFIX}")


def _folder(source: str) -> str | None:
    """The directory of the artifacts of the functions of the file `source`."""
    chosen = directory()
    if chosen is not None:
        return chosen
    if not os.path.isabs(source) or not os.path.isfile(source):
        return None
    try:
        pyc = importlib.util.cache_from_source(source)
    except (NotImplementedError, ValueError):
        return None  # no cache tag (sys.implementation.cache_tag is None)
    return pyc[: -len(".pyc")] + ".cuvil_bc"


#: By directory: the (safe) names of the functions it held artifacts of when this
#: process first looked, and of those it stored since (`may_hold`).
_names: dict[str, set[str]] = {}


def may_hold(code: pytypes.CodeType) -> bool:
    """Whether the cache may hold an artifact of the function of `code`: a first
    question without its key, which takes the code as written and its digest (a few
    ms a function: on a cold cache, each hot function's). False when its directory had
    no file of that function's name when this process first looked there (an
    artifact another process writes meanwhile is found by the next run)."""
    folder = _folder(code.co_filename)
    if folder is None:
        return False
    names = _names.get(folder)
    if names is None:
        try:
            entries = os.listdir(folder)
        except OSError:
            entries = []
        names = _names[folder] = {e.rsplit(".", 2)[0] for e in entries if e.endswith(SUFFIX)}
    return _safe(code.co_qualname) in names


def stored_name(path: str) -> None:
    """`path` (an artifact's file) was written by this process."""
    names = _names.get(os.path.dirname(path))
    if names is not None:
        names.add(os.path.basename(path).rsplit(".", 2)[0])


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)[:80]


def writable() -> bool:
    return not sys.dont_write_bytecode


def mark_used(file: str) -> None:
    if not writable():
        return  # (-B: nothing in the cache changes)
    try:
        os.utime(file)
    except OSError:
        pass


def _remove_abandoned(folder: str, names: list[str]) -> None:
    """Temporary files of writers that were killed before they renamed them (a
    writer's own is younger than `ABANDONED` seconds)."""
    now = time.time()
    for n in names:
        try:
            path = os.path.join(folder, n)
            if now - os.stat(path).st_mtime > ABANDONED:
                os.unlink(path)
        except OSError:
            pass


ABANDONED = 3600


def wrote(folder: str, size: int, limit: int) -> None:
    """A file of `size` bytes was written in `folder`: `evict` when the folder may
    hold more than `limit` bytes. The folder is measured once a process, then kept
    count of (another process writing there measures it too): a store does not read
    the whole directory each time."""
    with _sizes_lock:
        known = _sizes.get(folder)
        if known is not None and known + size <= limit:
            _sizes[folder] = known + size
            return
    total = evict(folder, limit)
    with _sizes_lock:
        _sizes[folder] = total


_sizes: dict[str, int] = {}
_sizes_lock = _thread.allocate_lock()


def evict(folder: str, limit: int) -> int:
    """Remove the least recently used artifacts of `folder` until the rest take at most
    `limit` bytes; return what they take. (Another process may remove some at the
    same time: a file gone already is fine, and a process that has read a file does
    not need it again.)"""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    _remove_abandoned(folder, [n for n in names if SUFFIX + "." in n and n.endswith(".tmp")])
    names = [n for n in names if n.endswith(SUFFIX)]
    files = []
    for n in names:
        try:
            st = os.stat(os.path.join(folder, n))
        except OSError:
            continue
        files.append((st.st_mtime_ns, st.st_size, n))
    total = sum(size for _, size, _ in files)
    for _, size, n in sorted(files):
        if total <= limit:
            break
        try:
            os.unlink(os.path.join(folder, n))
        except OSError:
            pass
        total -= size
    return total
