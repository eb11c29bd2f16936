"""The IR's text form read back (cuvil_bc/ir/parser.py), and passes run on IR written
by hand, each compared with the IR it should produce."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from cuvil_bc.ir import format_function, verify
from cuvil_bc.ir.facts import UNTYPED
from cuvil_bc.ir.parser import ParseError, parse_function
from cuvil_bc.ir.passes import constfold, copyprop, dce, narrow, simplifycfg, unbound
from cuvil_bc.opt import speculate
from cuvil_bc.typing.facts import KNOWN, TYPED
from cuvil_bc.typing.types import parse_type

from . import golden_cases

GOLDEN = Path(__file__).parent / "golden"
NAMESPACE = {**vars(math), **{name: getattr(golden_cases, name) for name in dir(golden_cases)}}
IR_STAGES = ("built", "copyprop", "constfold", "simplifycfg", "dce", "optimized", "narrow", "typed")


def _ir_text(path: Path) -> str:
    text = path.read_text()
    return text.split("\n", 1)[1] if text.startswith("returns ") else text  # (the typed files' first line)


@pytest.mark.parametrize("path", sorted(p for p in GOLDEN.glob("*.txt") if p.name.split(".")[1] in IR_STAGES), ids=lambda p: p.name)
def test_every_golden_ir_text_reads_back_as_itself(path: Path) -> None:
    text = _ir_text(path).rstrip("\n")
    fn = parse_function(text, NAMESPACE, parse_type)
    verify(fn, typed=".typed." in path.name)
    assert format_function(fn) == text


def ir(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def run(text: str, *passes, facts=UNTYPED, typed: bool = False) -> str:  # type: ignore[no-untyped-def]
    fn = parse_function(ir(text), {"math": math, "sqrt": math.sqrt}, parse_type)
    verify(fn, typed=typed)
    for p in passes:
        p(fn, facts) if p is not narrow.run and p is not speculate.run else p(fn)
        verify(fn, typed=typed)
    return format_function(fn)


def test_constant_folding_then_the_branch_it_decides() -> None:
    source = """
        def f(x):
        B0:
          %0 = binop 6 * 7
          %1 = compare %0 > 40
          branch %1 ? B1 : B2
        B1:
          return x
        B2:
          return %0
    """
    assert run(source, constfold.run, simplifycfg.run, dce.run) == ir("""
        def f(x):
        B0:
          return x
    """)


def test_a_call_folds_only_where_the_facts_know_it_is_pure() -> None:
    source = """
        def f():
        B0:
          %0 = call <sqrt>(16.0)
          return %0
    """
    assert run(source, constfold.run) == ir(source)  # the IR alone knows no callable
    assert run(source, constfold.run, dce.run, facts=KNOWN) == ir("""
        def f():
        B0:
          return 4.0
    """)


def test_a_division_that_may_raise_is_kept_until_its_types_say_otherwise() -> None:
    untyped = """
        def f(a, b):
        B0:
          %0 = binop a / b
          return a
    """
    assert run(untyped, dce.run) == ir(untyped)
    typed = """
        def f(a: float, b: float):
        B0:
          %0: float = binop a * b
          %1: float = binop a / b
          return a
    """
    assert run(typed, dce.run, facts=TYPED, typed=True) == ir("""
        def f(a: float, b: float):
        B0:
          %0: float = binop a / b
          return a
    """)


def test_complex_constants_read_back_and_fold_as_cpython_computes() -> None:
    source = """
        def f(c):
        B0:
          %0 = binop 1 - 0j
          %1 = binop -0.0 - 0j
          %2 = binop (nan+infj) * 2
          %3 = tuple (%0, %1, %2, -infj, (-0-0j))
          return %3
    """
    folded = run(source, constfold.run, copyprop.run, dce.run)
    # What CPython computes for the same expressions, as repr writes it:
    values = (1 - 0j, -0.0 - 0j, complex(math.nan, math.inf) * 2, complex(0.0, -math.inf), complex(-0.0, -0.0))
    assert folded == ir(f"""
        def f(c):
        B0:
          return {values!r}
    """)
    assert run(folded) == folded  # (the folded constants read back as themselves)


def test_a_complex_division_is_kept_where_it_may_raise_the_rest_goes() -> None:
    # (calls are not here: a constant read from text has no type, so dead-code
    # elimination keeps every call; tests/test_equiv_complex.py has the unused abs())
    typed = """
        def f(a: complex, b: complex, x: float):
        B0:
          %0: complex = binop a * b
          %1: complex = binop a / b
          %2: complex = binop a + x
          %3: bool = compare a == x
          %4: complex = unary - a
          return a
    """
    assert run(typed, dce.run, facts=TYPED, typed=True) == ir("""
        def f(a: complex, b: complex, x: float):
        B0:
          %0: complex = binop a / b
          return a
    """)


def test_trivial_phis_go_and_reads_of_bound_locals_lose_their_check() -> None:
    source = """
        def f(n):
        B0:
          jump B1
        B1:
          %0 = phi [B0: n, B1: %0]  # i
          %1 = bound %0
          %2 = compare %1 > 0
          branch %2 ? B1 : B2
        B2:
          return %1
    """
    assert run(source, copyprop.run, unbound.run) == ir("""
        def f(n):
        B0:
          jump B1
        B1:
          %0 = compare n > 0
          branch %0 ? B1 : B2
        B2:
          return n
    """)


def test_narrowing_after_a_none_test() -> None:
    source = """
        def f(y):
        B0:
          %0 = compare y is None
          branch %0 ? B1 : B2
        B1:
          return 0
        B2:
          %1 = binop y + 1
          return %1
    """
    assert run(source, narrow.run) == ir("""
        def f(y):
        B0:
          %0 = compare y is None
          branch %0 ? B1 : B2
        B1:
          %1 = narrow y is None
          return 0
        B2:
          %2 = narrow y is not None
          %3 = binop %2 + 1
          return %3
    """)


def test_speculation_hoists_a_small_arm_above_its_branch() -> None:
    source = """
        def f(a: int, b: int):
        B0:
          %0: bool = compare a < b
          branch %0 ? B1 : B2
        B1:
          %1: int = binop a - b
          jump B2
        B2:
          %2: int = phi [B0: a, B1: %1]  # a
          return %2
    """
    out = run(source, speculate.run, typed=True)
    assert out == ir("""
        def f(a: int, b: int):
        B0:
          %0: bool = compare a < b
          %1: int = speculative binop a - b
          branch %0 ? B1 : B2
        B1:
          jump B2
        B2:
          %2: int = phi [B0: a, B1: %1]  # a
          return %2
    """), out


@pytest.mark.parametrize(
    "text, error",
    [
        ("B0:\n  return 1", "starts with 'def"),
        ("def f():\nB0:\n  return %3", "%3 is used but never defined"),
        ("def f():\nB0:\n  jump B7", "no block 'B7'"),
        ("def f():\nB0:\n  %0 = call <nowhere>()\n  return %0", "no object named 'nowhere'"),
        ("def f():\nB0:\n  %0: int = binop 1 + 2\n  return %0", "needs parse_type"),
        ("def f():\nB0:\n  %0 = frobnicate 1\n  return %0", "cannot read the op"),
    ],
)
def test_what_cannot_be_read_says_why(text: str, error: str) -> None:
    with pytest.raises(ParseError, match=error):
        parse_function(text)


@pytest.mark.parametrize(
    "source",
    [
        'def f(x):\n    if x:\n        raise ValueError("x must be positive (got 0")\n    return x\n',
        "def f(x):\n    return " + repr("'\"\\") + " + x\n",  # both quotes and a backslash in a string
        "def f(x):\n    return (math.inf, -math.inf, 1.0, x)\n",
        "def f(x):\n    return ...\n",
        "def f(x):\n    return (1, (2, 'a[b]'), -3)[x]\n",
        "def f(x):\n    return max(x, 2, key=None)\n",
        "def f(a, i):\n    a[i] = 'x)('\n    return a[i + 1]\n",
    ],
)
def test_real_functions_read_back(source: str) -> None:
    from cuvil_bc import pipeline

    namespace: dict[str, object] = {"math": math}
    exec(source, namespace)
    for stage in ("ir", "narrow"):
        text = format_function(pipeline.run(pipeline.Work(pyfunc=namespace["f"]), until=stage).fn)  # type: ignore[union-attr]
        assert format_function(parse_function(text, NAMESPACE, parse_type)) == text
