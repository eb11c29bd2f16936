"""Load the machine code of a relocatable ELF object that LLVM made (x86-64, large
code model) into this process, without LLVM: the loader of compiled code, and of
code that was compiled in another process (it imports neither llvmlite nor the
compiler).

An object from `TargetMachine.emit_object` holds the code (``.ltext``), its
constants (``.rodata.cst8``, ``.lrodata``, ...), maybe data (counters), unwind
tables, a symbol table, and relocations. In the large code model every reference
from code to a symbol or a constant is an absolute 64-bit address
(``R_X86_64_64``): the loader copies each allocated section into fresh pages,
writes those addresses, and makes the code pages executable and the constants
read-only. Unwind tables (``.eh_frame``) are not loaded: nothing unwinds through
compiled code (it returns a status instead of raising).

Anything else (another relocation type, an undefined symbol the resolver does not
know, another machine) raises `NotLoadable`, and the caller uses LLVM's own loader.
Loaded code is never unloaded, as with LLVM's.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Callable

_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")

_SHT_SYMTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL = 2, 4, 8, 9
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 1, 2, 4
_SHN_UNDEF, _SHN_ABS = 0, 0xFFF1
_STB_LOCAL = 0
_R_X86_64_NONE, _R_X86_64_64 = 0, 1

_PAGE = os.sysconf("SC_PAGE_SIZE")
#: Linux's values, here rather than from `mmap` (a millisecond of a cached function's
#: first call, to import): the loader refuses to run on another system.
_LINUX = sys.platform.startswith("linux")
_PROT_READ, _PROT_WRITE, _PROT_EXEC, _MAP_PRIVATE, _MAP_ANONYMOUS = 1, 2, 4, 2, 0x20
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_MAP_FAILED = ctypes.c_void_p(-1).value


class NotLoadable(Exception):
    """The object holds something this loader does not handle, or is malformed."""


class Unresolved(NotLoadable):
    """The object uses a symbol that the process does not have (LLVM's own loader
    would let the code call address 0)."""


class _Section:
    def __init__(self, header: tuple[int, ...], name: str) -> None:
        (self.name_offset, self.type, self.flags, _, self.offset, self.size, self.link, self.info, self.align, _) = header
        self.name = name
        self.address = 0

    @property
    def kind(self) -> int:
        """0: code, 1: read-only data, 2: writable data (the order of the pages)."""
        return 0 if self.flags & _SHF_EXECINSTR else 2 if self.flags & _SHF_WRITE else 1


def _cstring(table: bytes, offset: int) -> str:
    return table[offset : table.index(b"\0", offset)].decode()


def load(obj: bytes, resolve: Callable[[str], int | None]) -> dict[str, int]:
    """Load `obj` and return the addresses of the global symbols it defines.
    `resolve` gives the address of a symbol it uses but does not define. Whatever
    the bytes, the loader reads only within them: a malformed object (a damaged
    file) is `NotLoadable`."""
    try:
        return _load(obj, resolve)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
        raise NotLoadable(f"a malformed object ({type(e).__name__}: {e})") from None


def _within(obj: bytes, offset: int, size: int) -> None:
    if offset < 0 or size < 0 or offset + size > len(obj):
        raise NotLoadable("a section beyond the end of the object")


def _load(obj: bytes, resolve: Callable[[str], int | None]) -> dict[str, int]:
    if not _LINUX:
        raise NotLoadable("not Linux")
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1 or struct.unpack_from("<HH", obj, 16) != (1, 62):
        raise NotLoadable("not a little-endian x86-64 relocatable ELF object")
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", obj, 0x3C)
    headers = [_SECTION.unpack_from(obj, shoff + k * _SECTION.size) for k in range(shnum)]
    names = obj[headers[shstrndx][4] : headers[shstrndx][4] + headers[shstrndx][5]]
    sections = [_Section(h, _cstring(names, h[0])) for h in headers]
    for s in sections:
        if s.type != _SHT_NOBITS:
            _within(obj, s.offset, s.size)
        if s.type == _SHT_REL:
            raise NotLoadable("relocations without addends (SHT_REL)")
    loaded = [s for s in sections if s.flags & _SHF_ALLOC and s.name != ".eh_frame" and s.size]
    if any(s.align > _PAGE for s in loaded):
        raise NotLoadable("a section aligned beyond a page")
    # Lay the sections out by kind, each kind on pages of its own.
    size = 0
    bounds = []
    for kind in (0, 1, 2):
        start = size
        for s in loaded:
            if s.kind == kind:
                size = -(-size // max(s.align, 1)) * max(s.align, 1)
                s.address = size
                size += s.size
        size = -(-size // _PAGE) * _PAGE
        bounds.append((start, size))
    base = _libc.mmap(None, max(size, _PAGE), _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS, -1, 0)
    if base in (None, _MAP_FAILED):
        raise NotLoadable(f"mmap failed (errno {ctypes.get_errno()})")
    try:
        return _relocate(obj, sections, loaded, base, bounds, resolve)
    except BaseException:
        _libc.munmap(ctypes.c_void_p(base), ctypes.c_size_t(max(size, _PAGE)))
        raise


def _relocate(obj: bytes, sections: list[_Section], loaded: list[_Section], base: int, bounds: list[tuple[int, int]],
              resolve: Callable[[str], int | None]) -> dict[str, int]:
    for s in loaded:
        s.address += base
        if s.type != _SHT_NOBITS:  # (fresh pages are zero: .bss needs nothing)
            ctypes.memmove(s.address, obj[s.offset : s.offset + s.size], s.size)
    symtab = next((s for s in sections if s.type == _SHT_SYMTAB), None)
    if symtab is None:
        raise NotLoadable("no symbol table")
    strings = obj[sections[symtab.link].offset : sections[symtab.link].offset + sections[symtab.link].size]
    symbols = [_SYMBOL.unpack_from(obj, symtab.offset + k * _SYMBOL.size) for k in range(symtab.size // _SYMBOL.size)]

    def address_of(index: int) -> int:
        name_offset, info, _, shndx, value, _ = symbols[index]
        if shndx == _SHN_UNDEF:
            name = _cstring(strings, name_offset)
            found = resolve(name)
            if not found:
                raise Unresolved(name)
            return found
        if shndx == _SHN_ABS:
            return value
        target = sections[shndx]
        if not target.address:
            raise NotLoadable(f"a symbol in section {target.name}, which is not loaded")
        return target.address + value

    for rel in sections:
        if rel.type != _SHT_RELA or rel.info >= len(sections) or sections[rel.info] not in loaded:
            continue  # (relocations of the unwind tables, which are not loaded)
        into = sections[rel.info]
        for k in range(rel.size // _RELA.size):
            offset, info, addend = _RELA.unpack_from(obj, rel.offset + k * _RELA.size)
            kind = info & 0xFFFFFFFF
            if kind == _R_X86_64_NONE:
                continue
            if kind != _R_X86_64_64 or offset + 8 > into.size or into.type == _SHT_NOBITS:
                raise NotLoadable(f"relocation type {kind} in {into.name}")
            value = (address_of(info >> 32) + addend) & 0xFFFFFFFFFFFFFFFF
            ctypes.memmove(into.address + offset, struct.pack("<Q", value), 8)
    for kind, protection in ((0, _PROT_READ | _PROT_EXEC), (1, _PROT_READ)):
        start, end = bounds[kind]
        if end > start and _libc.mprotect(base + start, end - start, protection) != 0:
            raise NotLoadable(f"mprotect failed (errno {ctypes.get_errno()})")  # (a W^X policy, say)
    out = {}
    for name_offset, info, _, shndx, value, _ in symbols:
        if info >> 4 != _STB_LOCAL and shndx not in (_SHN_UNDEF, _SHN_ABS) and sections[shndx].address:
            out[_cstring(strings, name_offset)] = sections[shndx].address + value
    return out

