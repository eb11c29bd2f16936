"""The calling conventions of compiled code.

Between compiled functions: ``{i32 status, <ret>} @name(<params>, i32 depth)``, status 0
with the result, or 1 (DEOPT) when CPython must run the call instead. `depth` counts
native calls on the stack: past `MAX_DEPTH` the call deoptimises, so runaway recursion
ends in CPython's RecursionError, never a crash.

For callers outside, each module has one entry point, with the result written as
64-bit words (see `ltypes.py`): `emit_words_entry`'s, which takes every parameter as a
word and which both the C entry (csrc/entry.c) and the dispatcher call, where the C
entry takes the signature; else `emit_entry`'s, which cffi calls with the flattened
parameters.
"""

from __future__ import annotations

from llvmlite import ir

from ..typing.models import c_params, model, words
from ..typing.types import Type
from .ltypes import F64, I32, I64, declare, from_params, llvm_param_types, llvm_type, store_words


def function_type(argtypes: tuple[Type, ...], ret: Type) -> ir.FunctionType:
    """``{i32 status, ret} (args..., i32 depth)``: status 0 with the result, or DEOPT.

    The pair comes back in registers, so a native call between compiled functions
    costs no store and reload of the result."""
    return ir.FunctionType(result_type(ret), [llvm_type(t) for t in argtypes] + [I32])


def result_type(ret: Type) -> ir.LiteralStructType:
    return ir.LiteralStructType([I32, llvm_type(ret)])


def declare_function(module: ir.Module, symbol: str, argtypes: tuple[Type, ...], ret: Type) -> ir.Function:
    return declare(module, symbol, function_type(argtypes, ret))


def call_compiled(b: ir.IRBuilder, callee: ir.Function, args: list[ir.Value], inline: bool = True) -> ir.Instruction:
    """A call of a compiled function ({status, result}), never made a tail call unless
    the caller returns the same type. On x86-64 a result with more than two doubles
    comes back partly on the x87 register stack, which the caller must pop; a tail
    call from a caller that returns less (an entry returns the status only) left them
    there, and once the stack was full every x87 load (glibc's fmod, a later such
    result) read a NaN, in whatever code ran next. Without `inline`, LLVM keeps the
    call a call."""
    same = isinstance(b.function, ir.Function) and b.function.return_value.type == callee.return_value.type
    return b.call(callee, args, tail=None if same else "notail", attrs=() if inline else ("noinline",))


def emit_entry(module: ir.Module, symbol: str, argtypes: tuple[Type, ...], ret: Type) -> str:
    """Add ``i32 @<symbol>.entry(i32 depth, <flat params>, i64* out, i64* parked)`` for
    cffi and return its name: the entry of a signature that the C entry does not
    take (`words_entry_supported`). `depth` is where the native call depth starts
    (see MAX_DEPTH). A call that fails leaves the address of its deopt record in
    ``*parked`` (cb_park_deopt, csrc/runtime.h): the caller's to free."""
    flat = [p for t in argtypes for p in llvm_param_types(t)]
    name = f"{symbol}.entry"
    fn = ir.Function(module, ir.FunctionType(I32, [I32] + flat + [I64.as_pointer(), I64.as_pointer()]), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    params = iter(fn.args[1:-2])
    args = [from_params(b, params, t, k) for k, t in enumerate(argtypes)]
    b.ret(_call(b, module, symbol, argtypes, ret, args, fn.args[0], *fn.args[-2:]))
    return name


def _call(b: ir.IRBuilder, module: ir.Module, symbol: str, argtypes: tuple[Type, ...], ret: Type, args: list[ir.Value],
          depth: ir.Value, out_words: ir.Value, parked: ir.Value) -> ir.Value:
    """Call the compiled function with `args`; store its result's words at `out_words`
    or park its deopt record in `parked`; the call's status."""
    # (Not inlined: the function is the module's one body that other modules' code
    # calls, and an inlined copy of it in the entry made LLVM's optimisation and code
    # generation up to half as long again; a direct call costs a few ns against the
    # boundary's ~100.)
    pair = call_compiled(b, declare_function(module, symbol, argtypes, ret), args + [depth], inline=False)
    status = b.extract_value(pair, 0)
    with b.if_else(b.icmp_signed("==", status, ir.Constant(I32, 0))) as (ok, failed):
        with ok:
            store_words(b, out_words, b.extract_value(pair, 1), ret, 0)
        with failed:
            # The thread's deopt record goes to the caller at once, before the
            # interpreter runs anything that could overwrite it.
            park = declare(module, "cb_park_deopt", ir.FunctionType(I64.as_pointer(), []))
            b.store(b.ptrtoint(b.call(park, []), I64), parked)
    return status


def words_entry_supported(argtypes: tuple[Type, ...], ret: Type) -> bool:
    """Signatures that the C entry (csrc/entry.c) calls: arguments and a result that
    it can unbox and box, each within its word limit."""
    flat = [c for t in argtypes for c in c_params(t)]
    return (
        all(model(t).unboxable(t) for t in argtypes)
        and model(ret).boxable(ret)
        and len(flat) <= ENTRY_WORDS
        and words(ret) <= ENTRY_WORDS
    )


#: The most words of arguments, and of result, that the C entry passes (CB_ENTRY_WORDS
#: in csrc/entry.c).
ENTRY_WORDS = 64


def emit_words_entry(module: ir.Module, symbol: str, argtypes: tuple[Type, ...], ret: Type) -> str:
    """Add ``i32 @<symbol>.words(i64* calls, i64* in, i64* out, i32 depth, i64* parked)``
    and return its name: the signature's one entry, which the C entry calls, and the
    dispatcher's own calls too (boxing.make_words_caller). It reads the flattened
    parameters from `in` and runs the function at native call depth `depth` (see
    MAX_DEPTH: the C entry computes it from the thread's recursion budget for code
    that calls compiled functions, else 0). A call that completes adds one to `*calls`
    (atomically: callers do not hold the GIL). Returns the status: nonzero when the
    call must be finished by CPython, its deopt record's address then in `*parked`.
    (One entry, not this one besides `emit_entry`'s: a module's second entry cost
    LLVM a tenth of its time.)"""
    name = f"{symbol}.words"
    words_ptr = I64.as_pointer()
    fn = ir.Function(module, ir.FunctionType(I32, [words_ptr, words_ptr, words_ptr, I32, words_ptr]), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    calls, given, out, depth, parked = fn.args
    flat = []
    for k, ty in enumerate(p for t in argtypes for p in llvm_param_types(t)):
        word = b.load(b.gep(given, [ir.Constant(I64, k)]))
        flat.append(b.bitcast(word, F64) if ty == F64 else word)
    params = iter(flat)
    args = [from_params(b, params, t, k) for k, t in enumerate(argtypes)]
    status = _call(b, module, symbol, argtypes, ret, args, depth, out, parked)
    ok = b.icmp_signed("==", status, ir.Constant(I32, 0))
    b.atomic_rmw("add", calls, b.zext(ok, I64), "monotonic")
    b.ret(status)
    return name
