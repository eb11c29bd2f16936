"""Build SSA IR from a CFG by simulating the operand stack block by block.

Locals and the stack slots live across a block boundary become SSA values: a block with
one predecessor inherits its state, and every other block starts with a phi per local
and per stack slot. Most of those phis are trivial; `passes.copyprop` removes them.

    s = 0                          B0:  jump B8
    for i in range(n):     ->      B8:  %2 = phi [B0: 0, B9: %6]  # s
        s += i                          foriter %1 -> B9, exit B20
"""

from __future__ import annotations

from ..cfg import CFG, Block
from ..decode import Op as I
from ..errors import Unsupported
from . import ops as O
from .function import BasicBlock, Function


class _State:
    def __init__(self, local: dict[str, O.Value], stack: list[O.Value]) -> None:
        self.local = local
        self.stack = stack

    def copy(self) -> "_State":
        return _State(dict(self.local), list(self.stack))


def build_ir(cfg: CFG) -> Function:
    return _Builder(cfg).run()


class _Builder:
    def __init__(self, cfg: CFG) -> None:
        self.cfg = cfg
        d = cfg.decoded
        if d.regions:
            r = d.regions[0]
            raise Unsupported("try/except, with or finally", d.location(r.start))
        self.fn = Function(d.qualname, d.filename, d.firstlineno, [O.Arg(i, n) for i, n in enumerate(d.argnames)])
        # A function that writes to memory gets resume points (`O.Checkpoint`): a failed
        # guard must hand the call to the interpreter where it stands, not re-run it.
        self.fn.writes = any(i.op is I.STORE_SUBSCR for i in d.instrs)
        self.blocks: dict[int, BasicBlock] = {}
        self.exit_state: dict[int, _State] = {}

    def run(self) -> Function:
        order = self.cfg.rpo()
        for b in order:
            self.blocks[b.index] = BasicBlock(b.index)
        self.fn.blocks = [self.blocks[b.index] for b in order]
        pending_phis: list[tuple[Block, O.Phi, str | int]] = []
        for b in order:
            state = self.entry_state(b, pending_phis)
            self.translate(b, state)
            self.exit_state[b.index] = state
        for b, phi, key in pending_phis:
            for p in b.preds:
                if p.index not in self.exit_state:
                    continue  # unreachable predecessor
                st = self.edge_state(p, b)
                val = st.local[key] if isinstance(key, str) else st.stack[key]
                phi.incoming.append((self.blocks[p.index], val))
        return self.fn

    def edge_state(self, pred: Block, succ: Block) -> _State:
        st = self.exit_state[pred.index]
        term = self.blocks[pred.index].terminator
        if isinstance(term, O.ForIter) and term.exit is self.blocks[succ.index]:
            return _State(st.local, st.stack[:-1])  # an exhausted FOR_ITER pops its iterator
        return st

    def entry_state(self, b: Block, pending: list[tuple[Block, O.Phi, str | int]]) -> _State:
        d = self.cfg.decoded
        if b is self.cfg.entry:
            local: dict[str, O.Value] = {a.name: a for a in self.fn.args}
            for name in d.varnames:
                local.setdefault(name, O.Undef(name))
            return _State(local, [])
        preds = [p for p in b.preds if p.index in self.blocks]
        done = [p for p in preds if p.index in self.exit_state]
        if len(preds) == 1 and done:
            return self.edge_state(done[0], b).copy()
        first = self.edge_state(done[0], b)
        block = self.blocks[b.index]
        state = _State({}, [])
        for name in first.local:
            phi = O.Phi(var=name)
            block.append(phi)
            state.local[name] = phi
            pending.append((b, phi, name))
        for depth in range(len(first.stack)):
            phi = O.Phi(var=f"stack{depth}")
            block.append(phi)
            state.stack.append(phi)
            pending.append((b, phi, depth))
        return state

    def translate(self, b: Block, st: _State) -> None:
        d = self.cfg.decoded
        block = self.blocks[b.index]
        stack = st.stack
        preds = [p for p in b.preds if p.index in self.blocks]
        if len(preds) == 1 and isinstance(self.blocks[preds[0].index].ops[-1:] and self.blocks[preds[0].index].terminator, O.ForIter):
            term = self.blocks[preds[0].index].terminator
            if isinstance(term, O.ForIter) and term.body is block:
                stack.append(block.append(O.IterValue(term.iterator)))

        def emit(op: O.Op) -> O.Op:
            return block.append(op, ins.lineno)

        def checkpoint(index: int, line: int | None) -> None:
            """A resume point before decoded instruction `index`, with the state now."""
            ins = d.instrs[index]
            # It must start a CPython instruction (3.11's JUMP_IF_FALSE_OR_POP decodes
            # to three ops, and its fallthrough starts at the third).
            starts = index == 0 or d.instrs[index - 1].offset != ins.offset
            names = list(d.varnames)
            values = [st.local[n] for n in names] + list(stack)
            block.append(O.Checkpoint(ins.offset if starts else -1, names, values), line)

        if self.fn.writes:
            checkpoint(b.start, d.instrs[b.start].lineno)

        def pop(n: int) -> list[O.Value]:
            if n == 0:
                return []
            vals = stack[-n:]
            del stack[-n:]
            return vals

        succ = {s.start: self.blocks.get(s.index) for s in b.succs}
        for k, ins in enumerate(b.instrs(d), b.start):
            op = ins.op
            if op is I.LOAD_CONST:
                stack.append(O.Const(ins.arg))
            elif op is I.LOAD_FAST:
                value = st.local[ins.arg]  # type: ignore[index]
                if isinstance(value, (O.Undef, O.Phi)):  # may be unbound: reading it may raise
                    value = emit(O.Narrow(value, None))
                stack.append(value)
            elif op is I.STORE_FAST:
                st.local[ins.arg] = stack.pop()  # type: ignore[index]
            elif op is I.DELETE_FAST:
                st.local[ins.arg] = O.Undef(ins.arg)  # type: ignore[index, arg-type]
            elif op is I.LOAD_GLOBAL:
                stack.append(emit(O.LoadGlobal(ins.arg)))  # type: ignore[arg-type]
            elif op is I.LOAD_ATTR:
                stack.append(emit(O.LoadAttr(stack.pop(), ins.arg)))  # type: ignore[arg-type]
            elif op is I.LOAD_ASSERTION_ERROR:
                stack.append(O.Const(AssertionError))
            elif op is I.BINARY_OP:
                lhs, rhs = pop(2)
                stack.append(emit(O.BinOp(ins.arg, lhs, rhs)))  # type: ignore[arg-type]
            elif op is I.UNARY_OP:
                operand = stack.pop()
                if ins.arg == "not" and isinstance(operand, O.Truth):
                    operand = operand.value  # "not" tests truth itself (3.13 adds TO_BOOL first)
                stack.append(emit(O.UnaryOp(ins.arg, operand)))  # type: ignore[arg-type]
            elif op is I.TO_BOOL:
                stack.append(emit(O.Truth(stack.pop())))
            elif op is I.COMPARE_OP:
                lhs, rhs = pop(2)
                stack.append(emit(O.Compare(ins.arg, lhs, rhs)))  # type: ignore[arg-type]
            elif op is I.IS_OP:
                lhs, rhs = pop(2)
                stack.append(emit(O.Compare("is not" if ins.arg else "is", lhs, rhs)))
            elif op is I.CONTAINS_OP:
                lhs, rhs = pop(2)
                stack.append(emit(O.Compare("not in" if ins.arg else "in", lhs, rhs)))
            elif op is I.BINARY_SUBSCR:
                obj, index = pop(2)
                stack.append(emit(O.Subscript(obj, index)))
            elif op is I.STORE_SUBSCR:
                value, obj, index = pop(3)
                emit(O.StoreItem(obj, index, value))
                checkpoint(k + 1, ins.lineno)
            elif op is I.CALL:
                call = ins.arg
                args = pop(call.argc)  # type: ignore[attr-defined]
                func = stack.pop()
                stack.append(emit(O.Call(func, args, call.kwnames)))  # type: ignore[attr-defined]
            elif op is I.BUILD_TUPLE:
                stack.append(emit(O.BuildTuple(pop(ins.arg))))  # type: ignore[arg-type]
            elif op is I.UNPACK_SEQUENCE:
                seq = emit(O.Unpack(stack.pop(), ins.arg))  # type: ignore[arg-type]
                for k in reversed(range(ins.arg)):  # type: ignore[call-overload]
                    stack.append(emit(O.TupleGet(seq, k)))
            elif op is I.COPY:
                stack.append(stack[-ins.arg])  # type: ignore[operator]
            elif op is I.SWAP:
                n = ins.arg
                stack[-1], stack[-n] = stack[-n], stack[-1]  # type: ignore[operator]
            elif op is I.POP_TOP:
                stack.pop()
            elif op is I.GET_ITER:
                stack.append(emit(O.GetIter(stack.pop())))
            elif op is I.FOR_ITER:
                exit_, body = b.succs
                emit(O.ForIter(stack[-1], self.blocks[body.index], self.blocks[exit_.index]))
            elif op is I.JUMP:
                emit(O.Jump(self.blocks[b.succs[0].index]))
            elif op in (I.POP_JUMP_IF_FALSE, I.POP_JUMP_IF_TRUE, I.POP_JUMP_IF_NONE, I.POP_JUMP_IF_NOT_NONE):
                taken, fall = (self.blocks[s.index] for s in b.succs)
                v = stack.pop()
                if op in (I.POP_JUMP_IF_NONE, I.POP_JUMP_IF_NOT_NONE):
                    cond: O.Value = emit(O.Compare("is", v, O.Const(None)))
                else:
                    cond = v if isinstance(v, O.Truth) else emit(O.Truth(v))
                if op in (I.POP_JUMP_IF_TRUE, I.POP_JUMP_IF_NONE):
                    emit(O.Branch(cond, taken, fall))
                else:
                    emit(O.Branch(cond, fall, taken))
            elif op is I.RETURN_VALUE:
                emit(O.Return(stack.pop()))
            elif op is I.RAISE_VARARGS:
                if ins.arg != 1:
                    raise Unsupported("bare raise or raise ... from ...", d.location(b.end))
                emit(O.Raise(stack.pop()))
            else:
                raise Unsupported(f"instruction {op.value}", d.location(b.end))
        del succ
        if not block.ops or not isinstance(block.ops[-1], O.ControlOp):
            (nxt,) = b.succs
            block.append(O.Jump(self.blocks[nxt.index]))
