"""One model per type: everything about a type's values except its typing rules and its
operations, in one class.

A model says
- how a value is represented in native code (`layout`): a tree of leaves, each one of
  the kinds below; a tuple is an LLVM literal struct of its members. lower/ltypes.py
  gives each leaf kind its LLVM type, and code generation reads and writes values
  leaf by leaf (the entry's parameters, the result words, the resume state);
- its words at the native boundary (`words`, `c_params`), which follow from the
  layout: one 64-bit word per leaf that has content;
- how the C entry (csrc/entry.c) unboxes and boxes it (`unboxable`, `boxable`,
  `entry_slots`), and how call-time Python code does (`flatten`, `box_expr`);
- how a resume point rebuilds it from its words (`state_words`, `rebuild`);
- its compile-time constants (`leaf_values`).

Nothing here imports llvmlite: the call-time code (boxing.py, resume.py) reads the
same models as code generation. `model(t)` finds a type's model; adding a type is a
model here plus its typing rules and its operations.

For example, ``complex`` is ``(REAL, REAL)``: two doubles in native code, two words at
the boundary (the real part's bits, then the imaginary part's), C entry slot ``c``.
"""

from __future__ import annotations

from .types import (
    BOOL, BOTTOM, COMPLEX, FLOAT, INT, NONE, UINT, INT128, NP_BOOL, NP_F64, RANGE, RANGE_ITER, UNDEF, ArrayMethod, BoundMethod,
    ArrayType, ExcType, NpScalar, ObjType, TupleType, Type, UnionType,
)

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Protocol, Union

    Layout = Union[str, tuple["Layout", ...]]

    class Arrays(Protocol):
        """What `Model.rebuild` asks of its caller for arrays (resume.py's `_Arrays`)."""

        def get(self, w: Any, k: int, t: ArrayType, owns: bool) -> Any: ...


# -- Leaf kinds of a native representation -------------------------------------------
#: i1; a word 0 or 1; an ``int64_t`` parameter (nonzero is true)
BIT = "bit"
#: i64; a word; an ``int64_t`` parameter
WORD = "word"
#: double; a word holding its bits; a ``double`` parameter
REAL = "real"
#: i8, a union's option index; a word; never a parameter
TAG = "tag"
#: i8 0: no run-time content (None, a compile-time object); no word
UNIT = "unit"
#: i64, an array's data address; a word; a ``char *`` parameter (see ArrayModel)
DATA = "data"
#: i64, an array's owner (lower/ltypes.py); a word; not a parameter: the entry sets it
#: to ``-(k + 1)`` for argument k
MEMINFO = "meminfo"
#: a pointer to a range iterator's ``{next, step, left, item}``; no boundary word, its
#: first three fields in the resume state
ITERATOR = "iterator"

#: Boundary words, resume-state words and C parameter type of each leaf kind.
LEAF_WORDS = {BIT: 1, WORD: 1, REAL: 1, TAG: 1, UNIT: 0, DATA: 1, MEMINFO: 1, ITERATOR: 0}
LEAF_STATE_WORDS = {**LEAF_WORDS, ITERATOR: 3}
LEAF_PARAM = {BIT: "int64_t", WORD: "int64_t", REAL: "double", DATA: "char *"}


def leaves(layout: Layout) -> list[str]:
    """The leaf kinds of `layout`, in order."""
    if isinstance(layout, str):
        return [layout]
    return [k for part in layout for k in leaves(part)]


#: What `rebuild` gives for an unbound local (resume.py tests for it).
UNBOUND = object()


class Model:
    """The defaults: a value with no run-time content, which cannot cross the boundary
    and is rebuilt as nothing (compile-time objects, exceptions, bottom)."""

    def layout(self, t: Type) -> Layout:
        return UNIT

    def words(self, t: Type) -> int:
        """How many 64-bit words a value takes across the boundary."""
        return sum(LEAF_WORDS[k] for k in leaves(self.layout(t)))

    def c_params(self, t: Type) -> list[str]:
        """The C types of an argument's flattened parameters."""
        return [LEAF_PARAM[k] for k in leaves(self.layout(t)) if k in LEAF_PARAM]

    def state_words(self, t: Type) -> int | None:
        """How many words a value takes in a resume state, None where a resume point
        cannot rebuild it (then the point is not made)."""
        return None

    def unboxable(self, t: Type) -> bool:
        """Whether the C entry takes it as an argument."""
        return False

    def boxable(self, t: Type) -> bool:
        """Whether the C entry returns it."""
        return False

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        """Append the C entry's slots for it (csrc/entry.c): (kind, count, exact type,
        dtype, writeable, unit stride, itemsize), in preorder."""
        raise AssertionError(f"no C entry slot for {t}")

    #: Arguments of these types are passed to the cffi entry as they are.
    plain = False

    def flatten(self, t: Type, expr: str) -> list[str]:
        """Python expressions for an argument's parameters, given the argument's."""
        return []

    def box_expr(self, t: Type, offset: int) -> str:
        """A Python expression for the result whose words start at ``o[offset]``
        (``a``: the call's arguments, ``m``: the arrays this result already made)."""
        raise AssertionError(f"cannot box {t}")  # (typing refuses to return it)

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        """The value whose resume words start at ``w[k]``."""
        raise AssertionError(f"cannot rebuild {t}")

    def leaf_values(self, value: object, t: Type) -> Any:
        """A constant's values, shaped as its layout (None for a UNIT leaf)."""
        return None


class _Crossing(Model):
    """A value that the C entry takes and returns, and a resume point rebuilds from the
    words it has at the boundary."""

    def state_words(self, t: Type) -> int | None:
        return self.words(t)

    def unboxable(self, t: Type) -> bool:
        return True

    def boxable(self, t: Type) -> bool:
        return True


class _Scalar(_Crossing):
    """A Python scalar in one leaf: one word, one parameter."""

    def __init__(self, leaf: str, slot: str, pytype: type, convert: Any, box: str) -> None:
        self.leaf, self.slot, self.pytype, self.convert, self.box = leaf, slot, pytype, convert, box

    plain = True

    def layout(self, t: Type) -> Layout:
        return self.leaf

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        out.append((self.slot, 0, self.pytype, None, 0, 0, 0))

    def flatten(self, t: Type, expr: str) -> list[str]:
        return [expr]

    def box_expr(self, t: Type, offset: int) -> str:
        return self.box.format(k=offset)

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        return self.convert(w[k])

    def leaf_values(self, value: object, t: Type) -> Any:
        return self.pytype(value)


class _UnsignedModel(_Scalar):
    """A `UINT`: its 64 bits in a word, read as unsigned; the C entry's slot ``w``. As an
    argument it is an int in [2**63, 2**64) (a smaller one is an `INT`: the entry's
    ``w`` matches only those, so that each call finds the signature of its type)."""

    def __init__(self) -> None:
        super().__init__(WORD, "w", int, lambda w: int(w.i) & _MASK64, "(o[{k}].i & 0xFFFFFFFFFFFFFFFF)")

    plain = False  # (the flattener converts it)

    def flatten(self, t: Type, expr: str) -> list[str]:
        return [f"(({expr}) - 18446744073709551616)"]  # (its bits as the int64 cffi takes)

    def leaf_values(self, value: object, t: Type) -> Any:
        v = int(value)  # type: ignore[call-overload]
        return v - (1 << 64) if v >> 63 else v  # (the bits, as the i64 constant LLVM reads)


_MASK64 = (1 << 64) - 1


class _Int128Model(_Crossing):
    """An `INT128` int: its 128 bits in two words, the low word, then the high word (two's
    complement). Never an argument (the C entry's slot ``W`` is a result only)."""

    def layout(self, t: Type) -> Layout:
        return (WORD, WORD)

    def unboxable(self, t: Type) -> bool:
        return False

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        out.append(("W", 0, int, None, 0, 0, 0))

    def box_expr(self, t: Type, offset: int) -> str:
        return f"((o[{offset}].i & 0xFFFFFFFFFFFFFFFF) | (o[{offset + 1}].i << 64))"

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        return (int(w[k].i) & _MASK64) | (int(w[k + 1].i) << 64)

    def leaf_values(self, value: object, t: Type) -> Any:
        v = int(value)  # type: ignore[call-overload]
        low, high = v & _MASK64, v >> 64
        return (low - (1 << 64) if low >> 63 else low, high)  # (each word as an i64 constant)


class _NoneModel(_Crossing):
    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        out.append(("n", 0, type(None), None, 0, 0, 0))

    def box_expr(self, t: Type, offset: int) -> str:
        return "None"

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        return None


class _UnboundModel(Model):
    """A possibly unbound local's "unbound" (only ever a union member)."""

    def state_words(self, t: Type) -> int | None:
        return 0

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        return UNBOUND


class ComplexModel(_Crossing):
    """A Python complex: its real and imaginary parts as two doubles."""

    def layout(self, t: Type) -> Layout:
        return (REAL, REAL)

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        out.append(("c", 0, complex, None, 0, 0, 0))

    def flatten(self, t: Type, expr: str) -> list[str]:
        return [f"{expr}.real", f"{expr}.imag"]

    def box_expr(self, t: Type, offset: int) -> str:
        return f"complex(o[{offset}].d, o[{offset + 1}].d)"

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        return complex(w[k].d, w[k + 1].d)

    def leaf_values(self, value: object, t: Type) -> Any:
        return (value.real, value.imag)  # type: ignore[attr-defined]


class NpScalarModel(_Crossing):
    """A NumPy scalar: represented as its Python counterpart (`NpScalar.base`), boxed as
    the NumPy type. A narrow dtype is a result only (its value is exact in the wide
    word)."""

    def layout(self, t: Type) -> Layout:
        return model(t.base).layout(t.base)  # type: ignore[attr-defined]

    def unboxable(self, t: Type) -> bool:
        return not t.narrow  # type: ignore[attr-defined]

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        import numpy as np

        assert isinstance(t, NpScalar)
        out.append(({FLOAT: "F", INT: "I", BOOL: "B"}[t.base], 0, np.dtype(t.name).type, None, 0, 0, 0))

    def flatten(self, t: Type, expr: str) -> list[str]:
        return [f"{'float' if t == NP_F64 else 'int'}({expr})"]

    def box_expr(self, t: Type, offset: int) -> str:
        assert isinstance(t, NpScalar)
        if t == NP_BOOL:
            return f"_np.bool_(o[{offset}].i != 0)"
        return f"_np.{t.name}(o[{offset}].{'d' if t.base == FLOAT else 'i'})"

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        import numpy as np

        assert isinstance(t, NpScalar)
        if t == NP_BOOL:
            return np.bool_(w[k].i != 0)
        return getattr(np, t.name)(w[k].d if t.base == FLOAT else w[k].i)

    def leaf_values(self, value: object, t: Type) -> Any:
        assert isinstance(t, NpScalar)  # (a constant: ``np.float64(0.0)``, folded)
        return model(t.base).leaf_values(value.item(), t.base)  # type: ignore[attr-defined]


class ArrayModel(_Crossing):
    """A NumPy array: ``{data, shape..., strides..., meminfo}``. An argument passes its
    data pointer, shape and strides (the entry sets its meminfo); a result adds the
    meminfo (lower/ltypes.py)."""

    def layout(self, t: Type) -> Layout:
        assert isinstance(t, ArrayType)
        return (DATA,) + (WORD,) * (2 * t.ndim) + (MEMINFO,)

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        import numpy as np

        assert isinstance(t, ArrayType)
        dtype = np.dtype(t.dtype)
        out.append(("A", t.ndim, np.ndarray, dtype, int(not t.readonly), int(t.unit_stride), dtype.itemsize))

    def flatten(self, t: Type, expr: str) -> list[str]:
        assert isinstance(t, ArrayType)
        # The caller's argument tuple keeps the array alive for the whole native call.
        return [f"_data({expr})"] + [f"{expr}.shape[{k}]" for k in range(t.ndim)] + [
            f"{expr}.strides[{k}]" for k in range(t.ndim)
        ]

    def box_expr(self, t: Type, offset: int) -> str:
        assert isinstance(t, ArrayType)
        return f"_box_array(o, {offset}, a, {t.dtype!r}, {t.ndim}, m)"

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        assert arrays is not None and isinstance(t, ArrayType)
        return arrays.get(w, k, t, owns)


class TupleModel(Model):
    """A tuple: its items, in order."""

    def layout(self, t: Type) -> Layout:
        return tuple(model(i).layout(i) for i in t.items)  # type: ignore[attr-defined]

    def state_words(self, t: Type) -> int | None:
        parts = [state_words(i) for i in t.items]  # type: ignore[attr-defined]
        return None if None in parts else sum(parts)  # type: ignore[arg-type]

    def unboxable(self, t: Type) -> bool:
        return all(model(i).unboxable(i) for i in t.items)  # type: ignore[attr-defined]

    def boxable(self, t: Type) -> bool:
        return all(model(i).boxable(i) for i in t.items)  # type: ignore[attr-defined]

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        assert isinstance(t, TupleType)
        out.append(("t", len(t.items), tuple, None, 0, 0, 0))
        for item in t.items:
            model(item).entry_slots(item, out)

    def flatten(self, t: Type, expr: str) -> list[str]:
        assert isinstance(t, TupleType)
        return [e for i, item in enumerate(t.items) for e in model(item).flatten(item, f"{expr}[{i}]")]

    def box_expr(self, t: Type, offset: int) -> str:
        assert isinstance(t, TupleType)
        parts, k = [], offset
        for item in t.items:
            parts.append(model(item).box_expr(item, k))
            k += words(item)
        return "(" + "".join(p + ", " for p in parts) + ")"

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        assert isinstance(t, TupleType)
        out = []
        for item in t.items:
            out.append(model(item).rebuild(item, w, k, arrays, owns))
            k += state_words(item)  # type: ignore[operator]
        return tuple(out)

    def leaf_values(self, value: object, t: Type) -> Any:
        assert isinstance(t, TupleType)
        return tuple(model(i).leaf_values(v, i) for v, i in zip(value, t.items))  # type: ignore[call-overload]


class UnionModel(Model):
    """A value of one of several types: ``{tag, option...}``, the tag indexing
    `UnionType.options`; every option has its words (a result only)."""

    def layout(self, t: Type) -> Layout:
        return (TAG,) + tuple(model(o).layout(o) for o in t.options)  # type: ignore[attr-defined]

    def c_params(self, t: Type) -> list[str]:
        return []

    def state_words(self, t: Type) -> int | None:
        parts = [state_words(o) for o in t.options]  # type: ignore[attr-defined]
        return None if None in parts else 1 + sum(parts)  # type: ignore[arg-type]

    def boxable(self, t: Type) -> bool:
        return all(model(o).boxable(o) for o in t.options)  # type: ignore[attr-defined]

    def entry_slots(self, t: Type, out: list[tuple[Any, ...]]) -> None:
        assert isinstance(t, UnionType)
        out.append(("u", len(t.options), object, None, 0, 0, 0))
        for option in t.options:
            model(option).entry_slots(option, out)

    def box_expr(self, t: Type, offset: int) -> str:
        assert isinstance(t, UnionType)
        k = offset + 1
        branches = []
        for i, opt in enumerate(t.options):
            branches.append((i, model(opt).box_expr(opt, k)))
            k += words(opt)
        expr = branches[-1][1]
        for i, e in reversed(branches[:-1]):
            expr = f"({e} if o[{offset}].i == {i} else {expr})"
        return expr

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        assert isinstance(t, UnionType)
        tag = int(w[k].i)
        k += 1
        for i, opt in enumerate(t.options):
            if i == tag:
                return model(opt).rebuild(opt, w, k, arrays, owns)
            k += state_words(opt)  # type: ignore[operator]
        raise AssertionError(f"bad union tag {tag} for {t}")


class _RangeModel(Model):
    """``range(start, stop, step)`` as a value (only ever iterated)."""

    def layout(self, t: Type) -> Layout:
        return (WORD, WORD, WORD)


class _RangeIteratorModel(Model):
    """A range iterator: a pointer to its ``{next, step, left, item}`` (code generation
    allocates it); a resume point rebuilds it from its first three fields."""

    def layout(self, t: Type) -> Layout:
        return ITERATOR

    def state_words(self, t: Type) -> int | None:
        return 3

    def rebuild(self, t: Type, w: Any, k: int, arrays: Arrays | None, owns: bool) -> Any:
        cur, step, left = int(w[k].i), int(w[k + 1].i), int(w[k + 2].i)
        # The same items as the native iterator has left (`left` is unsigned there).
        left &= (1 << 64) - 1
        return iter(range(cur, cur + left * step, step))


class _NeverModel(Model):
    """The type of a value that never exists (a call that never returns)."""

    def box_expr(self, t: Type, offset: int) -> str:
        return "None"  # (never run: such a call deopts or raises)


_NOTHING = Model()

#: The models of the types that are one object each.
_BY_TYPE: dict[Type, Model] = {
    BOOL: _Scalar(BIT, "b", bool, lambda w: w.i != 0, "(o[{k}].i != 0)"),
    INT: _Scalar(WORD, "i", int, lambda w: int(w.i), "o[{k}].i"),
    UINT: _UnsignedModel(),
    INT128: _Int128Model(),
    FLOAT: _Scalar(REAL, "d", float, lambda w: float(w.d), "o[{k}].d"),
    COMPLEX: ComplexModel(),
    NONE: _NoneModel(),
    UNDEF: _UnboundModel(),
    BOTTOM: _NeverModel(),
    RANGE: _RangeModel(),
    RANGE_ITER: _RangeIteratorModel(),
}
#: The models of the types that are a family (one class, parameters).
_BY_CLASS: dict[type, Model] = {
    NpScalar: NpScalarModel(),
    ArrayType: ArrayModel(),
    TupleType: TupleModel(),
    UnionType: UnionModel(),
    ObjType: _NOTHING,
    ExcType: _NOTHING,
    ArrayMethod: _NOTHING,
    BoundMethod: _NOTHING,
}


def model(t: Type) -> Model:
    """The model of type `t`."""
    found = _BY_CLASS.get(type(t))
    if found is not None:
        return found
    return _BY_TYPE[t]


# Shorthands for the questions asked most.
def words(t: Type) -> int:
    return model(t).words(t)


def state_words(t: Type) -> int | None:
    return model(t).state_words(t)


def c_params(t: Type) -> list[str]:
    return model(t).c_params(t)
