"""What differs between the CPython versions cuvil_bc supports, in one place.

Only the `decode` package may import this module: every later layer sees the neutral
instruction set of `instrs.py` and never asks which Python is running.
"""

from __future__ import annotations

import sys

SUPPORTED = ((3, 11), (3, 12), (3, 13))
VERSION = sys.version_info[:2]
PY312 = VERSION >= (3, 12)
PY313 = VERSION >= (3, 13)

#: Instructions that only manage the interpreter's bookkeeping and carry no semantics
#: that the neutral set needs (NULL pushes for calls, caches, tracing hooks).
BOOKKEEPING = frozenset(
    {"RESUME", "NOP", "CACHE", "PRECALL", "PUSH_NULL", "EXTENDED_ARG", "NOT_TAKEN"}
)

#: 3.11's forward/backward jump variants and 3.12+'s direction-free ones.
JUMPS = {
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "JUMP": "JUMP",
    "JUMP_NO_INTERRUPT": "JUMP",
    "POP_JUMP_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}

#: 3.11 only: jump keeping the tested value, else pop it.
JUMP_OR_POP = {"JUMP_IF_FALSE_OR_POP": "POP_JUMP_IF_FALSE", "JUMP_IF_TRUE_OR_POP": "POP_JUMP_IF_TRUE"}

UNARY = {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+", "UNARY_INVERT": "~", "UNARY_NOT": "not"}

#: `bytecode.BinaryOp` member names (without INPLACE_) to operator text.
BINARY = {
    "ADD": "+",
    "SUBTRACT": "-",
    "MULTIPLY": "*",
    "TRUE_DIVIDE": "/",
    "FLOOR_DIVIDE": "//",
    "REMAINDER": "%",
    "POWER": "**",
    "LSHIFT": "<<",
    "RSHIFT": ">>",
    "AND": "&",
    "OR": "|",
    "XOR": "^",
    "MATRIX_MULTIPLY": "@",
}

#: `bytecode.Compare` member names (without 3.13's _CAST) to operator text.
COMPARE = {"LT": "<", "LE": "<=", "EQ": "==", "NE": "!=", "GT": ">", "GE": ">="}

#: What a user would call the constructs behind instructions we do not decode.
CONSTRUCTS = {
    "MAKE_FUNCTION": "nested function or lambda",
    "LOAD_CLOSURE": "closure",
    "LOAD_DEREF": "closure variable",
    "STORE_DEREF": "closure variable",
    "MAKE_CELL": "closure variable",
    "COPY_FREE_VARS": "closure",
    "BUILD_LIST": "list",
    "BUILD_MAP": "dict",
    "BUILD_SET": "set",
    "BUILD_STRING": "f-string",
    "FORMAT_VALUE": "f-string",
    "FORMAT_SIMPLE": "f-string",
    "RETURN_GENERATOR": "generator",
    "YIELD_VALUE": "generator",
    "PUSH_EXC_INFO": "try/except",
    "BEFORE_WITH": "with statement",
    "STORE_ATTR": "attribute assignment",
    "STORE_GLOBAL": "global statement",
    "IMPORT_NAME": "import inside a function",
    "LOAD_FAST_AND_CLEAR": "comprehension",
    "CALL_FUNCTION_EX": "call with *args or **kwargs",
    "BINARY_SLICE": "slice",
    "BUILD_SLICE": "slice",
}

#: Where ``COMPARE_OP``'s argument keeps the comparison's index into `opcode.cmp_op`
#: (the low bits are caching and, on 3.13, bool-coercion flags).
COMPARE_SHIFT = 5 if PY313 else 4 if PY312 else 0
