"""What an artifact says about the objects its code was compiled against, and how those
descriptions are checked in another process.

Compiled code depends on objects of the process that compiled it: the guards
(`guards.Guard`: ``namespace[name] is expected``) say which, and a resume point
may rebuild a constant. A guard cannot be stored as it is (its namespace and value are
live objects), so an artifact stores, for each:

* where its namespace is (`_where`), relative to the function whose code the guard
  belongs to (the compiled function or a native callee, found from an earlier
  guard's value): that function, its globals, its builtins, a module by name, or an
  earlier guard's value (or the function compiled for it);
* a description of its value (`value`): exact for plain values (an int and a float, or
  two NaNs with different bits, differ), by name for modules, classes and C functions
  (the name must lead back to the very object), and by a digest of their code for
  Python functions.

Loading, each namespace is found again and its current value described the same way:
the artifact is used only if every description is equal (as encoded bytes) and the
values that were one object are one object again (and no others), and the guards are
then made afresh with the current objects. Anything that cannot be
described (an instance of a user class, a lambda held in a global) is `Undescribable`:
that code is not stored.
"""

from __future__ import annotations

import hashlib
import sys
import types as pytypes

from ..decode.counting import without_counters
from ..guards import MISSING, Guard, builtins_dict, compiled_as
from .encoding import encode

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable

    Original = Callable[[object], object]


class Undescribable(Exception):
    """An object that an artifact cannot say how to find again."""


class Mismatch(Exception):
    """This process's objects are not the ones the artifact was compiled against."""


def code_digest(code: pytypes.CodeType) -> str:
    """A digest of what the compiler reads of `code`: its bytecode, constants, names,
    flags, positions and exception table, and those of the code nested in it, with the
    import hook's counters removed (the hook's copy of a function and the function
    imported without the hook have the same digest, although the hook's line table
    is encoded differently). Written in `encoding`'s format, which has no interning
    marks or hash order: equal code gives equal bytes in every process."""
    try:
        return hashlib.sha256(encode(_plain_code(code))).hexdigest()
    except (TypeError, ValueError):  # a constant of another kind (a counter left in)
        raise Undescribable(f"the code of {getattr(code, 'co_qualname', code.co_name)}") from None


def _plain_code(code: pytypes.CodeType) -> tuple[Any, ...]:
    code = without_counters(code)
    return ("code", code.co_code, tuple(_plain_constant(c) for c in code.co_consts), code.co_names, code.co_varnames,
            code.co_freevars, code.co_cellvars, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_flags, code.co_stacksize, code.co_filename, code.co_name, getattr(code, "co_qualname", code.co_name),
            code.co_firstlineno, tuple(code.co_positions()), code.co_exceptiontable)


def _plain_constant(value: object) -> object:
    t = type(value)
    if t is pytypes.CodeType:
        return _plain_code(value)  # type: ignore[arg-type]
    if t is tuple:
        return ("tuple", tuple(_plain_constant(v) for v in value))  # type: ignore[attr-defined]
    if t is frozenset:
        return ("frozenset", tuple(sorted((_plain_constant(v) for v in value), key=encode)))  # type: ignore[attr-defined]
    if t is complex:
        return ("complex", value.real, value.imag)  # type: ignore[attr-defined]
    if value is Ellipsis:
        return ("...",)
    return ("=", value)  # (None, bools, ints, floats, strs, bytes; anything else: TypeError)


# -- values ----------------------------------------------------------------------------


_PLAIN = (type(None), bool, int, float, str, bytes)
_LARGE = 256  # bytes: a longer str or bytes (an int of more bits) is described by a digest


def value(v: object, original: Original) -> tuple[Any, ...]:
    """The description of a guard's value or a resume constant."""
    t = type(v)
    if v is MISSING:
        return ("missing",)
    if t in _PLAIN:
        if t in (str, bytes) and len(v) > _LARGE or t is int and v.bit_length() > 8 * _LARGE:  # type: ignore[arg-type, attr-defined]
            # (compared, never rebuilt: a large value is not copied into the file)
            return ("digest", t.__name__, hashlib.sha256(repr(v).encode("utf-8", "surrogatepass")).hexdigest())
        return ("=", v)
    if t is complex:
        return ("complex", v.real, v.imag)  # type: ignore[attr-defined]
    if t is tuple:
        return ("tuple", tuple(value(item, original) for item in v))  # type: ignore[attr-defined]
    if t is pytypes.ModuleType:
        name = v.__name__  # type: ignore[attr-defined]
        if sys.modules.get(name) is not v:
            raise Undescribable(f"module {name}, which is not sys.modules[{name!r}]")
        return ("module", name)
    if t is pytypes.FunctionType:
        target = compiled_as(v, original)
        if not isinstance(target, pytypes.FunctionType):
            raise Undescribable(f"{v!r}")
        return ("function", target.__module__ or "", target.__qualname__, code_digest(target.__code__))
    if t is pytypes.CodeType:
        return ("code", code_digest(v))  # type: ignore[arg-type]
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(v, numpy.generic) and t.__module__ == "numpy" and numpy.dtype(t).isbuiltin:
        return ("numpy", t.__name__, v.tobytes())
    if numpy is not None and isinstance(v, numpy.dtype) and v.isbuiltin == 1:
        return ("dtype", v.str)
    return ("named", *_name(v))


def _name(v: object) -> tuple[str, str]:
    """Where `v` is found: a module and a dotted path in it that lead to `v` itself."""
    module = getattr(v, "__module__", None)
    path = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
    if type(module) is not str or type(path) is not str or "<" in path:
        raise Undescribable(f"{type(v).__name__} {v!r}")
    try:
        found = _lookup(module, path)
    except Mismatch:
        found = None
    if found is not v:
        raise Undescribable(f"{v!r}, which is not {module}.{path}")
    return module, path


def _lookup(module: str, path: str) -> object:
    found: object = sys.modules.get(module)
    if found is None:
        raise Mismatch(f"module {module} is not imported")
    for part in path.split("."):
        found = getattr(found, part, MISSING)
        if found is MISSING:
            raise Mismatch(f"{module}.{path} does not exist")
    return found


def rebuild(d: tuple[Any, ...], original: Original) -> object:
    """The object that description `d` (a resume constant's) stands for in this
    process; `Mismatch` if there is none (or it differs)."""
    kind = d[0]
    if kind == "=":
        return d[1]
    if kind == "complex":
        return complex(d[1], d[2])
    if kind == "tuple":
        return tuple(rebuild(item, original) for item in d[1])
    if kind == "module":
        found = sys.modules.get(d[1])
        if found is None:
            raise Mismatch(f"module {d[1]} is not imported")
        return found
    if kind == "numpy":
        import numpy

        kind_type = getattr(numpy, d[1], None)
        if not (isinstance(kind_type, type) and issubclass(kind_type, numpy.generic)):
            raise Mismatch(f"numpy has no scalar type {d[1]}")
        return numpy.frombuffer(d[2], dtype=kind_type)[0]
    if kind == "dtype":
        import numpy

        return numpy.dtype(d[1])
    if kind in ("function", "named"):
        found = _lookup(d[1], d[2])
        if encode(value(found, original)) != encode(d):
            raise Mismatch(f"{d[1]}.{d[2]} is not what the code was compiled against")
        return found
    raise Mismatch(f"a constant described as {kind}")


# -- guards ----------------------------------------------------------------------------


def guards(spec: Any, original: Original) -> tuple[Any, ...]:
    """The descriptions of the guards of `spec` (a compiled `Specialization`) and its
    native callees: ``(owners, entries, identities)``.

    Each specialisation's guards are described relative to its own function (its
    *owner*: the specialisation itself, or a callee found as an earlier guard's value or
    the function compiled for it). An entry is ``(owner, where, name, is_attr,
    description)``. `identities` says, for the function and each guard's value, which
    earlier one was the very same object (-1: none): compiled code may rely on two
    globals being one object (``a is b``, or the defaults checked on the one function
    that two names held), so a process where they are not, or where two are one that
    were not, does not use it. The function's own guards (its code and defaults) are
    left out: the key covers its code and the dispatcher binds its defaults."""
    owners: list[tuple[Any, ...]] = []
    entries: list[tuple[Any, ...]] = []
    flat: list[Guard] = []
    for s in spec.all_specializations():
        owners.append(("self",) if s is spec else _found(s.pyfunc, flat, original))
        for g in s.guards:
            if s is spec and g.namespace is spec.pyfunc:
                continue
            where = _where(g.namespace, s.pyfunc, flat, original)
            entries.append((len(owners) - 1, where, g.name, g.is_attr, _guarded(g.namespace, g.name, g.is_attr, g.expected, original)))
            flat.append(g)
    return tuple(owners), tuple(entries), _identities([spec.pyfunc, *(g.expected for g in flat)])


def _guarded(namespace: object, name: str, is_attr: bool, expected: object, original: Original) -> tuple[Any, ...]:
    if is_attr and isinstance(namespace, pytypes.FunctionType) and name in _FUNCTION_PARTS:
        # A callee's code and defaults, as the compiler read them: the code of the
        # function compiled for it (the import hook swaps a native function's code for
        # a trampoline; the function it compiles keeps the code as written).
        target = compiled_as(namespace, original)
        return ("part", value(getattr(target, name), original))
    return value(expected, original)


_FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def _found(fn: object, before: list[Guard], original: Original) -> tuple[Any, ...]:
    """How to find `fn` from the guards before: as one's value, or as the function
    compiled for one's value."""
    for k, g in enumerate(before):
        if fn is g.expected:
            return ("value", k)
        if fn is compiled_as(g.expected, original):
            return ("compiled", k)
    raise Undescribable(f"a callee ({fn!r}) that no guard leads to")


def _where(namespace: object, owner: pytypes.FunctionType, before: list[Guard], original: Original) -> tuple[Any, ...]:
    """Where a guard's namespace is, relative to its owner's function."""
    if namespace is owner:
        return ("fn",)
    if namespace is owner.__globals__:
        return ("globals",)
    if namespace is builtins_dict(owner):
        return ("builtins",)
    if type(namespace) is pytypes.ModuleType and sys.modules.get(namespace.__name__) is namespace:
        return ("module", namespace.__name__)
    return _found(namespace, before, original)


def _identities(objects: list[object]) -> tuple[int, ...]:
    first: dict[int, int] = {}
    out = []
    for k, o in enumerate(objects):
        seen = first.get(id(o))
        out.append(-1 if seen is None else seen)
        if seen is None:
            first[id(o)] = k
    return tuple(out)


def live_guards(stored: tuple[Any, ...], pyfunc: pytypes.FunctionType, original: Original) -> list[Guard]:
    """Guards over this process's objects for `stored` descriptions (as `guards`
    made them); `Mismatch` if any object differs from its description, or if objects
    that were one are not (or the reverse)."""
    owner_paths, entries, identities = stored
    owners: list[pytypes.FunctionType] = []
    made: list[Guard] = []
    for owner, where, name, is_attr, described in entries:
        while len(owners) <= owner:
            path = owner_paths[len(owners)]
            fn = pyfunc if path == ("self",) else _follow(path, made, original)
            if not isinstance(fn, pytypes.FunctionType):
                raise Mismatch(f"a callee is now {type(fn).__name__}")
            owners.append(fn)
        namespace = _namespace(where, owners[owner], made, original)
        if is_attr:
            current = getattr(namespace, name, MISSING)
        elif isinstance(namespace, dict):
            current = namespace.get(name, MISSING)
        else:
            raise Mismatch(f"the namespace of {name} is not a dict")
        try:
            now = _guarded(namespace, name, is_attr, current, original)
        except Undescribable as e:
            raise Mismatch(str(e)) from None
        if encode(now) != encode(described):
            raise Mismatch(f"{name} is not what the code was compiled against")
        made.append(Guard(namespace, name, current, is_attr))
    if _identities([pyfunc, *(g.expected for g in made)]) != identities:
        raise Mismatch("objects that were one object are not (or the reverse)")
    return made


def _follow(path: tuple[Any, ...], made: list[Guard], original: Original) -> object:
    kind, k = path
    if type(k) is not int or not 0 <= k < len(made):
        raise ValueError(f"a path to guard {k!r}")
    if kind == "value":
        return made[k].expected
    if kind == "compiled":
        return compiled_as(made[k].expected, original)
    raise ValueError(f"a path of kind {kind!r}")


def _namespace(where: tuple[Any, ...], owner: pytypes.FunctionType, made: list[Guard], original: Original) -> object:
    kind = where[0]
    if kind == "fn":
        return owner
    if kind == "globals":
        return owner.__globals__
    if kind == "builtins":
        return builtins_dict(owner)
    if kind == "module":
        found = sys.modules.get(where[1])
        if found is None:
            raise Mismatch(f"module {where[1]} is not imported")
        return found
    return _follow(where, made, original)
