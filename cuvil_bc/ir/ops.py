"""SSA IR values and ops.

Every op is a small class whose operands are `Value` references. Non-op values are
function arguments (`Arg`), constants (`Const`) and the marker for an unbound local
(`Undef`); they live outside blocks. Only the last op of a block is a `ControlOp`.

Each value gets a `type` once `cuvil_bc.typing` has run; before that it is None. (The
IR does not know what a type is: typing comes after it, and passes that need to know
more than the IR says are told by the pipeline, ir/facts.py.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .function import BasicBlock


class Value:
    """Anything an op can use as an operand."""

    type: Any = None  # a typing.types.Type, once typed


class Arg(Value):
    def __init__(self, index: int, name: str) -> None:
        self.index = index
        self.name = name


class Const(Value):
    """A compile-time constant: a Python scalar, a tuple of them, or a known object
    such as a module or a function that the specialiser resolved from a global."""

    def __init__(self, value: object) -> None:
        self.value = value


class Undef(Value):
    """The value of local `name` before it is assigned (reading it raises in CPython)."""

    def __init__(self, name: str) -> None:
        self.name = name


class Op(Value):
    """An instruction inside a block."""

    block: "BasicBlock | None" = None
    line: int | None = None
    #: Hoisted above the branch that guarded it (opt/speculate.py): its guards may
    #: fail where CPython would not have run it.
    speculative: bool = False
    #: Whether the op can be removed when unused and its operands cannot make it raise.
    pure: ClassVar[bool] = True

    def operands(self) -> list[Value]:
        raise NotImplementedError

    def replace_operand(self, old: Value, new: Value) -> None:
        raise NotImplementedError


class _Operands(Op):
    """Helper base: ops whose operands are the attributes named in `slots`."""

    slots: ClassVar[tuple[str, ...]] = ()

    def operands(self) -> list[Value]:
        out: list[Value] = []
        for name in self.slots:
            v = getattr(self, name)
            if isinstance(v, list):
                out.extend(v)
            else:
                out.append(v)
        return out

    def replace_operand(self, old: Value, new: Value) -> None:
        for name in self.slots:
            v = getattr(self, name)
            if isinstance(v, list):
                setattr(self, name, [new if x is old else x for x in v])
            elif v is old:
                setattr(self, name, new)


class Phi(Op):
    """Joins one value per predecessor block."""

    def __init__(self, incoming: list[tuple["BasicBlock", Value]] | None = None, var: str = "") -> None:
        self.incoming: list[tuple[BasicBlock, Value]] = incoming or []
        self.var = var  # the variable it merges, for readable text only

    def operands(self) -> list[Value]:
        return [v for _, v in self.incoming]

    def replace_operand(self, old: Value, new: Value) -> None:
        self.incoming = [(b, new if v is old else v) for b, v in self.incoming]

    def value_for(self, block: "BasicBlock") -> Value:
        for b, v in self.incoming:
            if b is block:
                return v
        raise KeyError(block)


class BinOp(_Operands):
    """``lhs <op> rhs`` for a Python binary operator ("+", "//", "**", "<<", ...)."""

    slots = ("lhs", "rhs")

    def __init__(self, op: str, lhs: Value, rhs: Value) -> None:
        self.op, self.lhs, self.rhs = op, lhs, rhs


class UnaryOp(_Operands):
    """``-x``, ``+x``, ``~x`` or ``not x``."""

    slots = ("operand",)

    def __init__(self, op: str, operand: Value) -> None:
        self.op, self.operand = op, operand


class Compare(_Operands):
    """A comparison: "<", "<=", "==", "!=", ">", ">=", "is", "is not", "in", "not in"."""

    slots = ("lhs", "rhs")

    def __init__(self, op: str, lhs: Value, rhs: Value) -> None:
        self.op, self.lhs, self.rhs = op, lhs, rhs


class Truth(_Operands):
    """``bool(value)``, as ``if value:`` tests it."""

    slots = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value


class Select(_Operands):
    """``if_true if cond else if_false`` without a branch: both values are already
    computed, `cond` is a bool (opt/ifconvert.py makes it from a phi whose arms held
    nothing that could not run on both paths)."""

    slots = ("cond", "if_true", "if_false")

    def __init__(self, cond: Value, if_true: Value, if_false: Value) -> None:
        self.cond, self.if_true, self.if_false = cond, if_true, if_false


class LoadGlobal(Op):
    """Look up a global (then builtin) name; the specialiser replaces it by a constant."""

    pure = False  # a missing name raises NameError

    def __init__(self, name: str) -> None:
        self.name = name

    def operands(self) -> list[Value]:
        return []

    def replace_operand(self, old: Value, new: Value) -> None:
        pass


class LoadAttr(_Operands):
    slots = ("obj",)

    def __init__(self, obj: Value, name: str) -> None:
        self.obj, self.name = obj, name


class Call(_Operands):
    """``func(*args)`` where the last ``len(kwnames)`` args are passed by keyword."""

    slots = ("func", "args")

    def __init__(self, func: Value, args: list[Value], kwnames: tuple[str, ...] = ()) -> None:
        self.func, self.args, self.kwnames = func, args, kwnames


class BuildTuple(_Operands):
    slots = ("items",)

    def __init__(self, items: list[Value]) -> None:
        self.items = items


class Unpack(_Operands):
    """Checks that `seq` has exactly `count` items (else ValueError) and passes it on."""

    slots = ("seq",)

    def __init__(self, seq: Value, count: int) -> None:
        self.seq, self.count = seq, count


class TupleGet(_Operands):
    """Item `index` of a tuple whose length is known."""

    slots = ("tup",)

    def __init__(self, tup: Value, index: int) -> None:
        self.tup, self.index = tup, index


class Subscript(_Operands):
    """``obj[index]``."""

    slots = ("obj", "index")

    def __init__(self, obj: Value, index: Value) -> None:
        self.obj, self.index = obj, index


class StoreItem(_Operands):
    """``obj[index] = value``."""

    slots = ("obj", "index", "value")
    pure = False

    def __init__(self, obj: Value, index: Value, value: Value) -> None:
        self.obj, self.index, self.value = obj, index, value


def index_items(op: "Subscript | StoreItem") -> list[Value]:
    """The index values of an element access: the items of a tuple index (``m[i, j]``,
    or constant folding's ``m[0, 1]``), else the one index."""
    if isinstance(op.index, BuildTuple):
        return list(op.index.items)
    if isinstance(op.index, Const) and isinstance(op.index.value, tuple):
        return [Const(v) for v in op.index.value]
    return [op.index]


class Checkpoint(Op):
    """A resume point of a function that writes to memory: the interpreter can take
    the call over at bytecode byte `offset` with local `names[k]` holding `values[k]`
    and the operand stack holding `values[len(names):]` (bottom first).

    A guard that fails after a checkpoint (and before the next one) resumes there: see
    `cuvil_bc/resume.py`. The builder puts one at the start of every block and after
    every write; between two of them nothing is written, so the interpreter can redo
    that stretch. It keeps its values alive, and passes never remove it."""

    pure = False

    def __init__(self, offset: int, names: list[str], values: list[Value]) -> None:
        self.offset, self.names, self.values = offset, names, values

    @property
    def stack(self) -> list[Value]:
        return self.values[len(self.names) :]

    def operands(self) -> list[Value]:
        return list(self.values)

    def replace_operand(self, old: Value, new: Value) -> None:
        self.values = [new if v is old else v for v in self.values]


class Narrow(_Operands):
    """`value`, in a block that only a ``value is None`` test (``is_none``) or a
    ``value is not None`` test (not ``is_none``) leads to: typing narrows its type.

    With `is_none` None it is the read of a local that may be unbound (the builder
    makes one for each ``LOAD_FAST`` of such a value): the value is the bound one,
    and if it is not, CPython raises UnboundLocalError there (a deopt). Typing keeps
    only those whose value may really be unbound (`passes/unbound.py`)."""

    slots = ("value",)

    def __init__(self, value: Value, is_none: bool | None) -> None:
        self.value, self.is_none = value, is_none


class GetIter(_Operands):
    slots = ("iterable",)

    def __init__(self, iterable: Value) -> None:
        self.iterable = iterable


class IterValue(_Operands):
    """The item that the `ForIter` ending the (only) predecessor block produced."""

    slots = ("iterator",)
    pure = True

    def __init__(self, iterator: Value) -> None:
        self.iterator = iterator


# -- control ops: exactly one, last in each block ----------------------------------


class ControlOp(_Operands):
    pure = False

    def successors(self) -> list["BasicBlock"]:
        return []

    def replace_successor(self, old: "BasicBlock", new: "BasicBlock") -> None:
        for name in ("target", "if_true", "if_false", "body", "exit"):
            if getattr(self, name, None) is old:
                setattr(self, name, new)


class Jump(ControlOp):
    def __init__(self, target: "BasicBlock") -> None:
        self.target = target

    def successors(self) -> list["BasicBlock"]:
        return [self.target]


class Branch(ControlOp):
    """Go to `if_true` when `cond` (a bool, usually a `Truth`) is true."""

    slots = ("cond",)

    def __init__(self, cond: Value, if_true: "BasicBlock", if_false: "BasicBlock") -> None:
        self.cond, self.if_true, self.if_false = cond, if_true, if_false

    def successors(self) -> list["BasicBlock"]:
        return [self.if_true, self.if_false]


class ForIter(ControlOp):
    """Advance `iterator`: to `body` with a new item, or to `exit` when exhausted."""

    slots = ("iterator",)

    def __init__(self, iterator: Value, body: "BasicBlock", exit: "BasicBlock") -> None:
        self.iterator, self.body, self.exit = iterator, body, exit

    def successors(self) -> list["BasicBlock"]:
        return [self.body, self.exit]


class Return(ControlOp):
    slots = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value


class Raise(ControlOp):
    """``raise exc``; native code hands the whole call back to CPython, which raises it."""

    slots = ("exc",)

    def __init__(self, exc: Value) -> None:
        self.exc = exc
