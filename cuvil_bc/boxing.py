"""Python-side conversion of arguments and results at the native boundary.

For each signature this generates a small function (Python source, compiled once) that
flattens the arguments into the entry point's scalar parameters, and one that rebuilds
the result object from the output words, as each type's model says (typing/models.py).
Call time code: it never imports llvmlite.
"""

from __future__ import annotations

from .abi import VIEW_OF_ARGUMENT
from .typing.models import model
from .typing.types import Type

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable


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


def entry_slots(argtypes: tuple[Type, ...], ret: Type) -> tuple[tuple[tuple[Any, ...], ...], tuple[tuple[Any, ...], ...]]:
    """The C entry's programs (csrc/entry.c) for a signature: the slots of its
    arguments and of its result, in preorder (typing/models.py, `Model.entry_slots`)."""
    arg_slots: list[tuple[Any, ...]] = []
    ret_slots: list[tuple[Any, ...]] = []
    for t in argtypes:
        model(t).entry_slots(t, arg_slots)
    model(ret).entry_slots(ret, ret_slots)
    return tuple(arg_slots), tuple(ret_slots)


def make_boxer(t: Type) -> Callable[..., Any]:
    """``box(o, a)``: the result from the output words `o` of a call with arguments `a`."""
    namespace: dict[str, Any] = {"_box_array": box_array}
    source = f"def box(o, a=()):\n    m = {{}}\n    return {model(t).box_expr(t, 0)}\n"
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
    exprs = [e for i, t in enumerate(argtypes) for e in model(t).flatten(t, f"a[{i}]")]
    if all(model(t).plain for t in argtypes):
        return lambda a: a
    _bind_ffi()
    namespace: dict[str, Any] = {"_data": _data}
    # (a code object, not source: CPython's exec of a string forgets that a Ctrl-C
    # ended the program, whose exit status became 1 instead of -SIGINT when the hook's
    # worker compiled during the exit)
    source = f"def flatten(a):\n    return ({''.join(e + ', ' for e in exprs)})\n"
    exec(compile(source, "<cuvil_bc>", "exec"), namespace)
    return namespace["flatten"]  # type: ignore[no-any-return]


def make_words_caller(argtypes: tuple[Type, ...], address: int) -> Callable[..., int]:
    """A call of the words entry at `address` (lower/entry.py's `emit_words_entry`) as
    the dispatcher makes it: ``call(depth, *flattened, out, parked)`` (the flattened
    arguments as `make_flattener` gives them), which writes them into the entry's
    words; its status. Where a value does not fit its word (an int beyond int64, a
    float for an int) cffi raises OverflowError or TypeError, as a call with those
    parameters would."""
    from ._runtime import ffi
    from .typing.models import c_params

    kinds = [c for t in argtypes for c in c_params(t)]
    params = "".join(f"a{k}, " for k in range(len(kinds)))
    lines = [f"def call(depth, {params}out, parked):", f"    w = _new('cb_word[]', {max(1, len(kinds))})"]
    for k, kind in enumerate(kinds):
        if kind == "double":
            lines.append(f"    w[{k}].d = a{k}")
        elif kind == "int64_t":
            lines.append(f"    w[{k}].i = a{k}")
        else:  # a data pointer (`_data`), kept alive by the caller's arguments
            lines.append(f"    w[{k}].i = _address(a{k})")
    # (the calls that the entry counts are the C entry's: these are counted by the dispatcher)
    lines.append("    return _fn(_uncounted, w, out, depth, parked)")
    namespace: dict[str, Any] = {
        "_new": ffi.new,
        "_address": lambda p: int(ffi.cast("intptr_t", p)),
        "_fn": ffi.cast("int32_t(*)(int64_t *, cb_word *, cb_word *, int32_t, cb_word *)", address),
        "_uncounted": ffi.new("int64_t *"),
    }
    exec(compile("\n".join(lines) + "\n", "<cuvil_bc>", "exec"), namespace)  # (a code object: see make_flattener)
    return namespace["call"]  # type: ignore[no-any-return]
