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
and checks the residual: when the exact power is at least a margin (a tier by the
result's exponent: `_MARGIN_CLOSE`, `_MARGIN_NEAR`, `_MARGIN_FAR`) of an ulp away
from a midpoint, the rounded value is pow's. Otherwise (about 2.4% of inputs near 1;
none for an exact power such as ``3.0 ** 2``) it calls pow itself, as it does for a
result that is not a normal number of at least 2**-450 (the residuals must be
exact), a power of two (whose lower neighbour is closer) or not finite. So the
value is pow's on every input, for the cost of a few multiplications.

Other libraries (or an older glibc) promise no such bound: pow is called then.
"""

from __future__ import annotations

import functools
import itertools
import platform
import weakref

from llvmlite import ir

from .emitter import Emitter
from .ltypes import F64, I64

#: The largest exponent computed natively: the double-double's own error, about
#: n * 2**-104 relative, stays far below the margins.
MAX_EXPONENT = 16

#: Distances from a rounding midpoint, in ulps, beyond which glibc's pow is correctly
#: rounded: for results of exponent -16..16 (0.011 + 11.8 * 4.6e-5 = 0.01154 with the
#: bound above), -128..128 (0.011 + 89.4 * 4.6e-5 = 0.0152) and for any other finite
#: result (0.011 + 710 * 4.6e-5 = 0.0437). Each margin is the fraction of inputs that
#: call pow, twice over: the closest tier halves the calls for values near 1.
_MARGIN_CLOSE = 0.012
_MARGIN_NEAR = 0.02
_MARGIN_FAR = 0.05

_EXPONENT_BITS = 0x7FF0000000000000
_SMALLEST = (1023 - 450) << 52  # the exponent bits of 2**-450
_NEAR_LO, _NEAR_HI = (1023 - 128) << 52, (1023 + 128) << 52
_CLOSE_LO, _CLOSE_HI = (1023 - 16) << 52, (1023 + 16) << 52


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

    def within(lo: int, hi: int) -> ir.Value:  # lo <= exponent < hi, one unsigned compare
        return b.icmp_unsigned("<", b.sub(exponent, em.i64(lo)), em.i64(hi - lo))

    # |residual| < (0.5 - margin) * ulp, with ulp = 2**E * 2**-52 and 2**E the
    # rounded value's exponent bits read as a double. The limit is 0 (so the test
    # fails) for a result that is no normal number of at least 2**-450, infinite or a
    # power of two: selects, and one compare at the end.
    def scale_of(margin: float) -> ir.Value:
        return em.f64((0.5 - margin) * 2.0**-52)

    usable = b.and_(within(_SMALLEST, _EXPONENT_BITS), b.icmp_unsigned("!=", b.shl(bits, em.i64(12)), em.i64(0)))
    scale = b.select(within(_CLOSE_LO, _CLOSE_HI), scale_of(_MARGIN_CLOSE),
                     b.select(within(_NEAR_LO, _NEAR_HI), scale_of(_MARGIN_NEAR), scale_of(_MARGIN_FAR)))
    limit = b.select(usable, b.fmul(b.bitcast(exponent, F64), scale), em.f64(0.0))
    slow = b.fcmp_unordered(">=", em.intrinsic("llvm.fabs.f64", F64, [residual]), limit)
    return settle(em, rounded, x, y, slow)


def settle(em: Emitter, rounded: ir.Value, x: ir.Value, y: ir.Value, slow: ir.Value) -> ir.Value:
    """`rounded`, or pow(x, y) where `slow` holds (rarely), as a call of a function
    LLVM sees only as pure until it has vectorized the loops: an unconditional call
    with vector variants, so the vectorizer replaces it by one call per vector (one
    test of its lanes, `_define_variant`) instead of a branch and a call per lane,
    which kept every register of the loop spilled to the stack. Its scalar body is
    defined (and inlined) after the vectorizer ran (`jit.define_late`)."""
    from .jit import INLINED_PREFIX, define_late

    tag = _module_tag(em.module)
    name = f"{INLINED_PREFIX}{tag}"
    fn = em.module.globals.get(name)
    if fn is None:
        fn = ir.Function(em.module, ir.FunctionType(F64, [F64, F64, F64, ir.IntType(1)]), name)
        set.add(fn.attributes, "nounwind")
        set.add(fn.attributes, "willreturn")
        set.add(fn.attributes, "memory(none)")
        define_late(em.module, lambda side: _define_scalar(side, name))
    called = em.builder.call(fn, [rounded, x, y, slow])
    set.add(called.attributes, f'"vector-function-abi-variant"="{_variants(em.module, name)}"')  # type: ignore[attr-defined]
    return called


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
        if lo is None:  # x * x: p is its rounding and err the rest, already
            hi, lo = p, err
            continue
        low = fma(lo, x, err)
        # fast two-sum: |p| >= |low|, so the sum's error is exact
        hi = b.fadd(p, low)
        lo = b.fsub(low, b.fsub(hi, p))
    assert lo is not None
    return hi, lo


#: Vector widths of the variants (`_variants`).
_LANES = (2, 4, 8)


def _variants(module: ir.Module, scalar: str) -> str:
    """The vector variants of `scalar` (the VFABI names of a call's
    "vector-function-abi-variant"), defined in `module`: for each width, one without
    a mask and one with (for a call the vectorizer finds under a condition)."""
    names = []
    for n in _LANES:
        # (externally visible, and so named once per module: unused internal functions
        # are gone before the vectorizer looks for them)
        for masked in (False, True):
            name = f"{scalar}_v{n}{'m' if masked else ''}"
            names.append(f"_ZGV_LLVM_{'M' if masked else 'N'}{n}vvvv_{scalar}({name})")
            if module.globals.get(name) is None:
                _define_variant(module, name, n, masked)
    return ",".join(names)


_TAGS = itertools.count()
_MODULE_TAG: "weakref.WeakKeyDictionary[ir.Module, int]" = weakref.WeakKeyDictionary()


def _module_tag(module: ir.Module) -> int:
    found = _MODULE_TAG.get(module)
    if found is None:
        found = _MODULE_TAG[module] = next(_TAGS)
    return found


def _pow(module: ir.Module) -> ir.Function:
    from .ltypes import declare, math_function

    pow_fn = declare(module, "pow", ir.FunctionType(F64, [F64, F64]))
    math_function(pow_fn)
    return pow_fn


def _define_scalar(module: ir.Module, name: str) -> None:
    """`settle`'s scalar body: a branch to pow, weighted as rare."""
    fn = ir.Function(module, ir.FunctionType(F64, [F64, F64, F64, ir.IntType(1)]), name)
    fn.attributes.add("alwaysinline")
    rounded, x, y, slow = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    call, done = fn.append_basic_block("call"), fn.append_basic_block("done")
    b.cbranch(slow, call, done).set_weights([1, 1 << 10])
    b.position_at_end(call)
    b.ret(b.call(_pow(module), [x, y]))
    b.position_at_end(done)
    b.ret(rounded)


def _define_variant(module: ir.Module, name: str, n: int, masked: bool) -> None:
    """The variant `name` of width `n`: inlined where the vectorizer calls it, it
    tests its lanes once and calls `_define_lanes`'s helper only when one needs pow."""
    vec = ir.VectorType(F64, n)
    flags = ir.VectorType(ir.IntType(1), n)
    fn = ir.Function(module, ir.FunctionType(vec, [vec, vec, vec, flags] + [flags] * masked), name)
    fn.attributes.add("alwaysinline")  # (inlined where the vectorizer calls it: jit.py)
    rounded, x, y, slow = fn.args[:4]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    if masked:
        slow = b.and_(slow, fn.args[4])
    some, none = fn.append_basic_block("some"), fn.append_basic_block("none")
    any_lane = b.icmp_unsigned("!=", b.bitcast(slow, ir.IntType(n)), ir.Constant(ir.IntType(n), 0))
    b.cbranch(any_lane, some, none).set_weights([1, 1 << 10])
    b.position_at_end(none)
    b.ret(rounded)
    b.position_at_end(some)
    lanes = module.globals.get(f"{name}_lanes") or _define_lanes(module, f"{name}_lanes", n)
    b.ret(b.call(lanes, [rounded, x, y, slow]))


def _define_lanes(module: ir.Module, name: str, n: int) -> ir.Function:
    """pow for each lane `slow` holds; the other lanes keep `rounded`. Out of line and
    cold, so the loop's hot path holds one test and a call it almost never makes."""
    vec = ir.VectorType(F64, n)
    fn = ir.Function(module, ir.FunctionType(vec, [vec, vec, vec, ir.VectorType(ir.IntType(1), n)]), name)
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    rounded, x, y, slow = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    out = rounded
    for k in range(n):
        lane = ir.Constant(ir.IntType(32), k)
        call, next_ = fn.append_basic_block(f"lane{k}"), fn.append_basic_block(f"after{k}")
        before = b.block
        b.cbranch(b.extract_element(slow, lane), call, next_)
        b.position_at_end(call)
        r = b.call(_pow(module), [b.extract_element(x, lane), b.extract_element(y, lane)])
        with_r = b.insert_element(out, r, lane)
        b.branch(next_)
        b.position_at_end(next_)
        phi = b.phi(vec)
        phi.add_incoming(out, before)
        phi.add_incoming(with_r, call)
        out = phi
    b.ret(out)
    return fn
