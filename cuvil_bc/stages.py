"""Where compile time goes: seconds per stage of compilation, summed over the process.

`benchmarks/run.py` reads them around each first call (issue 19: compile latency
is measured per stage). A stage is timed where the driver enters it once per
compile, so nested work (a callee typed while its caller is) counts once.
"""

from __future__ import annotations

import contextlib
import threading
import time

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Iterator

#: In the order a compile runs them: decoding to typed and optimised IR (with the
#: callees'), LLVM IR generation, LLVM's optimisation pipeline, machine code.
STAGES = ("typing", "lowering", "llvm-optimisation", "machine-code")

_lock = threading.Lock()
_seconds = dict.fromkeys(STAGES, 0.0)


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        spent = time.perf_counter() - start
        with _lock:
            _seconds[name] += spent


def seconds() -> dict[str, float]:
    """The seconds spent in each stage so far, by every thread of the process."""
    with _lock:
        return dict(_seconds)
