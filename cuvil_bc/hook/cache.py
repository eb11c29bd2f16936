"""The cache of rewritten modules, beside the normal ``.pyc``.

``pkg/__pycache__/mod.cpython-312.pyc`` gets a sibling
``pkg/__pycache__/mod.cpython-312.cuvil_bc-<version>-r<format>.pyc`` (``.opt-1`` and
``.opt-2`` variants under ``-O`` and ``-OO``, under `sys.pycache_prefix` when it is set,
as `importlib.util.cache_from_source` places them). Its contents:

    b"CUVILBC\\0"  importlib's MAGIC_NUMBER  source mtime (8 bytes)  source size (8 bytes)
    marshal((module code, candidate function infos))

and ``....report.pyc`` beside it, with the same header, holds the infos of the other
functions, which only a report reads.

A file whose header does not match the source, or that does not unmarshal, is ignored
and rebuilt. Writes go to a temporary file that is then renamed, so two processes
importing at once never see half a file. Nothing is written under ``-B`` or
``PYTHONDONTWRITEBYTECODE``, and a directory that cannot be written is not an error.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import struct
import sys
import types

from .. import __version__
from .rewrite import FORMAT, FunctionInfo

MAGIC = b"CUVILBC\0"
TAG = f"cuvil_bc-{__version__}-r{FORMAT}"
_HEADER = struct.Struct("<8s4sQQ")


def cache_path(source: str) -> str | None:
    try:
        normal = importlib.util.cache_from_source(source)
    except (NotImplementedError, ValueError):
        return None  # no cache tag (sys.implementation.cache_tag is None)
    return f"{normal[:-4]}.{TAG}.pyc"


def _stamp(source: str) -> tuple[int, int] | None:
    try:
        st = os.stat(source)
    except OSError:
        return None
    return int(st.st_mtime_ns), st.st_size


def _read(path: str | None, stamp: tuple[int, int] | None) -> object:
    if path is None or stamp is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < _HEADER.size:
        return None
    magic, pyc_magic, mtime, size = _HEADER.unpack_from(data)
    if magic != MAGIC or pyc_magic != importlib.util.MAGIC_NUMBER or (mtime, size) != stamp:
        return None
    try:
        return marshal.loads(data[_HEADER.size :])
    except Exception:  # noqa: BLE001 (truncated or foreign: rebuild)
        return None


def load(source: str) -> tuple[types.CodeType, list[tuple[object, ...]]] | None:
    """The cached rewrite of `source`: its code, and its candidates' `FunctionInfo`
    fields as plain tuples (named tuples would cost more than the rest of a load)."""
    payload = _read(cache_path(source), _stamp(source))
    if not (isinstance(payload, tuple) and len(payload) == 2):
        return None
    code, infos = payload
    if not isinstance(code, types.CodeType) or not isinstance(infos, list):
        return None
    return code, infos


def load_rejected(source: str) -> list[tuple[object, ...]] | None:
    """The functions of `source` that are not candidates, for the report only (they
    live in a file of their own, so that an import does not pay for reading them)."""
    path = cache_path(source)
    payload = _read(path and path[:-4] + ".report.pyc", _stamp(source))
    return payload if isinstance(payload, list) else None


def store(source: str, code: types.CodeType, infos: list[FunctionInfo]) -> None:
    if sys.dont_write_bytecode:
        return
    path = cache_path(source)
    stamp = _stamp(source)
    if path is None or stamp is None:
        return
    header = _HEADER.pack(MAGIC, importlib.util.MAGIC_NUMBER, *stamp)
    # The report's file first: a reader that finds the main file finds it too.
    _write(path[:-4] + ".report.pyc", header + marshal.dumps([tuple(i) for i in infos if not i.candidate]))
    _write(path, header + marshal.dumps((code, [tuple(i) for i in infos if i.candidate])))


def _write(path: str, payload: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.{id(payload)}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
