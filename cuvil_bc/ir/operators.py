"""The one table of operators: each `Operator` row is one of the symbols that `BinOp`,
`UnaryOp` and `Compare` carry (``op.op``), with what it computes on Python values
(constant folding calls that), when CPython can make it raise on numbers, and whether
speculation may hoist it.

Their result types are typing's (typing/rules.py) and their code lowering's
(lower/numeric.py), per operand type; decode/versions.py names the bytecode's
operators with these symbols (tests/test_primitives.py checks that each has a row).
"""

from __future__ import annotations

import operator
from typing import Callable

from ..records import record

BINARY, UNARY, COMPARE = "binary", "unary", "compare"
#: When an operator raises on ints, floats and bools in CPython (`Operator.raises`).
NEVER, ZERO_DIVISOR, NEGATIVE_SHIFT, MAY = "never", "zero divisor", "negative shift", "may"


@record(frozen=True)
class Operator:
    symbol: str
    kind: str  # BINARY, UNARY or COMPARE
    apply: Callable[..., object]  # on Python values: what CPython computes
    #: On ints, floats and bools: NEVER; ZERO_DIVISOR (a zero right operand:
    #: ZeroDivisionError); NEGATIVE_SHIFT (a negative count: ValueError); MAY (``**``:
    #: ``0 ** -1``, a float overflow). (Converting an int beyond a float's range
    #: raises too: typing/effects.py.)
    raises: str = NEVER
    #: Speculation may hoist it above its branch (opt/speculate.py): a few cycles on
    #: scalars, no division and no guard but int overflow.
    cheap: bool = False


OPERATORS: dict[tuple[str, str], Operator] = {
    (row.kind, row.symbol): row
    for row in (
        Operator("+", BINARY, operator.add, cheap=True),
        Operator("-", BINARY, operator.sub, cheap=True),
        Operator("*", BINARY, operator.mul, cheap=True),
        Operator("/", BINARY, operator.truediv, ZERO_DIVISOR),
        Operator("//", BINARY, operator.floordiv, ZERO_DIVISOR),
        Operator("%", BINARY, operator.mod, ZERO_DIVISOR),
        Operator("**", BINARY, operator.pow, MAY),
        Operator("<<", BINARY, operator.lshift, NEGATIVE_SHIFT),
        Operator(">>", BINARY, operator.rshift, NEGATIVE_SHIFT),  # (cheap by a constant count: speculate.py)
        Operator("&", BINARY, operator.and_, cheap=True),
        Operator("|", BINARY, operator.or_, cheap=True),
        Operator("^", BINARY, operator.xor, cheap=True),
        Operator("@", BINARY, operator.matmul, MAY),
        Operator("-", UNARY, operator.neg, cheap=True),
        Operator("+", UNARY, operator.pos, cheap=True),
        Operator("~", UNARY, operator.invert, cheap=True),
        Operator("not", UNARY, operator.not_, cheap=True),
        Operator("<", COMPARE, operator.lt, cheap=True),
        Operator("<=", COMPARE, operator.le, cheap=True),
        Operator("==", COMPARE, operator.eq, cheap=True),
        Operator("!=", COMPARE, operator.ne, cheap=True),
        Operator(">", COMPARE, operator.gt, cheap=True),
        Operator(">=", COMPARE, operator.ge, cheap=True),
        Operator("is", COMPARE, operator.is_),
        Operator("is not", COMPARE, operator.is_not),
        Operator("in", COMPARE, lambda a, b: operator.contains(b, a), MAY),
        Operator("not in", COMPARE, lambda a, b: not operator.contains(b, a), MAY),
    )
}


def binary(symbol: str) -> Operator:
    return OPERATORS[(BINARY, symbol)]


def unary(symbol: str) -> Operator:
    return OPERATORS[(UNARY, symbol)]


def compare(symbol: str) -> Operator:
    return OPERATORS[(COMPARE, symbol)]
