"""Generate the code of the function that `cuvil_bc.compile` returns: the per-call fast
path, as Python source, regenerated whenever the native specialisations change.

For ``def f(a, b=2.0)`` with a native ``(int, float)`` specialisation it reads like::

    def _cb_entry(a, b=_MISSING, *_cb_more):      # installed under the name f
        if _cb_more or _pyfunc.__defaults__ is not _bound_defaults:
            return _generic(*_given(("a", "b"), (a, b), _cb_more))
        if b is _MISSING:
            b = _default_0
        if _g0.get(_n0, _ABSENT) is not _o0:       # one test per global guard
            return _generic((a, b), {})
        _cb_r = _centry(a, b)                      # C (csrc/entry.c): every scalar
        if _cb_r is not _FALL:                     # signature's type test, unboxing,
            if _cb_r is _DEOPT:                    # native call and boxing
                _take()                            # (the deopt's line)
                return _deopt((a, b))
            return _cb_r
        return _generic((a, b), {})

The required parameters are the function's own, so Python binds the arguments
itself: a missing, repeated or unknown argument raises the TypeError CPython would,
with the same message (the code object carries the function's name). Parameters with
defaults take a sentinel and are filled from the defaults tuple, which is checked to be
still the function's: assigning ``f.__defaults__`` takes effect, as in CPython (giving
defaults to a function that had none is not seen by calls that omit them). Only scalar
specialisations with a fast entry go through the C entry, and array ones with a direct
call (`direct_supported`); every other call takes the generic path, which is also
where compilation happens.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

from .typing.specialize import MISSING as ABSENT
from .typing.types import BOOL, FLOAT, INT, ArrayType, Type

MISSING = object()
#: What the C entry returns when no signature matches (or an int is beyond int64), and
#: when native code handed the call back (csrc/entry.c).
FALL = object()
DEOPT = object()
_PYTYPE: dict[Type, type] = {INT: int, FLOAT: float, BOOL: bool}


def can_generate(pyfunc: pytypes.FunctionType) -> bool:
    code = pyfunc.__code__
    return not (code.co_flags & 0x0C) and code.co_kwonlyargcount == 0 and code.co_posonlyargcount == 0


def entry_function(source: str, namespace: dict[str, Any]) -> pytypes.FunctionType:
    """The function that `source` (one ``def _cb_entry(...)``) defines in `namespace`
    (the dispatcher's: the helpers it refers to are its globals, the cheapest names
    to read), its body wrapped so that an exception passes through without a trace of
    this frame (frames.py)."""
    from .frames import OWN_FILENAME, strip_own_frames

    head, body = source.split("\n", 1)
    wrapped = "    try:\n" + "".join("    " + line + "\n" for line in body.splitlines()) + (
        "    except BaseException as _cb_e:\n        _cb_strip(_cb_e)\n        raise\n"
    )
    namespace["_cb_strip"] = strip_own_frames
    exec(compile(f"{head}\n{wrapped}", OWN_FILENAME, "exec"), namespace)
    return namespace.pop("_cb_entry")  # type: ignore[no-any-return]


def generic_source(pyfunc: pytypes.FunctionType) -> str:
    return "def _cb_entry(*args, **kwargs):\n    return _generic(args, kwargs)\n"


def observed_source() -> str:
    """While a tracing tool is active (`observe.py`): the function itself, interpreted."""
    return "def _cb_entry(*args, **kwargs):\n    return _pyfunc(*args, **kwargs)\n"


def fast_source(
    pyfunc: pytypes.FunctionType,
    entry: Any,
    guards: list[Any],
    ns: dict[str, Any],
    defaults: tuple[Any, ...] | None,
    direct: list[tuple[tuple[Type, ...], Any]] = [],
) -> str:
    """Source of the fast path; fills `ns` with the objects it refers to.

    `entry` is the C entry (`lower.runtime.Entry`) of the scalar specialisations, or
    None; `guards` the global guards that every call must check; `defaults`
    the defaults to bind, checked on every call to still be the function's; `direct`
    (argtypes, `dispatcher._Native`) per array specialisation called without the
    generic path (see `direct_supported`).
    """
    code = pyfunc.__code__
    params = list(code.co_varnames[: code.co_argcount])
    ns["_MISSING"] = MISSING
    ns["_ABSENT"] = ABSENT  # what a guard expects of a name that must stay unbound
    ns["_pyfunc"], ns["_bound_defaults"], ns["_given"] = pyfunc, defaults, _given
    defaults = defaults or ()
    first_default = len(params) - len(defaults)
    args = "(" + "".join(f"{p}, " for p in params) + ")"
    # Parameters with defaults take a sentinel, so that a missing one can be told from
    # one passed explicitly; they are filled from defaults checked to be current.
    signature = [p if i < first_default else f"{p}=_MISSING" for i, p in enumerate(params)]
    lines = [f"def _cb_entry({''.join(p + ', ' for p in signature)}*_cb_more):"]
    given = f"_given({tuple(params)!r}, ({''.join(p + ', ' for p in params)}), _cb_more)"
    stale = " or _pyfunc.__defaults__ is not _bound_defaults" if defaults else ""
    lines.append(f"    if _cb_more{stale}:")
    lines.append(f"        return _generic(*{given})")
    for k, p in enumerate(params[first_default:]):
        ns[f"_default_{k}"] = defaults[k]
        lines.append(f"    if {p} is _MISSING:")
        lines.append(f"        {p} = _default_{k}")
    for k, g in enumerate(guards):
        ns[f"_g{k}"], ns[f"_o{k}"], ns[f"_n{k}"] = g.namespace, g.expected, g.name
        lookup = f"getattr(_g{k}, _n{k}, _ABSENT)" if g.is_attr else f"_g{k}.get(_n{k}, _ABSENT)"
        lines.append(f"    if {lookup} is not _o{k}:")
        lines.append(f"        return _generic({args}, {{}})")
    if entry is not None:
        # The scalar signatures, all at once, in C (csrc/entry.c).
        ns["_centry"], ns["_FALL"], ns["_DEOPT"] = entry, FALL, DEOPT
        lines.append(f"    _cb_r = _centry({', '.join(params)})")
        lines.append("    if _cb_r is not _FALL:")
        lines.append("        if _cb_r is _DEOPT:")
        lines.append("            _take()")
        lines.append(f"            return _deopt({args})")
        lines.append("        return _cb_r")
    for s, (argtypes, native) in enumerate(direct):
        lines.extend(_direct_call(s, params, argtypes, native, ns, args))
    lines.append(f"    return _generic({args}, {{}})")
    return "\n".join(lines) + "\n"


def direct_supported(argtypes: tuple[Type, ...], calls_python: bool) -> bool:
    """Signatures whose calls the fast path makes through the cffi entry point itself:
    writeable unit-stride arrays (a C-contiguous array's buffer is its data pointer)
    with int, float and bool scalars, and no calls to Python functions (whose depth
    budget only the generic path computes)."""
    arrays = [t for t in argtypes if isinstance(t, ArrayType)]
    return (
        bool(arrays)
        and not calls_python
        and all(t.unit_stride and not t.readonly for t in arrays)
        and all(t in _PYTYPE or isinstance(t, ArrayType) for t in argtypes)
    )


def _direct_call(s: int, params: list[str], argtypes: tuple[Type, ...], native: Any, ns: dict[str, Any], args: str) -> list[str]:
    """The fast path of one array signature: the same steps as `Dispatcher._call_generic`
    with the key computed from what the call needs anyway. ``ffi.from_buffer`` (with
    `require_writable` true) succeeds only for a writeable C-contiguous array, whose last
    stride is then its itemsize unless it has no elements: that is tested too."""
    import numpy

    # (positional arguments: the keyword form of from_buffer costs ~230 ns more)
    ns["_nd"], ns["_fb"], ns["_chars"] = numpy.ndarray, native.ffi.from_buffer, native.ffi.typeof("char[]")
    ns[f"_c{s}"], ns[f"_l{s}"], ns[f"_b{s}"] = native.cfunc, native.local, native.box
    checks, flat, unit = [], [], []
    for i, (p, t) in enumerate(zip(params, argtypes)):
        if isinstance(t, ArrayType):
            ns[f"_d{s}_{i}"] = numpy.dtype(t.dtype)
            checks.append(f"type({p}) is _nd and {p}.dtype is _d{s}_{i}")
            shape = [f"_n{i}_{k}" for k in range(t.ndim)]
            strides = [f"_s{i}_{k}" for k in range(t.ndim)]
            flat += [f"_fb(_chars, {p}, True)"] + shape + strides  # True: require writable
            unit.append(f"({strides[-1]} == {ns[f'_d{s}_{i}'].itemsize} or {shape[-1]} <= 1)")
        else:
            ns[f"_t{s}_{i}"] = _PYTYPE[t]
            checks.append(f"type({p}) is _t{s}_{i}")
            flat.append(p)
    unpack = []
    for i, (p, t) in enumerate(zip(params, argtypes)):
        if isinstance(t, ArrayType):
            unpack.append(f"{''.join(f'_n{i}_{k}, ' for k in range(t.ndim))}= {p}.shape")
            unpack.append(f"{''.join(f'_s{i}_{k}, ' for k in range(t.ndim))}= {p}.strides")
    lines = [f"    if {' and '.join(checks)}:"]
    lines.append("        try:")
    lines += [f"            {u}" for u in unpack]  # a wrong number of dimensions raises
    lines.append(f"            _o = _l{s}.buf")
    lines.append("        except (AttributeError, ValueError):")
    lines.append(f"            return _generic({args}, {{}})")
    lines.append(f"        if {' and '.join(unit)}:")
    lines.append("            try:")
    lines.append(f"                _st = _c{s}(0, {', '.join(flat)}, _o)")
    lines.append("            except (BufferError, OverflowError, TypeError, ValueError):")
    lines.append(f"                return _generic({args}, {{}})  # not C-contiguous, read-only, an int beyond int64")
    lines.append("            if _st:")
    lines.append("                _take()")
    lines.append(f"                return _deopt({args})")
    lines.append("            _counts['native_calls'] += 1")
    lines.append(f"            return _b{s}(_o, {args})")
    return lines


def _given(names: tuple[str, ...], values: tuple[Any, ...], more: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments actually passed, as (positional, keyword): values up to the first
    missing one count as positional, any after a gap were passed by keyword."""
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    gap = False
    for name, value in zip(names, values):
        if value is MISSING:
            gap = True
        elif gap:
            keywords[name] = value
        else:
            positional.append(value)
    return tuple(positional) + tuple(more), keywords
