"""Where a function that only reads tests its float values for being finite.

NumPy warns when an np.float64 ``+ - *`` overflows or makes a NaN from numbers, and
every such warning comes with a non-finite result. In a function that only reads, the
warning is deferred (`Emitter.warn_if_not_finite`: a flag tested on return, which
re-runs the call in CPython), and an op need not test its own result where a later
test is certain to see it: an infinity or a NaN survives ``+ - *``. This module
decides, once per function, which op tests which values.

* A *carrier* may hold a non-finite value that nothing has tested yet: an np.float64
  ``+ - *`` (a source), a `source` given by the caller (a deferred ``math.sqrt``,
  `codegen.carries_math_error`), a Python float ``+ - *`` with a carrier operand, or a
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
from ..typing.types import FLOAT, NP_F64


def _arith(v: O.Value) -> bool:
    return isinstance(v, O.BinOp) and v.op in ("+", "-", "*") and v.type in (FLOAT, NP_F64)


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
        return v.type == NP_F64 or self.carrier(v.lhs) or self.carrier(v.rhs)  # type: ignore[attr-defined]

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
        return all(self._derived(v, phi, set()) for b, v in phi.incoming if b in body)

    def _derived(self, v: O.Value, root: O.Phi, phis: set[O.Phi]) -> bool:
        if v is root:
            return True
        if _arith(v):
            return self._derived(v.lhs, root, phis) or self._derived(v.rhs, root, phis)  # type: ignore[attr-defined]
        if isinstance(v, O.Call) and self.source(v):
            return any(self._derived(a, root, phis) for a in v.args)
        if isinstance(v, O.Phi):
            if v in phis:
                return True  # a cycle of phis: derived if what enters it is
            phis.add(v)
            return all(self._derived(x, root, phis) for x in v.operands())
        return False

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
        leaving = [phi] + [op for op in header.ops if op is not phi and self._derived(op, phi, set())]  # type: ignore[union-attr]
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
