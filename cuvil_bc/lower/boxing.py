"""Python-side conversion of arguments and results at the native boundary.

For each signature this generates a small function (Python source, compiled once) that
flattens the arguments into the entry point's scalar parameters, and one that rebuilds
the result object from the output words, following the layout in `ltypes.py`.
"""

from __future__ import annotations

from typing import Any, Callable

from ..typing.types import BOOL, FLOAT, INT, NP_BOOL, NP_F64, NP_I64, ArrayType, NpScalar, TupleType, Type, UnionType
from .ltypes import words


_NUMPY_BOX = {NP_F64: "_np.float64(o[{k}].d)", NP_I64: "_np.int64(o[{k}].i)", NP_BOOL: "_np.bool_(o[{k}].i != 0)"}


def _result_expr(t: Type, offset: int) -> str:
    if t in _NUMPY_BOX:
        return _NUMPY_BOX[t].format(k=offset)
    if t == INT:
        return f"o[{offset}].i"
    if t == BOOL:
        return f"(o[{offset}].i != 0)"
    if t == FLOAT:
        return f"o[{offset}].d"
    if isinstance(t, TupleType):
        parts, k = [], offset
        for item in t.items:
            parts.append(_result_expr(item, k))
            k += words(item)
        return "(" + "".join(p + ", " for p in parts) + ")"
    if isinstance(t, UnionType):
        k = offset + 1
        branches = []
        for i, opt in enumerate(t.options):
            branches.append((i, _result_expr(opt, k)))
            k += words(opt)
        expr = branches[-1][1]
        for i, e in reversed(branches[:-1]):
            expr = f"({e} if o[{offset}].i == {i} else {expr})"
        return expr
    return "None"


def _arg_exprs(t: Type, expr: str) -> list[str]:
    if t in (INT, BOOL, FLOAT):
        return [expr]
    if isinstance(t, NpScalar):
        return [f"{'float' if t == NP_F64 else 'int'}({expr})"]
    if isinstance(t, ArrayType):
        # The caller's argument tuple keeps the array alive for the whole native call.
        return [f"{expr}.ctypes.data"] + [f"{expr}.shape[{k}]" for k in range(t.ndim)] + [
            f"{expr}.strides[{k}]" for k in range(t.ndim)
        ]
    if isinstance(t, TupleType):
        return [e for i, item in enumerate(t.items) for e in _arg_exprs(item, f"{expr}[{i}]")]
    return []


def make_boxer(t: Type) -> Callable[[Any], Any]:
    namespace: dict[str, Any] = {}
    source = f"def box(o):\n    return {_result_expr(t, 0)}\n"
    if "_np." in source:
        import numpy

        namespace["_np"] = numpy
    exec(source, namespace)
    return namespace["box"]  # type: ignore[no-any-return]


def make_flattener(argtypes: tuple[Type, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    exprs = [e for i, t in enumerate(argtypes) for e in _arg_exprs(t, f"a[{i}]")]
    if all(t in (INT, BOOL, FLOAT) for t in argtypes):
        return lambda a: a
    namespace: dict[str, Any] = {}
    exec(f"def flatten(a):\n    return ({''.join(e + ', ' for e in exprs)})\n", namespace)
    return namespace["flatten"]  # type: ignore[no-any-return]
