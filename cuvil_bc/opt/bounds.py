"""Which array indices are provably in bounds, so that indexing needs no check.

The proof covers the common loop shape

    for i in range(a.shape[0]):        # or range(len(a)), range(1, n - 1) after n = a.shape[0]
        ... a[i], a[i - 1], m[i, j] ...

An int value gets a lower bound (a constant) and an exclusive upper bound of the form
"extent k of array A, plus a constant" (or a constant), computed from:

* the item of ``range(stop)`` / ``range(start, stop)`` (no step): ``[start, stop)``,
  where a `start` that is not a constant contributes its own lower bound, and a
  `stop` that is another loop's item plus c its own upper bound (``for j in
  range(i + 1)`` inside ``for i in range(n)``: j < n);
* ``x + c`` and ``x - c`` for a constant ``c``;
* ``a.shape[k]``, an item of ``a.shape`` unpacked, and ``len(a)``: extent k of ``a``;
* ``x % n`` for such an extent ``n``: ``[0, n)`` (``n == 0`` raises first);
* a constant ``c``: ``[c, c + 1)`` (``pts[j, 1]``: one test of ``2 <= extent`` before
  a loop covers it, `access.ArrayAccess.early_bounds_guards`).

``i - 1`` for such a loop item ``i`` is ``[-1, extent)``: NumPy's wrap of -1 brings it
in bounds (`in_bounds_after_wrap`).

An upper bound may also be "an int value V, plus a constant" (`VALUE`): ``range(width)``
for an argument ``width``. It proves an index into an array that the function created
with V as that extent (``np.zeros((steps + 1, width))``, or ``np.zeros_like(a)``
for a's extents: `creation_extent`), whose creation raised unless V was the extent.

An index of dimension k of A is in bounds when its lower bound is at least 0 and its
upper bound is at most extent k of A.

An index that none of this proves may still be tested once per loop instead of once
per access (`Span`): when it is computed by ``+ - *`` (by a constant) and ``min``/
``max`` from ints set before the innermost loop around it and from range items, the
interval of its values is computed on entry to its block, where LLVM hoists it. Extents cannot change during a call: compiled code
only reads arrays, and NumPy refuses to resize an array that the call's arguments hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import ops as O
from ..records import field, record

if TYPE_CHECKING:
    from ..ir.function import Function

#: (array value or None for a constant, dimension, offset): extent k of the array + offset;
#: with the dimension `VALUE`, the first item is an int value: that value + offset.
Upper = tuple[object, int, int]
VALUE = -1


def _const_int(v: O.Value) -> int | None:
    if isinstance(v, O.Const) and type(v.value) is int:
        return v.value
    return None


def _extent(v: O.Value) -> Upper | None:
    """`v` as "extent k of an array + c", or a constant."""
    c = _const_int(v)
    if c is not None:
        return (None, 0, c)
    if isinstance(v, O.TupleGet) and isinstance(v.tup, O.Unpack):
        shape = v.tup.seq
        if isinstance(shape, O.LoadAttr) and shape.name == "shape":
            return (shape.obj, v.index, 0)
    if isinstance(v, O.Subscript) and isinstance(v.obj, O.LoadAttr) and v.obj.name == "shape":
        k = _const_int(v.index)
        if k is not None and k >= 0:
            return (v.obj.obj, k, 0)
    if isinstance(v, O.Call) and isinstance(v.func, O.Const) and v.func.value is len and len(v.args) == 1:
        return (v.args[0], 0, 0)
    if isinstance(v, O.BinOp) and v.op in ("+", "-"):
        c = _const_int(v.rhs)
        inner = _extent(v.lhs)
        if c is not None and inner is not None:
            return (inner[0], inner[1], inner[2] + (c if v.op == "+" else -c))
    return (v, VALUE, 0) if _is_int(v) else None


def _is_int(v: O.Value) -> bool:
    from ..typing.infer import value_type
    from ..typing.types import INT

    return not isinstance(v, O.Const) and value_type(v) == INT


def _exact_int(v: O.Value) -> bool:
    """An int or np.int64 value (not a constant): computed natively, either exactly or
    not at all (an np.int64 overflow deoptimises, and NumPy warns in the interpreter)."""
    from ..typing.infer import value_type
    from ..typing.types import INT, NP_I64

    return not isinstance(v, O.Const) and value_type(v) in (INT, NP_I64)


def creation_extent(array: object, dim: int) -> Upper | None:
    """Extent `dim` of `array` when the function created it with a shape it can name:
    ``np.zeros((n, m))``, ``np.empty(n)``, ``np.full(shape, v)``, ``np.ones_like(a)``
    (NumPy raises for a negative extent, so the created array's is exactly that)."""
    from ..typing.primitives import creator_name

    if not (isinstance(array, O.Call) and isinstance(array.func, O.Const)):
        return None
    name = creator_name(array.func.value)
    positional = array.args[: len(array.args) - len(array.kwnames)]
    if name is None or not positional or "shape" in array.kwnames:
        return None
    first = positional[0]
    if name.endswith("_like"):
        return (first, dim, 0)
    if name not in ("zeros", "empty", "ones", "full"):
        return None
    if isinstance(first, O.BuildTuple):
        return _extent(first.items[dim]) if dim < len(first.items) else None
    return _extent(first) if dim == 0 and _is_int(first) else None


def _within(upper: Upper, array: object, dim: int) -> bool:
    """Whether the bound `upper` is at most extent `dim` of `array`."""
    arr, k, off = upper
    if arr is array and k == dim:
        return off <= 0
    made = creation_extent(array, dim)
    if made is None or arr is None or made[0] is None:
        return False
    return made[1] == k and off <= made[2] and (made[0] is arr or (k == VALUE and same_value(made[0], arr)))  # type: ignore[arg-type]


def _range_item(v: O.Value) -> tuple[int, Upper] | None:
    """(lower bound, exclusive upper bound) of a `for` loop's item over a step-1 range."""
    if not (isinstance(v, O.IterValue) and isinstance(v.iterator, O.GetIter)):
        return None
    rng = v.iterator.iterable
    if not (isinstance(rng, O.Call) and isinstance(rng.func, O.Const) and rng.func.value is range):
        return None
    if len(rng.args) == 1:
        start, stop = 0, rng.args[0]
    elif len(rng.args) == 2:
        start, stop = _const_int(rng.args[0]), rng.args[1]  # type: ignore[assignment]
        if start is None:  # range(i + 1, n): items are at least i + 1's lower bound
            found = index_bounds(rng.args[0])
            if found is None:
                return None
            start = found[0]
    else:
        return None  # a step: not worth the cases
    upper = _extent(stop)
    if upper is not None and upper[1] == VALUE:
        # range(i + 1) for a loop item i < extent + off: items below extent + off.
        outer = index_bounds(upper[0])  # type: ignore[arg-type]
        if outer is not None and outer[1][1] != VALUE:
            arr, k, off = outer[1]
            upper = (arr, k, off - 1 + upper[2])
    return (start, upper) if upper is not None else None


def index_bounds(v: O.Value) -> tuple[int, Upper] | None:
    """(lower bound, exclusive upper bound) of an int value, when known."""
    found = _range_item(v)
    if found is not None:
        return found
    c = _const_int(v)
    if c is not None:
        return c, (None, 0, c + 1)
    from ..typing.types import INT  # (np.int64 % 0 gives 0 with a warning: only ints)

    if isinstance(v, O.BinOp) and v.op == "%" and v.type == INT:
        # Python's x % n lies in [0, n) for n > 0, and n == 0 raises before any use.
        upper = _extent(v.rhs)
        if upper is not None and upper[0] is not None and upper[2] == 0:
            if upper[1] != VALUE:
                return 0, upper  # (an extent is never negative)
            # An int n is at least 1 where x in [lo, n + off) exists with lo >= off.
            inner = index_bounds(v.lhs)
            if inner is not None and inner[1][1] == VALUE and same_value(inner[1][0], upper[0]) and inner[0] - inner[1][2] >= 0:  # type: ignore[arg-type]
                return 0, upper
    if isinstance(v, O.BinOp) and v.op in ("+", "-"):
        c = _const_int(v.rhs)
        inner = index_bounds(v.lhs)
        if c is not None and inner is not None:
            d = c if v.op == "+" else -c
            lo, (arr, k, off) = inner
            return lo + d, (arr, k, off + d)
    return None


def lower_bound(v: O.Value, depth: int = 8) -> int | None:
    """A lower bound of the int `v`, when one is known: a constant, the item of a
    ``range`` with one or two arguments (at least its start), ``len()``, ``x % n`` with
    n at least 1, ``x + c``, ``min`` and ``max`` of such values."""
    c = _const_int(v)
    if c is not None or depth == 0:
        return c
    found = index_bounds(v)
    if found is not None:
        return found[0]
    if isinstance(v, O.IterValue) and isinstance(v.iterator, O.GetIter):
        rng = v.iterator.iterable
        if isinstance(rng, O.Call) and isinstance(rng.func, O.Const) and rng.func.value is range and len(rng.args) in (1, 2):
            return 0 if len(rng.args) == 1 else lower_bound(rng.args[0], depth - 1)  # (step 1: every item >= start)
        return None
    from ..typing.types import INT

    if not isinstance(v, O.Op) or v.type != INT:
        return None
    if isinstance(v, O.Call) and isinstance(v.func, O.Const) and not v.kwnames:
        if v.func.value is len:
            return 0
        if v.func.value in (min, max) and len(v.args) >= 2:
            bounds = [lower_bound(a, depth - 1) for a in v.args]
            if v.func.value is min:
                return None if None in bounds else min(bounds)  # type: ignore[type-var]
            known = [x for x in bounds if x is not None]
            return max(known) if known else None
        return None
    if isinstance(v, O.BinOp) and v.op == "%":
        n = lower_bound(v.rhs, depth - 1)
        return 0 if n is not None and n >= 1 else None
    if isinstance(v, O.BinOp) and v.op in ("+", "-") and _const_int(v.rhs) is not None:
        inner = lower_bound(v.lhs, depth - 1)
        d = _const_int(v.rhs)
        return None if inner is None else inner + (d if v.op == "+" else -d)  # type: ignore[operator]
    return None


def cannot_overflow(op: O.BinOp) -> bool:
    """Whether int ``x + c`` / ``x - c`` stays within int64 because `x` has known
    bounds (`index_bounds`): ``j + 1`` and ``j - 1`` for a loop item ``j``. An extent
    is at most 2**63 - 1, so ``x < extent + off`` gives ``x + d <= 2**63 - 1`` when
    ``off + d <= 1``. Also ``x - y`` of two ints known to be at least 0 (``i - k`` of
    two loop items): it lies within +-(2**63 - 1)."""
    c = _const_int(op.rhs)
    if op.op == "-" and c is None:
        lo, hi = lower_bound(op.lhs), lower_bound(op.rhs)
        return lo is not None and hi is not None and lo >= 0 and hi >= 0
    if op.op not in ("+", "-") or c is None:
        return False
    found = index_bounds(op.lhs)
    if found is None:
        return False
    d = c if op.op == "+" else -c
    lo, (arr, _, off) = found
    if lo + d < -(2**63):
        return False
    return off + d <= 1 if arr is not None else off + d - 1 <= 2**63 - 1


def counts_by_one(op: O.BinOp) -> bool:
    """Whether ``x + 1`` (``x - 1``, or ``x + b`` for a bool b) steps a counter: `x` is
    a phi whose values are only small constants, phis and selects of the same kind,
    and such steps of such values (``count = 0`` ... ``count += 1``, ``count += x[i] > t``).
    Starting within 2**32 of zero, such a counter reaches the int64 limits only after
    more than 2**62 executed steps, centuries of computing, so the step needs no
    overflow test."""
    if not _counter_step(op):
        return False
    seen: set[O.Value] = set()
    work: list[O.Value] = [op.lhs]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, O.Const):
            if not (type(v.value) is int or type(v.value).__name__ == "int64") or abs(int(v.value)) > 2**32:  # type: ignore[call-overload]
                return False
        elif isinstance(v, O.Phi):
            work.extend(v.operands())
        elif isinstance(v, O.Select):  # (a converted ``if count_it: count += 1``)
            work.extend((v.if_true, v.if_false))
        elif isinstance(v, O.BinOp) and _counter_step(v):
            work.append(v.lhs)
        else:
            return False
    return isinstance(op.lhs, O.Phi)


def _counter_step(op: O.Value) -> bool:
    """``x + 1``, ``x - 1`` or ``x + b`` for a bool or np.bool b (0 or 1)."""
    from ..typing.infer import value_type
    from ..typing.types import BOOL, NP_BOOL

    if not (isinstance(op, O.BinOp) and op.op in ("+", "-")):
        return False
    return _const_int(op.rhs) == 1 or (op.op == "+" and value_type(op.rhs) in (BOOL, NP_BOOL))


def remainder_is_wrap(op: O.BinOp) -> bool:
    """Whether int ``x % n`` is ``0 if x == n else x``: `n` is an extent and `x` lies
    in ``[0, n]`` (``(i + 1) % n`` for the item ``i`` of ``range(n)``). Such an `x`
    exists only if ``n >= 1``, so there is no zero divisor to test either."""
    if op.op != "%":
        return False
    found = index_bounds(op.lhs)
    divisor = _extent(op.rhs)
    if found is None or divisor is None or divisor[0] is None or divisor[2] != 0:
        return False
    lo, (arr, k, off) = found
    # x >= lo >= 0; x < n + off <= n + 1; and n > lo - off >= 0.
    same = arr is divisor[0] or (k == VALUE and same_value(arr, divisor[0]))  # type: ignore[arg-type]
    return same and k == divisor[1] and lo >= 0 and off <= 1 and lo - off >= 0


def in_bounds_after_wrap(index: O.Value, array: O.Value, dim: int) -> bool:
    """Whether `index` is certainly within ``[-1, array.shape[dim])`` and that extent is
    at least 1, so that the negative-index wrap alone brings it in bounds: ``i - 1``
    for the item ``i`` of a loop over ``range(array.shape[dim])`` (which exists only
    if the extent is at least 1)."""
    if not (isinstance(index, O.BinOp) and index.op == "-" and _const_int(index.rhs) == 1):
        return False
    found = index_bounds(index.lhs)
    if found is None:
        return False
    lo, upper = found
    return lo == 0 and _within(upper, array, dim)


def in_bounds(index: O.Value, array: O.Value, dim: int) -> bool:
    """Whether `index` is certainly within ``[0, array.shape[dim])``."""
    found = index_bounds(index)
    if found is None:
        return False
    lo, upper = found
    return lo >= 0 and _within(upper, array, dim)


class BranchFacts:
    """What the branches taken to reach a block prove about int values:

        if 0 <= k < len(counts):      # two branches, both taken
            counts[k] += 1            # k in bounds of counts, without a check

    A block entered only through one edge of a ``branch`` (its single predecessor)
    knows that edge's condition, and so does every block it dominates. Only
    comparisons of Python ints count (their truth is the comparison of the values)."""

    def __init__(self, fn: "Function") -> None:
        from ..ir.dominance import dominators

        self.idom = dominators(fn)
        self.preds = fn.predecessors()
        self.cache: dict[object, list[tuple[str, O.Value, O.Value]]] = {}
        self.sources: dict[object, list[object]] = {}  # per block: the blocks that branched, fact by fact

    def facts(self, block: object) -> list[tuple[str, O.Value, O.Value]]:
        """(op, lhs, rhs) comparisons known true on entry to `block`."""
        found = self.cache.get(block)
        if found is not None:
            return found
        out: list[tuple[str, O.Value, O.Value]] = []
        sources: list[object] = []
        node = block
        while node is not None:
            preds = self.preds.get(node, [])  # type: ignore[call-overload]
            if len(preds) == 1:
                term = preds[0].terminator
                if isinstance(term, O.Branch) and term.if_true is not term.if_false:
                    fact = _comparison(term.cond)
                    if fact is not None:
                        op, lhs, rhs = fact
                        if term.if_false is node:
                            op = _NEGATED[op]
                        out.append((op, lhs, rhs))
                        sources.append(preds[0])
            node = self.idom.get(node)  # type: ignore[call-overload]
        self.cache[block] = out
        self.sources[block] = sources
        return out

    def edge_facts(self, pred: object, block: object) -> list[tuple[str, O.Value, O.Value]]:
        """The comparisons known true when `pred` goes to `block`: `pred`'s own, and
        its branch's if that edge is one way only."""
        out = list(self.facts(pred))
        term = pred.terminator  # type: ignore[attr-defined]
        if isinstance(term, O.Branch) and term.if_true is not term.if_false:
            fact = _comparison(term.cond)
            if fact is not None:
                op, lhs, rhs = fact
                out.append((op if term.if_true is block else _NEGATED[op], lhs, rhs))
        return out

    def select_facts(self, select: O.Select, picked: bool) -> list[tuple[str, O.Value, O.Value]]:
        """The comparisons known true where `select` picks its first value (`picked`)
        or its second: its block's, and its condition's (as a branch's edge)."""
        out = list(self.facts(select.block))
        fact = _comparison(select.cond)
        if fact is not None:
            op, lhs, rhs = fact
            out.append((op if picked else _NEGATED[op], lhs, rhs))
        return out

    def restricted_in(self, block: object, loop: set, index: O.Value) -> bool:  # type: ignore[type-arg]
        """Whether a branch in `loop` taken to reach `block` compares a value that
        `index` is computed from (``if i >= k: a[i - k]``): then the branch may keep
        the index in bounds where the whole interval of its values is not."""
        facts = self.facts(block)
        mine = computed_from(index)
        return any(where in loop and (computed_from(lhs) | computed_from(rhs)) & mine for (_, lhs, rhs), where in zip(facts, self.sources[block]))

    def bounds(self, block: object, index: O.Value) -> tuple[bool, list[Upper]]:
        """What the facts on entry to `block` say of `index`: whether it is at least 0,
        and exclusive upper bounds it lies below. A fact about ``x + a`` bounds every
        ``x + d`` (``if i < n - 1: a[i + 1]``, ``if i > 0: a[i - 1]``): the comparisons
        are of exact ints, and an index computed natively either is the exact ``x + d``
        or deoptimised computing it."""
        low = False
        uppers: list[Upper] = []
        root, d = offset_form(index)
        for fact in self.facts(block):
            op, lhs, rhs = fact
            for op, lhs, rhs in (fact, (SWAPPED[op], rhs, lhs)):  # "root + a op rhs"
                other, a = offset_form(lhs)
                if _const_int(other) is not None or not same_value(other, root):
                    continue
                shift = d - a  # index == lhs + shift: "index op rhs + shift"
                c = _const_int(rhs)
                if c is not None and ((op == ">=" and c + shift >= 0) or (op == ">" and c + shift >= -1)):
                    low = True
                extent = _extent(rhs)
                if extent is not None and op in ("<", "<="):
                    uppers.append((extent[0], extent[1], extent[2] + shift + (op == "<=")))
        return low, uppers

    def in_bounds(self, block: object, index: O.Value, array: O.Value, dim: int) -> bool:
        """Whether the facts on entry to `block` put `index` in ``[0, array.shape[dim])``."""
        found = index_bounds(index)
        low, uppers = self.bounds(block, index)
        low = low or (found is not None and found[0] >= 0)  # (a loop item's own bound: ``x + 1``)
        return low and any(_within(upper, array, dim) for upper in uppers)


def offset_form(v: O.Value) -> tuple[O.Value, int]:
    """`v` as ``(x, c)`` with ``v == x + c``: the constants it adds or subtracts."""
    c = 0
    while isinstance(v, O.BinOp) and v.op in ("+", "-"):
        k = _const_int(v.rhs)
        if k is None:
            break
        c += k if v.op == "+" else -k
        v = v.lhs
    return v, c


def same_value(a: O.Value, b: O.Value) -> bool:
    """Whether `a` and `b` are the same int: one value, equal int constants, or the
    same ``+ - *`` of the same values (``x + 1`` computed in the test and again in the
    index it guards)."""
    if a is b:
        return True
    ca, cb = _const_int(a), _const_int(b)
    if ca is not None or cb is not None:
        return ca is not None and ca == cb
    return (
        isinstance(a, O.BinOp) and isinstance(b, O.BinOp) and a.op == b.op and a.op in ("+", "-", "*")
        and same_value(a.lhs, b.lhs) and same_value(a.rhs, b.rhs)
    )


def same_element(a: "O.Subscript | O.StoreItem", b: "O.Subscript | O.StoreItem") -> bool:
    """Whether two accesses' indices are the same ints (`same_value`, index by index):
    the same element of the same array, if their arrays are one."""
    x, y = O.index_items(a), O.index_items(b)
    return len(x) == len(y) and all(same_value(u, v) for u, v in zip(x, y))


@record(frozen=True)
class Span:
    """An entry test of an index from the interval of its values (`span_form`): the
    interval's low end is tested against 0 when `low`, its high end against the
    extent when `high` (the branches taken or the index's own bounds may prove one)."""

    low: bool
    high: bool
    loop: frozenset = field(compare=False)  # type: ignore[type-arg]  # the blocks of the innermost loop around


def range_of(item: O.Value) -> tuple[O.Value, O.Value, O.Value] | None:
    """(start, stop, step) of the ``range`` of int arguments whose `for` loop gives
    `item` (a step of 1 when none is given)."""
    if not (isinstance(item, O.IterValue) and isinstance(item.iterator, O.GetIter)):
        return None
    rng = item.iterator.iterable
    if not (isinstance(rng, O.Call) and isinstance(rng.func, O.Const) and rng.func.value is range) or rng.kwnames:
        return None
    args = rng.args
    if not 1 <= len(args) <= 3 or not all(_const_int(a) is not None or _exact_int(a) for a in args):
        return None
    if len(args) == 1:
        return O.Const(0), args[0], O.Const(1)
    return args[0], args[1], args[2] if len(args) == 3 else O.Const(1)


def computed_from(v: O.Value, seen: frozenset = frozenset()) -> set[O.Value]:  # type: ignore[type-arg]
    """The values that `v` is computed from by ``+ - *``, min/max, phis and selects
    (itself if none)."""
    if v in seen:
        return set()
    if isinstance(v, O.BinOp) and v.op in ("+", "-", "*"):
        return computed_from(v.lhs, seen) | computed_from(v.rhs, seen)
    if is_min_max(v) or isinstance(v, O.Phi):
        return {v}.union(*(computed_from(a, seen | {v}) for a in v.operands()))
    if isinstance(v, O.Select):
        return {v}.union(*(computed_from(a, seen | {v}) for a in (v.if_true, v.if_false)))
    return set() if isinstance(v, O.Const) else {v}


def is_min_max(v: O.Value) -> bool:
    """``min(x, y)`` or ``max(x, y)`` of two ints."""
    return (
        isinstance(v, O.Call) and isinstance(v.func, O.Const) and v.func.value in (min, max)
        and len(v.args) == 2 and not v.kwnames and all(_const_int(a) is not None or _exact_int(a) for a in v.args)
    )


def span_form(v: O.Value, loop: set, headers: set) -> bool:  # type: ignore[type-arg]
    """Whether the interval of `v`'s values can be computed on entry to any block of
    `loop` from values set before it: `v` is an int set before the loop, or a
    constant, or a range item, ``+ - *`` (by a constant), ``min``/``max`` of such
    values, or a phi of them in a block that is no loop's header (``j - 1 if j > 0
    else m - 1``), or a select of them. (Interval arithmetic: each operand anywhere
    in its interval; a range item lies between its start and its stop, whichever way
    it steps; a phi's incoming value under the comparisons its edge takes:
    `BranchFacts.edge_facts`, a select's under its condition: `select_facts`.)"""
    if _const_int(v) is not None:
        return True
    if not (isinstance(v, O.Op) and v.block in loop):
        return _exact_int(v)
    found = range_of(v)
    if found is not None:
        return all(span_form(x, loop, headers) for x in found)
    if isinstance(v, O.BinOp) and _exact_int(v) and v.op in ("+", "-"):
        return span_form(v.lhs, loop, headers) and span_form(v.rhs, loop, headers)
    if isinstance(v, O.BinOp) and _exact_int(v) and v.op == "*":
        return any(_const_int(x) is not None and span_form(y, loop, headers) for x, y in ((v.lhs, v.rhs), (v.rhs, v.lhs)))
    if isinstance(v, O.Phi):
        return _exact_int(v) and v.block not in headers and all(span_form(x, loop, headers) for x in v.operands())
    if isinstance(v, O.Select):  # (a phi that opt/ifconvert.py converted)
        return _exact_int(v) and span_form(v.if_true, loop, headers) and span_form(v.if_false, loop, headers)
    return is_min_max(v) and all(span_form(a, loop, headers) for a in v.args)  # type: ignore[attr-defined]


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _comparison(cond: O.Value) -> tuple[str, O.Value, O.Value] | None:
    from ..typing.types import BOOL, INT

    if isinstance(cond, O.Truth):
        cond = cond.value
    if not (isinstance(cond, O.Compare) and cond.op in _NEGATED and cond.type == BOOL):
        return None
    for v in (cond.lhs, cond.rhs):
        t = v.type if not isinstance(v, O.Const) else (INT if type(v.value) is int else None)
        if t != INT:
            return None
    return cond.op, cond.lhs, cond.rhs


class BoundsPlan:
    """Where each index of each array access of a typed function is tested: `proven`
    (in bounds by construction or by the branches taken: no test), at its block's
    entry (`entry_tests`: a loop-invariant ``upper > extent`` test or a `Span`, which
    LLVM moves out of the loop), or, by default, at the access itself (wrapping a negative index
    first). An index the branches prove gets no test at all."""

    def __init__(self, fn: "Function", entry_tests: bool = True) -> None:
        from ..ir.dominance import natural_loops
        from ..typing.infer import value_type
        from ..typing.types import ArrayType

        self.branch_facts = BranchFacts(fn)
        loops = natural_loops(fn)
        self.loops = sorted(loops.values(), key=len)  # innermost first
        self.headers = set(loops)
        self.proven: set[tuple[O.Op, int]] = set()
        #: per block: (access, dimension, upper bound or span) tested on entry to the block
        self.entry_tests: dict[object, list[tuple[O.Op, int, Upper | Span]]] = {}
        for block in fn.blocks:
            for op in block.ops:
                if not isinstance(op, (O.Subscript, O.StoreItem)) or not isinstance(value_type(op.obj), ArrayType):
                    continue
                t = value_type(op.obj)
                items = O.index_items(op)  # type: ignore[arg-type]
                for k, index in enumerate(items[: t.ndim]):  # type: ignore[attr-defined]
                    if in_bounds(index, op.obj, k):
                        self.proven.add((op, k))
                        continue
                    if self.branch_facts.in_bounds(block, index, op.obj, k):
                        # No entry test either: the loop's bound may well exceed the
                        # extent (``if x + 1 < n: b[x + 1]`` for x in range(n)), and a
                        # test of it would fail on every call.
                        self.proven.add((op, k))
                        continue
                    test = (self._entry_bound(op, index, block) or self._span(op, k, index, block)) if entry_tests else None
                    if test is not None:
                        self.entry_tests.setdefault(block, []).append((op, k, test))

    def _span(self, op: O.Op, k: int, index: O.Value, block: object) -> Span | None:
        """The `Span` test of an index in a loop, on entry to its block (`span_form`)."""
        if isinstance(op.obj, O.Op) and op.obj.block is block:  # type: ignore[attr-defined]
            return None
        loop = next((blocks for blocks in self.loops if block in blocks), None)
        if loop is None or not span_form(index, loop, self.headers) or self.branch_facts.restricted_in(block, loop, index):
            return None
        found = index_bounds(index)
        low, uppers = self.branch_facts.bounds(block, index)
        low = low or (found is not None and found[0] >= 0)
        high = any(_within(u, op.obj, k) for u in uppers + ([found[1]] if found is not None else []))  # type: ignore[attr-defined]
        return Span(not low, not high, frozenset(loop))

    def _entry_bound(self, op: O.Op, index: O.Value, block: object) -> Upper | None:
        """The upper bound of an index in ``[lo, upper)`` with ``lo >= 0``, when the
        test ``upper > extent`` can be made on entry to the block: the array and the
        bound's array are defined before it (`BoundsPlan.entry_tests`). The bounds the
        branches taken give come first: they hold where the access runs (``if i < n - 1:
        b[i + 1]``), the loop's may not (``i + 1 < n + 1``)."""
        from ..typing.infer import value_type
        from ..typing.types import ArrayType

        if isinstance(op.obj, O.Op) and op.obj.block is block:  # type: ignore[attr-defined]
            return None
        found = index_bounds(index)
        low, uppers = self.branch_facts.bounds(block, index)
        if not (low or (found is not None and found[0] >= 0)):
            return None
        for arr, k, off in uppers + ([found[1]] if found is not None else []):
            if k == VALUE:
                if not (isinstance(arr, O.Op) and arr.block is block):
                    return (arr, k, off)  # (an int defined before the block)
                continue
            if arr is None or (isinstance(value_type(arr), ArrayType) and not (isinstance(arr, O.Op) and arr.block is block)):  # type: ignore[arg-type]
                return (arr, k, off)
        return None
