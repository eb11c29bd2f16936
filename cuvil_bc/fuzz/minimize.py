"""Greedy minimisation of a failing program, and the reproducer it prints.

`minimize(prog, finding)` keeps a change only if the program still fails with the
same finding key (`runner.Finding.key`: an internal error with the same normalised
message, or a divergence in the same aspect). In order:

1. keep only the failing call (and warnings filter), if that still fails;
2. delete statements (helpers too), replace compound statements by one of their
   bodies, drop `else` clauses;
3. replace expressions by one of their operands, then by small constants;
4. drop parameters the function no longer reads (and their arguments), and
   simplify scalar arguments.

Steps 2-4 repeat until nothing changes or the time budget is spent. What keeps the
program terminating and its ints small is never loosened: a `while` keeps its counter
(and its `wN += 1`), `range()` arguments, exponents, shift counts and the moduli that
bound ints are only ever replaced by constants.
"""

from __future__ import annotations

import ast
import copy
import time
from typing import Callable, Iterator

from .program import Program
from .runner import Finding, run_program

CONSTANTS = (ast.Constant(0), ast.Constant(1), ast.Constant(1.5), ast.Constant(True))


#: Exceptions that show a candidate is no longer a sensible program (a number where a
#: tuple was, a deleted definition): CPython must not raise new ones of these.
NONSENSE = {"TypeError", "NameError", "UnboundLocalError", "AttributeError", "RecursionError", "SyntaxError"}


def fails_same(finding: Finding, original: Program) -> Callable[[Program], bool]:
    allowed = set(run_program(original).raised) & NONSENSE

    def check(prog: Program) -> bool:
        try:
            result = run_program(prog)
        except Exception:  # noqa: BLE001 - a candidate that breaks the runner is not the same failure
            return False
        if (set(result.raised) & NONSENSE) - allowed:
            return False
        return result.finding is not None and result.finding.key == finding.key

    return check


# -- what may be touched ----------------------------------------------------------------


def _counter_names(tree: ast.AST) -> set[str]:
    """Counters of `while` loops (`wN`): their increments and tests stay."""
    return {n.id for w in ast.walk(tree) if isinstance(w, ast.While) for n in ast.walk(w.test)
            if isinstance(n, ast.Name) and n.id.startswith("w")}


def _protected(tree: ast.AST) -> set[int]:
    """ids of expressions that may only become constants (see the module docstring)."""
    keep: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("range", "pow"):
            args = node.args if node.func.id == "range" else node.args[1:]
            keep.update(id(sub) for a in args for sub in ast.walk(a))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.LShift)):
            keep.update(id(sub) for sub in ast.walk(node.right))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.right, ast.Constant) \
                and isinstance(node.right.value, int) and node.right.value >= 97:
            keep.add(id(node))  # a modulus that bounds an int: not replaced by its operand
        elif isinstance(node, ast.While):
            keep.update(id(sub) for sub in ast.walk(node.test))
    return keep


def _containers(tree: ast.AST) -> set[int]:
    """ids of expressions that are (or make) arrays and tuples: a number in their place
    would make the program ill-typed (CPython raises TypeError, or the compiler sees
    code no one writes), so they are never replaced."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.value, ast.Name):
            names.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
            names.update(a.id for a in node.args if isinstance(a, ast.Name))
    names -= {"math", "np"}
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            out.add(id(node.value))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            out.add(id(node.exc))  # (`raise 0` is a TypeError)
            if isinstance(node.exc, ast.Call):
                out.add(id(node.exc.func))
        elif isinstance(node, (ast.For, ast.comprehension)):
            out.add(id(node.iter))
        elif isinstance(node, ast.Name) and node.id in names:
            out.add(id(node))
        elif isinstance(node, ast.Tuple) or (isinstance(node, ast.Attribute) and node.attr in ("T", "shape")):
            out.add(id(node))
        elif isinstance(node, ast.Call) and (
            isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "np"
            or isinstance(node.func, ast.Attribute) and node.func.attr == "copy"
            or isinstance(node.func, ast.Name) and node.func.id in ("len", "divmod")
        ):
            out.add(id(node))
    return out


def _frozen(tree: ast.AST) -> set[int]:
    """ids of expressions never replaced at all: what bounds a `while` (the parts of its
    test that read the counter, and the counter's increment)."""
    counters = _counter_names(tree)
    frozen: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.While):
            for sub in ast.walk(node.test):
                if any(isinstance(n, ast.Name) and n.id in counters for n in ast.walk(sub)):
                    frozen.add(id(sub))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in counters:
            frozen.update(id(sub) for sub in ast.walk(node.value))
    return frozen


def _preorder(node: ast.AST) -> Iterator[ast.AST]:
    """Nodes in source order (a deletion or replacement at one position leaves the
    positions before it unchanged, so a pass can go on from where it was)."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _preorder(child)


def _stmt_slots(tree: ast.Module) -> list[tuple[list[ast.stmt], int]]:
    counters = _counter_names(tree)
    out = []
    for node in _preorder(tree):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for i, st in enumerate(body):
                if isinstance(st, ast.FunctionDef) and st.name == "f":
                    continue
                if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id in counters:
                    continue
                out.append((body, i))
    order = _order(tree)
    out.sort(key=lambda slot: order[id(slot[0][slot[1]])])
    return out


def _order(tree: ast.Module) -> dict[int, int]:
    return {id(n): j for j, n in enumerate(_preorder(tree))}


def _expr_slots(tree: ast.Module) -> list[tuple[ast.AST, str, int | None]]:
    """(parent, field, index) of every expression that may be replaced, in source order."""
    out: list[tuple[ast.AST, str, int | None]] = []
    for parent in _preorder(tree):
        if isinstance(parent, (ast.FunctionDef, ast.arguments, ast.arg, ast.Attribute)):
            continue
        if isinstance(parent, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot)) for o in parent.ops):
            continue  # (`x is None` stays: narrowing is what such a test is for)
        for field, value in ast.iter_fields(parent):
            if (isinstance(parent, ast.Call) and field == "func") or field in ("targets", "target"):
                continue
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                if not isinstance(item, ast.expr) or (isinstance(item, ast.Name) and item.id in ("math", "np")):
                    continue
                out.append((parent, field, i if isinstance(value, list) else None))
    order = _order(tree)
    out.sort(key=lambda slot: order[id(_get(slot))])
    return out


def _get(slot: tuple[ast.AST, str, int | None]) -> ast.expr:
    parent, field, i = slot
    value = getattr(parent, field)
    return value[i] if i is not None else value


def _set(slot: tuple[ast.AST, str, int | None], new: ast.expr) -> None:
    parent, field, i = slot
    if i is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[i] = new


def _operands(node: ast.expr, containers: set[int]) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse] + ([] if id(node) in containers else [node.test])
    if isinstance(node, ast.Call):
        return list(node.args) + [k.value for k in node.keywords]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript):
        return [node.value]  # m[i][j] -> m[i]
    return []


# -- candidates at one position -----------------------------------------------------------


def _statement_edits(tree: ast.Module, k: int) -> list[ast.Module]:
    """Statement `k` deleted, or replaced by one of its bodies, or without `else`; and,
    where a statement list starts at `k`, its halves and quarters deleted."""
    out = []
    body, i = _stmt_slots(tree)[k]
    st = body[i]
    if i == 0 and len(body) >= 4:
        for parts in (2, 4):
            size = (len(body) + parts - 1) // parts
            for start in range(0, len(body), size):
                cand = copy.deepcopy(tree)
                cbody, _ = _stmt_slots(cand)[k]
                deletable = {id(s[0][s[1]]) for s in _stmt_slots(cand)}
                kept = [x for j, x in enumerate(cbody) if not (start <= j < start + size and id(x) in deletable)]
                if 0 < len(kept) < len(cbody):
                    cbody[:] = kept
                    out.append(cand)
    replacements: list[list[ast.stmt]] = [[]]
    if isinstance(st, ast.If):
        replacements += [st.body, st.orelse]
    if isinstance(st, (ast.If, ast.For, ast.While)) and st.orelse:
        trimmed = copy.deepcopy(st)
        trimmed.orelse = []
        replacements.append([trimmed])
    for rep in replacements:
        cand = copy.deepcopy(tree)
        cbody, ci = _stmt_slots(cand)[k]
        cbody[ci:ci + 1] = copy.deepcopy(rep)
        owner = next(n for n in ast.walk(cand) if getattr(n, "body", None) is cbody or getattr(n, "orelse", None) is cbody)
        if not cbody and cbody is not getattr(owner, "orelse", None):
            cbody.append(ast.Pass())
        out.append(cand)
    return out


def _expression_edits(tree: ast.Module, k: int, constants: bool) -> list[ast.Module]:
    """Expression `k` replaced by one of its operands (or by a constant)."""
    slot = _expr_slots(tree)[k]
    node = _get(slot)
    if id(node) in _frozen(tree):
        return []
    returned_tuple = isinstance(node, ast.Tuple) and isinstance(slot[0], ast.Return)
    if id(node) in _containers(tree) and not (returned_tuple and not constants):
        # (a tuple or array stays one: only a conditional expression's arms replace
        # it, or an item a returned tuple)
        if constants or not isinstance(node, ast.IfExp):
            return []
    if constants:
        if isinstance(node, ast.Constant) and node.value in (0, 1, True):
            return []
        parent = slot[0]
        ints_only = isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)) \
            or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Invert) or isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("range", "pow")
        options: list[int | ast.Constant] = [copy.deepcopy(c) for c in CONSTANTS if not (ints_only and isinstance(c.value, float))]
    else:
        order = _order(tree)
        operands = list(node.elts) if returned_tuple else _operands(node, _containers(tree))
        options = [] if id(node) in _protected(tree) else [order[id(o)] for o in operands]
    out = []
    for option in options:
        cand = copy.deepcopy(tree)
        # (deepcopy keeps the shape, so the operand has the same position in the copy)
        new = copy.deepcopy(list(_preorder(cand))[option]) if isinstance(option, int) else option
        _set(_expr_slots(cand)[k], new)
        out.append(cand)
    return out


# -- the driver ---------------------------------------------------------------------------


def minimize(prog: Program, finding: Finding, *, seconds: float = 90.0) -> Program:
    """The smallest program found that still fails as `finding` says."""
    check = fails_same(finding, prog)
    deadline = time.monotonic() + seconds
    if finding.call >= 0:
        for calls, strict in (([prog.calls[finding.call]], [finding.strict]), (prog.calls, [finding.strict])):
            cand = prog.with_changes(calls=calls, strict=strict)
            if (cand.calls != prog.calls or cand.strict != prog.strict) and check(cand):
                prog = cand
                break
    tried: set[str] = set()

    def first_failing(cands: Iterator[Program]) -> Program | None:
        for cand in cands:
            key = cand.source + "\0" + "\0".join(cand.calls)
            if key in tried or time.monotonic() > deadline:
                continue
            tried.add(key)
            if check(cand):
                return cand
        return None

    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        # Statements from the last to the first (later ones depend on earlier ones).
        k = len(_stmt_slots(ast.parse(prog.source))) - 1
        while k >= 0 and time.monotonic() < deadline:
            tree = ast.parse(prog.source)
            found = first_failing(prog.with_changes(source=_unparse(t)) for t in _statement_edits(tree, k))
            if found is not None:
                prog, changed = found, True
            k = min(k - 1, len(_stmt_slots(ast.parse(prog.source))) - 1)
        # Expressions from the first: a replaced one is tried again at the same position.
        for constants in (False, True):
            k = 0
            while time.monotonic() < deadline:
                tree = ast.parse(prog.source)
                if k >= len(_expr_slots(tree)):
                    break
                found = first_failing(prog.with_changes(source=_unparse(t)) for t in _expression_edits(tree, k, constants))
                if found is not None:
                    prog, changed = found, True
                else:
                    k += 1
        found = first_failing(_parameter_candidates(prog))
        while found is not None and time.monotonic() < deadline:
            prog, changed = found, True
            found = first_failing(_parameter_candidates(prog))
    return prog


def _unparse(tree: ast.Module) -> str:
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _parameter_candidates(prog: Program) -> Iterator[Program]:
    """Drop a parameter `f` no longer reads (with its argument); simplify scalar args."""
    tree = ast.parse(prog.source)
    fdef = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == prog.entry)
    used = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)}
    calls = [ast.parse(c) for c in prog.calls]
    for i, param in enumerate(fdef.args.args):
        if param.arg in used:
            continue
        new = copy.deepcopy(tree)
        nf = next(n for n in new.body if isinstance(n, ast.FunctionDef) and n.name == prog.entry)
        del nf.args.args[i]
        new_calls = []
        for c in calls:
            c2 = copy.deepcopy(c)
            tup = _args_tuple(c2)
            if tup is None or len(tup.elts) != len(fdef.args.args):
                break
            del tup.elts[i]
            new_calls.append(_unparse(_prune(c2)))
        else:
            yield prog.with_changes(source=_unparse(new), calls=new_calls)
    if prog.kind != "scalar":
        return
    for k, c in enumerate(calls):
        tup = _args_tuple(c)
        for j, elt in enumerate(tup.elts if tup else []):
            for simple in (ast.Constant(0), ast.Constant(1), ast.Constant(0.0), ast.Constant(1.5), ast.Constant(True)):
                if isinstance(elt, ast.Constant) and type(elt.value) is type(simple.value) and elt.value == simple.value:
                    break
                c2 = copy.deepcopy(c)
                _args_tuple(c2).elts[j] = simple  # type: ignore[union-attr]
                yield prog.with_changes(calls=prog.calls[:k] + [_unparse(c2)] + prog.calls[k + 1:])


def _prune(block: ast.Module) -> ast.Module:
    """A call block without the statements that bind names nothing reads any more (the
    arrays of a dropped parameter)."""
    while True:
        for k, st in enumerate(block.body):
            later = {n.id for s in block.body[k + 1:] for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) and t.id not in later and t.id != "args" for t in st.targets):
                del block.body[k]
                break
            if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Attribute):  # a.flags.writeable = False
                root = st.targets[0]
                while isinstance(root, ast.Attribute):
                    root = root.value  # type: ignore[assignment]
                if isinstance(root, ast.Name) and root.id not in later:
                    del block.body[k]
                    break
        else:
            return block


def _args_tuple(block: ast.Module) -> ast.Tuple | None:
    for st in block.body:
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name) and st.targets[0].id == "args" and isinstance(st.value, ast.Tuple):
            return st.value
    return None


def reproducer(prog: Program, finding: Finding) -> str:
    """A self-contained Python snippet that shows the finding when run."""
    makers = []
    for k, block in enumerate(prog.calls):
        body = "\n".join("    " + line for line in block.strip().splitlines())
        makers.append(f"def make_args{k}():\n{body}\n    return args\n")
    detail = "\n".join("# " + line for line in finding.detail.splitlines()[:6])
    return f"""# cuvil_bc.fuzz {finding.kind}: {finding.key}
# program {prog.seed}
{detail}
import math
import numpy as np
import cuvil_bc
from cuvil_bc.testing import run_with_warnings

{prog.source}
{chr(10).join(makers)}
def show(value):  # (repr prints a NaN of either sign as "nan")
    if isinstance(value, tuple):
        return tuple(show(v) for v in value)
    if isinstance(value, float) and value != value:
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return value

compiled = cuvil_bc.compile(f)
for strict in {prog.strict!r}:  # True: warnings are errors
    for make_args in [{", ".join(f"make_args{k}" for k in range(len(prog.calls)))}]:
        print("CPython :", show(run_with_warnings(f, make_args(), fresh=False, strict=strict)))
        print("cuvil_bc:", show(run_with_warnings(compiled, make_args(), fresh=False, strict=strict)))
print(compiled.explain())
"""
