"""Lower one typed IR function to an LLVM function.

Internal calling convention: ``i32 @name(<params>, <ret>* out, i32 depth)`` returns 0
with the result stored through `out`, or 1 (DEOPT) when CPython must run the call
instead. `depth` counts native calls on the stack: past `MAX_DEPTH` the call
deoptimises, so runaway recursion ends in CPython's RecursionError, never a crash.
`emit_entry` adds the C entry point that cffi calls, with flattened scalar parameters
and the result written as 64-bit words (see `ltypes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from llvmlite import ir

from ..abi import MAX_DEPTH, RESUME_SLOTS, VIEW_OF_ARGUMENT
from ..ir import ops as O
from ..opt.bounds import cannot_overflow, counts_by_one, in_bounds_after_wrap, remainder_is_wrap
from ..typing.rules import compare_type
from ..ir.function import BasicBlock, Function
from ..typing.infer import value_type
from ..errors import Unsupported
from ..typing.primitives import Primitive, as_number, creator_name, lookup
from ..typing.primitives import result_type as call_result_type
from ..typing.types import (
    BOOL, BOTTOM, FLOAT, INT, NONE, RANGE_ITER, UNDEF, ArrayMethod, ArrayType, ObjType, TupleType, Type,
    UnionType, base, holds_array, options, ITEMSIZE,
)
from ..typing.models import c_params, model, state_words, words
from . import arrays, complexes, refcount, strips
from .builtins import lowering_of
from .emitter import WEAK_TWIN, Emitter, Typed, not_finite
from .ltypes import F64, I1, I8, I32, I64, ITER, const, declare, from_params, llvm_param_types, llvm_type, meminfo_index, store_words
from .points import ResumeInfo, Slot, new_number
from .numeric import binop, compare, int_mod_is_zero, truth, unary
from ..opt import ownership
from ..opt.plans import make_plans


class Callee(Protocol):
    symbol: str
    argtypes: tuple[Type, ...]
    return_type: Type


class CalleeResolver(Protocol):
    def callee(self, func: object, argtypes: tuple[Type, ...]) -> Callee: ...


#: Iterations of an innermost range loop between two tests for signals: long enough
#: that the test and the restart of the vectorized loop cost nothing measurable, short
#: enough that Ctrl-C stops even a loop of 5 µs iterations within 100 ms.
CHUNK = 16384

#: Passes of a polled loop header (see `plan_signal_polls`) that native code reports to
#: the runtime at a time (`cb_gil_work`, csrc/entry.c, which lets the GIL go once a call
#: has done about a thousand iterations in all); a chunked range loop reports its trip
#: count as it starts. Releasing and taking back the GIL costs ~40 ns: a short call
#: keeps it.
GIL_REPORT_PASSES = 256


@dataclass
class Chunked:
    """An innermost ``for ... in range(...)`` loop that runs in chunks of `CHUNK`
    iterations. Entries into the loop go to `block`, which sets `limit` (the iterator's
    remaining count at which the chunk ends) and enters the header. The header's
    ForIter goes on while `remaining != limit`, a test with a trip count that LLVM can
    vectorize; at a chunk's end the loop exits if nothing remains, and otherwise tests
    for signals and goes back to `block` (`end`, the edge's source). The header's
    phis take their values from outside the loop through phis in `block`."""

    block: ir.Block
    body: set[BasicBlock]  # the loop's blocks: edges from the others enter through `block`
    limit: ir.Value  # an alloca
    end: ir.Block | None = None
    phi_map: dict[ir.PhiInstr, ir.PhiInstr] = field(default_factory=dict)  # header phi -> its twin in `block`


def function_type(argtypes: tuple[Type, ...], ret: Type) -> ir.FunctionType:
    """``{i32 status, ret} (args..., i32 depth)``: status 0 with the result, or DEOPT.

    The pair comes back in registers, so a native call between compiled functions
    costs no store and reload of the result."""
    return ir.FunctionType(result_type(ret), [llvm_type(t) for t in argtypes] + [I32])


def result_type(ret: Type) -> ir.LiteralStructType:
    return ir.LiteralStructType([I32, llvm_type(ret)])


def declare_function(module: ir.Module, symbol: str, argtypes: tuple[Type, ...], ret: Type) -> ir.Function:
    return declare(module, symbol, function_type(argtypes, ret))


def call_compiled(b: ir.IRBuilder, callee: ir.Function, args: list[ir.Value], inline: bool = True) -> ir.Instruction:
    """A call of a compiled function ({status, result}), never made a tail call unless
    the caller returns the same type. On x86-64 a result with more than two doubles
    comes back partly on the x87 register stack, which the caller must pop; a tail
    call from a caller that returns less (an entry returns the status only) left them
    there, and once the stack was full every x87 load (glibc's fmod, a later such
    result) read a NaN, in whatever code ran next. Without `inline`, LLVM keeps the
    call a call."""
    same = isinstance(b.function, ir.Function) and b.function.return_value.type == callee.return_value.type
    return b.call(callee, args, tail=None if same else "notail", attrs=() if inline else ("noinline",))


class FunctionLowering:
    """Lowers one typed function to `symbol`. With `self_calls`, the function's calls to
    itself go to that symbol instead (see `lower_recursive`)."""

    def __init__(
        self,
        module: ir.Module,
        fn: Function,
        symbol: str,
        ret: Type,
        resolver: CalleeResolver,
        self_calls: str | None = None,
        pyfunc: object = None,
        resume_points: dict[int, ResumeInfo] | None = None,
    ) -> None:
        self.fn = fn
        self.pyfunc = pyfunc  # what a resume point hands back to (functions that write)
        #: The resume points its code reports, by number (points.py): what the caller
        #: hands on with the compiled function.
        self.resume_points: dict[int, ResumeInfo] = {} if resume_points is None else resume_points
        self.ret = ret
        self.resolver = resolver
        self.symbol = symbol
        self.self_calls = self_calls
        self.llfn = declare_function(module, symbol, tuple(a.type for a in fn.args), ret)  # type: ignore[misc]
        self.em = Emitter(module, self.llfn)
        self.values: dict[O.Value, ir.Value] = {}
        self.blocks: dict[BasicBlock, ir.Block] = {}
        self.phis: list[tuple[O.Phi, list[ir.PhiInstr]]] = []  # one LLVM phi per scalar member
        self.pending_phis: list[tuple[O.Phi, list[ir.PhiInstr]]] = []  # aggregates to rebuild
        self.phi_inputs: dict[tuple[O.Phi, BasicBlock], tuple[list[ir.Value], ir.Block]] = {}
        self.uses = fn.uses()
        self.raise_exits: dict[tuple[BasicBlock, BasicBlock | None], ir.Block] = {}
        self.plans = make_plans(fn, self.uses)  # what the analyses decided (opt/plans.py)
        self.floats = self.plans.floats  # which float results are tested where
        self.prechecked: set[tuple[O.Op, int]] = set()  # (array access, dimension): see early_bounds_guards
        self.em.precise = fn.writes
        # Arrays allocated natively: references held (see refcount.py).
        self.liveness = self.plans.ownership
        self.track = self.liveness is not None
        self.order = {op: k for k, op in enumerate(fn.ops())}
        self.held: list[O.Op] = []
        self.em.on_deopt = self.release_for_deopt if self.track else None
        self.em.held_key = lambda: tuple(id(v) for v in self.held)
        # Innermost loops that also run in exit-free strips (strips.py), by header.
        self.strips = self.plans.strips
        self.bounds = self.plans.bounds  # where each index is tested
        self.extra_incoming: list[tuple[ir.PhiInstr, ir.Value, ir.Block]] = []  # from strips

    def run(self) -> ir.Function:
        for a, llarg in zip(self.fn.args, self.llfn.args):
            self.values[a] = llarg
        self.depth = self.llfn.args[-1]
        order = self.fn.rpo()
        for block in order:
            self.blocks[block] = self.em.block(block.name)
        self.plan_latches(order)
        self.polled, self.chunks = self.plan_signal_polls()
        self.signals_at_entry: ir.Value | None = None
        self.gil_budget: ir.Value | None = None
        if self.polled or self.chunks:
            with self.em.builder.goto_block(self.em.alloca_block):
                self.signals_at_entry = self.signal_count()
        if self.polled:
            self.gil_budget = self.em.alloca(I64)
            with self.em.builder.goto_block(self.em.alloca_block):
                self.em.builder.store(self.em.i64(GIL_REPORT_PASSES), self.gil_budget)
        if self.floats.deferred:
            self.em.prepare_warnings()
        self.em.builder.position_at_end(self.em.alloca_block)
        for a, llarg in zip(self.fn.args, self.llfn.args):
            if isinstance(a.type, ArrayType):  # lengths are >= 0: `0 <= i < n` is one test
                for k in range(a.type.ndim):
                    n = self.em.builder.extract_value(llarg, 1 + k)
                    self.em.intrinsic("llvm.assume", ir.VoidType(), [self.em.builder.icmp_signed(">=", n, self.em.i64(0))])
        if self.calls_python_functions():
            self.em.line = self.fn.firstlineno
            if self.fn.writes:
                first = next(op for op in order[0].ops if isinstance(op, O.Checkpoint))
                self.em.resume = ResumeState(self, first, list(first.values))
            self.em.deopt_if(self.em.builder.icmp_unsigned(">", self.depth, ir.Constant(I32, MAX_DEPTH)))
        self.em.builder.branch(self.blocks[order[0]])
        for block in order:
            self.em.builder.position_at_end(self.blocks[block])
            self.em.resume = None
            self.held = []
            if isinstance(block.terminator, O.Raise):
                self.em.line = block.terminator.line or self.fn.firstlineno
                if not (self.fn.writes or self.track):
                    self.em.builder.branch(self.em.deopt_block())  # CPython raises it
                elif block is order[0]:
                    self.em.builder.branch(self.raise_exit(block, None))
                else:
                    self.em.builder.unreachable()  # its predecessors go to raise_exit
                continue
            after_phis = False
            releases: dict[int, list[O.Op]] = {}
            if self.liveness is not None:
                live = self.liveness.live_in[block]
                self.held = sorted((v for v in live if v.block is not block), key=self.order.__getitem__)
                releases = self.liveness.releases(block)
            deferred: list[O.Op] = []  # released after the phis
            for k, op in enumerate(block.ops):
                if not after_phis and not isinstance(op, O.Phi):
                    after_phis = True  # LLVM wants a block's phis first: guards go after them
                    self.assemble_phis()
                    self.release(deferred)
                    if not self.fn.writes:  # (a function that writes: at its first checkpoint)
                        self.early_divisor_guards(block)
                        self.early_bounds_guards(block)
                self.em.line = op.line or self.fn.firstlineno
                self.em.speculative = op.speculative
                if op is block.ops[-1] and block in self.polled:
                    self.poll_signals()
                    self.count_down_gil()
                self.lower(op)
                if self.track and ownership.is_owned(op):
                    self.held.append(op)
                if k in releases:
                    if isinstance(op, O.Phi):
                        deferred.extend(releases[k])
                    else:
                        self.release(releases[k])
            self.em.speculative = False
        for phi, llphis in self.phis:
            latch = self.latches.get(phi.block)  # type: ignore[arg-type]
            for pred, _ in phi.incoming:
                if pred in self.blocks:
                    vals, blk = self.phi_inputs[(phi, pred)]
                    chunked = self.chunks.get(phi.block)  # type: ignore[arg-type]
                    if latch is not None and pred in latch[1]:
                        llphis_here = self.latch_phis(phi, llphis, latch[0])
                    elif chunked is not None and pred not in chunked.body:
                        llphis_here = [self.chunk_phi(llphi, chunked) for llphi in llphis]
                    else:
                        llphis_here = llphis
                    for llphi, val in zip(llphis_here, vals):
                        llphi.add_incoming(val, blk)
        for llphi, val, blk in self.extra_incoming:
            llphi.add_incoming(val, blk)
        for header, (latch, _) in self.latches.items():
            if not latch.is_terminated:  # a header without phis
                with self.em.builder.goto_block(latch):
                    self.em.builder.branch(self.blocks[header])
        for header, chunked in self.chunks.items():
            self.start_chunk(header, chunked)
        return self.llfn

    def assemble_phis(self) -> None:
        """Rebuild the aggregates (unions, tuples) whose phis were split into one phi
        per scalar member: LLVM's loop analyses see through scalar phis (a union's tag
        that is constant after the first iteration), not through aggregate ones."""
        for op, leaves in self.pending_phis:
            self.values[op] = self.assemble(op, leaves)
        self.pending_phis = []

    def assemble(self, phi: O.Phi, leaves: list[ir.Value]) -> ir.Value:
        """The value of `phi` from its scalar members (one for a scalar phi)."""
        lltype = llvm_type(phi.type)  # type: ignore[arg-type]
        if not isinstance(lltype, ir.LiteralStructType):
            return leaves[0]
        val = ir.Constant(lltype, ir.Undefined)
        for path, leaf in zip(_leaf_paths(lltype), leaves):
            val = self.em.builder.insert_value(val, leaf, path)
        return val

    def phi_leaves(self, phi: O.Phi, src: O.Value) -> list[ir.Value]:
        """What `src` contributes to `phi`: its scalar members in `phi`'s representation."""
        val, t = self.get(src)
        val = self.em.coerce(val, t, phi.type)  # type: ignore[arg-type]
        lltype = llvm_type(phi.type)  # type: ignore[arg-type]
        if isinstance(lltype, ir.LiteralStructType):
            return [self.em.builder.extract_value(val, path) for path in _leaf_paths(lltype)]
        return [val]

    # -- what the loop schemes see (context.LoopLowering) -----------------------------

    def rebind(self, v: O.Value, value: ir.Value) -> ir.Value:
        before = self.values[v]
        self.values[v] = value
        return before

    def header_phis(self, header: BasicBlock) -> list[tuple[O.Phi, list[ir.PhiInstr]]]:
        return [(phi, leaves) for phi, leaves in self.phis if phi.block is header]

    def block_of(self, block: BasicBlock) -> ir.Block:
        return self.blocks[block]

    def add_incoming(self, phi: ir.PhiInstr, value: ir.Value, block: ir.Block) -> None:
        self.extra_incoming.append((phi, value, block))

    def users(self, v: O.Value) -> list[O.Op]:
        return self.uses.get(v, [])

    def no_new_signals(self) -> ir.Value:
        return self.em.builder.icmp_unsigned("==", self.signal_count(), self.signals_at_entry)

    def index_checked(self, op: O.Subscript | O.StoreItem, k: int) -> bool:
        return (op, k) in self.bounds.proven or (op, k) in self.prechecked

    def release(self, values: list[O.Op]) -> None:
        """Drop the references these held values own (their last use is behind us)."""
        for v in values:
            if v in self.held:
                self.held.remove(v)
                refcount.decref(self.em.builder, self.values[v], v.type)  # type: ignore[arg-type]

    def release_for_deopt(self, handed: set[O.Value]) -> None:
        """On a deopt path: drop every held reference but those `handed` to the
        interpreter with the resume state (the builder is in the deopt block)."""
        for v in self.held:
            if v not in handed:
                refcount.decref(self.em.builder, self.values[v], v.type)  # type: ignore[arg-type]

    def calls_python_functions(self) -> bool:
        import types as pytypes

        return any(
            isinstance(op, O.Call) and isinstance(op.func, O.Const) and isinstance(op.func.value, pytypes.FunctionType)
            and creator_name(op.func.value) is None
            for op in self.fn.ops()
        )

    def early_divisor_guards(self, block: BasicBlock) -> None:
        """Test the block's int divisors for zero on entry to the block rather than at
        the division. A deoptimisation re-runs the whole call in CPython, so deopting a
        few ops early changes nothing observable (the block runs to the division or
        fails first), and a divisor defined before a loop then yields a test at the
        top of the loop body, which LLVM moves out of the loop."""
        em = self.em
        for op in block.ops:
            if not (isinstance(op, O.BinOp) and op.op in ("//", "%") and op.type == INT):
                continue
            y = op.rhs
            if value_type(op.lhs) != INT or value_type(y) != INT or isinstance(y, O.Const):
                continue
            if isinstance(y, O.Op) and y.block is block:
                continue
            em.line = op.line or self.fn.firstlineno
            em.speculative = False
            em.deopt_if(em.builder.icmp_signed("==", self.get(y)[0], em.i64(0)))

    # -- values ---------------------------------------------------------------------

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
        b = self.em.builder
        em = self.em
        em.float_error_check = "precise"
        dead_end = False
        planned = self.floats.op_tests(op)
        if planned is not None:
            self.consumer_checks(planned.tests)
            em.float_error_check = planned.math_test
            dead_end = planned.self_test
        if isinstance(op, O.Phi):
            lltype = llvm_type(op.type)  # type: ignore[arg-type]
            if isinstance(lltype, ir.LiteralStructType):
                leaves = [b.phi(_leaf_type(lltype, path)) for path in _leaf_paths(lltype)]
                self.phis.append((op, leaves))
                self.pending_phis.append((op, leaves))
            else:
                llphi = b.phi(lltype)
                self.phis.append((op, [llphi]))
                self.values[op] = llphi
            return
        if isinstance(op, O.ControlOp):
            if op.block in self.strips:
                strips.emit_strips(self, op.block, self.strips[op.block])  # type: ignore[arg-type]
            self.lower_control(op)
            return
        if isinstance(op, O.Checkpoint):
            first = self.em.resume is None
            self.em.resume = ResumeState(self, op, list(op.values))
            if first:
                self.early_divisor_guards(op.block)  # type: ignore[arg-type]
                self.early_bounds_guards(op.block)  # type: ignore[arg-type]
            return
        if isinstance(op, O.StoreItem):
            self.array_store(self.get(op.obj), self.get(op.index), self.get(op.value), op)
            return
        t: Type = op.type  # type: ignore[assignment]
        if any(value_type(v) == BOTTOM for v in op.operands()):
            # An operand never has a value (a call that never returns: it raises, or
            # recurses until the interpreter's limit): this op is never reached.
            self.values[op] = ir.Constant(llvm_type(t), ir.Undefined)
            return
        operands = [self.get(v) for v in op.operands()]
        if isinstance(op, O.BinOp) and t == INT and all(ty == INT for _, ty in operands) and (cannot_overflow(op) or counts_by_one(op)):
            # j + 1 for a loop item j; count + 1 for a counter
            val = (b.add if op.op == "+" else b.sub)(operands[0][0], operands[1][0])
        elif isinstance(op, O.BinOp) and t == INT and all(ty == INT for _, ty in operands) and remainder_is_wrap(op):
            x, n = operands[0][0], operands[1][0]  # (i + 1) % n for a loop item i of range(n)
            val = b.select(b.icmp_signed("==", x, n), em.i64(0), x)
        elif isinstance(op, O.BinOp):
            em.float_warning_check = self.floats.arithmetic_test(op, em.strip is not None and op in em.strip.absorbed)
            operands = self.weak_twins(operands)
            val = em.split(operands, t, lambda vs: binop(em, op.op, vs[0], vs[1], _narrow(t, vs, op)))
        elif isinstance(op, O.UnaryOp):
            val = em.split(operands, t, lambda vs: unary(em, op.op, vs[0]))
        elif isinstance(op, O.Compare):
            divides = self.divisibility_test(op)
            if divides is not None:
                val = divides
            else:
                operands = self.weak_twins(operands)
                val = em.split(operands, t, lambda vs: (compare(em, op.op, vs[0], vs[1]), compare_type(op.op, vs[0][1], vs[1][1])))
        elif isinstance(op, O.Truth):
            val = em.split(operands, t, lambda vs: (truth(em, vs[0]), BOOL))
        elif isinstance(op, O.BuildTuple):
            val = ir.Constant(llvm_type(t), ir.Undefined)
            assert isinstance(t, TupleType), t
            for i, (item, item_t) in enumerate(operands):
                # An item's type may be narrower than the tuple's (typing saw a union
                # that folding later made a constant): represent it as the tuple says.
                val = b.insert_value(val, em.coerce(item, item_t, t.items[i]), i)
            if self.track and holds_array(t):
                refcount.incref(b, val, t)  # the tuple's own references to its arrays
        elif isinstance(op, O.Unpack):
            val = em.coerce(operands[0][0], operands[0][1], t)  # (narrower since typing: see BuildTuple)
        elif isinstance(op, O.TupleGet):
            val = self.tuple_item(operands[0], op.index, t)
        elif isinstance(op, O.Subscript) and isinstance(operands[0][1], ArrayType) and isinstance(t, ArrayType):
            val = self.array_view(operands[0], operands[1], op, t)
        elif isinstance(op, O.Subscript) and isinstance(operands[0][1], ArrayType):
            val = self.array_item(operands[0], operands[1], op)
        elif isinstance(op, O.LoadAttr) and isinstance(operands[0][1], ArrayType) and op.name == "copy":
            val = operands[0][0]  # the bound method is its array (see `call`)
        elif isinstance(op, O.LoadAttr) and isinstance(operands[0][1], ArrayType):
            val = self.array_attribute(operands[0], op.name)
        elif isinstance(op, O.LoadAttr) and op.name in ("real", "imag"):
            val = em.split(operands, t, lambda vs: complexes.attribute(em, vs[0], op.name))
        elif isinstance(op, O.Subscript):
            assert isinstance(op.index, O.Const)
            val = self.tuple_item(operands[0], int(op.index.value), t)  # type: ignore[call-overload]
        elif isinstance(op, O.GetIter):
            val = self.range_iter(operands[0][0])
        elif isinstance(op, O.Narrow):
            src = operands[0][1]
            if op.is_none is None and src == UNDEF:  # never bound (folding showed it): CPython raises
                em.deopt_if(ir.Constant(I1, 1))
                val = ir.Constant(llvm_type(t), ir.Undefined)
            else:
                if op.is_none is None and UNDEF in options(src):  # UnboundLocalError in CPython
                    tag = b.extract_value(operands[0][0], 0)
                    em.deopt_if(b.icmp_unsigned("==", tag, ir.Constant(I8, src.options.index(UNDEF))))  # type: ignore[attr-defined]
                val = self.narrow(operands[0], t)
        elif isinstance(op, O.IterValue):
            val = b.load(b.gep(operands[0][0], [ir.Constant(I32, 0), ir.Constant(I32, 3)]))
        elif isinstance(op, O.Call):
            val = self.call(op, operands, t)
        else:
            raise AssertionError(f"cannot lower {type(op).__name__}")
        self.values[op] = val
        if dead_end:  # nothing consumes it: it tests itself
            em.warn_if_not_finite(val)

    def tuple_item(self, tup: Typed, index: int, t: Type) -> ir.Value:
        """Item `index` (negative counts from the end) of a tuple, or of a union of
        tuples of one length (`(a, 1) if c else (1.5, 2)`), represented as `t`."""

        def item(vs: list[Typed]) -> Typed:
            val, tt = vs[0]
            assert isinstance(tt, TupleType), tt
            k = index % len(tt.items)
            return self.em.builder.extract_value(val, k), tt.items[k]

        if isinstance(tup[1], TupleType):
            # (`t` may be wider than the item: typing saw a union of tuples there)
            return self.em.coerce(*item([tup]), t)
        return self.em.split([tup], t, item)

    def weak_twins(self, operands: list[Typed]) -> list[Typed]:
        """A binary op between an ``int | np.int64`` (``float | np.float64``) and an
        np.int64 (np.float64) is NumPy's op on two np.int64 (np.float64) whichever the
        tag: NumPy converts the Python scalar, which always fits. Both members of such
        a union hold its value (`Emitter.coerce` builds every union value), so the op
        reads the NumPy member whatever the tag and is lowered once instead of once per
        tag: ``total = 0`` before ``total = total + a[i]`` costs nothing per iteration."""
        if len(operands) != 2:
            return operands
        out = list(operands)
        for k in (0, 1):
            (val, t), (_, other) = operands[k], operands[1 - k]
            if isinstance(t, UnionType) and other in WEAK_TWIN and set(t.options) == {WEAK_TWIN[other], other}:
                out[k] = (self.em.builder.extract_value(val, t.options.index(other) + 1), other)
        return out

    def call(self, op: O.Call, operands: list[Typed], t: Type) -> ir.Value:
        import types as pytypes

        em = self.em
        b = em.builder
        func = op.func.value if isinstance(op.func, O.Const) else None
        args = operands[1:]
        if isinstance(func, type) and issubclass(func, BaseException):
            return ir.Constant(I8, 0)  # only ever raised, which deoptimises
        if isinstance(t, ObjType):
            return ir.Constant(I8, 0)  # np.dtype("int64"): a compile-time object
        if isinstance(operands[0][1], ArrayMethod):  # a.copy()
            return arrays.copy(em, operands[0][0], operands[0][1].array)
        if creator_name(func) is not None:
            return self.create(op, creator_name(func), args, t)  # type: ignore[arg-type]
        if isinstance(func, pytypes.FunctionType):
            callee = self.resolver.callee(func, tuple(a[1] for a in args))
            symbol = self.self_calls if self.self_calls and callee.symbol == self.symbol else callee.symbol
            llcallee = declare_function(em.module, symbol, callee.argtypes, callee.return_type)
            depth = b.add(self.depth, ir.Constant(I32, 1))
            pair = call_compiled(b, llcallee, [em.coerce(v, vt, ct) for (v, vt), ct in zip(args, callee.argtypes)] + [depth])
            status = b.extract_value(pair, 0)
            failed = b.icmp_signed("!=", status, ir.Constant(I32, 0))
            bail = em.block("callee.failed")
            ok = em.block("callee.ok")
            b.cbranch(failed, bail, ok).set_weights([1, 1 << 20])
            b.position_at_end(bail)
            if self.fn.writes or self.track:
                # resume this function's caller state, or release what it holds
                b.branch(em.deopt_block(keep_line=True))
            else:
                b.ret(b.insert_value(ir.Constant(self.llfn.return_value.type, ir.Undefined), status, 0))
            b.position_at_end(ok)
            return em.coerce(b.extract_value(pair, 1), callee.return_type, t)
        sig = lookup(func)
        assert sig is not None, func
        lowering = lowering_of(sig)

        def lower(vs: list[Typed]) -> Typed:
            result = _narrow_call(sig, vs, t)
            if not sig.numpy_own:  # NumPy scalars as the Python numbers they convert to
                vs = [self.as_number(sig.name, k, v) for k, v in enumerate(vs)]
            return lowering(em, vs, result)

        return em.split(args, t, lower)

    def as_number(self, name: str, position: int, v: Typed) -> Typed:
        """A NumPy scalar argument of a math function or float/int/bool as the Python
        number it gives them (`signatures.as_number`)."""
        number = as_number(name, position, v[1])
        if number == FLOAT and base(v[1]) != FLOAT:
            return self.em.as_float((v[0], base(v[1]))), FLOAT  # __float__: rounds as C does
        return v[0], number

    def create(self, op: O.Call, name: str, args: list[Typed], t: Type) -> ir.Value:
        """``np.zeros(...)`` and the other creators (typing/creation.py)."""
        from ..typing.creation import creation

        em = self.em
        consts = [a.value if isinstance(a, O.Const) else None for a in op.args]
        c = creation(name, [a[1] for a in args], op.kwnames, consts)
        assert isinstance(t, ArrayType), t
        if name == "arange":
            ints = [em.as_int((v, base(ty))) for v, ty in args]
            start, stop, step = (em.i64(0), ints[0], em.i64(1)) if len(ints) == 1 else (ints + [em.i64(1)])[:3]
            return arrays.arange(em, start, stop, step)
        kind = name.removesuffix("_like")
        item = None  # converted before allocating: a failed check has nothing to release
        if kind == "ones":
            item = arrays.fill_item(em, t, (ir.Constant(I1, 1), BOOL))
        elif kind == "full":
            item = arrays.fill_item(em, t, args[c.fill])  # type: ignore[index]
        if c.like is not None:
            proto = args[c.like][0]
            shape = [em.builder.extract_value(proto, 1 + k) for k in range(t.ndim)]
            new = arrays.allocate(em, t, shape, like=proto, zeroed=kind == "zeros")
        else:
            value, shape_t = args[c.shape]  # type: ignore[index]
            if isinstance(shape_t, TupleType):
                shape = [em.as_int((em.builder.extract_value(value, k), base(it))) for k, it in enumerate(shape_t.items)]
            else:
                shape = [em.as_int((value, base(shape_t)))]
            new = arrays.allocate(em, t, shape, zeroed=kind == "zeros")
        if item is not None:
            arrays.fill(em, new, t, item)
        return new

    def divisibility_test(self, op: O.Compare) -> ir.Value | None:
        """``a % b == 0`` (or ``!=``) on ints, lowered without the floor adjustment."""
        if op.op not in ("==", "!="):
            return None
        for mod, zero in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if (
                isinstance(mod, O.BinOp) and mod.op == "%" and mod.type == INT
                and value_type(mod.lhs) in (INT, BOOL) and value_type(mod.rhs) in (INT, BOOL)
                and isinstance(zero, O.Const) and type(zero.value) is int and zero.value == 0
            ):
                x, y = (self.em.as_int(self.get(v)) for v in (mod.lhs, mod.rhs))
                is_zero = int_mod_is_zero(self.em, x, y)
                return is_zero if op.op == "==" else self.em.builder.not_(is_zero)
        return None

    def consumer_checks(self, tested: list[O.Value]) -> None:
        """Test the untested float values an op consumes (`FloatTests.op_tests`).
        Plain float values are tested together: their sum is non-finite when one of
        them is (an infinity or NaN survives the addition; two finite values whose sum
        overflows only cost a re-run)."""
        em = self.em
        plain = []
        for v in tested:
            val, t = self.get(v)
            if base(t) == FLOAT:
                plain.append(val)
                continue

            def test(vs: list[Typed]) -> Typed:
                x, xt = vs[0]
                if base(xt) == FLOAT:
                    return not_finite(em, x), BOOL
                return ir.Constant(I1, 0), BOOL

            em.warn_if(em.split([(val, t)], BOOL, test))
        if plain:
            total = plain[0]
            for val in plain[1:]:
                total = em.builder.fadd(total, val)
            em.warn_if_not_finite(total)

    def element_pointer(self, array: Typed, index: Typed, op: O.Subscript | O.StoreItem, dims: int | None = None) -> ir.Value:
        """The address of ``a[i]`` / ``a[i, j, ...]``: negative indices count from the end;
        an index out of bounds deopts (CPython raises NumPy's IndexError). Indices that
        `opt/bounds.py` proves in bounds (a loop over ``range(a.shape[k])``) are used as
        they are."""
        em, b = self.em, self.em.builder
        val, t = array
        assert isinstance(t, ArrayType)
        if isinstance(index[1], TupleType):
            indices = [b.extract_value(index[0], k) for k in range(t.ndim)]
            sources = list(op.index.items) if isinstance(op.index, O.BuildTuple) else [None] * t.ndim
        else:
            indices = [index[0]]
            sources = [op.index]
        offset = em.i64(0)
        if dims is not None:  # a view: only the first `dims` indices are real
            if not isinstance(op.index, O.BuildTuple):
                sources = [op.index]  # m[i]: the one index
            indices, sources = indices[:dims], sources[:dims]
        bad: ir.Value | None = None  # in a strip: the index failed its bounds test
        wraps = False  # a negative index may wrap: the address may jump
        for k, (i, source) in enumerate(zip(indices, sources)):
            extent = b.extract_value(val, 1 + k)
            proven = source is not None and (op, k) in self.bounds.proven
            if not proven and (op, k) not in self.prechecked:
                wraps = True
                i = b.select(b.icmp_signed("<", i, em.i64(0)), b.add(i, extent), i)
                if source is None or not in_bounds_after_wrap(source, op.obj, k):
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
            em.strip.irregular.add(id(ptr))
        return ptr

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
        for op, k, (arr, dim, off) in self.bounds.entry_tests.get(block, []):
            upper = em.i64(off) if arr is None else b.add(b.extract_value(self.get(arr)[0], 1 + dim), em.i64(off))  # type: ignore[arg-type]
            extent = b.extract_value(self.get(op.obj)[0], 1 + k)  # type: ignore[attr-defined]
            em.line = op.line or self.fn.firstlineno
            em.speculative = False
            em.deopt_if(b.icmp_signed(">", upper, extent), distinct="bounds")
            self.prechecked.add((op, k))

    def array_item(self, array: Typed, index: Typed, op: O.Subscript) -> ir.Value:
        return arrays.load_element(self.em, self.element_pointer(array, index, op), array[1].dtype)  # type: ignore[attr-defined]

    def array_store(self, array: Typed, index: Typed, value: Typed, op: O.StoreItem) -> None:
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

    def array_view(self, array: Typed, index: Typed, op: O.Subscript, t: ArrayType) -> ir.Value:
        """``m[i]`` (``m[i, j]`` of a 3-D array, ...): a view of the remaining
        dimensions, holding its own reference to the memory (see refcount.py)."""
        b = self.em.builder
        val, src = array
        assert isinstance(src, ArrayType)
        # The address of the first element of the view, with the same bounds checks as
        # an element: index as if the missing trailing indices were 0.
        count = src.ndim - t.ndim
        items = [b.extract_value(index[0], k) for k in range(count)] if isinstance(index[1], TupleType) else [index[0]]
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

    def array_attribute(self, array: Typed, name: str) -> ir.Value:
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
        out = ir.Constant(llvm_type(TupleType((INT,) * t.ndim)), ir.Undefined)
        for k, e in enumerate(extents):
            out = b.insert_value(out, e, k)
        return out

    def narrow(self, v: Typed, t: Type) -> ir.Value:
        """`v` as type `t`, which the branch that led here proved it has."""
        val, src = v
        if src == t:
            return val
        if t == BOTTOM or not isinstance(src, UnionType):
            return ir.Constant(llvm_type(t), ir.Undefined)  # this code cannot be reached
        if not isinstance(t, UnionType):
            return self.em.builder.extract_value(val, src.options.index(t) + 1)
        b = self.em.builder
        merge = self.em.block("narrow")
        dead = self.em.block("narrow.impossible")
        with b.goto_block(dead):
            b.unreachable()
        switch = b.switch(b.extract_value(val, 0), dead)
        incoming = []
        for k, opt in enumerate(src.options):
            if opt not in t.options:
                continue
            blk = self.em.block(f"narrow.{opt}")
            switch.add_case(ir.Constant(I8, k), blk)
            b.position_at_end(blk)
            incoming.append((self.em.coerce(b.extract_value(val, k + 1), opt, t), b.block))
            b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(llvm_type(t))
        for value, blk in incoming:
            phi.add_incoming(value, blk)
        return phi

    def range_iter(self, rng: ir.Value) -> ir.Value:
        """Iterator state {cur, step, remaining, item}; the length is computed once,
        in unsigned arithmetic, as CPython's range does, so no step can overflow."""
        em = self.em
        b = em.builder
        start, stop, step = (b.extract_value(rng, i) for i in range(3))
        zero_step = b.icmp_signed("==", step, em.i64(0))
        em.deopt_if(zero_step)  # ValueError: arg 3 must not be zero
        up = b.icmp_signed(">", step, em.i64(0))
        lo = b.select(up, start, stop)
        hi = b.select(up, stop, start)
        mag = b.select(up, step, b.sub(em.i64(0), step))
        mag = b.select(zero_step, em.i64(1), mag)  # defined until the guard check
        nonempty = b.icmp_signed("<", lo, hi)
        span = b.sub(b.sub(hi, lo), em.i64(1))
        count = b.add(b.udiv(span, mag), em.i64(1))
        count = b.select(nonempty, count, em.i64(0))
        state = em.alloca(ITER)
        for i, v in enumerate((start, step, count, em.i64(0))):
            b.store(v, b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, i)]))
        return state

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
            edge = self.edge(block, succ) if self.track else None
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
            state = self.get(op.iterator)[0]
            field = lambda i: b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, i)])  # noqa: E731
            remaining = b.load(field(2))
            step_block = em.block("foriter.next")
            chunked = self.chunks.get(block)
            if chunked is None:
                b.cbranch(b.icmp_unsigned("!=", remaining, em.i64(0)), step_block, target(op.exit))
            else:
                end = em.block(f"chunk.end.{block.name}")
                b.cbranch(b.icmp_unsigned("!=", remaining, b.load(chunked.limit)), step_block, end)
                b.position_at_end(end)
                for phi in op.exit.phis():  # they take their values from here, not the header
                    if (phi, block) in self.phi_inputs and op.exit not in edges:
                        self.phi_inputs[(phi, block)] = (self.phi_inputs[(phi, block)][0], end)
                more = em.block(f"chunk.next.{block.name}")
                b.cbranch(b.icmp_unsigned("==", remaining, em.i64(0)), target(op.exit), more)
                b.position_at_end(more)
                self.poll_signals()
                b.branch(chunked.block)
                chunked.end = b.block
            b.position_at_end(step_block)
            cur = b.load(field(0))
            b.store(cur, field(3))
            b.store(b.add(cur, b.load(field(1))), field(0))  # wraps only after the last item
            b.store(b.sub(remaining, em.i64(1)), field(2))
            b.branch(target(op.body))
        elif isinstance(op, O.Return):
            em.deopt_if_warned()
            val, t = self.get(op.value)
            if self.track or holds_array(t):
                # The caller gets a reference: this one's own, or a new one (also in a
                # function that owns nothing: ``return a`` of an argument).
                mine = ownership.holder(op.value)
                if mine is not None and mine in self.held:
                    self.held.remove(mine)  # type: ignore[arg-type]
                elif holds_array(t):
                    refcount.incref(b, val, t)
                self.release(list(self.held))
            pair = ir.Constant(self.llfn.return_value.type, [ir.Constant(I32, 0), ir.Constant(llvm_type(self.ret), ir.Undefined)])
            b.ret(b.insert_value(pair, em.coerce(val, t, self.ret), 1))
        elif isinstance(op, O.Raise):
            b.branch(em.deopt_block())
        else:
            raise AssertionError(type(op).__name__)

    def edge(self, pred: BasicBlock, succ: BasicBlock) -> ir.Block | None:
        """A block on the edge pred -> succ for its reference counting, or None when it
        has none: each phi of succ gets a reference (a value that dies on this edge
        hands its own over, any other is increfed), and what succ does not need is
        released."""
        assert self.liveness is not None
        b = self.em.builder
        live = self.liveness.live_in[succ]
        handed: set[O.Value] = set()
        increfs: list[tuple[ir.Value, Type]] = []
        for phi in succ.phis():
            if not holds_array(phi.type):
                continue
            v = phi.value_for(pred)
            mine = ownership.holder(v)
            if mine is not None and mine in self.held and mine not in live and mine not in handed:
                handed.add(mine)
            elif holds_array(value_type(v)):
                val, t = self.get(v)
                increfs.append((val, t))
        drops = [v for v in self.held if v not in live and v not in handed]
        if not increfs and not drops:
            return None
        edge = self.em.block(f"edge.{pred.name}.{succ.name}")
        with b.goto_block(edge):
            for val, t in increfs:
                refcount.incref(b, val, t)
            for v in drops:
                refcount.decref(b, self.values[v], v.type)  # type: ignore[arg-type]
            b.branch(self.target(succ, pred))
        return edge

    def target(self, succ: BasicBlock, pred: BasicBlock) -> ir.Block:
        """The LLVM block that the edge pred -> succ goes to."""
        if (self.fn.writes or self.track) and isinstance(succ.terminator, O.Raise):
            return self.raise_exit(succ, pred)
        latch = self.latches.get(succ)
        if latch is not None and pred in latch[1]:
            return latch[0]
        chunked = self.chunks.get(succ)
        if chunked is not None and pred not in chunked.body:
            return chunked.block
        return self.blocks[succ]

    def plan_signal_polls(self) -> tuple[set[BasicBlock], dict[BasicBlock, "Chunked"]]:
        """The loop headers that test for signals (Ctrl-C) on every iteration, and the
        innermost ``for ... in range(...)`` loops that test once per `CHUNK`
        iterations instead: a test on every iteration would keep LLVM from
        vectorizing them (see `Chunked`). A loop that runs in strips (strips.py) tests
        at its header, which it reaches once per strip."""
        from ..ir.dominance import natural_loops

        loops = natural_loops(self.fn)
        polled: set[BasicBlock] = set()
        chunks: dict[BasicBlock, Chunked] = {}
        for h, body in loops.items():
            term = h.terminator
            innermost = not (body & loops.keys() - {h})
            if (
                innermost
                and h not in self.strips
                and isinstance(term, O.ForIter)
                and value_type(term.iterator) == RANGE_ITER
                and all(isinstance(op, (O.Phi, O.Checkpoint, O.ForIter)) for op in h.ops)
            ):
                chunks[h] = Chunked(self.em.block(f"chunk.{h.name}"), body, self.em.alloca(I64))
            else:
                polled.add(h)
        return polled, chunks

    def chunk_phi(self, llphi: ir.PhiInstr, chunked: Chunked) -> ir.PhiInstr:
        """The twin of a chunked loop header's phi in its chunk block (created on first
        use): it merges the values from outside the loop with the header phi's own at
        the end of a chunk, and feeds the header phi."""
        found = chunked.phi_map.get(llphi)
        if found is None:
            assert chunked.end is not None and all(isinstance(i, ir.PhiInstr) for i in chunked.block.instructions)
            with self.em.builder.goto_block(chunked.block):
                found = self.em.builder.phi(llphi.type)
            found.add_incoming(llphi, chunked.end)
            llphi.add_incoming(found, chunked.block)
            chunked.phi_map[llphi] = found
        return found

    def start_chunk(self, header: BasicBlock, chunked: Chunked) -> None:
        """The chunk block's code after its phis: the next chunk ends `CHUNK`
        iterations on, or where the iterator does."""
        b = self.em.builder
        term = header.terminator
        assert isinstance(term, O.ForIter)
        with b.goto_block(chunked.block):
            state = self.get(term.iterator)[0]
            remaining = b.load(b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, 2)]))
            self.report_work(remaining)  # (again at each chunk: only a long loop gets there)
            long = b.icmp_unsigned(">", remaining, self.em.i64(CHUNK))
            b.store(b.select(long, b.sub(remaining, self.em.i64(CHUNK)), self.em.i64(0)), chunked.limit)
            b.branch(self.blocks[header])

    def signal_count(self) -> ir.Value:
        """The runtime's count of signals so far (`cb_signal_generation`, which its
        handler bumps). An atomic load: LLVM must not hoist it out of a loop."""
        name = "cb_signal_generation"
        counter = self.em.module.globals.get(name)
        if counter is None:
            counter = ir.GlobalVariable(self.em.module, I64, name)
        return self.em.builder.load_atomic(counter, "monotonic", 8)

    def poll_signals(self) -> None:
        """Deoptimise if a signal arrived since this call began: CPython then runs the
        program's handler (KeyboardInterrupt for Ctrl-C) as soon as it takes over,
        in this loop for a function that writes (it resumes here), at the start of
        the re-run for one that only reads."""
        assert self.signals_at_entry is not None
        moved = self.em.builder.icmp_unsigned("!=", self.signal_count(), self.signals_at_entry)
        self.em.deopt_if(moved, distinct="signal")

    def report_work(self, units: ir.Value) -> None:
        """Tell the runtime this call did `units` more iterations: past about a thousand
        it lets the GIL go, if the C entry that called this code allows it
        (csrc/entry.c: once; it takes it back when the call returns)."""
        self.em.builder.call(self.em.declare("cb_gil_work", ir.VoidType(), [I64]), [units])

    def count_down_gil(self) -> None:
        """At a polled loop header: `report_work` every `GIL_REPORT_PASSES` passes."""
        assert self.gil_budget is not None
        b = self.em.builder
        left = b.sub(b.load(self.gil_budget), self.em.i64(1))
        report, counted = self.em.block("gil.report"), self.em.block("gil.counted")
        b.cbranch(b.icmp_signed("==", left, self.em.i64(0)), report, counted).set_weights([1, 1 << 20])
        b.position_at_end(report)
        self.report_work(self.em.i64(GIL_REPORT_PASSES))
        b.branch(counted)
        b.position_at_end(counted)
        b.store(b.select(b.icmp_signed("==", left, self.em.i64(0)), self.em.i64(GIL_REPORT_PASSES), left), self.gil_budget)

    def plan_latches(self, order: list[BasicBlock]) -> None:
        """One latch block for each loop header that several back edges reach (an
        ``if`` in the loop body): its phis merge the loop-carried values, and the
        header has one back edge. Otherwise LLVM's loop canonicalisation may turn a
        value that only one path changes (``flips += 1`` under an ``if``) into a
        nested loop, re-entered through a copy of the first iteration every time
        that path runs."""
        self.latches: dict[BasicBlock, tuple[ir.Block, set[BasicBlock]]] = {}
        self.latch_phi_map: dict[ir.PhiInstr, list[ir.PhiInstr]] = {}
        if self.track:
            return  # (edges that release references go to the header itself)
        position = {b: k for k, b in enumerate(order)}
        preds = self.fn.predecessors()
        for header in order:
            if header in self.strips:
                continue
            back = {p for p in preds[header] if p in position and position[p] >= position[header]}
            if len(back) >= 2:
                self.latches[header] = (self.em.block(f"latch.{header.name}"), back)

    def latch_phis(self, phi: O.Phi, llphis: list[ir.PhiInstr], latch: ir.Block) -> list[ir.PhiInstr]:
        """The latch's phis standing for `phi`'s members (created on first use; each
        feeds the header's phi from the latch)."""
        found = self.latch_phi_map.get(llphis[0])
        if found is None:
            b = self.em.builder
            with b.goto_block(latch):
                if latch.is_terminated:
                    b.position_before(latch.terminator)  # type: ignore[arg-type]
                found = []
                for llphi in llphis:
                    new = b.phi(llphi.type)
                    found.append(new)
                    llphi.add_incoming(new, latch)
                if not latch.is_terminated:
                    b.branch(self.blocks[phi.block])  # type: ignore[index]
            self.latch_phi_map[llphis[0]] = found
        return found

    def raise_exit(self, block: BasicBlock, pred: BasicBlock | None) -> ir.Block:
        """Where a function that writes (or holds arrays) goes instead of a block that
        raises: resume at the block's start, with its phis and narrowings seen from
        `pred` (the block's own ops are not typed: see `infer`), and let the
        interpreter raise; or, for a function that only reads, release what it holds
        and re-run the call."""
        key = (block, pred)
        found = self.raise_exits.get(key)
        if found is not None:
            return found

        def seen(v: O.Value) -> O.Value:
            if isinstance(v, O.Phi) and v.block is block and pred is not None:
                return seen(v.value_for(pred))
            if isinstance(v, O.Narrow) and v.block is block:
                return seen(v.value)
            return v

        checkpoint = next((op for op in block.ops if isinstance(op, O.Checkpoint)), None)
        em = self.em
        saved = em.resume, em.line
        if checkpoint is not None:
            em.resume = ResumeState(self, checkpoint, [seen(v) for v in checkpoint.values])
        em.line = block.terminator.line or self.fn.firstlineno
        found = em.deopt_block()
        em.resume, em.line = saved
        self.raise_exits[key] = found
        return found


class ResumeState:
    """The state a deoptimisation after `checkpoint` hands to the interpreter: writes
    the checkpoint's `values` as resume words and reports its resume point (see
    `cuvil_bc/resume.py`). Numbered on first use (`FunctionLowering.resume_points`)."""

    def __init__(self, lowering: FunctionLowering, checkpoint: O.Checkpoint, values: list[O.Value]) -> None:
        self.lowering = lowering
        self.checkpoint = checkpoint
        self.values = values
        self.number: int | None = None

    def key(self) -> object:
        return (id(self.checkpoint), tuple(map(id, self.values)))

    def emit(self) -> set[O.Value]:
        """Store the state and report the point, at the builder's position; return the
        owned arrays whose references go with it."""
        from ..decode.resume import null_layout

        lw, em = self.lowering, self.lowering.em
        b = em.builder
        cp = self.checkpoint
        if cp.offset < 0 or lw.pyfunc is None or null_layout(lw.pyfunc.__code__, cp.offset, len(self.values) - len(cp.names)) is None:
            raise Unsupported("a guard at a point the interpreter cannot resume from", lw.fn.location(cp))
        slots: list[Slot] = []
        stores: list[tuple[ir.Value, Type, int]] = []
        handed: set[O.Value] = set()  # owned arrays whose reference the interpreter takes
        used = 0
        for v in self.values:
            t = value_type(v)
            if isinstance(v, O.Undef):
                slots.append(Slot("unbound"))
            elif isinstance(v, O.Const):
                slots.append(Slot("const", v.value))
            elif isinstance(v, O.Arg) and isinstance(t, ArrayType):
                slots.append(Slot("arg", v.index))
            elif t == BOTTOM:
                slots.append(Slot("const", None))  # never reached
            elif isinstance(t, ObjType):
                slots.append(Slot("const", t.obj))  # known at compile time (a.dtype)
            else:
                n = state_words(t)
                if n is None:
                    raise Unsupported(f"resuming the interpreter with a {t} live", lw.fn.location(cp))
                mine = ownership.holder(v)
                owns = mine is not None and mine in lw.held and mine not in handed
                if owns:
                    handed.add(mine)
                slots.append(Slot("words", t, used, owns))
                stores.append((lw.get(v)[0], t, used))
                used += n
        if used > RESUME_SLOTS:  # (csrc/runtime.c keeps that many words per thread)
            raise Unsupported("too many live values to resume the interpreter", lw.fn.location(cp))
        if self.number is None:
            self.number = new_number()
            lw.resume_points[self.number] = ResumeInfo(lw.pyfunc, cp.offset, cp.line or lw.fn.firstlineno, tuple(cp.names), tuple(slots))  # type: ignore[arg-type]
        words = b.call(em.declare("cb_deopt_slots", I64.as_pointer(), []), [])
        for val, t, index in stores:
            store_words(b, words, val, t, index)
        b.call(em.declare("cb_set_deopt_resume", ir.VoidType(), [I32, I32]), [ir.Constant(I32, self.number), ir.Constant(I32, used)])
        return handed



def lower_recursive(
    module: ir.Module, fn: Function, symbol: str, ret: Type, resolver: CalleeResolver, pyfunc: object = None,
    resume_points: dict[int, ResumeInfo] | None = None,
) -> None:
    """Lower a function that calls itself as two copies that call each other: LLVM
    inlines the private copy into the public one, so each native call does the work
    of two levels of the recursion (the depth count still goes up by one a level).
    The resume points of both go into `resume_points`."""
    twin = f"{symbol}.twin"
    FunctionLowering(module, fn, symbol, ret, resolver, self_calls=twin, pyfunc=pyfunc, resume_points=resume_points).run()
    FunctionLowering(module, fn, twin, ret, resolver, self_calls=symbol, pyfunc=pyfunc, resume_points=resume_points).run().linkage = "internal"


def _view_meminfo(b: ir.IRBuilder, meminfo: ir.Value) -> ir.Value:
    """A view shares its base's memory: the same meminfo, but marked as a view when the
    base is an argument."""
    argument = b.and_(b.icmp_signed("<", meminfo, ir.Constant(I64, 0)), b.icmp_signed(">", meminfo, ir.Constant(I64, -VIEW_OF_ARGUMENT)))
    return b.select(argument, b.sub(meminfo, ir.Constant(I64, VIEW_OF_ARGUMENT)), meminfo)


def _leaf_paths(t: ir.Type, prefix: tuple[int, ...] = ()) -> list[list[int]]:
    """The index paths of the scalar members of a (nested) literal struct."""
    if not isinstance(t, ir.LiteralStructType):
        return [list(prefix)]
    return [p for k, e in enumerate(t.elements) for p in _leaf_paths(e, prefix + (k,))]


def _leaf_type(t: ir.Type, path: list[int]) -> ir.Type:
    for k in path:
        t = t.elements[k]  # type: ignore[attr-defined]
    return t


def _narrow(result: object, vs: list[Typed], op: O.BinOp) -> Type:
    """The result type for one concrete case of a binop on split union operands, as
    typing gave it for that case (`int ** int` with an exponent that is not a
    constant is itself ``float | int``: int_pow decides by the exponent's sign)."""
    from ..typing.rules import binop_type

    if not isinstance(result, UnionType):
        return result  # type: ignore[return-value]
    rhs = op.rhs.value if isinstance(op.rhs, O.Const) else None
    return binop_type(op.op, vs[0][1], vs[1][1], rhs)


def _narrow_call(sig: Primitive, vs: list[Typed], result: Type) -> Type:
    """The result type for one concrete case of a call with split union arguments."""
    if not isinstance(result, UnionType):
        return result
    try:
        return call_result_type(sig, tuple(t for _, t in vs))
    except Unsupported:  # (a combination typing never produced)
        return result


def emit_entry(module: ir.Module, symbol: str, argtypes: tuple[Type, ...], ret: Type) -> str:
    """Add ``i32 @<symbol>.entry(i32 depth, <flat params>, i64* out, i64* parked)`` for
    cffi and return its name. `depth` is where the native call depth starts (see
    MAX_DEPTH). A call that fails leaves the address of its deopt record in
    ``*parked`` (cb_park_deopt, csrc/runtime.h): the caller's to free."""
    flat = [p for t in argtypes for p in llvm_param_types(t)]
    name = f"{symbol}.entry"
    fn = ir.Function(module, ir.FunctionType(I32, [I32] + flat + [I64.as_pointer(), I64.as_pointer()]), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    params = iter(fn.args[1:-2])
    out_words, parked = fn.args[-2:]

    args = [from_params(b, params, t, k) for k, t in enumerate(argtypes)]
    # (Not inlined: the function is the module's one body that other modules' code
    # calls, and two inlined copies of it, here and in the words entry, made LLVM's
    # optimisation and code generation up to half as long again; a direct call costs
    # a few ns against the boundary's ~100.)
    pair = call_compiled(b, declare_function(module, symbol, argtypes, ret), args + [fn.args[0]], inline=False)
    status = b.extract_value(pair, 0)
    with b.if_else(b.icmp_signed("==", status, ir.Constant(I32, 0))) as (ok, failed):
        with ok:
            store_words(b, out_words, b.extract_value(pair, 1), ret, 0)
        with failed:
            # The thread's deopt record goes to the caller at once, before the
            # interpreter runs anything that could overwrite it.
            park = declare(module, "cb_park_deopt", ir.FunctionType(I64.as_pointer(), []))
            b.store(b.ptrtoint(b.call(park, []), I64), parked)
    b.ret(status)
    return name


__all__ = ["FunctionLowering", "emit_entry", "const", "NONE", "RANGE_ITER"]


def words_entry_supported(argtypes: tuple[Type, ...], ret: Type) -> bool:
    """Signatures that the C entry (csrc/entry.c) calls: arguments and a result that
    it can unbox and box, each within its word limit."""
    flat = [c for t in argtypes for c in c_params(t)]
    return (
        all(model(t).unboxable(t) for t in argtypes)
        and model(ret).boxable(ret)
        and len(flat) <= ENTRY_WORDS
        and words(ret) <= ENTRY_WORDS
    )


#: The most words of arguments, and of result, that the C entry passes (CB_ENTRY_WORDS
#: in csrc/entry.c).
ENTRY_WORDS = 64


def emit_words_entry(module: ir.Module, symbol: str, argtypes: tuple[Type, ...], entry: str) -> str:
    """Add ``i32 @<symbol>.words(i64* calls, i64* in, i64* out, i32 depth, i64* parked)``,
    which the C entry calls: `entry` (the cffi entry point, `emit_entry`) with its
    flattened parameters read from `in`, at native call depth `depth` (see MAX_DEPTH:
    the C entry computes it from the thread's recursion budget for code that calls
    compiled functions, else 0). A call that completes adds one to `*calls`
    (atomically: callers do not hold the GIL). Returns the status: nonzero when the
    call must be finished by CPython, its deopt record's address then in `*parked`."""
    name = f"{symbol}.words"
    words_ptr = I64.as_pointer()
    fn = ir.Function(module, ir.FunctionType(I32, [words_ptr, words_ptr, words_ptr, I32, words_ptr]), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    calls, given, out, depth, parked = fn.args
    params = []
    for k, ty in enumerate(p for t in argtypes for p in llvm_param_types(t)):
        word = b.load(b.gep(given, [ir.Constant(I64, k)]))
        params.append(b.bitcast(word, F64) if ty == F64 else word)
    status = b.call(module.get_global(entry), [depth] + params + [out, parked])
    ok = b.icmp_signed("==", status, ir.Constant(I32, 0))
    b.atomic_rmw("add", calls, b.zext(ok, I64), "monotonic")
    b.ret(status)
    return name
