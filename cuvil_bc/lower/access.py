"""Array access: element addresses with the bounds tests the plan asks for
(`opt/bounds.BoundsPlan`), element loads and stores, views and attributes.

An index out of bounds deoptimises: CPython then raises NumPy's IndexError. Indices
the plan proves in bounds are used as they are; those it can test once on entry to
their block (`early_bounds_guards`) are tested there instead of at the access.
"""

from __future__ import annotations

from llvmlite import ir

from ..abi import ENTRY_BOUNDS_DEOPT, VIEW_OF_ARGUMENT
from ..ir import ops as O
from ..ir.function import BasicBlock
from ..opt.bounds import SWAPPED, VALUE, BoundsPlan, Span, computed_from, in_bounds_after_wrap, is_min_max, range_of, span_form
from ..typing.types import INT, ITEMSIZE, NONE, ArrayType, TupleType, Type
from . import arrays, refcount
from .emitter import Emitter, Typed
from .ltypes import I8, I64, llvm_type, meminfo_index
from .refcount import Getter

Access = O.Subscript | O.StoreItem
_INT64_MAX = 2**63 - 1


class ArrayAccess:
    """The array accesses of one function, lowered as `bounds` plans them."""

    def __init__(self, em: Emitter, get: Getter, bounds: BoundsPlan, firstlineno: int) -> None:
        self.em = em
        self.get = get
        self.bounds = bounds
        self.firstlineno = firstlineno
        self.prechecked: set[tuple[O.Op, int]] = set()  # (access, dimension): see early_bounds_guards
        self.wrapping: set[tuple[O.Op, int]] = set()  # prechecked, but may be negative: wrapped at the access

    def index_checked(self, op: Access, k: int) -> bool:
        """Whether index `k` of `op` is proven in bounds or was tested by
        `early_bounds_guards` (and is not wrapped where it is negative: its addresses
        may then jump back and forth)."""
        return (op, k) in self.bounds.proven or ((op, k) in self.prechecked and (op, k) not in self.wrapping)

    def early_bounds_guards(self, block: BasicBlock) -> None:
        """Bounds-check, on entry to the block, the array indices that lie in
        ``[lo, upper)`` with ``lo >= 0`` (a loop over *another* array's extent, or a
        constant one: see `opt/bounds.py`): the test ``upper > extent`` is
        loop-invariant, so LLVM moves it out of the loop, where the per-index test
        would stay in it. It is conservative: it fails when the loop *could* step out
        of bounds, maybe before it does, or on a path that skips the access. A
        deoptimisation allows that: the interpreter then does exactly what CPython
        does (re-running a call that only reads, or resuming one that writes at the
        block's resume point, before anything in the block has run)."""
        em, b = self.em, self.em.builder
        for op, k, test in self.bounds.entry_tests.get(block, []):
            if isinstance(test, Span):
                self._span_guard(op, k, test)
                continue
            arr, dim, off = test
            # The highest index, upper - 1, against the extent. The plan's offsets are
            # Python ints: one beyond int64 means no index can be in bounds, and a
            # sum that passes int64's limit saturates (so the test fails) instead of
            # wrapping (found by a helper: x[2**63 - 1], whose upper is 2**63, was
            # used unchecked).
            if off - 1 > _INT64_MAX:
                last = em.i64(_INT64_MAX)
                always = True
            else:
                always = False
                shift = em.i64(max(off - 1, -_INT64_MAX - 1))
                if arr is None:
                    last = shift
                else:
                    base = self.get(arr)[0] if dim == VALUE else b.extract_value(self.get(arr)[0], 1 + dim)  # (an int value: the stop of a range(n), say)
                    last = em.intrinsic("llvm.sadd.sat.i64", I64, [base, shift])  # type: ignore[arg-type]
            extent = b.extract_value(self.get(op.obj)[0], 1 + k)  # type: ignore[attr-defined]
            em.line = op.line or self.firstlineno
            em.speculative = False
            outside = ir.Constant(ir.IntType(1), 1) if always else b.icmp_signed(">=", last, extent)
            em.deopt_if(outside, distinct="bounds", kind=ENTRY_BOUNDS_DEOPT)
            self.prechecked.add((op, k))

    def _span_guard(self, op: Access, k: int, span: Span) -> None:
        """Deoptimise unless every value index `k` of `op` can take lies in bounds: the
        ends of its interval (`opt/bounds.span_form`), computed here from values set
        before the loop, within ``[-extent, extent)``. Any overflow while computing them
        fails the test too. An index whose low end is not known to be at least 0 keeps
        NumPy's wrap of negative indices at the access (``out[i - 1]`` writes
        ``out[-1]`` first), but no test."""
        em, b = self.em, self.em.builder
        lo, hi, bad = self._interval(O.index_items(op)[k], span.loop, {}, {})
        extent = b.extract_value(self.get(op.obj)[0], 1 + k)  # type: ignore[attr-defined]
        if span.low:  # a negative index counts from the end: at least -extent
            bad = b.or_(bad, b.icmp_signed("<", lo, b.neg(extent)))
            self.wrapping.add((op, k))
        if span.high:
            bad = b.or_(bad, b.icmp_signed(">=", hi, extent))
        em.line = op.line or self.firstlineno
        em.speculative = False
        em.deopt_if(bad, distinct="bounds", kind=ENTRY_BOUNDS_DEOPT)
        self.prechecked.add((op, k))

    def _interval(self, v: O.Value, loop: frozenset, memo: dict, known: dict) -> tuple[ir.Value, ir.Value, ir.Value]:  # type: ignore[type-arg]
        """(lowest, highest, overflowed) of the int `v` over `loop`, as
        `opt/bounds.span_form` describes it; `known`: intervals that the comparisons
        on the way narrowed (a phi's edge)."""
        em, b = self.em, self.em.builder
        if v in known:
            return known[v]  # type: ignore[no-any-return]
        if v in memo:
            return memo[v]  # type: ignore[no-any-return]
        no = ir.Constant(ir.IntType(1), 0)
        arith = self._overflowing

        def either(*flags: ir.Value) -> ir.Value:
            out = flags[0]
            for flag in flags[1:]:
                out = b.or_(out, flag)
            return out

        found = range_of(v)
        if isinstance(v, O.Const):
            out = (em.i64(v.value), em.i64(v.value), no)  # type: ignore[arg-type]
        elif not (isinstance(v, O.Op) and v.block in loop):  # an int set before the loop
            value = em.index_int(self.get(v))
            out = (value, value, no)
        elif found is not None:
            first, last, step = (self._interval(x, loop, memo, known) for x in found)
            # Stepping up (the step's interval above 0): start <= item <= stop - 1;
            # down (below 0): stop + 1 <= item <= start; a step of 0 raises before
            # the loop, and one whose sign the interval does not fix fails the test.
            top, over_up = arith("ssub", last[1], em.i64(1))
            bottom, over_down = arith("sadd", last[0], em.i64(1))
            if not any(isinstance(x, O.Op) and x.block in loop for x in found):
                # One range, known here (the body runs: it has items): its last item
                # is the stop's side less the remainder of the distance by the step.
                # (by -step down: -MIN overflows, and the flag fails the test)
                up_gap, o1 = arith("ssub", top, first[0])
                down_gap, o2 = arith("ssub", first[0], bottom)
                neg, o3 = arith("ssub", em.i64(0), step[0])
                ok = b.icmp_signed(">", step[0], em.i64(0))
                gap = b.select(ok, up_gap, down_gap)
                divisor = b.select(ok, step[0], b.select(o3, em.i64(1), neg))
                rest = b.srem(gap, b.select(b.icmp_signed("==", divisor, em.i64(0)), em.i64(1), divisor))
                top, bottom = b.sub(top, b.select(ok, rest, em.i64(0))), b.add(bottom, b.select(ok, em.i64(0), rest))
                over_up, over_down = b.or_(over_up, o1), either(over_down, o2, o3)
            up = b.icmp_signed(">", step[0], em.i64(0))
            down = b.icmp_signed("<", step[1], em.i64(0))
            out = (
                b.select(up, first[0], bottom),
                b.select(up, top, first[1]),
                either(first[2], last[2], step[2], b.select(up, over_up, over_down), b.not_(b.or_(up, down))),
            )
        elif isinstance(v, O.BinOp):
            x, y = self._interval(v.lhs, loop, memo, known), self._interval(v.rhs, loop, memo, known)
            if v.op == "+":
                (lo, o1), (hi, o2) = arith("sadd", x[0], y[0]), arith("sadd", x[1], y[1])
            elif v.op == "-":
                (lo, o1), (hi, o2) = arith("ssub", x[0], y[1]), arith("ssub", x[1], y[0])
            else:  # "*" by a constant: the products of the ends, in order
                (p, o1), (q, o2) = arith("smul", x[0], y[0]), arith("smul", x[1], y[1])
                lo, hi = b.select(b.icmp_signed("<", p, q), p, q), b.select(b.icmp_signed("<", p, q), q, p)
            out = (lo, hi, either(x[2], y[2], o1, o2))
        elif isinstance(v, (O.Phi, O.Select)):  # the hull of its incoming values' intervals
            facts = self.bounds.branch_facts
            if isinstance(v, O.Phi):
                pairs = [(x, facts.edge_facts(pred, v.block)) for pred, x in v.incoming]
            else:
                pairs = [(v.if_true, facts.select_facts(v, True)), (v.if_false, facts.select_facts(v, False))]
            ends = [self._narrowed(x, given, loop, known) for x, given in pairs]
            lo, hi = ends[0][0], ends[0][1]
            for e in ends[1:]:
                lo = b.select(b.icmp_signed("<", e[0], lo), e[0], lo)
                hi = b.select(b.icmp_signed(">", e[1], hi), e[1], hi)
            out = (lo, hi, either(*(e[2] for e in ends)))
        else:  # min(x, y) or max(x, y): of the ends
            assert is_min_max(v)
            x, y = (self._interval(a, loop, memo, known) for a in v.args)  # type: ignore[attr-defined]
            pick = "<" if v.func.value is min else ">"  # type: ignore[attr-defined]
            lo, hi = (b.select(b.icmp_signed(pick, x[e], y[e]), x[e], y[e]) for e in (0, 1))
            out = (lo, hi, either(x[2], y[2]))
        memo[v] = out
        return out

    def _overflowing(self, name: str, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
        """``llvm.<name>.with.overflow`` of two i64: (the result, whether it overflowed)."""
        pair = self.em.intrinsic(f"llvm.{name}.with.overflow.i64", ir.LiteralStructType([I64, ir.IntType(1)]), [x, y])
        return self.em.builder.extract_value(pair, 0), self.em.builder.extract_value(pair, 1)

    def _narrowed(self, x: O.Value, given: list[tuple[str, O.Value, O.Value]], loop: frozenset, known: dict) -> tuple[ir.Value, ir.Value, ir.Value]:  # type: ignore[type-arg]
        """The interval of a phi's value `x` from one edge (a select's), narrowed by
        the comparisons `given` there: ``j - 1`` where ``j > 0`` lies in ``[0, m - 2]``."""
        em, b = self.em, self.em.builder
        narrowed = dict(known)
        flags = []
        depends = computed_from(x)
        for op, lhs, rhs in given:
            for op, lhs, rhs in ((op, lhs, rhs), (SWAPPED[op], rhs, lhs)):
                if lhs not in depends or not span_form(rhs, loop, self.bounds.headers):
                    continue
                memo: dict = {}  # type: ignore[type-arg]
                lo, hi, bad = self._interval(lhs, loop, memo, narrowed)
                rlo, rhi, rbad = self._interval(rhs, loop, memo, narrowed)
                flags += [bad, rbad]
                strict = em.i64(int(op in ("<", ">")))
                if op in ("<", "<="):  # lhs <= rhi (- 1)
                    top, over = self._overflowing("ssub", rhi, strict)
                    hi = b.select(b.icmp_signed("<", top, hi), top, hi)
                else:  # lhs >= rlo (+ 1)
                    bottom, over = self._overflowing("sadd", rlo, strict)
                    lo = b.select(b.icmp_signed(">", bottom, lo), bottom, lo)
                flags.append(over)
                narrowed[lhs] = (lo, hi, bad)
        lo, hi, bad = self._interval(x, loop, {}, narrowed)
        for flag in flags:
            bad = b.or_(bad, flag)
        return lo, hi, bad

    def element_pointer(self, array: Typed, index: Typed, op: Access, dims: int | None = None) -> ir.Value:
        """The address of ``a[i]`` / ``a[i, j, ...]``: negative indices count from the
        end; an index out of bounds deopts, unless the plan proved it in bounds or it
        was tested on entry to the block. With `dims`, only the first `dims` indices
        are real (the first element of a view)."""
        em, b = self.em, self.em.builder
        val, t = array
        assert isinstance(t, ArrayType)
        if isinstance(index[1], TupleType):
            indices = [em.index_int((b.extract_value(index[0], k), index[1].items[k])) for k in range(t.ndim)]
            items = O.index_items(op)
            sources = items if len(items) == t.ndim else [None] * t.ndim  # type: ignore[assignment]
        else:
            indices = [em.index_int(index)]
            sources = [op.index]
        offset = em.i64(0)
        if dims is not None:
            if len(O.index_items(op)) == 1:
                sources = [op.index]  # m[i]: the one index
            indices, sources = indices[:dims], sources[:dims]
        bad: ir.Value | None = None  # in a strip: the index failed its bounds test
        wraps = False  # a negative index may wrap: the address may jump
        for k, (i, source) in enumerate(zip(indices, sources)):
            extent = b.extract_value(val, 1 + k)
            proven = source is not None and (op, k) in self.bounds.proven
            if not proven and ((op, k) not in self.prechecked or (op, k) in self.wrapping):
                wraps = True
                i = b.select(b.icmp_signed("<", i, em.i64(0)), b.add(i, extent), i)
                if (op, k) not in self.prechecked and (source is None or not in_bounds_after_wrap(source, op.obj, k)):
                    outside = b.icmp_unsigned(">=", i, extent)  # also catches a still-negative i
                    em.deopt_if(outside)
                    bad = outside if bad is None else b.or_(bad, outside)
            if k == t.ndim - 1 and t.unit_stride:
                stride = em.i64(ITEMSIZE[t.dtype])
            else:
                stride = b.extract_value(val, 1 + t.ndim + k)
            offset = b.add(offset, b.mul(i, stride))
        # A pointer plus an offset (not integer arithmetic cast to a pointer), so that
        # LLVM's alias analysis and scalar evolution see the access pattern.
        ptr = b.gep(b.inttoptr(b.extract_value(val, 0), ir.IntType(8).as_pointer()), [offset], inbounds=True)
        if bad is not None and em.strip is not None:
            ptr = em.strip.safe(ptr, bad)  # the access must not happen: the flag is set
        if wraps and em.strip is not None:
            em.strip.irregular.add(id(ptr))  # type: ignore[attr-defined]
        return ptr

    def item(self, array: Typed, index: Typed, op: O.Subscript) -> ir.Value:
        """``a[i]``: the element."""
        return arrays.load_element(self.em, self.element_pointer(array, index, op), array[1].dtype)  # type: ignore[attr-defined]

    def store(self, array: Typed, index: Typed, value: Typed, op: O.StoreItem) -> None:
        """``a[i] = value``, converted to the array's dtype as NumPy converts it
        (`arrays.store_element`)."""
        em = self.em
        t = array[1]
        assert isinstance(t, ArrayType)
        ptr = self.element_pointer(array, index, op)
        if em.strip is not None:
            ptr = em.strip.log(ptr, t.dtype, op)

        def store(vs: list[Typed]) -> Typed:
            arrays.store_element(em, ptr, t.dtype, vs[0])  # type: ignore[union-attr]
            return ir.Constant(I8, 0), NONE

        em.split([value], NONE, store)  # a union value: per member

    def view(self, array: Typed, index: Typed, op: O.Subscript, t: ArrayType) -> ir.Value:
        """``m[i]`` (``m[i, j]`` of a 3-D array, ...): a view of the remaining
        dimensions, holding its own reference to the memory (see refcount.py)."""
        b = self.em.builder
        val, src = array
        assert isinstance(src, ArrayType)
        # The address of the first element of the view, with the same bounds checks as
        # an element: index as if the missing trailing indices were 0.
        count = src.ndim - t.ndim
        em = self.em
        items = [em.index_int((b.extract_value(index[0], k), index[1].items[k])) for k in range(count)] if isinstance(index[1], TupleType) else [em.index_int(index)]
        full_t = TupleType((INT,) * src.ndim)
        full = ir.Constant(llvm_type(full_t), ir.Undefined)
        for k in range(src.ndim):
            full = b.insert_value(full, items[k] if k < count else self.em.i64(0), k)
        first = self.element_pointer(array, (full, full_t), op, dims=count)
        out = ir.Constant(llvm_type(t), ir.Undefined)
        out = b.insert_value(out, b.ptrtoint(first, I64), 0)
        for k in range(t.ndim):
            out = b.insert_value(out, b.extract_value(val, 1 + count + k), 1 + k)
            out = b.insert_value(out, b.extract_value(val, 1 + src.ndim + count + k), 1 + t.ndim + k)
        out = b.insert_value(out, _view_meminfo(b, b.extract_value(val, meminfo_index(src.ndim))), meminfo_index(t.ndim))
        refcount.incref(b, out, t)
        return out

    def attribute(self, array: Typed, name: str) -> ir.Value:
        """``a.shape``, ``a.ndim``, ``a.size``, ``a.T`` (a view) and ``a.dtype``."""
        em, b = self.em, self.em.builder
        val, t = array
        assert isinstance(t, ArrayType)
        if name == "dtype":
            return ir.Constant(I8, 0)  # a compile-time object
        if name == "T":  # the axes reversed; holds its own reference (see refcount.py)
            out = ir.Constant(llvm_type(t), ir.Undefined)
            out = b.insert_value(out, b.extract_value(val, 0), 0)
            for k in range(t.ndim):
                out = b.insert_value(out, b.extract_value(val, t.ndim - k), 1 + k)
                out = b.insert_value(out, b.extract_value(val, 2 * t.ndim - k), 1 + t.ndim + k)
            out = b.insert_value(out, _view_meminfo(b, b.extract_value(val, meminfo_index(t.ndim))), meminfo_index(t.ndim))
            refcount.incref(b, out, t)
            return out
        extents = [b.extract_value(val, 1 + k) for k in range(t.ndim)]
        if name == "ndim":
            return em.i64(t.ndim)
        if name == "size":
            size = em.i64(1)
            for e in extents:
                size = b.mul(size, e)  # cannot overflow: the array exists
            return size
        assert name == "shape", name
        shape_t: Type = TupleType((INT,) * t.ndim)
        out = ir.Constant(llvm_type(shape_t), ir.Undefined)
        for k, e in enumerate(extents):
            out = b.insert_value(out, e, k)
        return out


def _view_meminfo(b: ir.IRBuilder, meminfo: ir.Value) -> ir.Value:
    """A view shares its base's memory: the same meminfo, but marked as a view when the
    base is an argument."""
    argument = b.and_(b.icmp_signed("<", meminfo, ir.Constant(I64, 0)), b.icmp_signed(">", meminfo, ir.Constant(I64, -VIEW_OF_ARGUMENT)))
    return b.select(argument, b.sub(meminfo, ir.Constant(I64, VIEW_OF_ARGUMENT)), meminfo)
