"""Operations on `INT128` values: Python ints in [-2**127, 2**127), which a constant beyond
64 bits brings in (``h - (1 << 64)``, ``x * 10**20``).

An `INT128` value is two words, the low one and the high one (`typing.models`); here each
operation joins them into an i128, computes, and splits the result again (LLVM keeps
the i128 in two registers and drops the moves). The arithmetic is CPython's exactly,
with a deopt wherever CPython's value leaves the 128-bit range (an add, subtract or
multiply that overflows, a left shift that loses bits), and so is every comparison.
Nothing here calls a library (LLVM expands i128 and i256 arithmetic inline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from ..typing.types import BOOL, INT, UINT, INT128, base
from .ltypes import llvm_type

if TYPE_CHECKING:  # (the emitter converts int128 values with this module)
    from .emitter import Emitter, Typed

I64 = ir.IntType(64)
I128 = ir.IntType(128)
I256 = ir.IntType(256)


def widen(em: Emitter, v: Typed) -> ir.Value:
    """An int, uint, bool or int128 value as an i128."""
    b = em.builder
    val, t = v[0], base(v[1])
    if t == INT128:
        low = b.zext(b.extract_value(val, 0), I128)
        return b.or_(low, b.shl(b.sext(b.extract_value(val, 1), I128), ir.Constant(I128, 64)))
    if t in (BOOL, UINT):
        return b.zext(val, I128)
    assert t == INT, t
    return b.sext(val, I128)


def pack(em: Emitter, x: ir.Value) -> ir.Value:
    """An i128 as an `INT128` value (its two words)."""
    b = em.builder
    out = ir.Constant(llvm_type(INT128), ir.Undefined)
    out = b.insert_value(out, b.trunc(x, I64), 0)
    return b.insert_value(out, b.trunc(b.ashr(x, ir.Constant(I128, 64)), I64), 1)


def to_int(em: Emitter, v: Typed) -> ir.Value:
    """An int128 value as an int64: one beyond int64 deopts (an index, an array item, a
    float conversion: CPython's own value is out of their range, or needs care)."""
    b = em.builder
    x = widen(em, v)
    low = b.trunc(x, I64)
    em.deopt_if(b.icmp_signed("!=", b.sext(low, I128), x))
    return low


def constant(v: Typed) -> int | None:
    """The value of an int or int128 constant operand, else None."""
    val, t = v
    if not isinstance(val, ir.Constant):
        return None
    if isinstance(val.constant, int) and t in (BOOL, INT, UINT):
        return val.constant & ((1 << 64) - 1) if t == UINT else val.constant
    parts = val.constant
    if t == INT128 and isinstance(parts, list) and all(isinstance(p, ir.Constant) and isinstance(p.constant, int) for p in parts):
        return (parts[0].constant & ((1 << 64) - 1)) | (parts[1].constant << 64)
    return None


def _fits(em: Emitter, wide: ir.Value) -> ir.Value:
    """Whether an i256 lies in the i128 range."""
    b = em.builder
    return b.icmp_signed("==", b.sext(b.trunc(wide, I128), I256), wide)


def binop(em: Emitter, op: str, a: Typed, c: Typed) -> Typed:
    """``a op c`` with an int128 operand (the other one an int, a uint, a bool or int128)."""
    b = em.builder
    x, y = widen(em, a), widen(em, c)
    if op in ("+", "-", "*"):
        # In 256 bits the exact value: it must fit 128 bits again.
        wx, wy = b.sext(x, I256), b.sext(y, I256)
        exact = {"+": b.add, "-": b.sub, "*": b.mul}[op](wx, wy)
        em.deopt_if(b.not_(_fits(em, exact)))
        return pack(em, b.trunc(exact, I128)), INT128
    if op in ("&", "|", "^"):
        return pack(em, {"&": b.and_, "|": b.or_, "^": b.xor}[op](x, y)), INT128
    if op in ("//", "%"):  # by a constant power of two (typing.rules): Python's floor
        divisor = constant(c)
        assert divisor is not None and divisor > 0 and divisor & (divisor - 1) == 0, divisor
        if op == "//":
            return pack(em, b.ashr(x, ir.Constant(I128, divisor.bit_length() - 1))), INT128
        rest = b.and_(x, ir.Constant(I128, divisor - 1))
        return (b.trunc(rest, I64), UINT) if divisor <= 1 << 64 else (pack(em, rest), INT128)
    em.deopt_if(b.icmp_signed("<", y, ir.Constant(I128, 0)))  # ValueError: negative shift count
    big = b.icmp_signed(">", y, ir.Constant(I128, 127))
    count = b.select(big, ir.Constant(I128, 127), y)
    if op == ">>":  # (past 127 bits only the sign is left)
        return pack(em, b.ashr(x, count)), INT128
    assert op == "<<", op
    shifted = b.shl(x, count)
    lost = b.icmp_signed("!=", b.ashr(shifted, count), x)
    zero = b.icmp_signed("==", x, ir.Constant(I128, 0))
    em.deopt_if(b.and_(b.not_(zero), b.or_(big, lost)))  # beyond 128 bits
    return pack(em, b.select(zero, x, shifted)), INT128


def unary(em: Emitter, op: str, a: Typed) -> Typed:
    b = em.builder
    x = widen(em, a)
    if op == "-":
        em.deopt_if(b.icmp_signed("==", x, ir.Constant(I128, -(1 << 127))))
        return pack(em, b.sub(ir.Constant(I128, 0), x)), INT128
    if op == "~":
        return pack(em, b.xor(x, ir.Constant(I128, -1))), INT128
    assert op == "+", op
    return pack(em, x), INT128


def compare(em: Emitter, op: str, a: Typed, c: Typed) -> ir.Value:
    return em.builder.icmp_signed(op, widen(em, a), widen(em, c))


def truth(em: Emitter, a: Typed) -> ir.Value:
    return em.builder.icmp_signed("!=", widen(em, a), ir.Constant(I128, 0))
