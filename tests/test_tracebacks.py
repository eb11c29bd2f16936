"""Tracebacks through compiled functions are CPython's, frame for frame (issue 15,
item 17): no frame of the dispatcher or of its generated entry between a caller and
the function, whether the call fell back, deoptimised or resumed the interpreter."""

from __future__ import annotations

import math
import traceback

import numpy as np
import pytest

import cuvil_bc
from cuvil_bc.testing import native_ran


def plain(x):
    if x > 10:
        raise ValueError("big")
    return math.sqrt(x)


def writer(a, x):
    a[0] = x * x
    a[1] = math.sqrt(-x)
    return 0


def _frames(fn, *args):  # type: ignore[no-untyped-def]
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        return [(t.filename, t.name, t.lineno) for t in traceback.extract_tb(e.__traceback__)][1:]
    raise AssertionError("no exception")


@pytest.mark.parametrize(
    "fn, warm, args",
    [
        (plain, (3,), (20,)),  # raise: deoptimises, CPython re-runs the call
        (plain, (3,), (-1,)),  # math domain error
        (plain, (3,), ("s",)),  # an argument that does not compile: interpreted
        (plain, (3,), (2**70,)),  # beyond int64: interpreted
        (writer, (np.zeros(2), -1.0), (np.zeros(2), 3.0)),  # resumed in the middle
    ],
)
def test_a_compiled_functions_traceback_is_cpythons(fn, warm, args) -> None:  # type: ignore[no-untyped-def]
    compiled = cuvil_bc.compile(fn)
    compiled(*warm)
    assert native_ran(compiled)
    assert _frames(compiled, *args) == _frames(fn, *args)


def test_an_uncaught_exception_under_the_hook_prints_cpythons_traceback() -> None:
    from .test_hook_e2e import run, same

    plain = run(["raising.py"])
    assert "math domain error" in plain.stderr
    same(plain, run(["-X", "importhook", "cuvil_bc", "raising.py"]))


def test_a_caught_exception_under_the_hook_has_cpythons_traceback(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The trampoline's own frame showed between the caller and the function (at the
    # line after `def`) in a traceback the program formats itself.
    from .test_hook_e2e import hooked_like_plain

    hooked, found = hooked_like_plain("caught.py", tmp_path)
    assert hooked.stdout.count("Traceback") == 3, hooked.stdout + hooked.stderr
    assert found["root"]["status"] == "native" and found["bump"]["status"] == "native", found
