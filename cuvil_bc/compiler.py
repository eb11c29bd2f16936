"""The compiler driver: Python function + argument types -> native entry point.

    the stages of pipeline.py (decode ... typed, optimised IR), per signature
        -> lower (the function and the callees it calls natively, one LLVM module) -> JIT

`Compiler.typed` is recursion-aware: a call back into a specialisation that is still
being typed sees its return type so far, and the outer one iterates until that type is
stable. Specialisations typed against a provisional answer are not cached.
"""

from __future__ import annotations

import itertools
import os
import threading
import types as pytypes
import weakref
from typing import TYPE_CHECKING, Any, Callable

from . import cancel, originals, pipeline
from .stages import stage
from .errors import CompileError, Unsupported
from .ir import format_function
from .guards import Guard
from .pipeline import Work
from .records import field, record
from .typing.infer import infer
from .typing.models import model
from .typing.types import BOTTOM, Type, format_signature, join

if TYPE_CHECKING:
    from .lower.points import ResumeInfo

_symbols = itertools.count()


@record(eq=False)
class Specialization(Work):
    """A function typed for one signature (the `Work` of pipeline.py's stages), what it
    calls natively, and, once lowered, its code."""

    symbol: str = ""
    callees: list["Specialization"] = field(default_factory=list)
    recursive: bool = False
    finished: bool = False  # went through all the stages: `fn` is its typed IR
    provisional: bool = False
    #: Its module's entry point (lower/entry.py): `words_entry` where the C entry takes
    #: the signature, else cffi's.
    entry: str | None = None
    entry_address: int = 0  # of `entry`'s machine code, once in the JIT
    words_entry_address: int = 0  # of `words_entry`'s (0: none)
    loops: bool = True  # whether its IR has loops (code that can run long: see the dispatcher)
    #: Assumptions its code is compiled without (abi.DROPPABLE's names): deopts showed
    #: them failing on most calls (the dispatcher's adaptive recompilation).
    drops: frozenset[str] = frozenset()
    #: Whether its code, or a native callee's, computes with NumPy float scalars, whose
    #: underflow NumPy reports only under a non-default error state (`numpy_floats`).
    numpy_floats: bool = True
    #: The resume points of its module's code (its own and its callees') by number
    #: (lower/points.py), for the dispatcher to register, and the name the code knows
    #: each by -> the number it was given when the code was loaded.
    resume_points: dict[int, "ResumeInfo"] = field(default_factory=dict)
    resume_numbers: dict[str, int] = field(default_factory=dict)
    #: Its own points by name, as its last lowering made them (in any module).
    resume_names: dict[str, "ResumeInfo"] = field(default_factory=dict)
    #: Its module as a relocatable object (what artifacts/ stores), when the loader
    #: that needs no LLVM loaded it (lower/objload.py); otherwise None.
    object: bytes | None = None
    words_entry: str | None = None  # what the C entry calls: see entry.emit_words_entry
    llvm: str = ""
    _asm: str = ""

    @property
    def asm(self) -> str:
        """The native code, generated from the optimised IR when first asked for."""
        if not self._asm and self.llvm:
            from .lower.jit import get_jit

            self._asm = get_jit().assembly(self.llvm)
        return self._asm

    @property
    def signature(self) -> str:
        return format_signature(self.argtypes)

    @property
    def calls_native(self) -> bool:
        """Whether its code calls compiled functions (it can then run long)."""
        return bool(self.callees)

    def all_specializations(self) -> list["Specialization"]:
        """This one and everything it calls, transitively."""
        seen: set[int] = set()
        out: list[Specialization] = []
        work = [self]
        while work:
            s = work.pop()
            if id(s) in seen:
                continue
            seen.add(id(s))
            out.append(s)
            work.extend(s.callees)
        return out

    def all_resume_points(self) -> dict[int, "ResumeInfo"]:
        """The resume points of this one's code and of everything it calls natively."""
        return dict(self.resume_points)

    def all_guards(self) -> list[Guard]:
        return [g for s in self.all_specializations() for g in s.guards]

    def ir_text(self) -> str:
        return format_function(self.fn) if self.fn is not None else ""


class Compiler:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        #: Finished specialisations, held only while something uses them (a dispatcher's
        #: native code, a caller's specialisation): dropped functions do not pile up.
        self.done: weakref.WeakValueDictionary[tuple[object, tuple[Type, ...]], Specialization] = weakref.WeakValueDictionary()
        self.in_progress: dict[tuple[object, tuple[Type, ...]], Specialization] = {}
        self.stack: list[Specialization] = []
        #: Functions whose speculated guards failed once: compiled without speculation.
        self.no_speculation: weakref.WeakSet[pytypes.FunctionType] = weakref.WeakSet()
        #: Per function and argument types, the assumptions to compile it without.
        self.dropped: weakref.WeakKeyDictionary[pytypes.FunctionType, dict[tuple[Type, ...], frozenset[str]]] = weakref.WeakKeyDictionary()
        #: What to compile for a function that compiled code calls: the copy of a
        #: function whose code the import hook replaced (originals.py), else itself.
        self.original: Callable[[object], object] = originals.original
        #: The module names given out (`compile`): each module's symbols are its own.
        self.names: set[str] = set()

    def _after_fork_in_child(self) -> None:
        """A fork copies only its own thread. If another thread was compiling, the lock
        it held stays held in the child, where that thread does not exist: the child's
        first compile would wait forever. It gets a new lock, and that compile's
        unfinished state goes (what is done is complete: `typed` caches a spec only at
        its end, `compile` gives it an entry only once its code is loaded, and
        `lower/jit.py` lets no fork happen inside LLVM)."""
        if self.lock.acquire(blocking=False):  # free, or held by this very thread
            self.lock.release()
            return
        self.lock = threading.RLock()
        self.in_progress.clear()
        self.stack.clear()

    # -- typing ---------------------------------------------------------------------

    def call_type(self, func: pytypes.FunctionType, argtypes: tuple[Type, ...]) -> Type:
        spec = self.typed(func, argtypes)
        if spec.finished and spec.return_type == BOTTOM:
            # Typed to the end and never returns: CPython runs it.
            raise Unsupported(f"a call to {func.__qualname__}, which never returns (it always raises, or recurses without end)")
        if spec.writes:
            # A deopt inside it would have to resume two interpreter frames at once.
            raise Unsupported(f"a native call to {func.__qualname__}, which writes to arrays")
        if self.stack and spec not in self.stack[-1].callees:
            self.stack[-1].callees.append(spec)
        return spec.return_type

    def typed(self, pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...]) -> Specialization:
        key = (pyfunc, argtypes)
        cached = self.done.get(key)
        if cached is not None and all(g.holds() for g in cached.all_guards()):
            return cached
        running = self.in_progress.get(key)
        if running is not None:
            running.recursive = True
            for s in self.stack[self.stack.index(running) + 1 :]:
                s.provisional = True
            return running
        spec = Specialization(pyfunc=pyfunc, argtypes=argtypes)
        spec.drops = self.dropped.get(pyfunc, {}).get(argtypes, frozenset())
        self.in_progress[key] = spec
        self.stack.append(spec)
        try:
            pipeline.run(spec, self)
            spec.finished = True
        except CompileError as e:
            # What it was compiled against: a failure caused by a global's value (a big
            # int, None) is retried once the global changes (see the dispatcher).
            e.guards = [*e.guards, *spec.guards]
            raise
        finally:
            self.stack.pop()
            del self.in_progress[key]
        if not spec.provisional:
            self.done[key] = spec
        return spec

    # -- what pipeline.py's stages ask of their driver ---------------------------------

    verify_each: bool | None = None

    def infer(self, work: Work) -> None:
        """Type `work` (a `Specialization`, on top of `stack`). A recursive function
        is typed again until its return type settles: its calls of itself see the
        type so far."""
        spec = work
        assert isinstance(spec, Specialization) and spec.fn is not None
        for _ in range(20):
            spec.callees = []
            ret = infer(spec.fn, spec.argtypes, self)
            if ret == spec.return_type:
                return
            spec.return_type = ret
            if not spec.recursive:
                return
        raise Unsupported("the return type of a recursive function did not settle", spec.fn.location())

    def settings(self, pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...]) -> tuple[frozenset[str], bool]:
        """How `pyfunc` is compiled for `argtypes` now: the assumptions dropped for it,
        and whether it speculates (part of its artifact's key)."""
        return self.dropped.get(pyfunc, {}).get(argtypes, frozenset()), pyfunc not in self.no_speculation

    def speculates(self, work: Work) -> bool:
        return work.pyfunc not in self.no_speculation

    def stop_speculating(self, spec: Specialization) -> None:
        """A speculated guard failed in `spec` or a callee: forget them, so that the
        next compile of each builds it without speculation."""
        with self.lock:
            for s in self._with_callees(spec):
                self.no_speculation.add(s.pyfunc)
                if self.done.get((s.pyfunc, s.argtypes)) is s:
                    del self.done[(s.pyfunc, s.argtypes)]

    def drop(self, spec: Specialization, assumption: str) -> None:
        """Compile `spec` and its callees again without `assumption` (an abi.DROPPABLE
        name) at their next compile: a guard of that kind failed on most calls."""
        with self.lock:
            for s in self._with_callees(spec):
                mine = self.dropped.setdefault(s.pyfunc, {})
                mine[s.argtypes] = mine.get(s.argtypes, frozenset()) | {assumption}
                if self.done.get((s.pyfunc, s.argtypes)) is s:
                    del self.done[(s.pyfunc, s.argtypes)]

    def _with_callees(self, spec: Any) -> list[Any]:
        """`spec` and its native callees. One loaded from the native-code cache
        (artifacts/) does not know its callees: this process types it to find them."""
        if getattr(spec, "from_cache", False):
            try:
                return [spec, *self.typed(spec.pyfunc, spec.argtypes).all_specializations()]
            except CompileError:
                pass
        return spec.all_specializations()

    # -- lowering -------------------------------------------------------------------

    def compile(self, pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...], name: str | None = None) -> Specialization:
        """Type, lower and JIT-compile `pyfunc` for `argtypes` with everything it
        calls natively, in one module of its own: its machine code refers to no other
        module's, so it can be stored and loaded by another process (artifacts/).
        `name` is its symbol (the code's, and the entries' prefix): the same inputs
        give the same name, and so the same bytes (one is made up by default)."""
        from .ir.dominance import natural_loops
        from .lower.jit import get_jit
        from .lower.points import new_number

        with self.lock:
            cancel.check()  # (between phases: see cancel.py)
            with stage("typing"):
                spec = self.typed(pyfunc, argtypes)
            if spec.entry is not None:
                return spec
            ret = spec.return_type
            if ret != BOTTOM and not model(ret).boxable(ret):
                # (a native caller may still take it: only Python cannot)
                raise Unsupported(f"returning a value of type {ret} to Python", spec.fn.location() if spec.fn is not None else None)
            jit = get_jit()
            pending = self.name_module(spec, name)
            with stage("lowering"):
                module, entry, words_entry = self.lower(spec, pending)
            numbers = {name: new_number() for s in pending for name in s.resume_names}
            loaded = jit.compile(module, numbers)
            spec.entry_address = loaded.address(entry)
            spec.words_entry_address = loaded.address(words_entry) if words_entry is not None else 0
            spec.loops = bool(natural_loops(spec.fn)) if spec.fn is not None else True
            spec.numpy_floats = numpy_floats(spec)
            if spec.numpy_floats:
                from .lower.runtime import watch_numpy_errstate

                watch_numpy_errstate()
            # Only once the module is loaded: a spec with an entry is one whose code is
            # in the JIT, so an exception (or Ctrl-C) above leaves nothing half done,
            # and the next compile of it starts again.
            points = {name: info for s in pending for name, info in s.resume_names.items()}
            spec.resume_points = {numbers[name]: info for name, info in points.items()}
            spec.resume_numbers = {name: numbers[name] for name in points}
            spec.llvm = loaded.optimized
            spec.object = loaded.object
            spec.words_entry = words_entry
            spec.entry = entry
            return spec

    def name_module(self, spec: Specialization, name: str | None = None) -> list[Specialization]:
        """What `spec`'s module holds (it and its native callees), each named for it:
        `spec` is `name` (or, if this process used that name already, `name` made
        unique), its callees ``name.1``, ``name.2``, ... (One module at a time, under
        the lock: a callee that another module holds too is named anew in each.)"""
        name = name or f"cb.{spec.pyfunc.__qualname__}.{next(_symbols)}"
        while name in self.names:
            name = f"{name}.{next(_symbols)}"
        self.names.add(name)
        pending = spec.all_specializations()
        for k, s in enumerate(pending):
            s.symbol = name if k == 0 else f"{name}.{k}"
        return pending

    def lower(self, spec: Specialization, pending: list[Specialization]) -> tuple[Any, str, str | None]:
        """One LLVM module (llvmlite.ir) with the code of `pending` (`spec` and its
        native callees, transitively) and `spec`'s entry points; the names of those."""
        from .lower.codegen import FunctionLowering, lower_recursive
        from .lower.entry import emit_entry, emit_words_entry, words_entry_supported
        from .lower.jit import get_jit
        from .lower.points import ResumeInfo

        module = get_jit().new_module(spec.symbol)
        for s in pending:
            assert s.fn is not None
            cancel.check()
            try:
                points: dict[str, ResumeInfo] = {}
                if s in s.callees:  # calls itself directly
                    lower_recursive(module, s.fn, s.symbol, s.return_type, _Callees(s), s.pyfunc, points, s.drops)
                else:
                    # (only the interpreter calls the module's entry, unless a callee
                    # calls it back: lower/loops.py polls for signals accordingly)
                    natively = s is not spec or any(spec in c.callees for c in pending)
                    FunctionLowering(module, s.fn, s.symbol, s.return_type, _Callees(s), pyfunc=s.pyfunc, resume_points=points, drops=s.drops, called_natively=natively).run()
                s.resume_names = points
            except CompileError as e:
                raise e.at(s.fn.location())
        # Only the entries are called from outside the module: the callees' code is
        # internal, so LLVM drops a callee it inlined everywhere rather than make
        # machine code for it.
        for s in pending[1:]:
            module.get_global(s.symbol).linkage = "internal"
        if words_entry_supported(spec.argtypes, spec.return_type):
            words_entry = emit_words_entry(module, spec.symbol, spec.argtypes, spec.return_type)
            return module, words_entry, words_entry
        return module, emit_entry(module, spec.symbol, spec.argtypes, spec.return_type), None


class _Callees:
    """Finds, for the lowering of one specialisation, the callees its typing chose."""

    def __init__(self, spec: Specialization) -> None:
        self.spec = spec

    def callee(self, func: object, argtypes: tuple[Type, ...]) -> Specialization:
        if func is self.spec.pyfunc and argtypes == self.spec.argtypes:
            return self.spec
        for c in self.spec.callees:
            if c.pyfunc is func and c.argtypes == argtypes:
                return c
        # An argument may have become narrower since typing (a union folded to a
        # constant): the callee typed for the wider types takes it, converted.
        for c in self.spec.callees:
            if c.pyfunc is func and len(c.argtypes) == len(argtypes) and all(join(a, w) == w for a, w in zip(argtypes, c.argtypes)):
                return c
        raise AssertionError(f"callee {func} {argtypes} was not typed")


COMPILER = Compiler()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=COMPILER._after_fork_in_child)


def numpy_floats(spec: Specialization, seen: set[int] | None = None) -> bool:
    """Whether `spec` or one of its native callees has a value that is an np.float64 or
    np.float32 (or may be one). NumPy reports the underflows of their arithmetic, and
    of their casts into float32 arrays, only when its error state asks for it (the
    default ignores them): native code does not look, so the C entry and the
    dispatcher run such a signature natively only while underflows are ignored."""
    from .typing.types import FLOAT, NpScalar, options

    seen = set() if seen is None else seen
    if id(spec) in seen:
        return False
    seen.add(id(spec))
    if spec.fn is None:
        return True
    for op in spec.fn.ops():
        if op.type is not None and any(isinstance(t, NpScalar) and t.base == FLOAT for t in options(op.type)):
            return True
    return any(numpy_floats(c, seen) for c in spec.callees)
