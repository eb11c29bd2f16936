"""The types of cuvil_bc's typed IR.

Scalars (`BOOL`, `INT` = int64 with overflow checks, `UINT` = an int in [0, 2**64),
`INT128` = an int in [-2**127, 2**127) with overflow checks, `FLOAT` = IEEE double, `COMPLEX` = two of them, `NONE`),
tuples of types, and unions of those where CPython's value may have either type
(``x = 0`` then ``x += 0.5`` in a loop). `ObjType` is a compile-time object (a module, a
function) with no run-time representation. `UNDEF` marks a possibly unbound local and
`BOTTOM` a value not computed yet.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..records import record

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
INT128_MIN = -(2**127)
INT128_MAX = 2**127 - 1
MAX_UNION = 4


class Type:
    pass


@record(frozen=True)
class Scalar(Type):
    name: str

    def __str__(self) -> str:
        return self.name


BOOL = Scalar("bool")
INT = Scalar("int")
#: A Python int known to lie in [0, 2**64): its 64 bits, read as unsigned. What masking
#: gives (``x & 0xFFFFFFFFFFFFFFFF``); a constant beyond int64 below 2**64 is one.
UINT = Scalar("uint")
#: A Python int known to lie in [-2**127, 2**127): 128 bits in two words (the low
#: word, then the high word, two's complement). What a constant beyond 64 bits gives
#: (``h - (1 << 64)``), and arithmetic with one: each operation deoptimises where
#: CPython's value would leave the range.
INT128 = Scalar("int128")
FLOAT = Scalar("float")
COMPLEX = Scalar("complex")
NONE = Scalar("None")
RANGE = Scalar("range")
RANGE_ITER = Scalar("range_iterator")
UNDEF = Scalar("undef")
BOTTOM = Scalar("bottom")


@record(frozen=True)
class NpScalar(Type):
    """A NumPy scalar (``np.float64``, ``np.int64``, ``np.bool``): what indexing an array
    gives. Represented like its Python counterpart (`base`), but NumPy's rules decide
    result types, and what NumPy would warn about (int overflow, a float result that is
    an infinity or NaN from finite operands) is handed back to CPython."""

    name: str

    def __str__(self) -> str:
        return f"np.{self.name}"

    @property
    def base(self) -> "Scalar":
        if self.name == "bool":
            return BOOL
        return FLOAT if self.name.startswith("float") else INT

    @property
    def narrow(self) -> bool:
        """A dtype other than float64, int64 and bool: its elements compile only where
        NumPy's result is the Python number's (float(), int(), bool(), a truth test, an
        index, a store); arithmetic on them does not compile yet."""
        return self.name not in ("float64", "int64", "bool")


NP_F64 = NpScalar("float64")
NP_I64 = NpScalar("int64")
NP_BOOL = NpScalar("bool")


@record(frozen=True)
class ArrayType(Type):
    """A NumPy array (any layout): data pointer, shape, strides. `readonly` arrays
    (``a.flags.writeable`` false) are a separate type, so that code writing to one is
    not compiled for it (CPython raises ValueError at the write).

    `unit_stride` arrays have adjacent elements along their last axis: its stride is
    the itemsize (or its extent is at most 1, where the stride is never used). Code
    for them indexes the last axis with that constant, so LLVM sees consecutive
    accesses and can vectorize them; the struct is the same either way."""

    dtype: str  # one of ARRAY_DTYPES
    ndim: int
    readonly: bool = False
    unit_stride: bool = False

    def __str__(self) -> str:
        flags = (", readonly" if self.readonly else "") + (", unit-stride" if self.unit_stride else "")
        return f"array[{self.dtype}, {self.ndim}d{flags}]"

    def any_stride(self) -> "ArrayType":
        """The same array type without the unit-stride promise."""
        return ArrayType(self.dtype, self.ndim, self.readonly)

    @property
    def item(self) -> NpScalar:
        return NpScalar(self.dtype)


@record(frozen=True)
class BoundMethod(Type):
    """``x.bit_length`` and the like: a method of a number (a row of the primitives'
    table, `primitives.method`) bound to a value of type `receiver`; only ever called,
    as the row's function with the value first."""

    name: str
    receiver: Type

    def __str__(self) -> str:
        return f"method {self.name} of {self.receiver}"


@record(frozen=True)
class ArrayMethod(Type):
    """``a.copy`` and the like: a method of an array, only ever called."""

    name: str
    array: ArrayType

    def __str__(self) -> str:
        return f"method {self.name} of {self.array}"


#: NumPy dtypes whose arrays compile, and the dimensions they may have.
ARRAY_DTYPES = (
    "float64", "int64", "float32", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool",
)
#: Bytes per element.
ITEMSIZE = {
    "float64": 8, "int64": 8, "uint64": 8, "float32": 4, "int32": 4, "uint32": 4, "int16": 2, "uint16": 2,
    "int8": 1, "uint8": 1, "bool": 1,
}
MAX_NDIM = 4


def base(t: Type) -> Type:
    """`t` with NumPy scalars replaced by the Python scalars they are represented as."""
    return t.base if isinstance(t, NpScalar) else t


def is_index(t: Type) -> bool:
    """Whether `t` is an integer that ``__index__`` gives as itself: an int, a uint (one
    of 2**63 or more is out of any array's bounds: it deopts, lower/emitter.as_int) or a
    NumPy integer of any width (its value is exact in the word). Not a bool: NumPy
    reads one as a mask, and ``np.bool`` has no ``__index__``."""
    return t in (INT, UINT) or (isinstance(t, NpScalar) and t.base == INT)


@record(frozen=True)
class TupleType(Type):
    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple[" + ", ".join(map(str, self.items)) + "]" if self.items else "tuple[()]"


@record(frozen=True)
class UnionType(Type):
    options: tuple[Type, ...]  # at least two, none a union, sorted by text

    def __str__(self) -> str:
        return " | ".join(map(str, self.options))


@record(frozen=True, eq=False)
class ObjType(Type):
    """A Python object known at compile time: a module, function, builtin or class."""

    obj: object

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjType) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __str__(self) -> str:
        return f"<{getattr(self.obj, '__qualname__', getattr(self.obj, '__name__', type(self.obj).__name__))}>"


@record(frozen=True)
class ExcType(Type):
    """An exception instance (only ever raised, which hands the call back to CPython)."""

    cls: type

    def __str__(self) -> str:
        return f"exception {self.cls.__name__}"


def options(t: Type) -> tuple[Type, ...]:
    return t.options if isinstance(t, UnionType) else (t,)


def join(a: Type, b: Type) -> Type:
    """The type of a value that is an `a` on one path and a `b` on another."""
    if a == b or b == BOTTOM:
        return a
    if a == BOTTOM:
        return b
    a, b = _same_arrays(a, b)
    if a == b:
        return a
    members = {str(o): o for o in options(a) + options(b)}
    if len(members) > 1 and any(isinstance(o, TupleType) and holds_array(o) for o in members.values()):
        raise Unsupported(f"a value that may be {a} or {b}")  # a tuple of arrays, or something else
    arrays = [o for o in members.values() if isinstance(o, ArrayType)]
    if arrays and (len(arrays) > 1 or any(o not in (UNDEF, NONE) for o in members.values() if not isinstance(o, ArrayType))):
        # An array may only be unbound or None on other paths (a local assigned in a loop).
        raise Unsupported(f"a value that may be {a} or {b}")
    if len(members) > MAX_UNION:
        raise Unsupported(f"a value that may be any of {len(members)} types ({', '.join(sorted(members))})")
    return UnionType(tuple(members[k] for k in sorted(members)))


def _same_arrays(a: Type, b: Type) -> tuple[Type, Type]:
    """`a` and `b`, with array types that differ only in the unit-stride promise
    replaced by the weaker type (the values are represented alike, so only the
    compiled indexing differs)."""
    arrays = {o for o in options(a) + options(b) if isinstance(o, ArrayType)}
    if len(arrays) < 2 or len({o.any_stride() for o in arrays}) != 1:
        return a, b
    weak = next(iter(arrays)).any_stride()

    def weaken(t: Type) -> Type:
        return union_of([weak if isinstance(o, ArrayType) else o for o in options(t)])

    return weaken(a), weaken(b)


def holds_array(t: Type | None) -> bool:
    """Whether a value of type `t` is or holds an array (in a tuple, as a union member)."""
    if isinstance(t, (TupleType, UnionType)):
        return any(holds_array(i) for i in (t.items if isinstance(t, TupleType) else t.options))
    return isinstance(t, ArrayType)


def union_of(types: list[Type]) -> Type:
    out: Type = BOTTOM
    for t in types:
        out = join(out, t)
    return out


def typeof(value: object) -> Type:
    """The type of a run-time argument or constant value."""
    t = type(value)
    if t is bool:
        return BOOL
    if t is int:
        if INT64_MIN <= value <= INT64_MAX:  # type: ignore[operator]
            return INT
        if 0 <= value <= UINT64_MAX:  # type: ignore[operator]
            return UINT  # (a 64-bit hash or generator state as a Python int)
        raise Unsupported("int value beyond the int64 range")
    if t is float:
        return FLOAT
    if t is complex:
        return COMPLEX
    if value is None:
        return NONE
    if t is tuple:
        return TupleType(tuple(typeof(v) for v in value))  # type: ignore[attr-defined]
    numpy_type = _numpy_typeof(value)
    if numpy_type is not None:
        return numpy_type
    raise Unsupported(f"value of type {t.__name__}")


_ARRAY_TYPES: dict[tuple[object, int, bool, bool], ArrayType] = {}


def constant_typeof(value: object) -> Type:
    """The type of a constant: `typeof`'s, and also np.float32 scalars, which constant
    folding makes (``np.float32(0.5)``) but arguments cannot be."""
    import sys

    np = sys.modules.get("numpy")
    if np is not None and type(value) is np.float32:
        return NpScalar("float32")
    return typeof(value)


def _numpy_typeof(value: object) -> Type | None:
    import sys

    np = sys.modules.get("numpy")  # a NumPy value implies NumPy is imported
    if np is None:
        return None
    if isinstance(value, np.ndarray):
        if type(value) is not np.ndarray:  # np.matrix, masked arrays: other semantics
            raise Unsupported(f"an instance of {type(value).__name__}, a subclass of numpy.ndarray")
        return array_type(value)
    for np_type, t in ((np.float64, NP_F64), (np.int64, NP_I64), (np.bool_, NP_BOOL)):
        if type(value) is np_type:
            return t
    return None


def array_type(value: Any) -> ArrayType:
    """The type of an ndarray (Unsupported for a dtype or a number of dimensions that
    does not compile). Called for every array argument of every call: the dtype's
    name (a slow property in NumPy) and the type itself come from a cache."""
    dtype, ndim = value.dtype, value.ndim
    if not 1 <= ndim <= MAX_NDIM:
        raise Unsupported(f"array of {ndim} dimensions")
    unit = value.shape[-1] <= 1 or value.strides[-1] == dtype.itemsize
    key = (dtype, ndim, value.flags.writeable, unit)
    found = _ARRAY_TYPES.get(key)
    if found is None:
        if dtype.name not in ARRAY_DTYPES or not dtype.isnative:
            raise Unsupported(f"array of dtype {dtype}")
        found = _ARRAY_TYPES[key] = ArrayType(dtype.name, ndim, not value.flags.writeable, unit)
    return found


def parse_signature(text: str) -> tuple[Type, ...]:
    """Parse ``"(int, float)"``, ``"(tuple[int, float], None)"`` or
    ``"(array[float64, 2d], int)"`` into argument types."""
    names = {"int": INT, "float": FLOAT, "complex": COMPLEX, "bool": BOOL, "None": NONE}
    pos = 0
    text = text.strip()

    def parse_one() -> Type:
        nonlocal pos
        while text[pos] == " ":
            pos += 1
        if text.startswith("array[", pos):
            end = text.index("]", pos)
            dtype, ndim, *flags = (p.strip() for p in text[pos + len("array[") : end].split(","))
            pos = end + 1
            if dtype not in ARRAY_DTYPES or not ndim.endswith("d") or not set(flags) <= {"readonly", "unit-stride"}:
                raise ValueError(f"cannot parse an array type in signature {text!r}")
            return ArrayType(dtype, int(ndim[:-1]), "readonly" in flags, "unit-stride" in flags)
        if text.startswith("tuple[", pos):
            pos += len("tuple[")
            items = []
            while text[pos] != "]":
                items.append(parse_one())
                while text[pos] in ", ":
                    pos += 1
            pos += 1
            return TupleType(tuple(items))
        for name, t in names.items():
            if text.startswith(name, pos):
                pos += len(name)
                return t
        raise ValueError(f"cannot parse a type at {text[pos:]!r} in signature {text!r}")

    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"a signature looks like '(int, float)', not {text!r}")
    pos = 1
    out = []
    while True:
        while text[pos] in ", ":
            pos += 1
        if text[pos] == ")":
            break
        out.append(parse_one())
    return tuple(out)


_SCALARS_BY_NAME = {str(t): t for t in (BOOL, INT, UINT, INT128, FLOAT, COMPLEX, NONE, RANGE, RANGE_ITER, UNDEF, BOTTOM)}


def parse_type(text: str) -> Type:
    """The type whose text (``str(t)``) is `text`: scalars, ``np.<dtype>``, tuples,
    arrays and unions. (Compile-time objects and exceptions have no text to parse.)"""
    items = _split_top(text, " | ")
    if len(items) > 1:
        return UnionType(tuple(parse_type(i) for i in items))
    text = text.strip()
    if text in _SCALARS_BY_NAME:
        return _SCALARS_BY_NAME[text]
    if text.startswith("np.") and text[3:] in ("bool", *ARRAY_DTYPES):
        return NpScalar(text[3:])
    if text == "tuple[()]":
        return TupleType(())
    if text.startswith("tuple[") and text.endswith("]"):
        return TupleType(tuple(parse_type(i) for i in _split_top(text[6:-1], ", ")))
    if text.startswith("array["):
        return parse_signature(f"({text})")[0]
    raise ValueError(f"cannot parse the type {text!r}")


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at the `sep`s that are not inside brackets."""
    parts, depth, start, k = [], 0, 0, 0
    while k < len(text):
        if text[k] == "[":
            depth += 1
        elif text[k] == "]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, k):
            parts.append(text[start:k])
            k += len(sep)
            start = k
            continue
        k += 1
    return parts + [text[start:]]


def format_signature(types: tuple[Type, ...]) -> str:
    return "(" + ", ".join(map(str, types)) + ")"
