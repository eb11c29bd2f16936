"""Typing of the NumPy calls that create arrays in compiled code.

    np.empty / np.zeros / np.ones (shape, dtype=float)      shape: an int or a tuple of ints
    np.full (shape, fill_value, dtype=None)                 dtype from the fill value
    np.empty_like / np.zeros_like / np.ones_like (a, dtype=None)
    np.arange (stop) / (start, stop) / (start, stop, step)  ints; dtype=int64 or any int or float dtype
    a.copy()

The creators are rows of the primitives' table (`NUMPY_CREATORS`, of kind `CREATES`);
this is their typing rule, which needs the call's keywords and constant arguments.
The result is a new array of 1-4 dimensions (`ArrayType`, any dtype of
`ARRAY_DTYPES`), which
native code allocates and reference-counts (`csrc/runtime.c`). Anything else (another
dtype, `order=`, float `arange` bounds) is unsupported and runs in CPython.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..records import record
from .types import (
    ARRAY_DTYPES, BOOL, FLOAT, INT, MAX_NDIM, NONE, NP_F64, NP_I64, ArrayType, ObjType, TupleType, Type, base, is_index,
)

@record(frozen=True)
class Creation:
    """What the lowering needs: the function, and which arguments hold what."""

    name: str
    result: ArrayType
    shape: int | None = None  # argument index of the shape (an int or a tuple)
    like: int | None = None  # argument index of the prototype array
    fill: int | None = None  # argument index of the fill value (full)


def _dtype(value: object) -> str:
    """The dtype name a ``dtype=`` value means, if it is one we compile."""
    import numpy as np

    try:
        name = np.dtype(value).name  # float -> float64, int -> int64, "int64", np.float64 ...
    except TypeError:
        raise Unsupported(f"dtype={value!r}") from None
    if name not in ARRAY_DTYPES:
        raise Unsupported(f"arrays of dtype {name}")
    return name


def _ndim(shape: Type) -> int:
    if is_index(shape):
        return 1
    if isinstance(shape, TupleType) and 1 <= len(shape.items) <= MAX_NDIM and all(is_index(t) for t in shape.items):
        return len(shape.items)
    raise Unsupported(f"an array shape given as {shape}")


def creation(name: str, argtypes: list[Type], kwnames: tuple[str, ...], consts: list[object]) -> Creation:
    """Type ``np.<name>(...)``; `consts` holds each argument's constant value (or a
    marker when it is not constant), in the same order as `argtypes`."""
    npos = len(argtypes) - len(kwnames)
    params = {"empty": ("shape", "dtype"), "zeros": ("shape", "dtype"), "ones": ("shape", "dtype"),
              "full": ("shape", "fill_value", "dtype"), "arange": ("start", "stop", "step", "dtype")}
    names = params.get(name, ("a", "dtype"))
    if npos > len(names) or any(k not in names or names.index(k) < npos for k in kwnames):
        raise Unsupported(f"np.{name}() with these arguments")
    where = {n: i for i, n in enumerate(names[:npos])}
    where.update({k: npos + i for i, k in enumerate(kwnames)})

    def dtype_or(default: str | None) -> str | None:
        i = where.get("dtype")
        if i is None or (argtypes[i] == NONE):
            return default
        if not isinstance(argtypes[i], ObjType):
            raise Unsupported(f"np.{name}() with a dtype that is not a constant")
        return _dtype(consts[i])

    if name == "arange":
        bounds = [t for k, t in enumerate(argtypes) if k != where.get("dtype")]
        if not 1 <= len(bounds) <= 3 or "dtype" in kwnames and len(bounds) != npos or any(not is_index(t) for t in bounds):
            raise Unsupported("np.arange() other than with 1-3 int arguments")
        dtype = dtype_or("int64")
        if dtype == "bool":
            raise Unsupported("np.arange() of bools")
        return Creation(name, ArrayType(dtype, 1, unit_stride=True))  # type: ignore[arg-type]
    if name.endswith("_like"):
        i = where.get("a")
        proto = argtypes[i] if i is not None else None
        if not isinstance(proto, ArrayType):
            raise Unsupported(f"np.{name}() of a {proto}")
        dtype = dtype_or(proto.dtype)
        # NumPy's "K" layout: a 1-D result is dense; a wider one follows the prototype's
        # axis order, which only the run-time strides tell: for a prototype of unit
        # stride the last axis is the innermost but where another one's stride is
        # smaller (a broadcast row, stride 0), where the creation deopts
        # (lower/arrays.allocate), so the result has unit stride too.
        unit = proto.ndim == 1 or proto.unit_stride
        return Creation(name, ArrayType(dtype, proto.ndim, unit_stride=unit), like=i)  # type: ignore[arg-type]
    i = where.get("shape")
    if i is None:
        raise Unsupported(f"np.{name}() without a shape")
    ndim = _ndim(argtypes[i])
    if name == "full":
        f = where.get("fill_value")
        if f is None:
            raise Unsupported("np.full() without a fill value")
        fill = argtypes[f]
        natural = {INT: "int64", NP_I64: "int64", FLOAT: "float64", NP_F64: "float64", BOOL: "bool"}.get(fill)
        dtype = dtype_or(natural)
        integral = dtype not in ("float64", "float32", "bool")
        if dtype is None or base(fill) not in (INT, BOOL, FLOAT) or (integral and base(fill) == FLOAT):
            raise Unsupported(f"np.full() with a {fill} fill value")
        return Creation(name, ArrayType(dtype, ndim, unit_stride=True), shape=i, fill=f)  # type: ignore[arg-type]
    return Creation(name, ArrayType(dtype_or("float64"), ndim, unit_stride=True), shape=i)  # type: ignore[arg-type]  # C order
