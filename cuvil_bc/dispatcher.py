"""The dispatcher that `cuvil_bc.compile` returns.

A call picks the native specialisation for its argument types (compiling it on first
use), checks that the globals it was compiled against are unchanged, and calls the
native entry point through cffi, which releases the GIL for the duration. If anything
stands in the way (an unsupported type or construct, an int beyond int64, a guard that
fails inside native code) the original Python function runs instead, so the result is
always CPython's.
"""

from __future__ import annotations

import collections
import functools
import os
import sys
import threading
import time
import types as pytypes
import weakref

from . import artifacts, observe, originals, resume
from .artifacts import describe  # noqa: F401 (a first call makes its key: loaded here, not in the call)
from .abi import DEOPT_KIND_SHIFT, DROPPABLE, MAX_DEPTH, RECURSION_MARGIN, SPECULATIVE_DEOPT, runtime_types
from .counters import set_code
from .frames import OWN_CODE, handler_part, hidden_frames, raised_by_program
from .errors import VARIADIC, CompileError
from .records import record
from .typing.arguments import refusal
from .typing.types import BOOL, FLOAT, INT, NONE, ArrayType, NpScalar, TupleType, Type, array_type, format_signature, parse_signature, typeof
from .warn import internal_warning

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Callable
    from .compiler import Compiler, Specialization

_SCALARS: dict[type, Type] = {int: INT, float: FLOAT, bool: BOOL, type(None): NONE}
_PYTHON_TYPE: dict[Type, type] = {t: k for k, t in _SCALARS.items()}
_COMPILABLE = (TupleType, type(INT), ArrayType, NpScalar)


def _compiler() -> "Compiler":
    """The compiler, imported when first needed: a function whose native code comes
    from the cache (artifacts/) runs without it, and its front end, type inference
    and LLVM bindings are ~50 ms of imports."""
    from .compiler import COMPILER

    return COMPILER


def _settings(pyfunc: pytypes.FunctionType, argtypes: tuple[Type, ...]) -> tuple[frozenset[str], bool]:
    """How `pyfunc` compiles for `argtypes` now (part of its artifact's key). Only the
    compiler records dropped assumptions and failed speculation (after deopts, from
    `_compiler()`): where it is not loaded, there are none."""
    compiler = getattr(sys.modules.get(f"{__package__}.compiler"), "COMPILER", None)
    return compiler.settings(pyfunc, argtypes) if compiler is not None else (frozenset(), True)


class _Native:
    """One compiled specialisation, ready to call."""

    def __init__(self, spec: Specialization) -> None:
        from ._runtime import ffi  # type: ignore[attr-defined]
        from .boxing import entry_slots, make_boxer, make_flattener, make_words_caller
        from .typing.models import c_params, words

        self.spec = spec
        self.calls_python = spec.calls_native
        assert spec.entry is not None
        self.fast: tuple[Any, ...] | None = None
        self.target: Any = None
        if spec.words_entry is None:
            params = [c for t in spec.argtypes for c in c_params(t)]
            ctype = f"int32_t(*)({', '.join(['int32_t'] + params + ['cb_word *', 'cb_word *'])})"
            #: ``cfunc(depth, *flattened, out, parked)``: the generic path's call.
            self.cfunc = ffi.cast(ctype, spec.entry_address)
        else:  # (the module's one entry: lower/entry.py)
            self.cfunc = make_words_caller(spec.argtypes, spec.words_entry_address)
            # This dispatcher's own target: its `calls` counts the C entry's native calls.
            self.target = ffi.new("cb_native_target *")
            self.target.fn = ffi.cast("void *", spec.words_entry_address)
            # What the C entry (csrc/entry.c) needs of this signature. Code that can
            # run long (it loops, or calls compiled code) may let the GIL go once it
            # has (csrc/entry.c, cb_gil_work); a loop-free leaf never does.
            may_release = spec.loops or self.calls_python
            address = int(ffi.cast("uintptr_t", self.target))
            self.fast = (*entry_slots(spec.argtypes, spec.return_type), may_release, self.calls_python, spec.numpy_floats, address, self.target)
        self.nwords = max(1, words(spec.return_type))
        self.generic_completions = 0  # calls the generic path completed natively
        self.deopts: collections.Counter[tuple[int, int]] = collections.Counter()  # by (line, kind)
        self.box = make_boxer(spec.return_type)
        self.flatten = make_flattener(spec.argtypes)
        self.ffi = ffi

    def fast_calls(self) -> int:
        """Calls that the fast path completed natively."""
        return int(self.target.calls) if self.target is not None else 0

    def completed(self) -> int:
        """Calls that finished natively, on either path."""
        return self.fast_calls() + self.generic_completions

    def out(self) -> Any:
        """A call's own buffer for its result words."""
        return self.ffi.new("cb_word[]", self.nwords)


class Dispatcher:
    """The state and slow paths behind a compiled function.

    Users get `self.function`: a real Python function whose code `fastpath.py`
    generates (and regenerates whenever the set of native specialisations changes),
    carrying this object's public attributes (py_func, stats, signatures, explain, ...).
    """

    def __init__(self, pyfunc: pytypes.FunctionType, *, signatures: list[str] | None = None, strict: bool = False, cache: bool = True) -> None:
        if not isinstance(pyfunc, pytypes.FunctionType):
            raise TypeError(f"cuvil_bc.compile needs a Python function, not {type(pyfunc).__name__}")
        functools.update_wrapper(self, pyfunc)
        self.py_func = pyfunc
        self.strict = strict
        self.cache = cache  # use the native-code cache (artifacts/), unless it is off
        self._signature: Any = None  # (`__signature__`)
        self._defaults = pyfunc.__defaults__  # what __signature__ and the fast path bind
        self._nparams = pyfunc.__code__.co_argcount
        self._simple = not (pyfunc.__code__.co_flags & 0x0C) and pyfunc.__code__.co_kwonlyargcount == 0
        # A generator or coroutine function: its code runs only once iterated or awaited.
        self._suspends = bool(pyfunc.__code__.co_flags & 0x3A0)
        self._native: dict[tuple[object, ...], _Native] = {}
        self._signature_list: list[str] = []
        self._failed: dict[tuple[object, ...], str] = {}
        self._failed_guards: dict[tuple[object, ...], list[Any]] = {}
        self._refusals: dict[tuple[object, ...], CompileError] = {}  # strict mode's errors
        self._guards: list[Any] = []
        self._lock = threading.RLock()
        _LIVE.add(self)
        self._warned = False
        self._last_deopt: str | None = None
        self.reruns = 0  # calls native code handed back that CPython ran again from the start
        #: Deoptimisations by the source line whose guard failed (0: unknown), for the
        #: hook's report.
        self.deopt_lines: collections.Counter[int] = collections.Counter()
        self._counts: dict[str, float] = {"native_calls": 0, "interpreted_calls": 0, "deopts": 0, "compile_seconds": 0.0, "speculation_failures": 0, "compiles": 0, "cache_loads": 0}
        #: The generic path's calls (what tests of the fast paths watch).
        self.generic_calls = 0
        self._installed: pytypes.CodeType | None = None  # the code we last gave self.function
        #: The function's code and defaults for the current specialisations, while no
        #: tool observes (what `observed_changed` puts back when the tool stops).
        self._prefixed: tuple[Any, ...] | None = None  # (code, its defaults, the defaults it binds, how it tests)
        # The prefix's C entry, and its `Known`: calls of signatures known to fall back
        # run the function's body there, and are counted by it; while none is native,
        # only the calls its `Sampler` picks are tested (fastpath.py).
        self._entry: Any = None
        self._known: Any = None
        self._sampler: Any = None
        self.function = self._make_function()
        observe.listen(self)
        self._regenerate()
        for sig in signatures or ():
            argtypes = parse_signature(sig)
            key = tuple(_PYTHON_TYPE.get(t, t) for t in argtypes)  # the key a call computes
            self._compile(key, argtypes)

    # -- calling --------------------------------------------------------------------

    @property
    def stats(self) -> dict[str, float]:
        """native_calls (calls that ran native code to completion), interpreted_calls,
        deopts (native calls handed back to CPython, also counted as interpreted) and
        compile_seconds."""
        out = dict(self._counts)
        out["native_calls"] += sum(n.fast_calls() for n in list(self._native.values()))
        if self._known is not None:
            out["interpreted_calls"] += self._known.ticks + self._sampler.skipped
        return out

    @property
    def __signature__(self) -> Any:
        """The function's signature (`inspect.signature`), made when first asked for:
        importing `inspect` costs ~10 ms, and a function loaded from the native-code
        cache is otherwise callable in a few."""
        if self._signature is None:
            import inspect

            self._signature = inspect.signature(self.py_func)
        return self._signature

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call_generic(args, kwargs)

    @hidden_frames
    def _call_generic(self, args: tuple[Any, ...], kwargs: dict[str, Any], here: Any = None) -> Any:
        """A call the prefix's fast paths did not take. Given `here` (the prefix's own
        marker, `counters.HERE`), a call that is to run interpreted returns it instead:
        the prefix then runs the body itself, in the function's own frame, as written
        (no frame of ours below the caller's: CPython's recursion limit, warnings'
        stacklevel and tracebacks see the call as CPython would)."""
        self.generic_calls += 1
        if self.py_func.__defaults__ is not self._defaults:
            # Someone assigned new defaults: bind with them, as CPython would.
            self._defaults = self.py_func.__defaults__
            self._signature = None
            self._regenerate()
        if observe.observed():
            return self._interpret(args, kwargs, here)  # a tool sees every line (observe.py)
        if kwargs or len(args) != self._nparams or not self._simple:
            try:
                bound = self.__signature__.bind(*args, **kwargs)
            except TypeError:
                return self.py_func(*args, **kwargs)  # raises CPython's own TypeError
            if not self._simple:
                if self.strict:
                    raise CompileError(VARIADIC, _def_location(self.py_func))
                return self._interpret(args, kwargs)  # (never a prefix's call)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())
            kwargs = {}
        key = argument_key(args)
        native = self._native.get(key)
        if native is None:
            native = self._compile_for(key, args)
            if native is None:
                self._note_fallback(key)
                return self._interpret(args, kwargs, here)
        for g in self._guards:
            if not g.holds():
                self._invalidate()
                return self._call_generic(args, {}, here)
        if native.spec.numpy_floats and not runtime_types().numpy_underflow_ignored():
            # NumPy reports underflows (np.seterr, np.errstate): native code does not.
            return self._interpret(args, kwargs, here)
        depth = 0
        if native.calls_python:
            # Native calls must not go deeper than CPython would allow from here.
            budget = sys.getrecursionlimit() - _stack_depth() - RECURSION_MARGIN
            if budget <= 0:
                return self._interpret(args, kwargs, here)
            depth = max(0, MAX_DEPTH - budget)
        # The call's own buffers (a signal handler may call this function as the call
        # returns): its result words, and the address of a deopt record native code
        # parked (cb_park_deopt), freed even where that handler raises.
        out, parked = native.out(), native.ffi.new("cb_word *")
        status = record = None
        try:
            try:
                status = native.cfunc(depth, *native.flatten(args), out, parked)
            except (OverflowError, TypeError):
                status = None  # cffi refused an argument: an int beyond int64
        finally:
            if parked.i:
                record = resume.unpark(parked.i)
        if status is None:
            # (outside the handler: an exception of the function's own would otherwise
            # carry cffi's OverflowError as its __context__)
            return self._interpret(args, kwargs, here)
        if status:
            if record is None:  # (cb_park_deopt found no memory for it)
                raise MemoryError("no memory for a deoptimised call's resume state")
            return self._deopt(args, record, here)
        self._counts["native_calls"] += 1
        native.generic_completions += 1
        return native.box(out, args)

    def _note_fallback(self, key: tuple[object, ...]) -> None:
        """A key that does not compile: if its calls can be recognised by their types
        alone, the prefix runs the body for them from now on (fastpath.py)."""
        if self._known is not None and key not in self._known.keys and key in self._known_keys():
            with self._lock:
                self._regenerate()

    def _known_keys(self) -> tuple[tuple[object, ...], ...]:
        """The signatures the prefix recognises as falling back: those that fail for
        their types alone (not for a global's value, which may change), recognisable
        by their types, in the order they failed, up to MAX_INTERPRETED_KEYS; none in
        strict mode, where a fallback raises."""
        from .fastpath import MAX_INTERPRETED_KEYS, interpreted_key

        if self.strict:
            return ()
        keys = (k for k in self._failed if k not in self._failed_guards and interpreted_key(k))
        return tuple(keys)[:MAX_INTERPRETED_KEYS]

    def c_entry(self) -> tuple[Any, Any] | None:
        """The C entry into the native signatures (csrc/entry.c: it returns a
        `counters.Unfinished` for a call it does not finish), and what finishes a call
        whose native code handed it back, ``deopt(args, record)`` (a bound method:
        unlike the prefix's constants, its holder is not a code object); None when this
        function has none (its parameters are beyond the prefix: `fastpath.can_generate`)."""
        with self._lock:
            if self._entry is None:
                return None
            return self._entry, self._deopt

    def _deopt(self, args: tuple[Any, ...], record: bytes, here: Any = None) -> Any:
        """Finish a call that native code handed back, from its deopt record
        (`resume.read_record`); `here` as for `_call_generic`, where the call
        starts again from the top."""
        line, number, words = resume.read_record(record)
        if number and resume.point(number).pyfunc is not self.py_func:
            # Another function's point (a native callee's, passed on by a caller that
            # records none: one that does not write, which the compiler allows only
            # over callees that do not either): this call wrote nothing, and is re-run.
            number = 0
        self._counts["deopts"] += 1
        speculative = bool(line & SPECULATIVE_DEOPT)
        kind = (line >> DEOPT_KIND_SHIFT) & 0x3F if line >= 0 else 0
        line = line & ((1 << DEOPT_KIND_SHIFT) - 1) if line >= 0 else line
        self.deopt_lines[line] += 1
        how = "CPython ran the call"
        if number:
            point = resume.point(number)
            how = f"CPython resumed the call at line {point.line}"
        self._last_deopt = f"guard failed at line {line}; {how}" if line else how
        if speculative:
            # A guard of an op hoisted above its branch failed, possibly on a path that
            # did not need the op: CPython runs (the rest of) this call, later ones run
            # native code compiled without speculation.
            self._last_deopt = f"speculated guard failed at line {line}; {how}, recompiling without speculation"
            self._counts["speculation_failures"] += 1
            for native in list(self._native.values()):
                _compiler().stop_speculating(native.spec)
            self._invalidate()
        elif not self.strict:
            self._adapt(args, line, kind)
        if number:
            # The function writes to memory: the interpreter carries on from the state
            # native code left, and must not start the call again.
            self._counts["interpreted_calls"] += 1
            return point.run(args, words)
        self.reruns += 1
        return self._interpret(args, {}, here)

    def _adapt(self, args: tuple[Any, ...], line: int, kind: int) -> None:
        """Adaptive recompilation. When most calls of a signature deoptimise
        (`ADAPT_AFTER` deopts, and `ADAPT_SHARE` of its calls) at a guard whose
        assumption can be dropped (abi.DROPPABLE: an entry bounds test that the loop's
        bound fails, a float test that any infinity among the arguments fails), the
        signature is compiled again without it. (Other guards fail where CPython's
        results need it: an int outgrowing int64, a warning, a raise. The import hook's
        cost model gives up functions that are slower natively for those.)"""
        assumption = DROPPABLE.get(kind)
        key = argument_key(args)
        native = self._native.get(key)
        if assumption is None or native is None or assumption in native.spec.drops:
            return
        native.deopts[line, kind] += 1
        count = native.deopts[line, kind]
        if count < ADAPT_AFTER or count < ADAPT_SHARE * (sum(native.deopts.values()) + native.completed()):
            return
        with self._lock:
            if self._native.get(key) is not native:
                return
            _compiler().drop(native.spec, assumption)
            self._last_deopt = f"recompiling without '{assumption}': it failed at line {line} on {count} calls"
            self._counts["native_calls"] += native.fast_calls()  # (its calls stay counted)
            del self._native[key]
            self._regenerate()

    def _interpret(self, args: tuple[Any, ...], kwargs: dict[str, Any], here: Any = None) -> Any:
        self._counts["interpreted_calls"] += 1
        if here is not None:
            return here
        return self.py_func(*args, **kwargs)

    def _make_function(self) -> pytypes.FunctionType:
        """The function users get: the original's code, globals, closure and defaults,
        whose code `_regenerate` then gives its prefix (fastpath.py)."""
        py = self.py_func
        code = py.__code__
        if self._suspends:
            # (its code never changes kind: CPython deprecates giving a function code
            # of another kind; a tool that observes sees the original's frames anyway)
            from .fastpath import generic_code

            code = generic_code(py, _Forward(self, "_call_generic"))
        fn = pytypes.FunctionType(code, py.__globals__, py.__name__, py.__defaults__, py.__closure__)
        fn.__kwdefaults__ = py.__kwdefaults__
        self._installed = fn.__code__
        functools.update_wrapper(fn, py)
        # (`inspect.signature(fn)` follows its `__wrapped__`, the original)
        for name in ("py_func", "explain", "inspect_ir", "inspect_llvm", "inspect_asm"):
            setattr(fn, name, getattr(self, name))
        fn.stats = _LiveStats(self)  # type: ignore[attr-defined]
        fn.signatures = self._signature_list  # type: ignore[attr-defined]
        fn.dispatcher = self  # type: ignore[attr-defined]
        return fn

    @property
    def installed_code(self) -> pytypes.CodeType | None:
        """The code this dispatcher last gave its function (another code there is
        someone else's: `_install`)."""
        return self._installed

    def observed_changed(self, observed: bool) -> None:
        with self._lock:
            if self._suspends:
                return
            if observed:
                self._install(self.py_func.__code__, self.py_func.__defaults__)
            elif self._prefixed is not None:  # the code from before the tool started
                self._install(*self._prefixed[:2])

    def _regenerate(self) -> None:
        """Bring the function up to date with the native specialisations, their guards
        and the signatures known to fall back: the C entry and `Known` are updated in
        place, the prefix is rebuilt only when the defaults changed (or, while a tracing
        tool is active, the function gets its own code as written)."""
        from .fastpath import MISSING, can_generate, generic_code, prefixed_code

        py = self.py_func
        self._signature_list[:] = [n.spec.signature for n in self._native.values()]
        if self._suspends:
            return
        if not can_generate(py):
            if self._prefixed is None:
                self._prefixed = (generic_code(py, _Forward(self, "_call_generic")), None)
        else:
            if self._entry is None:
                from .counters import Entry, Known, Sampler
                from .fastpath import SAMPLE_CAP
                from .guards import MISSING as ABSENT

                from .abi import FALL, Unfinished

                self._entry = Entry(self._nparams, FALL, Unfinished, ABSENT)
                self._known = Known(self._nparams, ())
                self._sampler = Sampler(SAMPLE_CAP)
            fast = [n.fast for n in self._native.values() if n.fast is not None][:MAX_FAST_PATHS]
            self._entry.set(fast, [(g.namespace, g.name, g.expected, g.is_attr) for g in self._guards] if fast else [])
            keys = self._known_keys()
            # How the prefix tests: not at all (no keys), every call, or only the sampled
            # calls while no signature is native.
            sampling = bool(keys) and not self._native
            tests = (bool(keys), sampling)
            if keys != self._known.keys:
                self._known.set(keys)
                self._sampler.reset()  # (the calls' signatures change: look again soon)
            if self._prefixed is None or self._prefixed[2] is not self._defaults or self._prefixed[3] != tests:
                code = prefixed_code(
                    py, generic=_Forward(self, "_call_generic"), deopt=_Forward(self, "_deopt"),
                    defaults=self._defaults, entry=self._entry, known=self._known if keys else None,
                    sampler=self._sampler if sampling else None,
                )  # fmt: skip
                missing = tuple(MISSING for _ in self._defaults) if self._defaults else None
                self._prefixed = (code, missing, self._defaults, tests)
                self._sampler.reset()
        if observe.observed():
            self._install(py.__code__, py.__defaults__)
        else:
            self._install(*self._prefixed[:2])

    def _install(self, code: pytypes.CodeType, defaults: tuple[Any, ...] | None) -> None:
        if self.function.__code__ is not self._installed:
            # Someone gave the function other code (a hot-reload tool): it is theirs now,
            # and runs as it would on the original function.
            return
        set_code(self.function, code, defaults)
        self._installed = code

    # -- compiling ------------------------------------------------------------------

    def _compile_for(self, key: tuple[object, ...], args: tuple[Any, ...]) -> _Native | None:
        if key in self._failed:
            guards = self._failed_guards.get(key, ())
            if all(g.holds() for g in guards):  # type: ignore[attr-defined]
                if self.strict:  # every fallback raises, not only the first
                    raise self._refusals[key].again()
                return None
            del self._failed[key]  # a global it depended on changed: try again
            del self._failed_guards[key]
        argtypes = _types_of(key)
        if not all(isinstance(t, _COMPILABLE) for t in argtypes):
            # Remembered under the key, so `explain()` says why and later calls with
            # such arguments go straight to the interpreter.
            error = self._fail(
                key,
                refusal(
                    str(k) if isinstance(k, Uncompilable) else getattr(k, "__name__", str(k))
                    for k in key
                    if not isinstance(k, _COMPILABLE) and k not in _SCALARS
                ),
            )
            if self.strict:
                raise error
            return None
        if len(self._native) >= MAX_SIGNATURES:
            # Each native signature costs every call a type test, and its code memory
            # for the life of the process: past the cap, new signatures stay interpreted.
            error = self._fail(key, f"more than {MAX_SIGNATURES} argument-type signatures; this one runs interpreted")
            if self.strict:
                raise error
            return None
        return self._compile(key, argtypes)  # type: ignore[arg-type]

    def _fail(self, key: tuple[object, ...], reason: str, error: CompileError | None = None) -> CompileError:
        """Remember that `key` does not compile, for `reason` (and `error`'s guards):
        its later calls go straight to the interpreter, or, in strict mode, raise the
        returned error again (`CompileError.again`). The failure is recorded last: a
        thread that sees it sees the rest (one raised KeyError in that window)."""
        error = error or CompileError(reason, _def_location(self.py_func))
        if self.strict:
            self._refusals[key] = error
        if error.guards:
            self._failed_guards[key] = error.guards
        self._failed[key] = reason
        return error

    def _compile(self, key: tuple[object, ...], argtypes: tuple[Type, ...]) -> _Native | None:
        with self._lock:
            if key in self._native:
                return self._native[key]
            start = time.perf_counter()
            guards = list(self._guards)
            try:
                spec = self._load_or_compile(argtypes)
                resume.register(spec.all_resume_points())  # before any of its code runs
                native = _Native(spec)
                self._native[key] = native
                have = {(id(g.namespace), g.name, id(g.expected), g.is_attr) for g in self._guards}
                for g in spec.all_guards():
                    # (each specialisation brings its own Guard objects for the same names:
                    # every call tests each distinct one once)
                    gkey = (id(g.namespace), g.name, id(g.expected), g.is_attr)
                    if g.namespace is not self.py_func and gkey not in have:
                        have.add(gkey)
                        self._guards.append(g)
                self._regenerate()  # (the C entry may refuse what it is given: internal)
            except CompileError as e:
                self._fail(key, str(e), e)
                if self.strict:
                    raise
                return None
            except Exception as e:  # an internal compiler error: never crash the program
                if self._native.pop(key, None) is not None:
                    self._guards = guards
                    self._regenerate()
                if raised_by_program(e):
                    # The program's own code raised it while we compiled (a signal
                    # handler): it is the program's, and the next call compiles again.
                    e.__traceback__ = handler_part(e.__traceback__)
                    raise
                error = self._fail(key, f"internal compiler error: {type(e).__name__}: {e}")
                if self.strict:
                    raise error from e
                if not self._warned:
                    self._warned = True
                    # Never raises, whatever the warnings filter (-W error): see warn.py.
                    internal_warning(f"cuvil_bc: {self.py_func.__qualname__} runs interpreted: {self._failed[key]}", stacklevel=3)
                return None
            finally:
                self._counts["compile_seconds"] += time.perf_counter() - start
            return native

    def _load_or_compile(self, argtypes: tuple[Type, ...]) -> Any:
        """The specialisation for `argtypes`: loaded from the native-code cache if it
        has one for it (artifacts/), else compiled and stored there."""
        key, drops = None, frozenset[str]()
        if self.cache:
            drops, speculates = _settings(self.py_func, argtypes)
            key = artifacts.key(self.py_func, argtypes, drops, speculates)
        if key is not None:
            found = artifacts.find(self.py_func, argtypes, key, originals.original)
            if found is not None:
                self._counts["cache_loads"] += 1
                return found
        name = f"cb.{self.py_func.__qualname__}.{key.hex()[:16]}" if key is not None else None
        spec = _compiler().compile(self.py_func, argtypes, name)
        self._counts["compiles"] += 1
        if key is not None:
            artifacts.store(spec, key, drops, originals.original)
        return spec

    def _invalidate(self) -> None:
        with self._lock:
            self._counts["native_calls"] += sum(n.fast_calls() for n in self._native.values())
            self._native.clear()
            self._failed.clear()
            self._failed_guards.clear()
            self._guards = []
            self._regenerate()

    def failure(self, key: tuple[object, ...]) -> str:
        """Why the signature of `key` did not compile ("" if it did or was not tried)."""
        return self._failed.get(key, "")

    # -- introspection --------------------------------------------------------------

    @property
    def signatures(self) -> list[str]:
        return list(self._signature_list)

    def explain(self) -> str:
        lines = [f"{self.py_func.__qualname__}:"]
        for n in self._native.values():
            lines.append(f"  {n.spec.signature}: native")
        for key, reason in self._failed.items():
            lines.append(f"  {_key_text(key)}: interpreted: {reason}")
        if self._last_deopt:
            lines.append(f"  last deoptimisation: {self._last_deopt}")
        if len(lines) == 1:
            lines.append("  not called yet")
        return "\n".join(lines)

    def _spec(self, signature: str | None) -> list[Specialization]:
        specs = [n.spec for n in self._native.values()]
        if signature is None:
            return specs
        wanted = format_signature(parse_signature(signature))
        return [s for s in specs if s.signature == wanted]

    def inspect_ir(self, signature: str | None = None) -> str:
        return "\n\n".join(s.ir_text() for s in self._spec(signature))

    def inspect_llvm(self, signature: str | None = None) -> str:
        return "\n\n".join(s.llvm for s in self._spec(signature))

    def inspect_asm(self, signature: str | None = None) -> str:
        return "\n\n".join(s.asm for s in self._spec(signature))

    def __repr__(self) -> str:
        return f"<cuvil_bc dispatcher for {self.py_func.__qualname__}>"


class _Forward:
    """A method of a dispatcher, for the function's prefix to call, that does not keep
    the dispatcher alive. The prefix holds it as a constant of the function's code, and
    code objects are invisible to the garbage collector: a constant that reached the
    function (the dispatcher holds it) would keep both alive forever."""

    __slots__ = ("_dispatcher", "_name")

    def __init__(self, dispatcher: "Dispatcher", name: str) -> None:
        self._dispatcher = weakref.ref(dispatcher)
        self._name = name

    def __call__(self, *args: Any) -> Any:
        dispatcher = self._dispatcher()
        if dispatcher is None:  # (the function's `dispatcher` attribute was deleted)
            raise RuntimeError("cuvil_bc: this compiled function's dispatcher is gone")
        return getattr(dispatcher, self._name)(*args)


OWN_CODE.add(_Forward.__call__.__code__)


#: Every dispatcher, for `_after_fork_in_child`.
_LIVE: "weakref.WeakSet[Dispatcher]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A dispatcher whose lock another thread held at the fork (compiling a signature)
    gets a new one: that thread does not exist in the child, and the lock would stay
    held forever. Its compile had recorded nothing yet, or everything a call needs."""
    for dispatcher in list(_LIVE):
        if dispatcher._lock.acquire(blocking=False):  # free, or held by this very thread
            dispatcher._lock.release()
        else:
            dispatcher._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


OWN_CODE.update((Dispatcher._interpret.__code__, Dispatcher._deopt.__code__))


class _LiveStats(dict):  # type: ignore[type-arg]
    """`stats` on the compiled function: a dict whose reads are always current."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        super().__init__()
        self._dispatcher = dispatcher

    def _now(self) -> dict[str, float]:
        return self._dispatcher.stats

    def __getitem__(self, key: str) -> float:
        return self._now()[key]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())

    def keys(self):  # type: ignore[no-untyped-def]
        return self._now().keys()

    def items(self):  # type: ignore[no-untyped-def]
        return self._now().items()

    def values(self):  # type: ignore[no-untyped-def]
        return self._now().values()

    def get(self, key: str, default: object = None) -> object:
        return self._now().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._now()

    def __repr__(self) -> str:
        return repr(self._now())


@record(frozen=True)
class Uncompilable:
    """The key of an argument whose value has no compilable type (a tuple holding a
    list or an int beyond int64): why, so that `explain()` and strict mode can say."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def typeof_or_reason(value: tuple[Any, ...]) -> Type | Uncompilable:
    try:
        return typeof(value)
    except CompileError as e:
        return Uncompilable(f"{type(value).__name__} ({e.construct})")


def _key_text(key: tuple[object, ...]) -> str:
    return "(" + ", ".join(getattr(k, "__name__", str(k)) for k in key) + ")"


def _def_location(fn: pytypes.FunctionType) -> str:
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"


#: Adaptive recompilation (`Dispatcher._adapt`): after this many deopts of one
#: signature, ...
ADAPT_AFTER = 16
#: ... which are this share of its calls at least.
ADAPT_SHARE = 0.75

#: Native signatures per compiled function (see `Dispatcher._compile_for`): far more than
#: one function used with arrays of many dtypes and layouts needs, few enough to bound the
#: memory of a function called with ever new tuple shapes.
MAX_SIGNATURES = 256
#: Signatures tested one after another by the generated entry (the rest find theirs
#: through the generic path's dictionary): each costs every call a few type tests.
MAX_FAST_PATHS = 8



def _stack_depth() -> int:
    frame = sys._getframe(1)
    n = 0
    while frame is not None:
        n += 1
        frame = frame.f_back  # type: ignore[assignment]
    return n


_PLAIN = frozenset(_SCALARS)


def _types_of(key: tuple[object, ...]) -> tuple[object, ...]:
    """An argument key's compiler types (anything else in it is left as it is)."""
    return tuple(_SCALARS[k] if k in _SCALARS else k for k in key)  # type: ignore[index]


def argument_types(args: tuple[Any, ...]) -> tuple[Type, ...] | None:
    """The compiler's types of `args`, or None when one of them does not compile."""
    argtypes = _types_of(argument_key(args))
    return argtypes if all(isinstance(t, _COMPILABLE) for t in argtypes) else None  # type: ignore[return-value]


def argument_key(args: tuple[Any, ...]) -> tuple[object, ...]:
    """What selects a specialisation: each argument's type (a tuple's item types, an
    array's dtype and dimensions; `Uncompilable` for a tuple that cannot be compiled)."""
    return tuple([type(a) if type(a) in _PLAIN and not _wide(a) else _structured_key(a) for a in args])


def _wide(value: Any) -> bool:
    """An int beyond int64: a `UINT` up to 2**64 (typeof), else not compiled."""
    return type(value) is int and not -9223372036854775808 <= value <= 9223372036854775807


_NDARRAY: Any = None  # numpy.ndarray, once NumPy is imported


def _structured_key(value: Any) -> object:
    """A tuple's or NumPy value's type; otherwise the Python type (which does not
    compile, and `_compile_for` says so)."""
    global _NDARRAY
    t = type(value)
    if t is _NDARRAY:  # the common case first: no detour through typeof
        try:
            return array_type(value)
        except CompileError:
            return t
    if t is tuple:
        return typeof_or_reason(value)
    if _NDARRAY is None and "numpy" in sys.modules:
        _NDARRAY = sys.modules["numpy"].ndarray
    found = typeof_or_reason(value)
    return t if isinstance(found, Uncompilable) else found




def compile(
    fn: Callable[..., Any] | None = None, *, signatures: list[str] | None = None, strict: bool = False, cache: bool = True
) -> Any:
    """Compile `fn` to native code: ``@compile``, ``@compile(strict=True)`` or ``compile(f)``.
    With `cache` (the default), its machine code is stored and loaded by later
    processes (artifacts/: ``CUVIL_BC_CACHE=0`` turns that off everywhere)."""
    if fn is None:
        return lambda f: Dispatcher(f, signatures=signatures, strict=strict, cache=cache).function  # type: ignore[arg-type]
    return Dispatcher(fn, signatures=signatures, strict=strict, cache=cache).function  # type: ignore[arg-type]
