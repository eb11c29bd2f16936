"""The IR's text form read back: ``parse_function(format_function(fn))`` is `fn` again,
and its text is the same. Tests write a pass's input by hand with it.

Values are named as the printer names them (``%3``, an argument's name, a constant,
``undef(x)``); a value may be used before the line that defines it (a phi's loop
edge, a block listed before the block that dominates it). Compile-time objects print
as ``<name>``: `namespace` gives the object of each name (builtins are known), and
``<module m>`` is the module `m`. Types (``%0: int = ...``) are read by `parse_type`,
which typing hands in (`cuvil_bc.typing.types.parse_type`): the IR does not know what
a type is.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import math
import re
from typing import Any, Callable

from . import ops as O
from .function import BasicBlock, Function
from .operators import BINARY, COMPARE, OPERATORS

_LINE = re.compile(r"^  (?:(%\d+)(?:: (.+?))? = (speculative )?)?(.+?)(?:  ; line (\d+))?$")
# (longest first: "is not" before "is")
_BINARY = sorted((row.symbol for row in OPERATORS.values() if row.kind == BINARY), key=len, reverse=True)
_COMPARE = sorted((row.symbol for row in OPERATORS.values() if row.kind == COMPARE), key=len, reverse=True)


class ParseError(ValueError):
    pass


def parse_function(
    text: str, namespace: dict[str, Any] | None = None, parse_type: Callable[[str], Any] | None = None, filename: str = "<ir>"
) -> Function:
    return _Parser(text, namespace or {}, parse_type).function(filename)


class _Parser:
    def __init__(self, text: str, namespace: dict[str, Any], parse_type: Callable[[str], Any] | None) -> None:
        self.lines = [line for line in text.splitlines() if line.strip()]
        self.namespace = namespace
        self.parse_type = parse_type
        self.args: dict[str, O.Arg] = {}
        self.blocks: dict[str, BasicBlock] = {}
        self.defined: dict[str, O.Op] = {}  # %N -> its op, once made
        self.pending: dict[str, tuple[BasicBlock, int, str, str | None, bool, int | None]] = {}

    # -- the function --------------------------------------------------------------

    def function(self, filename: str) -> Function:
        if not self.lines or not self.lines[0].startswith("def ") or not self.lines[0].endswith("):"):
            raise ParseError("the text starts with 'def name(args):'")
        header = self.lines[0]
        name, params = header[4:-2].split("(", 1)
        fn = Function(name, filename, 0, [])
        for k, param in enumerate(p for p in _split(params, ",") if p):
            pname, _, ptype = param.partition(": ")
            arg = O.Arg(k, pname)
            if ptype:
                arg.type = self._type(ptype)
            fn.args.append(arg)
            self.args[pname] = arg
        body: list[tuple[BasicBlock, str]] = []
        for line in self.lines[1:]:
            if not line.startswith(" "):
                if not re.fullmatch(r"B\d+:", line):
                    raise ParseError(f"expected a block label, not {line!r}")
                block = BasicBlock(len(fn.blocks))
                self.blocks[line[:-1]] = block
                fn.blocks.append(block)
            elif not fn.blocks:
                raise ParseError(f"an op before the first block: {line!r}")
            else:
                body.append((fn.blocks[-1], line))
        # Each op's line, by the name it defines; then the ops, in order, each made once
        # its operands are (a phi first, empty: its incoming values may come later).
        rows: list[tuple[BasicBlock, str | None, str, str | None, bool, int | None]] = []
        for block, line in body:
            m = _LINE.match(line)
            if m is None:
                raise ParseError(f"cannot read {line!r}")
            value, typ, spec, text, lineno = m.groups()
            rows.append((block, value, text, typ, bool(spec), int(lineno) if lineno else None))
            if value is not None:
                if value in self.pending:
                    raise ParseError(f"{value} is defined twice")
                self.pending[value] = (block, len(rows) - 1, text, typ, bool(spec), int(lineno) if lineno else None)
        phis: list[tuple[O.Phi, str]] = []
        made: list[O.Op] = []
        for block, value, text, typ, spec, lineno in rows:
            op = self.defined.get(value) if value is not None else None
            if op is None:
                op = self._make(value, text, phis)
            self._finish(op, typ, spec, lineno)
            block.append(op)
            made.append(op)
        for phi, incoming in phis:
            for item in _split(incoming, ","):
                label, _, v = item.partition(": ")
                phi.incoming.append((self._block(label), self._value(v)))
        fn.writes = any(isinstance(op, O.StoreItem) for op in made)
        return fn

    def _finish(self, op: O.Op, typ: str | None, spec: bool, lineno: int | None) -> None:
        if typ is not None:
            op.type = self._type(typ)
        op.speculative = spec
        op.line = lineno

    def _type(self, text: str) -> Any:
        if self.parse_type is None:
            raise ParseError(f"a type ({text!r}) needs parse_type")
        return self.parse_type(text)

    def _block(self, label: str) -> BasicBlock:
        try:
            return self.blocks[label.strip()]
        except KeyError:
            raise ParseError(f"no block {label.strip()!r}") from None

    # -- values ----------------------------------------------------------------------

    def _value(self, text: str) -> O.Value:
        text = text.strip()
        if text.startswith("%"):
            found = self.defined.get(text)
            if found is None:
                if text not in self.pending:
                    raise ParseError(f"{text} is used but never defined")
                block, _, op_text, typ, spec, lineno = self.pending[text]
                found = self._make(text, op_text, self._later_phis)
                self._finish(found, typ, spec, lineno)
            return found
        if text in self.args:
            return self.args[text]
        m = re.fullmatch(r"undef\((\w+)\)", text)
        if m:
            return O.Undef(m.group(1))
        return O.Const(self._constant(text))

    def _constant(self, text: str) -> Any:
        if text.startswith("<module ") and text.endswith(">"):
            return importlib.import_module(text[8:-1])
        if text.startswith("<") and text.endswith(">"):
            name = text[1:-1]
            if name in self.namespace:
                return self.namespace[name]
            if hasattr(builtins, name):
                return getattr(builtins, name)
            module, _, attr = name.rpartition(".")
            if module:  # <numpy.empty_like>
                try:
                    return getattr(importlib.import_module(module), attr)
                except (ImportError, AttributeError):
                    pass
            raise ParseError(f"no object named {name!r}: pass it in the namespace")
        try:
            return _literal(ast.parse(text, mode="eval").body, text)
        except (ValueError, SyntaxError):
            raise ParseError(f"not a value: {text!r}") from None

    # -- ops -------------------------------------------------------------------------

    _later_phis: list[tuple[O.Phi, str]]

    def _make(self, name: str | None, text: str, phis: list[tuple[O.Phi, str]]) -> O.Op:
        self._later_phis = phis
        op = self._op(text, phis)
        if name is not None:
            self.defined[name] = op
        return op

    def _op(self, text: str, phis: list[tuple[O.Phi, str]]) -> O.Op:
        word, _, rest = text.partition(" ")
        v = self._value
        if word == "phi":
            m = re.fullmatch(r"\[(.*)\](?:  # (\w+))?", rest)
            if m is None:
                raise ParseError(f"cannot read the phi {text!r}")
            phi = O.Phi([], m.group(2) or "")
            phis.append((phi, m.group(1)))
            return phi
        if word in ("binop", "compare"):
            for sym in _BINARY if word == "binop" else _COMPARE:
                lhs, found, rhs = _partition_op(rest, f" {sym} ")
                if found:
                    return (O.BinOp if word == "binop" else O.Compare)(sym, v(lhs), v(rhs))
        if word == "unary":
            sym, _, operand = rest.partition(" ")
            return O.UnaryOp(sym, v(operand))
        if word == "truth":
            return O.Truth(v(rest))
        if word == "select":
            cond, found, arms = _partition_op(rest, " ? ")
            if_true, found2, if_false = _partition_op(arms, " : ")
            if found and found2:
                return O.Select(v(cond), v(if_true), v(if_false))
        if word == "global":
            return O.LoadGlobal(rest)
        if word == "getattr":
            obj, _, attr = rest.rpartition(".")
            return O.LoadAttr(v(obj), attr)
        if word == "call":
            func, args = _call_parts(rest)
            values, kwnames = [], []
            for item in _split(args, ","):
                key, eq, value = item.partition("=")
                if eq and re.fullmatch(r"\w+", key.strip()) and not value.startswith("="):
                    kwnames.append(key.strip())
                    values.append(v(value))
                elif kwnames:
                    raise ParseError(f"a positional argument after a keyword: {text!r}")
                else:
                    values.append(v(item))
            return O.Call(v(func), values, tuple(kwnames))
        if word == "tuple":
            if not (rest.startswith("(") and rest.endswith(")")):
                raise ParseError(f"cannot read {text!r}")
            return O.BuildTuple([v(i) for i in _split(rest[1:-1], ",")])
        if word == "unpack":
            seq, _, count = rest.rpartition(" into ")
            return O.Unpack(v(seq), int(count))
        if word == "tupleget":
            tup, index = _indexed(rest)
            return O.TupleGet(v(tup), int(index))
        if word == "subscript":
            obj, index = _indexed(rest)
            return O.Subscript(v(obj), v(index))
        if word == "setitem":
            target, _, value = _partition_op(rest, " = ")
            obj, index = _indexed(target)
            return O.StoreItem(v(obj), v(index), v(value))
        if word == "checkpoint":
            usable = not rest.startswith("unusable ")
            state = rest if usable else rest[len("unusable ") :]
            names, values, stack = [], [], []
            for item in _split(state[1:-1], ","):
                key, _, value = item.partition("=")
                if re.fullmatch(r"stack\d+", key):
                    stack.append(v(value))
                else:
                    names.append(key)
                    values.append(v(value))
            return O.Checkpoint(0 if usable else -1, names, values + stack)
        if word == "bound":
            return O.Narrow(v(rest), None)
        if word == "narrow":
            for tail, is_none in ((" is not None", False), (" is None", True)):
                if rest.endswith(tail):
                    return O.Narrow(v(rest[: -len(tail)]), is_none)
        if word == "getiter":
            return O.GetIter(v(rest))
        if word == "itervalue":
            return O.IterValue(v(rest))
        if word == "jump":
            return O.Jump(self._block(rest))
        if word == "branch":
            m = re.fullmatch(r"(.+) \? (B\d+) : (B\d+)", rest)
            if m:
                return O.Branch(v(m.group(1)), self._block(m.group(2)), self._block(m.group(3)))
        if word == "foriter":
            m = re.fullmatch(r"(.+) -> (B\d+), exit (B\d+)", rest)
            if m:
                return O.ForIter(v(m.group(1)), self._block(m.group(2)), self._block(m.group(3)))
        if word == "return":
            return O.Return(v(rest))
        if word == "raise":
            return O.Raise(v(rest))
        raise ParseError(f"cannot read the op {text!r}")


def _top_level(text: str) -> list[int]:
    """For each character of `text`, the depth of brackets and parentheses it is at
    (an opening one: the depth outside it), or -1 inside quotes and object names
    (``<fib>``, ``<module math>``)."""
    depths: list[int] = []
    depth, quote, k = 0, "", 0
    while k < len(text):
        c = text[k]
        if quote:
            depths.append(-1)
            if c == "\\" and k + 1 < len(text):
                depths.append(-1)
                k += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
            depths.append(-1)
        elif c == "<" and k + 1 < len(text) and (text[k + 1].isalpha() or text[k + 1] == "_"):
            end = text.find(">", k)
            end = len(text) - 1 if end < 0 else end
            depths.extend([-1] * (end - k + 1))
            k = end
        elif c in "([":
            depths.append(depth)
            depth += 1
        elif c in ")]":
            depth -= 1
            depths.append(depth)
        else:
            depths.append(depth)
        k += 1
    return depths


def _split(text: str, sep: str) -> list[str]:
    """`text` split at each `sep` outside brackets, parentheses, names and quotes."""
    depths = _top_level(text)
    parts, start = [], 0
    for k, c in enumerate(text):
        if c == sep and depths[k] == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    last = text[start:].strip()
    return parts + [last] if last or parts else []


def _partition_op(text: str, sym: str) -> tuple[str, str, str]:
    """`text` split at the first `sym` outside brackets, names and quotes."""
    depths = _top_level(text)
    for k in range(len(text)):
        if depths[k] == 0 and text.startswith(sym, k):
            return text[:k], sym, text[k + len(sym) :]
    return text, "", ""


def _call_parts(text: str) -> tuple[str, str]:
    """``f(a, b)`` as ("f", "a, b")."""
    return _opened(text, "(", ")", "call")


def _indexed(text: str) -> tuple[str, str]:
    """``a[i]`` as ("a", "i")."""
    return _opened(text, "[", "]", "index")


def _opened(text: str, opening: str, closing: str, what: str) -> tuple[str, str]:
    """`text` as the value before its first top-level `opening` and what is between
    it and the `closing` that ends `text`."""
    depths = _top_level(text)
    for k in range(1, len(text)):
        if text[k] == opening and depths[k] == 0 and text.endswith(closing):
            return text[:k], text[k + 1 : -1]
    raise ParseError(f"cannot read the {what} {text!r}")


_NAMED = {"inf": math.inf, "nan": math.nan, "Ellipsis": ...}


def _literal(node: ast.expr, text: str) -> Any:
    """A constant as the printer writes it (`text`, of which `node` is a part): Python
    literals, ``inf``, ``nan`` and ``Ellipsis`` (repr gives them as names), complex
    numbers as repr writes them (``(-0-0j)``, ``(nan+infj)``), in tuples too."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMED:
        return _NAMED[node.id]
    if isinstance(node, ast.BinOp) or (isinstance(node, ast.Name) and node.id in ("infj", "nanj")):
        # (as complex() reads it: Python's ``-0-0j`` would lose the real part's sign)
        return complex(ast.get_source_segment(text, node) or "")
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, text) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand, text)
        if type(value) is complex:  # (``-infj``: complex() keeps the real part +0.0)
            return complex(ast.get_source_segment(text, node) or "")
        if type(value) in (int, float):
            return -value if isinstance(node.op, ast.USub) else +value
    raise ValueError("not a constant")
