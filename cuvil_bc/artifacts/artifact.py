"""An artifact: one compiled specialisation's machine code and what a dispatcher needs
to call it, in a file of a fixed binary format.

    b"CUVILBCN"  format (u32)  key (32 bytes)  fingerprint (32)  check (32)  body

* the *key* (keys.py) names the file and is checked against the key computed when
  loading: a file under the right name with another key is foreign;
* the *fingerprint* is SHA-256 over the key and the guards' descriptions
  (describe.py): the artifact is used only where this process's objects give the same
  fingerprint;
* the *check* is SHA-256 over the body, so that damage is noticed before anything in
  it is read;
* the body is `encoding.encode((description, object))`: the description (`_FIELDS`)
  and the relocatable object that objload.py loads (its symbols are its own, and its
  resume points' numbers are symbols given values when it loads).

Loading neither imports llvmlite nor evaluates anything stored.
"""

from __future__ import annotations

import hashlib
import struct
import types as pytypes

from ..lower.points import ResumeInfo, Slot, new_number
from ..guards import Guard
from ..typing.types import Type, format_signature, parse_type
from . import describe
from .encoding import Malformed, decode, encode
from .keys import FORMAT

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

MAGIC = b"CUVILBCN"
#: The largest artifact written or read.
MAX_SIZE = 64 << 20
#: Constants found again by name, which must be the very object (the others, plain
#: values and NumPy scalars, come back as equal copies).
_BY_NAME = ("module", "function", "named")
_HEADER = struct.Struct("<8sI32s32s32s")

#: The description's fields, in order, and their types.
_FIELDS = (
    ("entry", str), ("words_entry", (str, type(None))), ("argtypes", str), ("return_type", str),
    ("loops", bool), ("numpy_floats", bool), ("calls_native", bool), ("drops", tuple),
    ("guards", tuple), ("points", tuple),
)


class Refused(Exception):
    """The file is damaged or foreign: it is replaced, with a warning."""


class CachedSpecialization:
    """A specialisation loaded from an artifact: what the dispatcher reads of a
    `compiler.Specialization`. Its IR is typed again when asked for (`fn`,
    `inspect_ir`); `inspect_llvm` and `inspect_asm` compile it again."""

    def __init__(self, pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...], fields: dict[str, Any],
                 guards: list[Guard], points: dict[int, ResumeInfo], addresses: dict[str, int]) -> None:
        self.pyfunc = pyfunc
        self.argtypes = argtypes
        self.return_type: Type = parse_type(fields["return_type"])
        self.entry: str = fields["entry"]
        self.words_entry: str | None = fields["words_entry"]
        self.entry_address = addresses[self.entry]
        self.words_entry_address = addresses[self.words_entry] if self.words_entry is not None else 0
        self.loops: bool = fields["loops"]
        self.numpy_floats: bool = fields["numpy_floats"]
        self.calls_native: bool = fields["calls_native"]
        self.drops = frozenset(fields["drops"])
        self.guards = guards
        self.resume_points = points
        self.from_cache = True

    @property
    def signature(self) -> str:
        return format_signature(self.argtypes)

    def all_specializations(self) -> list[Any]:
        return [self]

    def all_guards(self) -> list[Guard]:
        return list(self.guards)

    def all_resume_points(self) -> dict[int, ResumeInfo]:
        return dict(self.resume_points)

    def _compiled(self) -> Any:
        from ..compiler import COMPILER

        return COMPILER.compile(self.pyfunc, self.argtypes)

    @property
    def fn(self) -> Any:
        """Its typed IR, as this process types it (no machine code is made)."""
        from ..compiler import COMPILER

        return COMPILER.typed(self.pyfunc, self.argtypes).fn

    def ir_text(self) -> str:
        from ..ir import format_function

        return format_function(self.fn)

    @property
    def llvm(self) -> str:
        return self._compiled().llvm

    @property
    def asm(self) -> str:
        return self._compiled().asm


# -- writing ---------------------------------------------------------------------------


def build(spec: Any, key: bytes, drops: frozenset[str], original: Callable[[object], object]) -> bytes:
    """The artifact of `spec`, a compiled `Specialization` whose module's object
    objload.py loaded (`describe.Undescribable` if it cannot be stored)."""
    if spec.object is None:
        raise describe.Undescribable("code that LLVM's own loader loaded")
    for t in (*spec.argtypes, spec.return_type):
        _check_type(t)
    guards = describe.guards(spec, original)
    points = []
    for name, number in sorted(spec.resume_numbers.items()):
        info = spec.resume_points[number]
        slots = tuple(_slot(slot, original) for slot in info.slots)
        points.append((name, info.pyfunc is spec.pyfunc, info.offset, info.line, tuple(info.names), slots))
    fields = {
        "entry": spec.entry, "words_entry": spec.words_entry, "argtypes": format_signature(spec.argtypes),
        "return_type": str(spec.return_type), "loops": spec.loops, "numpy_floats": spec.numpy_floats,
        "calls_native": spec.calls_native, "drops": tuple(sorted(drops)), "guards": guards, "points": tuple(points),
    }
    try:
        body = encode((tuple(fields[name] for name, _ in _FIELDS), spec.object))
    except (TypeError, ValueError) as e:  # (a constant nested too deeply)
        raise describe.Undescribable(str(e)) from None
    if len(body) > MAX_SIZE - _HEADER.size:
        raise describe.Undescribable(f"an artifact of {len(body)} bytes")
    return _HEADER.pack(MAGIC, FORMAT, key, _fingerprint(key, guards), hashlib.sha256(body).digest()) + body


def _check_type(t: Type) -> None:
    try:
        if parse_type(str(t)) == t:
            return
    except ValueError:
        pass
    raise describe.Undescribable(f"the type {t}")


def _slot(slot: Slot, original: Callable[[object], object]) -> tuple[Any, ...]:
    if slot.kind == "words":
        _check_type(slot.arg)
        return ("words", str(slot.arg), slot.offset, slot.owns)
    if slot.kind == "const":
        described = describe.value(slot.arg, original)
        try:  # (it must come back as itself: a function made in a function would not)
            back = describe.rebuild(described, original)
        except describe.Mismatch:
            back = None
        if encode(describe.value(back, original)) != encode(described) or (described[0] in _BY_NAME and back is not slot.arg):
            raise describe.Undescribable(f"the constant {slot.arg!r}")
        return ("const", described, 0, False)
    if slot.kind == "arg":
        return ("arg", slot.arg, 0, False)
    return ("unbound", None, 0, False)


def _fingerprint(key: bytes, guards: tuple[Any, ...]) -> bytes:
    return hashlib.sha256(key + encode(guards)).digest()


# -- reading ---------------------------------------------------------------------------


def read(data: bytes, key: bytes) -> tuple[dict[str, Any], bytes, bytes]:
    """The description, the object and the fingerprint in `data`, an artifact that
    must have `key`; `Refused` if it is not one."""
    if len(data) < _HEADER.size or data[:8] != MAGIC:
        raise Refused("it is not a cuvil_bc artifact" if data[:8] != MAGIC else "it is truncated")
    magic, version, stored_key, fingerprint, check = _HEADER.unpack_from(data)
    if version != FORMAT:
        raise Refused(f"it has format {version}, not {FORMAT}")
    if stored_key != key:
        raise Refused("its key is not the one its name says")
    body = data[_HEADER.size :]
    if hashlib.sha256(body).digest() != check:
        raise Refused("it is damaged")
    try:
        value = decode(body)
    except Malformed as e:
        raise Refused(f"it does not decode ({e})") from None
    if not (type(value) is tuple and len(value) == 2 and type(value[0]) is tuple and type(value[1]) is bytes and len(value[0]) == len(_FIELDS)):
        raise Refused("it is malformed")
    fields = {}
    for (name, kind), v in zip(_FIELDS, value[0]):
        if not isinstance(v, kind) or (kind is not bool and type(v) is bool):
            raise Refused(f"its {name} is malformed")
        fields[name] = v
    return fields, value[1], fingerprint


def load(data: bytes, key: bytes, pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...],
         original: Callable[[object], object]) -> CachedSpecialization:
    """Load the artifact `data` for `pyfunc` and `argtypes` into this process: its
    code into memory, its resume points registered under new numbers. `Refused` if it
    is not a sound artifact with `key`; `describe.Mismatch` if this process's objects
    are not those it was compiled against."""
    from ..lower import objload
    from ..lower.runtime import prepare, resolve

    fields, obj, fingerprint = read(data, key)
    if fields["argtypes"] != format_signature(argtypes):
        raise Refused("its argument types are not the ones its key says")
    try:
        guards = describe.live_guards(fields["guards"], pyfunc, original)
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
        raise Refused(f"its guards are malformed ({type(e).__name__}: {e})") from None
    if _fingerprint(key, fields["guards"]) != fingerprint:
        raise Refused("its fingerprint does not match its guards")
    try:
        points = [_point(p, pyfunc, original) for p in fields["points"]]
        parse_type(fields["return_type"])
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
        raise Refused(f"its resume points are malformed ({type(e).__name__}: {e})") from None
    prepare()
    numbers = {name: new_number() for name, _ in points}
    try:
        addresses = objload.load(obj, lambda name: numbers.get(name) or resolve(name))
    except objload.NotLoadable as e:
        raise Refused(f"its code does not load ({e})") from None
    if fields["entry"] not in addresses or (fields["words_entry"] is not None and fields["words_entry"] not in addresses):
        raise Refused("its code lacks its entry points")
    if fields["numpy_floats"]:
        from ..lower.runtime import watch_numpy_errstate

        watch_numpy_errstate()
    return CachedSpecialization(pyfunc, argtypes, fields, guards, {numbers[name]: info for name, info in points}, addresses)


def _point(stored: tuple[Any, ...], pyfunc: pytypes.FunctionType, original: Callable[[object], object]) -> tuple[str, ResumeInfo]:
    name, own, offset, line, names, slots = stored
    if not (type(name) is str and type(own) is bool and type(offset) is int and type(line) is int and all(type(n) is str for n in names)):
        raise ValueError("a resume point's fields")
    made = []
    for kind, arg, at, owns in slots:
        if kind == "words":
            made.append(Slot("words", parse_type(arg), at, owns))
        elif kind == "const":
            made.append(Slot("const", describe.rebuild(arg, original)))
        elif kind == "arg":
            made.append(Slot("arg", arg))
        elif kind == "unbound":
            made.append(Slot("unbound"))
        else:
            raise ValueError(f"a slot of kind {kind!r}")
    # A callee's point (a native callee that only reads): the dispatcher only needs to
    # know it is not the function's own, and re-runs the call.
    return name, ResumeInfo(pyfunc if own else None, offset, line, tuple(names), tuple(made))  # type: ignore[arg-type]
