"""Random typed scalar programs: module-level helpers and an entry function `f`.

Statements: assignments (also augmented, tuple building and unpacking), if/elif/else,
`for` over bounded ranges and `while` loops with a counter (with break, continue and
`else`), nested; early returns, `raise`, `assert`, expression statements whose value
is unused (they still raise), and the `v = h(...); if v is None: v = ...` pattern
over a helper that may return None. Every loop is bounded, so every program
terminates, and ints stay bounded (see `stypes`).

Types are tracked per path: after an `if`, a local has the union of its branch types
and only locals bound on every path stay in scope. In a loop body, a local that
existed before the loop may only be assigned values within its type at the loop
head (which is sometimes widened first, so that int/float unions appear); so no
expression generated earlier in the body can see a type it was not generated for
on the next iteration.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import stypes as T
from .program import EDGE_FLOATS, EDGE_INTS, Program, scalar_call
from .scalar_exprs import E, ExprGen, Helper
from .stypes import B, F, I, Sc, Tup, Type

EXCEPTIONS = ("ValueError", "ZeroDivisionError", "OverflowError", "ArithmeticError", "RuntimeError")
PARAM_KINDS = ("int", "int", "float", "float", "bool", "tuple", "optional")
MAX_TRIPS = 30  # iterations of nested loops, at most (and ints grow at most linearly per iteration)


@dataclass
class Loop:
    entry: dict[str, Type]  # the locals at the loop head, with their (maybe widened) types
    seen: dict[str, Type] = field(default_factory=dict)  # every type assigned in the body
    trips: int = 1


class FunctionGen(ExprGen):
    """Generates one function body; `self.vars` is the scope at the current point."""

    def __init__(self, rng: random.Random, helpers: list[Helper], params: dict[str, Type], budget: int, helper: bool = False) -> None:
        self.rng = rng
        self.helpers = helpers
        self.vars = dict(params)
        self.loop_depth = 0
        self.loops: list[Loop] = []
        self.protected: set[str] = set()
        self.budget = budget  # statements left to generate
        self.lines: list[str] = []
        self.returns: list[Type] = []
        self.counter = 0
        self.depth = 0
        self.helper = helper  # returns numbers only (its callers use the result as one)

    # -- bookkeeping -------------------------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.extend("    " * indent + line for line in text.split("\n"))

    def trips(self) -> int:
        n = 1
        for loop in self.loops:
            n *= loop.trips
        return n

    def may_assign(self, name: str, t: Type) -> bool:
        if name in self.protected:
            return False
        return all(name not in lp.entry or T.within(t, lp.entry[name]) for lp in self.loops)

    def bind(self, name: str, t: Type) -> None:
        self.vars[name] = t
        for lp in self.loops:
            old = lp.seen.get(name)
            lp.seen[name] = t if old is None else (T.union(old, t) or t)

    def target(self, t: Type) -> str:
        """An existing local that may take a value of type `t` here, or a new name."""
        if self.chance(0.6):
            names = [n for n, old in self.vars.items() if isinstance(old, type(t)) and self.may_assign(n, t)]
            if names:
                return self.rng.choice(names)
        return self.fresh()

    def merge(self, scopes: list[dict[str, Type]]) -> dict[str, Type]:
        """The scope after paths join: locals bound on every path, with union types;
        rarely also one bound on some paths only (reading it may raise
        UnboundLocalError: the compiler must keep such a read even when its value is
        not used)."""
        out: dict[str, Type] = {}
        for name in dict.fromkeys(n for s in scopes for n in s):  # (in order: a set's order varies per process)
            types = [s[name] for s in scopes if name in s]
            u: Type | None = types[0]
            for t in types[1:]:
                u = T.union(u, t) if u is not None else None
            if u is not None and (len(types) == len(scopes) or (not self.loops and self.chance(0.03))):
                out[name] = u
        return out

    # -- statements ----------------------------------------------------------------------

    def block(self, indent: int, n: int) -> bool:
        """`n` statements at most; True when the block cannot fall through."""
        self.depth += 1
        done = False
        emitted = 0
        start = len(self.lines)
        while emitted < n and self.budget > 0 and not done:
            self.budget -= 1
            emitted += 1
            done = self.statement(indent)
        if len(self.lines) == start:
            self.emit(indent, "pass")
        self.depth -= 1
        return done

    def statement(self, indent: int) -> bool:
        r = self.rng.random()
        nested = self.depth < 4 and self.budget >= 2  # (a compound statement needs a body)
        if r < 0.30:
            self.assign(indent)
        elif r < 0.38:
            self.augassign(indent)
        elif r < 0.44:
            self.tuple_stmt(indent)
        elif r < 0.58 and nested:
            return self.if_stmt(indent)
        elif r < 0.66 and nested and self.trips() * 5 <= MAX_TRIPS:
            self.for_stmt(indent)
        elif r < 0.71 and nested and self.trips() * 4 <= MAX_TRIPS:
            self.while_stmt(indent)
        elif r < 0.74:
            self.emit(indent, self.expr(self.rng.choice(["num", "int", "float"]), 2).src)  # unused, may still raise
        elif r < 0.77:
            msg = f", {self.rng.choice(['x', 'bad value', 'too big'])!r}" if self.chance(0.6) else ""
            cond = self.expr("cond", 2).src if self.chance(0.3) else f"not {self.rare_cond()}"
            self.emit(indent, f"assert {cond}{msg}")
        elif r < 0.82 and self.loops:
            self.emit(indent, f"if {self.expr('cond', 2).src}:\n    {self.rng.choice(['break', 'continue'])}")
        elif r < 0.86:
            cond = self.expr("cond", 2).src if self.chance(0.3) else self.rare_cond()
            self.emit(indent, f"if {cond}:\n    {self.raise_stmt()}")
        elif r < 0.90:
            self.emit(indent, f"if {self.expr('cond', 2).src}:")
            self.return_stmt(indent + 1)
        elif r < 0.93 and any(h.optional for h in self.helpers):
            self.optional_stmt(indent)
        else:
            self.assign(indent)
        return False

    def raise_stmt(self) -> str:
        exc = self.rng.choice(EXCEPTIONS)
        return f"raise {exc}({self.rng.choice(['neg', 'overflow', 'stop'])!r})" if self.chance(0.7) else f"raise {exc}"

    def assign(self, indent: int) -> None:
        e = self.bounded(self.expr("any" if self.chance(0.9) else "tuple", 3))
        name = self.target(e.t)
        self.emit(indent, f"{name} = {e.src}")
        self.bind(name, e.t)

    def augassign(self, indent: int) -> None:
        names = [n for n, t in self.vars.items() if isinstance(t, Sc) and n not in self.protected]
        if not names:
            return self.assign(indent)
        name = self.rng.choice(names)
        old = self.vars[name]
        assert isinstance(old, Sc)
        if old.intlike and self.chance(0.3):
            op = self.rng.choice(["&", "|", "^", ">>"])
            rhs = self.expr("int", 2)
            t = T.bitwise(op, old, rhs.t) if op != ">>" else T.int_t(old.bits)  # type: ignore[arg-type]
        else:
            op = self.rng.choice(["+", "+", "-", "*", "/", "//", "%"])
            rhs = self.expr("num", 2)
            if not isinstance(rhs.t, Sc):
                return self.assign(indent)
            t = T.arith(op, old, rhs.t)
        whole = self.bounded(E(f"{name} {op} {rhs.src}", t, max(old.bits if I in old.kinds else 0, rhs.leaf_bits)))
        if not self.may_assign(name, t) or whole.src != f"{name} {op} {rhs.src}":
            # Too wide for the loop head, or needs bounding: a plain assignment does both.
            if self.may_assign(name, whole.t):
                self.emit(indent, f"{name} = {whole.src}")
                self.bind(name, whole.t)
            return None
        self.emit(indent, f"{name} {op}= {rhs.src}")
        self.bind(name, t)
        return None

    def tuple_stmt(self, indent: int) -> None:
        r = self.rng.random()
        if r < 0.4:  # unpack a tuple into locals
            src = self.expr("tuple", 2)
            if not isinstance(src.t, Tup):
                return
            names = [self.target(t) for t in src.t.items]
            if len(set(names)) != len(names) or not all(self.may_assign(n, t) for n, t in zip(names, src.t.items)):
                names = [self.fresh() for _ in src.t.items]
            self.emit(indent, f"{', '.join(names)} = {src.src}")
            for n, t in zip(names, src.t.items):
                self.bind(n, t)
        elif r < 0.6:  # swap two scalars
            names = [n for n, t in self.vars.items() if isinstance(t, Sc) and n not in self.protected]
            if len(names) < 2:
                return
            a, b = self.rng.sample(names, 2)
            ta, tb = self.vars[a], self.vars[b]
            if self.may_assign(a, tb) and self.may_assign(b, ta):
                self.emit(indent, f"{a}, {b} = {b}, {a}")
                self.bind(a, tb)
                self.bind(b, ta)
        else:
            self.assign(indent)

    def if_stmt(self, indent: int) -> bool:
        arms = self.rng.choice([1, 2, 2, 3])
        has_else = arms > 1 or self.chance(0.3)
        before = dict(self.vars)
        ends: list[dict[str, Type]] = []
        for k in range(arms):
            self.vars = dict(before)  # (each condition sees the scope before the statement)
            self.emit(indent, f"{'if' if k == 0 else 'elif'} {self.expr('cond', 3).src}:")
            self.vars = dict(before)
            if not self.block(indent + 1, self.rng.randint(1, 3)):
                ends.append(self.vars)
        if has_else:
            self.emit(indent, "else:")
            self.vars = dict(before)
            if not self.block(indent + 1, self.rng.randint(1, 3)):
                ends.append(self.vars)
        else:
            ends.append(before)
        return self._after_if(before, ends)

    def _after_if(self, before: dict[str, Type], ends: list[dict[str, Type]]) -> bool:
        """The scope after an if statement; True when no arm falls through."""
        self.vars = self.merge(ends) if ends else dict(before)
        return not ends

    def enter_loop(self, trips: int) -> Loop:
        # Sometimes widen an int or bool local to a number at the loop head, so the body
        # may assign it floats (unions at loop heads: `t = 0; for ...: t += 0.5`).
        for name, t in list(self.vars.items()):
            if isinstance(t, Sc) and name not in self.protected and self.chance(0.15):
                self.vars[name] = Sc(t.kinds | {F, I}, t.bits)
        for name, t in list(self.vars.items()):  # bits of whatever a previous iteration left
            self.vars[name] = _at_least(t, 130)
        loop = Loop(dict(self.vars), trips=trips)
        self.loops.append(loop)
        self.loop_depth += 1
        return loop

    def exit_loop(self, loop: Loop, indent: int, has_else: bool) -> None:
        self.loops.pop()
        self.loop_depth -= 1
        grown = LOOP_GROWTH_AFTER * loop.trips
        after: dict[str, Type] = {}
        for name, t in loop.entry.items():
            u = T.union(t, loop.seen[name]) if name in loop.seen else t
            if u is None:
                continue
            after[name] = _at_least(u, _max_bits(u) + grown)
        for name in self.protected - set(after):
            self.protected.discard(name)
        self.vars = after
        if has_else:
            self.emit(indent, "else:")
            before = dict(self.vars)
            if not self.block(indent + 1, self.rng.randint(1, 2)):
                self.vars = self.merge([before, self.vars])
            else:
                self.vars = before

    def for_stmt(self, indent: int) -> None:
        var = self.fresh("i")
        r = self.rng.random()
        if r < 0.35:
            trips, rng_src = (k := self.rng.randint(0, 5)), f"range({k})"
        elif r < 0.55:
            a = self.rng.randint(-3, 3)
            step = self.rng.choice([1, 2, -1, -2, 3])
            b = a + step * self.rng.randint(0, 4)
            trips, rng_src = 5, f"range({a}, {b}, {step})" if step != 1 or self.chance(0.5) else f"range({a}, {b})"
        elif r < 0.75:
            trips, rng_src = 4, f"range({self.expr('int', 2).src} % 5)"
        elif r < 0.9:
            trips, rng_src = 4, f"range(min({self.expr('int', 2).src}, 4))"
        else:  # a step computed at run time: zero raises ValueError
            trips, rng_src = 5, f"range(-2, 3, {self.expr('int', 1).src} % 3 - 1)"
        self.emit(indent, f"for {var} in {rng_src}:")
        loop = self.enter_loop(trips)
        self.vars[var] = T.int_t(8)
        self.protected.add(var)
        self.block(indent + 1, self.rng.randint(1, 4))
        self.protected.discard(var)
        self.exit_loop(loop, indent, self.chance(0.2))

    def while_stmt(self, indent: int) -> None:
        w = self.fresh("w")
        k = self.rng.randint(1, 4)
        self.emit(indent, f"{w} = 0")
        self.vars[w] = T.int_t(4)
        self.protected.add(w)
        loop = self.enter_loop(k)
        cond = self.expr("cond", 2).src
        r = self.rng.random()
        head = f"{w} < {k} and {cond}" if r < 0.5 else (f"{cond} and {w} < {k}" if r < 0.7 else f"{w} < {k}")
        self.emit(indent, f"while {head}:")
        self.emit(indent + 1, f"{w} += 1")  # first, so `continue` cannot skip it
        self.block(indent + 1, self.rng.randint(1, 4))
        self.exit_loop(loop, indent, self.chance(0.15))

    def return_stmt(self, indent: int) -> None:
        if not self.helper and self.chance(0.1):
            self.emit(indent, "return")
            return
        e = self.bounded(self.expr("num" if self.helper else "any", 2), 1100)
        self.emit(indent, f"return {e.src}")
        self.returns.append(e.t)

    def optional_stmt(self, indent: int) -> None:
        h = self.rng.choice([h for h in self.helpers if h.optional])
        call = self.call_of(h, 2)
        other = self.expr("num", 2)
        t = T.union(h.result, other.t)
        name = self.fresh()
        self.emit(indent, f"{name} = {call.src}\nif {name} is None:\n    {name} = {other.src}")
        if isinstance(t, Sc):
            self.bind(name, t)

    def final_return(self, indent: int) -> None:
        live = [n for n in self.vars if n not in self.protected]
        self.rng.shuffle(live)
        if live and self.chance(0.75):
            picked = live[: self.rng.randint(1, 4)]
            self.emit(indent, f"return {picked[0]}" if len(picked) == 1 else f"return ({', '.join(picked)})")
        else:
            self.return_stmt(indent)


LOOP_GROWTH_AFTER = 70


def _max_bits(t: Type) -> int:
    return max((i.bits for i in t.items), default=1) if isinstance(t, Tup) else t.bits


def _at_least(t: Type, bits: int) -> Type:
    if isinstance(t, Tup):
        return Tup(tuple(Sc(i.kinds, max(i.bits, bits)) for i in t.items))
    return Sc(t.kinds, max(t.bits, bits)) if I in t.kinds else t


def _param_type(kind: str) -> Type:
    return {"int": T.int_t(101), "float": T.FLOAT, "bool": T.BOOL, "optional": T.int_t(101),
            "tuple": Tup((T.int_t(101), T.FLOAT))}[kind]


def _helper(rng: random.Random, helpers: list[Helper], index: int) -> tuple[list[str], Helper]:
    """A helper function over scalars: ordinary, recursive on a small depth, or one
    that returns None on some path."""
    name = f"g{index}"
    r = rng.random()
    recursive, optional = r < 0.2, 0.2 <= r < 0.35
    params: list[tuple[str, str, str | None]] = []
    if recursive:
        params.append(("n", "int", None))
    for k in range(rng.randint(1, 3)):
        want = rng.choice(["int", "float", "num", "int"])
        # (a float parameter's default is a float: an int there would escape the bounds on ints)
        choices = ["2", "7", "-1"] if want == "int" else ["0.5", "2.0", "-0.0"]
        default = rng.choice([None, None] + choices)
        if params and params[-1][2] is not None and default is None:
            default = choices[0]  # (parameters after one with a default need one)
        params.append((f"p{k}", want, default))
    types: dict[str, Type] = {"n": T.int_t(3)} if recursive else {}
    for pname, want, _ in params[1 if recursive else 0:]:
        types[pname] = {"int": Sc(frozenset({B, I}), 1100), "float": T.FLOAT, "num": Sc(frozenset({B, I, F}), 1100)}[want]
    gen = FunctionGen(rng, helpers, types, budget=rng.randint(1, 5), helper=True)
    if recursive:
        gen.protected.add("n")
    lines = [f"def {name}({', '.join(p if d is None else f'{p}={d}' for p, _, d in params)}):"]
    if recursive:  # the depth only decreases, and the base case comes first
        base = gen.bounded(gen.expr("num", 2), 1100)
        gen.emit(1, f"if n <= 0:\n    return {base.src}")
    if optional:
        gen.emit(1, f"if {gen.expr('cond', 2).src if rng.random() < 0.5 else gen.rare_cond()}:\n    return None")
    gen.block(1, gen.budget)
    result = gen.bounded(gen.expr("num", 2), 1100)
    result_t = result.t
    if recursive:  # result = (self(n - 1, ...) op value) % M, which keeps it bounded
        args = ", ".join(["n - 1"] + [gen.bounded(gen.expr(w, 1), 1100).src for _, w, _ in params[1:]])
        op = rng.choice(["+", "-", "*"])
        other = gen.expr("num", 1)
        u = T.union(base.t, result_t)
        assert isinstance(u, Sc) and isinstance(other.t, Sc)
        rec = T.arith(op, T.arith("%", u, T.int_t(61)), other.t)
        result_t = T.union(u, rec) or u  # type: ignore[assignment]
        result = E(f"({name}({args}) % {rng.choice((97, 2**61 - 1, 1000003))}) {op} {other.src}", result_t)
        result_t = Sc(result_t.kinds, 1100)  # type: ignore[union-attr]
    lines += gen.lines
    lines.append(f"    return {result.src}")
    assert isinstance(result_t, Sc)
    for t in gen.returns:  # early returns in the body add their types
        if isinstance(t, Sc):
            result_t = Sc(result_t.kinds | t.kinds, max(result_t.bits, t.bits))
    return lines, Helper(name, params, result_t, optional=optional, recursive=recursive)


def _args(rng: random.Random, kinds: list[str]) -> tuple[object, ...]:
    out: list[object] = []
    for kind in kinds:
        if kind in ("int", "optional"):
            v: object = rng.choice(EDGE_INTS) if rng.random() < 0.7 else rng.randint(-1000, 1000)
            if kind == "optional" and rng.random() < 0.4:
                v = None
        elif kind == "float":
            v = rng.choice(EDGE_FLOATS) if rng.random() < 0.7 else rng.choice([rng.uniform(-1e3, 1e3), rng.uniform(-2.0, 2.0), rng.expovariate(1e-10)])
        elif kind == "bool":
            v = rng.random() < 0.5
        else:
            v = (rng.choice(EDGE_INTS), rng.choice(EDGE_FLOATS))
        out.append(v)
    return tuple(out)


def generate(rng: random.Random, seed: str) -> Program:
    """One scalar program with its calls."""
    helpers: list[Helper] = []
    lines: list[str] = []
    for k in range(rng.choice([0, 1, 1, 2, 3])):
        hl, h = _helper(rng, helpers, k)
        lines += hl + [""]
        helpers.append(h)
    kinds = [rng.choice(PARAM_KINDS) for _ in range(rng.randint(1, 4))]
    prefix = {"int": "n", "float": "x", "bool": "b", "tuple": "t", "optional": "o"}
    names = [f"{prefix[k]}{i}" for i, k in enumerate(kinds)]  # n0, x1, b2, t3, o4...
    gen = FunctionGen(rng, helpers, {n: _param_type(k) for n, k in zip(names, kinds)}, budget=rng.randint(4, 18))
    lines.append(f"def f({', '.join(names)}):")
    for n, k in zip(names, kinds):
        if k == "optional":
            gen.emit(1, f"if {n} is None:\n    {n} = {gen.const('int').src}")
    if not gen.block(1, 1000):
        gen.final_return(1)
    lines += gen.lines
    calls = [scalar_call(_args(rng, kinds)) for _ in range(rng.randint(4, 7))]
    if rng.random() < 0.15 and ("int" in kinds or "bool" in kinds):
        # Another signature: a bool where an int is expected, or an int for a bool.
        swapped = list(_args(rng, kinds))
        for i, k in enumerate(kinds):
            if k == "int":
                swapped[i] = rng.random() < 0.5
            elif k == "bool":
                swapped[i] = rng.choice([0, 1, -1, 2, 2**63 - 1])
        calls.append(scalar_call(tuple(swapped)))
    strict = [False, True] if rng.random() < 0.25 else [False]
    return Program("scalar", seed, "\n".join(lines) + "\n", calls, strict)
