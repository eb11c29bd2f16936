"""The cache of rewritten modules, beside the normal ``.pyc``.

``pkg/__pycache__/mod.cpython-312.pyc`` gets a sibling
``pkg/__pycache__/mod.cpython-312.cuvil_bc-<version>-r<format>.pyc`` (``.opt-1`` and
``.opt-2`` variants under ``-O`` and ``-OO``, under `sys.pycache_prefix` when it is set,
as `importlib.util.cache_from_source` places them). Its contents:

    b"CUVILBC\\0"  fingerprint (8 bytes)  basis (16 bytes)  check (8 bytes)
    marshal((module code, candidate function infos))

and ``....report.pyc`` beside it, with the same header but its own check, holds the
infos of the other functions, which only a report reads.

A file is used only while everything it was built from is as it was:

* the *fingerprint* digests the sources of the cuvil_bc modules that decide what a file
  holds (`SHAPERS`), cuvil_bc's version and CPython's bytecode magic, so
  a file written by any other build is out of date, whatever its name says;
* the *basis* ties the file to the code it is a rewrite of, which is the code CPython
  would run. For an imported module that is its normal ``.pyc`` (CPython reads or writes
  it just before the rewrite): the basis is that file's 16-byte header, and the cache is
  used only while the ``.pyc`` has this header and CPython would still run it, by
  CPython's own rules: the source's mtime and size, or for a hash-based ``.pyc`` (PEP 552)
  the source's hash, when CPython checks it (``--check-hash-based-pycs``). CPython
  compiles a script from its source every time; a script's basis is the header a checked
  hash-based ``.pyc`` of that source would have;
* the *check* digests the rest, so that damage which still unmarshals is noticed;
* the file belongs to the user running the program (anyone who can write it decides
  what code runs), and it unmarshals to what `store` writes.

An out-of-date file is rebuilt silently; a damaged or foreign one, or someone else's,
is rebuilt with a warning, which never becomes an exception: under ``-W error`` a bad
cache must not make an import fail where CPython's would succeed.

Files are read and written as files.py says: only the user's own are read, and writes
are atomic, with the source's permissions (a 0600 source keeps its constants to
itself). Nothing is written under ``-B`` or ``PYTHONDONTWRITEBYTECODE``, and a
directory that cannot be written is not an error.
"""

from __future__ import annotations

import _imp
import importlib.util
import io
import marshal
import os
import sys
import types
import warnings

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any

from ..abi import VERSION
from ..files import Refused, read_own, source_mode, write_atomic
from ..abi import is_placeholder
from .rewrite import FORMAT, FunctionInfo

MAGIC = b"CUVILBC\0"
TAG = f"cuvil_bc-{VERSION}-r{FORMAT}"
_HEADER_SIZE = 40  # magic (8 bytes), fingerprint (8), basis (16), check (8)
_PREFIX = 32  # magic, fingerprint and basis: the same in both files that one `store` writes

#: The sources (under the cuvil_bc package) whose code decides what a cache file holds,
#: or how it is read: the rewrite, the counters it puts in and the runtime that reads
#: them back, the front end that decides which functions are candidates, and this file.
#: tests/test_hook_cache.py checks that a rewrite runs no other module of cuvil_bc.
SHAPERS = (
    "abi.py",
    "counters.py",
    "errors.py",
    "files.py",
    "hook/cache.py",
    "hook/hot.py",
    "hook/rewrite.py",
    "decode/__init__.py",
    "decode/counting.py",
    "decode/percode.py",
    "decode/rawcode.py",
    "decode/region.py",
    "decode/scan.py",
    "decode/versions.py",
)

# A script's basis: the flags of a checked hash-based .pyc (PEP 552).
_CHECKED_HASH = (0b11).to_bytes(4, "little")
_INFO_TYPES = (str, str, str, int, bool, str)  # FunctionInfo's fields
assert len(_INFO_TYPES) == len(FunctionInfo._fields)

_fingerprint: bytes | None = None
#: source -> the prefix of its main file, for each module loaded from the cache: its
#: report file is read (at exit) only if it was written together with that file.
_loaded: dict[str, bytes] = {}


class _Stale(Exception):
    """The file is out of date: rebuilt without a word."""


def cache_path(source: str) -> str | None:
    paths = _paths(source)
    return None if paths is None else paths[1]


def _paths(source: str) -> tuple[str, str] | None:
    """The normal .pyc of `source` and our file beside it."""
    try:
        normal = importlib.util.cache_from_source(source)
    except (NotImplementedError, ValueError):
        return None  # no cache tag (sys.implementation.cache_tag is None)
    return normal, f"{normal[:-4]}.{TAG}.pyc"


def fingerprint() -> bytes:
    """The digest of everything that shaped a cache file besides its module (computed
    once a process). SipHash-1-3, `importlib.util.source_hash` (what hash-based .pycs
    use), rather than SHA-256: it is built in, where hashlib costs milliseconds to
    import, and it only has to notice a change: whoever can edit these files already
    decides what code runs."""
    global _fingerprint
    if _fingerprint is None:
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        parts = [MAGIC, importlib.util.MAGIC_NUMBER, VERSION.encode()]
        for name in SHAPERS:
            parts += [name.encode(), _contents(os.path.join(package, name))]
        _fingerprint = importlib.util.source_hash(b"".join(len(p).to_bytes(8, "little") + p for p in parts))
    return _fingerprint


def _contents(path: str | None) -> bytes:
    try:
        if path is not None:
            with open(path, "rb") as f:
                return b"+" + f.read()
    except OSError:
        pass
    return b"-"  # missing: still a different fingerprint from any contents


def script_basis(source_bytes: bytes) -> bytes:
    """The basis of a script's file: the header that a checked hash-based .pyc of its
    source would have (CPython compiles a script from its source every time)."""
    return importlib.util.MAGIC_NUMBER + _CHECKED_HASH + importlib.util.source_hash(source_bytes)


def pyc_path(source: str) -> str | None:
    """Where CPython keeps the normal .pyc of `source`."""
    paths = _paths(source)
    return None if paths is None else paths[0]


# -- reading -------------------------------------------------------------------------


def load(source: str, module: str, source_bytes: bytes | None = None) -> tuple[types.CodeType, list[tuple[Any, ...]]] | None:
    """The cached rewrite of `source`, imported as `module`: its code, and its
    candidates' `FunctionInfo` fields as plain tuples (named tuples would cost more than
    the rest of a load). `source_bytes`: the source of a script, just read by the caller;
    None for an imported module, whose file is checked against its normal .pyc."""
    paths = _paths(source)
    if paths is None:
        return None
    normal, path = paths
    try:
        data = read_own(path)
        if data is None:
            return None
        if data[:8] != MAGIC:
            raise Refused("not a cuvil_bc cache file")
        if len(data) < _HEADER_SIZE:
            raise Refused("it is truncated")
        fp, basis = data[8:16], data[16:32]
        if fp != fingerprint():
            raise _Stale  # another cuvil_bc or Python wrote it
        if basis != (script_basis(source_bytes) if source_bytes is not None else _pyc_header(source, normal)):
            raise _Stale  # the code CPython would run is not the code this file rewrote
        payload = _unmarshal(data)
        if not (type(payload) is tuple and len(payload) == 2 and type(payload[0]) is types.CodeType):
            raise Refused("it does not hold a module")
        infos = _infos(payload[1], module, candidate=True)
    except _Stale:
        return None
    except Refused as e:
        _warn(f"ignoring {path}: {e}")
        return None
    _loaded[source] = data[:_PREFIX]
    return payload[0], infos


def load_rejected(source: str) -> list[tuple[object, ...]] | None:
    """The functions of `source` that are not candidates, for the report only (they
    live in a file of their own, so that an import does not pay for reading them)."""
    prefix = _loaded.get(source)
    path = cache_path(source)
    if prefix is None or path is None:
        return None  # not loaded from the cache: the report has them already
    path = path[:-4] + ".report.pyc"
    try:
        data = read_own(path)
        if data is None or data[:_PREFIX] != prefix:
            return None  # not written with the main file (or gone since)
        return _infos(_unmarshal(data), None, candidate=False)
    except _Stale:
        return None
    except Refused as e:
        _warn(f"ignoring {path}: {e}")
        return None


def _pyc_header(source: str, normal: str) -> bytes | None:
    """The header of the normal .pyc of `source` if CPython would run that .pyc (None if
    not), decided as `SourceLoader.get_code` decides it."""
    try:
        st = os.stat(source)  # CPython does not look for the .pyc of a source it cannot stat
        fd = os.open(normal, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        header = os.read(fd, 16)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return None
    flags = int.from_bytes(header[4:8], "little")
    if flags & ~0b11:
        return None
    if not flags & 0b1:  # by timestamp: the source's mtime and size, as 32-bit numbers
        return header if header[8:16] == (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") else None
    check = _imp.check_hash_based_pycs
    if check == "never" or (check != "always" and not flags & 0b10):
        return header  # unchecked: CPython runs it whatever the source says
    try:
        with io.open_code(source) as f:
            source_bytes = f.read()
    except OSError:
        return None
    return header if header[8:16] == importlib.util.source_hash(source_bytes) else None


def _unmarshal(data: bytes) -> object:
    body = memoryview(data)[_HEADER_SIZE:]
    # Damage first: marshal is not meant for data it did not write.
    if importlib.util.source_hash(body) != data[_PREFIX:_HEADER_SIZE]:
        raise Refused("it is damaged")
    try:
        return marshal.loads(body)
    except Exception as e:  # noqa: BLE001 (whatever marshal says, the file is unusable)
        raise Refused(f"it does not unmarshal ({type(e).__name__})") from None


def _infos(value: object, module: str | None, candidate: bool) -> list[tuple[Any, ...]]:
    """`value` if it is a list of `FunctionInfo` fields as `store` writes them for
    `module` (None: any)."""
    if type(value) is not list:
        raise Refused("its function records are not a list")
    for fields in value:
        if type(fields) is not tuple or tuple(map(type, fields)) != _INFO_TYPES or fields[4] is not candidate:
            raise Refused("its function records are malformed")
        if module is not None and fields[1] != module:
            raise _Stale  # the same source imported under another name: its keys differ
    return value


def _warn(message: str) -> None:
    """A warning that never raises: a filter can make it an exception (``-W error``),
    and the rebuild, not a failed import, is the answer to a bad cache file."""
    try:
        warnings.warn(f"cuvil_bc: {message}", RuntimeWarning, stacklevel=2)
    except Exception:  # noqa: BLE001
        pass


# -- writing -------------------------------------------------------------------------


def store(source: str, code: types.CodeType, infos: list[FunctionInfo], basis: bytes) -> None:
    """Cache `code`, the rewrite of the code whose basis is `basis`: the header of the
    normal .pyc it was compiled from, or `script_basis`."""
    if sys.dont_write_bytecode or len(basis) != 16:
        return
    path = cache_path(source)
    if path is None:
        return
    counted = {k for i in infos if i.candidate for k in (i.key, i.key + "@loop", i.key + "@osr")}  # what `RUNTIME.register` sets up
    if not _placeholder_keys(code) <= counted:
        # A counter without its record would fail in the program (a load does not look
        # for them: that would walk every code object on every import). Checked here,
        # the `check` digest then vouches for every file that a load accepts.
        _warn(f"not writing {path}: its code counts functions that it has no record of")
        return
    mode = source_mode(source)
    prefix = MAGIC + fingerprint() + basis
    report = marshal.dumps([tuple(i) for i in infos if not i.candidate])
    main = marshal.dumps((code, [tuple(i) for i in infos if i.candidate]))
    # The report's file first: a reader that finds the main file finds it too.
    write_atomic(path[:-4] + ".report.pyc", prefix + importlib.util.source_hash(report) + report, mode)
    write_atomic(path, prefix + importlib.util.source_hash(main) + main, mode)


def _placeholder_keys(code: types.CodeType) -> set[str]:
    """The keys of the counters in `code` and the code objects in it."""
    keys: set[str] = set()
    todo = [code]
    for c in todo:
        for const in c.co_consts:
            if type(const) is types.CodeType:
                todo.append(const)
            elif is_placeholder(const):
                keys.add(const[1])  # type: ignore[index]
    return keys
