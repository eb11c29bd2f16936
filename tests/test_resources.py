"""What compiled functions keep (issue 15, item 13): a dropped function takes its
specialisations with it, and each function has a bounded number of native signatures."""

from __future__ import annotations

import gc
import weakref

import cuvil_bc
from cuvil_bc.compiler import COMPILER
from cuvil_bc.dispatcher import MAX_SIGNATURES
from cuvil_bc.testing import check, compile_source, native_ran


def test_a_dropped_function_is_freed_with_its_specialisations() -> None:
    f = compile_source(
        """
        def f(x, y):
            t = 0.0
            for i in range(x):
                t += y * i + math.sqrt(i)
            return t
        """
    )
    check(f, 10, 1.5)
    assert native_ran(f)
    original = weakref.ref(f.py_func)
    spec = weakref.ref(f.dispatcher._native[next(iter(f.dispatcher._native))].spec)
    del f
    for _ in range(3):  # the cache's entry goes in one collection, the function's cycle in the next
        gc.collect()
    assert original() is None
    assert spec() is None
    assert not any(key[0] is original() for key in COMPILER.done.keys())


def test_signatures_past_the_cap_run_interpreted(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import cuvil_bc.dispatcher

    cap = 4  # (the real cap is MAX_SIGNATURES; a smaller one keeps the test short)
    assert MAX_SIGNATURES >= 64
    monkeypatch.setattr(cuvil_bc.dispatcher, "MAX_SIGNATURES", cap)
    f = compile_source("def f(t):\n    return t[0] + len(t)\n")
    tuples = [tuple(range(n)) for n in range(1, cap + 3)]
    for t in tuples[:cap]:
        check(f, t)
    assert len(f.signatures) == cap
    for t in tuples[cap:]:
        check(f, t, native=False)
    assert len(f.signatures) == cap
    assert f"more than {cap}" in f.explain()
    check(f, tuples[0])  # the first ones stay native
    strict = cuvil_bc.compile(f.py_func, strict=True)
    for t in tuples[:cap]:
        strict(t)
    try:
        strict(tuples[-1])
    except cuvil_bc.CompileError as e:
        assert "signatures" in str(e)
    else:
        raise AssertionError("strict mode let a signature past the cap fall back")


def test_a_memory_limit_that_llvm_would_hit_falls_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # LLVM aborts the process when an allocation fails ("LLVM ERROR: out of memory",
    # status 134); with too little address space left, nothing is compiled instead.
    import subprocess
    import sys

    program = tmp_path / "limited.py"
    program.write_text(
        "import resource\n"
        "import numpy as np\n"
        "import cuvil_bc\n"
        "import llvmlite.binding\n"
        "used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (used + (64 << 20), resource.RLIM_INFINITY))\n"
        "src = 'def f(a, n):\\n    t = 0.0\\n' + ''.join(\n"
        "    f'    for i{k} in range(n):\\n        t += a[i{k}] * {k}.5 + t * 0.5\\n' for k in range(60)) + '    return t\\n'\n"
        "ns = {}\n"
        "exec(src, ns)\n"
        "f = cuvil_bc.compile(ns['f'])\n"
        "print(f(np.ones(10), 10) == ns['f'](np.ones(10), 10))\n"
        "print(f.explain())\n"
    )
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("True\n"), done.stdout
    assert "memory limit" in done.stdout, done.stdout
