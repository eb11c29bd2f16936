"""What a precise deoptimisation hands to the interpreter: the resume states of a
function that writes, and the exits of the blocks that raise.

A function that writes to memory deoptimises by resuming the interpreter at the last
resume point (`ops.Checkpoint`) with the live values (cuvil_bc/resume.py). `Resumes`
numbers its resume points and makes a `ResumeState` for each checkpoint the lowering
passes; the emitter asks the current one to `emit` itself on each deopt path.
"""

from __future__ import annotations

from llvmlite import ir

from ..abi import RESUME_SLOTS
from ..errors import Unsupported
from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..opt import ownership
from ..records import field, record
from ..typing.infer import value_type
from ..typing.models import state_words
from ..typing.types import BOTTOM, ArrayType, ObjType, Type, holds_array
from .emitter import Emitter
from .ltypes import I32, I64, store_words
from .points import ResumeInfo, Slot
from .refcount import Getter, Holdings, incref


@record
class Resumes:
    """The resume points of one lowered function. `pyfunc` is the Python function the
    interpreter resumes; `points` collects each point's `ResumeInfo` by the name its
    code refers to it by (`symbol`.resume.k), for the caller to hand on with the
    compiled function (points.py)."""

    em: Emitter
    fn: Function
    symbol: str
    pyfunc: object
    points: dict[str, ResumeInfo]
    get: Getter
    holdings: Holdings
    _raise_exits: dict[tuple[BasicBlock, BasicBlock | None], ir.Block] = field(default_factory=dict, init=False)

    def at(self, checkpoint: O.Checkpoint, values: list[O.Value] | None = None) -> ResumeState:
        """The state after `checkpoint`, with its values (or `values` in their place)."""
        return ResumeState(self, checkpoint, list(checkpoint.values) if values is None else values)

    def raise_exit(self, block: BasicBlock, pred: BasicBlock | None, before: O.Checkpoint | None = None) -> ir.Block:
        """Where a function that writes (or holds arrays) goes instead of a block that
        raises: resume at the block's start, with its phis and narrowings seen from
        `pred` (the block's own ops are not typed: see `infer`), and let the
        interpreter raise; or, for a function that only reads, release what it holds
        and re-run the call. From a resume region (opt/regions.py), resume at its
        checkpoint `before`: the interpreter redoes the region, warns what it
        deferred, and raises."""
        key = (block, pred)
        found = self._raise_exits.get(key)
        if found is not None:
            return found

        def seen(v: O.Value) -> O.Value:
            if isinstance(v, O.Phi) and v.block is block and pred is not None:
                return seen(v.value_for(pred))
            if isinstance(v, O.Narrow) and v.block is block:
                return seen(v.value)
            return v

        checkpoint = next((op for op in block.ops if isinstance(op, O.Checkpoint)), None)
        em = self.em
        saved = em.resume, em.line
        if before is not None:
            em.resume = self.at(before)
        elif checkpoint is not None:
            em.resume = self.at(checkpoint, [seen(v) for v in checkpoint.values])
        em.line = block.terminator.line or self.fn.firstlineno
        found = em.deopt_block()
        em.resume, em.line = saved
        self._raise_exits[key] = found
        return found


class ResumeState:
    """The state a deoptimisation after `checkpoint` hands to the interpreter: writes
    the checkpoint's `values` as resume words and reports its resume point (see
    `cuvil_bc/resume.py`). Named on first use."""

    def __init__(self, resumes: Resumes, checkpoint: O.Checkpoint, values: list[O.Value]) -> None:
        self.resumes = resumes
        self.checkpoint = checkpoint
        self.values = values
        self.name: str | None = None

    def key(self) -> object:
        return (id(self.checkpoint), tuple(map(id, self.values)))

    def emit(self) -> set[O.Value]:
        """Store the state and report the point, at the builder's position; return the
        owned arrays whose references go with it."""
        from ..decode.resume import null_layout

        rs, em = self.resumes, self.resumes.em
        b = em.builder
        cp = self.checkpoint
        pyfunc = rs.pyfunc
        if cp.offset < 0 or pyfunc is None or null_layout(pyfunc.__code__, cp.offset, len(self.values) - len(cp.names)) is None:  # type: ignore[attr-defined]
            raise Unsupported("a guard at a point the interpreter cannot resume from", rs.fn.location(cp))
        slots: list[Slot] = []
        stores: list[tuple[ir.Value, Type, int]] = []
        handed: set[O.Value] = set()  # owned arrays whose reference the interpreter takes
        used = 0
        for v in self.values:
            t = value_type(v)
            if isinstance(v, O.Undef):
                slots.append(Slot("unbound"))
            elif isinstance(v, O.Const):
                slots.append(Slot("const", v.value))
            elif isinstance(v, O.Arg) and isinstance(t, ArrayType):
                slots.append(Slot("arg", v.index))
            elif t == BOTTOM:
                slots.append(Slot("const", None))  # never reached
            elif isinstance(t, ObjType):
                slots.append(Slot("const", t.obj))  # known at compile time (a.dtype)
            else:
                n = state_words(t)
                if n is None:
                    raise Unsupported(f"resuming the interpreter with a {t} live", rs.fn.location(cp))
                mine = ownership.holder(v)
                owns = mine is not None and rs.holdings.holds(mine) and mine not in handed
                if owns:
                    handed.add(mine)  # type: ignore[arg-type]
                elif holds_array(t):
                    # A reference of the interpreter's own, taken here: the deopt path
                    # releases what this code holds before the interpreter runs, and an
                    # item of a tuple that only the tuple kept alive (``a = (b, n)[0]``
                    # after ``b`` was rebound) was freed first (a double free, found
                    # by tests/test_array_refcount_fuzz.py).
                    incref(b, rs.get(v)[0], t)
                    owns = True
                slots.append(Slot("words", t, used, owns))
                stores.append((rs.get(v)[0], t, used))
                used += n
        if used > RESUME_SLOTS:  # (csrc/runtime.c keeps that many words per thread)
            raise Unsupported("too many live values to resume the interpreter", rs.fn.location(cp))
        if self.name is None:
            self.name = f"{rs.symbol}.resume.{len(rs.points)}"
            rs.points[self.name] = ResumeInfo(pyfunc, cp.offset, cp.line or rs.fn.firstlineno, tuple(cp.names), tuple(slots))  # type: ignore[arg-type]
        words = b.call(em.declare("cb_deopt_slots", I64.as_pointer(), []), [])
        for val, t, index in stores:
            store_words(b, words, val, t, index)
        number = b.trunc(b.ptrtoint(point_symbol(em.module, self.name), I64), I32)
        b.call(em.declare("cb_set_deopt_resume", ir.VoidType(), [I32, I32]), [number, ir.Constant(I32, used)])
        return handed


def point_symbol(module: ir.Module, name: str) -> ir.GlobalVariable:
    """The symbol that stands for resume point `name`'s number in the code: the
    number is given when the code is loaded (its "address", `jit.JIT.compile`), so
    that machine code made in one process can be loaded in another."""
    found = module.globals.get(name)
    if found is None:
        found = ir.GlobalVariable(module, ir.IntType(8), name)
    return found
