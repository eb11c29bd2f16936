"""The key of an artifact: a SHA-256 digest of everything its machine code was made
from, except the objects its guards describe (describe.py).

* the function's code (`describe.code_digest`), its argument types, and how it was
  compiled (the assumptions dropped for it, whether it speculates);
* this cuvil_bc: its version, the artifacts' format, and each of its source files and
  its C runtime, by size and modification time (as a ``.pyc`` knows its source), so
  that an edited checkout never loads code compiled from the old sources;
* the code generator and what the code runs on: llvmlite's version (which fixes LLVM's),
  CPython's version, NumPy's version, the C library's, and the processor (its vendor,
  family, model and feature flags): code compiled for another processor's features
  could fault here.

None of it imports llvmlite: a process that loads every function it needs from
artifacts never loads LLVM.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import sys
import threading
import types as pytypes

from ..abi import ABI_VERSION, VERSION
from ..typing.types import Type, format_signature
from .describe import code_digest

#: The format of artifact files (artifact.py): part of every key.
FORMAT = 1

_environment: bytes | None = None
_lock = threading.Lock()


def key(pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...], drops: frozenset[str], speculates: bool) -> bytes:
    """The key of `pyfunc` compiled for `argtypes` (`describe.Undescribable` if its code
    cannot be digested)."""
    parts = [environment(), code_digest(pyfunc.__code__).encode(), format_signature(argtypes).encode(),
             ",".join(sorted(drops)).encode(), b"speculates" if speculates else b"-"]
    return hashlib.sha256(_joined(parts)).digest()


def environment() -> bytes:
    """The digest of what every key shares (computed once a process)."""
    global _environment
    with _lock:
        if _environment is None:
            parts = [f"cuvil_bc {VERSION} abi {ABI_VERSION} format {FORMAT}".encode(), sys.version.encode(),
                     str(sys.implementation.cache_tag).encode(), platform.machine().encode(),
                     os.confstr("CS_GNU_LIBC_VERSION").encode() if "CS_GNU_LIBC_VERSION" in os.confstr_names else b"-",
                     _sources(), _package_file("llvmlite", "_version.py"), _package_file("numpy", "version.py"), _processor()]
            _environment = hashlib.sha256(_joined(parts)).digest()
        return _environment


def _joined(parts: list[bytes]) -> bytes:
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def _sources() -> bytes:
    """cuvil_bc's own files (Python sources and the runtime's build) by name, size and
    modification time."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runtime = tuple("_runtime" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES)
    out: list[str] = []
    folders = [(package, "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
            elif entry.name.endswith(".py") or entry.name in runtime:
                try:
                    st = entry.stat()
                except OSError:
                    continue
                out.append(f"{prefix}{entry.name} {st.st_size} {st.st_mtime_ns}\n")
    return "".join(out).encode()


def _package_file(package: str, name: str) -> bytes:
    """The contents of a file of an installed package (its version), without importing it."""
    try:
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or ()) if spec is not None else []
        with open(os.path.join(locations[0], name), "rb") as f:
            return f.read()
    except (OSError, IndexError, ImportError, ValueError):
        return b"-"


def _processor() -> bytes:
    """The first processor's identity and feature flags, as the kernel reports them."""
    wanted = ("vendor_id", "cpu family", "model", "flags")
    found = []
    try:
        with open("/proc/cpuinfo", "rb") as f:
            for line in f:
                if not line.strip():
                    break
                name = line.split(b":", 1)[0].strip().decode("ascii", "replace")
                if name in wanted:
                    found.append(line.strip())
    except OSError:
        pass
    return b"\n".join(found) if found else platform.processor().encode()
