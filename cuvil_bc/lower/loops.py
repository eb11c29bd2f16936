"""The shape that lowering gives a function's loops: latches, chunked range loops and
signal polls, and the state of a ``range`` iterator.

`LoopControl` decides, once per function, which loop headers get a latch block (an
``if`` in the body), which innermost ``for ... in range(...)`` loops run in chunks
(`Chunked`) and which headers poll for signals on every pass. Code generation asks
it where an edge into a header goes (`target`), which LLVM phis an incoming value
feeds (`phis_for_edge`), and lets it finish the blocks it added (`finish`).
"""

from __future__ import annotations

from typing import Callable, Container

from llvmlite import ir

from ..ir import ops as O
from ..ir.dominance import natural_loops
from ..ir.function import BasicBlock, Function
from ..opt.regions import range_loop
from ..records import field, record
from .emitter import Emitter, Typed
from .ltypes import I32, I64, ITER, inaccessible_only

#: Iterations of an innermost range loop between two tests for signals: long enough
#: that the test and the restart of the vectorized loop cost nothing measurable, short
#: enough that Ctrl-C stops even a loop of 5 µs iterations within 100 ms.
CHUNK = 16384

#: Passes of a polled loop header (see `LoopControl`) that native code reports to the
#: runtime at a time (`cb_gil_work`, csrc/entry.c, which lets the GIL go once a call
#: has done about a thousand iterations in all); a chunked range loop reports its trip
#: count as it starts. Releasing and taking back the GIL costs ~40 ns: a short call
#: keeps it.
GIL_REPORT_PASSES = 256


@record
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


class LoopControl:
    """The latches, chunks and signal polls of one function's loops.

    `blocks` are the LLVM blocks of the function's blocks; `strips` the headers of the
    loops that run in strips (strips.py), which poll at their header and get no latch.
    In a function that holds array references (`track`), an edge that releases some
    goes through a block of its own (refcount.Holdings.edge) and on to the latch.
    (Without latches there, LLVM made nested loops of nanstd_2d's and jacobi_solve's
    ``if`` bodies: 3.7x and 2.7x Numba's time, 2.9x and 2.0x with them.)"""

    def __init__(
        self, em: Emitter, fn: Function, order: list[BasicBlock], blocks: dict[BasicBlock, ir.Block], strips: Container[BasicBlock],
        called_natively: bool = True,
    ) -> None:
        self.em = em
        self.blocks = blocks
        self.latches = self._plan_latches(fn, order, strips)
        self.latch_phi_map: dict[ir.PhiInstr, list[ir.PhiInstr]] = {}
        self.polled, self.every_pass, self.chunks = self._plan_polls(fn, strips, called_natively)
        self.signals_at_entry: ir.Value | None = None
        self.gil_budget: ir.Value | None = None
        if self.polled or self.chunks:
            with em.builder.goto_block(em.alloca_block):
                self.signals_at_entry = self.signal_count()
        if self.polled or self.chunks:
            self.gil_budget = em.alloca(I64)
            with em.builder.goto_block(em.alloca_block):
                em.builder.store(em.i64(GIL_REPORT_PASSES), self.gil_budget)

    # -- plans ----------------------------------------------------------------------

    def _plan_latches(self, fn: Function, order: list[BasicBlock], strips: Container[BasicBlock]) -> dict[BasicBlock, tuple[ir.Block, set[BasicBlock]]]:
        """One latch block for each loop header that several back edges reach (an
        ``if`` in the loop body): its phis merge the loop-carried values, and the
        header has one back edge. Otherwise LLVM's loop canonicalisation may turn a
        value that only one path changes (``flips += 1`` under an ``if``) into a
        nested loop, re-entered through a copy of the first iteration every time
        that path runs."""
        latches: dict[BasicBlock, tuple[ir.Block, set[BasicBlock]]] = {}
        position = {b: k for k, b in enumerate(order)}
        preds = fn.predecessors()
        for header in order:
            if header in strips:
                continue
            back = {p for p in preds[header] if p in position and position[p] >= position[header]}
            if len(back) >= 2:
                latches[header] = (self.em.block(f"latch.{header.name}"), back)
        return latches

    def _plan_polls(self, fn: Function, strips: Container[BasicBlock], called_natively: bool) -> tuple[set[BasicBlock], set[BasicBlock], dict[BasicBlock, Chunked]]:
        """The loop headers that test for signals (Ctrl-C), those of them that test on
        every pass, and the innermost ``for ... in range(...)`` loops that test once
        per `CHUNK` iterations instead: a test on every iteration would keep LLVM from
        vectorizing them (see `Chunked`). A loop that runs in strips (strips.py) tests
        at its header, which it reaches once per strip.

        In a function that only the interpreter calls (`called_natively` false: the
        module's entry, which no callee calls back), the other headers test on the
        cold path of their pass count (`_spend_gil_budget`), once every
        `GIL_REPORT_PASSES` passes of the call's headers: the hot path is a decrement
        and a branch. (A test on every pass, an atomic load, a compare and a branch,
        made collatz and gcd_sum ~5% slower, and cost up to ~5% of a compile.) A call
        that makes fewer passes returns to the interpreter, which tests for signals
        itself.
        A function that native code calls (a callee, a recursive function) tests on
        every pass: its count starts afresh at each call, and a recursion of short
        calls, or a chunked loop that calls it, might never see it run out. In the
        entry too, these headers test on every pass:
        * a loop that holds a chunked loop: the chunk's start reports its trip count
          and fills the count again, which might then never run out at the header;
        * a loop that calls anything: a call may take milliseconds (a compiled
          recursive function, which does not poll; ``np.zeros(10**7)``), and Ctrl-C
          would wait for 256 of them;
        * a strip's header, reached once per strip (with a count there,
          matmul_ikj_f32's strips ran ~20% slower)."""
        loops = natural_loops(fn)
        polled: set[BasicBlock] = set()
        every_pass: set[BasicBlock] = set()
        chunks: dict[BasicBlock, Chunked] = {}
        for h, body in loops.items():
            term = h.terminator
            innermost = not (body & loops.keys() - {h})
            if (
                innermost
                and h not in strips
                and range_loop(h, body)
                and all(isinstance(op, (O.Phi, O.Checkpoint, O.ForIter)) for op in h.ops)
            ):
                chunks[h] = Chunked(self.em.block(f"chunk.{h.name}"), body, self.em.alloca(I64))
            else:
                polled.add(h)
        for h in polled:
            body = loops[h]
            if called_natively or h in strips or body & chunks.keys() or any(isinstance(op, O.Call) for block in body for op in block.ops):
                every_pass.add(h)
        return polled, every_pass, chunks

    # -- edges ----------------------------------------------------------------------

    def target(self, succ: BasicBlock, pred: BasicBlock) -> ir.Block | None:
        """Where the edge pred -> succ enters a loop header instead of its block: its
        latch, or its chunk's start; None for the block itself."""
        latch = self.latches.get(succ)
        if latch is not None and pred in latch[1]:
            return latch[0]
        chunked = self.chunks.get(succ)
        if chunked is not None and pred not in chunked.body:
            return chunked.block
        return None

    def phis_for_edge(self, header: BasicBlock, pred: BasicBlock, llphis: list[ir.PhiInstr]) -> list[ir.PhiInstr]:
        """The LLVM phis that the values of the edge pred -> header go to: those of a
        latch or a chunk's start when the edge goes there, else `llphis` themselves."""
        latch = self.latches.get(header)
        if latch is not None and pred in latch[1]:
            return self._latch_phis(header, llphis, latch[0])
        chunked = self.chunks.get(header)
        if chunked is not None and pred not in chunked.body:
            return [self._chunk_phi(llphi, chunked) for llphi in llphis]
        return llphis

    def _latch_phis(self, header: BasicBlock, llphis: list[ir.PhiInstr], latch: ir.Block) -> list[ir.PhiInstr]:
        """The latch's phis standing for one IR phi's members (created on first use;
        each feeds the header's phi from the latch)."""
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
                    b.branch(self.blocks[header])
            self.latch_phi_map[llphis[0]] = found
        return found

    def _chunk_phi(self, llphi: ir.PhiInstr, chunked: Chunked) -> ir.PhiInstr:
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

    def finish(self, get: Callable[[O.Value], Typed]) -> None:
        """Once every block is lowered: branch the latches without phis to their
        headers, and emit the start of each chunk."""
        for header, (latch, _) in self.latches.items():
            if not latch.is_terminated:  # a header without phis
                with self.em.builder.goto_block(latch):
                    self.em.builder.branch(self.blocks[header])
        for header, chunked in self.chunks.items():
            self._start_chunk(header, chunked, get)

    def _start_chunk(self, header: BasicBlock, chunked: Chunked, get: Callable[[O.Value], Typed]) -> None:
        """The chunk block's code after its phis: the next chunk ends `CHUNK`
        iterations on, or where the iterator does."""
        b = self.em.builder
        term = header.terminator
        assert isinstance(term, O.ForIter)
        with b.goto_block(chunked.block):
            remaining = b.load(iter_field(b, get(term.iterator)[0], 2))
            self._spend_gil_budget(remaining)  # (again at each chunk: only a long loop gets there)
            long = b.icmp_unsigned(">", remaining, self.em.i64(CHUNK))
            b.store(b.select(long, b.sub(remaining, self.em.i64(CHUNK)), self.em.i64(0)), chunked.limit)
            b.branch(self.blocks[header])
            if b.block is not chunked.block:  # the header is entered from the budget's join
                for llphi in chunked.phi_map:
                    llphi.incomings = [(v, b.block if pred is chunked.block else pred) for v, pred in llphi.incomings]

    # -- iteration ------------------------------------------------------------------

    def for_iter(self, header: BasicBlock, state: ir.Value, body: Callable[[], ir.Block], exit: Callable[[], ir.Block], at_chunk_end: Callable[[ir.Block], None]) -> None:
        """The ForIter that ends `header`, on a range iterator's `state`: the next item
        and on to `body()`, or on to `exit()` once none remains. A chunked loop leaves
        the header at each chunk's end, in a block that `at_chunk_end` learns (the exit's
        phis take their values from there)."""
        em, b = self.em, self.em.builder
        remaining = b.load(iter_field(b, state, 2))
        step_block = em.block("foriter.next")
        chunked = self.chunks.get(header)
        if chunked is None:
            b.cbranch(b.icmp_unsigned("!=", remaining, em.i64(0)), step_block, exit())
        else:
            end = em.block(f"chunk.end.{header.name}")
            b.cbranch(b.icmp_unsigned("!=", remaining, b.load(chunked.limit)), step_block, end)
            b.position_at_end(end)
            at_chunk_end(end)
            more = em.block(f"chunk.next.{header.name}")
            b.cbranch(b.icmp_unsigned("==", remaining, em.i64(0)), exit(), more)
            b.position_at_end(more)
            self.poll_signals()
            b.branch(chunked.block)
            chunked.end = b.block
        b.position_at_end(step_block)
        cur = b.load(iter_field(b, state, 0))
        b.store(cur, iter_field(b, state, 3))
        b.store(b.add(cur, b.load(iter_field(b, state, 1))), iter_field(b, state, 0))  # wraps only after the last item
        b.store(b.sub(remaining, em.i64(1)), iter_field(b, state, 2))
        b.branch(body())

    # -- signals and the GIL --------------------------------------------------------

    def before_terminator(self, block: BasicBlock) -> None:
        """At a polled loop header, before its terminator: count a pass, and poll for
        signals, on every pass or on the count's cold path (see `_plan_polls`)."""
        if block in self.every_pass:
            self.poll_signals()
            self._spend_gil_budget(self.em.i64(1))
        elif block in self.polled:
            self._spend_gil_budget(self.em.i64(1), poll=True)

    def signal_count(self) -> ir.Value:
        """The runtime's count of signals so far (`cb_signal_generation`, which its
        handler bumps). An atomic load: LLVM must not hoist it out of a loop."""
        name = "cb_signal_generation"
        counter = self.em.module.globals.get(name)
        if counter is None:
            counter = ir.GlobalVariable(self.em.module, I64, name)
        return self.em.builder.load_atomic(counter, "monotonic", 8)

    def no_new_signals(self) -> ir.Value:
        """An i1: no signal has arrived since the function was entered."""
        return self.em.builder.icmp_unsigned("==", self.signal_count(), self.signals_at_entry)

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
        (csrc/entry.c: once; it takes it back when the call returns). The runtime only
        counts and may release the GIL: it touches no memory that native code sees."""
        fn = self.em.declare("cb_gil_work", ir.VoidType(), [I64])
        inaccessible_only(fn)
        self.em.builder.call(fn, [units])

    def _spend_gil_budget(self, units: ir.Value, poll: bool = False) -> None:
        """Count `units` iterations against the function's budget, and `report_work`
        them when it runs out (every `GIL_REPORT_PASSES`): a call of the runtime per
        pass of a header, or per entry of a short inner loop (a 3x3 stencil's), would
        cost more than the iteration. With `poll` (a header not in `every_pass`), test
        for signals there too: see `_plan_polls`."""
        assert self.gil_budget is not None
        em, b = self.em, self.em.builder
        left = b.sub(b.load(self.gil_budget), units)
        b.store(left, self.gil_budget)
        out = b.icmp_signed("<=", left, em.i64(0))
        report, counted = em.block("gil.report"), em.block("gil.counted")
        b.cbranch(out, report, counted).set_weights([1, 1 << 20])
        b.position_at_end(report)
        self.report_work(b.sub(em.i64(GIL_REPORT_PASSES), left))
        b.store(em.i64(GIL_REPORT_PASSES), self.gil_budget)
        if poll:
            self.poll_signals()
        b.branch(counted)
        b.position_at_end(counted)


def iter_field(b: ir.IRBuilder, state: ir.Value, k: int) -> ir.Value:
    """The address of field `k` of a range iterator's state {cur, step, remaining, item}."""
    return b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, k)])


def range_iter(em: Emitter, rng: ir.Value) -> ir.Value:
    """A range's iterator state {cur, step, remaining, item}; the length is computed
    once, in unsigned arithmetic, as CPython's range does, so no step can overflow."""
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
        b.store(v, iter_field(b, state, i))
    return state
