"""Python-side conversion of arguments and results at the native boundary.

For each signature this generates a small function (Python source, compiled once) that
flattens the arguments into the entry point's scalar parameters, and one that rebuilds
the result object from the output words, following the layout in `lower/ltypes.py` (its word counts: `lower/layout.py`). Call
time code: it never imports llvmlite.
"""

from __future__ import annotations

from typing import Any, Callable

from .abi import VIEW_OF_ARGUMENT
from .lower.layout import words
from .typing.types import BOOL, FLOAT, INT, NONE, NP_BOOL, NP_F64, NP_I64, ArrayType, NpScalar, TupleType, Type, UnionType


_NUMPY_BOX = {NP_F64: "_np.float64(o[{k}].d)", NP_I64: "_np.int64(o[{k}].i)", NP_BOOL: "_np.bool_(o[{k}].i != 0)"}


def box_array(o: Any, k: int, args: tuple[Any, ...], dtype: str, ndim: int, made: dict[Any, Any]) -> Any:
    """The array whose words start at ``o[k]``: a caller's argument (meminfo -(i + 1))
    or a view of one, or an ndarray over native memory, taking over the result's
    reference to it. `made` holds the arrays already built for this result: the same
    array twice in a result (``return a, (a, 1)``) is one object."""
    meminfo = o[k + 1 + 2 * ndim].i
    data = o[k].i
    shape = tuple(o[k + 1 + i].i for i in range(ndim))
    strides = tuple(o[k + 1 + ndim + i].i for i in range(ndim))
    key = (meminfo, data, shape, strides)
    found = made.get(key)
    if found is not None:
        if meminfo > 0:
            from ._runtime import lib  # type: ignore[import-not-found]

            lib.cb_decref(meminfo)  # the extra reference of the second occurrence
        return found
    if meminfo < 0:
        found = argument_array(args, meminfo, data, shape, strides, dtype)
    else:
        found = owned_array(meminfo, data, shape, strides, dtype)
    made[key] = found
    return found



class _Memory:
    """Exposes memory to NumPy (``__array_interface__``) and keeps what owns it alive:
    the ndarray built from it has this object as its base."""

    def __init__(self, owner: Any, data: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str, writeable: bool) -> None:
        import numpy as np

        self.owner = owner
        self.__array_interface__ = {
            "version": 3, "shape": shape, "strides": strides, "typestr": np.dtype(dtype).str, "data": (data, not writeable),
        }


def _array(memory: _Memory) -> Any:
    import numpy as np

    return np.asarray(memory)


def argument_array(args: tuple[Any, ...], meminfo: int, data: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str) -> Any:
    """An argument (meminfo -(k + 1)), or a view of one (marked VIEW_OF_ARGUMENT)."""
    if meminfo > -VIEW_OF_ARGUMENT:
        return args[-meminfo - 1]
    base = args[-(meminfo + VIEW_OF_ARGUMENT) - 1]
    return _array(_Memory(base, data, shape, strides, dtype, writeable=bool(base.flags.writeable)))


def owned_array(meminfo: int, data: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str) -> Any:
    """An ndarray over native memory (the allocation `meminfo`; `data` may lie inside
    it, for a view), taking over one reference: its base object drops it through a
    cffi destructor (cb_release) when Python frees the array."""
    from ._runtime import ffi, lib  # type: ignore[import-not-found]

    owner = ffi.gc(ffi.cast("void *", meminfo), lib.cb_release)
    return _array(_Memory(owner, data, shape, strides, dtype, writeable=True))


def _result_expr(t: Type, offset: int) -> str:
    if isinstance(t, ArrayType):
        return f"_box_array(o, {offset}, a, {t.dtype!r}, {t.ndim}, m)"
    if t in _NUMPY_BOX:
        return _NUMPY_BOX[t].format(k=offset)
    if isinstance(t, NpScalar):  # a narrow dtype: its value is exact in the wide word
        return f"_np.{t.name}(o[{offset}].{'d' if t.base == FLOAT else 'i'})"
    if t == INT:
        return f"o[{offset}].i"
    if t == BOOL:
        return f"(o[{offset}].i != 0)"
    if t == FLOAT:
        return f"o[{offset}].d"
    if isinstance(t, TupleType):
        parts, k = [], offset
        for item in t.items:
            parts.append(_result_expr(item, k))
            k += words(item)
        return "(" + "".join(p + ", " for p in parts) + ")"
    if isinstance(t, UnionType):
        k = offset + 1
        branches = []
        for i, opt in enumerate(t.options):
            branches.append((i, _result_expr(opt, k)))
            k += words(opt)
        expr = branches[-1][1]
        for i, e in reversed(branches[:-1]):
            expr = f"({e} if o[{offset}].i == {i} else {expr})"
        return expr
    return "None"


def _arg_exprs(t: Type, expr: str) -> list[str]:
    if t in (INT, BOOL, FLOAT):
        return [expr]
    if isinstance(t, NpScalar):
        return [f"{'float' if t == NP_F64 else 'int'}({expr})"]
    if isinstance(t, ArrayType):
        # The caller's argument tuple keeps the array alive for the whole native call.
        return [f"_data({expr})"] + [f"{expr}.shape[{k}]" for k in range(t.ndim)] + [
            f"{expr}.strides[{k}]" for k in range(t.ndim)
        ]
    if isinstance(t, TupleType):
        return [e for i, item in enumerate(t.items) for e in _arg_exprs(item, f"{expr}[{i}]")]
    return []


#: The C entry's slot kinds (csrc/entry.c) of the scalar types.
_SLOT_KIND = {INT: "i", BOOL: "b", FLOAT: "d", NONE: "n"}


def entry_slots(argtypes: tuple[Type, ...], ret: Type) -> tuple[tuple[tuple[Any, ...], ...], tuple[tuple[Any, ...], ...]]:
    """The C entry's programs (csrc/entry.c) for a signature: the slots of its
    arguments and of its result, in preorder, each (kind, count, exact type, dtype,
    writeable, unit stride, itemsize)."""
    arg_slots: list[tuple[Any, ...]] = []
    ret_slots: list[tuple[Any, ...]] = []
    for t in argtypes:
        _slots(t, arg_slots)
    _slots(ret, ret_slots)
    return tuple(arg_slots), tuple(ret_slots)


def _slots(t: Type, out: list[tuple[Any, ...]]) -> None:
    if isinstance(t, TupleType):
        out.append(("t", len(t.items), tuple, None, 0, 0, 0))
        for item in t.items:
            _slots(item, out)
    elif isinstance(t, UnionType):
        out.append(("u", len(t.options), object, None, 0, 0, 0))
        for option in t.options:
            _slots(option, out)
    elif isinstance(t, ArrayType):
        import numpy as np

        dtype = np.dtype(t.dtype)
        out.append(("A", t.ndim, np.ndarray, dtype, int(not t.readonly), int(t.unit_stride), dtype.itemsize))
    elif isinstance(t, NpScalar):
        import numpy as np

        # (a narrow dtype is a result only: its value is exact in the wide word)
        out.append(({FLOAT: "F", INT: "I", BOOL: "B"}[t.base], 0, np.dtype(t.name).type, None, 0, 0, 0))
    else:
        out.append((_SLOT_KIND[t], 0, {INT: int, BOOL: bool, FLOAT: float, NONE: type(None)}[t], None, 0, 0, 0))


def make_boxer(t: Type) -> Callable[..., Any]:
    """``box(o, a)``: the result from the output words `o` of a call with arguments `a`."""
    namespace: dict[str, Any] = {"_box_array": box_array}
    source = f"def box(o, a=()):\n    m = {{}}\n    return {_result_expr(t, 0)}\n"
    if "_np." in source:
        import numpy

        namespace["_np"] = numpy
    exec(compile(source, "<cuvil_bc>", "exec"), namespace)  # (a code object: see make_flattener)
    return namespace["box"]  # type: ignore[no-any-return]


def _data(a: Any) -> Any:
    """An array's data pointer as a cffi `char *`: the C-contiguous buffer itself
    (~0.3 us), or, for another layout (no simple buffer), its address (~2 us)."""
    try:
        return _from_buffer(a)
    except (BufferError, TypeError, ValueError):
        return _cast("char *", a.ctypes.data)


def _bind_ffi() -> None:
    global _from_buffer, _cast
    from ._runtime import ffi

    _from_buffer, _cast = ffi.from_buffer, ffi.cast


def make_flattener(argtypes: tuple[Type, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    exprs = [e for i, t in enumerate(argtypes) for e in _arg_exprs(t, f"a[{i}]")]
    if all(t in (INT, BOOL, FLOAT) for t in argtypes):
        return lambda a: a
    _bind_ffi()
    namespace: dict[str, Any] = {"_data": _data}
    # (a code object, not source: CPython's exec of a string forgets that a Ctrl-C
    # ended the program, whose exit status became 1 instead of -SIGINT when the hook's
    # worker compiled during the exit)
    source = f"def flatten(a):\n    return ({''.join(e + ', ' for e in exprs)})\n"
    exec(compile(source, "<cuvil_bc>", "exec"), namespace)
    return namespace["flatten"]  # type: ignore[no-any-return]
