"""What a generated test case is, and how values are written back as Python source.

A `Program` is module source (one entry function `f`, maybe helpers) plus a list of
calls. Each call is a small block of source that binds `args`: executing it again
gives fresh arguments (arrays included, with their layout and aliasing), so the
compiled run and the CPython run never share mutable state, and the same text is
what a reproducer prints. Values are rendered so that executing the text rebuilds
them exactly: NaN signs, -0.0, infinities, subnormals and big ints included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

#: Ints the scalar programs are called with: every boundary native code cares about,
#: and some beyond int64 (those calls cannot enter an int64 specialisation).
EDGE_INTS: tuple[int, ...] = (
    0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 10, 63, 64, 100, 255, 2**31, -(2**31), 2**53 + 1,
    INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 2**62, 3037000499, 3037000500,
    2**63, -(2**63) - 1, 2**64, 3**40, 2**100,
)
#: Floats: signed zeros, infinities, both NaN signs, subnormals, the int64 edges.
EDGE_FLOATS: tuple[float, ...] = (
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 0.1, 1e-300, 5e-324, -5e-324,
    2.2250738585072014e-308, 1e308, -1e308, 1.7976931348623157e308, math.inf, -math.inf,
    math.nan, -math.nan, 2.0**53, 2.0**53 + 2, 2.0**63, -(2.0**63), 9.2e18, math.pi, 1e16, 4.5,
)


@dataclass
class Program:
    """One generated test case."""

    kind: str  # "scalar" or "array"
    seed: str  # what regenerates it: "<kind>:<base seed>:<index>"
    source: str  # module source; the entry function is `f`
    calls: list[str]  # each a source block that binds `args` (a tuple)
    strict: list[bool] = field(default_factory=lambda: [False])  # warning filters: "error" when True
    entry: str = "f"

    def with_changes(self, *, source: str | None = None, calls: list[str] | None = None, strict: list[bool] | None = None) -> "Program":
        return Program(
            self.kind, self.seed, self.source if source is None else source,
            list(self.calls if calls is None else calls), list(self.strict if strict is None else strict), self.entry,
        )


def render_float(x: float) -> str:
    """Source that evaluates to exactly `x` (NaN sign included)."""
    if math.isnan(x):
        return "-math.nan" if math.copysign(1.0, x) < 0 else "math.nan"
    if math.isinf(x):
        return "math.inf" if x > 0 else "-math.inf"
    return repr(x)


def render(value: Any) -> str:
    """Source for a scalar or a tuple of scalars."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        return render_float(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(render(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    raise TypeError(f"cannot render {type(value).__name__}")


def render_elements(values: list[Any], dtype: str) -> str:
    """A list literal of array elements; floats of float arrays keep NaN signs."""
    if dtype.startswith("float"):
        return "[" + ", ".join(render_float(float(v)) for v in values) + "]"
    return "[" + ", ".join(repr(bool(v)) if dtype == "bool" else repr(int(v)) for v in values) + "]"


def make_args(block: str) -> tuple[Any, ...]:
    """Execute a call block and return the `args` it binds (fresh objects each time)."""
    import numpy as np

    ns: dict[str, Any] = {"math": math, "np": np}
    exec(block, ns)
    return ns["args"]


def scalar_call(values: tuple[Any, ...]) -> str:
    """The call block for scalar arguments."""
    return f"args = {render(tuple(values))}"
