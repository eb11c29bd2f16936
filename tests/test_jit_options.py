"""The JIT turns on LLVM's ordered float reductions only while it optimises its own
modules (lower/jit.py): another user of llvmlite in the process (Numba) must keep
LLVM's default behaviour before, during other work, and after our compiles."""

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


def vectorized_by_another_user() -> bool:
    """Optimise a float-sum loop as any llvmlite user would: is it vectorized?"""
    engine = jit.get_jit()
    mod = llvm.parse_assembly(SUM_OF_SQUARES)
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(engine.tm.target_data)
    pb = llvm.create_pass_builder(engine.tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    return "x double>" in str(mod)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the switch exists for x86-64 only")
def test_ordered_reductions_are_ours_only() -> None:
    with jit._ordered_reductions():
        assert vectorized_by_another_user(), "the option should vectorize the loop (else this test shows nothing)"
    assert not vectorized_by_another_user()
    f = compile_source("def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i] * a[i]\n    return s\n")
    assert f(np.arange(100.0)) == f.py_func(np.arange(100.0))
    assert jit._ordered_users == 0
    assert not vectorized_by_another_user()
