"""cuvil_bc/records.py's `record` against `dataclasses.dataclass`: the same classes
made both ways must construct, compare, hash, show and refuse assignment alike."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any, Callable, ClassVar

import pytest

from cuvil_bc import records


def _make(decorate: Callable[..., Any], field: Callable[..., Any], **options: bool) -> dict[str, type]:
    """The same class definitions, made by `decorate` with `options`."""

    @decorate(**options)
    class Point:
        x: int
        y: int = 0
        tags: list[int] = field(default_factory=list)
        note: str = field(default="", compare=False)
        kind: ClassVar[str] = "point"

    @decorate(**options)
    class Point3(Point):
        z: float = 1.5
        y: int = 7  # (redefined: keeps its place, takes the new default)

    @decorate(**options)
    class Empty:
        pass

    @decorate(**options)
    class Counted:
        n: int
        seen: list[int] = field(default_factory=list, init=False)

        def __post_init__(self) -> None:
            self.seen.append(self.n) if not options.get("frozen") else object.__setattr__(self, "seen", [self.n])

    @decorate(**options)
    class Shown:
        v: int

        def __repr__(self) -> str:
            return f"<{self.v}>"

    @decorate(**options)
    class Linked:
        name: str
        next: Any = None

    class Plain(Point):  # (not decorated: inherits everything)
        pass

    return {c.__name__: c for c in (Point, Point3, Empty, Counted, Shown, Linked, Plain)}


OPTIONS = [{}, {"frozen": True}, {"eq": False}, {"frozen": True, "eq": False}]


def _outcome(f: Callable[[], object]) -> object:
    try:
        return ("value", f())
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__ if not isinstance(e, (dataclasses.FrozenInstanceError, records.FrozenInstanceError)) else "frozen", str(e))


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_a_record_behaves_as_the_dataclass(options: dict[str, bool]) -> None:
    ours = _make(records.record, records.field, **options)
    theirs = _make(dataclasses.dataclass, dataclasses.field, **options)
    for name in ours:
        a, b = ours[name], theirs[name]
        assert (a.__hash__ is None) == (b.__hash__ is None), name
        assert a.__match_args__ == b.__match_args__, name
        assert sorted(k for k in vars(a) if k in ("tags", "note", "y", "z", "kind", "seen")) == sorted(
            k for k in vars(b) if k in ("tags", "note", "y", "z", "kind", "seen")
        ), name
    cases: list[tuple[str, tuple[object, ...], dict[str, object]]] = [
        ("Point", (1,), {}), ("Point", (1, 2, [3], "n"), {}), ("Point", (), {"x": 4, "note": "k"}), ("Point", (), {}),
        ("Point3", (1,), {}), ("Point3", (1, 2, [], "", 3.0), {}), ("Empty", (), {}), ("Counted", (5,), {}),
        ("Counted", (5,), {"seen": [1]}), ("Shown", (3,), {}), ("Plain", (2, 3), {}), ("Linked", ("a",), {}),
    ]
    for name, args, kwargs in cases:
        made_a, made_b = _outcome(lambda: ours[name](*args, **kwargs)), _outcome(lambda: theirs[name](*args, **kwargs))
        assert made_a[0] == made_b[0], (name, made_a, made_b)
        if made_a[0] == "raised":
            assert made_a[1] == made_b[1], (name, made_a, made_b)
            continue
        x, y = made_a[1], made_b[1]
        assert repr(x).replace("records", "") == repr(y).replace("records", ""), name
        assert vars(x) == vars(y), name
        twin_a, twin_b = ours[name](*args, **kwargs), theirs[name](*args, **kwargs)
        assert (x == twin_a) == (y == twin_b), name
        assert (x != twin_a) == (y != twin_b), name
        assert (x == object()) == (y == object()), name
        if name == "Point" and len(args) < 4:  # (a field left out of equality)
            other_a, other_b = ours[name](*args, **{**kwargs, "note": "other"}), theirs[name](*args, **{**kwargs, "note": "other"})
            assert (x == other_a) == (y == other_b)
        assert _outcome(lambda: hash(x) == hash(twin_a))[0] == _outcome(lambda: hash(y) == hash(twin_b))[0], name
        if _outcome(lambda: hash(y))[0] == "value" and options.get("eq", True):
            assert (hash(x) == hash(twin_a)) and (hash(y) == hash(twin_b)), name
        for field_name in ("x", "v", "name", "unknown"):
            assert _outcome(lambda: setattr(x, field_name, 9)) == _outcome(lambda: setattr(y, field_name, 9)), (name, field_name)
            assert _outcome(lambda: delattr(x, field_name)) == _outcome(lambda: delattr(y, field_name)), (name, field_name)


def test_a_record_within_itself_shows_as_dots() -> None:
    ours, theirs = _make(records.record, records.field)["Linked"], _make(dataclasses.dataclass, dataclasses.field)["Linked"]
    a, b = ours("a"), theirs("a")
    a.next, b.next = a, b
    assert repr(a) == repr(b) == "_make.<locals>.Linked(name='a', next=...)"


def test_a_frozen_record_pickles_and_hashes_by_its_fields() -> None:
    point = records_point(1, 2)
    again = pickle.loads(pickle.dumps(point))
    assert again == point and hash(again) == hash(point) and again is not point
    assert {point: 1}[records_point(1, 2)] == 1


@records.record(frozen=True)
class records_point:  # noqa: N801 (module level: pickle finds it)
    x: int
    y: int


def test_the_compilers_records_are_records_and_not_dataclasses() -> None:
    # (the point of records.py: the compiler's import makes no dataclass)
    from cuvil_bc.compiler import Specialization
    from cuvil_bc.typing.types import Scalar

    for cls in (Specialization, Scalar):
        assert hasattr(cls, "__record_fields__") and not dataclasses.is_dataclass(cls)


def test_a_records_init_is_executed_as_a_code_object(monkeypatch: pytest.MonkeyPatch) -> None:
    # CPython's exec of a *string* forgets that a KeyboardInterrupt is ending the
    # program: the hook's worker, making a record class (a lazy import of the
    # compiler's) while a Ctrl-C'd program exited, turned its exit status from -SIGINT
    # into 1 (found by a helper; boxing.py had the same trap).
    import builtins
    import types

    given: list[type] = []

    def spy(source, *rest):  # type: ignore[no-untyped-def]
        given.append(type(source))
        return builtins.exec(source, *rest)

    monkeypatch.setattr(records, "exec", spy, raising=False)

    @records.record(frozen=True)
    class Pair:
        a: int
        b: list[int] = records.field(default_factory=list)

    assert Pair(1) == Pair(1, []) and given and all(k is types.CodeType for k in given), given
