"""Lower one typed IR function to an LLVM function (the calling convention: entry.py).

`FunctionLowering` walks the function's blocks in reverse postorder and dispatches
each op to its lowering (`_OPS`). What the analyses decided comes in as the function's
plans (opt/plans.py); the code for each concern lives in its own module, which the
lowering holds one object of:

* `loops.LoopControl`: latches, chunked range loops, signal polls and the GIL;
* `refcount.Holdings`: the array references held, released and handed along edges;
* `deopt.Resumes`: the resume points of a function that writes, and raise exits;
* `access.ArrayAccess`: element addresses and their bounds tests, views;
* `calls.CallLowering`: native calls, primitives and NumPy's creators;
* `strips.py` and `groups.py`: second copies of loop bodies, which see this class
  through `context.LoopLowering`.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ..abi import MAX_DEPTH
from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..ir.dominance import natural_loops
from ..opt.bounds import cannot_overflow, counts_by_one, remainder_is_wrap
from ..opt.plans import make_plans
from ..typing.infer import value_type
from ..typing.rules import binop_type, compare_type
from ..typing.types import BOOL, BOTTOM, INT, NP_BOOL, NP_F64, NP_I64, UNDEF, ArrayType, BoundMethod, TupleType, Type, UnionType, holds_array, options
from . import aggregates, complexes, refcount, strips
from .access import ArrayAccess
from .calls import CallLowering, CalleeResolver, calls_python_functions
from .deopt import Resumes
from .emitter import Emitter, Typed
from .entry import declare_function
from .loops import LoopControl, iter_field, range_iter
from .ltypes import I1, I8, I32, const, llvm_type
from .numeric import binop, compare, divisibility_test, early_divisor_guards, truth, unary, wrapping_binop, wrapping_unary
from .points import ResumeInfo
from .refcount import Holdings


class FunctionLowering:
    """Lowers one typed function to `symbol`. With `self_calls`, the function's calls to
    itself go to that symbol instead (see `lower_recursive`). `pyfunc` is what a
    resume point hands back to (functions that write); the resume points its code
    reports go into `resume_points`, by name (points.py), for the caller to hand on
    with the compiled function."""

    def __init__(
        self,
        module: ir.Module,
        fn: Function,
        symbol: str,
        ret: Type,
        resolver: CalleeResolver,
        self_calls: str | None = None,
        pyfunc: object = None,
        resume_points: dict[str, ResumeInfo] | None = None,
        drops: frozenset[str] = frozenset(),
        called_natively: bool = True,
    ) -> None:
        self.fn = fn
        self.ret = ret
        self.called_natively = called_natively  # (by other native code: lower/loops.py polls for signals accordingly)
        self.llfn = declare_function(module, symbol, tuple(a.type for a in fn.args), ret)  # type: ignore[misc]
        self.em = em = Emitter(module, self.llfn)
        em.precise = fn.writes
        self.values: dict[O.Value, ir.Value] = {}
        self.blocks: dict[BasicBlock, ir.Block] = {}
        self.phis: list[tuple[O.Phi, list[ir.PhiInstr]]] = []  # one LLVM phi per scalar leaf
        self.pending_phis: list[tuple[O.Phi, list[ir.PhiInstr]]] = []  # aggregates to rebuild
        self.phi_inputs: dict[tuple[O.Phi, BasicBlock], tuple[list[ir.Value], ir.Block]] = {}
        self.extra_incoming: list[tuple[ir.PhiInstr, ir.Value, ir.Block]] = []  # from strips
        self.uses = fn.uses()
        self.headers = set(natural_loops(fn))  # (loop headers)
        self.plans = plans = make_plans(fn, self.uses, drops)  # what the analyses decided (opt/plans.py)
        self.floats = plans.floats  # which float results are tested where
        self.strips = plans.strips  # innermost loops that also run in exit-free strips
        self.regions = plans.regions  # loops that only read, resuming before them
        self.region_exits = {e: r for r in plans.regions.values() for e in r.exits}
        self.order = {op: k for k, op in enumerate(fn.ops())}
        self.holdings = Holdings(plans.ownership, em.builder, self.get)
        self.track = self.holdings.tracking  # arrays allocated natively: references held
        em.on_deopt = self.holdings.release_for_deopt if self.track else None
        em.held_key = self.holdings.key
        self.resumes = Resumes(em, fn, symbol, pyfunc, {} if resume_points is None else resume_points, self.get, self.holdings)
        self.access = ArrayAccess(em, self.get, plans.bounds, fn.firstlineno)
        self.calls = CallLowering(em, resolver, symbol, self_calls, self.llfn.args[-1], fn.writes or self.track)

    @property
    def resume_points(self) -> dict[str, ResumeInfo]:
        return self.resumes.points

    def run(self) -> ir.Function:
        em, fn = self.em, self.fn
        for a, llarg in zip(fn.args, self.llfn.args):
            self.values[a] = llarg
        order = fn.rpo()
        for block in order:
            self.blocks[block] = em.block(block.name)
        self.loops = LoopControl(em, fn, order, self.blocks, self.strips, self.called_natively)
        if self.floats.deferred or self.regions:
            em.prepare_warnings()
        em.builder.position_at_end(em.alloca_block)
        for a, llarg in zip(fn.args, self.llfn.args):
            if isinstance(a.type, ArrayType):  # lengths are >= 0: `0 <= i < n` is one test
                for k in range(a.type.ndim):
                    n = em.builder.extract_value(llarg, 1 + k)
                    em.intrinsic("llvm.assume", ir.VoidType(), [em.builder.icmp_signed(">=", n, em.i64(0))])
        if calls_python_functions(fn):
            em.line = fn.firstlineno
            if fn.writes:
                em.resume = self.resumes.at(next(op for op in order[0].ops if isinstance(op, O.Checkpoint)))
            em.deopt_if(em.builder.icmp_unsigned(">", self.llfn.args[-1], ir.Constant(I32, MAX_DEPTH)))
        em.builder.branch(self.blocks[order[0]])
        for block in order:
            self.lower_block(block, block is order[0])
        self.wire_phis()
        self.loops.finish(self.get)
        return self.llfn

    def lower_block(self, block: BasicBlock, first: bool) -> None:
        em = self.em
        em.builder.position_at_end(self.blocks[block])
        em.resume = None
        if isinstance(block.terminator, O.Raise):
            self.holdings.held = []
            em.line = block.terminator.line or self.fn.firstlineno
            if not (self.fn.writes or self.track):
                em.builder.branch(em.deopt_block())  # CPython raises it
            elif first:
                em.builder.branch(self.resumes.raise_exit(block, None))
            else:
                em.builder.unreachable()  # its predecessors go to raise_exit
            return
        releases = self.holdings.enter(block, self.order)
        em.deferring = block in self.regions
        after_phis = False
        deferred: list[O.Op] = []  # released after the phis
        for k, op in enumerate(block.ops):
            if not after_phis and not isinstance(op, O.Phi):
                after_phis = True  # LLVM wants a block's phis first: guards go after them
                self.assemble_phis()
                if block in self.region_exits or block in self.floats.exit_tests:
                    self.exit_region_loop(block, op)
                self.holdings.release(deferred)
                if not self.fn.writes:  # (a function that writes: at its first checkpoint)
                    early_divisor_guards(em, block, self.get, self.fn.firstlineno)
                    self.access.early_bounds_guards(block)
            em.line = op.line or self.fn.firstlineno
            em.speculative = op.speculative
            if op is block.ops[-1]:
                self.loops.before_terminator(block)
            self.lower(op)
            self.holdings.acquire(op)
            if k in releases:
                if isinstance(op, O.Phi):
                    deferred.extend(releases[k])
                else:
                    self.holdings.release(releases[k])
        em.speculative = False

    def exit_region_loop(self, block: BasicBlock, first: O.Op) -> None:
        """At the start of a block that a loop of a resume region exits to: the
        loop's accumulators' deferred tests (opt/finiteness.FloatTests.exit_tests),
        and where the region itself ends, the test of its deferred warnings, which
        resumes at the region's checkpoint."""
        em = self.em
        region = self.region_exits.get(block) or self.regions[block]
        em.line = first.line or self.fn.firstlineno
        em.resume = self.resumes.at(region.checkpoint)
        inside = em.deferring
        em.deferring = True
        em.warn_if_any_not_finite([self.get(phi) for phi in self.floats.exit_tests.get(block, [])])
        em.deferring = inside
        if block in self.region_exits:
            em.deopt_if_warned()
        em.resume = None

    def wire_phis(self) -> None:
        """Once every block is lowered: each phi's incoming values, from the edges that
        the control ops recorded (`phi_inputs`) and from the strips."""
        for phi, llphis in self.phis:
            for pred, _ in phi.incoming:
                if pred in self.blocks:
                    vals, blk = self.phi_inputs[(phi, pred)]
                    for llphi, val in zip(self.loops.phis_for_edge(phi.block, pred, llphis), vals):  # type: ignore[arg-type]
                        llphi.add_incoming(val, blk)
        for llphi, val, blk in self.extra_incoming:
            llphi.add_incoming(val, blk)

    def assemble_phis(self) -> None:
        """Rebuild the aggregates (unions, tuples) whose phis were split into one phi
        per scalar leaf (see aggregates.py)."""
        for op, leaves in self.pending_phis:
            self.values[op] = self.assemble(op, leaves)
        self.pending_phis = []

    # -- what the loop schemes see (context.LoopLowering) -----------------------------

    def assemble(self, phi: O.Phi, leaves: list[ir.Value]) -> ir.Value:
        return aggregates.assemble(self.em.builder, phi.type, leaves)  # type: ignore[arg-type]

    def phi_leaves(self, phi: O.Phi, src: O.Value) -> list[ir.Value]:
        val, t = self.get(src)
        return aggregates.leaves(self.em.builder, self.em.coerce(val, t, phi.type), phi.type)  # type: ignore[arg-type]

    def rebind(self, v: O.Value, value: ir.Value) -> ir.Value:
        before = self.values[v]
        self.values[v] = value
        return before

    def bind(self, v: O.Value, value: ir.Value) -> None:
        """Give `v`, not lowered yet, a value for a while (`unbind` takes it back)."""
        assert v not in self.values
        self.values[v] = value

    def unbind(self, v: O.Value) -> None:
        del self.values[v]

    def header_phis(self, header: BasicBlock) -> list[tuple[O.Phi, list[ir.PhiInstr]]]:
        return [(phi, leaves) for phi, leaves in self.phis if phi.block is header]

    def block_of(self, block: BasicBlock) -> ir.Block:
        return self.blocks[block]

    def add_incoming(self, phi: ir.PhiInstr, value: ir.Value, block: ir.Block) -> None:
        self.extra_incoming.append((phi, value, block))

    def users(self, v: O.Value) -> list[O.Op]:
        return self.uses.get(v, [])

    def no_new_signals(self) -> ir.Value:
        return self.loops.no_new_signals()

    def get(self, v: O.Value) -> Typed:
        t = value_type(v)
        if isinstance(v, O.Const):
            # (a double, also inside a tuple or a complex, that LLVM's folding would
            # give another NaN sign is hidden from it: Emitter.float_constant)
            return const(v.value, t, self.em.builder, self.em.float_constant), t
        if isinstance(v, O.Undef):
            return ir.Constant(I8, 0), t
        return self.values[v], t

    # -- ops ------------------------------------------------------------------------

    def lower(self, op: O.Op) -> None:
        em = self.em
        if op.block in self.regions:  # (only tests of values that steer nothing wait)
            em.deferring = self.floats.defers_in_region(op)
        em.float_error_check = "precise"
        dead_end = False
        planned = self.floats.op_tests(op)
        if planned is not None:
            em.warn_if_any_not_finite([self.get(v) for v in planned.tests])
            em.float_error_check = planned.math_test
            dead_end = planned.self_test
        lowering = _STATEMENTS.get(type(op))
        if lowering is not None:
            lowering(self, op)
            return
        t: Type = op.type  # type: ignore[assignment]
        if any(value_type(v) == BOTTOM for v in op.operands()):
            # An operand never has a value (a call that never returns: it raises, or
            # recurses until the interpreter's limit): this op is never reached.
            self.values[op] = ir.Constant(llvm_type(t), ir.Undefined)
            return
        lowering_of_value = _OPS.get(type(op))
        if lowering_of_value is None:
            raise AssertionError(f"cannot lower {type(op).__name__}")
        val = lowering_of_value(self, op, [self.get(v) for v in op.operands()], t)
        self.values[op] = val
        if dead_end:  # nothing consumes it: it tests itself
            em.warn_if_any_not_finite([(val, t)])

    def phi(self, op: O.Phi) -> None:
        leaves = aggregates.leaf_phis(self.em.builder, op.type)  # type: ignore[arg-type]
        self.phis.append((op, leaves))
        if isinstance(llvm_type(op.type), ir.LiteralStructType):  # type: ignore[arg-type]
            self.pending_phis.append((op, leaves))
        else:
            self.values[op] = leaves[0]

    def checkpoint(self, op: O.Checkpoint) -> None:
        first = self.em.resume is None
        region = self.regions.get(op.block)  # type: ignore[arg-type]
        self.em.resume = self.resumes.at(op if region is None else region.checkpoint)
        if first:
            early_divisor_guards(self.em, op.block, self.get, self.fn.firstlineno)  # type: ignore[arg-type]
            self.access.early_bounds_guards(op.block)  # type: ignore[arg-type]

    def store_item(self, op: O.StoreItem) -> None:
        self.access.store(self.get(op.obj), self.get(op.index), self.get(op.value), op)

    def control(self, op: O.ControlOp) -> None:
        if op.block in self.strips:
            strips.emit_strips(self, op.block, self.strips[op.block])  # type: ignore[arg-type]
        self.lower_control(op)

    def binary(self, op: O.BinOp, operands: list[Typed], t: Type) -> ir.Value:
        em, b = self.em, self.em.builder
        if op in self.plans.wraps:  # only ever observed modulo 2**64 (opt/wrapping.py)
            return em.split(operands, t, lambda vs: wrapping_binop(em, op.op, vs[0], vs[1]))
        ints = t == INT and all(ty == INT for _, ty in operands)
        if ints and (cannot_overflow(op) or counts_by_one(op)):
            # j + 1 for a loop item j; count + 1 for a counter
            return (b.add if op.op == "+" else b.sub)(operands[0][0], operands[1][0])
        if ints and remainder_is_wrap(op):
            x, n = operands[0][0], operands[1][0]  # (i + 1) % n for a loop item i of range(n)
            return b.select(b.icmp_signed("==", x, n), em.i64(0), x)
        em.float_warning_check = self.floats.arithmetic_test(op, em.strip is not None and op in em.strip.absorbed)  # type: ignore[attr-defined]
        operands = aggregates.weak_twins(em, operands)
        if self.floats.suspicion and op.op in ("+", "-", "*", "/"):
            carried = [isinstance(v, O.Phi) and v.block in self.headers for v in (op.lhs, op.rhs)]
            twin = aggregates.twin_arithmetic(em, operands, t, lambda x, y: binop(em, op.op, x, y, NP_F64), carried)
            if twin is not None:
                return twin
        if t in (INT, NP_I64) and operands[0][1] == t and operands[1][1] in (INT, BOOL, NP_BOOL) and counts_by_one(op):
            # count += x[i] > t: no overflow to test or warn about
            return (b.add if op.op == "+" else b.sub)(operands[0][0], em.as_int(operands[1]))
        return em.split(operands, t, lambda vs: binop(em, op.op, vs[0], vs[1], _narrow(t, vs, op)), branchless=True)

    def unary(self, op: O.UnaryOp, operands: list[Typed], t: Type) -> ir.Value:
        if op in self.plans.wraps:
            return self.em.split(operands, t, lambda vs: wrapping_unary(self.em, op.op, vs[0]))
        return self.em.split(operands, t, lambda vs: unary(self.em, op.op, vs[0]), branchless=True)

    def compare(self, op: O.Compare, operands: list[Typed], t: Type) -> ir.Value:
        em = self.em
        divides = divisibility_test(em, op, self.get)
        if divides is not None:
            return divides
        operands = aggregates.weak_twins(em, operands)
        return em.split(operands, t, lambda vs: (compare(em, op.op, vs[0], vs[1]), compare_type(op.op, vs[0][1], vs[1][1])), branchless=True)

    def select(self, op: O.Select, operands: list[Typed], t: Type) -> ir.Value:
        (cond, ct), (a, at), (c, ctype) = operands
        assert ct == BOOL, ct
        em = self.em
        return em.select_leaves(cond, em.coerce(a, at, t), em.coerce(c, ctype, t))

    def truth(self, op: O.Truth, operands: list[Typed], t: Type) -> ir.Value:
        return self.em.split(operands, t, lambda vs: (truth(self.em, vs[0]), BOOL), branchless=True)

    def build_tuple(self, op: O.BuildTuple, operands: list[Typed], t: Type) -> ir.Value:
        assert isinstance(t, TupleType), t
        val = aggregates.build_tuple(self.em, operands, t)
        if self.track and holds_array(t):
            refcount.incref(self.em.builder, val, t)  # the tuple's own references to its arrays
        return val

    def unpack(self, op: O.Unpack, operands: list[Typed], t: Type) -> ir.Value:
        return self.em.coerce(operands[0][0], operands[0][1], t)  # (narrower since typing: see BuildTuple)

    def tuple_get(self, op: O.TupleGet, operands: list[Typed], t: Type) -> ir.Value:
        return aggregates.tuple_item(self.em, operands[0], op.index, t)

    def subscript(self, op: O.Subscript, operands: list[Typed], t: Type) -> ir.Value:
        if isinstance(operands[0][1], ArrayType):
            if isinstance(t, ArrayType):
                return self.access.view(operands[0], operands[1], op, t)
            return self.access.item(operands[0], operands[1], op)
        assert isinstance(op.index, O.Const)
        return aggregates.tuple_item(self.em, operands[0], int(op.index.value), t)  # type: ignore[call-overload]

    def load_attr(self, op: O.LoadAttr, operands: list[Typed], t: Type) -> ir.Value:
        if isinstance(t, BoundMethod):
            return operands[0][0]  # the bound method is its receiver (see `calls`)
        if isinstance(operands[0][1], ArrayType):
            if op.name == "copy":
                return operands[0][0]  # the bound method is its array (see `calls`)
            return self.access.attribute(operands[0], op.name)
        assert op.name in ("real", "imag"), op.name
        return self.em.split(operands, t, lambda vs: complexes.attribute(self.em, vs[0], op.name))

    def get_iter(self, op: O.GetIter, operands: list[Typed], t: Type) -> ir.Value:
        return range_iter(self.em, operands[0][0])

    def narrow(self, op: O.Narrow, operands: list[Typed], t: Type) -> ir.Value:
        em, b = self.em, self.em.builder
        src = operands[0][1]
        if op.is_none is None and src == UNDEF:  # never bound (folding showed it): CPython raises
            em.deopt_if(ir.Constant(I1, 1))
            return ir.Constant(llvm_type(t), ir.Undefined)
        if op.is_none is None and UNDEF in options(src):  # UnboundLocalError in CPython
            tag = b.extract_value(operands[0][0], 0)
            em.deopt_if(b.icmp_unsigned("==", tag, ir.Constant(I8, src.options.index(UNDEF))))  # type: ignore[attr-defined]
        return aggregates.narrow(em, operands[0], t)

    def iter_value(self, op: O.IterValue, operands: list[Typed], t: Type) -> ir.Value:
        return self.em.builder.load(iter_field(self.em.builder, operands[0][0], 3))

    def call(self, op: O.Call, operands: list[Typed], t: Type) -> ir.Value:
        return self.calls.call(op, operands, t)

    # -- control --------------------------------------------------------------------

    def lower_control(self, op: O.ControlOp) -> None:
        em = self.em
        b = em.builder
        block = op.block
        assert block is not None
        edges: dict[BasicBlock, ir.Block] = {}
        inputs: list[tuple[O.Phi, list[ir.Value], ir.Block | None]] = []
        for succ in op.successors():
            if isinstance(succ.terminator, O.Raise):
                continue  # lowered as a bare deopt: its phis are never built
            edge = self.holdings.edge(block, succ, em.block, lambda succ=succ: self.target(succ, block)) if self.track else None  # type: ignore[misc]
            for phi in succ.phis():
                inputs.append((phi, self.phi_leaves(phi, phi.value_for(block)), edge))
            if edge is not None:
                edges[succ] = edge
        # Converting a value for a phi (a union for a wider union) may add blocks: the
        # branch comes from the last one, so every phi takes its values from there.
        for phi, vals, edge in inputs:
            self.phi_inputs[(phi, block)] = (vals, edge if edge is not None else b.block)

        def target(succ: BasicBlock) -> ir.Block:
            return edges.get(succ) or self.target(succ, block)  # type: ignore[arg-type]

        if isinstance(op, (O.Branch, O.ForIter)) and any(value_type(v) == BOTTOM for v in op.operands()):
            # Never reached (a value that never exists decides it: see `lower`). The
            # edges stay, for the successors' phis.
            first, second = op.successors()
            b.cbranch(ir.Constant(I1, 0), target(first), target(second))
        elif isinstance(op, O.Jump):
            b.branch(target(op.target))
        elif isinstance(op, O.Branch):
            cond, t = self.get(op.cond)
            assert t == BOOL, t
            b.cbranch(cond, target(op.if_true), target(op.if_false))
        elif isinstance(op, O.ForIter):
            exit = op.exit

            def at_chunk_end(end: ir.Block) -> None:
                for phi in exit.phis():  # they take their values from there, not the header
                    if (phi, block) in self.phi_inputs and exit not in edges:
                        self.phi_inputs[(phi, block)] = (self.phi_inputs[(phi, block)][0], end)

            self.loops.for_iter(block, self.get(op.iterator)[0], lambda: target(op.body), lambda: target(exit), at_chunk_end)
        elif isinstance(op, O.Return):
            if not self.fn.writes:  # (a writer's flags were tested where regions exit)
                em.deopt_if_warned()
            val, t = self.get(op.value)
            if self.track or holds_array(t):
                self.holdings.hand_to_caller(op.value, val, t)
            pair = ir.Constant(self.llfn.return_value.type, [ir.Constant(I32, 0), ir.Constant(llvm_type(self.ret), ir.Undefined)])
            b.ret(b.insert_value(pair, em.coerce(val, t, self.ret), 1))
        elif isinstance(op, O.Raise):
            b.branch(em.deopt_block())
        else:
            raise AssertionError(type(op).__name__)

    def target(self, succ: BasicBlock, pred: BasicBlock) -> ir.Block:
        """The LLVM block that the edge pred -> succ goes to."""
        if (self.fn.writes or self.track) and isinstance(succ.terminator, O.Raise):
            region = self.regions.get(pred)
            return self.resumes.raise_exit(succ, pred, None if region is None else region.checkpoint)
        return self.loops.target(succ, pred) or self.blocks[succ]


#: The lowering of each kind of op that has no value.
_STATEMENTS: dict[type, Callable[[FunctionLowering, O.Op], None]] = {
    O.Phi: FunctionLowering.phi,  # type: ignore[dict-item]
    O.Checkpoint: FunctionLowering.checkpoint,  # type: ignore[dict-item]
    O.StoreItem: FunctionLowering.store_item,  # type: ignore[dict-item]
    **{cls: FunctionLowering.control for cls in (O.Jump, O.Branch, O.ForIter, O.Return, O.Raise)},  # type: ignore[dict-item]
}

#: The lowering of each kind of op with a value: (lowering, op, its operands, its type).
_OPS: dict[type, Callable[[FunctionLowering, O.Op, list[Typed], Type], ir.Value]] = {
    O.BinOp: FunctionLowering.binary,  # type: ignore[dict-item]
    O.UnaryOp: FunctionLowering.unary,  # type: ignore[dict-item]
    O.Compare: FunctionLowering.compare,  # type: ignore[dict-item]
    O.Truth: FunctionLowering.truth,  # type: ignore[dict-item]
    O.Select: FunctionLowering.select,  # type: ignore[dict-item]
    O.BuildTuple: FunctionLowering.build_tuple,  # type: ignore[dict-item]
    O.Unpack: FunctionLowering.unpack,  # type: ignore[dict-item]
    O.TupleGet: FunctionLowering.tuple_get,  # type: ignore[dict-item]
    O.Subscript: FunctionLowering.subscript,  # type: ignore[dict-item]
    O.LoadAttr: FunctionLowering.load_attr,  # type: ignore[dict-item]
    O.GetIter: FunctionLowering.get_iter,  # type: ignore[dict-item]
    O.Narrow: FunctionLowering.narrow,  # type: ignore[dict-item]
    O.IterValue: FunctionLowering.iter_value,  # type: ignore[dict-item]
    O.Call: FunctionLowering.call,  # type: ignore[dict-item]
}


def lower_recursive(
    module: ir.Module, fn: Function, symbol: str, ret: Type, resolver: CalleeResolver, pyfunc: object = None,
    resume_points: dict[str, ResumeInfo] | None = None, drops: frozenset[str] = frozenset(),
) -> None:
    """Lower a function that calls itself as two copies that call each other: LLVM
    inlines the private copy into the public one, so each native call does the work
    of two levels of the recursion (the depth count still goes up by one a level).
    The resume points of both go into `resume_points`."""
    twin = f"{symbol}.twin"
    FunctionLowering(module, fn, symbol, ret, resolver, self_calls=twin, pyfunc=pyfunc, resume_points=resume_points, drops=drops).run()
    FunctionLowering(module, fn, twin, ret, resolver, self_calls=symbol, pyfunc=pyfunc, resume_points=resume_points, drops=drops).run().linkage = "internal"


def _narrow(result: object, vs: list[Typed], op: O.BinOp) -> Type:
    """The result type for one concrete case of a binop on split union operands, as
    typing gave it for that case (`int ** int` with an exponent that is not a
    constant is itself ``float | int``: int_pow decides by the exponent's sign)."""
    if not isinstance(result, UnionType):
        return result  # type: ignore[return-value]
    rhs = op.rhs.value if isinstance(op.rhs, O.Const) else None
    return binop_type(op.op, vs[0][1], vs[1][1], rhs)
