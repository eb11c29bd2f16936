"""The plans code generation follows for one typed function, made by the analyses of
this package, and their text form (the golden tests' `plans` stage).

- `floats` (finiteness.py): which float results are tested for being finite, where
  and how;
- `strips` (strip_plans.py): which innermost loops of a writer also run in strips or
  vector groups, and how;
- `ownership` (ownership.py): where each natively allocated array's reference is
  released, or None when the function allocates none;
- `bounds` (bounds.py): where each index of each array access is tested;
- `wraps` (wrapping.py): the int ops computed modulo 2**64, whose values are only
  ever observed through a mask;
- `regions` (regions.py): the loops of a writer that only read, whose deopts resume
  before the loop and whose float warnings are tested where they exit.

Example of the text::

    finiteness: deferred to the return
      %6 = binop: tests %4, %5
      %9 = call <sqrt>: math test deferred
    strips:
      B2: logged; vector groups (loads %3, %4; store %7); moving stores %7
    regions:
      B3: resumes at %12; exits tested in B5; accumulators %17 tested where their loops exit
    ownership: none
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.function import BasicBlock, Function
from ..ir.printer import Namer, op_text
from ..records import record
from ..typing.infer import value_type
from ..typing.types import ArrayType, NpScalar, options
from .bounds import VALUE, BoundsPlan, Span
from .finiteness import FloatTests
from .ownership import Liveness, is_owned
from .regions import Region, resume_regions
from .strip_plans import StripPlan, plan_strips
from .wrapping import wrapping_ops


@record
class Plans:
    floats: FloatTests
    strips: dict[BasicBlock, StripPlan]
    ownership: Liveness | None
    bounds: BoundsPlan
    wraps: set[O.Op]
    regions: dict[BasicBlock, Region]


def make_plans(fn: Function, uses: dict[O.Value, list[O.Op]] | None = None, drops: frozenset[str] = frozenset()) -> Plans:
    """The plans for the typed function `fn` (`uses`: its `fn.uses()`, if at hand),
    without the assumptions named in `drops` (abi.DROPPABLE): "entry-bounds", no
    bounds test on entry to a block, each index where it is used; "float-suspicion",
    no test that fails on any infinity or NaN, each NumPy float op its own precise one."""
    uses = fn.uses() if uses is None else uses
    owns = any(is_owned(op) for op in fn.ops())
    suspicion = "float-suspicion" not in drops
    liveness = Liveness(fn) if owns else None
    # (without suspicion every NumPy float op tests itself precisely: nothing to defer)
    regions = resume_regions(fn, liveness) if suspicion else {}
    floats = FloatTests(fn, uses, suspicion, regions)
    bounds = BoundsPlan(fn, entry_tests="entry-bounds" not in drops)
    return Plans(floats, plan_strips(fn), liveness, bounds, wrapping_ops(fn, uses), regions)


def format_plans(fn: Function, plans: Plans | None = None) -> str:
    """The plans as text, values and blocks named as `format_function` names them."""
    plans = make_plans(fn) if plans is None else plans
    name = Namer(fn)
    order = {op: k for k, op in enumerate(fn.ops())}

    def names(vs) -> str:  # type: ignore[no-untyped-def]
        """The values' names, in program order (arguments and constants first)."""
        return ", ".join(name(v) for v in sorted(vs, key=lambda v: order.get(v, -1)))

    out = [_finiteness(fn, plans.floats, name, names)]
    out.append("strips:" if plans.strips else "strips: none")
    for header, plan in sorted(plans.strips.items(), key=lambda kv: fn.blocks.index(kv[0])):
        parts = [f"  {name.block(header)}: {'buffered' if plan.buffered else 'logged'}"]
        if plan.vector is not None:
            v = plan.vector
            parts.append(f"vector groups (loads {names(v.loads)}; store {name(v.store)})")
        if plan.moving:
            parts.append(f"moving stores {names(plan.moving)}")
        if plan.absorbed:
            parts.append(f"tested once a strip {names(plan.absorbed)}")
        if plan.reads or plan.writes:
            parts.append(f"apart: reads {names(plan.reads)}, writes {names(plan.writes)}")
        out.append("; ".join(parts))
    regions = sorted({id(r): r for r in plans.regions.values()}.values(), key=lambda r: fn.blocks.index(r.header))
    if regions:
        out.append("regions:")
    for r in regions:
        exits = ", ".join(name.block(e) for e in r.exits) or "none"
        line = f"  {name.block(r.header)}: resumes at {name(r.checkpoint)}; exits tested in {exits}"
        held = [phi for phi in plans.floats.accumulators if phi.block in r.blocks]
        if held:
            line += f"; accumulators {names(held)} tested where their loops exit"
        out.append(line)
    out.append(_ownership(fn, plans.ownership, name, names))
    out.append(_bounds(fn, plans.bounds, name))
    if plans.wraps:
        out.append(f"modulo 2**64: {names(plans.wraps)}")
    return "\n".join(out)


def _finiteness(fn: Function, floats: FloatTests, name: Namer, names) -> str:  # type: ignore[no-untyped-def]
    lines = ["finiteness: deferred to the return" if floats.deferred else "finiteness: tested where computed"]
    for op in fn.ops():
        what = []
        if isinstance(op, O.BinOp) and any(isinstance(t, NpScalar) for t in options(op.type)):  # type: ignore[arg-type]
            what.append(f"warning test {floats.arithmetic_test(op)}")
        planned = floats.op_tests(op)
        if planned is not None:
            if planned.tests:
                what.append(f"tests {names(planned.tests)}")
            if planned.math_test != "precise":
                what.append(f"math test {planned.math_test}")
            if planned.self_test:
                what.append("tests itself")
        if what:
            if isinstance(op, O.ControlOp):
                head = f"{name.block(op.block)}: {op_text(op, name)}"
            else:
                head = f"{name(op)} = " + (f"call {name(op.func)}" if isinstance(op, O.Call) else type(op).__name__.lower())
            lines.append(f"  {head}: {'; '.join(what)}")
    return "\n".join(lines)


def _bounds(fn: Function, bounds: BoundsPlan, name: Namer) -> str:
    entry = {(op, k): upper for tests in bounds.entry_tests.values() for op, k, upper in tests}
    lines = []
    for op in fn.ops():
        if not isinstance(op, (O.Subscript, O.StoreItem)) or not isinstance(value_type(op.obj), ArrayType):
            continue
        ndim = value_type(op.obj).ndim  # type: ignore[attr-defined]
        count = min(ndim, len(O.index_items(op)))
        marks = []
        for k in range(count):
            how = ["proven"] if (op, k) in bounds.proven else []
            if isinstance(entry.get((op, k)), Span):
                span = entry[op, k]
                ends = " and ".join(end for end, want in (("low end >= 0", span.low), ("high end < extent", span.high)) if want)  # type: ignore[union-attr]
                how.append(f"tested on entry (its interval's {ends})")
            elif (op, k) in entry:
                arr, dim, off = entry[op, k]  # type: ignore[misc]
                limit = str(off) if arr is None else (name(arr) if dim == VALUE else f"{name(arr)}.shape[{dim}]") + (f"{off:+d}" if off else "")  # type: ignore[arg-type]
                how.append(f"tested on entry (< {limit})")
            marks.append(f"[{k}] " + (" and ".join(how) or "tested where used"))
        target = name(op) if isinstance(op, O.Subscript) else f"store to {name(op.obj)}"
        lines.append(f"  {target}: {', '.join(marks)}")
    return "\n".join(["bounds:" if lines else "bounds: no array accesses"] + lines)


def _ownership(fn: Function, liveness: Liveness | None, name: Namer, names) -> str:  # type: ignore[no-untyped-def]
    if liveness is None:
        return "ownership: none"
    lines = ["ownership:"]
    for block in fn.blocks:
        releases = liveness.releases(block)
        live = liveness.live_in[block]
        text = [f"live in {names(live)}"] if live else []
        for k in sorted(releases):
            text.append(f"after {name(block.ops[k])} release {names(releases[k])}")
        if text:
            lines.append(f"  {name.block(block)}: " + "; ".join(text))
    return "\n".join(lines)
