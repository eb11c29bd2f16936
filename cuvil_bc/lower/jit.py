"""The process-wide LLVM JIT: modules optimised for the host CPU, made into relocatable
objects and loaded by objload.py (or, where it refuses one, by an MCJIT engine).

Each module holds a compiled function with all its native callees (compiler.py), so no
module calls another's code: an object can be stored and loaded by another process.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import weakref
from typing import Any, Callable, Iterator

import llvmlite.binding as llvm
from llvmlite import ir

from .. import cancel, priority
from ..stages import stage
from . import objload
from .runtime import c_function, resolve

_lock = threading.RLock()
_jit: "JIT | None" = None


class JIT:
    def __init__(self) -> None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        self.tm = target.create_target_machine(
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(),
            opt=3,
            codemodel="jitdefault",
        )
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.tm)
        from .runtime import RUNTIME_SYMBOLS, prepare

        for name in sorted(RUNTIME_SYMBOLS):  # (for the modules that MCJIT loads)
            llvm.add_symbol(name, resolve(name))
        prepare()

    def new_module(self, name: str) -> ir.Module:
        module = ir.Module(name=name)
        module.triple = llvm.get_process_triple()
        module.data_layout = str(self.tm.target_data)
        return module

    def compile(self, module: ir.Module, numbers: dict[str, int] | None = None) -> "Loaded":
        """Verify, optimise and load `module`, which calls no code of other modules.
        `numbers` are the values of the symbols that stand for numbers in its code
        (its resume points': deopt.point_symbol)."""
        numbers = numbers or {}
        cancel.check()
        check_headroom()
        with stage("lowering"):  # (llvmlite's IR, as the text LLVM parses)
            text = str(module)
            late = _late_text(module)
        with priority.paused():  # (LLVM runs without the GIL: see priority.py)
            with stage("llvm-optimisation"):
                mod = llvm.parse_assembly(text)
                mod.verify()
                pto = llvm.create_pipeline_tuning_options(speed_level=2)
                pb = llvm.create_pass_builder(self.tm, pto)
                quiet = _missed_unrolls_unheard() if _FORCED_UNROLL in text else contextlib.nullcontext()
                with _tuned_options(), quiet:
                    if light_pipeline(text):
                        _light(mod, pb)
                    else:
                        pb.getModulePassManager().run(mod, pb)
                    if late:
                        side = llvm.parse_assembly(late)
                        side.triple, side.data_layout = mod.triple, mod.data_layout
                        mod.link_in(side)
                    if _VARIANTS in text or late:
                        _inline_variants(mod, pb)
                cancel.check()  # (between optimisation and code generation: see cancel.py)
                _check_externals(mod)
                optimized = str(mod)
            with stage("machine-code"):
                obj = self.tm.emit_object(mod)
                with _lock:
                    try:
                        found = objload.load(obj, lambda name: numbers.get(name) or resolve(name))
                    except objload.Unresolved as e:
                        from ..errors import CompileError

                        raise CompileError(f"native code would need {e}, which this process does not provide") from None
                    except objload.NotLoadable:
                        found = None
                    if found is None:  # (LLVM's own loader: MCJIT)
                        for name, number in numbers.items():
                            llvm.add_symbol(name, number)
                        self.engine.add_module(mod)
                        self.engine.finalize_object()
                        # The machine code stays loaded; the engine no longer keeps the
                        # module's IR.
                        self.engine.remove_module(mod)
                        return Loaded(optimized, None, {}, self.engine)
        return Loaded(optimized, obj, found, None)

    def assembly(self, optimized: str) -> str:
        """Machine code for optimised IR text, as `compile` produced it. Only for
        inspection, so it is generated on demand: it would add a third to a compile."""
        return self.tm.emit_assembly(llvm.parse_assembly(optimized))


class Loaded:
    """A module's code, loaded: its optimised IR text, its object (None when MCJIT
    loaded it) and the addresses of its symbols."""

    def __init__(self, optimized: str, obj: bytes | None, symbols: dict[str, int], engine: Any) -> None:
        self.optimized = optimized
        self.object = obj
        self.symbols = symbols
        self.engine = engine

    def address(self, name: str) -> int:
        addr = self.symbols.get(name) or (self.engine.get_function_address(name) if self.engine is not None else 0)
        if not addr:
            raise AssertionError(f"the module has no symbol {name}")
        return addr


#: Two process-wide LLVM options are set while this JIT optimises a module, and only
#: then, so other users of llvmlite in the process (Numba) keep LLVM's defaults:
#:
#: * ``-force-ordered-reductions``: LLVM vectorizes a loop that sums floats only where
#:   it may reorder the sum, unless it may keep the sum's adds in order ("ordered
#:   reductions": each vector of terms is added one lane after another, so the result
#:   is bit for bit the sequential one) while the rest of the loop runs in vectors. On
#:   x86-64 that is off by default. A sum of squared stencil values runs ~1.3x faster.
#: * ``-enable-mem-access-versioning=false``: for an access whose stride is only known
#:   at run time (``pts[j, 0]``, a row stride), the vectorizer otherwise keeps the
#:   vector loop behind a test that the stride is 1. Element addresses here are byte
#:   offsets (`access.ArrayAccess.element_pointer`), so that test means one *byte* and never holds
#:   for a wider element: the vector loop was dead code, where without the test LLVM
#:   uses gathers (pairwise distances with vector square roots: ~0.65x the time).
_TUNED = llvm.get_process_triple().startswith("x86_64")
_OPTIONS = (("-force-ordered-reductions=true", "-force-ordered-reductions=false"),
            ("-enable-mem-access-versioning=false", "-enable-mem-access-versioning=true"))
_options_lock = threading.Lock()
_options_users = 0


@contextlib.contextmanager
def _tuned_options() -> Iterator[None]:
    global _options_users
    if not _TUNED:
        yield
        return
    with _options_lock:
        if _options_users == 0:
            for on, _ in _OPTIONS:
                llvm.set_option("", on)
        _options_users += 1
    try:
        yield
    finally:
        with _options_lock:
            _options_users -= 1
            if _options_users == 0:
                for _, off in _OPTIONS:
                    llvm.set_option("", off)


_LATE: "weakref.WeakKeyDictionary[ir.Module, list[Callable[[ir.Module], None]]]" = weakref.WeakKeyDictionary()


def define_late(module: ir.Module, define: Callable[[ir.Module], None]) -> None:
    """Have `define` define, in a module of its own, functions that `module` only
    declares: they are linked in and inlined (they must be ``alwaysinline``) after
    the optimization pipeline, so that until then LLVM sees only the declaration's
    attributes. A call it cannot see into (and may take as pure) can be replaced by a
    vector variant (powers.py), where the body's branch would have kept the loop
    from vectorizing as well."""
    _LATE.setdefault(module, []).append(define)


def _late_text(module: ir.Module) -> str:
    defines = _LATE.pop(module, None)
    if not defines:
        return ""
    side = ir.Module(name=f"{module.name}.late")
    side.triple, side.data_layout = module.triple, module.data_layout
    for define in defines:
        define(side)
    return str(side)


#: A module with more Python int remainders (``%``, `REMAINDER`) than this is optimised
#: by `_light`. LLVM's InstCombine takes time that grows with about the square, or the
#: cube, of the number of remainders in a chain of them, once their divisors are
#: constants: a function of 50 lines ``s = (s * 7 + k) % 1000003`` took 0.9 s to
#: optimise, 100 lines 6.4 s, and 100 lines ``s = s % (1000003 + k)`` 3.3 s (300: 76 s),
#: against ~10 ms for a kernel; the hook's exit waits for an optimisation under way. A
#: loop of a few remainders, as kernels have, never comes near. (Floor divisions, which
#: compute a remainder too, do not show it: 300 lines of ``//`` took 0.13 s. Variable
#: divisors do not either, but the lowered module does not tell which divisors LLVM
#: will find constant: each counts.)
REMAINDERS = 32

#: The name of the value of a Python int ``%`` in the lowered module (lower/numeric.py):
#: what `light_pipeline` counts.
REMAINDER = "rem"
_REMAINDER = re.compile(rf'%"{REMAINDER}(?:\.\d+)?" = srem ')


def light_pipeline(text: str) -> bool:
    """Whether the module (its unoptimised IR text) is optimised by `_light`."""
    return len(_REMAINDER.findall(text)) > REMAINDERS


def _light(mod: llvm.ModuleRef, pb: llvm.PassBuilder) -> None:
    """A short pipeline, without InstCombine: registers for the locals, constants and
    redundancies folded, dead code and empty blocks removed. Its code is slower than
    the full pipeline's (no loop optimisations, no vectors), and it is used only where
    that would take seconds (`REMAINDERS`); code generation still selects
    multiplications for division by a constant."""
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.add_sroa_pass()
    mpm.add_simplify_cfg_pass()
    mpm.add_sccp_pass()
    mpm.add_new_gvn_pass()
    mpm.add_aggressive_dce_pass()
    mpm.add_simplify_cfg_pass()
    mpm.run(mod, pb)


#: The attribute that names a call's vector variants (powers.py): those the loop
#: vectorizer called are inlined afterwards, their rare scalar calls kept behind a
#: test of the mask (the pipeline's own inliner ran before the vectorizer).
_VARIANTS = "vector-function-abi-variant"


def _inline_variants(mod: llvm.ModuleRef, pb: llvm.PassBuilder) -> None:
    """Inline the variants the vectorizer called (and `define_late`'s bodies), then
    drop those no code calls any more: they were only kept visible for the
    vectorizer, and each would cost machine code (a square's module carried a
    dozen)."""
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    mpm.add_simplify_cfg_pass()
    mpm.add_instruction_combine_pass()
    mpm.run(mod, pb)
    for fn in mod.functions:
        if not fn.is_declaration and fn.name.startswith(INLINED_PREFIX):
            fn.linkage = "internal"
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_global_dead_code_eliminate_pass()
    mpm.run(mod, pb)


#: The names of functions that exist only to be inlined after the pipeline (and
#: their out-of-line helpers): powers.py's.
INLINED_PREFIX = "cb_pow_settle_"


#: The loop metadata of a buffered strip (lower/strips.py), which asks LLVM to unroll
#: it completely.
_FORCED_UNROLL = "llvm.loop.unroll.full"
_MISSED = b"warning: <unknown>:0:0: loop not unrolled:"
_stderr_lock = threading.Lock()


@contextlib.contextmanager
def _missed_unrolls_unheard() -> Iterator[None]:
    """Keep LLVM's "loop not unrolled" warnings off the process's stderr while it
    optimizes a module with a forced unroll. LLVM prints them to file descriptor 2
    itself, where the program's user would see them (found by the fuzzers: a strip
    whose loop LLVM's jump threading had given two latches). The strip then runs
    rolled, which is slower, not wrong. What anything else writes to stderr meanwhile
    (another thread of the program) is written out after the optimization, in order."""
    import sys
    import tempfile

    with _stderr_lock, tempfile.TemporaryFile() as held:
        for stream in (sys.stderr, sys.__stderr__):
            if stream is not None:
                stream.flush()
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = b"".join(line for line in held.read().splitlines(keepends=True) if not line.startswith(_MISSED))
            while kept:
                kept = kept[os.write(2, kept) :]


#: Address space LLVM may need for one compile. LLVM aborts the process when an
#: allocation fails ("LLVM ERROR: out of memory"), which a Python program under a
#: memory limit survives: so with less than this left, nothing is compiled.
HEADROOM = 256 << 20


def check_headroom() -> None:
    """Refuse to compile (the call runs in CPython) when a resource limit on address
    space or data leaves less than `HEADROOM` above what the process uses now."""
    import resource

    from ..errors import CompileError

    limits = []
    for which in ("RLIMIT_AS", "RLIMIT_DATA"):
        kind = getattr(resource, which, None)
        if kind is not None:
            soft = resource.getrlimit(kind)[0]
            if soft != resource.RLIM_INFINITY:
                limits.append(soft)
    if not limits:
        return
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()  # all mapped memory
    except (OSError, ValueError, IndexError):
        used = 0
    if min(limits) - used < HEADROOM:
        raise CompileError(f"not compiled: a memory limit leaves less than {HEADROOM >> 20} MiB for LLVM")


def _check_externals(mod: llvm.ModuleRef) -> None:
    """Refuse a module that calls a function the process cannot provide: MCJIT would
    otherwise jump to address 0 (or abort) when the code runs."""
    from ..errors import CompileError
    from .runtime import RUNTIME_SYMBOLS

    for fn in mod.functions:
        name = fn.name
        if not fn.is_declaration or name.startswith("llvm.") or name in RUNTIME_SYMBOLS:
            continue
        if c_function(name) is None:
            raise CompileError(f"native code would need {name}(), which this process does not provide")


def get_jit() -> JIT:
    global _jit
    with _lock:
        if _jit is None:
            check_headroom()
            _jit = JIT()
        return _jit


# -- fork -------------------------------------------------------------------------------
#
# A fork copies only the thread that calls it. Had another thread been inside LLVM then
# (compiling), the child would inherit LLVM (and the engine) half way through an
# operation, and the locks around it held by a thread that does not exist there: its
# first compile would wait forever. So a fork waits until no thread is in
# the engine or in an LLVM call (both are short, and neither waits for anything but the
# GIL, which the waiting fork releases), and both locks are released on each side. The
# compiler's own lock (held for a whole compile, over Python code that may import) is
# not waited for: `Compiler` replaces it in the child instead.


def _llvm_lock() -> Any:
    """llvmlite's lock around every call into LLVM (private, so looked up with care)."""
    from llvmlite.binding import ffi

    lock = getattr(getattr(getattr(ffi, "lib", None), "_lock", None), "_lock", None)
    return lock if hasattr(lock, "acquire") and hasattr(lock, "release") else None


_held_for_fork: list[object] = []


def _before_fork() -> None:
    _lock.acquire()
    _held_for_fork.append(_lock)
    llvm_lock = _llvm_lock()
    if llvm_lock is not None:
        llvm_lock.acquire()
        _held_for_fork.append(llvm_lock)


def _after_fork_in_parent() -> None:
    while _held_for_fork:
        _held_for_fork.pop().release()  # type: ignore[attr-defined]


def _after_fork_in_child() -> None:
    global _options_lock, _options_users
    _after_fork_in_parent()
    # A thread inside `_tuned_options` at the fork will never leave it in the child.
    _options_lock = threading.Lock()
    if _options_users:
        _options_users = 0
        for _, off in _OPTIONS:
            llvm.set_option("", off)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
