"""Record classes: `record`, the compiler's stand-in for `dataclasses.dataclass`.

It makes the same methods for the options the compiler uses: ``frozen`` and ``eq``;
fields with a default, a `field` factory, ``compare=False`` or ``init=False``;
``__post_init__``; the
fields of record bases first, a redefined one in its first place. A method the class
body defines itself is kept, and the hash follows dataclasses' rules: generated for a
frozen record with ``eq``, None for a mutable one with ``eq``, inherited otherwise.

Why not dataclasses: on 3.11 and 3.12 it compiles each method of each class on its
own, ~0.6 ms a class, and the compiler has over thirty: ~20 ms of every run that
compiles (cold runs of hooked programs wait for it), plus ~7 ms for importing
dataclasses and inspect in runs that only load native code. `record` compiles a
class's ``__init__`` alone and makes the others as closures (~0.1 ms a class). (The fuzzers, never loaded
by a program, keep dataclasses.)
"""

from __future__ import annotations

import _thread
from operator import attrgetter

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable, dataclass_transform
else:

    def dataclass_transform(**kwargs: object) -> object:
        return lambda decorator: decorator


_MISSING = object()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    """A field's settings (`field`): its default or factory, whether it counts in
    equality and hashing, and whether ``__init__`` takes it."""

    __slots__ = ("name", "default", "default_factory", "compare", "init")

    def __init__(self, default: object = _MISSING, default_factory: object = _MISSING, compare: bool = True, init: bool = True) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.init = init


def field(*, default: object = _MISSING, default_factory: object = _MISSING, compare: bool = True, init: bool = True) -> Any:
    """A field with a factory for its default (called for each instance), one left out
    of equality and hashing, or one that ``__init__`` does not take (it sets it from
    its factory, if any); as `dataclasses.field`."""
    return Field(default, default_factory, compare, init)


@dataclass_transform(field_specifiers=(field,))
def record(cls: type | None = None, /, *, frozen: bool = False, eq: bool = True) -> Any:
    """``@record``, ``@record(frozen=True)``, ``@record(eq=False)``: see the module docstring."""

    def make(cls: type) -> type:
        _make(cls, frozen, eq)
        return cls

    return make if cls is None else make(cls)


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _make(cls: type, frozen: bool, eq: bool) -> None:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            fields[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        fields[name] = f
        if isinstance(value, Field):  # (the class keeps a plain default, as dataclasses does)
            if value.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
    own = cls.__dict__
    names = tuple(fields)
    methods: dict[str, object] = {"__init__": _init(cls, fields, frozen)}
    methods["__repr__"] = _repr(cls, names)
    key = _key(tuple(f.name for f in fields.values() if f.compare))
    if eq:

        def __eq__(self: object, other: object) -> Any:
            if other.__class__ is self.__class__:
                return key(self) == key(other)
            return NotImplemented

        methods["__eq__"] = __eq__
    if frozen:
        field_names = frozenset(names)

        def __setattr__(self: object, name: str, value: object) -> None:
            if type(self) is cls or name in field_names:
                raise FrozenInstanceError(f"cannot assign to field {name!r}")
            super(cls, self).__setattr__(name, value)  # type: ignore[misc]

        def __delattr__(self: object, name: str) -> None:
            if type(self) is cls or name in field_names:
                raise FrozenInstanceError(f"cannot delete field {name!r}")
            super(cls, self).__delattr__(name)  # type: ignore[misc]

        methods["__setattr__"], methods["__delattr__"] = __setattr__, __delattr__
    for name, method in methods.items():
        if name not in own:
            method.__qualname__ = f"{cls.__qualname__}.{name}"  # type: ignore[attr-defined]
            setattr(cls, name, method)
    own_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (own_hash is _MISSING or (own_hash is None and "__eq__" in own))
    if eq and frozen and not explicit_hash:

        def __hash__(self: object) -> int:
            return hash(key(self))

        __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
        cls.__hash__ = __hash__  # type: ignore[assignment, method-assign]
    elif eq and not explicit_hash:
        cls.__hash__ = None  # type: ignore[assignment]
    if "__match_args__" not in own:
        cls.__match_args__ = tuple(f.name for f in fields.values() if f.init)  # type: ignore[attr-defined]
    cls.__record_fields__ = tuple(fields.values())  # type: ignore[attr-defined]


def _init(cls: type, fields: dict[str, Field], frozen: bool) -> object:
    """The ``__init__`` of `fields`, compiled (objects such as IR instructions and
    types are made by the thousand: a generic one would be slower)."""
    namespace: dict[str, object] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    params, body = [], []
    for f in fields.values():
        value = f.name
        if not f.init:
            if f.default_factory is not _MISSING:
                namespace[f"_factory_{f.name}"] = f.default_factory
                body.append(f"    _set(self, {f.name!r}, _factory_{f.name}())" if frozen else f"    self.{f.name} = _factory_{f.name}()")
            continue
        if f.default_factory is not _MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            value = f"_factory_{f.name}() if {f.name} is _MISSING else {f.name}"
        elif f.default is not _MISSING:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        else:
            params.append(f.name)
        body.append(f"    _set(self, {f.name!r}, {value})" if frozen else f"    self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = "\n".join([f"def __init__(self, {', '.join(params)}):", *(body or ["    pass"])])
    # (a code object, not source: CPython's exec of a string forgets that a Ctrl-C ended
    # the program, and the exit status becomes 1 instead of -SIGINT when the hook's
    # worker makes a record class during the exit, see boxing.make_flattener)
    exec(compile(source, f"<record {cls.__qualname__}>", "exec"), namespace)  # noqa: S102 (from field names)
    return namespace["__init__"]


def _key(names: tuple[str, ...]) -> Callable[[object], tuple[object, ...]]:
    """The tuple of the fields `names` of an instance, which equality and the hash compare."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


_in_repr: set[tuple[int, int]] = set()


def _repr(cls: type, names: tuple[str, ...]) -> Callable[[object], str]:
    """A repr that shows ``...`` for a record within itself (a block among its
    successors' predecessors), as dataclasses' does."""

    def __repr__(self: object) -> str:
        key = (id(self), _thread.get_ident())
        if key in _in_repr:
            return "..."
        _in_repr.add(key)
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
            return f"{self.__class__.__qualname__}({shown})"
        finally:
            _in_repr.discard(key)

    return __repr__
