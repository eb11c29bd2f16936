"""The compiler's front half as data: the stages from a code object to typed,
optimised IR, in the one order that the driver (compiler.py), the import hook's
front-end check (hook/rewrite.py) and the golden tests (tests/test_golden.py) all run.

Each `Stage` reads and extends one `Work`: the function on its way through. What a
stage needs from whoever runs it (how to type a call, what the import hook replaced,
whether to speculate) it asks the `Driver`; the stages before ``clean`` need none.

    decode -> cfg -> ir -> clean -> specialize -> clean-specialized -> unroll
           -> narrow -> infer -> clean-typed -> speculate

Lowering and the JIT follow in compiler.py: they work on all of a call tree at once.
(The stages from ``specialize`` on import what they run when first run: the hook's
front-end check, which runs only the first ones, does without typing.)
"""

from __future__ import annotations

import types as pytypes
from typing import TYPE_CHECKING, Any, Callable, Protocol

from .cfg import CFG, build_cfg
from .decode import Decoded, decode
from .ir import build_ir
from .ir.function import Function
from .ir.passes import narrow
from .ir.pipeline import optimize
from .records import field, record
from .typing.types import BOTTOM, Type

if TYPE_CHECKING:
    from .guards import Guard


@record(eq=False)
class Work:
    """A function on its way through the stages. `code` is what is decoded (by default
    `pyfunc`'s); `pyfunc` gives its globals and defaults (not needed before
    ``specialize``); `argtypes` what it is typed for."""

    code: pytypes.CodeType | None = None
    pyfunc: Any = None
    argtypes: tuple[Type, ...] = ()
    decoded: Decoded | None = None
    cfg: CFG | None = None
    fn: Function | None = None
    writes: bool = False  # has item assignments: deopts resume the interpreter (resume.py)
    guards: list[Guard] = field(default_factory=list)
    return_type: Type = BOTTOM

    def __post_init__(self) -> None:
        if self.code is None and self.pyfunc is not None:
            self.code = self.pyfunc.__code__


class Driver(Protocol):
    """What the stages from ``specialize`` on ask of whoever runs them (the compiler)."""

    #: Whether each pass is followed by the verifier (None: ir/pipeline.VERIFY_EACH).
    verify_each: bool | None

    def original(self, value: object) -> object:
        """What to compile for a function that the code calls (see Compiler.original)."""
        ...

    def infer(self, work: Work) -> None:
        """Type `work.fn` for `work.argtypes`, setting `work.return_type`."""
        ...

    def speculates(self, work: Work) -> bool:
        """Whether ops may be hoisted above their branch (opt/speculate.py)."""
        ...


@record(frozen=True)
class Stage:
    name: str
    run: Callable[[Work, Driver], None]


def _decode(w: Work, d: Driver) -> None:
    assert w.code is not None
    w.decoded = decode(w.code)


def _cfg(w: Work, d: Driver) -> None:
    assert w.decoded is not None
    w.cfg = build_cfg(w.decoded)


def _ir(w: Work, d: Driver) -> None:
    assert w.cfg is not None
    w.fn = build_ir(w.cfg)
    w.writes = w.fn.writes


def _clean(w: Work, d: Driver) -> None:
    from .typing.facts import KNOWN  # (the primitives: what constant folding may call)

    assert w.fn is not None
    optimize(w.fn, KNOWN, verify_each=d.verify_each)


def _specialize(w: Work, d: Driver) -> None:
    """Globals become constants (with the guards that keep them true), calls of known
    functions are bound to their parameters."""
    from .guards import function_guards
    from .opt.specialize import bind_calls, resolve_globals

    assert w.fn is not None
    w.guards = function_guards(w.pyfunc) + resolve_globals(w.fn, w.pyfunc, d.original)
    bind_calls(w.fn)


def _unroll(w: Work, d: Driver) -> None:
    """Short loops over constant ranges become straight-line code (opt/unroll.py)."""
    from .opt import unroll
    from .typing.facts import KNOWN

    assert w.fn is not None
    if unroll.run(w.fn):
        optimize(w.fn, KNOWN, verify_each=d.verify_each)


def _narrow(w: Work, d: Driver) -> None:
    assert w.fn is not None
    narrow.run(w.fn)  # after folding, so that only real None tests remain


def _infer(w: Work, d: Driver) -> None:
    d.infer(w)


def _clean_typed(w: Work, d: Driver) -> None:
    from .typing.facts import TYPED

    assert w.fn is not None
    optimize(w.fn, TYPED, verify_each=d.verify_each)


def _speculate(w: Work, d: Driver) -> None:
    from .opt import cse, ifconvert, speculate
    from .typing.facts import TYPED

    assert w.fn is not None
    changed = cse.run(w.fn)
    if d.speculates(w):
        changed = speculate.run(w.fn) | changed
        changed = ifconvert.run(w.fn) | changed
    if changed:
        optimize(w.fn, TYPED, verify_each=d.verify_each)


STAGES: tuple[Stage, ...] = (
    Stage("decode", _decode),
    Stage("cfg", _cfg),
    Stage("ir", _ir),
    Stage("clean", _clean),
    Stage("specialize", _specialize),
    Stage("clean-specialized", _clean),
    Stage("unroll", _unroll),
    Stage("narrow", _narrow),
    Stage("infer", _infer),
    Stage("clean-typed", _clean_typed),
    Stage("speculate", _speculate),
)
NAMES = tuple(s.name for s in STAGES)


class _Untyped:
    """The driver of a run that stops before ``infer``."""

    verify_each: bool | None = None

    def original(self, value: object) -> object:
        return value

    def infer(self, work: Work) -> None:
        raise AssertionError("typing needs a driver that can type calls (the compiler)")

    def speculates(self, work: Work) -> bool:
        return False


def run(work: Work, driver: Driver | None = None, *, until: str | None = None) -> Work:
    """Run the stages on `work` in order, up to and including `until` (all by default)."""
    if until is not None and until not in NAMES:
        raise ValueError(f"no stage {until!r}: the stages are {', '.join(NAMES)}")
    d = driver if driver is not None else _Untyped()
    for stage in STAGES:
        stage.run(work, d)
        if stage.name == until:
            break
    return work
