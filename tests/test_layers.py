"""Imports go one way (docs/architecture.md, "Layers").

Every import in cuvil_bc/, at module level or inside a function, and also those only
for type checking, goes to a module of the same layer or of an earlier one. A stage
that needs something from a later one gets it as a parameter (ir/facts.py, the
`Driver` of pipeline.py, `Compiler.original`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "cuvil_bc"

#: In order: a module may import from its own layer and the ones before it. A module
#: belongs to the layer that names it or the package it is in (the longest match).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("abi", "errors", "warn", "cancel", "priority", "stages", "files", "guards", "originals", "handlers", "records", "_runtime")),
    ("decode", ("decode",)),
    ("cfg", ("cfg",)),
    ("ir", ("ir",)),
    ("typing", ("typing",)),
    ("opt", ("opt",)),  # analyses and optimisations over typed IR
    ("lower", ("lower",)),
    ("driver", ("pipeline", "compiler")),
    ("runtime", ("counters", "frames", "observe", "boxing", "fastpath", "resume", "artifacts", "dispatcher")),  # call time
    ("hook", ("hook",)),
    ("api", ("cuvil_bc", "__main__", "aot", "testing", "fuzz")),  # the package's own functions, tools
)


def _module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    """The index in LAYERS of `module` (a dotted name under cuvil_bc)."""
    rest = module.split(".")[1:]
    best: tuple[int, int] | None = None  # (length of the match, layer)
    for n, (_, names) in enumerate(LAYERS):
        for name in names:
            parts = [] if name == "cuvil_bc" else name.split(".")
            if rest[: len(parts)] == parts and (best is None or len(parts) > best[0]):
                best = (len(parts), n)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[1]


def _imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, module) for each module of cuvil_bc that the file imports."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "cuvil_bc"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "cuvil_bc":
                continue
            for a in node.names:
                # `from . import x` imports the module x when there is one
                sub = root.parent.joinpath(*f"{target}.{a.name}".split("."))
                is_module = sub.is_dir() or any(sub.parent.glob(f"{sub.name}.*py")) or any(sub.parent.glob(f"{sub.name}.*so"))
                found.append((node.lineno, f"{target}.{a.name}" if is_module else target))
    return sorted(set(found))


def _violations(root: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        here = _layer(module)
        for line, target in _imports(path, root):
            there = _layer(target)
            if there > here:
                rel = path.relative_to(root.parent)
                out.append(f"{rel}:{line}: {module} ({LAYERS[here][0]}) imports {target} ({LAYERS[there][0]})")
    return out


def test_imports_go_one_way() -> None:
    assert _violations() == []


def test_every_module_has_a_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        _layer(_module_name(path))


@pytest.mark.parametrize(
    "source, expect",
    [
        ("from ..lower import codegen\n", "imports cuvil_bc.lower.codegen (lower)"),
        ("def f():\n    from ..hook.hot import RUNTIME\n", "imports cuvil_bc.hook.hot (hook)"),
        ("import cuvil_bc.dispatcher\n", "imports cuvil_bc.dispatcher (runtime)"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..typing.types import Type\n", "imports cuvil_bc.typing.types (typing)"),
    ],
)
def test_the_check_finds_an_upward_import(tmp_path: Path, source: str, expect: str) -> None:
    """A module of ir/ that imports from a later layer, in each way an import can be
    written, is reported (the check itself can fail)."""
    import shutil

    copy = tmp_path / "cuvil_bc"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "ir" / "upward.py").write_text(source)
    assert [v for v in _violations(copy) if "upward" in v] == [f"cuvil_bc/ir/upward.py:{source.count(chr(10))}: cuvil_bc.ir.upward (ir) {expect}"]


def _runtime_imports(path: Path, root: Path = PACKAGE) -> set[str]:
    """The modules of cuvil_bc that the file imports when it runs (at module level or
    in a function): `_imports` less those only for type checking."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            typing_only |= {n.lineno for stmt in node.body for n in ast.walk(stmt) if hasattr(n, "lineno")}
    return {target for line, target in _imports(path, root) if line not in typing_only}


def _cycles(root: Path = PACKAGE) -> list[list[str]]:
    """The sets of modules that import each other in a circle when they run (strongly
    connected components of more than one module, or a module importing itself)."""
    graph = {_module_name(p, root): _runtime_imports(p, root) for p in sorted(root.rglob("*.py"))}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v] & graph.keys()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_modules_import_each_other() -> None:
    """Within a layer too, imports form no circle (lower/ was one of seven modules):
    a module can be read, tested and changed knowing only what it imports. (Imports
    for type checking alone may: an op names its block's type, a block its ops'.)"""
    assert _cycles() == []


def test_the_check_finds_a_circle_of_imports(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "cuvil_bc"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "lower" / "ring_a.py").write_text("def f():\n    from . import ring_b\n")
    (copy / "lower" / "ring_b.py").write_text("from . import ring_a\n")
    assert _cycles(copy) == [["cuvil_bc.lower.ring_a", "cuvil_bc.lower.ring_b"]]


#: The code that runs compiled functions: a call, its deopt, a resume, the hook's
#: counters. None of it may need llvmlite (so that code loaded ready-made could run
#: without it): it reaches the compiler only to compile.
CALL_TIME = ("cuvil_bc.dispatcher", "cuvil_bc.fastpath", "cuvil_bc.boxing", "cuvil_bc.resume", "cuvil_bc.counters", "cuvil_bc.frames")
COMPILE = "cuvil_bc.compiler"


def _external_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def _reaches_llvmlite(root: Path = PACKAGE) -> list[str]:
    """The chains of imports (at any level) from a call-time module to llvmlite that
    do not pass through the compiler."""
    files = {_module_name(p, root): p for p in root.rglob("*.py")}
    chains = []
    work = [(m, (m,)) for m in CALL_TIME]
    seen: set[str] = set()
    while work:
        module, chain = work.pop()
        if module in seen or module not in files:
            continue
        seen.add(module)
        if "llvmlite" in _external_imports(files[module]):
            chains.append(" -> ".join(chain + ("llvmlite",)))
        for _, target in _imports(files[module], root):
            parts = target.split(".")
            # importing a.b.c runs a/__init__.py and a/b/__init__.py too
            for n in range(2, len(parts) + 1):
                step = ".".join(parts[:n])
                if step != COMPILE:
                    work.append((step, chain + (step,)))
    return sorted(chains)


def test_call_time_code_does_not_import_llvmlite() -> None:
    assert _reaches_llvmlite() == []


def test_the_llvmlite_check_can_fail(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "cuvil_bc"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "boxing.py", "a") as f:
        f.write("\n\ndef _later():\n    from .lower import ltypes\n")
    assert any(c.endswith("cuvil_bc.boxing -> cuvil_bc.lower.ltypes -> llvmlite") for c in _reaches_llvmlite(copy))


def test_every_package_is_installed() -> None:
    # pyproject.toml lists the packages a non-editable install copies: a new one left
    # out (cuvil_bc.opt was) works in the editable checkout and nowhere else.
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {_module_name(p.parent / "__init__.py", PACKAGE) for p in PACKAGE.rglob("*.py")}
    assert found == listed
