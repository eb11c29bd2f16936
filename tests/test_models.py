"""The type models (cuvil_bc/typing/models.py): what each says of its values, and
that the boundary's words follow from the layout, for every kind of type."""

from __future__ import annotations

import pytest

from cuvil_bc.typing.models import LEAF_WORDS, MEMINFO, leaves, model, state_words, words
from cuvil_bc.typing.types import (
    BOOL, COMPLEX, FLOAT, INT, NONE, NP_BOOL, NP_F64, NP_I64, RANGE_ITER, ArrayType, NpScalar, TupleType, UnionType,
)

ARGUMENTS = [
    BOOL, INT, FLOAT, COMPLEX, NONE, NP_F64, NP_I64, NP_BOOL, ArrayType("float64", 2), ArrayType("uint8", 1, True, True),
    TupleType((INT, COMPLEX, TupleType((FLOAT, BOOL)))), TupleType(()),
]
RESULTS = ARGUMENTS + [NpScalar("float32"), UnionType((FLOAT, INT)), UnionType((COMPLEX, NONE)), TupleType((UnionType((BOOL, INT)), NP_F64))]


@pytest.mark.parametrize("t", ARGUMENTS, ids=str)
def test_an_argument_takes_a_parameter_per_word_it_passes(t: object) -> None:
    m = model(t)  # type: ignore[arg-type]
    assert m.unboxable(t)  # type: ignore[arg-type]
    passed = [k for k in leaves(m.layout(t)) if LEAF_WORDS[k] and k != MEMINFO]  # type: ignore[arg-type]
    assert len(m.c_params(t)) == len(passed)  # type: ignore[arg-type]
    slots: list[tuple[object, ...]] = []
    m.entry_slots(t, slots)  # type: ignore[arg-type]
    assert slots and all(len(s) == 7 for s in slots)


@pytest.mark.parametrize("t", RESULTS, ids=str)
def test_a_result_is_boxed_from_its_words_and_rebuilt_from_as_many(t: object) -> None:
    m = model(t)  # type: ignore[arg-type]
    assert m.boxable(t)  # type: ignore[arg-type]
    assert words(t) == sum(LEAF_WORDS[k] for k in leaves(m.layout(t)))  # type: ignore[arg-type]
    assert state_words(t) == words(t)  # type: ignore[arg-type]
    m.box_expr(t, 0)  # type: ignore[arg-type]


def test_complex_is_two_doubles_and_a_slot_of_its_own() -> None:
    m = model(COMPLEX)
    assert m.layout(COMPLEX) == ("real", "real") and words(COMPLEX) == 2
    assert m.c_params(COMPLEX) == ["double", "double"]
    slots: list[tuple[object, ...]] = []
    m.entry_slots(COMPLEX, slots)
    assert slots == [("c", 0, complex, None, 0, 0, 0)]
    assert m.flatten(COMPLEX, "x") == ["x.real", "x.imag"]


def test_what_cannot_cross_says_so() -> None:
    # (a range iterator lives in native code and resume states only)
    m = model(RANGE_ITER)
    assert not m.unboxable(RANGE_ITER) and not m.boxable(RANGE_ITER)
    assert state_words(RANGE_ITER) == 3 and words(RANGE_ITER) == 0
    with pytest.raises(AssertionError):
        m.box_expr(RANGE_ITER, 0)
