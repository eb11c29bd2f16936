"""The persistent native-code cache: compiled specialisations stored as artifacts and
loaded by later processes instead of compiled again.

The dispatcher asks `find` before it compiles a signature, and hands what it compiled
to `store`. An artifact (artifact.py) holds the machine code of one specialisation
with its native callees and a description of what it was compiled against; its file
(location.py) is named by a key (keys.py) over the code, the signature, and the
compiler, libraries and processor that made it, and it is used only while the
objects its guards describe (describe.py) are the same.

A file that is damaged, foreign or someone else's is ignored with a warning and
replaced; one compiled against other objects (a global changed since) is replaced
silently. A warning never becomes an exception: under ``-W error`` a bad cache file
must not make a call fail where CPython's would succeed.
"""

from __future__ import annotations

import _thread
import os
import types as pytypes

from ..files import Refused as NotOwn
from ..files import read_own, source_mode, write_atomic
from ..warn import internal_warning
from . import location

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..typing.types import Type

# (describe.py, hashing and the decoder, is imported where a key is made: a cold
# cache's first question, `may_hold`, costs a hooked program no more than
# location.py, ~12 ms less)

#: What the cache did in this process (tests and the benchmarks read it).
counts = {"loaded": 0, "stored": 0, "refused": 0, "stale": 0, "not_stored": 0}
_lock = _thread.allocate_lock()


def key(pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...], drops: frozenset[str], speculates: bool) -> bytes | None:
    """The key of the artifact of `pyfunc` for `argtypes` (None: the cache is off, or
    its code cannot be digested)."""
    if not location.enabled():
        return None
    from .describe import Undescribable
    from .keys import key as make_key

    try:
        return make_key(pyfunc, argtypes, drops, speculates)
    except Undescribable:
        return None


def find(pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...], key: bytes, original: Callable[[object], object]) -> Any:
    """The specialisation stored under `key`, loaded into this process, or None."""
    from . import artifact
    from .describe import Mismatch

    path = location.path(pyfunc, key)
    if path is None:
        return None
    try:
        data = read_own(path, artifact.MAX_SIZE)
        if data is None:
            return None
        spec = artifact.load(data, key, pyfunc, argtypes, original)
    except Mismatch:
        _count("stale")  # compiled against other objects: compiled again, and replaced
        return None
    except Exception as e:  # noqa: BLE001 (refused, or anything a crafted file could cause)
        _count("refused")
        reason = str(e) if isinstance(e, (NotOwn, artifact.Refused)) else f"internal error: {type(e).__name__}: {e}"
        internal_warning(f"cuvil_bc: ignoring the native code cache file {path}: {reason}", stacklevel=4)
        return None
    location.mark_used(path)
    _count("loaded")
    return spec


def stored(pyfunc: pytypes.FunctionType, key: bytes) -> bool:
    """Whether a file for `key` exists (whether it can be used, `find` decides)."""
    path = location.path(pyfunc, key)
    return path is not None and os.path.isfile(path)


def store(spec: Any, key: bytes, drops: frozenset[str], original: Callable[[object], object]) -> None:
    """Write the artifact of `spec` (just compiled) under `key`, unless it cannot be
    stored or nothing may be written."""
    from . import artifact
    from .describe import Undescribable

    path = location.path(spec.pyfunc, key)
    if path is None or not location.writable():
        return
    try:
        data = artifact.build(spec, key, drops, original)
    except Undescribable:
        _count("not_stored")
        return
    except Exception as e:  # noqa: BLE001 (the code is compiled and runs: only its file is lost)
        _count("not_stored")
        internal_warning(f"cuvil_bc: not storing the native code of {spec.pyfunc.__qualname__}: internal error: {type(e).__name__}: {e}", stacklevel=4)
        return
    source = spec.pyfunc.__code__.co_filename
    if write_atomic(path, data, source_mode(source if os.path.isfile(source) else None)):
        _count("stored")
        location.stored_name(path)
        location.wrote(os.path.dirname(path), len(data), location.size_limit())


def _count(what: str) -> None:
    with _lock:
        counts[what] += 1


may_hold = location.may_hold
set_directory = location.set_directory
set_enabled = location.set_enabled
