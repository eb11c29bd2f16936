"""Random NumPy array programs.

The entry function takes 1-3 arrays (float64, int64, float32, int32, int8, uint8,
uint64 or bool; 1-3 dimensions) and some of `k` (an int), `x` (a float) and `n` (a
small int, used for shapes and indices). Its body creates arrays (np.zeros, ones,
empty with a fill loop, full, arange, *_like, .copy(), .T, rows), loops over their
dimensions (nested, with if/break/continue, a repeat loop or a counted while
around), reads and writes elements (`=`, `+=`, through rows and transposes),
accumulates scalars and returns arrays, elements, scalars or tuples of them.
Element arithmetic mixes dtypes with Python ints and floats, so NumPy's promotion,
wrapping with a RuntimeWarning, division by zero and OverflowError all happen.

Each array's extents are symbols ("N", "M", "K" for the arguments, "n", constants,
"?" when unknown): an index is safe when a loop variable ranges over the same
extent, and most reads and writes use safe indices (a few do not, and raise
IndexError). The calls (`array_args`) build arguments of those extents in every
layout: C, Fortran, transposed, strided, reversed, read-only (for arrays the body
never writes), zero-size, and aliasing views of one base passed as two arguments.

Python ints stay bounded: the accumulators carried around loops are only updated
with expressions that do not read accumulators, so they grow linearly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .array_args import array_calls
from .program import Program

DTYPES = ("float64", "float64", "float64", "int64", "int64", "float32", "int32", "int8", "uint8", "uint64", "bool")
DTYPE_SPELLINGS = {
    "float64": ["np.float64", "float", '"float64"'], "int64": ["np.int64", "int", '"int64"'],
    "float32": ["np.float32", '"float32"'], "int32": ["np.int32", '"int32"'], "int8": ["np.int8"],
    "uint8": ["np.uint8", '"uint8"'], "uint64": ["np.uint64"], "bool": ["np.bool_", "bool"],
}
INT_CONSTS = ("0", "1", "2", "3", "7", "100", "127", "(-1)", "(-2)", "5", "10")
#: Constants that overflow narrow dtypes (NumPy wraps with a warning, or raises OverflowError).
BIG_INTS = ("128", "255", "300", "1000", "(-128)", "2147483647", "9223372036854775807", "(-9223372036854775808)", "4611686018427387904")
FLOAT_CONSTS = ("0.5", "1.5", "(-2.5)", "0.1", "1e308", "(-1e308)", "3.4e38", "1e-300", "5e-324", "(-0.0)", "math.inf", "math.nan", "2.0")
MATH = ("sqrt", "floor", "ceil", "exp", "sin", "fabs", "log1p", "atan", "tanh")


@dataclass
class Arr:
    name: str
    dtype: str
    dims: tuple[str, ...]  # symbolic extents
    writable: bool = True
    param: bool = False
    written: bool = False


@dataclass
class Ex:
    src: str
    kinds: frozenset[str]  # "i" int (Python or NumPy), "f" float
    tags: frozenset[str] = frozenset()  # "u64", "f32": elements of those dtypes are read

    def join(self, *others: "Ex") -> frozenset[str]:
        return self.tags.union(*(o.tags for o in others))


I_, F_ = frozenset("i"), frozenset("f")


def kind_of(dtype: str) -> frozenset[str]:
    return F_ if dtype.startswith("float") else I_


class ArrayGen:
    """Generates the entry function (and helpers) of one array program."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.arrays: dict[str, Arr] = {}
        self.scalars: dict[str, frozenset[str]] = {}  # readable scalars
        self.accs: dict[str, frozenset[str]] = {}  # accumulators of the loops being generated
        self.bound: list[tuple[str, str]] = []  # (loop variable, extent it ranges over)
        self.lines: list[str] = []
        self.counter = 0
        # Early returns give a number, so the function must return numbers throughout
        # (a union of an array or tuple with a number does not compile).
        self.scalar_return = rng.random() < 0.4
        self.helpers: set[str] = set()

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.extend("    " * indent + line for line in text.split("\n"))

    # -- indices -------------------------------------------------------------------------

    def index(self, arr: Arr, safe: bool = True) -> str | None:
        """Indices for every dimension of `arr`; None when no safe ones exist here."""
        parts = []
        for extent in arr.dims:
            loops = [v for v, e in self.bound if e == extent and e != "?"]
            if loops and (safe or self.chance(0.8)):
                v = self.rng.choice(loops)
                parts.append(self.rng.choice([v, v, v, f"-1 - {v}", f"{v} - 1"] + ([] if safe else [f"{v} + 1"])))
            elif extent.isdigit():
                parts.append(str(self.rng.randrange(-int(extent), int(extent))))
            elif not safe:
                parts.append(self.rng.choice(["0", "-1", "n" if "n" in self.scalars else "1"]))
            else:
                return None
        return ", ".join(parts)

    def element(self, arr: Arr, idx: str) -> str:
        if "," in idx and self.chance(0.25):  # through a row view: m[i][j]
            first, rest = idx.split(", ", 1)
            return f"{arr.name}[{first}][{rest}]"
        return f"{arr.name}[{idx}]"

    def read(self) -> Ex | None:
        arrs = list(self.arrays.values())
        self.rng.shuffle(arrs)
        for arr in arrs:
            idx = self.index(arr, safe=not self.chance(0.02))
            if idx is None:
                continue
            src = self.element(arr, idx)
            if arr.dtype == "bool":  # (np.bool arithmetic is logical: read it as a number)
                return Ex(f"int({src})", I_) if self.chance(0.7) else Ex(f"float({src})", F_)
            return Ex(src, kind_of(arr.dtype), frozenset({"u64"} if arr.dtype == "uint64" else {"f32"} if arr.dtype == "float32" else ()))
        return None

    # -- expressions ---------------------------------------------------------------------

    def leaf(self, want: str) -> Ex:
        r = self.rng.random()
        if r < 0.5:
            e = self.read()
            if e is not None and (want != "int" or e.kinds == I_):
                return e
        names = [n for n, k in self.scalars.items() if want != "int" or k == I_]
        names += [v for v, _ in self.bound]
        if names and r < 0.8:
            name = self.rng.choice(names)
            return Ex(name, self.scalars.get(name, I_))
        if want == "int" or self.chance(0.55):
            return Ex(self.rng.choice(BIG_INTS if self.chance(0.15) else INT_CONSTS), I_)
        return Ex(self.rng.choice(FLOAT_CONSTS), F_)

    def expr(self, want: str, depth: int) -> Ex:
        """want: "num" (int or float) or "int"."""
        if depth <= 0 or self.chance(0.25):
            return self.leaf(want)
        r = self.rng.random()
        if r < 0.45:
            ops = ["+", "-", "*", "+", "-", "*", "//", "%"] + (["/"] if want != "int" else [])
            op = self.rng.choice(ops)
            a = self.expr(want, depth - 1)
            b = self.expr(want, depth - 1) if op not in ("//", "%", "/") or self.chance(0.4) else Ex(self.rng.choice(["2", "3", "7", "(-2)", "0.5"] if want != "int" else ["2", "3", "7"]), I_)
            if b.src == "0.5":
                b = Ex("0.5", F_)
            if op in ("//", "%") and "f32" in a.join(b) and self.chance(0.85):
                op = "-"  # (float32 // and % do not compile: keep those rare)
            kinds = F_ if (op == "/" or "f" in a.kinds or "f" in b.kinds) else I_
            return Ex(f"({a.src} {op} {b.src})", kinds, a.join(b))
        if r < 0.55:
            a, b = self.expr("int", depth - 1), self.expr("int", depth - 1)
            op = self.rng.choice(["&", "|", "^", "<<", ">>"])
            if op in ("<<", ">>"):
                b = Ex(self.rng.choice(["1", "3", "7", "8", "2"] if self.chance(0.8) else ["31", "63", "64"]), I_) if self.chance(0.7) else Ex(f"({b.src} & 15)", I_, b.tags)
            if "u64" in a.join(b) and self.chance(0.9):
                return a  # (a uint64 with a signed int is a float64 in NumPy: TypeError)
            return Ex(f"({a.src} {op} {b.src})", I_, a.join(b))
        if r < 0.62:
            a = self.expr(want, depth - 1)
            if "f32" in a.tags and self.chance(0.85):
                return a  # (float32 powers do not compile)
            exp = self.rng.choice(["2", "3", "0", "2", "3", "(-1)" if self.chance(0.3) else "1"] + (["0.5", "2.0"] if want != "int" and self.chance(0.3) else []))
            return Ex(f"({a.src} ** {exp})", F_ if "." in exp or "f" in a.kinds else a.kinds, a.tags)
        if r < 0.72:
            items = [self.expr(want, depth - 1) for _ in range(2)]
            fn = self.rng.choice(["min", "max"])
            return Ex(f"{fn}({items[0].src}, {items[1].src})", items[0].kinds | items[1].kinds, items[0].join(items[1]))
        if r < 0.78:
            a = self.expr(want, depth - 1)
            return Ex(f"{self.rng.choice(['abs', '-'])}({a.src})", a.kinds, a.tags)
        if r < 0.8 and want != "int" and self.helpers and self.chance(0.5):
            return self.helper_call(depth)
        if r < 0.86 and want != "int":
            fn = self.rng.choice(MATH)
            a = self.expr("num", depth - 1)
            return Ex(f"math.{fn}({a.src})", I_ if fn in ("floor", "ceil", "trunc") else F_)
        if r < 0.92:
            a, b = self.expr(want, depth - 1), self.expr(want, depth - 1)
            return Ex(f"({a.src} if {self.cond(depth - 1)} else {b.src})", a.kinds | b.kinds, a.join(b))
        a = self.expr("num", depth - 1)
        if want == "int" or self.chance(0.5):
            return Ex(f"int({a.src})", I_)
        return Ex(f"float({a.src})", F_)

    def helper_call(self, depth: int) -> Ex:
        """A call of a module-level helper: `h(u, v)` over numbers, or `r(q, i)`,
        which reads a 1-D array (native callees that only read are called natively)."""
        if "r" in self.helpers and self.chance(0.5):
            ones = [a for a in self.arrays.values() if len(a.dims) == 1 and a.dtype != "bool"]
            self.rng.shuffle(ones)
            for arr in ones:
                loops = [v for v, e in self.bound if e == arr.dims[0] and e != "?"]
                if loops:
                    return Ex(f"r({arr.name}, {self.rng.choice(loops)})", kind_of(arr.dtype) | F_)
        if "h" not in self.helpers:
            return self.leaf("num")
        a, b = self.expr("num", depth - 1), self.expr("num", depth - 1)
        return Ex(f"h({a.src}, {b.src})", I_ | F_, a.join(b))

    def cond(self, depth: int) -> str:
        r = self.rng.random()
        if r < 0.15:
            bools = [a for a in self.arrays.values() if a.dtype == "bool"]
            for arr in bools:
                idx = self.index(arr)
                if idx is not None:
                    return f"{'not ' if self.chance(0.3) else ''}{self.element(arr, idx)}"
        if r < 0.8:
            op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"{self.expr('num', depth).src} {op} {self.expr('num', depth).src}"
        if r < 0.9:
            return f"{self.cond(0)} {self.rng.choice(['and', 'or'])} {self.cond(0)}"
        return self.expr("num", depth).src

    # -- statements ----------------------------------------------------------------------

    def writable(self) -> list[Arr]:
        return [a for a in self.arrays.values() if a.writable]

    def write(self, indent: int) -> bool:
        arrs = self.writable()
        self.rng.shuffle(arrs)
        for arr in arrs:
            idx = self.index(arr, safe=not self.chance(0.02))
            if idx is None:
                continue
            value = self.expr("num", 2).src
            op = self.rng.choice(["=", "=", "=", "+=", "-=", "*="] if arr.dtype != "bool" else ["="])
            self.emit(indent, f"{self.element(arr, idx)} {op} {value}")
            arr.written = True
            return True
        return False

    def accumulate(self, indent: int) -> bool:
        if not self.accs:
            return False
        name = self.rng.choice(list(self.accs))
        e = self.expr("num", 2)  # (never reads an accumulator: see the module docstring)
        form = self.rng.choice(["{s} = {s} + {e}", "{s} += {e}", "{s} = max({s}, {e})", "{s} = min({s}, {e})", "{s} = {s} * {e}", "{s} -= {e}"])
        self.emit(indent, form.format(s=name, e=e.src))
        self.accs[name] = self.accs[name] | e.kinds
        return True

    def loop_stmt(self, indent: int, depth: int) -> None:
        r = self.rng.random()
        if r < 0.45 and self.write(indent):
            return
        if r < 0.65 and self.accumulate(indent):
            return
        if r < 0.73:
            t = self.fresh("t")
            e = self.expr("num", 2)
            self.emit(indent, f"{t} = {e.src}")
            self.scalars[t] = e.kinds
            return
        if r < 0.85 and depth < 3:
            self.emit(indent, f"if {self.cond(2)}:")
            saved = dict(self.scalars)
            self.loop_body(indent + 1, depth + 1, self.rng.randint(1, 2))
            self.scalars = dict(saved)
            if self.chance(0.4):
                self.emit(indent, "else:")
                self.loop_body(indent + 1, depth + 1, 1)
                self.scalars = dict(saved)
            return
        if r < 0.9:
            self.emit(indent, f"if {self.cond(1)}:\n    {self.rng.choice(['break', 'continue'])}")
            return
        if r < 0.93:
            self.emit(indent, f"if {self.rare_cond()}:\n    raise ValueError('found')")
            return
        if r < 0.96 and self.scalar_return:
            self.emit(indent, f"if {self.rare_cond()}:\n    return {self.expr('num', 1).src}")
            return
        self.write(indent) or self.accumulate(indent)

    def rare_cond(self) -> str:
        e = self.read() or self.leaf("num")
        return self.rng.choice([f"{e.src} == 3", f"{e.src} > 1e300", f"math.isnan({e.src})", f"{e.src} < -1000"])

    def loop_body(self, indent: int, depth: int, n: int) -> None:
        start = len(self.lines)
        for _ in range(n):
            self.loop_stmt(indent, depth)
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def loop_nest(self, indent: int) -> None:
        """Loops over every dimension of one array (or fewer), maybe inside a repeat
        loop or a counted while, with a body of element statements."""
        driver = self.rng.choice(list(self.arrays.values()))
        self.accs = {}
        for _ in range(self.rng.choice([0, 1, 1, 2])):
            s = self.fresh("s")
            init = self.rng.choice(["0", "0.0", "1", "x" if "x" in self.scalars else "0.5", "k" if "k" in self.scalars else "2"])
            self.emit(indent, f"{s} = {init}")
            self.accs[s] = F_ if ("." in init or init == "x") else I_
        saved = dict(self.scalars)
        outer = self.rng.random()
        if outer < 0.12:
            r = self.fresh("r")
            self.emit(indent, f"for {r} in range(2):")
            indent += 1
        elif outer < 0.2:
            w = self.fresh("w")
            self.emit(indent, f"{w} = 0\nwhile {w} < 2:\n    {w} += 1")
            indent += 1
        levels = len(driver.dims) if self.chance(0.8) else 1
        for d in range(levels):
            v = self.fresh("i")
            extent = driver.dims[d]
            spelling = self.rng.choice([f"{driver.name}.shape[{d}]"] + ([f"len({driver.name})"] if d == 0 else []))
            if extent.isdigit() or extent == "n":
                spelling = self.rng.choice([spelling, extent])
            self.emit(indent, f"for {v} in range({spelling}):")
            self.bound.append((v, extent))
            indent += 1
        self.loop_body(indent, 0, self.rng.randint(1, 4))
        del self.bound[len(self.bound) - levels:]
        self.scalars = saved
        self.scalars.update(self.accs)  # readable after the loop
        self.accs = {}

    def creator(self, indent: int) -> None:
        name = self.fresh("c")
        src = self.rng.choice(list(self.arrays.values()))
        r = self.rng.random()
        dtype = self.rng.choice(DTYPES)
        spell = self.rng.choice(DTYPE_SPELLINGS[dtype])
        shapes = [(f"len({src.name})", (src.dims[0],)), (f"{src.name}.shape", src.dims), ("(2, 3)", ("2", "3")), ("3", ("3",))]
        if "n" in self.scalars:
            shapes += [("n", ("n",)), ("(n, 2)", ("n", "2"))] * 2
        shape, dims = self.rng.choice(shapes)
        fill = False
        if r < 0.4:
            fn = self.rng.choice(["zeros", "ones", "empty"])
            dt = f", dtype={spell}" if (self.chance(0.75) or fn == "empty") else ""
            dtype = dtype if dt else "float64"
            text, fill = f"np.{fn}({shape}{dt})", fn == "empty"
        elif r < 0.5:
            # (a fill value of the array's own kind: a float into an int array does not compile)
            kind = "f" if dtype.startswith("float") else "i"
            value = self.expr("num", 1) if self.chance(0.3) else None
            value_src = value.src if value is not None and kind in value.kinds else self.rng.choice(
                ["1.5", "-0.0", "x" if "x" in self.scalars else "2.5"] if kind == "f" else ["7", "0", "-3", "k" if "k" in self.scalars else "1"])
            if dtype == "bool":
                value_src = self.rng.choice(["True", "False", "1"])
            text = f"np.full({shape}, {value_src}, dtype={spell})"
        elif r < 0.6:
            if "n" in self.scalars and self.chance(0.6):
                text, dims, dtype = "np.arange(n)", ("n",), "int64"
            else:
                lo = self.rng.randint(-3, 3)
                text, dims, dtype = f"np.arange({lo}, {lo + self.rng.randint(0, 5)})", ("?",), "int64"
        elif r < 0.75:
            text, dims, dtype = f"{src.name}.copy()", src.dims, src.dtype
        elif r < 0.88:
            fn = self.rng.choice(["zeros_like", "ones_like", "empty_like"])
            text, dims, dtype, fill = f"np.{fn}({src.name})", src.dims, src.dtype, fn == "empty_like"
        elif len(src.dims) >= 2:
            self.emit(indent, f"{name} = {src.name}.T")
            self.arrays[name] = Arr(name, src.dtype, tuple(reversed(src.dims)), src.writable)
            return
        else:
            text, dims, dtype = f"np.zeros({shape}, dtype={spell})", dims, dtype
        self.emit(indent, f"{name} = {text}")
        arr = Arr(name, dtype, dims)
        if fill:  # every element, so nothing uninitialised is ever read or returned
            self.fill(indent, arr)
        self.arrays[name] = arr

    def fill(self, indent: int, arr: Arr) -> None:
        saved = dict(self.arrays)
        self.arrays = {n: a for n, a in self.arrays.items() if a.param}  # (reads only from initialised arrays)
        names = []
        for d, extent in enumerate(arr.dims):
            v = self.fresh("i")
            self.emit(indent + d, f"for {v} in range({arr.name}.shape[{d}]):")
            self.bound.append((v, extent))
            names.append(v)
        self.emit(indent + len(arr.dims), f"{arr.name}[{', '.join(names)}] = {self.expr('num', 2).src}")
        del self.bound[len(self.bound) - len(names):]
        self.arrays = saved

    def returns(self, indent: int) -> None:
        if self.scalar_return:
            e = self.read() if self.chance(0.2) else None
            if e is None:
                e = Ex(self.rng.choice(list(self.scalars)), I_) if self.scalars and self.chance(0.8) else self.expr("num", 1)
            self.emit(indent, f"return {e.src}")
            return
        options = [a for a in self.arrays if not self.arrays[a].param] * 2 + list(self.arrays)
        options += list(self.scalars)
        self.rng.shuffle(options)
        if self.chance(0.08):
            return  # None
        picked = options[: self.rng.choice([1, 1, 2, 3])]
        if picked and self.chance(0.1) and len(self.arrays[picked[0]].dims if picked[0] in self.arrays else ()) >= 2:
            picked[0] += ".T"
        self.emit(indent, f"return {', '.join(picked)}" if len(picked) > 1 else f"return {picked[0]}")


def generate(rng: random.Random, seed: str) -> Program:
    """One array program with its calls."""
    g = ArrayGen(rng)
    params: list[str] = []
    extents = ["N", "M", "K"]
    for k in range(rng.choice([1, 2, 2, 3])):
        ndim = rng.choice([1, 1, 1, 2, 2, 3])
        arr = Arr("abc"[k], rng.choice(DTYPES), tuple(extents[:ndim]), param=True)
        g.arrays[arr.name] = arr
        params.append(arr.name)
    for name, kinds, p in (("k", I_, 0.4), ("x", F_, 0.5), ("n", I_, 0.5)):
        if rng.random() < p:
            g.scalars[name] = kinds
            params.append(name)
    read_only = [a for a in g.arrays.values() if rng.random() < 0.25]
    for a in read_only:
        a.writable = False  # never written by the body: the calls may pass read-only views
    if rng.random() < 0.3:  # helpers: over numbers, and one that reads a 1-D array
        helper = ArrayGen(rng)
        helper.scalars = {"u": I_ | F_, "v": I_ | F_}
        g.emit(0, f"def h(u, v):\n    return {helper.expr('num', 2).src}\n")
        g.helpers.add("h")
        if rng.random() < 0.5:
            g.emit(0, f"def r(q, i):\n    return q[i] {rng.choice(['+', '*', '-'])} q[-1 - i] {rng.choice(['+ 1', '* 0.5', '// 2', ''])}\n")
            g.helpers.add("r")
    g.emit(0, f"def f({', '.join(params)}):")
    for _ in range(rng.choice([0, 1, 1, 2])):
        g.creator(1)
    for _ in range(rng.choice([1, 1, 2, 3])):
        g.loop_nest(1)
        if rng.random() < 0.3:
            g.creator(1)
    if rng.random() < 0.3:
        g.write(1)  # outside any loop: a constant index, IndexError on an empty array
    g.returns(1)
    params_info = [(a.name, a.dtype, len(a.dims), not a.writable and not a.written) for a in g.arrays.values() if a.param]
    calls = array_calls(rng, params_info, [p for p in params if p in ("k", "x", "n")])
    strict = [False, True] if rng.random() < 0.5 else [False]
    return Program("array", seed, "\n".join(g.lines) + "\n", calls, strict)
