"""Python's complex numbers (`COMPLEX`: ``{double real, double imag}``): the operators,
``abs``, ``complex()`` and the ``.real`` and ``.imag`` attributes, with CPython's bits.

An int, bool or float operand is first made a complex with a zero imaginary part, as
CPython does (so ``(1-0j) + 1.0`` has a +0.0 imaginary part). Sums, differences and
negations are one IEEE operation per part. Products, quotients and absolute values
call CPython's own functions through the runtime (`cb_complex_prod`, `_quot`, `_abs`:
csrc/entry.c), which need no GIL; where CPython raises (a zero divisor, an absolute
value too large) the call is handed back to CPython, which raises it.
"""

from __future__ import annotations

from llvmlite import ir

from ..typing.types import BOOL, COMPLEX, FLOAT, INT, Type, base
from .emitter import Emitter, Typed
from .ltypes import F64, I1, I32, llvm_type

TWO53 = 2**53


def parts(em: Emitter, v: Typed) -> tuple[ir.Value, ir.Value]:
    """The real and imaginary parts of `v` as a complex (an int, bool or float gets a
    +0.0 imaginary part)."""
    val, t = v
    if t == COMPLEX:
        return em.builder.extract_value(val, 0), em.builder.extract_value(val, 1)
    return em.as_float(v), em.f64(0.0)


def make(em: Emitter, real: ir.Value, imag: ir.Value) -> ir.Value:
    out = ir.Constant(llvm_type(COMPLEX), ir.Undefined)
    out = em.builder.insert_value(out, real, 0)
    return em.builder.insert_value(out, imag, 1)


def _runtime(em: Emitter, name: str, args: list[ir.Value], results: int) -> tuple[ir.Value, list[ir.Value]]:
    """Call the runtime's `name` with double arguments and an output array of
    `results` doubles: its status (nonzero where CPython raises) and the results."""
    b = em.builder
    out = em.alloca(ir.ArrayType(F64, results))
    fn = em.declare(name, I32, [F64] * len(args) + [F64.as_pointer()])
    status = b.call(fn, args + [b.gep(out, [ir.Constant(I32, 0), ir.Constant(I32, 0)])])
    values = [b.load(b.gep(out, [ir.Constant(I32, 0), ir.Constant(I32, k)])) for k in range(results)]
    return status, values


def binop(em: Emitter, op: str, a: Typed, c: Typed) -> Typed:
    """``a op c`` for ``+ - * /`` with at least one complex operand."""
    b = em.builder
    (ar, ai), (cr, ci) = parts(em, a), parts(em, c)
    if op == "+":
        return make(em, b.fadd(ar, cr), b.fadd(ai, ci)), COMPLEX
    if op == "-":
        return make(em, b.fsub(ar, cr), b.fsub(ai, ci)), COMPLEX
    assert op in ("*", "/"), op
    status, (real, imag) = _runtime(em, "cb_complex_prod" if op == "*" else "cb_complex_quot", [ar, ai, cr, ci], 2)
    if op == "/":
        em.deopt_if(b.icmp_signed("!=", status, ir.Constant(I32, 0)))  # ZeroDivisionError
    return make(em, real, imag), COMPLEX


def unary(em: Emitter, op: str, v: Typed) -> Typed:
    """``-v`` and ``+v`` of a complex (``not v``: `truth`)."""
    if op == "+":
        return v
    assert op == "-", op
    real, imag = parts(em, v)
    return make(em, em.negate(real), em.negate(imag)), COMPLEX


def truth(em: Emitter, v: Typed) -> ir.Value:
    """A complex is true unless both parts are zero (a NaN part is true)."""
    real, imag = parts(em, v)
    b = em.builder
    return b.or_(b.fcmp_unordered("!=", real, em.f64(0.0)), b.fcmp_unordered("!=", imag, em.f64(0.0)))


def equal(em: Emitter, op: str, a: Typed, c: Typed) -> ir.Value:
    """``a == c`` or ``a != c`` with at least one complex operand. Against an int,
    CPython compares the real part with the int exactly (when the imaginary part is
    zero): exact here for ints within 2**53, and handed back to CPython beyond."""
    b = em.builder
    for side in (a, c):
        if base(side[1]) in (INT, BOOL):
            n = em.as_int(side)
            em.deopt_if(b.icmp_unsigned(">", b.add(n, em.i64(TWO53)), em.i64(2 * TWO53)))
    (ar, ai), (cr, ci) = parts(em, a), parts(em, c)
    same = b.and_(b.fcmp_ordered("==", ar, cr), b.fcmp_ordered("==", ai, ci))
    return same if op == "==" else b.xor(same, ir.Constant(I1, 1))


def attribute(em: Emitter, v: Typed, name: str) -> Typed:
    """``v.real`` or ``v.imag`` of a number (an int's and a bool's are ints)."""
    val, t = v
    if t == COMPLEX:
        return em.builder.extract_value(val, {"real": 0, "imag": 1}[name]), FLOAT
    if t == FLOAT:
        return (val, FLOAT) if name == "real" else (em.f64(0.0), FLOAT)
    return (em.as_int(v), INT) if name == "real" else (em.i64(0), INT)


def absolute(em: Emitter, v: Typed) -> Typed:
    """``abs(v)``: CPython's hypot of the parts; OverflowError (handed back) where it
    is too large for a float."""
    status, (magnitude,) = _runtime(em, "cb_complex_abs", list(parts(em, v)), 1)
    em.deopt_if(em.builder.icmp_signed("!=", status, ir.Constant(I32, 0)))
    return magnitude, FLOAT


def construct(em: Emitter, args: list[Typed], result: Type) -> Typed:
    """``complex()``, ``complex(x)`` and ``complex(x, y)`` of ints, bools and floats
    (each converted as float() does), and ``complex(c)`` of a complex (``c`` itself)."""
    if len(args) == 1 and args[0][1] == COMPLEX:
        return args[0]
    real = em.as_float(args[0]) if args else em.f64(0.0)
    imag = em.as_float(args[1]) if len(args) == 2 else em.f64(0.0)
    return make(em, real, imag), COMPLEX

