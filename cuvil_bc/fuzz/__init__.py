"""Differential fuzzers: random programs, compiled and run against CPython (issue 15).

    python -m cuvil_bc.fuzz --seconds 300 [--seed S] [--kind scalar|array|both] [--jobs 1]

- `scalar_gen` (with `scalar_exprs`, `stypes`): typed random functions over ints,
  floats, bools, None and tuples, with helpers they call, control flow, every
  compiled builtin and `math` function, edge values; they always terminate.
- `array_gen` (with `array_args`): random functions over NumPy arrays of several
  dtypes and layouts, aliasing views, creators, element reads and writes.
- `runner`: runs one program compiled and in CPython under the same warnings filter
  and classifies it (divergence, internal error, native, fallback).
- `minimize`: shrinks a failing program and prints a self-contained reproducer.
- `driver`: batches in this process (tests) or in watched worker processes (CLI).

Importing this package imports neither the compiler nor NumPy.
"""

from __future__ import annotations

__all__ = ["generate", "make_program", "run_batch", "fuzz"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from . import driver

        return getattr(driver, name)
    raise AttributeError(name)
