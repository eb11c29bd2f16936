"""The table of primitives (cuvil_bc/typing/primitives.py) and what reads it."""

from __future__ import annotations

import math

import pytest

from cuvil_bc.compiler import Compiler
from cuvil_bc.ir import format_function
from cuvil_bc.lower import builtins as lowered
from cuvil_bc.lower.runtime import math_via_cpython
from cuvil_bc.typing.primitives import CPYTHON, LIBM, OWN, NUMPY_SCALARS, PRIMITIVES, VIA_CPYTHON, lookup
from cuvil_bc.typing.types import FLOAT, NP_I64, Type


def test_every_row_has_its_lowering_and_every_lowering_a_row() -> None:
    own = {row.name for row in PRIMITIVES + NUMPY_SCALARS if row.lowering == OWN}
    assert own == set(lowered._OWN)
    for row in PRIMITIVES:
        assert row.lowering in (OWN, LIBM, CPYTHON), row
        assert lowered.lowering_of(row) is not None
        if row.lowering == LIBM:
            assert row.name.startswith("math.") and (row.defers_errors or not row.float_errors), row


def test_one_row_per_callable() -> None:
    assert all(lookup(row.obj) is not None for row in PRIMITIVES)
    assert len({row.obj for row in PRIMITIVES}) == len(PRIMITIVES)
    assert lookup(math.sqrt).in_strips and lookup(math.sqrt).lowering == LIBM
    assert lookup(print) is None and lookup([]) is None  # (unhashable: no row)


def test_the_runtime_calls_the_cpython_rows_in_their_order() -> None:
    assert math_via_cpython() == tuple(row.obj for row in VIA_CPYTHON)
    assert math.erf in math_via_cpython() and math.hypot not in math_via_cpython()


def _typed_ir(source: str, argtypes: tuple[Type, ...]) -> str:
    namespace: dict[str, object] = {"math": math}
    exec(source, namespace)
    spec = Compiler().typed(namespace["f"], argtypes)  # type: ignore[arg-type]
    return format_function(spec.fn)


@pytest.mark.parametrize(
    "call, kept",
    [
        ("abs(x)", False),  # cannot raise: an unused call goes
        ("max(x, 1.0)", False),
        ("bool(x)", False),
        ("float(x)", True),  # of an int beyond a float's range: OverflowError
        ("math.isnan(x)", True),  # (the same)
        ("int(x)", True),  # int(nan) raises ValueError
        ("math.sqrt(x)", True),  # math domain error
        ("round(x)", True),  # round(inf) raises OverflowError
    ],
)
def test_an_unused_call_goes_only_if_its_row_says_it_cannot_raise(call: str, kept: bool) -> None:
    text = _typed_ir(f"def f(x):\n    {call}\n    return x\n", (FLOAT,))
    assert (" call " in text) == kept, text


def test_a_numpy_scalar_argument_keeps_the_call() -> None:
    # abs(np.int64 min) warns (overflow): NumPy scalars can always warn
    text = _typed_ir("def f(x):\n    abs(x)\n    return 1\n", (NP_I64,))
    assert " call " in text, text


def test_every_operator_the_decoder_names_has_a_row() -> None:
    from cuvil_bc.decode import versions
    from cuvil_bc.ir.operators import BINARY, COMPARE, OPERATORS, UNARY

    named = {(BINARY, s) for s in versions.BINARY.values()} | {(UNARY, s) for s in versions.UNARY.values()}
    named |= {(COMPARE, s) for s in (*versions.COMPARE.values(), "is", "is not", "in", "not in")}
    assert named <= set(OPERATORS), named - set(OPERATORS)


@pytest.mark.parametrize("symbol, a, b", [("+", 2, 3), ("//", -7, 2), ("%", -7.5, 2), ("**", 2, -1), ("<<", 1, 70), ("in", 1, (1, 2))])
def test_an_operator_row_computes_what_python_does(symbol: str, a: object, b: object) -> None:
    from cuvil_bc.ir.operators import binary, compare

    row = compare(symbol) if symbol == "in" else binary(symbol)
    assert row.apply(a, b) == eval(f"a {symbol} b")


def test_numpy_creators_are_rows_of_the_table() -> None:
    import numpy as np

    from cuvil_bc.typing.primitives import CREATES, NUMPY_CREATORS, creator_name, is_pure_callable

    for row in NUMPY_CREATORS:
        func = getattr(np, row.name.removeprefix("numpy."))
        assert lookup(func) is row and row.lowering == CREATES and row.may_raise
        assert creator_name(func) == row.name.removeprefix("numpy.")
        assert not is_pure_callable(func)  # a new array each call: never folded
    assert creator_name(np.sum) is None and creator_name(abs) is None


def test_numpy_float_types_have_rows() -> None:
    import numpy as np

    assert lookup(np.float64) in NUMPY_SCALARS and lookup(np.float32) in NUMPY_SCALARS
    assert lookup(np.float16) is None
