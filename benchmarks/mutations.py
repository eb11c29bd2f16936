"""Mutation check of the lowering and its guards (issue 15).

Native code is only as exact as its guards: an overflow test, a zero-divisor test, a
bounds test or a NumPy-warning test that is missing or wrong gives a silently wrong
answer instead of a deoptimisation. This script weakens the guards one at a time and
asks whether the test suite notices. Each mutant changes one site of the source of
`cuvil_bc/lower/*.py`:

* ``drop-guard``: a guard never fires. ``deopt_if(cond)`` (and ``deopt_if_refined``,
  ``warn_if``, a strip's ``fail_if``) get a constant-false condition;
  ``warn_if_not_finite(x)`` and ``deopt_if_warned()`` become ``None``.
* ``flip-compare``: an ``icmp_signed``/``icmp_unsigned``/``fcmp_ordered``/
  ``fcmp_unordered`` predicate is negated (``"<"`` -> ``">="``, ``"=="`` -> ``"!="``).
* ``boundary``: a strict predicate becomes non-strict or back (``"<"`` <-> ``"<="``),
  the off-by-one a bounds or range test is most likely to have.
* ``unchecked``: ``em.checked("sadd", a, b)`` becomes ``em.builder.add(a, b)``.
* ``skip-deopt``: a conditional branch to a deopt block (or to a strip's undo or
  refusal path, or a callee's failure path) goes to its continuation instead.

Sites are found with `ast` (one mutant per site), so new guards are picked up without
editing this file. The mutants run in a temporary copy of the package and its tests
(``cuvil_bc/``, including the built ``_runtime*.so``, ``tests/``, ``pyproject.toml``):
other engineers work in the repository's tree concurrently, so it is never written to,
not even through ``.git`` (no ``git worktree``). ``PYTHONPATH`` points at the copy, which
then shadows the editable install (setuptools' editable finder sits at the end of
``sys.meta_path``); a small pytest plugin records where every ``cuvil_bc`` module came
from, and a run that imported anything from outside the copy aborts the check.

A mutant is *killed* when pytest fails, times out or crashes, *survives* when it
passes, and is *not applicable* when the mutated module does not import. The
unmutated copy runs first and must pass. A second run with every selected site
instrumented records which sites the lowering evaluates at all: a mutant whose site is
never reached behaves exactly like the original, so it is reported as surviving
("unreached") without a run of its own (``--no-reachability`` runs it anyway). Only
one pytest runs at a time.

    python benchmarks/mutations.py --list                     # every site
    python benchmarks/mutations.py --sites 40 --seed 1        # a sample of 40 mutants
    python benchmarks/mutations.py --only 'numeric.py.*drop-guard' --json out.json
"""

from __future__ import annotations

import argparse
import ast
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The default selection: the equivalence tests of the scalar operators, builtins, math
#: and array writes, plus the reduced fuzzing finds and regressions (about a minute on
#: an idle machine). The cheapest and most pointed files come first: with ``-x`` a
#: killed mutant stops at its first failure, so most mutants cost a few seconds.
DEFAULT_TESTS = (
    "tests/test_regressions.py",
    "tests/test_found_by_fuzzing.py",
    "tests/test_equiv_builtins.py",
    "tests/test_equiv_arith.py",
    "tests/test_equiv_math.py",
    "tests/test_equiv_array_writes.py",
    "tests/test_mutation_survivors.py",
    "tests/test_array_groups.py",
    "tests/test_array_short_strips.py",
)
DEFAULT_FILES = ("cuvil_bc/lower/*.py",)

#: Guard calls whose first argument is the condition under which they deoptimise.
CONDITION_GUARDS = frozenset({"deopt_if", "deopt_if_refined", "warn_if", "fail_if"})
#: Guard calls without a condition argument: dropping them means not calling them.
STATEMENT_GUARDS = frozenset({"warn_if_not_finite", "deopt_if_warned"})
COMPARES = frozenset({"icmp_signed", "icmp_unsigned", "fcmp_ordered", "fcmp_unordered"})
NEGATED = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
BOUNDARY = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
UNCHECKED = {"sadd": "add", "ssub": "sub", "smul": "mul"}
#: Names the lowering gives the blocks a failed test branches to, besides
#: ``deopt_block()`` itself: a callee's failure (codegen), the cold path of a refined
#: guard (emitter), a strip's undo and refusal paths (strips, groups).
FAILURE_BLOCKS = frozenset({"bail", "cold", "undo", "refused", "refuse"})


# -- mutation sites -------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """One mutation: replace bytes ``start:end`` of `path` by `replacement`."""

    path: str  # relative to the repository, e.g. "cuvil_bc/lower/numeric.py"
    line: int
    col: int  # 1-based, in bytes of the line (as `ast` counts)
    operator: str
    start: int  # byte offsets into the file
    end: int
    original: str
    replacement: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"

    @property
    def label(self) -> str:
        """What --only matches against: where, operator and the change itself."""
        return f"{self.where} {self.operator} {self.change}"

    @property
    def change(self) -> str:
        return f"{_short(self.original)} -> {_short(self.replacement)}"

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement.encode() + source[self.end :]


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _SiteFinder(ast.NodeVisitor):
    """Collects the sites of one file. Offsets are byte offsets, because `ast` column
    offsets count UTF-8 bytes (the source has non-ASCII comments)."""

    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.source = source
        self.line_starts = [0]
        for line in source.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        # A constant-false i1 condition; every lowering module imports llvmlite's `ir`
        # today, and the fallback keeps a module that does not from failing on the name.
        if _imports_ir(ast.parse(source)):
            self.false = "ir.Constant(ir.IntType(1), 0)"
        else:
            self.false = '__import__("llvmlite.ir").ir.Constant(__import__("llvmlite.ir").ir.IntType(1), 0)'
        self.sites: list[Site] = []
        self._statement_calls: set[int] = set()

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.line_starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end = self.line_starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
        return start, end

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end].decode()

    def add(self, node: ast.AST, operator: str, replacement: str, at: ast.AST | None = None) -> None:
        """A site replacing `node`'s text; `at` (default `node`) gives its position."""
        start, end = self.span(node)
        original = self.source[start:end].decode()
        if original == replacement:
            return
        at = at or node
        self.sites.append(
            Site(self.path, at.lineno, at.col_offset + 1, operator, start, end, original, replacement)  # type: ignore[attr-defined]
        )

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self._statement_calls.add(id(node.value))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Attribute):
            return
        name = node.func.attr
        if name in CONDITION_GUARDS and node.args:
            self.add(node.args[0], "drop-guard", self.false, at=node)
        elif name in STATEMENT_GUARDS and id(node) in self._statement_calls:
            self.add(node, "drop-guard", "None")
        elif name in COMPARES and node.args and _string(node.args[0]) in NEGATED:
            pred = _string(node.args[0])
            assert pred is not None
            self.add(node.args[0], "flip-compare", f'"{NEGATED[pred]}"', at=node)
            if pred in BOUNDARY:
                self.add(node.args[0], "boundary", f'"{BOUNDARY[pred]}"', at=node)
        elif name == "checked" and len(node.args) == 3 and _string(node.args[0]) in UNCHECKED:
            op = UNCHECKED[_string(node.args[0])]  # type: ignore[index]
            emitter = self.text(node.func.value)
            a, b = self.text(node.args[1]), self.text(node.args[2])
            self.add(node, "unchecked", f"{emitter}.builder.{op}({a}, {b})")
        elif name == "cbranch" and len(node.args) == 3:
            _, if_true, if_false = node.args
            if self._fails(if_true) and not self._fails(if_false):
                self.add(if_true, "skip-deopt", self.text(if_false), at=node)
            elif self._fails(if_false) and not self._fails(if_true):
                self.add(if_false, "skip-deopt", self.text(if_true), at=node)

    def _fails(self, target: ast.AST) -> bool:
        """Whether a branch target is the path a failed test takes."""
        if isinstance(target, ast.Name):
            return target.id in FAILURE_BLOCKS
        return "deopt_block" in self.text(target)


def _imports_ir(module: ast.Module) -> bool:
    """Whether the module binds `ir` to llvmlite.ir at its top level."""
    for node in module.body:
        if isinstance(node, ast.ImportFrom) and node.module == "llvmlite":
            if any(alias.name == "ir" and alias.asname in (None, "ir") for alias in node.names):
                return True
    return False


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def find_sites(root: Path, patterns: tuple[str, ...]) -> list[Site]:
    sites: list[Site] = []
    for pattern in patterns:
        for name in sorted(glob.glob(str(root / pattern))):
            path = Path(name)
            source = path.read_bytes()
            finder = _SiteFinder(path.relative_to(root).as_posix(), source)
            finder.visit(ast.parse(source, filename=name))
            sites.extend(finder.sites)
    return sorted(set(sites), key=lambda s: (s.path, s.start, s.operator))


def select_sites(sites: list[Site], only: str | None, count: int | None, seed: int) -> list[Site]:
    """Filter by --only (a regex searched in `Site.label`), then sample --sites of them."""
    if only is not None:
        pattern = re.compile(only)
        sites = [s for s in sites if pattern.search(s.label)]
    if count is not None and count < len(sites):
        chosen = set(random.Random(seed).sample(range(len(sites)), count))
        sites = [s for i, s in enumerate(sites) if i in chosen]
    return sites


# -- the temporary copy ----------------------------------------------------------------

#: A pytest plugin (``-p _mutation_probe``) for the copy: it records which file every
#: imported ``cuvil_bc`` module came from, so the driver can tell that the copy (and so
#: the mutant) is what ran, not the editable install.
PROBE = textwrap.dedent(
    '''
    """Written by benchmarks/mutations.py: records where cuvil_bc was imported from and,
    in the reachability run, which mutation sites the lowering evaluated."""
    import builtins
    import json
    import os
    import sys

    hits = set()


    def hit(site):
        hits.add(site)


    builtins.__cuvil_mutation_hit__ = hit  # before any test module imports cuvil_bc


    def pytest_sessionfinish(session, exitstatus):
        modules = {
            name: getattr(module, "__file__", None)
            for name, module in list(sys.modules.items())
            if name == "cuvil_bc" or name.startswith("cuvil_bc.")
        }
        with open(os.environ["CUVIL_MUTATION_PROBE"], "w") as f:
            json.dump({"modules": modules, "hits": sorted(hits)}, f)
    '''
)
HIT = "__cuvil_mutation_hit__"


class _Instrument(ast.NodeTransformer):
    """Rewrites every site's expression X as ``__cuvil_mutation_hit__(key) or X``: the
    site is recorded before X is evaluated (even if X then raises), and the value is
    X's own (``None or X`` is X). Nested sites (a compare inside a dropped guard's
    condition) nest."""

    def __init__(self, finder: _SiteFinder, keys: set[str]) -> None:
        self.finder = finder
        self.keys = keys

    def visit(self, node: ast.AST) -> ast.AST:
        node = self.generic_visit(node)
        if isinstance(node, ast.expr):
            key = site_key(self.finder.path, *self.finder.span(node))
            if key in self.keys:
                record = ast.Call(ast.Name(HIT, ast.Load()), [ast.Constant(key)], [])
                return ast.copy_location(ast.BoolOp(ast.Or(), [record, node]), node)
        return node


def site_key(path: str, start: int, end: int) -> str:
    """Names a site's span (sites of different operators may share one)."""
    return f"{path}:{start}:{end}"


def instrumented(path: str, source: bytes, sites: list[Site]) -> str:
    """The source of `path` with every one of `sites` recording that it was reached
    (formatting and comments are lost: only the reachability run executes it)."""
    finder = _SiteFinder(path, source)
    tree = _Instrument(finder, {site_key(s.path, s.start, s.end) for s in sites}).visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


@dataclass
class Outcome:
    result: str  # "passed", "failed", "timeout", "crash"
    seconds: float
    detail: str  # the first failing test, the signal, or the output's last lines
    modules: dict[str, str | None] | None  # from the probe (None after a timeout or crash)
    hits: set[str]  # keys of the sites evaluated (of the reachability run)


class Workspace:
    """A temporary copy of the package and its tests in which mutants run."""

    def __init__(self, repo: Path, python: str, tests: list[str], pytest_args: list[str], profile: str) -> None:
        self.repo = repo
        self.root = Path(tempfile.mkdtemp(prefix="cuvil_mutations_")).resolve()
        self.python = python
        self.tests = tests
        self.pytest_args = pytest_args
        self.profile = profile
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
        shutil.copytree(repo / "cuvil_bc", self.root / "cuvil_bc", ignore=ignore)
        shutil.copytree(repo / "tests", self.root / "tests", ignore=ignore)
        shutil.copy2(repo / "pyproject.toml", self.root / "pyproject.toml")  # pytest's rootdir and config
        (self.root / "_mutation_probe.py").write_text(PROBE)
        if not any((self.root / "cuvil_bc").glob("_runtime*.so")):
            raise SystemExit(f"no built cuvil_bc/_runtime*.so in {repo}: build the package first")

    def env(self, write_bytecode: bool) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), *filter(None, [env.get("PYTHONPATH")])])
        env["HYPOTHESIS_PROFILE"] = self.profile
        env["CUVIL_MUTATION_PROBE"] = str(self.root / "probe.json")
        if not write_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def run(self, timeout: float | None, write_bytecode: bool = False) -> Outcome:
        # Each mutant starts without hypothesis' example database: an example that
        # killed one mutant would otherwise be replayed against the next, and the
        # result would depend on the order of the mutants.
        shutil.rmtree(self.root / ".hypothesis", ignore_errors=True)
        probe = self.root / "probe.json"
        probe.unlink(missing_ok=True)
        cmd = [self.python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "_mutation_probe"]
        cmd += self.pytest_args + self.tests
        began = time.monotonic()
        # A session of its own, so that a timeout kills pytest and anything it started.
        proc = subprocess.Popen(
            cmd, cwd=self.root, env=self.env(write_bytecode), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return Outcome("timeout", time.monotonic() - began, f"over {timeout:.0f}s", None, set())
        except BaseException:  # Ctrl-C does not reach a session of its own: end it here
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        seconds = time.monotonic() - began
        recorded = json.loads(probe.read_text()) if probe.exists() else {"modules": None, "hits": []}
        modules, hits = recorded["modules"], set(recorded["hits"])
        if proc.returncode == 0:
            return Outcome("passed", seconds, "", modules, hits)
        if proc.returncode < 0:
            return Outcome("crash", seconds, f"signal {-proc.returncode}", modules, hits)
        failing = re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
        tail = " | ".join(output.strip().splitlines()[-3:])
        return Outcome("failed", seconds, failing[0] if failing else f"exit {proc.returncode}: {tail}", modules, hits)

    def imports(self, module: str) -> str | None:
        """None if `module` imports in the copy, else the error's last line."""
        code = f"import {module}"
        proc = subprocess.run(
            [self.python, "-c", code], cwd=self.root, env=self.env(False), capture_output=True, text=True, timeout=120
        )
        if proc.returncode == 0:
            return None
        return (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]

    def foreign_modules(self, modules: dict[str, str | None]) -> list[str]:
        """The cuvil_bc modules pytest imported from outside the copy."""
        prefix = str(self.root) + os.sep
        return [f"{n} from {f}" for n, f in modules.items() if f is not None and not os.path.realpath(f).startswith(prefix)]

    def reachability(self, sites: list[Site]) -> Outcome:
        """Run the tests once with every site instrumented (`instrumented`): a mutant
        whose site the lowering never evaluates behaves exactly like the original, so it
        survives without being run (each run of a survivor costs a whole test run)."""
        by_path: dict[str, list[Site]] = {}
        for site in sites:
            by_path.setdefault(site.path, []).append(site)
        originals = {path: (self.root / path).read_bytes() for path in by_path}
        try:
            for path, group in by_path.items():
                (self.root / path).write_text(instrumented(path, originals[path], group))
                self.forget_bytecode(self.root / path)
            return self.run(timeout=None)
        finally:
            for path, text in originals.items():
                (self.root / path).write_bytes(text)
                self.forget_bytecode(self.root / path)

    def forget_bytecode(self, path: Path) -> None:
        """Remove the cached bytecode of `path`, so the next import compiles its text."""
        for pyc in (path.parent / "__pycache__").glob(path.stem + ".*.pyc"):
            pyc.unlink()

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# -- running the mutants ---------------------------------------------------------------


@dataclass
class Result:
    where: str
    operator: str
    change: str
    result: str  # "killed", "survived", "not applicable"
    how: str  # killed: "failed", "timeout" or "crash"; survived: "unreached" or ""
    seconds: float
    detail: str


def module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def run_mutant(ws: Workspace, site: Site, timeout: float, reached: bool) -> Result:
    path = ws.root / site.path
    original = path.read_bytes()
    mutated = site.apply(original)

    def result(kind: str, how: str = "", seconds: float = 0.0, detail: str = "") -> Result:
        return Result(site.where, site.operator, site.change, kind, how, seconds, detail)

    try:
        compile(mutated, site.path, "exec")
    except SyntaxError as e:
        return result("not applicable", detail=f"SyntaxError: {e}")
    if not reached:
        return result("survived", "unreached", detail="the tests never evaluate this site")
    try:
        path.write_bytes(mutated)
        ws.forget_bytecode(path)
        error = ws.imports(module_name(site.path))
        if error is not None:
            return result("not applicable", detail=error)
        outcome = ws.run(timeout)
    finally:
        path.write_bytes(original)
        ws.forget_bytecode(path)
    if outcome.modules is not None:
        foreign = ws.foreign_modules(outcome.modules)
        if foreign:
            raise SystemExit(f"the mutant ran code from outside the copy: {foreign[:3]}")
        if module_name(site.path) not in outcome.modules:
            outcome.detail = (outcome.detail + "; " if outcome.detail else "") + "mutated module never imported"
    if outcome.result == "passed":
        return result("survived", seconds=outcome.seconds, detail=outcome.detail)
    return result("killed", outcome.result, outcome.seconds, outcome.detail)


def summary(results: list[Result]) -> str:
    killed = [r for r in results if r.result == "killed"]
    survived = sum(r.result == "survived" for r in results)
    applicable = [r for r in results if r.result != "not applicable"]
    rate = 100.0 * survived / len(applicable) if applicable else 0.0
    timeouts = sum(r.how == "timeout" for r in killed)
    crashes = sum(r.how == "crash" for r in killed)
    unreached = sum(r.how == "unreached" for r in results)
    return (
        f"mutants: {len(results)}, killed {len(killed)} (timeouts {timeouts}, crashes {crashes}), "
        f"survived {survived} ({rate:.1f}% of applicable; {unreached} never reached by the tests), "
        f"not applicable {len(results) - len(applicable)}"
    )


def breakdown(results: list[Result]) -> list[str]:
    """Survivors per operator and per file: where the guards are least tested."""
    lines = []
    for title, key in (("operator", lambda r: r.operator), ("file", lambda r: r.where.split(":")[0])):
        groups: dict[str, list[Result]] = {}
        for r in results:
            if r.result != "not applicable":
                groups.setdefault(key(r), []).append(r)
        parts = [f"{k} {sum(r.result == 'survived' for r in v)}/{len(v)}" for k, v in sorted(groups.items())]
        lines.append(f"  survived by {title}: " + ", ".join(parts))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list the selected sites and exit (nothing runs)")
    parser.add_argument("--sites", type=int, metavar="N", help="run a random sample of N of the selected sites")
    parser.add_argument("--seed", type=int, help="seed of that sample (default: a random one, printed)")
    parser.add_argument("--only", metavar="PATTERN", help="regex searched in 'path:line:col operator change'")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES), metavar="GLOB", help="sources to mutate, relative to the repository (default: %(default)s)")
    parser.add_argument("--tests", nargs="+", default=list(DEFAULT_TESTS), metavar="TEST", help="pytest files or node ids, relative to the repository")
    parser.add_argument("--pytest-args", default="", metavar="ARGS", help="extra pytest arguments, one string (e.g. '-k arith')")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="per mutant (default: twice the baseline run plus 30 s)")
    parser.add_argument("--budget", type=float, metavar="MINUTES", help="start no new mutant after this long (the summary covers those run)")
    parser.add_argument("--no-reachability", action="store_true", help="run every mutant, also those whose site the tests never evaluate")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs pytest (default: this one)")
    parser.add_argument("--hypothesis-profile", default="ci", help="HYPOTHESIS_PROFILE for the runs (default: ci, derandomized)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    parser.add_argument("--repo", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    if args.list:
        every = find_sites(args.repo, tuple(args.files))
        sites = select_sites(every, args.only, args.sites, seed)
        for s in sites:
            print(f"{s.where}  {s.operator:<12} {s.change}")
        sampled = f", sample seed {seed}" if args.sites is not None else ""
        print(f"{len(sites)} of {len(every)} sites{sampled}")
        return 0

    began = time.monotonic()
    ws = Workspace(args.repo, args.python, args.tests, args.pytest_args.split(), args.hypothesis_profile)
    try:
        # Sites come from the copy, so that their offsets match the text that is mutated
        # even if the repository's tree changes meanwhile.
        every = find_sites(ws.root, tuple(args.files))
        sites = select_sites(every, args.only, args.sites, seed)
        print(f"copy: {ws.root}")
        print(f"python: {args.python}; tests: {' '.join(args.tests)}")
        print(f"{len(sites)} of {len(every)} sites (seed {seed})", flush=True)

        # The baseline writes the copy's bytecode, which later runs reuse (a mutant's
        # own module is always compiled afresh and not written).
        base = ws.run(timeout=None, write_bytecode=True)
        if base.modules is None or ws.foreign_modules(base.modules) or "cuvil_bc._runtime" not in base.modules:
            print(f"baseline: the copy was not what pytest imported: {base.modules and ws.foreign_modules(base.modules)}")
            return 2
        if base.result != "passed":
            print(f"baseline FAILED ({base.result}, {base.seconds:.0f}s): {base.detail}; no mutant can be judged")
            return 2
        timeout = args.timeout if args.timeout is not None else 2 * base.seconds + 30
        print(f"baseline passed in {base.seconds:.1f}s (cuvil_bc imported from the copy); timeout {timeout:.0f}s per mutant", flush=True)

        reached = {site_key(s.path, s.start, s.end) for s in sites}
        if not args.no_reachability and sites:
            reach = ws.reachability(sites)
            if reach.result == "passed":
                reached = reach.hits
                print(f"reachability run: {sum(site_key(s.path, s.start, s.end) in reached for s in sites)} of {len(sites)} sites reached ({reach.seconds:.1f}s)", flush=True)
            else:  # then every mutant runs: slower, never wrong
                print(f"reachability run {reach.result} ({reach.detail}): every mutant will run", flush=True)

        results: list[Result] = []
        width = len(str(len(sites)))
        for i, site in enumerate(sites, 1):
            if args.budget is not None and time.monotonic() - began > 60 * args.budget:
                print(f"budget of {args.budget:g} min used up: {len(sites) - i + 1} mutants not run")
                break
            try:
                r = run_mutant(ws, site, timeout, site_key(site.path, site.start, site.end) in reached)
            except KeyboardInterrupt:  # report what has run so far
                print(f"interrupted: {len(sites) - i + 1} mutants not run")
                break
            results.append(r)
            status = r.result + (f" ({r.how})" if r.how and r.how != "failed" else "")
            detail = f"  [{r.detail}]" if r.detail else ""
            print(f"[{i:>{width}}/{len(sites)}] {r.where} {r.operator:<12} {status:<20} {r.seconds:5.1f}s  {r.change}{detail}", flush=True)

        print(summary(results))
        for line in breakdown(results):
            print(line)
        survivors = [r for r in results if r.result == "survived"]
        if survivors:
            print("survivors:")
            for r in survivors:
                print(f"  {r.where} {r.operator}: {r.change}")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "python": args.python, "tests": args.tests, "seed": seed, "sites_total": len(every),
                "baseline_seconds": base.seconds, "timeout": timeout, "summary": summary(results),
                "results": [asdict(r) for r in results],
            }, indent=2) + "\n")
        return 0
    finally:
        if args.keep:
            print(f"kept: {ws.root}")
        else:
            ws.remove()


if __name__ == "__main__":
    sys.exit(main())
