"""The artifacts' fixed binary encoding of plain values: no pickle, no marshal, nothing
evaluated. It encodes None, bools, ints of any size, floats (their exact bits), strs,
bytes and tuples of these; `decode` reads only within its bytes, and anything else
(a wrong tag, a length beyond the end, trailing bytes, nesting deeper than
`MAX_DEPTH`) is `Malformed`.

Each value is a one-byte tag and its contents:

    N  None          T / F  True / False
    i  int: u32 length, then the two's-complement bytes (big-endian)
    f  float: 8 bytes, IEEE double (little-endian)
    s  str: u32 length, then UTF-8      b  bytes: u32 length, then the bytes
    t  tuple: u32 count, then the items
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 32
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")


class Malformed(Exception):
    """The bytes are not an encoding that `encode` makes."""


def encode(value: Any) -> bytes:
    out: list[bytes] = []
    _encode(value, out, 0)
    return b"".join(out)


def _encode(value: Any, out: list[bytes], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply to encode")
    t = type(value)
    if value is None:
        out.append(b"N")
    elif t is bool:
        out.append(b"T" if value else b"F")
    elif t is int:
        raw = value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)
        out += [b"i", _U32.pack(len(raw)), raw]
    elif t is float:
        out += [b"f", _F64.pack(value)]
    elif t is str:
        raw = value.encode("utf-8", "surrogatepass")
        out += [b"s", _U32.pack(len(raw)), raw]
    elif t is bytes:
        out += [b"b", _U32.pack(len(value)), value]
    elif t is tuple:
        out += [b"t", _U32.pack(len(value))]
        for item in value:
            _encode(item, out, depth + 1)
    else:
        raise TypeError(f"cannot encode a {t.__name__}")


def decode(data: bytes) -> Any:
    try:
        value, end = _decode(memoryview(data), 0, 0)
    except (struct.error, UnicodeDecodeError, RecursionError) as e:
        raise Malformed(str(e)) from None
    if end != len(data):
        raise Malformed("bytes after the value")
    return value


def _length(data: memoryview, at: int) -> tuple[int, int]:
    if at + 4 > len(data):
        raise Malformed("a length beyond the end")
    (n,) = _U32.unpack_from(data, at)
    return n, at + 4


def _chunk(data: memoryview, at: int) -> tuple[bytes, int]:
    n, at = _length(data, at)
    if at + n > len(data):
        raise Malformed("contents beyond the end")
    return bytes(data[at : at + n]), at + n


def _decode(data: memoryview, at: int, depth: int) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise Malformed("nested too deeply")
    if at >= len(data):
        raise Malformed("a value beyond the end")
    tag = data[at]
    at += 1
    if tag == 0x4E:  # N
        return None, at
    if tag == 0x54:  # T
        return True, at
    if tag == 0x46:  # F
        return False, at
    if tag == 0x69:  # i
        raw, at = _chunk(data, at)
        if not raw:
            raise Malformed("an int without bytes")
        return int.from_bytes(raw, "big", signed=True), at
    if tag == 0x66:  # f
        if at + 8 > len(data):
            raise Malformed("a float beyond the end")
        return _F64.unpack_from(data, at)[0], at + 8
    if tag == 0x73:  # s
        raw, at = _chunk(data, at)
        return raw.decode("utf-8", "surrogatepass"), at
    if tag == 0x62:  # b
        return _chunk(data, at)
    if tag == 0x74:  # t
        n, at = _length(data, at)
        if n > len(data) - at:  # (each item takes a byte at least)
            raise Malformed("more items than bytes")
        items = []
        for _ in range(n):
            item, at = _decode(data, at, depth + 1)
            items.append(item)
        return tuple(items), at
    raise Malformed(f"unknown tag {tag:#x}")
