"""Decode a code object into the neutral instruction list of `instrs.py`.

The `bytecode` package parses the code object; this module maps each CPython
instruction to zero or more neutral ones, resolves jump targets to instruction indices
and keeps the exception table as regions. For example, on 3.13::

    LOAD_FAST_LOAD_FAST ('a', 'b'); BINARY_OP ADD; RETURN_VALUE
    ->  LOAD_FAST 'a'; LOAD_FAST 'b'; BINARY_OP '+'; RETURN_VALUE
"""

from __future__ import annotations

import dis
import types
from typing import Any

import bytecode

from ..errors import Unsupported
from . import versions as V
from .counting import without_counters
from .instrs import CallArgs, Decoded, ExceptRegion, Instr, Op
from .percode import per_code


#: What a user calls the code a MAKE_FUNCTION makes, by its name.
_NESTED = {
    "<lambda>": "lambda",
    "<genexpr>": "generator expression",
    "<listcomp>": "list comprehension",
    "<setcomp>": "set comprehension",
    "<dictcomp>": "dict comprehension",
}


def decode(code: types.CodeType) -> Decoded:
    """Decode `code`, or raise `Unsupported` naming the first construct we cannot decode."""
    if V.VERSION not in V.SUPPORTED:
        raise Unsupported(f"Python {V.VERSION[0]}.{V.VERSION[1]} is not supported")
    return _decoded(code)


@per_code(maxsize=64)
def _decoded(code: types.CodeType) -> Decoded:
    """`decode`, once per code (a result is immutable): the hook's front end, its test
    of the arguments' types and the compile each decoded a hot function again (~1 ms
    each, four or more times per function with its callees)."""
    return _Decoder(code).run()


class _Decoder:
    def __init__(self, code: types.CodeType) -> None:
        self.code = code
        self.out: list[Instr] = []
        self.targets: dict[int, Any] = {}  # out index -> bytecode.Label
        self.label_index: dict[int, int] = {}  # id(label) -> out index
        self.pending_labels: list[Any] = []
        self.kwnames: tuple[str, ...] = ()
        self.drop_pop_after_end_for = False
        self.open_regions: list[tuple[Any, int]] = []  # (TryBegin, first out index)
        self.regions: list[tuple[int, int, Any, int, bool]] = []
        self.made_code: types.CodeType | None = None  # the code a MAKE_FUNCTION next would make

    def location(self, lineno: int | None) -> str:
        return f"{self.code.co_filename}:{lineno if lineno is not None else self.code.co_firstlineno}"

    def run(self) -> Decoded:
        code = self.code
        if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):  # generator / coroutine flags
            raise Unsupported("generator or coroutine", self.location(None))
        if code.co_freevars or code.co_cellvars:
            raise Unsupported("closure", self.location(None))
        code = without_counters(code)  # the import hook's counters and exits: the function as written
        abstract = bytecode.Bytecode.from_code(code)
        offsets = [i.offset for i in dis.get_instructions(code) if i.opname not in ("EXTENDED_ARG", "CACHE")]
        k = 0
        for n, item in enumerate(abstract):
            if isinstance(item, bytecode.Label):
                self.pending_labels.append(item)
            elif isinstance(item, bytecode.TryBegin):
                self.open_regions.append((item, len(self.out)))
            elif isinstance(item, bytecode.TryEnd):
                begin, start = self.open_regions.pop()
                if len(self.out) > start:
                    self.regions.append((start, len(self.out) - 1, begin.target, begin.stack_depth, bool(begin.push_lasti)))
            elif isinstance(item, bytecode.Instr):
                offset = offsets[k] if k < len(offsets) else -1
                k += 1
                self.instr(item, offset)
        return self.finish()

    # -- emission -----------------------------------------------------------------

    def emit(self, op: Op, arg: object, src: Any, offset: int, label: Any = None) -> None:
        index = len(self.out)
        for pending in self.pending_labels:
            self.label_index[id(pending)] = index
        self.pending_labels.clear()
        self.out.append(Instr(op, arg, offset, src.lineno))
        if label is not None:
            self.targets[index] = label

    def instr(self, ins: Any, offset: int) -> None:
        name: str = ins.name
        arg = ins.arg
        emit = lambda op, a=None, label=None: self.emit(op, a, ins, offset, label)  # noqa: E731

        if self.drop_pop_after_end_for:
            self.drop_pop_after_end_for = False
            if name == "POP_TOP":
                return
        if name in V.BOOKKEEPING:
            return
        if name == "KW_NAMES":
            self.kwnames = tuple(arg)
            return
        if name == "END_FOR":
            # The loop exit of FOR_ITER: the neutral FOR_ITER already popped the iterator.
            self.drop_pop_after_end_for = V.PY313
            return
        made_code, self.made_code = self.made_code, arg if name == "LOAD_CONST" and isinstance(arg, types.CodeType) else None
        if name == "LOAD_CONST":
            emit(Op.LOAD_CONST, arg)
        elif name == "RETURN_CONST":
            emit(Op.LOAD_CONST, arg)
            emit(Op.RETURN_VALUE)
        elif name in ("LOAD_FAST", "LOAD_FAST_CHECK"):
            emit(Op.LOAD_FAST, arg)
        elif name == "LOAD_FAST_LOAD_FAST":
            emit(Op.LOAD_FAST, arg[0])
            emit(Op.LOAD_FAST, arg[1])
        elif name == "STORE_FAST":
            emit(Op.STORE_FAST, arg)
        elif name == "STORE_FAST_STORE_FAST":
            emit(Op.STORE_FAST, arg[0])
            emit(Op.STORE_FAST, arg[1])
        elif name == "STORE_FAST_LOAD_FAST":
            emit(Op.STORE_FAST, arg[0])
            emit(Op.LOAD_FAST, arg[1])
        elif name == "DELETE_FAST":
            emit(Op.DELETE_FAST, arg)
        elif name == "LOAD_GLOBAL":
            emit(Op.LOAD_GLOBAL, arg[1] if isinstance(arg, tuple) else arg)
        elif name in ("LOAD_ATTR", "LOAD_METHOD"):
            emit(Op.LOAD_ATTR, arg[1] if isinstance(arg, tuple) else arg)
        elif name == "LOAD_ASSERTION_ERROR":
            emit(Op.LOAD_ASSERTION_ERROR)
        elif name == "BINARY_OP":
            emit(Op.BINARY_OP, V.BINARY[arg.name.removeprefix("INPLACE_")])
        elif name in V.UNARY:
            emit(Op.UNARY_OP, V.UNARY[name])
        elif name == "CALL_INTRINSIC_1" and arg.name == "INTRINSIC_UNARY_POSITIVE":
            emit(Op.UNARY_OP, "+")
        elif name == "TO_BOOL":
            emit(Op.TO_BOOL)
        elif name == "COMPARE_OP":
            emit(Op.COMPARE_OP, V.COMPARE[arg.name.removesuffix("_CAST")])
            if arg.name.endswith("_CAST"):
                emit(Op.TO_BOOL)
        elif name == "IS_OP":
            emit(Op.IS_OP, bool(arg))
        elif name == "CONTAINS_OP":
            emit(Op.CONTAINS_OP, bool(arg))
        elif name == "BINARY_SUBSCR":
            emit(Op.BINARY_SUBSCR)
        elif name == "STORE_SUBSCR":
            emit(Op.STORE_SUBSCR)
        elif name == "CALL":
            argc = arg
            if arg == 0 and len(self.out) >= 2 and self.out[-2].op is Op.LOAD_ASSERTION_ERROR:
                # `assert x, msg` pushes the message where a call's "self" goes, so
                # CALL 0 calls AssertionError(msg).
                argc = 1
            emit(Op.CALL, CallArgs(argc, self.kwnames))
            self.kwnames = ()
        elif name == "CALL_KW":
            kw = self.out.pop()  # the LOAD_CONST of the keyword-name tuple
            assert kw.op is Op.LOAD_CONST and isinstance(kw.arg, tuple)
            emit(Op.CALL, CallArgs(arg, kw.arg))
        elif name == "BUILD_TUPLE":
            emit(Op.BUILD_TUPLE, arg)
        elif name == "UNPACK_SEQUENCE":
            emit(Op.UNPACK_SEQUENCE, arg)
        elif name == "COPY":
            emit(Op.COPY, arg)
        elif name == "SWAP":
            emit(Op.SWAP, arg)
        elif name == "POP_TOP":
            emit(Op.POP_TOP)
        elif name == "GET_ITER":
            emit(Op.GET_ITER)
        elif name == "FOR_ITER":
            emit(Op.FOR_ITER, label=arg)
        elif name in V.JUMPS:
            emit(Op(V.JUMPS[name]), label=arg)
        elif name in V.JUMP_OR_POP:
            # Jump keeping the value, else pop it: the same as testing a copy.
            emit(Op.COPY, 1)
            emit(Op(V.JUMP_OR_POP[name]), label=arg)
            emit(Op.POP_TOP)
        elif name == "RETURN_VALUE":
            emit(Op.RETURN_VALUE)
        elif name == "RAISE_VARARGS":
            emit(Op.RAISE_VARARGS, arg)
        else:
            construct = V.CONSTRUCTS.get(name, f"bytecode instruction {name}")
            if name == "MAKE_FUNCTION" and made_code is not None:
                construct = _NESTED.get(made_code.co_name, "nested function")
            raise Unsupported(construct, self.location(ins.lineno))

    def finish(self) -> Decoded:
        def resolve(label: Any) -> int:
            index = self.label_index.get(id(label))
            if index is None:
                raise Unsupported("jump to a removed instruction", self.location(None))
            return index

        instrs = [
            Instr(i.op, i.arg, i.offset, i.lineno, resolve(self.targets[n]) if n in self.targets else None)
            for n, i in enumerate(self.out)
        ]
        regions = tuple(ExceptRegion(s, e, resolve(t), d, lasti) for s, e, t, d, lasti in self.regions)
        code = self.code
        nargs = code.co_argcount + code.co_kwonlyargcount
        if code.co_flags & 0x04:
            nargs += 1
        if code.co_flags & 0x08:
            nargs += 1
        return Decoded(
            name=code.co_name,
            qualname=code.co_qualname,
            filename=code.co_filename,
            firstlineno=code.co_firstlineno,
            argnames=code.co_varnames[:nargs],
            varnames=code.co_varnames,
            instrs=tuple(instrs),
            regions=regions,
        )
