"""decode: code object -> version-neutral instructions (the only version-aware layer)."""

from .decoder import decode
from .instrs import UNCONDITIONAL, CONDITIONAL, CallArgs, Decoded, ExceptRegion, Instr, Op

__all__ = ["decode", "Decoded", "ExceptRegion", "Instr", "Op", "CallArgs", "UNCONDITIONAL", "CONDITIONAL"]
