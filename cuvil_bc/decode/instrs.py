"""The version-neutral instruction set that `decode()` produces.

It is a stack machine like CPython's, but with one spelling per operation on every
supported Python version: no NULL pushes, no caches, no fused super-instructions, and
jump targets given as indices into the instruction list.

Operand stack effects (``before -> after``):

======================  ============================================  ==========================
op                      arg                                           stack
======================  ============================================  ==========================
LOAD_CONST              the constant                                  -> value
LOAD_FAST               local name                                    -> value
STORE_FAST              local name                                    value ->
DELETE_FAST             local name                                    ->
LOAD_GLOBAL             global name                                   -> value
LOAD_ATTR               attribute name                                obj -> value
LOAD_ASSERTION_ERROR    None                                          -> AssertionError
BINARY_OP               operator text ("+", "//", "<<", ...)          lhs rhs -> value
UNARY_OP                "-", "+", "~" or "not"                        value -> value
TO_BOOL                 None                                          value -> bool(value)
COMPARE_OP              "<", "<=", "==", "!=", ">", ">="              lhs rhs -> value
IS_OP                   True for ``is not``                           lhs rhs -> bool
CONTAINS_OP             True for ``not in``                           item container -> bool
BINARY_SUBSCR           None                                          obj index -> value
STORE_SUBSCR            None                                          value obj index ->
CALL                    `CallArgs` (positional count, keyword names)  func args... -> value
BUILD_TUPLE             item count                                    items... -> tuple
UNPACK_SEQUENCE         item count                                    seq -> item_n ... item_1
COPY                    n (1 = top)                                   ... v -> ... v v
SWAP                    n (2 = swap top two)                          permutes
POP_TOP                 None                                          value ->
GET_ITER                None                                          iterable -> iterator
FOR_ITER                None; `target` is the loop exit               iter -> iter item, or
                                                                      (exhausted) iter -> and jump
JUMP                    None; `target`                                ->
POP_JUMP_IF_FALSE       None; `target`                                value ->
POP_JUMP_IF_TRUE        None; `target`                                value ->
POP_JUMP_IF_NONE        None; `target`                                value ->
POP_JUMP_IF_NOT_NONE    None; `target`                                value ->
RETURN_VALUE            None                                          value ->
RAISE_VARARGS           0, 1 or 2                                     exc [cause] ->
======================  ============================================  ==========================

Conditional jumps test truthiness, as ``if value:`` does.
"""

from __future__ import annotations

import enum

from ..records import record


class Op(enum.Enum):
    LOAD_CONST = "LOAD_CONST"
    LOAD_FAST = "LOAD_FAST"
    STORE_FAST = "STORE_FAST"
    DELETE_FAST = "DELETE_FAST"
    LOAD_GLOBAL = "LOAD_GLOBAL"
    LOAD_ATTR = "LOAD_ATTR"
    LOAD_ASSERTION_ERROR = "LOAD_ASSERTION_ERROR"
    BINARY_OP = "BINARY_OP"
    UNARY_OP = "UNARY_OP"
    TO_BOOL = "TO_BOOL"
    COMPARE_OP = "COMPARE_OP"
    IS_OP = "IS_OP"
    CONTAINS_OP = "CONTAINS_OP"
    BINARY_SUBSCR = "BINARY_SUBSCR"
    STORE_SUBSCR = "STORE_SUBSCR"
    CALL = "CALL"
    BUILD_TUPLE = "BUILD_TUPLE"
    UNPACK_SEQUENCE = "UNPACK_SEQUENCE"
    COPY = "COPY"
    SWAP = "SWAP"
    POP_TOP = "POP_TOP"
    GET_ITER = "GET_ITER"
    FOR_ITER = "FOR_ITER"
    JUMP = "JUMP"
    POP_JUMP_IF_FALSE = "POP_JUMP_IF_FALSE"
    POP_JUMP_IF_TRUE = "POP_JUMP_IF_TRUE"
    POP_JUMP_IF_NONE = "POP_JUMP_IF_NONE"
    POP_JUMP_IF_NOT_NONE = "POP_JUMP_IF_NOT_NONE"
    RETURN_VALUE = "RETURN_VALUE"
    RAISE_VARARGS = "RAISE_VARARGS"


#: Ops that end a basic block and never fall through.
UNCONDITIONAL = frozenset({Op.JUMP, Op.RETURN_VALUE, Op.RAISE_VARARGS})
#: Ops with a `target` that may also fall through.
CONDITIONAL = frozenset(
    {
        Op.FOR_ITER,
        Op.POP_JUMP_IF_FALSE,
        Op.POP_JUMP_IF_TRUE,
        Op.POP_JUMP_IF_NONE,
        Op.POP_JUMP_IF_NOT_NONE,
    }
)


@record(frozen=True)
class CallArgs:
    """The argument shape of a CALL: `argc` values on the stack, the last ones keyword."""

    argc: int
    kwnames: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.argc} kw={','.join(self.kwnames)}" if self.kwnames else str(self.argc)


@record(frozen=True)
class Instr:
    """One neutral instruction.

    `offset` is the byte offset of the CPython instruction it came from and `lineno` its
    source line; `target` is the index of the jump target in the decoded list.
    """

    op: Op
    arg: object = None
    offset: int = -1
    lineno: int | None = None
    target: int | None = None

    def __str__(self) -> str:
        text = self.op.value
        if self.arg is not None:
            text += f" {self.arg!r}" if not isinstance(self.arg, CallArgs) else f" {self.arg}"
        if self.target is not None:
            text += f" -> {self.target}"
        return text


@record(frozen=True)
class ExceptRegion:
    """Instructions `start` to `end` (indices, inclusive) are covered by handler `target`."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


@record(frozen=True)
class Decoded:
    """A decoded code object: its instructions plus what later layers need to know."""

    name: str
    qualname: str
    filename: str
    firstlineno: int
    argnames: tuple[str, ...]
    varnames: tuple[str, ...]
    instrs: tuple[Instr, ...]
    regions: tuple[ExceptRegion, ...]

    def location(self, index: int | None = None) -> str:
        """``file:line`` of instruction `index` (or of the ``def`` line)."""
        line = self.firstlineno
        if index is not None and self.instrs[index].lineno is not None:
            line = self.instrs[index].lineno  # type: ignore[assignment]
        return f"{self.filename}:{line}"

    def text(self) -> str:
        """A deterministic listing, one instruction per line, for golden tests."""
        lines = [f"{i:3d}  {instr}" for i, instr in enumerate(self.instrs)]
        lines += [f"region {r.start}..{r.end} -> {r.target} depth={r.depth}" for r in self.regions]
        return "\n".join(lines)
