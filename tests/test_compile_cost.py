"""Compile time that grows faster than the code (lower/jit.py, `REMAINDERS`): LLVM's
InstCombine took seconds on a function of a few dozen lines of integer remainders by
constants (the square or the cube of their number); such a module is optimised by the
light pipeline, in milliseconds. The hook's exit waits for an optimisation under way,
so a program with such a function waited that long to end."""

from __future__ import annotations

from typing import Any

import pytest

from cuvil_bc import stages
from cuvil_bc.lower import jit
from cuvil_bc.testing import compile_source, native_ran


def _chain(lines: int, op: str = "%") -> str:
    body = "".join(f"        s = (s * 7 + {k + 1}) {op} 1000003\n" for k in range(lines))
    return f"def f(s, n):\n    for i in range(n):\n{body}    return s\n"


KERNEL = """
def f(n, m):
    t = 0
    for i in range(1, n):
        if i % 3 == 0 or i % 5 == 0:
            t = (t + i * i) % m
    return t
"""


def _lowered(monkeypatch: pytest.MonkeyPatch, source: str, *args: Any) -> str:
    """The unoptimised module text that compiling `source`'s f for `args` gives LLVM."""
    seen: list[str] = []
    compile_module = jit.JIT.compile

    def spy(self: jit.JIT, module: Any, numbers: Any = None) -> Any:
        seen.append(str(module))
        return compile_module(self, module, numbers)

    monkeypatch.setattr(jit.JIT, "compile", spy)
    f = compile_source(source, "f")
    assert f(*args) == f.py_func(*args)
    assert native_ran(f)
    (text,) = seen
    return text


def test_a_long_chain_of_remainders_is_optimised_in_milliseconds() -> None:
    # 100 lines: 6.4 s of LLVM optimisation with the full pipeline (2-vCPU VM), ~15 ms now.
    f = compile_source(_chain(100), "f")
    before = stages.seconds()["llvm-optimisation"]
    assert f(5, 50) == f.py_func(5, 50)
    assert native_ran(f)
    spent = stages.seconds()["llvm-optimisation"] - before
    assert spent < 2.0, spent


def test_only_modules_with_many_remainders_take_the_light_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    assert jit.light_pipeline(_lowered(monkeypatch, _chain(40), 5, 3))
    monkeypatch.undo()
    assert not jit.light_pipeline(_lowered(monkeypatch, KERNEL, 1000, 97))
    monkeypatch.undo()
    # Floor divisions compute a remainder too, but do not make LLVM slow.
    assert not jit.light_pipeline(_lowered(monkeypatch, _chain(40, "//"), 5, 3))
