"""Lowering of the primitives (`typing/primitives.py`): one function per `OWN` row,
under its name, and the functions that lower every `LIBM` and `CPYTHON` row. Each
takes concrete argument types (unions are already split)."""

from __future__ import annotations

import functools
import math
from typing import Callable

from llvmlite import binding as _llvm, ir

from ..typing.primitives import CPYTHON, LIBM, OWN, VIA_CPYTHON, Primitive
from ..typing.types import BOOL, COMPLEX, FLOAT, INT, NP_BOOL, NP_F64, UINT, ArrayType, NpScalar, TupleType, Type, base
from . import complexes, norms
from .emitter import Emitter, Typed, is_finite
from .ltypes import F64, I1, I32, I64, llvm_type, math_function
from .numeric import binop, compare, cpython_pow, deopt_on_float_error, numpy_abs, to_float32, truth

Lowering = Callable[[Emitter, list[Typed], Type], Typed]
TWO63 = 2.0**63
X86_64 = _llvm.get_process_triple().startswith("x86_64")


def float_to_int(em: Emitter, x: ir.Value) -> ir.Value:
    """`x` truncated towards zero, as int64 (``int(x)``); NaN, infinities and
    ``abs(x) >= 2**63`` deoptimise (-2**63 itself too: one compare, not two)."""
    b = em.builder
    if X86_64:
        # cvttsd2si answers -2**63 for NaN and out-of-range values (defined, unlike
        # fptosi): one integer compare of the result replaces a float range test.
        vec = b.insert_element(ir.Constant(ir.VectorType(F64, 2), None), x, ir.Constant(I32, 0))
        n = em.intrinsic("llvm.x86.sse2.cvttsd2si64", I64, [vec])
        em.deopt_if(b.icmp_signed("==", n, em.i64(-(2**63))))
        return n
    em.deopt_if(b.not_(b.fcmp_ordered("<", em.intrinsic("llvm.fabs.f64", F64, [x]), em.f64(TWO63))))
    if em.strip is not None:  # the guard only sets a flag: stay defined for any x
        return em.intrinsic("llvm.fptosi.sat.i64.f64", I64, [x])
    return b.fptosi(x, I64)


def _abs(em: Emitter, args: list[Typed], result: Type) -> Typed:
    (a,) = args
    if isinstance(a[1], NpScalar):
        return numpy_abs(em, a)
    if a[1] == FLOAT:
        return em.absolute(a[0]), FLOAT
    if a[1] == COMPLEX:
        return complexes.absolute(em, a)
    x = em.as_int(a)
    neg = em.builder.icmp_signed("<", x, em.i64(0))
    return em.builder.select(neg, em.checked("ssub", em.i64(0), x), x), INT


def _minmax_mixed(op: str) -> Lowering:
    """min/max over arguments of different types: compare concrete values pairwise,
    keeping the winner's index, then select the winner represented as the union."""

    def lower(em: Emitter, args: list[Typed], result: Type) -> Typed:
        b = em.builder
        if all(a[1] == result for a in args):
            best = args[0]
            for item in args[1:]:
                best = (em.select_leaves(compare(em, op, item, best), item[0], best[0]), result)
            return best
        # Mixed concrete types: keep a union-typed running best and compare each item
        # against every possible type of the best so far.
        best_val = em.coerce(args[0][0], args[0][1], result)
        for item in args[1:]:

            def beats(vs: list[Typed], item: Typed = item) -> Typed:
                return compare(em, op, item, vs[0]), BOOL

            better = em.split([(best_val, result)], BOOL, beats, branchless=True)
            best_val = em.select_leaves(better, em.coerce(item[0], item[1], result), best_val)
        return best_val, result

    return lower


def _int(em: Emitter, args: list[Typed], result: Type) -> Typed:
    (a,) = args
    if a[1] == FLOAT:
        return float_to_int(em, a[0]), INT
    return em.as_int(a), INT


def _float(em: Emitter, args: list[Typed], result: Type) -> Typed:
    return em.as_float(args[0]), FLOAT


def _bool(em: Emitter, args: list[Typed], result: Type) -> Typed:
    return truth(em, args[0]), BOOL


def _round(em: Emitter, args: list[Typed], result: Type) -> Typed:
    (a,) = args
    if a[1] != FLOAT:
        return em.as_int(a), INT
    return float_to_int(em, em.intrinsic("llvm.roundeven.f64", F64, [a[0]])), INT


def _divmod(em: Emitter, args: list[Typed], result: Type) -> Typed:
    assert isinstance(result, TupleType)
    q = binop(em, "//", args[0], args[1], result.items[0])
    r = binop(em, "%", args[0], args[1], result.items[1])
    out = ir.Constant(llvm_type(result), ir.Undefined)
    out = em.builder.insert_value(out, q[0], 0)
    return em.builder.insert_value(out, r[0], 1), result


def _pow(em: Emitter, args: list[Typed], result: Type) -> Typed:
    if len(args) == 2:
        return binop(em, "**", args[0], args[1], result)
    return _powmod(em, *(em.as_int(a) for a in args)), INT


def _powmod(em: Emitter, base: ir.Value, exp: ir.Value, mod: ir.Value) -> ir.Value:
    """pow(base, exp, mod) for exp >= 0 and |mod| < 2**32, so that products of residues
    fit in 64 bits (a 128-bit remainder would need a libgcc helper that the JIT cannot
    rely on). The result takes the sign of mod, as in CPython. Anything else (a zero or
    large modulus, a negative exponent) deoptimises."""
    b = em.builder
    big = b.icmp_unsigned(">=", b.add(mod, em.i64(2**32 - 1)), em.i64(2**33 - 1))
    bad = b.or_(b.icmp_signed("==", mod, em.i64(0)), big)
    em.deopt_if(bad)
    em.deopt_if(b.icmp_signed("<", exp, em.i64(0)))
    mod = b.select(bad, em.i64(1), mod)  # keep the remainders defined until the guard check
    exp = b.select(b.icmp_signed("<", exp, em.i64(0)), em.i64(0), exp)
    m = b.select(b.icmp_signed("<", mod, em.i64(0)), b.sub(em.i64(0), mod), mod)
    r0 = b.srem(base, m)
    r0 = b.select(b.icmp_signed("<", r0, em.i64(0)), b.add(r0, m), r0)
    one = b.urem(em.i64(1), m)  # 1 % m: 0 when |m| is 1
    entry = b.block
    loop = em.block("powmod.loop")
    body = em.block("powmod.body")
    done = em.block("powmod.done")
    b.branch(loop)
    b.position_at_end(loop)
    acc = b.phi(I64)
    bas = b.phi(I64)
    e = b.phi(I64)
    acc.add_incoming(one, entry)
    bas.add_incoming(r0, entry)
    e.add_incoming(exp, entry)
    b.cbranch(b.icmp_signed("==", e, em.i64(0)), done, body)
    b.position_at_end(body)

    def mulmod(x: ir.Value, y: ir.Value) -> ir.Value:
        return b.urem(b.mul(x, y), m)  # both below 2**32

    acc2 = b.select(b.trunc(e, I1), mulmod(acc, bas), acc)
    acc.add_incoming(acc2, body)
    bas.add_incoming(mulmod(bas, bas), body)
    e.add_incoming(b.lshr(e, em.i64(1)), body)
    b.branch(loop)
    b.position_at_end(done)
    negative = b.and_(b.icmp_signed("<", mod, em.i64(0)), b.icmp_signed("!=", acc, em.i64(0)))
    return b.select(negative, b.sub(acc, m), acc)


def _len(em: Emitter, args: list[Typed], result: Type) -> Typed:
    t = args[0][1]
    if isinstance(t, ArrayType):
        return em.builder.extract_value(args[0][0], 1), INT  # its first extent
    assert isinstance(t, TupleType)
    return em.i64(len(t.items)), INT


def _range(em: Emitter, args: list[Typed], result: Type) -> Typed:
    vals = [em.as_int(a) for a in args]
    if len(vals) == 1:
        vals = [em.i64(0), vals[0], em.i64(1)]
    elif len(vals) == 2:
        vals.append(em.i64(1))
    out = ir.Constant(llvm_type(result), ir.Undefined)
    for i, v in enumerate(vals):
        out = em.builder.insert_value(out, v, i)
    return out, result


# -- math ----------------------------------------------------------------------


def _libm(name: str, c_name: str = "", float_errors: bool = True) -> Lowering:
    """The C library's function `name` (CPython's `math` calls it too), or the
    runtime's copy of CPython's own algorithm (`c_name`, csrc/pymath.c), with
    CPython's error rules tested natively (math_1, math_2: a NaN from non-NaN
    arguments is a domain error, an infinity from finite ones a domain or range error)."""

    def lower(em: Emitter, args: list[Typed], result: Type) -> Typed:
        xs = [em.as_float(a) for a in args]
        if name == "hypot":
            return _hypot(em, xs), FLOAT
        if c_name:
            r = em.libm(c_name, F64, xs)
        elif name == "sqrt":
            r = em.intrinsic("llvm.sqrt.f64", F64, xs)
        elif name == "fabs":
            return em.absolute(xs[0]), FLOAT
        elif name == "copysign":
            return em.intrinsic("llvm.copysign.f64", F64, xs), FLOAT
        elif name == "pow":
            r = cpython_pow(em, *xs)
        else:
            r = em.libm(name, F64, xs)
        if name == "atan2":
            # CPython's m_atan2 answers a NaN argument with its own NaN (Py_NAN), not
            # with the argument, whose sign may differ.
            either = em.builder.fcmp_unordered("uno", *xs)
            return em.builder.select(either, ir.Constant(F64, _CPYTHON_NAN), r), FLOAT
        if float_errors:
            deopt_on_float_error(em, r, xs)
        return r, FLOAT

    return lower


def _hypot(em: Emitter, xs: list[ir.Value]) -> ir.Value:
    """``math.hypot(*xs)``: CPython's algorithm inline (norms.py), and the runtime's
    copy (cb_hypot, which takes the coordinates in memory) for what is rare."""

    def call() -> ir.Value:
        b = em.builder
        mem = em.alloca(ir.ArrayType(F64, max(1, len(xs))))
        for k, x in enumerate(xs):
            b.store(x, b.gep(mem, [ir.Constant(I32, 0), ir.Constant(I32, k)]))
        fn = em.declare("cb_hypot", F64, [I64, F64.as_pointer()])
        math_function(fn, reads_arguments=True)
        return b.call(fn, [em.i64(len(xs)), b.gep(mem, [ir.Constant(I32, 0), ir.Constant(I32, 0)])])

    from .runtime import lib

    return norms.hypot(em, xs, bool(lib.cb_hypot_uses_fma()), call)


@functools.cache
def libm_agrees(name: str) -> bool:
    """Whether ``math.<name>`` is the C library's `name` (one float argument): the
    same bits on every sample point, from tiny to huge, both signs, NaN and the
    infinities. CPython computes ``math.erf`` and ``erfc`` with the C library's where
    its build found one; its own series (another build) differ in the last bit on
    about half of these points, so a build that uses them is caught."""
    import ctypes
    import random
    import struct

    from .runtime import c_function as find

    c_function = find(name)
    if c_function is None:
        return False
    c_function.restype, c_function.argtypes = ctypes.c_double, [ctypes.c_double]
    py_function = getattr(math, name, None)
    if py_function is None:
        return False
    rng = random.Random(20261204)
    points = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1e-300, 0.5, 1.0, 2.0, 6.0, 27.0, 1e300]
    points += [rng.uniform(-8.0, 8.0) for _ in range(400)] + [rng.uniform(-1.0, 1.0) * 10.0 ** rng.uniform(-20.0, 3.0) for _ in range(200)]
    for x in points + [-p for p in points]:
        try:
            expected = py_function(x)
        except (ValueError, OverflowError):
            return False  # (not a function this probe knows)
        if struct.pack("<d", expected) != struct.pack("<d", c_function(x)):
            return False
    return True


#: The NaN that CPython's math functions return of their own (Py_NAN).
_CPYTHON_NAN = math.atan2(math.nan, 0.0)


def _via_cpython(row: Primitive) -> Lowering:
    """CPython's own function, called through the runtime with the arguments as
    floats (cb_math_call, csrc/entry.c); where it raises, CPython runs the call."""
    index = VIA_CPYTHON.index(row)

    def lower(em: Emitter, args: list[Typed], result: Type) -> Typed:
        b = em.builder
        xs = em.alloca(ir.ArrayType(F64, max(1, len(args))))
        for k, a in enumerate(args):
            b.store(em.as_float(a), b.gep(xs, [ir.Constant(I32, 0), ir.Constant(I32, k)]))
        out = em.alloca(F64)
        fn = em.declare("cb_math_call", I32, [I32, I32, F64.as_pointer(), F64.as_pointer()])
        first = b.gep(xs, [ir.Constant(I32, 0), ir.Constant(I32, 0)])
        status = b.call(fn, [ir.Constant(I32, index), ir.Constant(I32, len(args)), first, out])
        em.deopt_if(b.icmp_signed("!=", status, ir.Constant(I32, 0)))
        return b.load(out), FLOAT

    return lower


def _log(em: Emitter, args: list[Typed], result: Type) -> Typed:
    r, _ = _libm("log")(em, args[:1], FLOAT)
    if len(args) == 1:
        return r, FLOAT
    den, _ = _libm("log")(em, args[1:], FLOAT)
    em.deopt_if(em.builder.fcmp_ordered("==", den, em.f64(0.0)))  # ZeroDivisionError
    return em.builder.fdiv(r, den), FLOAT


def _rounding(intrinsic: str) -> Lowering:
    def lower(em: Emitter, args: list[Typed], result: Type) -> Typed:
        (a,) = args
        if a[1] == UINT:
            return a[0], UINT
        if a[1] != FLOAT:
            return em.as_int(a), INT
        return float_to_int(em, em.intrinsic(intrinsic, F64, [a[0]])), INT

    return lower


def _classify(kind: str) -> Lowering:
    def lower(em: Emitter, args: list[Typed], result: Type) -> Typed:
        b = em.builder
        (a,) = args
        if a[1] != FLOAT:
            return ir.Constant(I1, int(kind == "isfinite")), BOOL
        x = a[0]
        if kind == "isnan":
            return b.fcmp_unordered("uno", x, x), BOOL
        if kind == "isfinite":
            return is_finite(em, x), BOOL
        return b.fcmp_ordered("==", em.intrinsic("llvm.fabs.f64", F64, [x]), em.f64(math.inf)), BOOL

    return lower


def _scale(factor: float) -> Lowering:
    def lower(em: Emitter, args: list[Typed], result: Type) -> Typed:
        return em.builder.fmul(em.as_float(args[0]), em.f64(factor)), FLOAT

    return lower


def _ldexp(em: Emitter, args: list[Typed], result: Type) -> Typed:
    b = em.builder
    x = em.as_float(args[0])
    e = em.as_int(args[1])
    # libm takes an int exponent; outside its range CPython clamps, so let it decide.
    em.deopt_if(b.icmp_signed(">", e, em.i64(100000)))
    em.deopt_if(b.icmp_signed("<", e, em.i64(-100000)))
    r = em.libm("ldexp", F64, [x, b.trunc(e, I32)])
    em.deopt_if(b.and_(b.not_(is_finite(em, r)), is_finite(em, x)))  # OverflowError
    return r, FLOAT


def _bit_length(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``x.bit_length()``: the bits of |x| (of a uint, of x), 64 - its leading zeros;
    |INT64_MIN| = 2**63 as unsigned bits."""
    b = em.builder
    val, t = args[0]
    x = b.zext(val, I64) if t == BOOL else val
    if t != UINT:
        x = em.intrinsic("llvm.abs.i64", I64, [x, ir.Constant(I1, 0)])
    zeros = em.intrinsic("llvm.ctlz.i64", I64, [x, ir.Constant(I1, 0)])
    return b.sub(em.i64(64), zeros), INT


def _bit_count(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``x.bit_count()``: the ones of |x| (of a uint, of x)."""
    b = em.builder
    val, t = args[0]
    x = b.zext(val, I64) if t == BOOL else val
    if t != UINT:
        x = em.intrinsic("llvm.abs.i64", I64, [x, ir.Constant(I1, 0)])
    return em.intrinsic("llvm.ctpop.i64", I64, [x]), INT


def _is_integer(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``x.is_integer()``: finite, and its own truncation (False for inf and NaN)."""
    x = em.as_float(args[0])
    b = em.builder
    return b.and_(is_finite(em, x), b.fcmp_ordered("==", em.intrinsic("llvm.trunc.f64", F64, [x]), x)), BOOL


def _numpy_float64(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``np.float64(x)``: x's value as a double (an int correctly rounded, as CPython's
    int-to-float conversion; a float32 exactly)."""
    return em.as_float(args[0]), result


def _numpy_float32(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``np.float32(x)``: x rounded to single precision, as NumPy rounds the operands
    of float32 arithmetic (`numeric.to_float32`): a double that overflows warns in
    NumPy, and deopts here; so does an int beyond 2**24, and an np.float64 NaN (a
    signaling one warns in NumPy's cast, found by a helper)."""
    val, t = args[0]
    if t == UINT:
        em.deopt_if(em.builder.icmp_unsigned(">", val, em.i64(1 << 24)))
    if t == NP_F64:  # NumPy's cast of a signaling NaN warns (invalid): any NaN deopts
        em.deopt_if(em.builder.fcmp_unordered("uno", val, val))
    if t in (NP_F64, BOOL, UINT, NP_BOOL):
        val, t = em.as_float((val, t)), FLOAT  # (exact but for np.float64's, which rounds as a float)
    return em.builder.fpext(to_float32(em, (val, t)), F64), result


def _numpy_int64(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``np.int64(x)``: an int or bool's value; a float truncated toward zero, where
    it lies in int64's range (beyond it, or a NaN, CPython raises or NumPy warns:
    that deopts)."""
    val, t = args[0]
    if base(t) != FLOAT:
        return em.as_int(args[0]), result
    b = em.builder
    x = em.as_float(args[0])
    inside = b.and_(b.fcmp_ordered(">=", x, em.f64(-(2.0**63))), b.fcmp_ordered("<", x, em.f64(2.0**63)))
    em.deopt_if(b.not_(inside))
    return b.fptosi(x, I64), result


#: The lowerings of the `OWN` rows, by name.
_OWN: dict[str, Lowering] = {
    "abs": _abs,
    "min": _minmax_mixed("<"),
    "max": _minmax_mixed(">"),
    "int": _int,
    "float": _float,
    "bool": _bool,
    "complex": complexes.construct,
    "round": _round,
    "divmod": _divmod,
    "pow": _pow,
    "len": _len,
    "range": _range,
    "math.log": _log,
    "math.ldexp": _ldexp,
    "math.floor": _rounding("llvm.floor.f64"),
    "math.ceil": _rounding("llvm.ceil.f64"),
    "math.trunc": _rounding("llvm.trunc.f64"),
    "math.isnan": _classify("isnan"),
    "math.isinf": _classify("isinf"),
    "math.isfinite": _classify("isfinite"),
    "math.degrees": _scale(180.0 / math.pi),
    "math.radians": _scale(math.pi / 180.0),
    "int.bit_length": _bit_length,
    "int.bit_count": _bit_count,
    "float.is_integer": _is_integer,
    "numpy.float64": _numpy_float64,
    "numpy.float32": _numpy_float32,
    "numpy.int64": _numpy_int64,
}


def lowering_of(row: Primitive) -> Lowering:
    """How to lower a call of the primitive `row`."""
    if row.lowering == LIBM:
        return _libm(row.name.removeprefix("math."), row.c_name, row.float_errors)
    if row.lowering == CPYTHON:
        name = row.name.removeprefix("math.")
        if row.libm_if_same and libm_agrees(name):
            return _libm(name)
        return _via_cpython(row)
    assert row.lowering == OWN
    return _OWN[row.name]
