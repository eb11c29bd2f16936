"""An llvmlite IR builder plus the pieces every lowering needs: guards that hand the
call back to CPython (deoptimisation), overflow-checked integer arithmetic, conversions
between representations, and splitting on the tag of a union value.

A guard branches to the deopt block at once. (Deferring guards to a sticky flag checked
at back-edges was tried: it lets LLVM if-convert diamonds that contain guards, but it
hides the no-overflow facts LLVM uses to prove divisors nonzero and ranges bounded,
and measured slower overall.) Operations are still kept free of undefined behaviour
on their own (safe divisors, saturating float-to-int), so no guard placement can ever
make native code trap.

The exception is a strip of a loop (strips.py, `strip`): there the guards do set a
flag, and the ops whose guard protects the op itself (a divisor, an index) choose a
harmless operand when the flag's condition holds.
"""

from __future__ import annotations

import math
import platform
from typing import Callable, Protocol

from llvmlite import ir

from ..typing.types import BOOL, BOTTOM, FLOAT, INT, UINT, INT128, NP_F64, NP_I64, ArrayType, TupleType, Type, UnionType, base, options
from .ltypes import F64, I1, I8, I32, I64, declare, llvm_type, math_function
from . import int128
from ..abi import DEOPT_KIND_SHIFT, FLOAT_SUSPICION_DEOPT, SPECULATIVE_DEOPT as SPECULATIVE

DEOPT = 1
Typed = tuple[ir.Value, Type]


class StripGuards(Protocol):
    """What the ops lowered in a strip of a loop ask of it (striplog.StripLog)."""

    #: float ops whose warning test is one test after the strip
    absorbed: frozenset[object]
    #: ids of pointers that may not follow the index (wrapped or redirected)
    irregular: set[int]

    def fail_if(self, cond: ir.Value) -> None:
        """Set the strip's flag where `cond` holds, instead of leaving the loop."""

    def safe(self, ptr: ir.Value, bad: ir.Value) -> ir.Value:
        """`ptr`, or a scratch slot where `bad` says its index is out of bounds."""

    def log(self, ptr: ir.Value, dtype: str, op: object) -> ir.Value:
        """Before a store to `ptr`: log the old element; where to store instead."""


class Emitter:
    def __init__(self, module: ir.Module, func: ir.Function) -> None:
        self.module = module
        self.func = func
        self.alloca_block = func.append_basic_block("entry")
        self.builder = ir.IRBuilder(self.alloca_block)
        self._deopt_blocks: dict[int, ir.Block] = {}
        self.line = 0
        self.speculative = False  # lowering an op hoisted by opt/speculate.py
        self.kind = 0  # of the guard being lowered: abi.ENTRY_BOUNDS_DEOPT and the like
        #: While one case of a branch-free `split` is lowered: the i1 that says whether
        #: it is the case that holds; guards and deferred tests count only then.
        self.predicate: ir.Value | None = None
        self.float_warning_check = "precise"  # for np.float64 arithmetic (opt/finiteness.FloatTests.arithmetic_test)
        self.float_error_check = "precise"  # for math functions (opt/finiteness.FloatTests.op_tests)
        #: A function that writes to memory deopts by resuming the interpreter (see
        #: cuvil_bc/resume.py) at `resume`, the last resume point lowered (a
        #: `deopt.ResumeState`); one that only reads re-runs the call.
        self.precise = False
        self.resume: object = None
        self.warned: ir.Value | None = None  # the deferred-warning flag (warn_if)
        self.unfinite: ir.Value | None = None  # NaN once a deferred test saw a non-finite value
        #: In a resume region of a function that writes (opt/regions.py): its deopts
        #: resume before the region, so warnings are deferred to the flags as in a
        #: reader, and each exit of the region tests them (`deopt_if_warned`).
        self.deferring = False
        #: Called on a deopt path with the values the resume state hands over, to
        #: release the other array references held there (codegen, refcount.py).
        self.on_deopt: Callable[[set[object]], None] | None = None
        self.held_key: Callable[[], object] = lambda: ()
        #: While a strip of a loop is lowered (strips.py): guards set its flag instead.
        self.strip: StripGuards | None = None
        self._opaque: dict[tuple[str, object], ir.Value] = {}  # opaque_constant's

    # -- helpers ------------------------------------------------------------------

    def block(self, name: str) -> ir.Block:
        return self.func.append_basic_block(name)

    def unless_rare(self, rare: ir.Value, value: ir.Value, slow: Callable[[], ir.Value], name: str) -> ir.Value:
        """`value`, or where `rare` holds (almost never: the branch is weighted so) what
        `slow` emits in a block of its own, such as a call to the C library."""
        b = self.builder
        here = b.block
        other, done = self.block(f"{name}.slow"), self.block(f"{name}.done")
        b.cbranch(rare, other, done).set_weights([1, 1 << 10])
        b.position_at_end(other)
        computed = slow()
        other_end = b.block
        b.branch(done)
        b.position_at_end(done)
        out = b.phi(value.type)
        out.add_incoming(value, here)
        out.add_incoming(computed, other_end)
        return out

    def alloca(self, typ: ir.Type) -> ir.Value:
        """An alloca in the entry block, so that mem2reg can promote it."""
        with self.builder.goto_block(self.alloca_block):
            self.builder.position_at_start(self.alloca_block)
            return self.builder.alloca(typ)


    def declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        return declare(self.module, name, ir.FunctionType(ret, args))

    def libm(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        """Call the C library's `name`, the function CPython itself calls, or the
        runtime's copy of one of CPython's own (csrc/pymath.c): `ltypes.math_function`."""
        fn = self.declare(name, ret, [a.type for a in args])
        math_function(fn)
        return self.builder.call(fn, args)

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        fn = self.declare(name, ret, [a.type for a in args])
        return self.builder.call(fn, args)

    @property
    def deferred(self) -> bool:
        """Whether warnings found here go to the flags (`warn_if`) instead of deopting:
        in a function that only reads, or in a resume region of one that writes."""
        return self.unfinite is not None and (not self.precise or self.deferring)

    def deopt_block(self, keep_line: bool = False, distinct: str = "") -> ir.Block:
        """A block that records the current line and returns DEOPT (one per line and,
        in a function that writes, resume point). With `keep_line` (a callee failed
        and recorded its own), the line is left as it is. A `distinct` name gives a
        block of its own, which LLVM does not merge with the others' branches: a guard
        on a loop-invariant condition then stays separate and can leave the loop."""
        from ..errors import Unsupported

        assert self.strip is None, "a strip has no deopt path: strips.py admits only ops that guard with deopt_if"
        code = (self.line | SPECULATIVE if self.speculative else self.line) | (self.kind << DEOPT_KIND_SHIFT)
        if keep_line:
            code = -1
        key: object = (code, distinct, self.held_key())
        if self.precise:
            if self.resume is None:
                raise Unsupported(f"a guard before any resume point (line {self.line})")
            key = (code, distinct, self.held_key(), self.resume.key())  # type: ignore[attr-defined]
        blk = self._deopt_blocks.get(key)
        if blk is None:
            blk = self.block(f"deopt.{self.line}" + (".speculative" if self.speculative else "") + (f".{distinct}" if distinct else ""))
            with self.builder.goto_block(blk):
                if not keep_line:
                    setter = self.declare("cb_set_deopt_line", ir.VoidType(), [I32])
                    self.builder.call(setter, [ir.Constant(I32, code)])
                handed: set[object] = set()
                if self.precise:
                    handed = self.resume.emit()  # type: ignore[attr-defined]
                # (cb_set_deopt_line also clears the resume point, which a precise
                # deopt then sets: a number left by a deopt whose handling never ran,
                # a KeyboardInterrupt raised as the call returned, would otherwise
                # resume some other function. One call, not two: deopt blocks count
                # against LLVM's inlining budget, and fib's twin stopped inlining.)
                if self.on_deopt is not None:
                    self.on_deopt(handed)
                ret = self.func.return_value.type
                if isinstance(ret, ir.LiteralStructType):  # a compiled function's {status, result}
                    members = [ir.Constant(I32, DEOPT), ir.Constant(ret.elements[1], ir.Undefined)]
                    self.builder.ret(ir.Constant(ret, members))
                else:
                    self.builder.ret(ir.Constant(I32, DEOPT))
            self._deopt_blocks[key] = blk
        return blk

    def _split_branchless(self, operands: list[Typed], i: int, result: Type, case: Callable[[list[Typed]], Typed]) -> ir.Value:
        b = self.builder
        val, t = operands[i]
        assert isinstance(t, UnionType)
        tag = b.extract_value(val, 0)
        outer = self.predicate
        out: ir.Value | None = None
        for k, opt in enumerate(t.options):
            holds = b.icmp_unsigned("==", tag, ir.Constant(I8, k))
            self.predicate = holds if outer is None else b.select(outer, holds, ir.Constant(I1, 0))
            try:
                rest = operands[:i] + [(b.extract_value(val, holder(t, k) + 1), opt)] + operands[i + 1 :]
                got = self.split(rest, result, case, branchless=True)
            finally:
                self.predicate = outer
            out = got if out is None else self.select_leaves(holds, got, out)
        assert out is not None
        return out

    def select_leaves(self, cond: ir.Value, a: ir.Value, c: ir.Value) -> ir.Value:
        """``cond ? a : c``, member by member for a struct (a union, a tuple): LLVM's
        loop vectorizer gives up on a select of a struct ("instruction return type
        cannot be vectorized"), where a select per scalar vectorizes."""
        b = self.builder
        if not isinstance(a.type, ir.LiteralStructType):
            return b.select(cond, a, c)
        out = ir.Constant(a.type, ir.Undefined)
        for k in range(len(a.type.elements)):
            out = b.insert_value(out, self.select_leaves(cond, b.extract_value(a, k), b.extract_value(c, k)), k)
        return out

    def opaque_float(self, value: ir.Value) -> ir.Value:
        """`value` (a double) through an empty inline asm: LLVM cannot fold or rewrite
        what it computes with, and it costs no instruction. Where LLVM's folding would
        make a NaN of another sign than the processor's (see `opaque_constant`)."""
        register = _FLOAT_REGISTER if value.type == F64 else "r"
        if register is None:
            return value
        return self.builder.asm(ir.FunctionType(value.type, [value.type]), "", f"={register},0", [value], False)

    def opaque_constant(self, value: ir.Constant) -> ir.Value:
        """A double or i64 constant that LLVM cannot see (`opaque_float`), computed
        once, in the entry block.

        LLVM treats the sign of a NaN that arithmetic makes as unspecified, and folds
        accordingly; CPython's is the processor's, and `math.copysign` shows it. So the
        float constants of `nan_sign_folded` and the sign masks of `negate` and
        `absolute` are hidden from LLVM's folder."""
        key = (str(value.type), value.constant)
        found = self._opaque.get(key)
        if found is None:
            with self.builder.goto_block(self.alloca_block):
                self.builder.position_at_start(self.alloca_block)
                found = self._opaque[key] = self.opaque_float(value)
        return found

    def float_constant(self, x: float) -> ir.Value:
        """A double constant, hidden from LLVM where its folding would change the sign
        of a NaN (`nan_sign_folded`)."""
        return self.opaque_constant(ir.Constant(F64, x)) if nan_sign_folded(x) else ir.Constant(F64, x)

    def negate(self, x: ir.Value) -> ir.Value:
        """``-x`` for a double, flipping the sign bit as CPython's C does, NaN
        included. Not `fneg`: LLVM moves an fneg into the arithmetic around it
        (``-(x / 3.0)`` becomes ``x / -3.0``, ``-a + b`` becomes ``b - a``), which
        keeps a NaN's sign where CPython flips it. An xor with a mask LLVM cannot
        see stays an xor, and still vectorizes."""
        mask = self.opaque_constant(ir.Constant(I64, -(2**63)))
        return self.builder.bitcast(self.builder.xor(self.builder.bitcast(x, I64), mask), F64)

    def absolute(self, x: ir.Value) -> ir.Value:
        """``abs(x)`` for a double, clearing the sign bit as C's fabs does, NaN
        included. Not `llvm.fabs`: LLVM drops an fabs whose sign it believes cannot
        matter (``abs(m) / abs(m)`` became ``m / m``), which keeps a NaN's sign."""
        mask = self.opaque_constant(ir.Constant(I64, 2**63 - 1))
        return self.builder.bitcast(self.builder.and_(self.builder.bitcast(x, I64), mask), F64)

    def deopt_if(self, cond: ir.Value, distinct: str = "", kind: int = 0) -> None:
        """Hand the call back to CPython when `cond` holds (an unlikely path); `kind`
        tells the dispatcher which assumption failed (abi.DROPPABLE), 0 for none."""
        cond = self.predicated(cond)
        if self.strip is not None:
            self.strip.fail_if(cond)
            return
        ok = self.block("ok")
        self.kind = kind
        try:
            br = self.builder.cbranch(cond, self.deopt_block(distinct=distinct), ok)
        finally:
            self.kind = 0
        br.set_weights([1, 1 << 20])
        self.builder.position_at_end(ok)

    def predicated(self, cond: ir.Value) -> ir.Value:
        """`cond`, and only while the case being lowered holds (`predicate`). What the
        other cases compute from their members' meaningless words is frozen (an
        ``undef`` must not reach a branch), and then and-ed, `cond` first: a branch
        on it is split into one on `cond` (almost never taken) and then one on the
        tag, which mispredicts where the tag changes from one element to the next.
        (As a plain ``and``, LLVM may put the tag first.)"""
        if self.predicate is None:
            return cond
        frozen = ir.instructions.Instruction(self.builder.block, cond.type, "freeze", [cond])
        self.builder._insert(frozen)
        return self.builder.select(frozen, self.predicate, ir.Constant(I1, 0))

    def warn_if(self, maybe: ir.Value, precise: Callable[[], ir.Value] | None = None) -> None:
        """A NumPy warning: native code computes NumPy's value all the same (an IEEE
        infinity or NaN), only the warning is missing. In a function that only reads,
        the test is deferred: `maybe` is or-ed into a flag that the function tests when
        it returns (`warned`), so the hot path has no branch; the call is then re-run in
        CPython, which warns (and computes the same value, along the same path). A
        function that writes deopts at once, precisely (`precise` refines `maybe`),
        except in a resume region, where it defers too."""
        if not self.deferred:
            if precise is None:
                self.deopt_if(maybe)
            else:
                self.deopt_if_refined(maybe, precise)
            return
        assert self.warned is not None, "prepare_warnings() first: returns test the flag"
        self.builder.store(self.builder.or_(self.builder.load(self.warned), self.predicated(maybe)), self.warned)

    def suspect_if(self, maybe: ir.Value) -> None:
        """`warn_if` for a value that is an infinity or NaN (`maybe`): a warning only
        if no operand was one already, which a deferred test does not know. Deferred,
        it joins `unfinite`: a failed test there is a suspicion (abi.FLOAT_SUSPICION_DEOPT),
        which the dispatcher can compile away; precisely, a deopt as any."""
        if not self.deferred:
            self.deopt_if(maybe, kind=FLOAT_SUSPICION_DEOPT)
            return
        b = self.builder
        b.store(b.or_(b.load(self.unfinite), b.zext(self.predicated(maybe), I64)), self.unfinite)

    def warn_if_not_finite(self, x: ir.Value) -> None:
        """`warn_if` x is an infinity or NaN. Deferred, this costs three cheap ops:
        ``x - x`` is 0.0 (all bits zero) for a finite x and a NaN otherwise, and its
        bits are or-ed into `unfinite`, tested on return. (Adding ``x - x`` to a
        NaN-sticky float instead puts a 3-cycle add on a loop-carried chain: 1.4x
        Numba's time for a running maximum on AMD Zen 3.)"""
        if not self.deferred:
            self.suspect_if(not_finite(self, x))
            return
        assert self.unfinite is not None, "prepare_warnings() first: returns test the flag"
        b = self.builder
        bits = b.bitcast(b.fsub(x, x), I64)
        if self.predicate is not None:
            bits = b.select(self.predicate, bits, ir.Constant(I64, 0))
        b.store(b.or_(b.load(self.unfinite), bits), self.unfinite)

    def warn_if_any_not_finite(self, values: list[Typed]) -> None:
        """`warn_if` any of these float values (or float members of unions) is an
        infinity or NaN. Plain floats are tested together: their sum is non-finite
        when one of them is (an infinity or NaN survives the addition; two finite
        values whose sum overflows only cost a re-run)."""
        plain = []
        for val, t in values:
            if base(t) == FLOAT:
                plain.append(val)
                continue
            if isinstance(t, UnionType) and set(t.options) == {FLOAT, NP_F64}:
                plain.append(self.builder.extract_value(val, t.options.index(NP_F64) + 1))  # (both twins hold it)
                continue

            def test(vs: list[Typed]) -> Typed:
                x, xt = vs[0]
                if base(xt) == FLOAT:
                    return not_finite(self, x), BOOL
                return ir.Constant(I1, 0), BOOL

            self.suspect_if(self.split([(val, t)], BOOL, test))
        if plain:
            total = plain[0]
            for val in plain[1:]:
                total = self.builder.fadd(total, val)
            self.warn_if_not_finite(total)

    def prepare_warnings(self) -> None:
        """Create the deferred-warning flag (before any block is lowered, so that every
        return tests it, whatever order the blocks are lowered in)."""
        self.warned = self.alloca(I1)
        self.unfinite = self.alloca(I64)
        with self.builder.goto_block(self.alloca_block):
            self.builder.position_after(self.warned)  # type: ignore[arg-type]  # (the later alloca)
            self.builder.store(ir.Constant(I1, 0), self.warned)
            self.builder.store(ir.Constant(I64, 0), self.unfinite)

    def deopt_if_warned(self) -> None:
        """Before returning: hand the call to CPython if a deferred warning is due."""
        if self.warned is not None:
            b = self.builder
            self.deopt_if(b.load(self.warned))  # (a warning NumPy gives)
            unfinite = b.icmp_unsigned("!=", b.load(self.unfinite), ir.Constant(I64, 0))
            self.deopt_if(unfinite, kind=FLOAT_SUSPICION_DEOPT)  # (an infinity or NaN: maybe one)

    def deopt_if_refined(self, maybe: ir.Value, precise: Callable[[], ir.Value]) -> None:
        """Deoptimise when `precise()` holds, testing it only when the cheap filter
        `maybe` (which must hold whenever `precise()` does) is true.

        The hot path then pays for one compare; `precise()` is emitted in a cold block.
        """
        maybe = self.predicated(maybe)
        if self.strip is not None:
            self.strip.fail_if(maybe)  # the ordinary loop then decides precisely
            return
        cold = self.block("suspect")
        ok = self.block("ok")
        br = self.builder.cbranch(maybe, cold, ok)
        br.set_weights([1, 1 << 20])
        self.builder.position_at_end(cold)
        br = self.builder.cbranch(precise(), self.deopt_block(), ok)
        br.set_weights([1, 1 << 20])
        self.builder.position_at_end(ok)

    def checked(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        """int64 `op` ("sadd", "ssub", "smul") that deoptimises on overflow."""
        if op in ("sadd", "ssub") and self.strip is not None:
            # Plain integer ops, which LLVM vectorizes (the intrinsic it does not):
            # the sum overflowed when it differs in sign from both operands (for a
            # difference, from `a` and from ``-b``).
            bld = self.builder
            r = bld.add(a, b) if op == "sadd" else bld.sub(a, b)
            other = b if op == "sadd" else bld.not_(b)  # ~b has -b's sign (b != MIN) and
            # for b == MIN, a - MIN overflows exactly when a >= 0, as the test says.
            self.deopt_if(bld.icmp_signed("<", bld.and_(bld.xor(a, r), bld.xor(other, r)), self.i64(0)))
            return r
        pair = self.intrinsic(f"llvm.{op}.with.overflow.i64", ir.LiteralStructType([I64, I1]), [a, b])
        self.deopt_if(self.builder.extract_value(pair, 1))
        return self.builder.extract_value(pair, 0)

    def i64(self, n: int) -> ir.Constant:
        return ir.Constant(I64, n)

    def f64(self, x: float) -> ir.Constant:
        return ir.Constant(F64, x)

    # -- representation changes ------------------------------------------------------

    def as_int(self, v: Typed) -> ir.Value:
        val, t = v
        t = base(t)
        if t == BOOL:
            return self.builder.zext(val, I64)
        if t == UINT:  # as an int64: one of 2**63 or more deopts
            self.deopt_if(self.builder.icmp_signed("<", val, self.i64(0)))
            return val
        if t == INT128:  # (so does one beyond int64)
            return int128.to_int(self, (val, t))
        assert t == INT, t
        return val

    def index_int(self, v: Typed) -> ir.Value:
        """An array index as an i64: an int, a NumPy integer of any width, or a union
        of those (``a = src[e]`` then ``a = parent[a]``: an np.int32 | np.int64), each
        of which holds the int it is: the union's is picked by its tag, without a branch."""
        val, t = v
        if not isinstance(t, UnionType):
            return self.as_int(v)
        b = self.builder
        tag = b.extract_value(val, 0)
        out: ir.Value | None = None
        for k, opt in enumerate(t.options):
            member = self.as_int((b.extract_value(val, k + 1), opt))
            out = member if out is None else b.select(b.icmp_unsigned("==", tag, ir.Constant(I8, k)), member, out)
        assert out is not None
        return out

    def as_float(self, v: Typed) -> ir.Value:
        val, t = v
        t = base(t)
        if t == FLOAT:
            return val
        if t in (BOOL, UINT):
            return self.builder.uitofp(val, F64)  # (correctly rounded, as int.__float__)
        if t == INT128:  # (one beyond int64 deopts: its rounding would need a library call)
            return self.builder.sitofp(self.as_int(v), F64)
        assert t == INT, t
        if known_int(val):  # (x /= -1: LLVM makes x * -1.0 an fneg)
            return self.float_constant(float(val.constant))  # type: ignore[attr-defined]
        return self.builder.sitofp(val, F64)

    def coerce(self, val: ir.Value, src: Type, dst: Type) -> ir.Value:
        """Represent a value of type `src` as type `dst` (a union containing it)."""
        if src == dst:
            return val
        if src == BOTTOM:
            return ir.Constant(llvm_type(dst), ir.Undefined)
        if isinstance(src, ArrayType) and src.unit_stride and src.any_stride() in options(dst):
            src = src.any_stride()  # the same struct: only the promise is dropped
            if src == dst:
                return val
        if isinstance(dst, UnionType) and not isinstance(src, UnionType) and src in dst.options:
            k = dst.options.index(src)
            out = ir.Constant(llvm_type(dst), ir.Undefined)
            out = self.builder.insert_value(out, ir.Constant(I8, k), 0)
            for j, opt in enumerate(dst.options):
                # A Python int (float) and its NumPy twin hold the same value the same
                # way: both members carry it, whatever the tag, and `aggregates.weak_twins`
                # reads the NumPy one without testing the tag. (Every union value is
                # built here, or is a phi of values built here.)
                if j == k or WEAK_TWIN.get(opt) == src or WEAK_TWIN.get(src) == opt:
                    out = self.builder.insert_value(out, val, j + 1)
            return out
        if isinstance(src, UnionType):
            return self.split([(val, src)], dst, lambda vs: vs[0])
        if isinstance(src, TupleType) and isinstance(dst, TupleType) and len(src.items) == len(dst.items):
            out = ir.Constant(llvm_type(dst), ir.Undefined)
            for i, (s, d) in enumerate(zip(src.items, dst.items)):
                item = self.coerce(self.builder.extract_value(val, i), s, d)
                out = self.builder.insert_value(out, item, i)
            return out
        if isinstance(src, TupleType) and isinstance(dst, UnionType):
            # A tuple that is no member itself, but whose items each fit one member's
            # (tuple[float, float] in tuple[float, float | int] | ...): that member.
            for opt in dst.options:
                if _fits(src, opt):
                    return self.coerce(self.coerce(val, src, opt), opt, dst)
        raise AssertionError(f"cannot represent {src} as {dst}")

    def split(self, operands: list[Typed], result: Type, case: Callable[[list[Typed]], Typed], branchless: bool = False) -> ir.Value:
        """Run `case` on concrete operands, switching on the tag of each union operand,
        and return its result represented as `result`. With `branchless` (a case that
        only computes a value: arithmetic, a comparison), a union of floats and NumPy
        floats (``c = min(max(v, lo), hi)``: an np.float64 or a float) runs every case
        and selects the result by the tag, with each case's guards and tests counting
        only where its member is the one (`predicate`): float arithmetic cannot trap on
        the other members' meaningless words, and a branch on a tag that changes from
        one element to the next would mispredict."""
        for i, (val, t) in enumerate(operands):
            if isinstance(t, UnionType):
                break
        else:
            out_val, out_t = case(operands)
            return self.coerce(out_val, out_t, result)
        if branchless and all(base(opt) == FLOAT for opt in t.options) and len(t.options) <= 3:
            return self._split_branchless(operands, i, result, case)
        tag = self.builder.extract_value(val, 0)
        merge = self.block("merge")
        unreachable = self.block("badtag")
        with self.builder.goto_block(unreachable):
            self.builder.unreachable()
        switch = self.builder.switch(tag, unreachable)
        incoming = []
        for k, opt in enumerate(t.options):
            blk = self.block(f"case.{opt}")
            switch.add_case(ir.Constant(I8, k), blk)
            self.builder.position_at_end(blk)
            member = self.builder.extract_value(val, holder(t, k) + 1)
            rest = operands[:i] + [(member, opt)] + operands[i + 1 :]
            incoming.append((self.split(rest, result, case), self.builder.block))
            self.builder.branch(merge)
        self.builder.position_at_end(merge)
        phi = self.builder.phi(llvm_type(result))
        for v, b in incoming:
            phi.add_incoming(v, b)
        return phi


def holder(t: UnionType, k: int) -> int:
    """The member of union `t` to read option k's value from: its NumPy twin's, when
    that is an option too. Both twins hold the value whatever the tag (`coerce`), so
    each case of a split reads the same word: LLVM sees one value where it would see
    one per tag (and one loop-carried phi per member), and the cases' arithmetic
    merges (``g2 += g * g`` with ``g`` a float or an np.float64 stays an ordered sum
    LLVM vectorizes)."""
    opt = t.options[k]
    strong = next((s for s, weak in WEAK_TWIN.items() if weak == opt), None)
    return t.options.index(strong) if strong in t.options else k


def known_int(v: ir.Value) -> bool:
    """Whether `v` is an integer constant (not `ir.Undefined`: the value of an op that
    never runs, such as one after a read of a local that is never bound)."""
    return isinstance(v, ir.Constant) and isinstance(v.constant, int)


def is_finite(em: Emitter, x: ir.Value) -> ir.Value:
    return em.builder.fcmp_ordered("<", em.intrinsic("llvm.fabs.f64", F64, [x]), em.f64(math.inf))


def not_finite(em: Emitter, x: ir.Value) -> ir.Value:
    """NaN or an infinity, in one unordered compare."""
    return em.builder.fcmp_unordered(">=", em.intrinsic("llvm.fabs.f64", F64, [x]), em.f64(math.inf))


def _fits(src: Type, dst: Type) -> bool:
    """Whether `coerce` can represent a `src` as a `dst`, item by item."""
    if src == dst:
        return True
    if isinstance(dst, UnionType):
        return src in dst.options or any(_fits(src, o) for o in dst.options)
    if isinstance(src, TupleType) and isinstance(dst, TupleType):
        return len(src.items) == len(dst.items) and all(_fits(s, d) for s, d in zip(src.items, dst.items))
    return False


def nan_sign_folded(x: float) -> bool:
    """Whether LLVM's folding of this float constant changes the sign of a NaN: an
    infinity (``inf - inf`` is -nan on x86-64, LLVM folds it to +nan where constants
    meet: an inlined callee, a select); a NaN (LLVM folds ``x - nan`` to the constant,
    where the processor returns `x` when it is a NaN too); and the constants LLVM turns
    into a negation (``x * -1.0``, ``x / -1.0`` and ``-0.0 - x`` become ``-x``, which
    flips a NaN that the processor passes on)."""
    return math.isinf(x) or math.isnan(x) or x == -1.0 or (x == 0.0 and math.copysign(1.0, x) < 0)


#: The inline-asm constraint letter of a floating-point register on this machine.
_FLOAT_REGISTER = {"x86_64": "x", "amd64": "x", "aarch64": "w", "arm64": "w"}.get(platform.machine().lower())

#: The NumPy scalars whose ops take a Python scalar (their weak twin) as their own
#: type, and which hold its value the same way (see `coerce`, `aggregates.weak_twins`).
WEAK_TWIN: dict[Type, Type] = {NP_I64: INT, NP_F64: FLOAT}

__all__ = ["Emitter", "Typed", "DEOPT", "options"]
