"""decode: code object -> version-neutral instructions (the only version-aware layer).

The names below load on first use: the import hook needs only `counting` and
`rawcode` at import time, and the decoder imports the `bytecode` library (~20 ms)."""

from __future__ import annotations

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)
if TYPE_CHECKING:
    from typing import Any

_LAZY = {
    "decode": ".decoder",
    "Decoded": ".instrs",
    "ExceptRegion": ".instrs",
    "Instr": ".instrs",
    "Op": ".instrs",
    "CallArgs": ".instrs",
    "UNCONDITIONAL": ".instrs",
    "CONDITIONAL": ".instrs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = ["decode", "Decoded", "ExceptRegion", "Instr", "Op", "CallArgs", "UNCONDITIONAL", "CONDITIONAL"]
