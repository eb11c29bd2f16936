"""On-stack replacement of a script's module-level loops (issue 19; hook/osr.py).

Each program runs under plain CPython and under the hook (on-stack replacement forced,
compiles on the program's thread); output, errors and exit status must be the same,
and the report says whether the module's code entered native code. The programs read
the loops' names after the loop, at exit, from an excepthook and after an exception,
where native code had them as its locals.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from .test_hook_e2e import report, run, same
from .test_rawcode import _same

FORCED = {"CUVIL_BC_OSR": "always", "CUVIL_BC_CACHE": "0"}

PROGRAMS = {
    # A for loop with an else and a break: two exits; names read at exit by atexit.
    "exits": (
        "import atexit\n"
        "total = 0\n"
        "atexit.register(lambda: print('at exit', total, i))\n"
        "for i in range(20000):\n    total += i * i\n    if total > 10**20:\n        break\n"
        "else:\n    print('no break', total)\n"
        "print('after', total, i)\n"
        "for i in range(20000):\n    total -= i\n    if i == 15000:\n        break\n"
        "else:\n    print('no break 2')\n"
        "print('after 2', total, i)\n",
        2,
    ),
    # A while loop whose division fails after the entry: CPython's traceback, and the
    # names as they were when it raised.
    "raises": (
        "import atexit\n"
        "atexit.register(lambda: print('at exit', n, s, last))\n"
        "n = 0\ns = 0.0\nlast = 0.0\n"
        "while n < 50000:\n    n += 1\n    last = n * 0.5\n    s += 1.0 / (40000 - n)\n"
        "print(s)\n",
        1,
    ),
    # An excepthook that reads the names.
    "excepthook": (
        "import sys\n"
        "def hook(t, v, tb):\n    print('hook sees', total, i, file=sys.stderr)\n    sys.__excepthook__(t, v, tb)\n"
        "sys.excepthook = hook\n"
        "total = 0\n"
        "for i in range(100000):\n    total += 10**6 // (90000 - i)\n"
        "print(total)\n",
        1,
    ),
    # A nest entered in its inner loop; an int past 64 bits; a name that changes type.
    "nest": (
        "big = 1\ngrid = 0\n"
        "for r in range(300):\n    for c in range(200):\n        grid += (r ^ c) & 15\n"
        "    if r > 250:\n        big = big * 3 + r\n"
        "x = 0\n"
        "for k in range(100000):\n    x = x + 0.5 if k % 2 else x + 1\n"
        "print(grid, big, x, r, c, k)\n",
        2,
    ),
    # Arrays the loop reads (passed to the entry) and writes into.
    "arrays": (
        "import numpy as np\n"
        "n = 100000\na = np.arange(n, dtype=np.float64)\nb = np.zeros(n)\ns = 0.0\n"
        "for i in range(1, n):\n    b[i] = b[i - 1] * 0.5 + a[i]\n    s += b[i]\n"
        "print(s, b[-1], b.sum())\n",
        1,
    ),
    # `while True` with a break, and a loop that ends the module, whose break CPython
    # compiles as a copy of the module's `return None` inside the loop.
    "ends_module": (
        "i = 0\nacc = 0\n"
        "while True:\n    i += 1\n    acc += i % 5\n    if i >= 300000:\n        break\n"
        "print(acc)\n"
        "j = 0\n"
        "while j < 100000:\n    j += 1\n    if j == 99999:\n        break\n",
        2,
    ),
    # A name the loop writes only late: entered once it is bound.
    "bound_late": (
        "total = 0\n"
        "for i in range(60000):\n    if i > 30000:\n        late = i\n        total += late % 3\n"
        "print(total, late)\n",
        1,
    ),
    # A function the first loop calls reads a name the loop writes: that loop stays
    # interpreted; the second loop's callee reads only what the loop never writes.
    "callee_reads": (
        "def scaled(x):\n    return x * factor\n\n"
        "def peek():\n    return acc\n\n"
        "factor = 3\nacc = 0\n"
        "for i in range(30000):\n    acc += scaled(i) % 7\n    if i == 29999:\n        print('peek', peek())\n"
        "print(acc)\n"
        "acc2 = 0\n"
        "for j in range(30000):\n    acc2 += scaled(j) % 11\n"
        "print(acc2)\n",
        1,
    ),
    # Another thread runs: it could read the names while native code has them.
    "thread": (
        "import threading, time\n"
        "stop = False\n"
        "def spin():\n    while not stop:\n        time.sleep(0.001)\n\n"
        "t = threading.Thread(target=spin)\nt.start()\n"
        "total = 0\n"
        "for i in range(200000):\n    total += i % 7\n"
        "stop = True\nt.join()\nprint(total)\n",
        0,
    ),
    # A signal handler in Python reads a name the loop writes.
    "handler": (
        "import signal\n"
        "seen = []\n"
        "def handler(sig, frame):\n    seen.append(count)\n\n"
        "signal.signal(signal.SIGALRM, handler)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.02)\n"
        "count = 0\n"
        "for i in range(2_000_000):\n    count += 1\n"
        "print(count, len(seen), bool(seen) and seen[0] > 0)\n",
        0,
    ),
    # Found by a helper: Python code that runs on its own during the loop would read
    # the names as they were at entry (a NumPy error callback, a replaced
    # warnings.showwarning), and a value referred to weakly would be let go late
    # (the entry's arguments keep it alive): none of these is entered.
    "errcall": (
        "import numpy as np\n"
        "m = np.int64(1)\ni = 0\n"
        "def onerr(kind, flag):\n    print('numpy error', kind, 'at i =', i, 'm =', m)\n\n"
        "np.seterr(over='call')\nnp.seterrcall(onerr)\n"
        "for i in range(100000):\n"
        "    m = m * np.int64(3) if i == 50000 else m + np.int64(i) * np.int64(i) * np.int64(i) * np.int64(7)\n"
        "print(repr(m))\n",
        0,
    ),
    "showwarning": (
        "import warnings\nimport numpy as np\n"
        "arr = np.arange(100000, dtype=np.int64)\nm = 0\ni = 0\n"
        "def show(message, category, filename, lineno, file=None, line=None):\n    print('warned at', i, m)\n\n"
        "warnings.showwarning = show\n"
        "for i in range(100000):\n    m += arr[i] * arr[i] * arr[i] * 1000\n"
        "print(m)\n",
        0,
    ),
    "weakref": (
        "import weakref\nimport numpy as np\n"
        "a = np.zeros(3)\ns = 0.0\ni = 0\n"
        "def cb():\n    print('finalized at i =', i, 's =', s)\n\n"
        "weakref.finalize(a, cb)\n"
        "for i in range(100000):\n    s += a[i % 3]\n    if i == 50000:\n        a = np.ones(3)\n"
        "print(s)\n",
        0,
    ),
    # Also found by the helper: an exception that left the entry showed the entry's
    # frame in its traceback (only the loop's names as its locals, another code).
    "traceback_frame": (
        "import sys\n"
        "def hook(t, v, tb):\n"
        "    while tb.tb_next is not None:\n        tb = tb.tb_next\n"
        "    f = tb.tb_frame\n"
        "    print(type(v).__name__, tb.tb_lineno, f.f_code.co_name, f.f_code.co_varnames, f.f_locals is f.f_globals)\n"
        "    print(sorted(k for k in f.f_locals if not k.startswith('__')), f.f_locals['a'], f.f_locals['i'])\n\n"
        "sys.excepthook = hook\n"
        "a = 0\n"
        "for i in range(100000):\n    a += 1000 // (50000 - i)\n",
        1,
    ),
    # A list the loop appends to: refused before the front end loads.
    "list": (
        "import sys\n"
        "lst = []\ntotal = 0\n"
        "for i in range(200000):\n    lst.append(i & 7)\n    total += i\n"
        "print(len(lst), total, 'cuvil_bc.typing.infer' in sys.modules)\n",
        0,
    ),
    # Found by the helper: a function reached through a default argument reads a
    # name the loop writes (since calling a default that is a function compiles).
    "default_reads": (
        "total = 0\n"
        "def peek():\n    return total\n\n"
        "def helper(x, g=peek):\n    return g()\n\n"
        "s = 0\n"
        "for i in range(100000):\n    total += 1\n    s += helper(i)\n"
        "print(total, s)\n",
        0,
    ),
    # The same without the read: entered.
    "default_calls": (
        "def twice(v):\n    return v * 2\n\n"
        "def helper(x, g=twice):\n    return g(x)\n\n"
        "s = 0\n"
        "for i in range(100000):\n    s += helper(i)\n"
        "print(s)\n",
        1,
    ),
    # A loop the module reaches through `global` in a function (LOAD_GLOBAL at module
    # level) is left as it is.
    "global_statement": (
        "def bump():\n    global step\n    step += 1\n\n"
        "step = 1\ntotal = 0\n"
        "for i in range(30000):\n    total += step * i % 7\n    if i % 1000 == 0:\n        bump()\n"
        "print(total, step)\n",
        0,
    ),
}


def _module_row(path: Path) -> dict[str, object] | None:
    return report(path).get("<module>")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_module_level_loops_behave_as_in_cpython(name: str, tmp_path: Path) -> None:
    source, entries = PROGRAMS[name]
    (tmp_path / "prog.py").write_text(source)
    plain = run(["prog.py"], cwd=tmp_path)
    out = tmp_path / "report.json"
    hooked = run(["-X", "importhook", "cuvil_bc", "prog.py"], cwd=tmp_path, env={"CUVIL_BC_REPORT": str(out), **FORCED})
    same(plain, hooked)
    row = _module_row(out)
    got = row["osr_entries"] if row is not None else 0
    assert got == entries, row
    if entries:
        assert row is not None and row["status"] == "native", row


def test_a_loop_interrupted_natively_leaves_its_names_in_the_module(tmp_path: Path) -> None:
    # Ctrl-C (here a timer whose handler is Ctrl-C's own) lands while native code has
    # the loop's names: the module's dict has them as they were, consistent with each
    # other, when the KeyboardInterrupt left the loop.
    (tmp_path / "prog.py").write_text(
        "import atexit, signal\n"
        "signal.signal(signal.SIGALRM, signal.default_int_handler)\n"
        "atexit.register(lambda: print('consistent', i > 1000 and total in (i * (i + 1) // 2, (i - 1) * i // 2)))\n"
        "signal.setitimer(signal.ITIMER_REAL, 1.0)\n"  # (after the compile, even on a loaded machine)
        "total = 0\n"
        "for i in range(10**10):\n    total += i\n"
    )
    out = tmp_path / "report.json"
    hooked = run(["-X", "importhook", "cuvil_bc", "prog.py"], cwd=tmp_path, env={"CUVIL_BC_REPORT": str(out), **FORCED})
    assert hooked.stdout == "consistent True\n", (hooked.stdout, hooked.stderr)
    assert hooked.stderr.splitlines()[-1] == "KeyboardInterrupt", hooked.stderr
    row = _module_row(out)
    assert row is not None and row["osr_entries"] == 1, row


def test_the_cost_model_enters_a_long_module_loop_and_leaves_a_short_one(tmp_path: Path) -> None:
    # CUVIL_BC_OSR=auto (the default): a loop of a few milliseconds loads nothing; a
    # long one is entered, and a second run loads its entry from the cache.
    (tmp_path / "short.py").write_text(
        "import sys\ntotal = 0\nfor i in range(20000):\n    total += i % 7\nprint(total)\n"
        "print(sorted(m for m in ('llvmlite', 'cuvil_bc.compiler') if m in sys.modules))\n"
    )
    hooked = run(["-X", "importhook", "cuvil_bc", "short.py"], cwd=tmp_path, env={"CUVIL_BC_CACHE_DIR": str(tmp_path / "cache")})
    assert hooked.stdout.splitlines() == [str(sum(i % 7 for i in range(20000))), "[]"], hooked.stdout + hooked.stderr
    (tmp_path / "long.py").write_text(
        "import sys\ntotal = 0\nfor i in range(6_000_000):\n    total += (i * 7) % 13\nprint(total)\n"
        "print('llvmlite' in sys.modules)\n"
    )
    plain = run(["long.py"], cwd=tmp_path)
    for attempt in ("cold", "warm"):
        out = tmp_path / f"{attempt}.json"
        hooked = run(["-X", "importhook", "cuvil_bc", "long.py"], cwd=tmp_path,
                     env={"CUVIL_BC_REPORT": str(out), "CUVIL_BC_CACHE_DIR": str(tmp_path / "cache"), "CUVIL_BC_SYNC": "0",
                          "PYTHONDONTWRITEBYTECODE": ""})  # (it would turn the native-code cache off)
        if attempt == "cold":
            assert hooked.stdout.splitlines()[0] == plain.stdout.splitlines()[0], hooked.stdout + hooked.stderr
        else:
            same(plain, hooked)  # (the warm run loads the entry without LLVM: it prints False too)
        row = _module_row(out)
        assert row is not None and row["osr_entries"] == 1, (attempt, row)


# -- the region and the entry's code ------------------------------------------------------

def _module_codes() -> list[types.CodeType]:
    """Module-level code written by others: the bodies of the standard library's
    functions that loop over ``range``, each compiled as a module, its ``return``
    statements made assignments (generators, and bodies that still do not compile as
    a module, are left out)."""
    import ast
    import os

    class Returns(ast.NodeTransformer):
        def visit_Return(self, node: ast.Return) -> ast.AST:
            return ast.copy_location(ast.Assign(targets=[ast.Name("result", ast.Store())], value=node.value or ast.Constant(None)), node)

    codes = []
    root = Path(os.__file__).parent
    for path in sorted([*root.glob("*.py"), *root.glob("[a-s]*/*.py")]):
        if "test" in path.parts[-2]:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and "range(" in ast.unparse(node):
                module = ast.fix_missing_locations(Returns().visit(ast.Module(body=node.body, type_ignores=[])))
                try:
                    codes.append(compile(module, f"{path}:{node.name}", "exec"))
                except SyntaxError:
                    continue
    return codes


def test_module_loops_written_by_others_are_counted_and_uncounted_exactly() -> None:
    # Every module-level loop that on-stack replacement may enter, in code made from
    # the standard library: the counted module drops back to its code as written,
    # byte for byte (positions and tables too), and each region's entry is built,
    # with no module-level name instruction left in it.
    import dis

    from cuvil_bc.decode.counting import RANGE, add_counters, without_counters
    from cuvil_bc.decode.resume import module_osr_code

    regions = 0
    for code in _module_codes():
        counted = add_counters(code, "k", "k@loop", "k@osr", module=True)
        if counted is code:
            continue
        _same(without_counters(counted), code)
        for _, offset, region in _entries_of(code):
            regions += 1
            entry, written, exits = module_osr_code(code, offset, region.written, (RANGE,) * _depth(code, offset))
            names = {i.opname for i in dis.get_instructions(entry)}
            assert not names & {"LOAD_NAME", "STORE_NAME"}, (code.co_filename, offset)
            assert exits == len(region.exits) and written == region.written
    assert regions > 100, regions


def _entries_of(code: types.CodeType) -> list[tuple[types.CodeType, int, object]]:
    from cuvil_bc.decode import counting, rawcode

    instrs = rawcode.instructions(code)
    found = counting._module_loops(code, instrs)
    return [(code, instrs[n].offset, r) for n, r in sorted(found.items())]


def _depth(code: types.CodeType, offset: int) -> int:
    from cuvil_bc.decode import rawcode, region

    instrs = rawcode.instructions(code)
    n = rawcode.index_at(instrs, offset)
    assert n is not None
    depth = region.stack_depths(code, instrs)
    assert depth is not None
    return depth[n]


@pytest.mark.parametrize(
    ("display", "counted"),
    [("[]", False), ("[1, 2, 3]", False), ("{}", False), ("{'a': 1}", False), ("{1, 2}", False), ("0", True), ("(1, 2)", True)],
)
def test_a_loop_over_a_name_bound_to_a_container_display_gets_no_counter(display: str, counted: bool) -> None:
    # Native code takes no list, dict or set: such a loop is refused once hot, and its
    # counter would have cost every iteration of the rest of the run (3M appends:
    # ~10% slower than plain). A name bound to a number or a tuple stays counted.
    code = compile(f"data = {display}\ntotal = 0\nfor i in range(10):\n    total += i\n    data\n", "prog.py", "exec")
    assert bool(_entries_of(code)) is counted
    # Also when the name is only one the loop writes.
    code = compile(f"data = {display}\nfor i in range(10):\n    data = i\n", "prog.py", "exec")
    assert bool(_entries_of(code)) is counted


def test_a_name_rebound_from_a_container_to_a_number_before_the_loop_keeps_it_counted() -> None:
    # Only the binding that reaches the loop counts: the last one before it, or one in
    # it. (d19f149 left such a loop uncounted: 2.3 s interpreted against 0.2 s native.)
    code = compile("acc = []\nacc = 0\nfor i in range(10):\n    acc += i\n", "prog.py", "exec")
    assert _entries_of(code)
    # Bound to a display only after the loop, in a later loop: that one is not counted.
    code = compile("acc = 0\nfor i in range(10):\n    acc += i\nacc = []\nfor i in range(10):\n    acc.append(i)\n", "prog.py", "exec")
    entries = _entries_of(code)
    assert len(entries) == 1 and "acc" in entries[0][2].written  # (the first loop: it writes acc)
    # Rebound to a display after a number: not counted.
    code = compile("acc = 0\nacc = {}\nfor i in range(10):\n    acc\n", "prog.py", "exec")
    assert not _entries_of(code)


def test_a_script_whose_name_was_a_list_before_enters_its_loop_natively(tmp_path: Path) -> None:
    # End to end: the loop is entered (before 02b8364 it ran interpreted to the end),
    # and the output is plain CPython's.
    (tmp_path / "prog.py").write_text("acc = []\nacc = 0\nfor i in range(300000):\n    acc += i * i % 7\nprint(acc)\n")
    plain = run(["prog.py"], cwd=tmp_path)
    out = tmp_path / "report.json"
    hooked = run(["-X", "importhook", "cuvil_bc", "prog.py"], cwd=tmp_path, env={"CUVIL_BC_REPORT": str(out), **FORCED})
    same(plain, hooked)
    row = _module_row(out)
    assert row is not None and row["osr_entries"] == 1, row


def test_a_script_appending_to_a_list_in_a_long_loop_runs_as_written(tmp_path: Path) -> None:
    # The hooked run's module code has no counter in the loop: the report has no
    # ask at all for the module (before, the loop was asked about and refused).
    (tmp_path / "prog.py").write_text(
        "data = []\ntotal = 0\nfor i in range(300000):\n    data.append(i * 2)\n    total += i\nprint(total, len(data))\n"
    )
    plain = run(["prog.py"], cwd=tmp_path)
    out = tmp_path / "report.json"
    hooked = run(["-X", "importhook", "cuvil_bc", "prog.py"], cwd=tmp_path, env={"CUVIL_BC_REPORT": str(out), **FORCED})
    same(plain, hooked)
    assert _module_row(out) is None
