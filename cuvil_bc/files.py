"""Cache files, read and written as CPython treats its ``.pyc`` files.

Both of cuvil_bc's caches use these: the import hook's rewritten modules
(hook/cache.py) and the native-code artifacts (artifacts/).

* A file is used only if it belongs to the user running the program: whoever can
  write it decides what code runs. Whose it is, is asked of the file opened, not of
  the path (`read_own`).
* A write goes to a temporary file created with ``O_EXCL`` (whatever is planted at its
  name, a symlink included, is never followed or reused), with the source's permission
  bits plus write for the owner (`source_mode`, importlib's ``_calc_mode``), and is
  then renamed over the old file (`write_atomic`): a process reading at the same time
  sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import io
import os


class Refused(Exception):
    """The file is damaged, foreign or someone else's: it is not used."""


def read_own(path: str, limit: int | None = None) -> bytes | None:
    """The contents of the file at `path` (None: there is none, or it cannot be read).
    `Refused` if it belongs to another user or is larger than `limit` bytes. Plain
    system calls: half the cost of a file object, on every import."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise Refused("it belongs to another user")
        if limit is not None and st.st_size > limit:
            raise Refused(f"it is larger than {limit} bytes")
        data = os.read(fd, st.st_size)
        while len(data) < st.st_size:  # a short read (a signal, a network file system)
            more = os.read(fd, st.st_size - len(data))
            if not more:
                break
            data += more
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def source_mode(source: str | None) -> int:
    """importlib's `_calc_mode`: the source's permission bits, plus write for the owner
    (so that the file can be replaced later)."""
    try:
        mode = os.stat(source).st_mode if source is not None else 0o666
    except OSError:
        mode = 0o666
    return (mode | 0o200) & 0o666


def write_atomic(path: str, data: bytes, mode: int) -> bool:
    """Write `data` to `path` as described above; False if it could not be written
    (a directory that cannot be written is not an error)."""
    # A name nobody can foresee, and O_EXCL: a planted file or symlink makes the write
    # fail instead of being written through.
    tmp = f"{path}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_BINARY", 0), mode)
    except OSError:
        return False
    try:
        with io.FileIO(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
