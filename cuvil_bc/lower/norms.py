"""``math.hypot`` inline: CPython's vector_norm, step for step, as csrc/pymath.c has it.

The runtime's copy is a call per hypotenuse, and inside it frexp, ldexp and fma are
calls too (polygon_area ran at ~5x Numba's time). Here the same operations are
emitted in the loop's own code: the scale 2**-e from the largest coordinate's
exponent bits, exact squares with ``llvm.fma`` (3.12 and later) or halves split off
with Veltkamp's constant (3.11: `cb_hypot_uses_fma` says which the runtime's copy,
compiled for this Python, does), the compensated sums, the square root and its
correction. LLVM neither contracts nor reorders float arithmetic here (no fast-math
flags), so the bits are the C code's. The cases that C handles apart take their
values by selects (an infinity wins over a NaN, which is CPython's own NaN; zero or
one coordinate gives the largest); only a largest coordinate below 2**-1022
(subnormal: C scales by DBL_MIN and recurses) calls the runtime's copy, rarely.
"""

from __future__ import annotations

import math
from typing import Callable

from llvmlite import ir

from .emitter import Emitter
from .ltypes import F64, I1, I64

_SPLIT = 134217729.0  # 2**27 + 1
_PY_NAN = math.atan2(math.nan, 0.0)  # CPython's Py_NAN, with its sign


def hypot(em: Emitter, xs: list[ir.Value], uses_fma: bool, call: Callable[[], ir.Value]) -> ir.Value:
    """``math.hypot(*xs)``; `call` emits the runtime's copy (the subnormal case)."""
    b = em.builder
    f64 = em.f64
    mags = [em.intrinsic("llvm.fabs.f64", F64, [x]) for x in xs]
    biggest = f64(0.0)
    for m in mags:  # (C's ``if (x > max) max = x``: a NaN never becomes the largest)
        biggest = b.select(b.fcmp_ordered(">", m, biggest), m, biggest)
    inf = ir.Constant(I1, 0)
    nan = ir.Constant(I1, 0)
    for m in mags:
        inf = b.or_(inf, b.fcmp_ordered("==", m, f64(math.inf)))
        nan = b.or_(nan, b.fcmp_unordered("uno", m, m))
    if len(xs) <= 1:
        plain = biggest
    else:
        bits = b.bitcast(biggest, I64)
        field = b.lshr(bits, em.i64(52))
        normal = b.and_(b.icmp_unsigned(">", field, em.i64(0)), b.icmp_unsigned("<", field, em.i64(2047)))
        e = b.sub(field, em.i64(1022))  # frexp's exponent: biggest = m * 2**e, 0.5 <= m < 1
        # 2**-e: a normal double for e <= 1022, else 2**-1023 or 2**-1024 (subnormal)
        scale_bits = b.select(
            b.icmp_signed("<=", e, em.i64(1022)),
            b.shl(b.sub(em.i64(1023), e), em.i64(52)),
            b.shl(em.i64(1), b.sub(em.i64(51 + 1023), e)),
        )
        scale = b.bitcast(b.select(normal, scale_bits, em.i64(1023 << 52)), F64)
        h = (_norm_fma if uses_fma else _norm_split)(em, [b.fmul(m, scale) for m in mags])
        scaled = b.fdiv(h, scale)
        zero = b.fcmp_ordered("==", biggest, f64(0.0))
        plain = b.select(zero, biggest, scaled)
        tiny = b.and_(b.not_(normal), b.not_(b.or_(zero, b.or_(inf, nan))))  # (subnormal)
        plain = em.unless_rare(tiny, plain, call, "hypot.subnormal")
    return b.select(inf, f64(math.inf), b.select(nan, ir.Constant(F64, _PY_NAN), plain))


def _norm_fma(em: Emitter, xs: list[ir.Value]) -> ir.Value:
    """CPython 3.12+: exact squares by fma, two compensations, a corrected root."""
    b = em.builder
    csum, frac1, frac2 = em.f64(1.0), em.f64(0.0), em.f64(0.0)

    def square(x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
        p = b.fmul(x, y)
        return p, em.intrinsic("llvm.fma.f64", F64, [x, y, b.fsub(em.f64(-0.0), p)])

    def add(sum_: ir.Value, value: ir.Value) -> tuple[ir.Value, ir.Value]:
        total = b.fadd(sum_, value)
        return total, b.fadd(b.fsub(sum_, total), value)

    for x in xs:
        p, plo = square(x, x)
        csum, slo = add(csum, p)
        frac1 = b.fadd(frac1, plo)
        frac2 = b.fadd(frac2, slo)
    h = em.intrinsic("llvm.sqrt.f64", F64, [b.fadd(b.fsub(csum, em.f64(1.0)), b.fadd(frac1, frac2))])
    p, plo = square(em.negate(h), h)
    csum, slo = add(csum, p)
    frac1 = b.fadd(frac1, plo)
    frac2 = b.fadd(frac2, slo)
    x = b.fadd(b.fsub(csum, em.f64(1.0)), b.fadd(frac1, frac2))
    return b.fadd(h, b.fdiv(x, b.fmul(em.f64(2.0), h)))


def _norm_split(em: Emitter, xs: list[ir.Value]) -> ir.Value:
    """CPython 3.11: each value split in halves (Veltkamp), three compensations."""
    b = em.builder
    csum, frac1, frac2, frac3 = em.f64(1.0), em.f64(0.0), em.f64(0.0), em.f64(0.0)

    def halves(x: ir.Value) -> tuple[ir.Value, ir.Value]:
        t = b.fmul(x, em.f64(_SPLIT))
        hi = b.fsub(t, b.fsub(t, x))
        return hi, b.fsub(x, hi)

    def add(sum_: ir.Value, frac: ir.Value, value: ir.Value) -> tuple[ir.Value, ir.Value]:
        total = b.fadd(sum_, value)
        return total, b.fadd(frac, b.fadd(b.fsub(sum_, total), value))

    for x in xs:
        hi, lo = halves(x)
        csum, frac1 = add(csum, frac1, b.fmul(hi, hi))
        csum, frac2 = add(csum, frac2, b.fmul(b.fmul(em.f64(2.0), hi), lo))
        frac3 = b.fadd(frac3, b.fmul(lo, lo))
    h = em.intrinsic("llvm.sqrt.f64", F64, [b.fadd(b.fsub(csum, em.f64(1.0)), b.fadd(b.fadd(frac1, frac2), frac3))])
    hi, lo = halves(h)
    csum, frac1 = add(csum, frac1, b.fmul(em.negate(hi), hi))
    csum, frac2 = add(csum, frac2, b.fmul(b.fmul(em.f64(-2.0), hi), lo))
    csum, frac3 = add(csum, frac3, b.fmul(em.negate(lo), lo))
    x = b.fadd(b.fsub(csum, em.f64(1.0)), b.fadd(b.fadd(frac1, frac2), frac3))
    return b.fadd(h, b.fdiv(x, b.fmul(em.f64(2.0), h)))
