"""What typing tells the clean-up passes (`ir/facts.py`): which callables are pure
(the primitives' table), and, once the IR is typed, what the types say."""

from __future__ import annotations

from ..ir import ops as O
from ..ir.facts import Facts
from .effects import may_raise
from .primitives import is_pure_callable
from ..errors import Unsupported
from .types import NONE, UNDEF, ObjType, constant_typeof, options


class KnownFacts(Facts):
    """Before typing: the IR's structure, and the primitives."""

    def pure_callable(self, obj: object) -> bool:
        return is_pure_callable(obj)


class TypedFacts(KnownFacts):
    typed = True

    def may_raise(self, op: O.Op) -> bool:
        return may_raise(op)

    def may_be_unbound(self, value: O.Value) -> bool | None:
        return None if value.type is None else UNDEF in options(value.type)

    def fits(self, value: object, op: O.Op) -> bool:
        if op.type is None:
            return True
        try:
            return constant_typeof(value) in options(op.type)
        except Unsupported:  # (an int beyond int64, an object)
            return False

    def is_none(self, value: O.Value) -> bool | None:
        if isinstance(value, O.Const) or value.type is None:
            return None
        kinds = {t == NONE for t in options(value.type)}
        return kinds.pop() if len(kinds) == 1 else None

    def known_object(self, value: O.Value) -> tuple[object, ...]:
        if isinstance(value, O.Const) or not isinstance(value.type, ObjType):
            return ()
        return (value.type.obj,)


KNOWN = KnownFacts()
TYPED = TypedFacts()
