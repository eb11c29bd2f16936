"""The JIT sets its LLVM options (ordered float reductions, no stride versioning) only
while it optimises its own modules (lower/jit.py): another user of llvmlite in the
process (Numba) must keep LLVM's default behaviour before, during other work, and
after our compiles."""

from __future__ import annotations

import platform

import llvmlite.binding as llvm
import numpy as np
import pytest

from cuvil_bc.lower import jit
from cuvil_bc.testing import compile_source

SUM_OF_SQUARES = """
define double @sum(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %s = phi double [0.0, %entry], [%s1, %loop]
  %q = getelementptr double, ptr %p, i64 %i
  %x = load double, ptr %q
  %y = fmul double %x, %x
  %s1 = fadd double %s, %y
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret double %s1
}
"""


#: p[i * s] summed into integers, with the stride s known only at run time: by default
#: LLVM vectorizes it behind a test that s == 1 ("ident.check").
STRIDED_SUM = """
define i64 @sum(ptr %p, i64 %n, i64 %s) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %t = phi i64 [0, %entry], [%t1, %loop]
  %k = mul i64 %i, %s
  %q = getelementptr i64, ptr %p, i64 %k
  %x = load i64, ptr %q
  %t1 = add i64 %t, %x
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %t1
}
"""


def optimized_by_another_user(source: str) -> str:
    """Optimise `source` as any llvmlite user would."""
    engine = jit.get_jit()
    mod = llvm.parse_assembly(source)
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(engine.tm.target_data)
    pb = llvm.create_pass_builder(engine.tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    return str(mod)


def vectorized_by_another_user() -> bool:
    """Is a float-sum loop vectorized, optimised as any llvmlite user would?"""
    return "x double>" in optimized_by_another_user(SUM_OF_SQUARES)


def stride_versioned_by_another_user() -> bool:
    return "ident.check" in optimized_by_another_user(STRIDED_SUM)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the switch exists for x86-64 only")
def test_ordered_reductions_are_ours_only() -> None:
    with jit._tuned_options():
        assert vectorized_by_another_user(), "the option should vectorize the loop (else this test shows nothing)"
    assert not vectorized_by_another_user()
    f = compile_source("def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i] * a[i]\n    return s\n")
    assert f(np.arange(100.0)) == f.py_func(np.arange(100.0))
    assert jit._options_users == 0
    assert not vectorized_by_another_user()


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the switch exists for x86-64 only")
def test_no_stride_versioning_is_ours_only() -> None:
    assert stride_versioned_by_another_user(), "LLVM's default should version the loop (else this test shows nothing)"
    with jit._tuned_options():
        assert not stride_versioned_by_another_user()
    f = compile_source("def f(a):\n    s = 0.0\n    for i in range(a.shape[0]):\n        s += a[i, 0] * a[i, 1]\n    return s\n")
    pts = np.arange(40.0).reshape(20, 2)
    assert f(pts) == f.py_func(pts)
    assert jit._options_users == 0
    assert stride_versioned_by_another_user()
