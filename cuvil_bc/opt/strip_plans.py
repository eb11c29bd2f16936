"""Which innermost loops of a function that writes run in strips or vector groups,
and how: the plans that lower/strips.py and lower/groups.py emit code for (their
docstrings describe the schemes).

`plan_strips(fn)` gives, per loop header, a `StripPlan`: the loop's one-block body,
whether its strips are buffered (a recurrence: strips of `SHORT` iterations whose
stores wait until the strip succeeded) or logged (stores go to the arrays, with an
undo log), which float ops of a recurrence are tested once per strip (`absorbed`),
which stores move by one element per iteration (their log needs no addresses), which
arrays must not overlap, and whether the body first runs in vector groups (a
`VectorPlan`). Only loops whose body is one block of arithmetic, element reads and
element stores moving along the last axis qualify.

    for i in range(n):            StripPlan(body=B2, vector=VectorPlan(loads=(%5, %8),
        out[i] = a[i] * k + b[i]      arith=(%6, %9), store=%10, reads=(a, b)))
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..records import record
from ..typing.infer import value_type
from ..typing.primitives import lookup
from ..typing.types import BOOL, FLOAT, INT, NP_BOOL, NP_F64, RANGE_ITER, ArrayType, NpScalar, UnionType, holds_array
from .bounds import same_element
from .finiteness import numpy_float

#: The most ops a buffered strip's body may have (it is unrolled completely).
SHORT_BODY_OPS = 40

_OPS = (O.BinOp, O.UnaryOp, O.Compare, O.Truth, O.Select, O.BuildTuple, O.TupleGet, O.Subscript, O.StoreItem, O.IterValue, O.Checkpoint, O.Narrow, O.Call)


@record(frozen=True)
class StripPlan:
    """How the innermost loop with this body runs in strips. `buffered` (a loop with a
    recurrence): strips of exactly `SHORT` iterations, unrolled completely, whose
    stores wait in registers until the strip has succeeded; `reads` and `writes` are the
    arrays its body reads and writes (none is both), which must not overlap at run
    time; `absorbed` are the float ops of the recurrence whose warning test is one
    test of their last value (see `absorbed_ops`). A logged strip's `moving` stores
    move one element further each iteration (`moving_stores`)."""

    body: BasicBlock
    buffered: bool = False
    absorbed: frozenset[O.Op] = frozenset()
    reads: tuple[O.Value, ...] = ()
    writes: tuple[O.Value, ...] = ()
    #: the body also runs in vector groups first (groups.py)
    vector: "VectorPlan | None" = None
    moving: frozenset[O.StoreItem] = frozenset()


def strip_body(fn: Function, header: BasicBlock, preds: dict[BasicBlock, list[BasicBlock]]) -> StripPlan | None:
    """How the innermost loop headed by `header` runs in strips; None when it cannot."""
    term = header.terminator
    if not fn.writes or not isinstance(term, O.ForIter) or value_type(term.iterator) != RANGE_ITER:
        return None
    body = term.body
    if body is header or preds[body] != [header] or not isinstance(body.terminator, O.Jump) or body.terminator.target is not header:
        return None
    if any(not isinstance(op, (O.Phi, O.Checkpoint, O.ForIter)) for op in header.ops):
        return None
    item = next((op for op in body.ops if isinstance(op, O.IterValue)), None)
    if item is None or not _step_one(term.iterator):
        return None
    stores = 0
    for op in body.ops[:-1]:
        if not isinstance(op, _OPS) or holds_array(op.type):
            return None
        if isinstance(op, O.Call) and not _safe_call(op):
            return None
        if isinstance(op, O.Subscript) and not isinstance(value_type(op.obj), ArrayType):
            return None
        if isinstance(op, O.StoreItem) and not _consecutive(op, item, body):
            return None
        if isinstance(op, O.StoreItem):
            if not isinstance(value_type(op.obj), ArrayType):
                return None
            stores += 1
    if stores == 0:
        return None
    phis = set(header.phis())
    if any(holds_array(phi.type) for phi in phis):
        return None
    if _reads_earlier_stores(body, item):
        return None
    recurrences = [phi for phi in phis if _depends_on(phi.value_for(body), phis, body)]
    if not recurrences:
        return StripPlan(body, vector=vector_plan(body, header), moving=moving_stores(body))
    if all(_counter(phi, body) for phi in recurrences):
        # ``if x[i] > t: n += 1``: a count LLVM vectorizes as a reduction in a
        # logged strip (a failed one starts again from the count before it).
        return StripPlan(body, moving=moving_stores(body))
    # A recurrence (``acc += a[i]``) does not vectorize: it runs in short buffered
    # strips, if no array is both read and written in the body (a read must not miss
    # a store still waiting in the buffer; other arrays are tested at run time).
    reads = tuple(dict.fromkeys(op.obj for op in body.ops if isinstance(op, O.Subscript)))
    writes = tuple(dict.fromkeys(op.obj for op in body.ops if isinstance(op, O.StoreItem)))
    if set(reads) & set(writes) or len(body.ops) > SHORT_BODY_OPS:
        return None
    return StripPlan(body, buffered=True, absorbed=absorbed_ops(header, body), reads=reads, writes=writes)


def _offset(index: O.Value, item: O.Value) -> int | None:
    """c where `index` is ``item + c`` (``item - c``: -c, `item` itself: 0), else None."""
    if index is item:
        return 0
    if index_step(index, item):
        c = index.rhs.value  # type: ignore[attr-defined]
        return c if index.op == "+" else -c  # type: ignore[attr-defined,no-any-return]
    return None


def _reads_earlier_stores(body: BasicBlock, item: O.Value) -> bool:
    """Whether the body reads back, through a short chain of ops, an element that an
    earlier iteration stored (``acc[i, j] = c[i, j] + min(acc[i - 1, j], acc[i, j -
    1])``): a recurrence through memory, which cannot vectorize. The ordinary loop
    gets the stored value forwarded to the next iteration in a register (LLVM's loop
    load elimination); a strip's undo-log stores keep LLVM from it, and each
    iteration waits for a store and a load: dynamic-programming tables ran 3x slower
    in strips. Where the chain holds a division or a call (a Thomas solve), its
    latency dwarfs the memory's, and the strip's branch-free guards pay: those keep
    their strips. Only reads of the stored row count (the indices but the last the
    same values)."""
    from .bounds import same_value

    stores = [op for op in body.ops if isinstance(op, O.StoreItem)]
    for load in body.ops:
        if not isinstance(load, O.Subscript):
            continue
        for store in stores:
            if store.obj is not load.obj or same_element(load, store):
                continue
            mine, theirs = indices(load), indices(store)
            if len(mine) != len(theirs) or not all(same_value(a, b) for a, b in zip(mine[:-1], theirs[:-1])):
                continue
            read, stored = _offset(mine[-1], item), _offset(theirs[-1], item)
            if read is not None and stored is not None and read < stored and not _slow_chain(load, store, body):
                return True
    return False


def scalar_only(body: BasicBlock) -> bool:
    """Whether the body holds what LLVM's vectorizer cannot vectorize: a power with an
    exponent that is no constant (one pow call per element), or an array read at an
    index computed from a float or from another read (``img[y0, int(x)]``: a gather
    of data-dependent addresses). opt/ifconvert.py converts an ``if`` only where the
    strip it opens vectorizes: converted, a bilinear resampling ran 20-30% slower in
    strips (and a binomial tree's step 15%)."""
    item = next((op for op in body.ops if isinstance(op, O.IterValue)), None)
    for op in body.ops:
        if isinstance(op, O.BinOp) and op.op == "**" and not isinstance(op.rhs, O.Const):
            return True
        if isinstance(op, (O.Subscript, O.StoreItem)) and any(_data_dependent(ix, item, body) for ix in indices(op)):
            return True
    return False


def _data_dependent(v: O.Value, item: O.Value | None, body: BasicBlock) -> bool:
    """Whether the int `v` is computed in `body` from a float or an array read."""
    seen: set[int] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if not isinstance(x, O.Op) or x.block is not body or id(x) in seen or x is item:
            continue
        seen.add(id(x))
        if isinstance(x, O.Subscript) or any(value_type(a) in _FLOATS or value_type(a) == F32 for a in x.operands()):
            return True
        stack.extend(x.operands())
    return False


def _long_latency(op: O.Op) -> bool:
    """A division, a modulo, a power, or a call of anything but min, max and abs."""
    if isinstance(op, O.BinOp):
        return op.op in ("/", "//", "%", "**")
    return isinstance(op, O.Call) and not (isinstance(op.func, O.Const) and op.func.value in (min, max, abs))


def _slow_chain(load: O.Subscript, store: O.StoreItem, body: BasicBlock) -> bool:
    """Whether a long-latency op lies between `load` and the value `store` stores."""
    reached: set[O.Value] = {load}
    for op in body.ops[: body.ops.index(store)]:
        if any(v in reached for v in op.operands()):
            reached.add(op)
    feeding: set[O.Value] = set()
    stack = [store.value]
    while stack:
        v = stack.pop()
        if v in feeding or v not in reached:
            continue
        feeding.add(v)
        stack.extend(v.operands())  # type: ignore[attr-defined]
    return any(isinstance(v, O.Op) and _long_latency(v) for v in feeding)


def _counter(phi: O.Phi, body: BasicBlock) -> bool:
    """Whether the int `phi` only counts: its next value is itself, stepped by one or
    by a bool (`bounds.counts_by_one`: no overflow test), or a select of such values."""
    from .bounds import counts_by_one

    def steps(v: O.Value) -> bool:
        if v is phi:
            return True
        if isinstance(v, O.Select) and v.block is body:
            return steps(v.if_true) and steps(v.if_false)
        return isinstance(v, O.BinOp) and v.block is body and counts_by_one(v) and steps(v.lhs)

    return value_type(phi) == INT and steps(phi.value_for(body))


def absorbed_ops(header: BasicBlock, body: BasicBlock) -> frozenset[O.Op]:
    """The float ``+ - *`` ops on a recurrence's cycle made only of such ops (``acc +=
    a[i]``, ``acc = acc * r + x``). An infinity or NaN survives ``+ - *``, so once such
    an op's result is non-finite, every later result of every op on the cycle is: if
    the op's result in the strip's last iteration is finite, none before it was, and
    it gave no warning anywhere in the strip. One test at the end of the strip
    replaces one test per iteration."""

    def absorbing(op: O.Value) -> bool:
        return isinstance(op, O.BinOp) and op.block is body and op.op in ("+", "-", "*") and (op.type == FLOAT or numpy_float(op.type))

    found: set[O.Op] = set()
    for phi in header.phis():
        reached: set[O.Value] = {phi}  # from the phi, through absorbing ops
        for op in body.ops:
            if absorbing(op) and any(v in reached for v in op.operands()):
                reached.add(op)
        back: set[O.Value] = set()  # reaching the phi's next value, through absorbing ops
        stack = [phi.value_for(body)]
        while stack:
            v = stack.pop()
            if absorbing(v) and v not in back:
                back.add(v)
                stack.extend(v.operands())  # type: ignore[attr-defined]
        found |= {v for v in reached & back if isinstance(v, O.Op)}
    return frozenset(found)


def _step_one(iterator: O.Value) -> bool:
    rng = iterator.iterable if isinstance(iterator, O.GetIter) else None
    if not (isinstance(rng, O.Call) and isinstance(rng.func, O.Const) and rng.func.value is range):
        return False
    return len(rng.args) < 3 or (isinstance(rng.args[2], O.Const) and rng.args[2].value == 1)


def _consecutive(op: O.Subscript | O.StoreItem, item: O.IterValue, body: BasicBlock) -> bool:
    """Whether the store moves by one element per iteration, or not at all: only the
    last index may vary, as ``item + c``, on an array with unit stride. Other stores
    would be scatters, and their undo log could not follow them. (Reads may move
    along any axis: ``pts[j, 0]`` becomes a gather where LLVM finds it worth it,
    which it is for distances with vector square roots.)"""
    t = value_type(op.obj)
    assert isinstance(t, ArrayType)
    for k, index in enumerate(indices(op)):
        if not _depends_on(index, {item}, body):
            continue
        if k != t.ndim - 1 or not t.unit_stride:
            return False
        if index is not item and not index_step(index, item):
            return False
    return True


def moving_stores(body: BasicBlock) -> frozenset[O.StoreItem]:
    """The stores of a strip body whose element moves by one per iteration: the last
    index is ``item + c`` (an eligible body has no other kind of varying index) and
    the others are computed before the loop. (An index read from an array in the body
    could change when the strip writes that array.)"""
    item = next(op for op in body.ops if isinstance(op, O.IterValue))
    out = set()
    for op in body.ops:
        if isinstance(op, O.StoreItem):
            items = indices(op)
            fixed = all(not (isinstance(ix, O.Op) and ix.block is body) for ix in items[:-1])
            if fixed and _depends_on(items[-1], {item}, body):
                out.add(op)
    return frozenset(out)


def _safe_call(op: O.Call) -> bool:
    func = op.func.value if isinstance(op.func, O.Const) else None
    sig = lookup(func) if func is not None else None
    return sig is not None and sig.in_strips and not op.kwnames


def _depends_on(v: O.Value, roots: set, body: BasicBlock) -> bool:  # type: ignore[type-arg]
    """Whether `v` is computed, within `body`, from one of `roots`."""
    seen: set[int] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if x in roots:
            return True
        if not isinstance(x, O.Op) or x.block is not body or id(x) in seen:
            continue
        seen.add(id(x))
        stack.extend(x.operands())
    return False


_FLOATS = (FLOAT, NP_F64)
#: np.float32 ops run in single precision in groups too; their operands are float32
#: elements, np.float32 values and constants that float32 holds.
F32 = NpScalar("float32")
_FLOAT32_MAX = 3.4028234663852886e38


@record(frozen=True)
class VectorPlan:
    """A body that runs in vector groups: its float reads, its float ops, the one store,
    and the other arrays read (none may overlap the store's array at run time; the
    store's own array is read, if at all, only at the element stored)."""

    loads: tuple[O.Subscript, ...]
    #: float ``+ - *``, and comparisons, their truth and selects (a converted ``if``)
    arith: tuple[O.Op, ...]
    store: O.StoreItem
    reads: tuple[O.Value, ...]
    #: loads and float ops that are locals (``lap = ...``): after the groups, the
    #: header's phis get their values in the last iteration that ran
    lasts: tuple[O.Op, ...] = ()


def vector_plan(body: BasicBlock, header: BasicBlock) -> VectorPlan | None:
    """The groups plan for a strip body (already found simple by `strips.strip_body`),
    or None. Bounds are checked later, at lowering time (`bounds_ready`)."""
    item = next((op for op in body.ops if isinstance(op, O.IterValue)), None)
    if item is None:
        return None
    loads: list[O.Subscript] = []
    arith: list[O.Op] = []
    stores: list[O.StoreItem] = []
    vector: set[O.Value] = set()  # values that differ from lane to lane
    # Locals the body sets (their header phis) change from one iteration to the next:
    # no operand of a group's op, which would see one value for all its lanes.
    varying = {phi for phi in header.phis() if isinstance(inc := phi.value_for(body), O.Op) and inc.block is body}
    for op in body.ops[:-1]:
        if isinstance(op, (O.Checkpoint, O.IterValue)):
            continue
        if isinstance(op, O.BinOp) and op.type == INT:
            if not (index_step(op, item) or _invariant(op, body)):
                return None
        elif isinstance(op, O.BuildTuple):
            if not all(value_type(v) == INT for v in op.items):
                return None
        elif isinstance(op, O.Subscript):
            if not _element_access(op, item, body):
                return None
            if stores and op.obj is stores[0].obj:
                return None  # (a read after the store must see it: the group stores last)
            loads.append(op)
            vector.add(op)
        elif isinstance(op, O.BinOp) and op.op in ("+", "-", "*") and (op.type in _FLOATS or op.type == F32):
            if not all(_float_operand(v, vector, body, op.type == F32) and v not in varying for v in (op.lhs, op.rhs)):
                return None
            arith.append(op)
            vector.add(op)
        elif isinstance(op, O.Compare) and op.op in VECTOR_COMPARES and op.type in (BOOL, NP_BOOL):
            # (doubles only: NumPy compares an np.float32 with a Python number in
            # float32, after a cast that may warn)
            if not all(_float_operand(v, vector, body) and v not in varying and value_type(v) != F32 for v in (op.lhs, op.rhs)):
                return None
            arith.append(op)
            vector.add(op)
        elif isinstance(op, O.Truth) and op.value in vector and value_type(op.value) in (BOOL, NP_BOOL):
            arith.append(op)
            vector.add(op)
        elif isinstance(op, O.Select) and op.cond in vector and _twin_or_float(op.type):
            if not all(_float_operand(v, vector, body) and v not in varying for v in (op.if_true, op.if_false)):
                return None
            arith.append(op)
            vector.add(op)
        elif isinstance(op, O.StoreItem):
            single = isinstance(t := value_type(op.obj), ArrayType) and t.dtype == "float32"
            if not _element_access(op, item, body) or not _float_operand(op.value, vector, body, single) or op.value in varying:
                return None
            if single and value_type(op.value) != F32:
                return None  # (a double into a float32 array rounds: NumPy's cast)
            stores.append(op)
        else:
            return None
    if len(stores) != 1:
        return None
    lasts: list[O.Op] = []  # float locals set in the body: their last lane's value
    for phi in header.phis():
        incoming = phi.value_for(body)
        if isinstance(incoming, O.Op) and incoming.block is body and incoming is not item:
            if incoming not in vector or value_type(incoming) not in _FLOATS:
                return None  # an int local set in the body (``k = i - 1``): lane 0's only
            lasts.append(incoming)
    store = stores[0]
    # The stored array may be read, before the store, at the very element the
    # iteration stores (``c[i, j] += aik * b[k, j]``): each lane reads its own
    # element before the group stores. Read elsewhere (``out[i] = out[i - 1] * k``) a lane would miss
    # another's store: the logged strip handles that.
    if any(op.obj is store.obj and not same_element(op, store) for op in loads):
        return None
    reads = tuple(dict.fromkeys(op.obj for op in loads if op.obj is not store.obj))
    return VectorPlan(tuple(loads), tuple(arith), store, reads, tuple(dict.fromkeys(lasts)))


#: The comparisons a group computes lane by lane (as ordered or unordered IEEE
#: compares: NaN is unequal to everything, and less than nothing).
VECTOR_COMPARES = ("<", "<=", ">", ">=", "==", "!=")


def _twin_or_float(t: object) -> bool:
    """A float, an np.float64, or either (a select of the two): a double in a group."""
    return t in _FLOATS or (isinstance(t, UnionType) and set(t.options) <= set(_FLOATS))


def index_step(op: O.Value, item: O.Value) -> bool:
    """``item + c`` or ``item - c`` for a constant c."""
    return isinstance(op, O.BinOp) and op.op in ("+", "-") and op.lhs is item and isinstance(op.rhs, O.Const)


def indices(op: O.Subscript | O.StoreItem) -> list[O.Value]:
    """The index values of an element access, one per dimension given."""
    return O.index_items(op)


def _element_access(op: O.Subscript | O.StoreItem, item: O.Value, body: BasicBlock) -> bool:
    """A float64 or float32 element whose last index is ``item + c`` (or the item) on a
    unit-stride array, every other index computed before the loop."""
    t = value_type(op.obj)
    if not (isinstance(t, ArrayType) and t.dtype in ("float64", "float32") and t.unit_stride):
        return False
    if isinstance(op.obj, O.Op) and op.obj.block is body:
        return False
    items = indices(op)
    if len(items) != t.ndim or not (items[-1] is item or index_step(items[-1], item)):
        return False
    return all(_invariant(ix, body) and value_type(ix) == INT for ix in items[:-1])


def _invariant(v: O.Value, body: BasicBlock) -> bool:
    """Computed before the loop, or in the body from such values only (``i - 1``)."""
    if not (isinstance(v, O.Op) and v.block is body):
        return True
    return isinstance(v, O.BinOp) and v.op in ("+", "-") and all(_invariant(x, body) for x in (v.lhs, v.rhs))


def _float_operand(v: O.Value, vector: set[O.Value], body: BasicBlock, single: bool = False) -> bool:
    """An operand of a float op in a group: a vector value, a constant or a float
    computed before the loop; of a float32 (`single`) op, one that float32 holds
    exactly or rounds to without overflow, as NumPy converts it."""
    if v in vector:
        t = value_type(v)
        return t == F32 if single else (_twin_or_float(t) or t == F32)  # (not a comparison's bool)
    if isinstance(v, O.Const) and type(v.value) in (int, float, bool):
        if type(v.value) is float:
            return not single or abs(v.value) <= _FLOAT32_MAX
        return abs(v.value) <= (2**24 if single else 2**53)
    if isinstance(v, O.Op) and v.block is body:
        return False
    return value_type(v) == F32 if single else value_type(v) in _FLOATS + (F32,)


def plan_strips(fn: Function) -> dict[BasicBlock, StripPlan]:
    """The innermost loops of `fn` that also run in strips, by header."""
    preds = fn.predecessors()
    return {h: plan for h in fn.blocks if (plan := strip_body(fn, h, preds)) is not None}
