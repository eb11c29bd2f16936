"""The static types the scalar program generator tracks.

A scalar is a set of kinds ("b" bool, "i" int, "f" float): a local assigned an int on
one path and a float on another is {"i", "f"}, and only operations valid for every
kind are generated on it. Ints also carry an estimate of how many bits they may need
(`bits`): Python ints are unbounded, and a program that squares an int in a loop
would make CPython itself run for hours, so the generator wraps an expression in a
modulus when its estimate gets too big (`scalar_exprs.bounded`). A tuple is a tuple
of scalar types.
"""

from __future__ import annotations

from dataclasses import dataclass

B, I, F = "b", "i", "f"


@dataclass(frozen=True)
class Sc:
    kinds: frozenset[str]
    bits: int = 1  # upper estimate of an int value's bit length (bools: 1)

    def only(self, *allowed: str) -> bool:
        return self.kinds <= frozenset(allowed)

    @property
    def intlike(self) -> bool:
        return self.only(B, I)


@dataclass(frozen=True)
class Tup:
    items: tuple[Sc, ...]


Type = Sc | Tup


def sc(kinds: str, bits: int = 1) -> Sc:
    return Sc(frozenset(kinds), bits if (I in kinds) else 1)


BOOL = sc(B)
FLOAT = sc(F)


def int_t(bits: int) -> Sc:
    return sc(I, bits)


def union(a: Type, b: Type) -> Type | None:
    """The type of a value that is `a` on one path and `b` on another (None when the
    generator does not track such a union: a tuple and a scalar, tuples of different
    lengths)."""
    if isinstance(a, Sc) and isinstance(b, Sc):
        return Sc(a.kinds | b.kinds, max(a.bits, b.bits))
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        items = [union(x, y) for x, y in zip(a.items, b.items)]
        return Tup(tuple(i for i in items if isinstance(i, Sc)))
    return None


def within(a: Type, b: Type) -> bool:
    """Every value of type `a` is a value of type `b` (bits aside)."""
    if isinstance(a, Sc) and isinstance(b, Sc):
        return a.kinds <= b.kinds
    if isinstance(a, Tup) and isinstance(b, Tup):
        return len(a.items) == len(b.items) and all(within(x, y) for x, y in zip(a.items, b.items))
    return False


def arith(op: str, a: Sc, b: Sc) -> Sc:
    """Kinds of `a op b` for + - * / // %, CPython's rules (bool arithmetic gives
    ints, any float operand gives a float, true division always a float)."""
    kinds: set[str] = set()
    for ka in a.kinds:
        for kb in b.kinds:
            kinds.add(F if (F in (ka, kb) or op == "/") else I)
    if op in ("+", "-"):
        bits = max(a.bits, b.bits) + 1
    elif op == "*":
        bits = a.bits + b.bits
    elif op == "//":
        bits = a.bits + 1  # (-2**63 // -1 needs one more)
    elif op == "%":
        bits = b.bits
    else:
        bits = 1
    return Sc(frozenset(kinds), bits)


def bitwise(op: str, a: Sc, b: Sc) -> Sc:
    """& | ^ of int-like operands: two bools give a bool."""
    if a.kinds == {B} and b.kinds == {B}:
        return BOOL
    kinds = {I} | ({B} if (B in a.kinds and B in b.kinds) else set())
    return Sc(frozenset(kinds), max(a.bits, b.bits) + 1)


def negate(a: Sc) -> Sc:
    return Sc(frozenset(I if k == B else k for k in a.kinds), a.bits + 1)


def to_int(a: Sc) -> Sc:
    """int(), round(), math.floor/ceil/trunc: a float may be up to 1.8e308."""
    return int_t(1026 if F in a.kinds else a.bits + 1)


def power_type(base: Sc, exponent: Sc, const_exp: int | None) -> Sc:
    """`base ** exponent`: an int to a non-negative constant is an int, to a negative
    constant a float, to a variable int either."""
    kinds: set[str] = set()
    for kb in base.kinds:
        for ke in exponent.kinds:
            if F in (kb, ke):
                kinds.add(F)
            elif const_exp is not None:
                kinds.add(I if const_exp >= 0 else F)
            else:
                kinds |= {I, F}
    factor = const_exp if (const_exp is not None and const_exp > 0) else 4
    return Sc(frozenset(kinds), max(base.bits, 2) * factor)
