"""Python's numeric operators on concrete types, with CPython's exact semantics.

Every case where native arithmetic could differ from CPython (int64 overflow, a zero
divisor, a float result CPython would raise on or turn into a complex) takes the deopt
path, so CPython computes the call instead.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ..abi import FLOAT_SUSPICION_DEOPT
from ..ir import ops as O
from ..ir.function import BasicBlock
from ..typing.infer import value_type
from ..typing.types import BOOL, COMPLEX, FLOAT, INT, UINT, INT128, ITEMSIZE, NONE, NP_F64, NP_I64, NpScalar, ObjType, TupleType, Type, UnionType, base
from . import complexes, int128
from .emitter import Emitter, Typed, is_finite, known_int, not_finite
from .jit import REMAINDER
from .ltypes import F32, F64, I1, I64
from .powers import c_pow

INT64_MIN = -(2**63)
TWO53 = 2**53


def _plain(v: Typed) -> Typed:
    """A NumPy scalar as the Python scalar it is represented as."""
    return (v[0], v[1].base) if isinstance(v[1], NpScalar) else v


def is_numpy(*vs: Typed) -> bool:
    return any(isinstance(v[1], NpScalar) for v in vs)


def truth(em: Emitter, v: Typed) -> ir.Value:
    val, t = _plain(v)
    b = em.builder
    if t == BOOL:
        return val
    if t in (INT, UINT):
        return b.icmp_signed("!=", val, em.i64(0))
    if t == INT128:
        return int128.truth(em, v)
    if t == FLOAT:
        return b.fcmp_unordered("!=", val, em.f64(0.0))  # NaN is true
    if t == NONE:
        return ir.Constant(I1, 0)
    if isinstance(t, TupleType):
        return ir.Constant(I1, int(bool(t.items)))
    if t == COMPLEX:
        return complexes.truth(em, v)
    raise AssertionError(f"truth of {t}")


def unary(em: Emitter, op: str, v: Typed) -> Typed:
    b = em.builder
    if is_numpy(v) and op == "~" and v[1].name.startswith("uint"):  # type: ignore[union-attr]
        return _wrap(em, b.xor(v[0], em.i64(-1)), v[1].name), v[1]  # type: ignore[union-attr]
    if is_numpy(v) and op != "not":
        val, _ = unary(em, op, _plain(v))  # -x overflows only for INT64_MIN, where NumPy warns
        if isinstance(v[1], NpScalar) and v[1].narrow and v[1].base == INT:
            _deopt_outside(em, val, v[1].name)  # -(-128) as an int8: NumPy wraps and warns
        return val, v[1]
    if op == "not":
        return b.xor(truth(em, v), ir.Constant(I1, 1)), BOOL
    if v[1] == COMPLEX:
        return complexes.unary(em, op, v)
    if v[1] == FLOAT:
        if op == "-":
            return em.negate(v[0]), FLOAT
        return v[0], FLOAT
    if v[1] == UINT and op == "+":
        return v
    if v[1] == INT128:
        return int128.unary(em, op, v)
    x = em.as_int(v)
    if op == "-":
        return em.checked("ssub", em.i64(0), x), INT
    if op == "~":
        return b.xor(x, em.i64(-1)), INT
    return x, INT  # unary plus of an int or bool is an int


def numpy_abs(em: Emitter, v: Typed) -> Typed:
    """``abs()`` of a NumPy scalar, which keeps its dtype: the absolute value of an
    int that has none in its dtype (-128 for int8, -2**63) deopts (NumPy wraps and
    warns); unsigned ints and np.bool are their own absolute values."""
    val, t = v
    assert isinstance(t, NpScalar)
    b = em.builder
    if t.base == FLOAT:
        return em.absolute(val), t  # a float32 too: exact in a double
    if t.base == BOOL or t.name.startswith("uint"):
        return val, t
    negative = b.icmp_signed("<", val, em.i64(0))
    if t == NP_I64:
        return b.select(negative, em.checked("ssub", em.i64(0), val), val), t
    magnitude = b.select(negative, b.sub(em.i64(0), val), val)
    _deopt_outside(em, magnitude, t.name)
    return magnitude, t


def binop(em: Emitter, op: str, a: Typed, c: Typed, result: Type) -> Typed:
    b = em.builder
    if is_numpy(a, c):
        return numpy_binop(em, op, a, c, result)
    if isinstance(a[1], TupleType):
        return _concat(em, a, c)
    if COMPLEX in (a[1], c[1]):
        return complexes.binop(em, op, a, c)
    if INT128 in (a[1], c[1]):
        return int128.binop(em, op, a, c)
    if UINT in (a[1], c[1]) and FLOAT not in (a[1], c[1]):
        return uint_binop(em, op, a, c, result)
    if op in ("&", "|", "^") and a[1] == BOOL and c[1] == BOOL:
        fn = {"&": b.and_, "|": b.or_, "^": b.xor}[op]
        return fn(a[0], c[0]), BOOL
    if FLOAT in (a[1], c[1]):
        return float_binop(em, op, em.as_float(a), em.as_float(c)), FLOAT
    x, y = em.as_int(a), em.as_int(c)
    if op == "/":
        return int_truediv(em, x, y), FLOAT
    if op == "**":
        return int_pow(em, x, y, result)
    return int_binop(em, op, x, y), INT


def _concat(em: Emitter, a: Typed, c: Typed) -> Typed:
    assert isinstance(a[1], TupleType) and isinstance(c[1], TupleType)
    t = TupleType(a[1].items + c[1].items)
    from .ltypes import llvm_type

    out = ir.Constant(llvm_type(t), ir.Undefined)
    k = 0
    for val, tt in (a, c):
        assert isinstance(tt, TupleType)
        for i in range(len(tt.items)):
            out = em.builder.insert_value(out, em.builder.extract_value(val, i), k)
            k += 1
    return out, t


def bits(em: Emitter, v: Typed) -> ir.Value:
    """An int, bool or uint's low 64 bits (an int's two's complement)."""
    return em.builder.zext(v[0], I64) if v[1] == BOOL else v[0]


def wrapping_binop(em: Emitter, op: str, a: Typed, c: Typed) -> Typed:
    """An int op whose value is only observed modulo 2**64 (opt/wrapping.py): its low
    64 bits, from the operands' (no overflow test: the bits above are never seen)."""
    b = em.builder
    x, y = bits(em, a), bits(em, c)
    fn = {"+": b.add, "-": b.sub, "*": b.mul, "&": b.and_, "|": b.or_, "^": b.xor, "<<": b.shl}[op]
    return fn(x, y), INT


def wrapping_unary(em: Emitter, op: str, a: Typed) -> Typed:
    b = em.builder
    x = bits(em, a)
    return (b.sub(em.i64(0), x) if op == "-" else b.xor(x, em.i64(-1))), INT


def uint_binop(em: Emitter, op: str, a: Typed, c: Typed, result: Type) -> Typed:
    """An operator with a uint operand, exact (`rules.uint_binop_type` types it): bit
    operations on the 64 bits, unsigned shifts and divisions; a negative int operand
    of ``|`` or ``^``, or of a division, and a uint beyond int64 in arithmetic,
    deoptimise (CPython's int leaves the range)."""
    b = em.builder
    x, y = bits(em, a), bits(em, c)

    def non_negative(v: Typed, w: ir.Value) -> None:
        if v[1] == INT:
            em.deopt_if(b.icmp_signed("<", w, em.i64(0)))

    if op == "&":
        return b.and_(x, y), UINT
    if op in ("|", "^"):
        non_negative(a, x)
        non_negative(c, y)
        return (b.or_ if op == "|" else b.xor)(x, y), UINT
    if op == ">>":
        if c[1] != UINT:
            em.deopt_if(b.icmp_signed("<", y, em.i64(0)))  # ValueError: negative shift count
        big = b.icmp_unsigned(">", y, em.i64(63))  # (a uint count: 0 to 2**64 - 1)
        if a[1] != UINT:  # an int shifted by a uint count: nothing of an int64 is left past 63
            xi = em.as_int(a)
            sign = b.select(b.icmp_signed("<", xi, em.i64(0)), em.i64(-1), em.i64(0))
            return b.select(big, sign, b.ashr(xi, b.select(big, em.i64(0), y))), INT
        shifted = b.lshr(x, b.select(big, em.i64(0), y))
        return b.select(big, em.i64(0), shifted), result
    if op in ("//", "%"):
        non_negative(a, x)
        if c[1] == INT:  # (a negative divisor: CPython's floor rounds the other way)
            em.deopt_if(b.icmp_signed("<=", y, em.i64(0)))
        else:
            em.deopt_if(b.icmp_signed("==", y, em.i64(0)))  # ZeroDivisionError
        safe = b.select(b.icmp_signed("==", y, em.i64(0)), em.i64(1), y)
        return (b.udiv(x, safe) if op == "//" else b.urem(x, safe)), result
    if op == "/":
        return int_truediv(em, em.as_int(a), em.as_int(c)), FLOAT
    # + - * <<: CPython's int, which must fit int64 (the uint operand too)
    return int_binop(em, op, em.as_int(a), em.as_int(c)), INT


def mul_by_constant(em: Emitter, x: ir.Value, c: int) -> ir.Value:
    """`x * c` for a known `c`: the overflow test is a range test on `x`, which is
    off the multiply's critical path, and the product can be a shift or an `lea`
    rather than an `imul` with its overflow flag."""
    if c == 0:
        return em.i64(0)
    if c == 1:
        return x
    imin, imax = -(2**63), 2**63 - 1
    if c > 0:
        lo, hi = -(-imin // c), imax // c
    else:
        lo, hi = -(-imax // c), min(imin // c, imax)
    b = em.builder
    # x outside [lo, hi], as two signed compares: LLVM hoists those out of a loop whose
    # start it does not know (a chunked range loop, loops.Chunked), and not the one
    # unsigned compare (x - lo) >u (hi - lo).
    em.deopt_if(b.icmp_signed("<", x, em.i64(lo)))
    em.deopt_if(b.icmp_signed(">", x, em.i64(hi)))
    # (In a strip the guard only sets a flag: no nsw, whose overflow would be poison.)
    return b.mul(x, em.i64(c), flags=["nsw"] if em.strip is None else [])


def int_binop(em: Emitter, op: str, x: ir.Value, y: ir.Value) -> ir.Value:
    b = em.builder
    if op == "+":
        return em.checked("sadd", x, y)
    if op == "-":
        return em.checked("ssub", x, y)
    if op == "*":
        if known_int(x):
            x, y = y, x
        if known_int(y):
            return mul_by_constant(em, x, int(y.constant))  # type: ignore[attr-defined]
        return em.checked("smul", x, y)
    if op == "&":
        return b.and_(x, y)
    if op == "|":
        return b.or_(x, y)
    if op == "^":
        return b.xor(x, y)
    if op in ("//", "%"):
        y = safe_divisor(em, x, y, quotient=op == "//")
        q = b.sdiv(x, y)
        r = b.srem(x, y, name=REMAINDER if op == "%" else "")  # (named: what jit.light_pipeline counts)
        # Floor towards negative infinity: adjust when the remainder's sign differs.
        adjust = b.and_(b.icmp_signed("!=", r, em.i64(0)), b.icmp_signed("<", b.xor(r, y), em.i64(0)))
        if op == "//":
            return b.sub(q, b.zext(adjust, I64))
        return b.select(adjust, b.add(r, y), r)
    if op == "<<":
        negative = b.icmp_signed("<", y, em.i64(0))
        em.deopt_if(negative)  # ValueError: negative shift count
        big = b.icmp_unsigned(">=", y, em.i64(64))  # negative counts are "big" unsigned
        # A nonzero value shifted by 64 or more needs a big int.
        em.deopt_if(b.and_(big, b.icmp_signed("!=", x, em.i64(0))))
        shift = b.select(big, em.i64(0), y)
        r = b.shl(x, shift)
        em.deopt_if(b.icmp_signed("!=", b.ashr(r, shift), x))
        return r
    if op == ">>":
        em.deopt_if(b.icmp_signed("<", y, em.i64(0)))  # ValueError: negative shift count
        shift = b.select(b.icmp_unsigned(">", y, em.i64(63)), em.i64(63), y)
        return b.ashr(x, shift)
    raise AssertionError(op)


def safe_divisor(em: Emitter, x: ir.Value, y: ir.Value, *, quotient: bool) -> ir.Value:
    """Guard ``x // y`` (`quotient`) or ``x % y`` and return the divisor to use.

    A zero divisor raises. ``INT64_MIN // -1`` needs a big int; ``x % -1`` is always 0,
    which ``x % 1`` also gives, so `%` divides by 1 instead and never deoptimises for
    it (the hardware traps on ``INT64_MIN % -1``). The zero test stays a branch of its
    own: when `y` is loop-invariant, LLVM moves it out of the loop.
    """
    b = em.builder
    zero = b.icmp_signed("==", y, em.i64(0))
    em.deopt_if(zero)
    minus_one = b.icmp_signed("==", y, em.i64(-1))
    if quotient:
        overflow = b.and_(b.icmp_signed("==", x, em.i64(INT64_MIN)), minus_one)
        em.deopt_if(overflow)
        if em.strip is not None:  # the guards only set a flag: the division still runs
            return b.select(b.or_(zero, overflow), em.i64(1), y)
        return y
    if em.strip is not None:
        minus_one = b.or_(minus_one, zero)
    return b.select(minus_one, em.i64(1), y)


def int_mod_is_zero(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """``x % y == 0`` for ints: y divides x exactly when the truncated remainder is 0, so
    the floor adjustment of `%` is not needed (the `%` op itself already guarded y)."""
    return em.builder.icmp_signed("==", em.builder.srem(x, safe_divisor(em, x, y, quotient=False)), em.i64(0))


def divisibility_test(em: Emitter, op: O.Compare, get: Callable[[O.Value], Typed]) -> ir.Value | None:
    """``a % b == 0`` (or ``!=``) on ints, lowered without the floor adjustment; None
    for any other comparison."""
    if op.op not in ("==", "!="):
        return None
    for mod, zero in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if (
            isinstance(mod, O.BinOp) and mod.op == "%" and mod.type == INT
            and value_type(mod.lhs) in (INT, BOOL) and value_type(mod.rhs) in (INT, BOOL)
            and isinstance(zero, O.Const) and type(zero.value) is int and zero.value == 0
        ):
            x, y = (em.as_int(get(v)) for v in (mod.lhs, mod.rhs))
            is_zero = int_mod_is_zero(em, x, y)
            return is_zero if op.op == "==" else em.builder.not_(is_zero)
    return None


def early_divisor_guards(em: Emitter, block: BasicBlock, get: Callable[[O.Value], Typed], firstlineno: int) -> None:
    """Test the block's int divisors for zero on entry to the block rather than at the
    division. A deoptimisation re-runs the whole call in CPython, so deopting a few
    ops early changes nothing observable (the block runs to the division or fails
    first), and a divisor defined before a loop then yields a test at the top of the
    loop body, which LLVM moves out of the loop."""
    for op in block.ops:
        if not (isinstance(op, O.BinOp) and op.op in ("//", "%") and op.type == INT):
            continue
        y = op.rhs
        if value_type(op.lhs) != INT or value_type(y) != INT or isinstance(y, O.Const):
            continue
        if isinstance(y, O.Op) and y.block is block:
            continue
        em.line = op.line or firstlineno
        em.speculative = False
        em.deopt_if(em.builder.icmp_signed("==", get(y)[0], em.i64(0)))


def int_truediv(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """Correctly rounded: exact when both ints fit in a double's 53-bit mantissa."""
    b = em.builder
    em.deopt_if(b.icmp_signed("==", y, em.i64(0)))
    for v in (x, y):
        em.deopt_if(b.icmp_unsigned(">", b.add(v, em.i64(TWO53)), em.i64(2 * TWO53)))
    return b.fdiv(b.sitofp(x, F64), b.sitofp(y, F64))


def int_pow(em: Emitter, x: ir.Value, y: ir.Value, result: Type) -> Typed:
    """int ** int: an int for y >= 0 (deopt on overflow), a float for y < 0."""
    b = em.builder
    fn = _ipow_function(em)
    out = em.alloca(I64)
    if result == FLOAT:  # a negative constant exponent: CPython computes float ** float
        return float_pow(em, b.sitofp(x, F64), b.sitofp(y, F64)), FLOAT
    if result == INT:
        em.deopt_if(b.icmp_signed("<", y, em.i64(0)))
        em.deopt_if(b.icmp_signed("!=", b.call(fn, [x, y, out]), ir.Constant(I1, 1)))
        return b.load(out), INT
    assert isinstance(result, UnionType)
    neg = b.icmp_signed("<", y, em.i64(0))
    with b.if_else(neg) as (then, otherwise):
        with then:
            fres = float_pow(em, b.sitofp(x, F64), b.sitofp(y, F64))
            fval = em.coerce(fres, FLOAT, result)
            fblock = b.block
        with otherwise:
            em.deopt_if(b.icmp_signed("!=", b.call(fn, [x, y, out]), ir.Constant(I1, 1)))
            ival = em.coerce(b.load(out), INT, result)
            iblock = b.block
    phi = b.phi(fval.type)
    phi.add_incoming(fval, fblock)
    phi.add_incoming(ival, iblock)
    return phi, result


def _ipow_function(em: Emitter) -> ir.Function:
    """``i1 cb.ipow(i64 base, i64 exp >= 0, i64* out)``: false if the power overflows
    int64. `out` gets the power modulo 2**64 either way (every product wraps), which
    is NumPy's int64 power (`numpy_power`)."""
    name = "cb.ipow"
    if name in em.module.globals:
        return em.module.globals[name]  # type: ignore[return-value]
    fn = ir.Function(em.module, ir.FunctionType(I1, [I64, I64, I64.as_pointer()]), name=name)
    fn.linkage = "internal"
    base0, exp0, out = fn.args
    entry, loop, step, done = (fn.append_basic_block(n) for n in ("entry", "loop", "step", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    acc = b.phi(I64)
    base = b.phi(I64)
    exp = b.phi(I64)
    overflowed = b.phi(I1)
    acc.add_incoming(ir.Constant(I64, 1), entry)
    base.add_incoming(base0, entry)
    exp.add_incoming(exp0, entry)
    overflowed.add_incoming(ir.Constant(I1, 0), entry)
    b.cbranch(b.icmp_signed("==", exp, ir.Constant(I64, 0)), done, step)
    b.position_at_end(step)
    odd = b.trunc(exp, I1)
    mul = b.call(_ovf(em, fn.module, "smul"), [acc, base])
    exp2 = b.lshr(exp, ir.Constant(I64, 1))
    sqr = b.call(_ovf(em, fn.module, "smul"), [base, base])
    # Squaring overflow only matters if the base is used again.
    ovf = b.or_(b.and_(odd, b.extract_value(mul, 1)), b.and_(b.extract_value(sqr, 1), b.icmp_signed("!=", exp2, ir.Constant(I64, 0))))
    acc.add_incoming(b.select(odd, b.extract_value(mul, 0), acc), step)
    base.add_incoming(b.extract_value(sqr, 0), step)
    exp.add_incoming(exp2, step)
    overflowed.add_incoming(b.or_(overflowed, ovf), step)
    b.branch(loop)
    b.position_at_end(done)
    b.store(acc, out)
    b.ret(b.not_(overflowed))
    return fn


def _ovf(em: Emitter, module: ir.Module, op: str) -> ir.Function:
    name = f"llvm.{op}.with.overflow.i64"
    if name in module.globals:
        return module.globals[name]  # type: ignore[return-value]
    return ir.Function(module, ir.FunctionType(ir.LiteralStructType([I64, I1]), [I64, I64]), name=name)


def deopt_on_float_error(em: Emitter, result: ir.Value, operands: list[ir.Value]) -> None:
    """Deopt when `result` is a NaN from numbers (an invalid operation) or an infinity
    from finite numbers (an overflow or a pole): what CPython's math module raises on
    and NumPy warns about. Both need a non-finite result, so only such a result pays
    for the precise test (in a cold block)."""
    b = em.builder
    if em.float_error_check == "conservative":  # any non-finite result (opt/finiteness.FloatTests.absorbs_check)
        em.deopt_if(not_finite(em, result), kind=FLOAT_SUSPICION_DEOPT)
        return
    if em.float_error_check == "carried":  # a later op tests it (FloatTests.carries_math_error)
        return
    if em.float_error_check == "deferred":  # any non-finite result, tested on return
        em.suspect_if(not_finite(em, result))  # (FloatTests.defers_math_error)
        return

    def error() -> ir.Value:
        numbers = finite = ir.Constant(I1, 1)
        for x in operands:
            numbers = b.and_(numbers, b.fcmp_ordered("ord", x, x))
            finite = b.and_(finite, is_finite(em, x))
        nan_from_numbers = b.and_(b.fcmp_unordered("uno", result, result), numbers)
        inf_from_finite = b.and_(b.fcmp_ordered("ord", result, result), finite)
        return b.or_(nan_from_numbers, inf_from_finite)

    em.deopt_if_refined(not_finite(em, result), error)


def _int_range(dtype: str) -> tuple[int, int]:
    """The values of an int dtype that native code handles (uint64: those below 2**63,
    the ones an int64 holds; larger ones deopt)."""
    bits = int("".join(ch for ch in dtype if ch.isdigit()))
    if dtype == "uint64":
        return 0, (1 << 63) - 1
    if dtype.startswith("uint"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _weak_ints_fit(em: Emitter, operands: tuple[Typed, ...], dtype: str) -> None:
    """Deopt unless every Python int operand fits `dtype` (NEP 50: NumPy raises
    OverflowError for one that does not)."""
    for v in operands:
        if v[1] == INT:
            _deopt_outside(em, v[0], dtype)


def _wrap(em: Emitter, x: ir.Value, dtype: str) -> ir.Value:
    """int64 `x` reduced to the int `dtype` as NumPy's silent wraparound leaves it
    (modulo 2**bits, then sign- or zero-extended); a uint64 of 2**63 or more, which
    an int64 cannot hold, deopts."""
    b = em.builder
    bits = 8 * ITEMSIZE[dtype]
    if bits < 64:
        low = b.trunc(x, ir.IntType(bits))
        return b.zext(low, I64) if dtype.startswith("uint") else b.sext(low, I64)
    if dtype == "uint64":
        em.deopt_if(b.icmp_signed("<", x, em.i64(0)))
    return x


def _deopt_outside(em: Emitter, x: ir.Value, dtype: str) -> None:
    """Deopt unless int64 `x` fits `dtype` (NumPy would wrap and warn, or raise)."""
    lo, hi = _int_range(dtype)
    b = em.builder
    em.deopt_if(b.icmp_unsigned(">", b.sub(x, em.i64(lo)), em.i64(hi - lo)))




def to_float32(em: Emitter, v: Typed) -> ir.Value:
    """An operand of a float32 operation as NumPy converts it: a Python float rounds
    to float32 (deopting if it overflows: NumPy warns), a Python int beyond 2**24 (where
    the conversion could round) deopts; narrow NumPy scalars convert exactly."""
    b = em.builder
    val, t = v
    if t == FLOAT or (isinstance(t, NpScalar) and t.base == FLOAT):
        single = b.fptrunc(val, F32)
        if t == FLOAT:
            wide = b.fpext(single, F64)
            em.deopt_if(b.and_(not_finite(em, wide), is_finite(em, val)))
        return single
    x = em.as_int(_plain(v))
    if t == INT:
        em.deopt_if(b.icmp_unsigned(">", b.add(x, em.i64(1 << 24)), em.i64(1 << 25)))
    return b.sitofp(x, F32)


def narrow_binop(em: Emitter, op: str, a: Typed, c: Typed, result: NpScalar) -> Typed:
    """Arithmetic whose NumPy result is a float32 or an int8-32/uint8-32 (see
    `rules.narrow_binop_type`). Ints compute exactly in int64 and deopt when the result
    (or a Python int operand) does not fit the dtype, where NumPy wraps and warns (or
    raises OverflowError); float32 computes in single precision, and deopts where NumPy
    warns (an infinity from finite operands, a NaN from numbers, a zero divisor)."""
    b = em.builder
    if result.name == "float32":
        x, y = to_float32(em, a), to_float32(em, c)
        r = {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv}[op](x, y)
        wide = b.fpext(r, F64)  # (exact: a float32 infinity or NaN stays one)
        float_warning_test(em, op, wide, lambda: [b.fpext(x, F64), b.fpext(y, F64)])  # (x / 0 is non-finite too)
        return wide, result
    _weak_ints_fit(em, (a, c), result.name)
    val, _ = binop(em, op, (em.as_int(_plain(a)), INT), (em.as_int(_plain(c)), INT), INT)
    _deopt_outside(em, val, result.name)
    return val, result


def numpy_binop(em: Emitter, op: str, a: Typed, c: Typed, result: Type) -> Typed:
    """Arithmetic with a NumPy scalar. Under NumPy 2's rules (NEP 50) its value is
    Python's on the same representations wherever neither warns or raises: Python's
    lowering computes it (and already deopts on int64 overflow and zero divisors, where
    NumPy warns). NumPy also warns where Python is silent: a float64 result that is an
    infinity from finite operands (overflow) or a NaN from numbers (invalid value)."""
    if op == "**":
        assert isinstance(result, NpScalar)
        return numpy_power(em, a, c, result)
    if op in ("<<", ">>"):
        assert isinstance(result, NpScalar)
        return numpy_shift(em, op, a, c, result)
    if isinstance(result, NpScalar) and result.narrow:
        return narrow_binop(em, op, a, c, result)
    if result == NP_F64 and FLOAT not in (base(a[1]), base(c[1])):
        # Ints whose common dtype is float64 (a uint64 with a signed int): NumPy
        # converts both to doubles (rounding beyond 2**53) and computes in float64.
        a, c = (em.as_float(_plain(a)), NP_F64), (em.as_float(_plain(c)), NP_F64)
    plain = base(result)
    if result == NP_I64 and op in _WRAPPING and not em.precise and em.warned is not None:
        # NumPy wraps and warns: in a function that only reads, the wrapped value is
        # NumPy's, only the warning is due (deferred: Emitter.warn_if). The loop then
        # keeps a single exit, which LLVM unrolls. (Not in a resume region: there a
        # wrapped int could set the length of a loop that runs before the region's
        # exit tests the flag, where CPython with warnings as errors stops at once.)
        pair = em.intrinsic(
            f"llvm.{_WRAPPING[op]}.with.overflow.i64", ir.LiteralStructType([I64, I1]), [em.as_int(_plain(a)), em.as_int(_plain(c))]
        )
        em.warn_if(em.builder.extract_value(pair, 1))
        return em.builder.extract_value(pair, 0), result
    val, _ = binop(em, op, _plain(a), _plain(c), plain)
    if result == NP_F64:
        float_warning_test(em, op, val, lambda: [em.as_float(a), em.as_float(c)])
    return val, result


def float_warning_test(em: Emitter, op: str, val: ir.Value, operands: Callable[[], list[ir.Value]]) -> None:
    """The test for NumPy's float warnings of an np.float64 or np.float32 ``op`` whose
    result (as a double) is `val`, as the finiteness plan says (`em.float_warning_check`,
    opt/finiteness.FloatTests.arithmetic_test): in a function that only reads, ``+ - *``
    (and ``**``) defer theirs (Python's lowering of them has no guard of its own: the
    value is NumPy's, only the warning may be due); "none": a later test covers it;
    "conservative": any non-finite result; "precise": one from numbers (`operands`)."""
    check = em.float_warning_check if op in ("+", "-", "*", "/") else "precise"
    if op in ("+", "-", "*", "**") and em.deferred:  # (a reader's, or in a resume region)
        if check != "none":
            em.warn_if_not_finite(val)
    elif check == "conservative":
        em.deopt_if(not_finite(em, val), kind=FLOAT_SUSPICION_DEOPT)
    elif check == "precise":
        deopt_on_float_error(em, val, operands())


_WRAPPING = {"+": "sadd", "-": "ssub", "*": "smul"}


def numpy_power(em: Emitter, a: Typed, c: Typed, result: NpScalar) -> Typed:
    """``a ** c`` with a NumPy scalar, in NumPy's result dtype (`rules.numpy_power_type`).

    float64: C's pow, the function NumPy's scalar power calls, on both operands
    converted to double; where NumPy warns (an infinity from finite operands, a NaN
    from numbers) the call deopts. Ints: NumPy multiplies in the dtype and wraps
    silently, so its result is the exact power modulo 2**bits: the wrapped value
    `cb.ipow` leaves, whether or not it overflowed int64. A negative exponent
    (ValueError) and a Python int that does not fit the dtype (OverflowError) deopt."""
    b = em.builder
    if result.base == FLOAT:
        x, y = em.as_float(_plain(a)), em.as_float(_plain(c))
        r = c_pow(em, x, y)
        float_warning_test(em, "**", r, lambda: [x, y])
        return r, result
    _weak_ints_fit(em, (a, c), result.name)
    x, n = em.as_int(_plain(a)), em.as_int(_plain(c))
    negative = b.icmp_signed("<", n, em.i64(0))
    em.deopt_if(negative)
    out = em.alloca(I64)
    b.call(_ipow_function(em), [x, b.select(negative, em.i64(0), n), out])  # (in a strip the deopt is a flag)
    return _wrap(em, b.load(out), result.name), result


def numpy_shift(em: Emitter, op: str, a: Typed, c: Typed, result: NpScalar) -> Typed:
    """``a << c`` and ``a >> c`` in NumPy's int result dtype of `bits` bits. For a
    count in [0, bits) NumPy shifts in the dtype (a left shift wraps silently); for
    any other count (negative ones included) it gives 0, or for ``>>`` of a negative
    value -1. A Python int that does not fit the dtype deopts (OverflowError), and so
    does a uint64 result that an int64 cannot hold."""
    b = em.builder
    _weak_ints_fit(em, (a, c), result.name)
    x, n = em.as_int(_plain(a)), em.as_int(_plain(c))
    counted = b.icmp_unsigned("<", n, em.i64(8 * ITEMSIZE[result.name]))  # a negative count is a huge size_t
    count = b.select(counted, n, em.i64(0))
    if op == ">>":
        # Narrow values are sign- (zero-) extended: an int64 shift gives the dtype's.
        beyond = b.select(b.icmp_signed("<", x, em.i64(0)), em.i64(-1), em.i64(0))
        return b.select(counted, b.ashr(x, count), beyond), result
    return _wrap(em, b.select(counted, b.shl(x, count), em.i64(0)), result.name), result


def float_binop(em: Emitter, op: str, x: ir.Value, y: ir.Value) -> ir.Value:
    b = em.builder
    if op == "+":
        return b.fadd(x, y)
    if op == "-":
        return b.fsub(x, y)
    if op == "*":
        return b.fmul(x, y)
    if op == "/":
        em.deopt_if(b.fcmp_ordered("==", y, em.f64(0.0)))
        return b.fdiv(x, y)
    if op in ("%", "//"):
        em.deopt_if(b.fcmp_ordered("==", y, em.f64(0.0)))
        return _float_divmod(em, x, y, op)
    if op == "**":
        return float_pow(em, x, y)
    raise AssertionError(op)


def _float_divmod(em: Emitter, vx: ir.Value, wx: ir.Value, op: str) -> ir.Value:
    """CPython's float_divmod (Objects/floatobject.c), step for step."""
    b = em.builder
    zero = em.f64(0.0)
    # C fmod. The divisor is hidden from LLVM, which rewrites the remainder by a
    # constant (also one that only becomes constant after inlining) and makes
    # fmod(inf, 1.0) a positive NaN (glibc's is the processor's).
    mod = b.frem(vx, em.opaque_float(wx))
    div = b.fdiv(b.fsub(vx, mod), wx)
    mod_nz = b.fcmp_unordered("!=", mod, zero)
    sign_differs = b.icmp_unsigned("!=", b.fcmp_ordered("<", wx, zero), b.fcmp_ordered("<", mod, zero))
    fix = b.and_(mod_nz, sign_differs)
    copysign_w = em.intrinsic("llvm.copysign.f64", F64, [zero, wx])
    mod_fixed = b.select(fix, b.fadd(mod, wx), mod)
    mod_final = b.select(mod_nz, mod_fixed, copysign_w)
    if op == "%":
        return mod_final
    div = b.select(fix, b.fsub(div, em.f64(1.0)), div)
    floordiv = em.intrinsic("llvm.floor.f64", F64, [div])
    bump = b.fcmp_ordered(">", b.fsub(div, floordiv), em.f64(0.5))
    floordiv = b.select(bump, b.fadd(floordiv, em.f64(1.0)), floordiv)
    div_nz = b.fcmp_unordered("!=", div, zero)
    signed_zero = em.intrinsic("llvm.copysign.f64", F64, [zero, b.fdiv(vx, wx)])
    return b.select(div_nz, floordiv, signed_zero)


def float_pow(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """float ** float as CPython's float_pow, deoptimising where CPython raises
    (0.0 ** negative, overflow) or returns a complex (negative ** non-integer)."""
    b = em.builder
    zero = em.f64(0.0)
    em.deopt_if(b.and_(b.fcmp_ordered("==", x, zero), b.fcmp_ordered("<", y, zero)))
    y_int = b.fcmp_ordered("==", em.intrinsic("llvm.floor.f64", F64, [y]), y)
    em.deopt_if(b.and_(b.fcmp_ordered("<", x, zero), b.and_(is_finite(em, y), b.not_(y_int))))
    r = cpython_pow(em, x, y)
    if em.float_error_check == "deferred":  # any infinity, tested on return (FloatTests.defers_math_error)
        em.suspect_if(b.not_(is_finite(em, r)))
        return r
    overflow = b.and_(b.not_(is_finite(em, r)), b.fcmp_ordered("==", r, r))
    em.deopt_if(b.and_(overflow, b.and_(is_finite(em, x), is_finite(em, y))))
    return r


def cpython_pow(em: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """C's pow with the NaN cases CPython decides before calling it (float_pow and
    math.pow): a NaN operand is returned itself, sign and all, where the C library
    may return another NaN (glibc's pow(-nan, 3.0) is +nan). ``nan ** 0`` and
    ``1 ** nan`` are 1.0, as C's pow gives too."""
    b = em.builder
    r = c_pow(em, x, y)
    r = b.select(b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_unordered("une", x, em.f64(1.0))), y, r)
    return b.select(b.and_(b.fcmp_unordered("uno", x, x), b.fcmp_unordered("une", y, em.f64(0.0))), x, r)


def compare(em: Emitter, op: str, a: Typed, c: Typed) -> ir.Value:
    """``a op c`` as an i1 (a NumPy comparison gives the same truth value: an np.bool).
    A float32 compares with a Python number in float32 (NEP 50: the Python number is
    converted first); every other NumPy comparison is exact on the represented values."""
    f32 = lambda v: isinstance(v[1], NpScalar) and v[1].name == "float32"  # noqa: E731
    weak = lambda v: v[1] in (INT, FLOAT, BOOL)  # noqa: E731
    if op in ("<", "<=", ">", ">=", "==", "!=") and ((f32(a) and weak(c)) or (f32(c) and weak(a))):
        a = (em.builder.fpext(to_float32(em, a), F64), FLOAT)
        c = (em.builder.fpext(to_float32(em, c), F64), FLOAT)
    a, c = _plain(a), _plain(c)
    b = em.builder
    ta, tc = a[1], c[1]
    if isinstance(ta, ObjType) and isinstance(tc, ObjType):  # compile-time objects: a constant
        import operator

        test = {"==": operator.eq, "!=": operator.ne, "is": operator.is_, "is not": operator.is_not}[op]
        return ir.Constant(I1, int(bool(test(ta.obj, tc.obj))))
    if op in ("is", "is not", "==", "!=") and (ta == NONE or tc == NONE):
        same = ta == tc
        equal = same if op in ("is", "==") else not same
        return ir.Constant(I1, int(equal))
    if op in ("is", "is not"):
        return b.icmp_unsigned("==" if op == "is" else "!=", a[0], c[0])  # bool is bool
    if COMPLEX in (ta, tc):
        return complexes.equal(em, op, a, c)
    if op in ("in", "not in"):
        assert isinstance(tc, TupleType)
        found: ir.Value = ir.Constant(I1, 0)
        for i, t in enumerate(tc.items):
            item = (b.extract_value(c[0], i), t)
            found = b.or_(found, compare(em, "==", a, item))
        return found if op == "in" else b.xor(found, ir.Constant(I1, 1))
    if ta == FLOAT and tc == FLOAT:
        if op == "!=":
            return b.fcmp_unordered("!=", a[0], c[0])
        return b.fcmp_ordered(op, a[0], c[0])
    if FLOAT in (ta, tc) and UINT in (ta, tc):
        return _uint_float_compare(em, op, a, c) if ta == UINT else _uint_float_compare(em, _MIRRORED[op], c, a)
    if FLOAT in (ta, tc):
        # int vs float is exact in CPython; converting the int is exact below 2**53.
        int_side = a if tc == FLOAT else c
        iv = em.as_int(int_side)
        em.deopt_if(b.icmp_unsigned(">", b.add(iv, em.i64(TWO53)), em.i64(2 * TWO53)))
        x, y = em.as_float(a), em.as_float(c)
        if op == "!=":
            return b.fcmp_unordered("!=", x, y)
        return b.fcmp_ordered(op, x, y)
    if INT128 in (ta, tc):
        return int128.compare(em, op, a, c)
    if UINT in (ta, tc):
        return _uint_compare(em, op, a, c)
    return b.icmp_signed(op, em.as_int(a), em.as_int(c))


_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _uint_float_compare(em: Emitter, op: str, u: Typed, f: Typed) -> ir.Value:
    """``u op f`` for a uint `u` and a float `f`, exact as CPython's int/float comparison:
    within [0, 2**64) a float is its truncation (exactly a uint) plus a fraction, so `u`
    is below `f` when below the truncation, or equal to it with a fraction left."""
    b = em.builder
    x, y = u[0], f[0]
    number = b.fcmp_ordered("ord", y, y)
    negative = b.fcmp_ordered("<", y, em.f64(0.0))
    huge = b.fcmp_ordered(">=", y, em.f64(2.0**64))
    inside = b.and_(number, b.not_(b.or_(negative, huge)))
    whole = em.intrinsic("llvm.trunc.f64", F64, [y])
    t = b.fptoui(b.select(inside, whole, em.f64(0.0)), I64)  # (defined: 0 outside)
    fraction = b.fcmp_ordered(">", b.fsub(y, whole), em.f64(0.0))
    same = b.icmp_unsigned("==", x, t)
    lt = b.or_(huge, b.and_(inside, b.or_(b.icmp_unsigned("<", x, t), b.and_(same, fraction))))
    eq = b.and_(inside, b.and_(same, b.not_(fraction)))
    gt = b.and_(number, b.not_(b.or_(lt, eq)))
    return {"<": lt, "<=": b.or_(lt, eq), ">": gt, ">=": b.or_(gt, eq), "==": eq, "!=": b.not_(eq)}[op]


def _uint_compare(em: Emitter, op: str, a: Typed, c: Typed) -> ir.Value:
    """A comparison with a uint, exact: a negative int is below every uint; otherwise
    the bits compare unsigned."""
    b = em.builder
    x, y = bits(em, a), bits(em, c)
    unsigned = b.icmp_unsigned(op, x, y)
    for v, w, below in ((a, x, True), (c, y, False)):
        if v[1] == INT:  # a negative int: `op` holds as it would for -1 against 0
            known = ir.Constant(I1, int({"<": below, "<=": below, ">": not below, ">=": not below, "==": False, "!=": True}[op]))
            unsigned = b.select(b.icmp_signed("<", w, em.i64(0)), known, unsigned)
    return unsigned
