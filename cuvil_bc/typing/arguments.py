"""What a call's argument values alone tell about compiling, shared by the dispatcher
and the import hook. Kept free of the compiler's imports: the hook asks before it has
loaded anything (hook/hot.py), so that a function whose arguments cannot compile is
given up without loading the compiler."""

from __future__ import annotations

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any, Iterable

#: Python types whose values may compile (the dispatcher decides, from their types);
#: besides these, NumPy's arrays and scalars.
MAY_COMPILE = frozenset({int, float, bool, type(None), tuple})


def may_compile(value: Any) -> bool:
    t = type(value)
    return t in MAY_COMPILE or t.__module__ == "numpy"


def refusal(names: Iterable[str]) -> str:
    """Why a call with arguments of these (type) names does not compile."""
    return "argument of type " + ", ".join(names)


def refused(args: tuple[Any, ...]) -> str:
    """`refusal` when the argument values' types alone tell, else ""."""
    bad = [type(a).__name__ for a in args if not may_compile(a)]
    return refusal(bad) if bad else ""
