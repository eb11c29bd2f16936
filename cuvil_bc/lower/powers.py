"""C's ``pow(x, y)``, the function CPython's ``**``, ``math.pow`` and NumPy's float64
scalar power call, with constant integer exponents computed natively.

``x ** 2`` is not ``x * x``: glibc's pow is not correctly rounded, and on about one
input in a thousand it returns the other neighbour of the exact square. What it does
guarantee (glibc 2.28 and later, whose pow is Arm's optimized-routines code) is an
error bound: before its final rounding, its value lies within

    0.011 ulp + |ln(result)| * 1.5 * 2**-68 * 2**53 ulp

of the exact power (the exp step's approximation error, 0.511 ulp less the rounding's
0.5, plus the log step's relative error of 1.5 * 2**-68 scaled by the exponent; the
bounds without FMA, which are the larger). So wherever the exact power lies farther
than that from a rounding midpoint, pow returns the correctly rounded power.

For a constant integer exponent 2 <= n <= `MAX_EXPONENT`, the code computes the
power as a double-double (an error-free product at each step: `fma`), rounds it,
and checks the residual: when the exact power is at least `_MARGIN_NEAR` (for
results between 2**-128 and 2**128, else `_MARGIN_FAR`) of an ulp away from a
midpoint, the rounded value is pow's. Otherwise (about 4% of arbitrary inputs;
none for an exact power such as ``3.0 ** 2``) it calls pow itself, as it does for a
result that is not a normal number of at least 2**-450 (the residuals must be
exact), a power of two (whose lower neighbour is closer) or not finite. So the
value is pow's on every input, for the cost of a few multiplications.

Other libraries (or an older glibc) promise no such bound: pow is called then.
"""

from __future__ import annotations

import functools
import platform

from llvmlite import ir

from .emitter import Emitter
from .ltypes import F64, I64

#: The largest exponent computed natively: the double-double's own error, about
#: n * 2**-104 relative, stays far below the margins.
MAX_EXPONENT = 16

#: Distances from a rounding midpoint, in ulps, beyond which glibc's pow is correctly
#: rounded: for results of exponent -128..128 (0.011 + 89.4 * 4.6e-5 = 0.0152 with the
#: bound above) and for any other finite result (0.011 + 710 * 4.6e-5 = 0.0437).
_MARGIN_NEAR = 0.02
_MARGIN_FAR = 0.05

_EXPONENT_BITS = 0x7FF0000000000000
_MANTISSA_BITS = 0x000FFFFFFFFFFFFF
_SMALLEST = (1023 - 450) << 52  # the exponent bits of 2**-450
_NEAR_LO, _NEAR_HI = (1023 - 128) << 52, (1023 + 128) << 52


@functools.cache
def pow_is_bounded() -> bool:
    """Whether the process's C library has the pow whose error bound this module
    relies on: glibc 2.28 or later."""
    lib, version = platform.libc_ver()
    if lib != "glibc":
        return False
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (2, 28)


def constant_exponent(y: ir.Value) -> int | None:
    """The exponent `y` as an int when it is a constant integer in [2, MAX_EXPONENT]."""
    if not (isinstance(y, ir.Constant) and isinstance(y.constant, float)):
        return None
    n = y.constant
    if n != int(n) or not 2 <= n <= MAX_EXPONENT:
        return None
    return int(n)


def c_pow(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """C's pow(x, y) (double), exactly what the C library returns."""
    n = constant_exponent(y)
    if n is None or not pow_is_bounded():
        return em.libm("pow", F64, [x, y])
    b = em.builder
    rounded, residual = _double_double_power(em, x, n)
    bits = b.bitcast(rounded, I64)
    exponent = b.and_(bits, em.i64(_EXPONENT_BITS))
    normal = b.and_(
        b.icmp_unsigned(">=", exponent, em.i64(_SMALLEST)),
        b.icmp_unsigned("<", exponent, em.i64(_EXPONENT_BITS)),  # finite
    )
    not_power_of_two = b.icmp_unsigned("!=", b.and_(bits, em.i64(_MANTISSA_BITS)), em.i64(0))
    near = b.and_(b.icmp_unsigned(">=", exponent, em.i64(_NEAR_LO)), b.icmp_unsigned("<", exponent, em.i64(_NEAR_HI)))
    # |residual| < (0.5 - margin) * ulp, with ulp = 2**E * 2**-52 and 2**E the
    # rounded value's exponent bits read as a double.
    scale = b.select(near, em.f64((0.5 - _MARGIN_NEAR) * 2.0**-52), em.f64((0.5 - _MARGIN_FAR) * 2.0**-52))
    limit = b.fmul(b.bitcast(exponent, F64), scale)
    clear = b.fcmp_ordered("<", em.intrinsic("llvm.fabs.f64", F64, [residual]), limit)
    fast = b.and_(b.and_(normal, not_power_of_two), clear)
    here = b.block
    slow = em.block("pow.libm")
    done = em.block("pow.done")
    b.cbranch(fast, done, slow).set_weights([1 << 10, 1])
    b.position_at_end(slow)
    called = em.libm("pow", F64, [x, y])
    b.branch(done)
    b.position_at_end(done)
    out = b.phi(F64)
    out.add_incoming(rounded, here)
    out.add_incoming(called, slow)
    return out


def _double_double_power(em: Emitter, x: ir.Value, n: int) -> tuple[ir.Value, ir.Value]:
    """x**n as (rounded, residual): `rounded` is the double nearest to hi + lo of the
    double-double power, `residual` what it leaves (exact), so the power is
    ``rounded + residual`` to within about n * 2**-104 of itself (when no product
    underflows: the caller checks the result's range)."""
    b = em.builder

    def fma(a: ir.Value, c: ir.Value, d: ir.Value) -> ir.Value:
        return em.intrinsic("llvm.fma.f64", F64, [a, c, d])

    hi, lo = x, None
    for _ in range(n - 1):
        p = b.fmul(hi, x)
        err = fma(hi, x, b.fneg(p))  # hi * x - p, exactly
        low = err if lo is None else fma(lo, x, err)
        # fast two-sum: |p| >= |low|, so the sum's error is exact
        hi = b.fadd(p, low)
        lo = b.fsub(low, b.fsub(hi, p))
    assert lo is not None
    return hi, lo
