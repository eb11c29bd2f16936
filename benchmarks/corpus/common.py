"""Shared definitions for the benchmark corpus (see run.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str  # unique across the corpus, e.g. "heat_2d"
    func: Callable  # the kernel: a plain top-level function
    make_args: Callable[[], tuple]  # builds fresh, deterministic arguments
    domain: str  # "physics", "image", ...
    #: the kernel's result depends on its array arguments' contents in a way that
    #: changes if it is re-run on its own output (an in-place factorisation): the
    #: timing then gives every call fresh copies (made outside the timed region).
    fresh_args: bool = False


def rng(seed: int) -> np.random.Generator:
    """The corpus's only source of random inputs: fixed seeds, so every run sees the
    same data."""
    return np.random.default_rng(seed)
