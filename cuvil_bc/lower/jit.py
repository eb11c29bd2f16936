"""The process-wide LLVM JIT: one MCJIT engine, modules optimised at O3 for the host CPU.

Modules are added to the same engine, so a function compiled later can call one
compiled earlier by its symbol name.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from typing import Iterator

import llvmlite.binding as llvm
from llvmlite import ir

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
        self.defined: set[str] = set()  # functions defined by modules already loaded
        from .runtime import register_symbols

        register_symbols()

    def new_module(self, name: str) -> ir.Module:
        module = ir.Module(name=name)
        module.triple = llvm.get_process_triple()
        module.data_layout = str(self.tm.target_data)
        return module

    def compile(self, module: ir.Module) -> str:
        """Verify, optimise and load `module`; return its optimised LLVM IR text."""
        text = str(module)
        mod = llvm.parse_assembly(text)
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=2)
        pb = llvm.create_pass_builder(self.tm, pto)
        with _tuned_options():
            pb.getModulePassManager().run(mod, pb)
        _check_externals(mod, self.defined)
        optimized = str(mod)
        with _lock:
            self.engine.add_module(mod)
            self.engine.finalize_object()
            self.defined.update(fn.name for fn in mod.functions if not fn.is_declaration)
        return optimized

    def assembly(self, optimized: str) -> str:
        """Machine code for optimised IR text, as `compile` produced it. Only for
        inspection, so it is generated on demand: it would add a third to a compile."""
        return self.tm.emit_assembly(llvm.parse_assembly(optimized))

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise AssertionError(f"JIT has no symbol {name}")
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
#:   offsets (`codegen.element_pointer`), so that test means one *byte* and never holds
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


def _check_externals(mod: llvm.ModuleRef, defined: set[str]) -> None:
    """Refuse a module that calls a function the process cannot provide: MCJIT would
    otherwise jump to address 0 (or abort) when the code runs."""
    from ..errors import CompileError
    from .runtime import RUNTIME_SYMBOLS

    process = ctypes.CDLL(None)
    for fn in mod.functions:
        name = fn.name
        if not fn.is_declaration or name.startswith("llvm.") or name in RUNTIME_SYMBOLS or name in defined:
            continue
        if not hasattr(process, name) and _find_in_libm(name) is None:
            raise CompileError(f"native code would need {name}(), which this process does not provide")


def _find_in_libm(name: str) -> object:
    import ctypes.util

    path = ctypes.util.find_library("m")
    try:
        return getattr(ctypes.CDLL(path), name) if path else None
    except AttributeError:
        return None


def get_jit() -> JIT:
    global _jit
    with _lock:
        if _jit is None:
            _jit = JIT()
        return _jit
