"""Giving a function new code, as hot-reload tools do (``f.__code__ = g.__code__``),
takes effect exactly as in CPython: for the compiled function itself, and for compiled
callers that had its old code compiled into them (issue 15, item 3)."""

from __future__ import annotations

from cuvil_bc.testing import check, compile_source, native_ran

SOURCE = """
def step(x):
    return x + 1

def step_v2(x):
    return math.floor(x * 100)   # a global of the module, as reloaded code has it

def caller(x):
    t = 0
    for i in range(3):
        t += step(x)
    return t
"""


def test_new_code_for_a_compiled_function_takes_effect_and_stays() -> None:
    f = compile_source(SOURCE, "step")
    check(f, 5)
    check(f, 2.5)
    assert native_ran(f)
    new = compile_source("def step(x):\n    return int(x * 100)\n", "step").py_func
    f.__code__ = new.__code__
    for x in (5, 2.5, 7.5, 3):  # 7.5: a new signature must not bring the dispatcher's code back
        assert f(x) == new(x) and type(f(x)) is type(new(x))


def test_new_code_sees_the_modules_globals() -> None:
    # The compiled function has its module's globals (it once had the dispatcher's,
    # where `math` was not found).
    f = compile_source(SOURCE, "step")
    check(f, 5)
    f.__code__ = f.py_func.__globals__["step_v2"].__code__
    assert f(2.5) == 250 and f(0.125) == 12


def test_a_compiled_caller_notices_its_callee_got_new_code() -> None:
    g = compile_source(SOURCE, "caller")
    check(g, 5)
    assert native_ran(g)
    ns = g.py_func.__globals__
    ns["step"].__code__ = ns["step_v2"].__code__
    try:
        check(g, 5)
        check(g, 2.5)
        assert g(5) == 1500
    finally:
        ns["step"].__code__ = compile_source(SOURCE, "step").py_func.__code__


def test_a_compiled_caller_runs_new_code_given_to_a_compiled_callee() -> None:
    """The callee is itself a function that cuvil_bc.compile returned: its caller
    compiled the dispatcher's original, and after ``g.__code__ = new`` compiled it again
    (the guard on g's code failed), still the original: a silent wrong result."""
    import cuvil_bc

    namespace: dict[str, object] = {}
    exec("def g(x):\n    return x + 1\n\ndef g2(x):\n    return x + 1000\n\ndef f(x):\n    return g(x) * 2\n", namespace)
    g = namespace["g"] = cuvil_bc.compile(namespace["g"])
    f = namespace["f"] = cuvil_bc.compile(namespace["f"])
    assert f(5) == 12 and native_ran(f)
    g.__code__ = namespace["g2"].__code__  # type: ignore[union-attr]
    for _ in range(3):
        assert f(5) == f.py_func(5) == 2010
    assert g(5) == 1005


def test_under_the_hook_a_native_caller_notices_new_code_for_its_callee(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from .test_hook_e2e import report, run, same

    out = tmp_path / "r.json"
    plain = run(["hot_reload.py"])
    same(plain, run(["-X", "importhook", "cuvil_bc", "hot_reload.py"], env={"CUVIL_BC_REPORT": str(out)}))
    rows = report(out)
    assert rows["caller"]["status"] == "native" and rows["caller"]["calls_native"] > 0, rows["caller"]
