"""The loader of compiled machine code (lower/objload.py): relocatable objects from
LLVM, loaded without LLVM. Every compile uses it (LLVM's MCJIT only where it refuses
an object), so the whole suite runs its code; these tests cover what the suite
cannot reach: its refusals, the fallback to MCJIT, and calls between code that
each loader loaded."""

from __future__ import annotations

import ctypes
from typing import Callable

import llvmlite.binding as llvm
import numpy as np
import pytest

from cuvil_bc.lower import jit, objload
from cuvil_bc.testing import check, compile_source

MODULE = """
@counter = global i64 0
@table = private unnamed_addr constant [4 x double] [double 1.5, double 2.5, double 4.0, double 8.0]
declare double @pow(double, double)
declare i64 @helper(i64)

define double @f(i64 %k, double %x) {
  %c = load i64, ptr @counter
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @counter
  %p = getelementptr [4 x double], ptr @table, i64 0, i64 %k
  %t = load double, ptr %p
  %y = call double @pow(double %x, double %t)
  %h = call i64 @helper(i64 %k)
  %hf = sitofp i64 %h to double
  %r = fadd double %y, %hf
  ret double %r
}

define i64 @count() {
  %c = load i64, ptr @counter
  ret i64 %c
}
"""

HELPER = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(lambda k: 100 * k)


def _object(text: str) -> bytes:
    machine = jit.get_jit().tm
    module = llvm.parse_assembly(text)
    module.triple, module.data_layout = llvm.get_process_triple(), str(machine.target_data)
    return machine.emit_object(module)


def _resolve(name: str) -> int | None:
    if name == "helper":
        return ctypes.cast(HELPER, ctypes.c_void_p).value
    function = jit.c_function(name)
    return ctypes.cast(function, ctypes.c_void_p).value if function is not None else None


def test_code_constants_data_and_external_calls() -> None:
    found = objload.load(_object(MODULE), _resolve)
    assert set(found) == {"f", "count", "counter"}
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int64, ctypes.c_double)(found["f"])
    count = ctypes.CFUNCTYPE(ctypes.c_int64)(found["count"])
    assert f(2, 3.0) == 3.0**4.0 + 200
    assert f(0, 2.0) == 2.0**1.5
    assert count() == 2 and ctypes.c_int64.from_address(found["counter"]).value == 2


def test_what_it_refuses() -> None:
    with pytest.raises(objload.Unresolved, match="helper"):
        objload.load(_object(MODULE), lambda name: None if name == "helper" else _resolve(name))
    with pytest.raises(objload.NotLoadable, match="not a little-endian x86-64"):
        objload.load(b"\x7fELF" + bytes(60), _resolve)


def test_a_damaged_object_is_refused_not_read_beyond() -> None:
    """(A stored object may be truncated or corrupt: found by a helper, whose patched
    section size made the loader copy from beyond the bytes: a segfault.)"""
    import random
    import struct

    obj = _object(MODULE)
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shnum, = struct.unpack_from("<H", obj, 0x3C)
    for k in range(1, shnum):  # each section's size made 64 MiB in turn (but .bss's)
        if struct.unpack_from("<I", obj, shoff + k * 64 + 4)[0] == 8:
            continue
        patched = bytearray(obj)
        struct.pack_into("<Q", patched, shoff + k * 64 + 32, 1 << 26)
        with pytest.raises(objload.NotLoadable):
            objload.load(bytes(patched), _resolve)
    for cut in range(0, len(obj), 37):
        with pytest.raises(objload.NotLoadable):
            objload.load(obj[:cut], _resolve)
    rng = random.Random(7)
    for _ in range(300):  # a few flipped bytes: refused, or loaded as something
        damaged = bytearray(obj)
        for _ in range(3):
            damaged[rng.randrange(len(obj))] ^= 1 << rng.randrange(8)
        try:
            objload.load(bytes(damaged), _resolve)
        except objload.NotLoadable:
            pass


def test_code_that_needs_a_missing_library_function_does_not_compile() -> None:
    """LLVM makes an i128 remainder a call to libgcc's __umodti3, which this process
    lacks: MCJIT loaded such code and it called address 0. Now it is a CompileError
    (the call falls back to the interpreter)."""
    from llvmlite import ir

    from cuvil_bc.errors import CompileError

    machine = jit.get_jit()
    module = machine.new_module("needs_umodti3")
    i128 = ir.IntType(128)
    fn = ir.Function(module, ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)]), "cb.test.umod")
    b = ir.IRBuilder(fn.append_basic_block())
    a, c = (b.zext(arg, i128) for arg in fn.args)
    b.ret(b.trunc(b.urem(b.shl(a, ir.Constant(i128, 64)), c), ir.IntType(64)))
    with pytest.raises(CompileError, match="__umodti3"):
        machine.compile(module)


def test_a_module_holds_its_callees_and_mcjit_loads_what_the_loader_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiled function's module holds its native callees: loading it asks for no
    other module's symbol (so that it can be stored and loaded by another process).
    A module the loader refuses goes to MCJIT, with its resume points' numbers."""
    real = objload.load
    asked: list[str] = []

    def spy(obj: bytes, resolve: Callable[[str], int | None]) -> dict[str, int]:
        return real(obj, lambda name: asked.append(name) or resolve(name))

    monkeypatch.setattr(objload, "load", spy)
    callee = compile_source("def g(x):\n    return x * 3 + 1\n", name="g")
    check(callee, 5)
    caller = compile_source("def h(x):\n    return g(x) + g(x + 1)\n", name="h", g=callee)
    check(caller, 7)
    assert asked and not any(name.startswith("cb.") for name in asked), asked

    def refuse(obj: bytes, resolve: object) -> dict[str, int]:
        raise objload.NotLoadable("refused by the test")

    monkeypatch.setattr(objload, "load", refuse)
    caller2 = compile_source("def h2(x):\n    return g(x) * 2\n", name="h2", g=callee)
    check(caller2, 9)  # loaded by MCJIT, with its own copy of g
    writer = compile_source("def w(a, n):\n    for i in range(n):\n        a[i] = a[i] * 2.0\n    return a\n", name="w")
    check(writer, np.ones(4), 4)
    with pytest.raises(IndexError):
        writer(np.ones(4), 6)  # a deopt through a resume point whose number MCJIT was given
    assert writer.stats["deopts"] == 1


def test_pages_that_cannot_be_made_executable_go_to_mcjit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process whose policy refuses executable pages to mprotect (W^X) gets LLVM's
    loader, as before the loader existed, instead of an internal error."""
    monkeypatch.setattr(objload._libc, "mprotect", lambda *args: -1)
    with pytest.raises(objload.NotLoadable, match="mprotect failed"):
        objload.load(_object(MODULE), _resolve)
    f = compile_source("def f(x):\n    return x * 7 - 2\n")
    check(f, 6)


def test_the_loaders_memory_constants_are_the_systems() -> None:
    # (written out rather than imported from `mmap`, which costs a cached function's
    # first call a millisecond)
    import mmap

    assert (objload._PROT_READ, objload._PROT_WRITE, objload._PROT_EXEC) == (mmap.PROT_READ, mmap.PROT_WRITE, mmap.PROT_EXEC)
    assert (objload._MAP_PRIVATE, objload._MAP_ANONYMOUS, objload._PAGE) == (mmap.MAP_PRIVATE, mmap.MAP_ANONYMOUS, mmap.PAGESIZE)
