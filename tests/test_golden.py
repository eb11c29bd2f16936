"""Golden tests: Python source in, the text of each pipeline stage out.

Stages: ``decode`` and ``cfg`` (version-specific), ``built`` (SSA straight from the
builder), one stage per clean-up pass run alone on the built IR, then the IR after
the compiler's stages (cuvil_bc/pipeline.py) ``clean-specialized`` (as ``optimized``),
``narrow`` and ``speculate`` (all of them: as ``typed``), ``plans``: what the analyses
decided for the typed function (opt/plans.py), and ``llvm``: the module that
code generation makes of the typed IR, before LLVM optimises it (its symbols without
their process-wide numbers; per version, since it holds line numbers and labels). Regenerate the expectations with
``CUVIL_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` and review the diff.

Expected text is in tests/golden/<case>.<stage>.txt; a version whose text differs has
its own tests/golden/<case>.<stage>.py3XX.txt.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Callable

import pytest

from cuvil_bc import pipeline
from cuvil_bc.cfg import build_cfg
from cuvil_bc.compiler import Compiler
from cuvil_bc.decode import decode
from cuvil_bc.ir import build_ir, format_function, verify
from cuvil_bc.ir.passes import checkpoints, constfold, copyprop, dce, simplifycfg
from cuvil_bc.opt.plans import format_plans
from cuvil_bc.typing.types import parse_signature

from . import golden_cases

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("CUVIL_UPDATE_GOLDEN") == "1"
VERSION = f"py3{sys.version_info[1]}"
REFERENCE = "py312"  # the version whose output is stored without a suffix
VERSIONED = ("decode", "cfg", "llvm")


def _func(case: str):  # type: ignore[no-untyped-def]
    return getattr(golden_cases, case)


def _built(case: str):  # type: ignore[no-untyped-def]
    fn = build_ir(build_cfg(decode(_func(case).__code__)))
    verify(fn)
    return fn


def _one_pass(run: Callable[..., bool]) -> Callable[[str], str]:
    def stage(case: str) -> str:
        fn = _built(case)
        run(fn)
        verify(fn)
        return format_function(fn)

    return stage


def _until(stage: str) -> Callable[[str], str]:
    """The IR after the compiler's stages up to `stage` (before typing)."""

    def run(case: str) -> str:
        driver = Compiler()
        driver.verify_each = True
        work = pipeline.run(pipeline.Work(pyfunc=_func(case)), driver, until=stage)
        assert work.fn is not None
        verify(work.fn)
        return format_function(work.fn)

    return run


def _typed(case: str) -> str:
    """All the stages, through the compiler itself."""
    driver = Compiler()
    driver.verify_each = True
    spec = driver.typed(_func(case), parse_signature(golden_cases.CASES[case]))
    assert spec.finished and spec.fn is not None
    verify(spec.fn, typed=True)
    return f"returns {spec.return_type}\n" + format_function(spec.fn)


def _plans(case: str) -> str:
    """What the analyses decided for the typed function (opt/plans.py)."""
    spec = Compiler().typed(_func(case), parse_signature(golden_cases.CASES[case]))
    assert spec.fn is not None
    return format_plans(spec.fn)


def _llvm(case: str) -> str:
    driver = Compiler()
    spec = driver.typed(_func(case), parse_signature(golden_cases.CASES[case]))
    module, _, _ = driver.lower(spec, driver.name_module(spec))
    lines = [line for line in str(module).splitlines() if not line.startswith(("target ", "; ModuleID", "source_filename"))]
    return re.sub(r"(cb\.[\w.<>]+?)\.\d+\b", r"\1", "\n".join(lines).strip())


STAGES: dict[str, Callable[[str], str]] = {
    "decode": lambda case: decode(_func(case).__code__).text(),
    "cfg": lambda case: build_cfg(decode(_func(case).__code__)).text(),
    "built": lambda case: format_function(_built(case)),
    "copyprop": _one_pass(copyprop.run),  # (run alone, each pass knows only the IR: ir/facts.py)
    "constfold": _one_pass(lambda fn: copyprop.run(fn) | constfold.run(fn)),
    "simplifycfg": _one_pass(lambda fn: copyprop.run(fn) | constfold.run(fn) | simplifycfg.run(fn)),
    "dce": _one_pass(lambda fn: copyprop.run(fn) | dce.run(fn)),
    "checkpoints": _one_pass(lambda fn: copyprop.run(fn) | simplifycfg.run(fn) | checkpoints.run(fn)),
    "optimized": _until("clean-specialized"),
    "unroll": _until("unroll"),
    "narrow": _until("narrow"),
    "typed": _typed,
    "plans": _plans,
    "llvm": _llvm,
}


def _expected_path(case: str, stage: str) -> Path:
    own = GOLDEN / f"{case}.{stage}.{VERSION}.txt"
    if own.exists() or (stage in VERSIONED and VERSION != REFERENCE):
        return own
    return GOLDEN / f"{case}.{stage}.txt"


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("case", list(golden_cases.CASES))
def test_golden(case: str, stage: str) -> None:
    actual = STAGES[stage](case).rstrip() + "\n"
    path = _expected_path(case, stage)
    if UPDATE:
        _update(case, stage, actual)
        return
    assert path.exists(), f"missing {path.name}: run with CUVIL_UPDATE_GOLDEN=1"
    assert actual == path.read_text(), f"{path.name} differs; if intended, regenerate with CUVIL_UPDATE_GOLDEN=1"


def _update(case: str, stage: str, actual: str) -> None:
    generic = GOLDEN / f"{case}.{stage}.txt"
    own = GOLDEN / f"{case}.{stage}.{VERSION}.txt"
    if stage in VERSIONED and VERSION != REFERENCE:
        own.write_text(actual)
    elif VERSION == REFERENCE or not generic.exists():
        generic.write_text(actual)
    elif generic.read_text() == actual:
        own.unlink(missing_ok=True)  # same as the reference: no version-specific file
    else:
        own.write_text(actual)


def test_each_code_object_is_decoded_once_and_as_itself() -> None:
    # decode() keeps its results (the hook decoded a hot function four or more times).
    # Code objects that compare equal must not share one when what the decoded form
    # records differs: the constants' types, the file, the qualified name.
    def code_of(source: str, filename: str = "<a>") -> object:
        namespace: dict[str, object] = {}
        exec(compile(source, filename, "exec"), namespace)
        return namespace["f"].__code__  # type: ignore[attr-defined]

    one = code_of("def f(x):\n    return x + 1\n")
    assert decode(one) is decode(one)  # type: ignore[arg-type]
    constants = set()
    for literal in ("1", "1.0", "True", "0.0", "-0.0"):
        decoded = decode(code_of(f"def f(x):\n    return x + {literal}\n"))  # type: ignore[arg-type]
        args = [i.arg for i in decoded.instrs if i.op.name == "LOAD_CONST"]
        constants.add(tuple((type(a), repr(a)) for a in args))
    assert len(constants) == 5, constants
    assert decode(code_of("def f(x):\n    return x + 1\n", "<b>")).filename == "<b>"  # type: ignore[arg-type]
    assert decode(code_of("def f(x):\n    return x + 1\n", "<c>")).filename == "<c>"  # type: ignore[arg-type]
