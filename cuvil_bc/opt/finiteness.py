"""Which float results native code tests for being finite, where, and how: the
finiteness plan of one typed function (`FloatTests`), which code generation follows.

NumPy warns when np.float64 arithmetic overflows or makes a NaN from numbers, and
CPython's `math` functions raise where their result is not finite from finite
arguments; native code must hand such calls back to CPython. A test per result
would cost a branch per op; the plan places fewer tests where they are certain to
see the same values.

In a function that writes, a failed test resumes the interpreter at the last resume
point, so an np.float64 result whose test is certain to come before the next resume
point needs none of its own (`FloatTests.arithmetic_test`).

In a function that only reads, a failed test re-runs the call:

NumPy warns when an np.float64 ``+ - *`` overflows or makes a NaN from numbers, and
every such warning comes with a non-finite result. In a function that only reads, the
warning is deferred (`Emitter.warn_if_not_finite`: a flag tested on return, which
re-runs the call in CPython), and an op need not test its own result where a later
test is certain to see it: an infinity or a NaN survives ``+ - *``. This module
decides, once per function, which op tests which values.

* A *carrier* may hold a non-finite value that nothing has tested yet: an np.float64
  or ``float | np.float64`` ``+ - *`` (a source), a `source` given by the caller (a deferred ``math.sqrt``,
  `FloatTests.carries_math_error`), a Python float ``+ - *`` with a carrier operand, or a
  carrying phi.
* A carrier op is *covered* when a test of it is certain to follow: an op of its own
  block that is not a carrier consumes it (a compare, a division, a call, the
  return...: that op tests it, `tests`), or a covered carrier of its block uses it,
  or its block jumps to a carrying phi that takes it.
* A *carrying* phi is a loop's accumulator (``s += a[i] * b[i]``): the value it gets
  on every back edge is derived from it by ``+ - *`` (once non-finite it stays so to
  the loop's end), the loop is left only from its header, and what the header exits
  to tests it (or jumps to an enclosing carrying phi that takes it).
* A carrier op that is not covered tests itself (`self_test`).

A phi that is not carrying carries nothing: each value it takes has been tested or is
covered. So ``last = a[i] * b[i]`` tests every product, where a test of ``last``
after the loop would miss an overflow in an earlier iteration, and a loop with a
``return`` or ``break`` in it tests its sum where the sum is made.
"""

from __future__ import annotations

from typing import Callable

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..ir.dominance import natural_loops
from ..records import record
from .regions import Region
from ..typing.infer import value_type
from ..typing.primitives import Primitive, lookup
from ..typing.types import FLOAT, NP_F64, NP_I64, NpScalar, Type, UnionType, options


def numpy_float(t: Type | None) -> bool:
    """An np.float64 or np.float32: its arithmetic warns where its result is an
    infinity or NaN made from numbers, and an infinity or NaN survives its ``+ - *``."""
    return isinstance(t, NpScalar) and t.base == FLOAT


def twin_float(t: Type | None) -> bool:
    """A ``float | np.float64``: a reader's ``+ - *`` on it computes NumPy's value and
    tests whichever the tag (lower/aggregates.twin_arithmetic), so it is a source of
    untested values like an np.float64 op."""
    return isinstance(t, UnionType) and set(t.options) == {FLOAT, NP_F64}


def _arith(v: O.Value) -> bool:
    return isinstance(v, O.BinOp) and v.op in ("+", "-", "*") and (v.type == FLOAT or numpy_float(v.type) or twin_float(v.type))


class UntestedFloats:
    #: `_tested_in` follows every path out of a block: a function of many branches
    #: could ask it exponentially often. Past this many questions per op the answer
    #: is "not tested", and the values left test themselves (correct, slower).
    BUDGET_PER_OP = 50

    def __init__(self, fn: Function, uses: dict[O.Value, list[O.Op]], source: Callable[[O.Op], bool]) -> None:
        self.uses = uses
        self.source = source
        self.loops = natural_loops(fn)
        self._carrying: dict[O.Phi, bool] = {}
        self._in_progress: set[O.Phi] = set()
        self._visiting: set[tuple[int, BasicBlock]] = set()  # (value, block) on the path asked about
        budget = self.BUDGET_PER_OP * sum(len(b.ops) for b in fn.blocks)
        self._budget = budget
        #: per consumer: the carriers it tests before it runs
        self.tests: dict[O.Op, list[O.Value]] = {}
        #: carrier ops that nothing covers: each tests its own result
        self.self_test: set[O.Op] = set()
        ops = [op for block in fn.blocks for op in block.ops]
        carrying = [op for op in ops if isinstance(op, O.Phi) and self.carrying(op)]
        # Second pass, noting who tests what. An op's answer here is final (False: it
        # tests itself); a carrying phi was decided in the first pass, and others
        # rely on it: if its test cannot be found again (the budget), nothing may.
        self._budget = budget
        found_all = all(self._exit_tested(phi, record=True) for phi in carrying)
        for op in ops:
            if not isinstance(op, O.Phi) and self.carrier(op) and not self._tested_in(op, op.block, record=True):  # type: ignore[arg-type]
                self.self_test.add(op)
        if not found_all:  # every carrier tests itself; no phi carries
            self._carrying = {op: False for op in ops if isinstance(op, O.Phi)}
            self.tests = {}
            self.self_test = {op for op in ops if not isinstance(op, O.Phi) and self.carrier(op)}

    # -- carriers -------------------------------------------------------------------

    def carrier(self, v: O.Value) -> bool:
        if isinstance(v, O.Phi):
            return self.carrying(v)
        if isinstance(v, O.Call):
            return self.source(v)
        if not _arith(v):
            return False
        return numpy_float(v.type) or twin_float(v.type) or self.carrier(v.lhs) or self.carrier(v.rhs)  # type: ignore[attr-defined]

    def carrying(self, phi: O.Phi) -> bool:
        found = self._carrying.get(phi)
        if found is not None:
            return found
        if phi in self._in_progress:
            return False  # (its own back edge: whether it carries comes from elsewhere)
        self._in_progress.add(phi)
        try:
            # (Whether a carrier reaches it does not matter: a phi that carries
            # nothing costs one test, where the loop exits.)
            found = phi.block in self.loops and self._sticky(phi) and self._exit_tested(phi)
        finally:
            self._in_progress.discard(phi)
        if not self._in_progress:  # (inside another phi's question it may rest on a cut)
            self._carrying[phi] = found
        return found

    def _sticky(self, phi: O.Phi) -> bool:
        """Every back edge brings a value derived from `phi` by ``+ - *``: non-finite
        whenever `phi` is."""
        body = self.loops[phi.block]  # type: ignore[index]
        return all(self._derived(v, phi, frozenset()) for b, v in phi.incoming if b in body)

    def _derived(self, v: O.Value, root: O.Phi, phis: frozenset[O.Phi]) -> bool:
        return derived(v, root, phis, self.source)

    def _exits(self, header: BasicBlock) -> list[BasicBlock] | None:
        """Where the loop of `header` exits to, or None when a block other than the
        header leaves it (a ``break`` or a ``return`` in the loop)."""
        body = self.loops[header]
        exits = []
        for block in body:
            for succ in block.successors():
                if succ not in body:
                    if block is not header:
                        return None
                    exits.append(succ)
        return exits

    def _exit_tested(self, phi: O.Phi, record: bool = False) -> bool:
        """Whether every exit of the loop tests `phi`, or a value of the header that
        is derived from it (a loop tested at its bottom leaves with ``s + a[i]``)."""
        header = phi.block
        exits = self._exits(header)  # type: ignore[arg-type]
        if exits is None:
            return False
        leaving = [phi] + [op for op in header.ops if op is not phi and self._derived(op, phi, frozenset())]  # type: ignore[union-attr]
        return all(any(self._tested_along(v, header, e, record) for v in leaving) for e in exits)  # type: ignore[arg-type]

    # -- who tests what ---------------------------------------------------------------

    def covered(self, op: O.Op) -> bool:
        """Whether a test of `op` is certain to follow (see the module docstring)."""
        return self._tested_in(op, op.block)  # type: ignore[arg-type]

    def _tested_in(self, v: O.Value, block: BasicBlock, record: bool = False) -> bool:
        """Whether `block`, whenever it runs, tests `v` or hands it on to a test:
        an op of the block tests it, or a covered carrier of the block uses it, or
        every edge out of the block hands it on (`_tested_along`). With `record`,
        the consumers that test it are noted in `tests`."""
        if (id(v), block) in self._visiting or self._budget <= 0:
            return False  # around a loop (no test on the way), or asked too often
        self._budget -= 1
        users = self.uses.get(v, [])
        for user in users:
            if user.block is block and not isinstance(user, O.Phi) and not self.carrier(user):
                if record and v not in self.tests.setdefault(user, []):
                    self.tests[user].append(v)
                return True
        for user in users:
            if user.block is block and not isinstance(user, O.Phi) and self.covered(user):
                return True
        succs = block.successors()
        self._visiting.add((id(v), block))
        try:
            return bool(succs) and all(self._tested_along(v, block, succ, record) for succ in succs)
        finally:
            self._visiting.discard((id(v), block))

    def _tested_along(self, v: O.Value, src: BasicBlock, dst: BasicBlock, record: bool) -> bool:
        """Whether the edge `src` -> `dst` hands `v` on to a test: a phi of `dst`
        takes it and carries it or is tested in `dst`, or `dst` tests `v` itself.
        Into a loop header only a carrying phi may take it: a test inside the loop
        would run on every iteration, where `v` (a rare branch's ``worst = peak - p``,
        a value from before the loop) runs once."""
        for phi in dst.phis():
            if phi.value_for(src) is v and self.carrying(phi):
                return True
        if dst in self.loops:
            return False
        for phi in dst.phis():
            if phi.value_for(src) is v and self._tested_in(phi, dst, record):
                return True
        return self._tested_in(v, dst, record)


def derived(v: O.Value, root: O.Phi, phis: frozenset[O.Phi], source: Callable[[O.Op], bool] = lambda op: False) -> bool:
    """Whether `v` is non-finite whenever `root` is: made from it by ``+ - *`` (or by
    a call `source` says carries it). `phis`: those on the path from the question to
    `v`, only (``g * g`` asks about the phi ``g`` twice, and a set shared between the
    two questions answered the second one "a cycle")."""
    if v is root:
        return True
    if _arith(v):
        return derived(v.lhs, root, phis, source) or derived(v.rhs, root, phis, source)  # type: ignore[attr-defined]
    if isinstance(v, O.Call) and source(v):
        return any(derived(a, root, phis, source) for a in v.args)
    if isinstance(v, O.Phi):
        if v in phis:
            return True  # a cycle of phis: derived if what enters it is
        return all(derived(x, root, phis | {v}, source) for x in v.operands())
    return False


def _chains(v: O.Value) -> bool:
    return isinstance(v, O.BinOp) and v.op in ("+", "-", "*") and numpy_float(v.type)


def _divides(v: O.Value) -> bool:
    return isinstance(v, O.BinOp) and v.op == "/" and numpy_float(v.type)


def _math_function(v: O.Value) -> Primitive | None:
    """The row (`typing/primitives.py`) of the `math` function `v` calls, or None."""
    sig = lookup(v.func.value) if isinstance(v, O.Call) and isinstance(v.func, O.Const) else None
    return sig if sig is not None and sig.name.startswith("math.") else None


def _calls_sqrt(v: O.Value) -> bool:
    sig = _math_function(v)
    return sig is not None and sig.name == "math.sqrt"


def _is_int_call(u: O.Value) -> bool:
    return isinstance(u, O.Call) and isinstance(u.func, O.Const) and u.func.value is int and len(u.args) == 1


def _passes_on(u: O.Op, v: O.Value) -> bool:
    """Whether a non-finite `v` makes `u` fail a test (``int(v)``) or gives it a
    non-finite result too (``v + x``, ``v / x``; not ``x / v``)."""
    if _chains(u) or (_divides(u) and u.lhs is v and u.rhs is not v):  # type: ignore[attr-defined]
        return True
    return _is_int_call(u) and list(u.args) == [v]  # type: ignore[attr-defined]


@record(frozen=True)
class OpTests:
    """What one op of a function that only reads does about finiteness: the carriers
    it tests before it runs (`tests`), how a `math` call tests its own result
    (`math_test`, numeric.deopt_on_float_error: "precise", "conservative",
    "carried" or "deferred"), and whether it tests its own result (`self_test`)."""

    tests: list[O.Value]
    math_test: str
    self_test: bool


class FloatTests:
    """The finiteness plan of one typed function (see the module's docstring)."""

    def __init__(
        self, fn: Function, uses: dict[O.Value, list[O.Op]], suspicion: bool = True, regions: dict[BasicBlock, Region] | None = None
    ) -> None:
        self.fn = fn
        self.uses = uses
        #: A writer's resume regions (opt/regions.py), where tests are deferred.
        self.regions = regions or {}
        #: The accumulators of the regions' loops (`_region_accumulators`), and the
        #: blocks their loops exit to, which test them once.
        self.accumulators: set[O.Phi] = set()
        self.exit_tests: dict[BasicBlock, list[O.Phi]] = {}
        if self.regions:
            self._region_accumulators()
        #: Whether a test may fail on any infinity or NaN, which NumPy would not warn
        #: about where an operand already was one: deferred and covered tests do.
        #: Without (an infinity among the arguments made most calls deopt: the
        #: dispatcher recompiles), every NumPy float op tests itself, precisely.
        self.suspicion = suspicion
        self.carried: dict[O.Op, bool] = {}  # see `carries_math_error`
        self._covered: dict[O.Op, bool] = {}  # see `covered`
        #: A function that only reads and has NumPy arithmetic or a deferrable `math`
        #: call: tests set a flag that is looked at once, on return (Emitter.warn_if).
        self.deferred = suspicion and not fn.writes and any(
            (isinstance(op, O.BinOp) and op.type is not None and any(t == NP_I64 or numpy_float(t) for t in options(op.type)))
            or self.defers_math_error(op)
            for op in fn.ops()
        )
        self.untested = UntestedFloats(fn, uses, self.carries_math_error) if self.deferred else None

    def op_tests(self, op: O.Op) -> OpTests | None:
        """What `op` tests, in a function whose tests are deferred (else None)."""
        if self.untested is None or isinstance(op, O.Phi):
            return None
        tested = self.untested.tests.get(op, [])
        check = "precise"
        if self.absorbs_check(op, tested):
            check, tested = "conservative", []  # its own test covers its operand
        if self.carries_math_error(op):
            check = "carried"  # tested as a carrier
        elif self.defers_math_error(op):
            check = "deferred"
        return OpTests(tested, check, op in self.untested.self_test)

    def arithmetic_test(self, op: O.BinOp, absorbed: bool = False) -> str:
        """How an np.float64 ``+ - * /`` tests for what NumPy warns about (see
        `numeric.numpy_binop`). Every warning comes with a non-finite result, and an
        infinity or NaN carries on through ``+ - *`` and the dividend of ``/``. So in a
        function that writes, an op whose result is sure to meet a test before the next
        resume point (`covered`) needs no test of its own: "none". An op with such an
        operand tests its result for being finite at all: "conservative" (a deopt where
        NumPy might not warn costs only a resume). Every other op: "precise". In a
        function that only reads, + - * are not tested here: `UntestedFloats` decides
        which later op tests them, or whether they test themselves. An op that a strip
        tests at its end (`absorbed`, strips.absorbed_ops) needs no test either."""
        if not self.suspicion:
            return "precise"
        if not self.fn.writes:
            return "none" if _chains(op) or (_arith(op) and twin_float(op.type)) else "precise"
        if absorbed:
            return "none"
        if not (_chains(op) or _divides(op)):
            return "precise"
        if self.covered(op) or self._accumulated(op):
            return "none"
        operands = [op.lhs] if _divides(op) else [op.lhs, op.rhs]
        if any((_chains(v) or _divides(v)) and self.covered(v) for v in operands):  # type: ignore[arg-type]
            return "conservative"
        return "precise"

    def covered(self, op: O.Op) -> bool:
        """Whether, in a function that writes, a non-finite result of the np.float64 op
        `op` is certain to fail a test before anything sees it: every use other than a
        resume point or a phi (a local's value, which they only record) passes it on
        (`_passes_on`) in the same block with no resume point between. By induction
        each such use is tested, or covered in turn, before the next resume point, so
        a failed test resumes at the one before `op`, and the interpreter redoes `op`
        and warns itself."""
        found = self._covered.get(op)
        if found is None:
            passing = [u for u in self.uses.get(op, []) if not isinstance(u, (O.Checkpoint, O.Phi))]
            found = bool(passing) and all(
                _passes_on(u, op) and u.block is op.block and not self.checkpoint_between(op, u) for u in passing
            )
            self._covered[op] = found
        return found

    def _region_accumulators(self) -> None:
        """In a resume region, a loop's accumulator (``s += a[i] * b[i]``: an np.float64
        or ``float | np.float64`` phi of a loop header whose every back edge brings a
        value derived from it by ``+ - *``) is non-finite at the loop's end whenever a
        sum on the way was, so the blocks the loop exits to test it once
        (`exit_tests`), instead of each sum testing itself (`_accumulated`). Only for
        a loop left from its header alone, to blocks it alone reaches."""
        preds = self.fn.predecessors()
        for header, body in natural_loops(self.fn).items():
            region = self.regions.get(header)
            if region is None or not body <= region.blocks:
                continue
            exits = [(b, s) for b in body for s in b.successors() if s not in body and not isinstance(s.terminator, O.Raise)]
            if any(b is not header or preds[s] != [header] for b, s in exits):
                continue
            for phi in header.phis():
                if not (phi.type == NP_F64 or twin_float(phi.type)):
                    continue
                if all(derived(v, phi, frozenset()) for b, v in phi.incoming if b in body):
                    self.accumulators.add(phi)
                    for _, s in exits:
                        self.exit_tests.setdefault(s, []).append(phi)

    def _accumulated(self, op: O.Op) -> bool:
        """Whether `op`, in a resume region, is a sum an accumulator takes on its back
        edge (`_region_accumulators`): nothing but phis use it, each in the block its
        own block jumps to (so the phi takes it whenever it is computed), and each phi
        is an accumulator or, in turn, such a value (``if c: s += x`` merges the sum
        with the old one before the back edge)."""
        return op.block in self.regions and self._taken_on(op, op.block, 4)  # type: ignore[arg-type]

    def _taken_on(self, v: O.Value, block: BasicBlock, depth: int) -> bool:
        term = block.terminator
        if depth == 0 or not isinstance(term, O.Jump):
            return False
        users = [u for u in self.uses.get(v, []) if not isinstance(u, O.Checkpoint)]
        return bool(users) and all(
            isinstance(u, O.Phi) and u.block is term.target and u.value_for(block) is v
            and (u in self.accumulators or self._taken_on(u, u.block, depth - 1))  # type: ignore[arg-type]
            for u in users
        )

    def defers_in_region(self, op: O.Op) -> bool:
        """Whether the test of `op`'s value, in a resume region, may wait for the
        region's exit: the value reaches only arithmetic, phis and stores (after the
        exit), never a comparison, a call or an index, so a warning's infinity or NaN
        cannot pick a branch or a loop's length meanwhile (found by a helper: with
        ``n = N if t > 1e308 else 3`` a deferred overflow ran ``range(N)`` first,
        where CPython with warnings as errors stops at the product)."""
        def floats(user: O.Op) -> bool:
            return isinstance(user, O.Phi) or (
                isinstance(user, (O.BinOp, O.UnaryOp, O.Select)) and (user.type in (FLOAT, NP_F64) or twin_float(user.type))
            )

        return self._reaches_only(op, floats, lambda user: isinstance(user, (O.Checkpoint, O.StoreItem)))

    def absorbs_check(self, op: O.Op, tested: list[O.Value]) -> bool:
        """Whether `op` is ``math.sqrt(v)`` of an untested np.float64 `v` it must test
        (`UntestedFloats.tests`): a non-finite `v` gives a non-finite root, so one test
        of the root that deopts on any non-finite value (re-running the call, which
        warns or raises as CPython does) replaces both the test of `v` and sqrt's own
        domain test."""
        return (
            _calls_sqrt(op) and len(op.args) == 1 and not op.kwnames  # type: ignore[attr-defined]
            and tested == [op.args[0]] and value_type(op.args[0]) == NP_F64  # type: ignore[attr-defined]
        )

    def carries_math_error(self, op: O.Op) -> bool:
        """Whether ``math.sqrt(x)``, in a function that only reads, is tested like an
        np.float64 sum (a carrier, `UntestedFloats`) instead of testing its own result:
        ``s += math.sqrt(...)`` then pays one test, after the loop, not one per root.
        The root is non-finite wherever CPython would raise (a negative x gives NaN)
        and wherever x is, and its value only reaches arithmetic and the return
        (`defers_math_error`), so a failed test re-runs the call, which raises where
        CPython does. Not other math functions: ``exp(-inf)`` is 0.0, a finite value
        that would hide a non-finite x from later tests."""
        found = self.carried.get(op)
        if found is None:
            found = _calls_sqrt(op) and len(op.args) == 1 and self.defers_math_error(op)  # type: ignore[attr-defined]
            self.carried[op] = found
        return found

    def defers_math_error(self, op: O.Op) -> bool:
        """Whether, in a function that only reads, the domain and range test of the
        `math` call `op` can join the deferred flag (`Emitter.warn_if`) instead of
        leaving the loop: its value reaches nothing but arithmetic, other math calls,
        tuples and the return (`_only_data`). A failed test then re-runs the call in
        CPython, which raises; what native code computes meanwhile from the NaN or
        infinity cannot steer a branch or a loop, so the call still ends (and, with no
        exit in it, a loop like ``s += math.sqrt(dx * dx + dy * dy)`` vectorizes)."""
        if isinstance(op, O.BinOp) and op.op == "**" and op.type == FLOAT:
            # (a float power's OverflowError: numeric.float_pow; not its other errors)
            return not self.fn.writes and self._only_data(op)
        sig = _math_function(op)
        return (
            not self.fn.writes and isinstance(op, O.Call) and not op.kwnames
            and sig is not None and sig.defers_errors and self._only_data(op)
        )

    def _only_data(self, v: O.Value) -> bool:
        def data(user: O.Op) -> bool:
            return isinstance(user, (O.BinOp, O.UnaryOp, O.Phi, O.BuildTuple)) or (
                isinstance(user, O.Call) and _math_function(user) is not None
            )

        return self._reaches_only(v, data, lambda user: isinstance(user, O.Return))

    def _reaches_only(self, v: O.Value, onward: Callable[[O.Op], bool], end: Callable[[O.Op], bool]) -> bool:
        """Whether every use of `v`, and of each `onward` use in turn, is `onward` (its
        value followed further) or an `end` (not followed)."""
        seen: set[int] = set()
        stack = [v]
        while stack:
            x = stack.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            for user in self.uses.get(x, []):
                if end(user):
                    continue
                if not onward(user):
                    return False
                stack.append(user)
        return True

    def checkpoint_between(self, first: O.Op, later: O.Op) -> bool:
        """Whether a resume point lies between two ops of one block: a deopt at `later`
        would then resume after `first`, which the interpreter does not redo."""
        ops = first.block.ops  # type: ignore[union-attr]
        return any(isinstance(op, O.Checkpoint) for op in ops[ops.index(first) + 1 : ops.index(later)])
