"""The import hook's counters, put in and taken out as raw bytes (decode/rawcode.py,
decode/counting.py), and the C counter they tick (csrc/counter.c).

Counted code must behave exactly as the code CPython compiled: the same results and
exceptions, the same line events for a tracer, the same exception handling (the
exception table moves with the code). Taking the counters out must give back that
code byte for byte."""

from __future__ import annotations

import dis
import importlib
import pickle
import sys
import types

import pytest

from cuvil_bc.counters import Counter, live
from cuvil_bc.decode.counting import add_counters, without_counters
from cuvil_bc.decode.rawcode import instructions, relayout

STDLIB = ["argparse", "ast", "difflib", "inspect", "json.decoder", "textwrap", "statistics", "fractions", "email.message", "asyncio.tasks", "tokenize"]


def _functions(code: types.CodeType):  # type: ignore[no-untyped-def]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _functions(const)


def _stdlib_codes() -> list[types.CodeType]:
    codes = []
    for name in STDLIB:
        module = importlib.import_module(name)
        with open(module.__file__) as f:  # type: ignore[arg-type]
            codes += list(_functions(compile(f.read(), module.__file__, "exec")))  # type: ignore[arg-type]
    return codes


def _same(a: types.CodeType, b: types.CodeType) -> None:
    assert a.co_code == b.co_code, a.co_qualname
    assert list(a.co_positions()) == list(b.co_positions()), a.co_qualname
    assert a.co_exceptiontable == b.co_exceptiontable, a.co_qualname
    assert a.co_consts == b.co_consts and a.co_stacksize == b.co_stacksize, a.co_qualname


def test_counters_come_out_byte_for_byte_on_the_standard_library() -> None:
    codes = _stdlib_codes()
    assert len(codes) > 500
    for code in codes:
        _same(relayout(code, [], set()), code)
        for gate in (None, "k@osr"):  # (the hook's rewrite has the gate: exits to stubs)
            counted = add_counters(code, "k", "k@loop", gate)
            assert counted.co_code != code.co_code
            _same(without_counters(counted), code)


def test_loop_exits_stack_depths_are_those_the_resume_analysis_gives_on_the_standard_library() -> None:
    # An exit's stub copies the loop's stack (decode/counting.py): a depth too large
    # would copy what is not there, a NULL would crash. The depths come from opcode's
    # stack effects alone; decode/resume.py's analysis (through dis) must agree, and
    # find only values there.
    from cuvil_bc.decode.counting import _osr_depths
    from cuvil_bc.decode.resume import stack_nulls

    exits = 0
    for code in _stdlib_codes():
        instrs = instructions(code)
        layouts = stack_nulls(code)
        for n, depth in _osr_depths(code, instrs).items():
            layout = layouts[instrs[n].start + 2 * instrs[n].prefixes]
            assert layout == (False,) * depth, (code.co_qualname, n)
            exits += 1
    assert exits > 300


def test_a_prefixs_stack_depths_are_those_a_full_analysis_gives_on_the_standard_library() -> None:
    # with_prefix assembles with the stack depths it read (the prefix's and the body's
    # try blocks keep theirs) and a stack size of the larger of the two: the bytecode
    # library working them out again from the control-flow graph must agree (a wrong
    # handler depth crashed CPython). Functions with try blocks, behind a trampoline's
    # prefix, which has one of its own.
    import bytecode

    from cuvil_bc.counters import NativeCall
    from cuvil_bc.decode.counting import trampoline

    # (not generators and coroutines, which neither the hook nor the decorator gives a
    # prefix: their whole body is in an implicit try block)
    codes = [c for c in _stdlib_codes() if c.co_exceptiontable and not c.co_flags & 0x3A0]
    assert len(codes) > 100
    for code in codes:
        made = trampoline(code, NativeCall(None))
        again = bytecode.Bytecode.from_code(made).to_code()  # depths worked out afresh
        assert made.co_exceptiontable == again.co_exceptiontable, code
        assert made.co_stacksize >= again.co_stacksize, code


def test_jump_targets_are_those_dis_gives_on_the_standard_library() -> None:
    # rawcode computes them from opcode's tables alone (importing dis would cost each
    # hooked program ~1 ms); a wrong rule would move jumps to wrong places.
    jumps = 0
    for code in _stdlib_codes():
        expected = {i.offset: i.argval for i in dis.get_instructions(code) if i.opcode in dis.hasjrel or i.opcode in getattr(dis, "hasjump", ())}
        got = {2 * i.prefixes + i.start: i.target for i in instructions(code) if i.target is not None}
        assert got == expected, code.co_qualname
        jumps += len(got)
    assert jumps > 2000


class _Gate:
    """Answers an exit's stub as `hook.osr` may: itself (not entered), or a result."""

    def __init__(self, answer: object = None) -> None:
        self.answer = self if answer is None else answer
        self.asked: list[tuple[object, ...]] = []

    def __getitem__(self, key: object) -> object:
        if isinstance(key, BaseException):
            return None
        self.asked.append(key)  # type: ignore[arg-type]
        return self.answer


def _live(code: types.CodeType, gate: object = None) -> tuple[types.CodeType, Counter, Counter]:
    calls, loops = Counter(10**9, None), Counter(10**9, None)
    counted = add_counters(code, "k", "k@loop", "k@osr")
    return live(counted, {"k": calls, "k@loop": loops, "k@osr": gate or _Gate()}), calls, loops


def _loops(n):  # type: ignore[no-untyped-def]
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        j = i
        while j > 0:
            j //= 2
            if j == 5:
                break
            total += j
    return total


def _handlers(n):  # type: ignore[no-untyped-def]
    out = []
    for i in range(n):
        try:
            try:
                out.append(10 // (i % 4))
            finally:
                out.append(-i)
        except ZeroDivisionError as e:
            out.append(str(e))
        with open(__file__) as f:
            out.append(len(f.readline()))
    return out


def _long_body(n):  # type: ignore[no-untyped-def]
    # A loop body far over 256 units: its back jump needs EXTENDED_ARG, more once counted.
    t = 0
    for i in range(n):
        t += i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t -= i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t += i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t -= i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t += i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t -= i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t += i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 10
        t -= i * 1 + i * 2 + i * 3 + i * 4 + i * 5 + i * 6 + i * 7 + i * 8 + i * 9 + i * 11
        if t < -(10**6):
            break
    return t


def _lines(f, arg):  # type: ignore[no-untyped-def]
    events: list[tuple[str, int]] = []

    def tracer(frame, event, _arg):  # type: ignore[no-untyped-def]
        if frame.f_code.co_name == f.__code__.co_name:
            events.append((event, frame.f_lineno))
        return tracer

    sys.settrace(tracer)
    try:
        result = f(arg)
    except Exception as e:  # noqa: BLE001
        result = repr(e)
    finally:
        sys.settrace(None)
    return result, events


@pytest.mark.parametrize("fn", [_loops, _handlers, _long_body])
def test_counted_code_runs_and_traces_as_written(fn) -> None:  # type: ignore[no-untyped-def]
    code, calls, loops = _live(fn.__code__)
    if fn is _long_body:  # the case it is there for: a jump that needs EXTENDED_ARG
        assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(code))
    counted = types.FunctionType(code, fn.__globals__)
    for n in (0, 1, 7, 40):
        assert _lines(counted, n) == _lines(fn, n)
        assert counted(n) == fn(n)
    assert calls.ticks == 8  # 4 traced and 4 plain calls
    assert loops.ticks > 0


@pytest.mark.parametrize("fn", [_loops, _long_body])
def test_a_loop_exit_not_entered_goes_on_as_written(fn) -> None:  # type: ignore[no-untyped-def]
    # With `enter` set, every loop jump goes to its stub, which asks the gate with the
    # jump's offset (in the code as written) and the loop's stack; a gate that answers
    # itself sends it back to the jump.
    gate = _Gate()
    code, calls, loops = _live(fn.__code__, gate)
    loops.enter = True
    counted = types.FunctionType(code, fn.__globals__)
    for n in (0, 1, 7, 40):
        assert counted(n) == fn(n)
    jumps = {i.offset for i in dis.get_instructions(fn.__code__) if "BACKWARD" in i.opname}
    assert gate.asked and {key[0] for key in gate.asked} <= jumps, gate.asked
    assert all(type(v) is type(iter(range(0))) for key in gate.asked if len(key) > 1 for v in key[1:] if not isinstance(v, bool))


def test_a_loop_exit_entered_returns_the_gates_answer() -> None:
    code, _, loops = _live(_loops.__code__, _Gate(answer="native"))
    counted = types.FunctionType(code, _loops.__globals__)
    assert counted(40) == _loops(40)
    loops.enter = True
    assert counted(40) == "native"
    assert counted(0) == _loops(0)  # (no loop iteration: no exit)


def test_an_exception_from_the_gate_passes_its_handler() -> None:
    class Raising(_Gate):
        def __getitem__(self, key: object) -> object:
            if isinstance(key, BaseException):
                key.add_note("handled")
                return None
            raise ValueError("from the gate")

    code, _, loops = _live(_loops.__code__, Raising())
    loops.enter = True
    with pytest.raises(ValueError, match="from the gate") as info:
        types.FunctionType(code, _loops.__globals__)(40)
    assert info.value.__notes__ == ["handled"]


def test_a_counter_ticks_triggers_once_and_pickles_as_nonetype() -> None:
    fired: list[int] = []
    c = Counter(3, lambda: fired.append(c.ticks))
    for _ in range(10):
        assert not (not c)
    assert (c.ticks, fired, c.left) == (10, [3], 0)
    assert pickle.loads(pickle.dumps(c)) is type(None)


def test_an_exception_from_the_trigger_comes_out_of_the_tick() -> None:
    def stop() -> None:
        raise KeyboardInterrupt

    c = Counter(1, stop)
    with pytest.raises(KeyboardInterrupt):
        not c  # noqa: B015
    not c  # noqa: B015 (triggered once: the next tick only counts)
    assert c.ticks == 2


def test_equal_functions_of_two_files_keep_their_own_file_behind_a_prefix() -> None:
    # Code objects compare equal whatever their file and qualified name: the prefix's
    # cache of decoded code gave the second one the first one's file (its tracebacks
    # named the other module).
    from cuvil_bc.counters import NativeCall
    from cuvil_bc.decode.counting import trampoline

    source = "def f(x):\n    return x[0]\n"
    codes = [compile(source, name, "exec").co_consts[0] for name in ("moda.py", "modb.py")]
    assert codes[0] == codes[1]
    made = [trampoline(code, NativeCall(None)) for code in codes]
    assert [m.co_filename for m in made] == ["moda.py", "modb.py"]


def _as_written(code: types.CodeType) -> list[tuple[object, ...]]:
    """`code`'s instructions as dis reads them, with each jump's target as a distance."""
    return [
        (i.opname, i.argval - i.offset if i.opcode in dis.hasjrel or i.opcode in getattr(dis, "hasjump", ()) else i.argval, i.positions)
        for i in dis.get_instructions(code)
    ]


def test_a_prefix_is_spliced_in_front_of_the_body_as_written_on_the_standard_library(monkeypatch: pytest.MonkeyPatch) -> None:
    # with_prefix splices the prefix in place (rawcode.prefixed), without the bytecode
    # library (~20 ms to import, milliseconds a function): the body must follow it
    # instruction for instruction, with its positions, its names, constants and
    # locals, and its jumps going as far.
    from cuvil_bc.counters import NativeCall
    from cuvil_bc.decode import counting
    from cuvil_bc.decode.counting import trampoline

    def assembled(*args: object) -> types.CodeType:
        raise AssertionError("assembled by the bytecode library")

    monkeypatch.setattr(counting, "_with_prefix_assembled", assembled)
    # (not 3.11's comprehensions, whose parameter ``.0`` no prefix could name)
    codes = [c for c in _stdlib_codes() if not c.co_flags & 0x3A0 and not c.co_cellvars and not c.co_freevars and ".0" not in c.co_varnames]
    assert len(codes) > 500
    for code in codes:
        made = trampoline(code, NativeCall(None))
        body, got = _as_written(code)[1:], _as_written(made)
        assert got[0] == _as_written(code)[0], code.co_qualname  # (its RESUME, at the def)
        assert any(got[k : k + len(body)] == body for k in range(1, len(got) - len(body) + 1)), code.co_qualname
        assert made.co_varnames[: len(code.co_varnames)] == code.co_varnames, code.co_qualname


def test_a_prefix_in_front_of_code_with_cells_is_assembled_by_the_bytecode_library() -> None:
    # (its new local would move the cells' indices: rawcode.prefixed leaves it to the
    # bytecode library; a parameter that is a cell, the dispatcher never prefixes)
    from cuvil_bc.decode.counting import with_prefix

    def outer(x, y=2):  # type: ignore[no-untyped-def]
        z = x * y

        def inner():  # type: ignore[no-untyped-def]
            return z

        return inner() + 1

    seen: list[object] = []
    source = "    __cb_r = __cb_seen.append(x)\n    del __cb_r\n"
    made = types.FunctionType(with_prefix(outer.__code__, source, {"__cb_seen": seen}), globals(), "outer", (2,))
    assert (made(5), made(1, 7), seen) == (outer(5), outer(1, 7), [5, 1])


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """`code`'s instructions with their positions, each jump's target as an index, and
    its exception table's ranges and handlers as indices (depths apart)."""
    ins = list(dis.get_instructions(code))
    index = {i.offset: k for k, i in enumerate(ins)}
    jumps = set(dis.hasjrel) | set(getattr(dis, "hasjump", ()))
    listed = [(i.opname, ("to", index[i.argval]) if i.opcode in jumps else i.argval, i.positions) for i in ins]
    table = [(index[e.start], index.get(e.end, e.end), index[e.target], e.lasti) for e in dis.Bytecode(code).exception_entries]
    return listed, table, code.co_varnames, code.co_argcount, code.co_flags


def _osr_codes(code: types.CodeType, kinds: str) -> tuple[types.CodeType, types.CodeType] | None:
    """The entries at `code`'s loop jumps (with every local bound), spliced in place
    and assembled by the bytecode library."""
    from cuvil_bc.decode import rawcode, resume

    def assembled(*args: object, **kwargs: object) -> types.CodeType:
        raise rawcode.NotInPlace("assembled")

    pairs = []
    for i in dis.get_instructions(code):
        layout = resume.stack_nulls(code).get(i.offset)
        if "BACKWARD" not in i.opname or "NO_INTERRUPT" in i.opname or layout is None or any(layout):
            continue
        stack = tuple(kinds[k % len(kinds)] for k in range(len(layout)))
        spliced = resume.osr_code(code, i.offset, code.co_varnames, stack)
        assert spliced.co_code[: len(code.co_code)] != code.co_code
        saved, rawcode.entered_at = rawcode.entered_at, assembled  # type: ignore[assignment]
        try:
            pairs.append((spliced, resume.osr_code(code, i.offset, code.co_varnames, stack)))
        finally:
            rawcode.entered_at = saved
    return pairs  # type: ignore[return-value]


def test_an_osr_entry_spliced_in_place_is_the_one_the_bytecode_library_assembles_on_the_standard_library() -> None:
    # decode/resume.osr_code splices the entry's prologue into the code's own bytes
    # (a warm run that enters a loop from the cache then never imports the bytecode
    # library): the locals renumbered, the prologue's jump sized. It must be the code
    # the bytecode library assembles, instruction for instruction, positions, jumps and
    # handlers included. (That library gives a handler's stack depth as 32768 where its
    # own analysis does not reach, which the splice keeps as written: depths apart.)
    from cuvil_bc.decode.counting import RANGE, VALUE

    codes = [c for c in _stdlib_codes() if not c.co_flags & 0x3A0 and not c.co_cellvars and not c.co_freevars]
    compared = 0
    for code in codes:
        for spliced, assembled in _osr_codes(code, RANGE + VALUE):  # type: ignore[union-attr]
            assert _shape(spliced) == _shape(assembled), code.co_qualname
            compared += 1
    assert compared > 200


def _osr_sum(n, m):  # type: ignore[no-untyped-def]
    total = 0
    for i in range(n):
        for j in range(i, m):
            total += (i ^ j) % 7
        total -= 1
    return total, n


def _osr_while(x, m):  # type: ignore[no-untyped-def]
    steps = 0
    while x != 1 and steps < m:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps, x


@pytest.mark.parametrize("fn", [_osr_sum, _osr_while])
def test_an_osr_entry_run_interpreted_finishes_the_call_as_written(fn) -> None:  # type: ignore[no-untyped-def]
    # At each loop jump in turn, a gate enters as hook/osr.py does (the frame's bound
    # locals and the stack's iterators made its arguments), runs the entry
    # interpreted, and answers its result: the call's must be the original's.
    from cuvil_bc.decode.resume import osr_code
    from cuvil_bc.hook import osr

    class Entering(_Gate):
        def __init__(self, offset: int) -> None:
            super().__init__()
            self.offset = offset

        def __getitem__(self, key: object) -> object:
            if isinstance(key, BaseException) or key[0] != self.offset or self.asked:  # type: ignore[index]
                return self
            references = osr._references(key)  # type: ignore[arg-type]
            self.asked.append(key)  # type: ignore[arg-type]
            found = osr._arguments(sys._getframe(1), key[1:], references)  # type: ignore[index]
            assert not isinstance(found, str), found
            names, kinds, args, _ = found
            return types.FunctionType(osr_code(code, self.offset, names, kinds), fn.__globals__)(*args)

    args = (9, 12) if fn is _osr_sum else (27, 1000)
    code = fn.__code__
    offsets = [i.offset for i in dis.get_instructions(code) if "BACKWARD" in i.opname and "NO_INTERRUPT" not in i.opname]
    assert len(offsets) == (2 if fn is _osr_sum else 1)
    for offset in offsets:
        gate = Entering(offset)
        counted, _, loops = _live(code, gate)
        loops.enter = True
        assert types.FunctionType(counted, fn.__globals__)(*args) == fn(*args)
        assert gate.asked, offset
