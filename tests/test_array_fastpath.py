"""The fast path of array calls (`fastpath.direct_supported`): a call with writeable
C-contiguous arrays goes straight to the cffi entry point, without the generic
path's argument key. Every other kind of argument must still reach the generic path
and give CPython's result, and calls through the fast path must count, deoptimise
and box their results as the generic path does.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from cuvil_bc.testing import check, compile_source

pytestmark = pytest.mark.usefixtures("no_native_leaks")  # see conftest.py


_SOURCE = """
def f(a, out, k):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * k
    return out.T, a[0, 0] * k
"""


def count_generic(compiled):  # type: ignore[no-untyped-def]
    """The number of calls that reached the generic path so far, and a function that
    gives the number since."""
    start = compiled.dispatcher.generic_calls
    return lambda: compiled.dispatcher.generic_calls - start


def test_contiguous_calls_skip_the_generic_path() -> None:
    f = compile_source(_SOURCE, np=np)
    a, out = np.arange(6.0).reshape(2, 3), np.zeros((2, 3))
    check(f, a, out, 2)  # compiles (generic path)
    seen = count_generic(f)
    before = f.stats["native_calls"]
    for k in range(5):
        check(f, a, out, k)
    assert seen() == 0, "contiguous float64 arrays and an int should not need the argument key"
    assert f.stats["native_calls"] == before + 5


def odd_arguments():  # type: ignore[no-untyped-def]
    base = np.arange(24.0).reshape(4, 6)
    readonly = base.copy()
    readonly.flags.writeable = False
    return [
        ("strided", base[:, ::2], np.zeros((4, 3)), 3),
        ("transposed", base.T, np.zeros((6, 4)), 3),
        ("fortran", np.asfortranarray(base), np.zeros((4, 6)), 3),
        ("read-only input", readonly, np.zeros((4, 6)), 3),
        ("read-only output", base, readonly, 3),
        ("one dimension", np.arange(4.0), np.zeros(4), 3),
        ("int64 array", np.arange(24).reshape(4, 6), np.zeros((4, 6)), 3),
        ("float32 array", np.ones((2, 2), dtype=np.float32), np.zeros((2, 2)), 3),
        ("big int", base, np.zeros((4, 6)), 2**70),
        ("bool for int", base, np.zeros((4, 6)), True),
        ("float for int", base, np.zeros((4, 6)), 1.5),
        # Size 0 makes NumPy call an array C-contiguous whatever its strides: its
        # buffer is available, but its last stride is not the itemsize.
        ("empty with odd strides", np.zeros((0, 6))[:, ::2], np.zeros((0, 6))[:, ::2], 3),
        ("list", [[1.0]], np.zeros((1, 1)), 3),
        ("subclass", np.ma.masked_array(base[:1, :1]), np.zeros((1, 1)), 3),
    ]


@pytest.mark.parametrize("case", odd_arguments(), ids=lambda c: c[0])
def test_other_arguments_give_cpythons_result(case) -> None:  # type: ignore[no-untyped-def]
    f = compile_source(_SOURCE, np=np)
    a, out = np.arange(6.0).reshape(2, 3), np.zeros((2, 3))
    check(f, a, out, 2)  # the fast path exists before the odd call
    _, *args = case
    check(f, *args, native=False)  # some of these odd arguments do not compile
    check(f, a, out, 2)  # and still works after it


def test_empty_array_with_odd_strides_is_not_unit_stride() -> None:
    f = compile_source(_SOURCE, np=np)
    check(f, np.zeros((2, 3)), np.zeros((2, 3)), 1)
    check(f, np.zeros((0, 6))[:, ::2], np.zeros((0, 6))[:, ::2], 1)  # out.T's strides too
    assert "(array[float64, 2d], array[float64, 2d], int)" in f.signatures, f.signatures


WRITE_THEN_OVERFLOW = """
def f(out, k):
    for i in range(len(out)):
        out[i] = i
        k = k * k
    return k
"""


def test_deoptimisation_through_the_fast_path() -> None:
    f = compile_source(WRITE_THEN_OVERFLOW, np=np)
    check(f, np.zeros(3), 2)  # compiles; k stays within int64
    seen = count_generic(f)
    before = f.stats["deopts"]
    check(f, np.zeros(10), 3)  # 3 ** (2 ** 10) overflows int64 mid-loop: CPython resumes
    assert seen() == 0 and f.stats["deopts"] == before + 1
    assert "guard failed at line 5" in f.explain(), f.explain()  # k = k * k


def test_first_call_in_a_new_thread() -> None:
    """The output words are per thread: a thread's first call has none yet."""
    f = compile_source(_SOURCE, np=np)
    a, out = np.arange(6.0).reshape(2, 3), np.zeros((2, 3))
    check(f, a, out, 2)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for k in range(3):
                check(f, a, np.zeros((2, 3)), k)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert errors == []
