"""ir: the SSA IR, its text form, verifier, builder and passes."""

from .builder import build_ir
from .function import BasicBlock, Function
from .printer import format_function
from .verifier import VerifyError, verify

__all__ = ["build_ir", "BasicBlock", "Function", "format_function", "verify", "VerifyError"]
