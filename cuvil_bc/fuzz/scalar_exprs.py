"""Random typed expressions for the scalar program generator.

`ExprGen.expr(want, depth)` returns an `E` (source text and static type) whose type
satisfies `want`: "num" any number, "int" an int or bool, "pint" an int (`~` of a
bool is deprecated and falls back), "float", "cond" anything testable, "tuple", or
"any". It draws from the locals in scope, edge constants, every operator, chained
comparisons, `and`/`or`, conditional expressions, tuples, the compiled builtins and
`math` functions (`cuvil_bc/typing/primitives.py`), and calls of the helpers
generated before the current function.

Ints that could grow without bound are wrapped in a modulus (`bounded`): see
`stypes`. Shift counts and int exponents are kept small for the same reason.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Callable

from . import stypes as T
from .program import EDGE_FLOATS, render_float
from .stypes import B, F, I, Sc, Tup, Type

#: Int constants that appear in programs (near every int64 boundary, and beyond).
INT_CONSTS = (0, 1, 2, 3, 5, 7, 10, 31, 63, 64, 100, 255, 1000, 2**31, 2**32 + 1, 2**53 + 1,
              2**62, 2**63 - 1, 2**63, 2**64, 3037000500, 10**19)
FLOAT_CONSTS = tuple(EDGE_FLOATS) + (1e300, 0.25, 1e-5, 6.0)
#: Moduli that keep ints bounded; the big ones leave values near 2**63 and 2**64.
MODULI = (2**63 - 1, 2**63 - 1, 2**61 - 1, 2**32, 1000003, 97, 2**64)
UNARY_MATH = ("sqrt", "exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "cbrt", "exp2",
              "degrees", "radians", "gamma", "lgamma", "erf", "erfc")
BINARY_MATH = ("atan2", "copysign", "fmod", "pow", "hypot", "remainder")
#: How real code keeps arguments in a function's domain (used for most calls).
DOMAIN = {"sqrt": "abs({})", "log2": "(abs({}) + 1)", "log10": "abs({})", "log1p": "abs({})",
          "asin": "math.sin({})", "acos": "math.cos({})", "acosh": "(abs({}) + 1.0)", "atanh": "(math.tanh({}) * 0.5)",
          "exp": "math.sin({})", "exp2": "({} % 64)", "expm1": "math.atan({})", "sinh": "math.cos({})", "cosh": "math.sin({})",
          "gamma": "(abs({}) % 100 + 0.5)", "lgamma": "(abs({}) + 0.25)"}
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")
#: Top-level statements and loop bodies wrap ints beyond these bit counts.
TOP_LIMIT = 4096
LOOP_LIMIT = 200
LOOP_GROWTH = 70


#: The names the generator gives locals, parameters and helpers (v1, n0, x2, i3, g0...).
NAME = re.compile(r"\b[a-z]\d+\b")


@dataclass
class E:
    src: str
    t: Type
    leaf_bits: int = 0  # the largest bit estimate among the int locals it reads


@dataclass
class Helper:
    """A generated module-level function that later functions may call."""

    name: str
    params: list[tuple[str, str, str | None]]  # (name, want, default source)
    result: Sc
    optional: bool = False  # may return None (callers test `is None`)
    recursive: bool = False  # first parameter is a depth that must stay small
    calls: int = field(default=0)


def satisfies(t: Type, want: str) -> bool:
    if want == "tuple":
        return isinstance(t, Tup)
    if want == "any":
        return True
    if not isinstance(t, Sc):
        return False
    if want == "int":
        return t.intlike
    if want == "pint":
        return t.kinds == {I}
    if want == "float":
        return t.kinds == {F}
    return True  # num, cond


class ExprGen:
    """Expression generation over the scope of the function being generated."""

    rng: random.Random
    vars: dict[str, Type]
    helpers: list[Helper]
    loop_depth: int

    # -- helpers -----------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def const(self, want: str) -> E:
        r = self.rng
        if want in ("int", "pint") or (want in ("num", "cond", "any") and r.random() < 0.45):
            v = r.choice(INT_CONSTS) if r.random() < 0.7 else r.randint(-20, 20)
            if v >= 2**63 and r.random() < 0.97:
                v = r.choice((2**63 - 1, 2**62, 4611686018427387905))  # (beyond int64, the function runs interpreted)
            if r.random() < 0.3:
                v = -v
            src = repr(v) if v >= 0 else f"({v})"
            return E(src, T.int_t(max(abs(v).bit_length() + 1, 2)))
        if want in ("num", "cond", "any") and r.random() < 0.15:
            return E(r.choice(("True", "False")), T.BOOL)
        if r.random() < 0.1:
            return E(r.choice(("math.pi", "math.e", "math.tau", "math.inf", "math.nan", "-math.nan", "1e309", "-1e309")), T.FLOAT)
        src = render_float(r.choice(FLOAT_CONSTS))
        return E(f"({src})" if src.startswith("-") else src, T.FLOAT)

    def rare_cond(self) -> str:
        """A condition that is usually false (so that a `raise` under it leaves most
        calls running on), but true for some edge values."""
        e = self.var("num") or self.const("num")
        r = self.rng.random()
        if r < 0.3:
            return f"math.isnan({e.src})"
        if r < 0.55:
            return f"{e.src} > {self.rng.choice(['1e300', '2 ** 62', '9.2e18', '4611686018427387904'])}"
        if r < 0.75:
            return f"{e.src} == {self.rng.choice(['-7', '12345', '-1.5', '3'])}"
        return f"{e.src} < {self.rng.choice(['-1e300', '-(2 ** 62)', '-9.2e18'])}"

    def divisor(self, want: str, depth: int) -> E:
        """The right operand of / // % and divmod: often a constant that is not zero,
        so that fewer calls stop at a ZeroDivisionError."""
        if self.chance(0.75):
            pool = ["3", "7", "(-2)", "10", "4611686018427387904"] if want in ("int", "pint") else ["3", "(-2)", "2.5", "0.5", "(-0.1)", "1e-300", "7", "1e300"]
            src = self.rng.choice(pool)
            return E(src, T.FLOAT if "." in src or "e" in src else T.int_t(64 if len(src) > 5 else 5))
        return self.expr(want, depth)

    def var(self, want: str) -> E | None:
        names = [n for n, t in self.vars.items() if satisfies(t, want)]
        if not names:
            return None
        name = self.rng.choice(names)
        t = self.vars[name]
        return E(name, t, t.bits if isinstance(t, Sc) and I in t.kinds else 0)

    def leaf(self, want: str) -> E:
        if want == "tuple":
            found = self.var("tuple")
            return found if found else self.tuple_build(1)
        if want == "any" and self.chance(0.15):
            found = self.var("tuple")
            if found:
                return found
            want = "num"
        if self.chance(0.7):
            found = self.var(want)
            if found:
                return found
        return self.const(want)

    def bounded(self, e: E, limit: int | None = None) -> E:
        """`e`, or `(e) % M` when its int part may outgrow the limit: in a loop, an
        assignment may add at most LOOP_GROWTH bits to what it reads (so an int
        grows linearly, never geometrically, from one iteration to the next)."""
        if not isinstance(e.t, Sc) or I not in e.t.kinds:
            return e
        if limit is None:
            limit = max(LOOP_LIMIT, e.leaf_bits + LOOP_GROWTH) if self.loop_depth else TOP_LIMIT
        if e.t.bits <= limit:
            return e
        if e.t.intlike and self.chance(0.3):
            # a mask, as hashes and random number generators keep state: what it
            # gives may reach 2**64 - 1, and what it masks wraps (opt/wrapping.py)
            k = self.rng.choice((64, 64, 63, 32, 16))
            return E(f"(({e.src}) & {hex((1 << k) - 1)})", Sc(frozenset({I}), k), 0)
        m = self.rng.choice(MODULI)
        if m > 2**63 and self.chance(0.95):
            m = 2**63 - 1  # (a constant beyond int64 makes the whole function run interpreted)
        return E(f"({e.src} % {m})", Sc(e.t.kinds, m.bit_length()), 0)

    @staticmethod
    def _lb(*es: E) -> int:
        return max(e.leaf_bits for e in es)

    # -- expressions ---------------------------------------------------------------------

    def expr(self, want: str, depth: int) -> E:
        if depth <= 0 or self.chance(0.22):
            return self.leaf(want)
        makers = self._makers(want)
        for _ in range(6):
            make = self.rng.choices([m for m, _ in makers], [w for _, w in makers])[0]
            e = make(want, depth - 1)
            if e is not None and satisfies(e.t, want):
                if isinstance(e.t, Sc) and e.t.bits > 20000:
                    e = self.bounded(e, 20000)  # (nested powers of big ints)
                return e
        return self.leaf(want)

    def _makers(self, want: str) -> list[tuple[Callable[[str, int], E | None], float]]:
        if want == "tuple":
            return [(lambda w, d: self.tuple_build(d), 3), (self.ifexp, 1), (self.divmod_call, 1), (self.helper_call, 0.5)]
        common: list[tuple[Callable[[str, int], E | None], float]] = [
            (self.binop, 5), (self.ifexp, 1), (self.boolop, 1), (self.builtin, 3), (self.tuple_index, 1), (self.helper_call, 1),
        ]
        if want in ("int", "pint"):
            return common + [(self.bitop, 3), (self.shift, 1.5), (self.unary, 1), (self.to_int, 2)]
        if want == "float":
            return common + [(self.math_call, 4), (self.power, 1), (self.unary, 0.5)]
        if want == "cond":
            return common + [(self.compare, 6), (self.math_pred, 1), (self.unary, 1)]
        extra = [(self.math_call, 2.5), (self.power, 1), (self.compare, 1.5), (self.bitop, 1), (self.shift, 0.5), (self.unary, 1), (self.to_int, 1)]
        if want == "any":
            extra.append((lambda w, d: self.tuple_build(d), 0.5))
        return common + extra

    def operand(self, want: str, depth: int) -> str:
        return self.expr(want, depth).src

    def binop(self, want: str, depth: int) -> E | None:
        ops = ["+", "-", "*", "//", "%"] + ([] if want in ("int", "pint") else ["/"])
        op = self.rng.choice(ops)
        sub = "int" if want in ("int", "pint") else "num"
        a = self.expr(sub, depth)
        b = self.divisor(sub, depth) if op in ("/", "//", "%") else self.expr(sub, depth)
        if not NAME.search(a.src + b.src):
            # (constants only would be folded, and a folded int beyond int64 does not compile)
            a = self.var(sub) or a
        if not (isinstance(a.t, Sc) and isinstance(b.t, Sc)):
            return None
        return E(f"({a.src} {op} {b.src})", T.arith(op, a.t, b.t), self._lb(a, b))

    def bitop(self, want: str, depth: int) -> E | None:
        op = self.rng.choice(["&", "|", "^"])
        a, b = self.expr("int", depth), self.expr("int", depth)
        if not NAME.search(a.src + b.src):
            a = self.var("int") or a
        return E(f"({a.src} {op} {b.src})", T.bitwise(op, a.t, b.t), self._lb(a, b))  # type: ignore[arg-type]

    def shift(self, want: str, depth: int) -> E | None:
        a = self.expr("int", depth)
        if not NAME.search(a.src):
            a = self.var("int") or a
        if self.chance(0.5):  # left: a count that stays small (1 << 2**40 exhausts memory)
            count = self.rng.choice(["1", "3", "31", "32", "62", "63", "64"]) if self.chance(0.5) else f"({self.operand('int', depth)} & 63)"
            return E(f"({a.src} << {count})", T.int_t(a.t.bits + 64), a.leaf_bits)  # type: ignore[union-attr]
        b = self.expr("int", depth) if self.chance(0.15) else E(self.rng.choice(["1", "7", "63", "64", "65"]), T.int_t(8))
        # (right shifts of any count are cheap; negative ones raise)
        return E(f"({a.src} >> {b.src})", T.int_t(a.t.bits), a.leaf_bits)  # type: ignore[union-attr]

    def power(self, want: str, depth: int) -> E | None:
        base = self.expr("num", depth)
        assert isinstance(base.t, Sc)
        r = self.rng.random()
        const_exp: int | None = None
        if r < 0.5:
            const_exp = self.rng.choice([0, 1, 2, 3, 4, -1, -2])
            exp_src, exp_t = (str(const_exp) if const_exp >= 0 else f"({const_exp})"), T.int_t(3)
        elif r < 0.7:
            exp_src, exp_t = self.rng.choice(["0.5", "2.0", "(-0.5)", "1e10", "(-1.5)", "0.0"]), T.FLOAT
        elif r < 0.85:
            exp_src, exp_t = f"({self.operand('int', depth)} % 5)", T.int_t(3)  # small, but not a constant
        else:
            e = self.expr("float", depth)
            exp_src, exp_t = e.src, e.t
        form = "pow({}, {})" if self.chance(0.3) else "({} ** {})"
        return E(form.format(base.src, exp_src), T.power_type(base.t, exp_t, const_exp), base.leaf_bits)  # type: ignore[arg-type]

    def unary(self, want: str, depth: int) -> E | None:
        r = self.rng.random()
        if want == "cond" or (want in ("num", "any") and r < 0.2):
            return E(f"(not {self.operand('cond', depth)})", T.BOOL)
        if want in ("int", "pint", "num") and r < 0.45:
            a = self.expr("pint", depth)
            return E(f"(~{a.src})", T.int_t(a.t.bits + 1), a.leaf_bits)  # type: ignore[union-attr]
        a = self.expr("int" if want in ("int", "pint") else "num", depth)
        if not isinstance(a.t, Sc):
            return None
        op = "-" if r < 0.85 else "+"
        return E(f"({op}{a.src})", T.negate(a.t), a.leaf_bits)

    def compare(self, want: str, depth: int) -> E | None:
        n = self.rng.choice([1, 1, 1, 2, 2, 3])
        parts = [self.operand("num", depth)]
        for _ in range(n):
            parts += [self.rng.choice(COMPARE_OPS), self.operand("num", depth)]
        return E("(" + " ".join(parts) + ")", T.BOOL)

    def boolop(self, want: str, depth: int) -> E | None:
        sub = want if want in ("int", "pint", "float") else "num"
        n = self.rng.choice([2, 2, 3])
        items = [self.expr(sub, depth) for _ in range(n)]
        t: Type | None = items[0].t
        for e in items[1:]:
            t = T.union(t, e.t) if t is not None else None
        if t is None:
            return None
        op = self.rng.choice([" and ", " or "])
        return E("(" + op.join(e.src for e in items) + ")", t, self._lb(*items))

    def ifexp(self, want: str, depth: int) -> E | None:
        sub = want if want != "cond" else "num"
        a, b = self.expr(sub, depth), self.expr(sub, depth)
        t = T.union(a.t, b.t)
        if t is None:
            return None
        return E(f"({a.src} if {self.operand('cond', depth)} else {b.src})", t, self._lb(a, b))

    def to_int(self, want: str, depth: int) -> E | None:
        a = self.expr("num", depth)
        fn = self.rng.choice(["int", "round", "math.floor", "math.ceil", "math.trunc", "abs"])
        if fn == "abs":
            a = self.expr("int", depth)
        return E(f"{fn}({a.src})", T.to_int(a.t), a.leaf_bits)  # type: ignore[arg-type]

    def builtin(self, want: str, depth: int) -> E | None:
        fn = self.rng.choice(["abs", "min", "max", "int", "float", "bool", "round", "divmod", "pow3", "len", "minmax3"])
        sub = "int" if want in ("int", "pint") else "num"
        if fn == "abs":
            a = self.expr(sub, depth)
            return E(f"abs({a.src})", T.negate(a.t), a.leaf_bits) if isinstance(a.t, Sc) else None
        if fn in ("min", "max", "minmax3"):
            items = [self.expr(sub, depth) for _ in range(3 if fn == "minmax3" else 2)]
            t: Type | None = items[0].t
            for e in items[1:]:
                t = T.union(t, e.t) if t is not None else None
            name = fn if fn != "minmax3" else self.rng.choice(["min", "max"])
            return E(f"{name}({', '.join(e.src for e in items)})", t, self._lb(*items)) if isinstance(t, Sc) else None
        if fn in ("int", "round"):
            return self.to_int(want, depth + 1)
        if fn == "float":
            return E(f"float({self.operand('num', depth)})", T.FLOAT)
        if fn == "bool":
            return E(f"bool({self.operand('num', depth)})", T.BOOL)
        if fn == "divmod":
            e = self.divmod_call(want, depth)
            if e is None or not isinstance(e.t, Tup):
                return None
            k = self.rng.choice([0, 1, -1])
            return E(f"{e.src}[{k}]", e.t.items[k], e.leaf_bits)
        if fn == "pow3":
            a = self.expr("int", depth)
            b = self.expr("int", depth) if self.chance(0.3) else E(self.rng.choice(["0", "1", "2", "5", "63", "1000001"]), T.int_t(21))
            m = self.expr("int", depth) if self.chance(0.3) else E(self.rng.choice(["7", "97", "1000003", "4294967296", "9223372036854775807"]), T.int_t(64))
            return E(f"pow({a.src}, {b.src}, {m.src})", T.int_t(m.t.bits), 0)  # type: ignore[union-attr]
        found = self.var("tuple")
        if found is None:
            return None
        return E(f"len({found.src})", T.int_t(3))

    def divmod_call(self, want: str, depth: int) -> E | None:
        sub = "int" if self.chance(0.5) else "num"
        a, b = self.expr(sub, depth), self.divisor(sub, depth)
        if not (isinstance(a.t, Sc) and isinstance(b.t, Sc)):
            return None
        return E(f"divmod({a.src}, {b.src})", Tup((T.arith("//", a.t, b.t), T.arith("%", a.t, b.t))), self._lb(a, b))

    def math_call(self, want: str, depth: int) -> E | None:
        r = self.rng.random()
        if r < 0.55:
            fn = self.rng.choice(UNARY_MATH)
            arg = self.operand("num", depth)
            if fn in DOMAIN and self.chance(0.75):
                arg = DOMAIN[fn].format(arg)  # mostly inside the domain, as real code is
            return E(f"math.{fn}({arg})", T.FLOAT)
        if r < 0.8:
            fn = self.rng.choice(BINARY_MATH)
            if fn == "hypot":  # any number of coordinates
                coords = ", ".join(self.operand("num", depth) for _ in range(self.rng.choice((1, 2, 2, 3, 5))))
                return E(f"math.hypot({coords})", T.FLOAT)
            second = self.divisor("num", depth).src if fn in ("fmod", "remainder", "pow") else self.operand("num", depth)
            return E(f"math.{fn}({self.operand('num', depth)}, {second})", T.FLOAT)
        if r < 0.9:
            base = f", {self.operand('num', depth)}" if self.chance(0.4) else ""
            return E(f"math.log({self.operand('num', depth)}{base})", T.FLOAT)
        return E(f"math.ldexp({self.operand('num', depth)}, {self.operand('int', depth)})", T.FLOAT)

    def math_pred(self, want: str, depth: int) -> E | None:
        fn = self.rng.choice(["isnan", "isinf", "isfinite"])
        return E(f"math.{fn}({self.operand('num', depth)})", T.BOOL)

    def tuple_build(self, depth: int) -> E:
        # (each item bounded: a tuple rebuilt from its own items in a loop must not square them)
        items = [self.bounded(self.expr("num", depth - 1)) for _ in range(self.rng.choice([2, 2, 3]))]
        return E("(" + ", ".join(e.src for e in items) + ")", Tup(tuple(e.t for e in items)), self._lb(*items))  # type: ignore[misc]

    def tuple_index(self, want: str, depth: int) -> E | None:
        t = self.expr("tuple", depth)
        if not isinstance(t.t, Tup):
            return None
        n = len(t.t.items)
        k = self.rng.randrange(-n, n)
        return E(f"{t.src}[{k}]", t.t.items[k], t.leaf_bits)

    def helper_call(self, want: str, depth: int) -> E | None:
        usable = [h for h in self.helpers if not h.optional]
        if not usable:
            return None
        h = self.rng.choice(usable)
        return self.call_of(h, depth)

    def call_of(self, h: Helper, depth: int) -> E:
        """A call of helper `h`: positional, keyword, or leaving out defaults."""
        args: list[str] = []
        keyword = False
        for k, (pname, pwant, default) in enumerate(h.params):
            if h.recursive and k == 0:
                args.append(self.rng.choice(["0", "1", "2", "3"]) if self.chance(0.6) else f"({self.operand('int', 1)} % 4)")
                continue
            if default is not None and self.chance(0.3):
                keyword = True  # later arguments must be keywords once one is left out
                continue
            a = self.bounded(self.expr(pwant, depth), 1100)
            if keyword or (k > 0 and self.chance(0.15)):
                keyword = True
                args.append(f"{pname}={a.src}")
            else:
                args.append(a.src)
        h.calls += 1
        return E(f"{h.name}({', '.join(args)})", h.result, 0)
