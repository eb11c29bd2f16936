"""Tracing and profiling tools see compiled functions run as bytecode (issue 15, item
5): while `sys.settrace`, `sys.setprofile` or a `sys.monitoring` tool is active,
calls are interpreted, and native code comes back once the tool is gone."""

from __future__ import annotations

import sys
import threading

import pytest

import cuvil_bc
from cuvil_bc.testing import check, native_ran


def total(n):
    t = 0
    for i in range(n):
        t += i
    return t


def _lines_seen(fn, arg, install, remove):  # type: ignore[no-untyped-def]
    seen: list[int] = []

    def tracer(frame, event, _arg):  # type: ignore[no-untyped-def]
        if frame.f_code is total.__code__ and event == "line":
            seen.append(frame.f_lineno)
        return tracer

    install(tracer)
    try:
        result = fn(arg)
    finally:
        remove()
    return result, seen


@pytest.mark.parametrize("kind", ["settrace", "setprofile", "threading", "all threads"])
def test_a_trace_function_sees_every_line(kind: str) -> None:
    d = cuvil_bc.compile(total)
    check(d, 10)
    assert native_ran(d)
    expected = _lines_seen(total, 3, sys.settrace, lambda: sys.settrace(None))
    before = d.stats["native_calls"]
    if kind == "settrace":
        got = _lines_seen(d, 3, sys.settrace, lambda: sys.settrace(None))
        assert got == expected
    elif kind == "setprofile":
        calls: list[str] = []
        sys.setprofile(lambda frame, event, arg: calls.append(frame.f_code.co_name) if event == "call" else None)
        try:
            assert d(3) == 3
        finally:
            sys.setprofile(None)
        assert "total" in calls
    elif kind == "threading":
        # threading.settrace: threads started later are traced (this one is not).
        got = []
        threading.settrace(lambda frame, event, arg: got.append(frame.f_code.co_name) if event == "call" else None)
        try:
            worker = threading.Thread(target=lambda: got.append(d(3)))
            worker.start()
            worker.join()
        finally:
            threading.settrace(None)  # type: ignore[arg-type]
        assert "total" in got and 3 in got, got
    else:
        if not hasattr(threading, "settrace_all_threads"):
            pytest.skip("threading.settrace_all_threads is 3.12+")
        threading.settrace_all_threads(lambda *a: None)  # type: ignore[attr-defined]
        try:
            assert d(3) == 3
        finally:
            threading.settrace_all_threads(None)  # type: ignore[attr-defined]
    assert d.stats["native_calls"] == before, "a call ran natively while a tool was watching"
    check(d, 10)  # native again once the tool is gone
    assert d.stats["native_calls"] == before + 1


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is 3.12+")
def test_a_monitoring_tool_sees_every_line() -> None:
    mon = sys.monitoring  # type: ignore[attr-defined]
    d = cuvil_bc.compile(total)
    check(d, 10)
    tool = 4
    lines: list[int] = []

    def on_line(code, line):  # type: ignore[no-untyped-def]
        if code is total.__code__:
            lines.append(line)

    mon.use_tool_id(tool, "cuvil_bc-test")
    try:
        mon.register_callback(tool, mon.events.LINE, on_line)
        mon.set_events(tool, mon.events.LINE)
        before = d.stats["native_calls"]
        assert d(3) == 3
        assert d.stats["native_calls"] == before
        assert lines, "the tool saw no line of the function"
    finally:
        mon.set_events(tool, 0)
        mon.free_tool_id(tool)
    check(d, 10)


def test_under_the_hook_a_trace_function_sees_the_program_as_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from .test_hook_e2e import report, run, same

    out = tmp_path / "r.json"
    plain = run(["traced.py"])
    assert plain.returncode == 0, plain.stderr
    same(plain, run(["-X", "importhook", "cuvil_bc", "traced.py"], env={"CUVIL_BC_REPORT": str(out)}))
    rows = report(out)
    for name in ("work", "countdown", "skips"):
        assert rows[name]["status"] == "native" and rows[name]["calls_native"] > 0, rows[name]
