"""The code of the function that `cuvil_bc.compile` returns: the function's own code
behind a prefix that takes the per-call fast paths, regenerated whenever the native
specialisations change.

For ``def f(a, b=2.0)`` with a native ``(int, float)`` specialisation, and an earlier
call ``f(p, 1.0)`` with a ``Point`` that did not compile, the prefix reads like::

    def f(a, b=MISSING):                          # f's own code, globals and name
        if PYFUNC.__defaults__ is not BOUND:      # (with defaults only)
            return GENERIC(*GIVEN(("a", "b"), (a, b), ()))
        if b is MISSING:
            b = DEFAULT_0
        if (a, b) not in KNOWN:                   # else a signature known not to compile
            try:                                  # (csrc/counter.c): f's body runs, here
                __cb_r = ENTRY(a, b)              # C (csrc/entry.c): the global guards,
                if TYPE(__cb_r) is not UNFINISHED:  # then every signature's type tests,
                    return __cb_r                 # unboxing, native call and boxing
                if __cb_r is FALL:
                    __cb_r = GENERIC((a, b), {}, HERE)
                else:                             # native code handed the call back
                    __cb_r = DEOPT((a, b), __cb_r[0], HERE)
                if __cb_r is not HERE:
                    return __cb_r
                del __cb_r                        # HERE: the call runs interpreted, in
            except:                               # this frame, from the body's start
                UNLINK()                          # (this frame's traceback entry)
                raise
        ...f's body...

The capitals are constants of the code, not globals (`counters.py` says why a
constant), so the function keeps its module's globals: its body runs there when a call
is known to fall back, at the cost of one ``in`` test that C answers from the
arguments' types (and counts). While no signature is native, even that test is made
only on calls a `counters.Sampler` picks (``if not SAMPLER and (a, b) not in KNOWN:``),
the first after a signature failed and then about one in `SAMPLE_CAP`, at random: a
call of a new signature between two samples runs the body, as it would have without
us, and one of its next calls is sampled.
Python binds the arguments itself, so a missing, repeated or unknown argument raises
CPython's own TypeError. Parameters with defaults take a sentinel, and are filled from
defaults checked to be still the original function's: assigning its ``__defaults__``
takes effect, as in CPython. The specialisations with a words entry
(`entry.words_entry_supported`: arguments and results it can unbox and box) are
all in the C entry;
every other call takes the generic path, which is also where compilation happens.
"""

from __future__ import annotations

import types as pytypes

from .abi import FALL, HERE, OWN_NAMES, Unfinished

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, Sequence


MISSING = object()
#: Signatures known to fall back that the prefix tests (others take the generic path).
MAX_INTERPRETED_KEYS = 8
#: The largest mean gap, in calls, between two sampled calls (`counters.Sampler`): about
#: how many calls of a new signature run interpreted, at most, before a sample sees one.
#: The samples' tests then cost each call 1/32 of a test (~0.2 ns on 3.13).
SAMPLE_CAP = 32
#: CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE,
#: CO_ASYNC_GENERATOR.
_VARIADIC_OR_SUSPENDING = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200


def can_generate(pyfunc: pytypes.FunctionType) -> bool:
    """Whether the prefix fits `pyfunc`: its parameters are all positional (no ``*args``,
    ``**kwargs`` or keyword-only ones) and plain locals (not cells that an inner
    function reads: the prefix would see the cell), at most the C entry's number; no
    local of its own is named like the prefix's (``__cb_...``); and its code runs when
    it is called (it is not a generator or a coroutine)."""
    code = pyfunc.__code__
    params = code.co_varnames[: code.co_argcount]
    return (
        not (code.co_flags & _VARIADIC_OR_SUSPENDING)
        and code.co_kwonlyargcount == 0
        and code.co_argcount <= MAX_PARAMETERS
        and not set(params) & set(code.co_cellvars)
        and not any(name.startswith(OWN_NAMES) for name in code.co_varnames + code.co_cellvars + code.co_freevars)
    )


#: What the C entry takes at most (CB_ENTRY_WORDS in csrc/entry.c).
MAX_PARAMETERS = 64


def interpreted_key(key: Sequence[object]) -> bool:
    """Whether the prefix can recognise the calls of a key that falls back by testing
    each argument's type: every item is a plain class whose values all have that key
    (not a tuple, an array or a NumPy scalar, whose keys depend on their contents)."""
    return all(isinstance(k, type) and k is not tuple and not getattr(k, "__module__", "").startswith("numpy") for k in key)


def prefixed_code(
    pyfunc: pytypes.FunctionType, *, generic: Any, deopt: Any, defaults: tuple[Any, ...] | None, entry: Any, known: Any, sampler: Any = None
) -> pytypes.CodeType:
    """`pyfunc`'s code behind the prefix of the module docstring.

    `generic(args, kwargs, here)` is the dispatcher's generic path, `deopt(args,
    record, here)` what finishes a call that native code handed back
    (`counters.Unfinished`), each answering `counters.HERE` for a call the body is to
    run; `known` the `counters.Known` of the signatures
    known to fall back, whose calls run the body, or None while there are none (its
    test costs a native call of two arguments ~25 ns); `entry` the C entry of the
    native signatures and their global guards (csrc/entry.c). Both are updated in
    place as signatures come and go: the prefix changes only with the defaults, and
    when the first signature is known to fall back. Given a `counters.Sampler` (while
    no signature is native, and some are known to fall back), only the calls it
    samples are tested at all: the others run the body straight away.
    """
    from .decode.counting import with_prefix
    from .frames import unlink_own

    code = pyfunc.__code__
    params = list(code.co_varnames[: code.co_argcount])
    args = "(" + "".join(f"{p}, " for p in params) + ")"
    consts: dict[str, Any] = {"GENERIC": generic, "UNLINK": unlink_own, "ENTRY": entry, "FALL": FALL, "DEOPT": deopt, "TYPE": type, "UNFINISHED": Unfinished, "HERE": HERE}
    lines: list[str] = []
    defaults = defaults or ()
    if defaults:
        # The defaults are read through a weak reference to the original, and the tuple
        # bound is known by its id (the dispatcher holds it, so the id is not reused):
        # a constant that reached a default or the original (whose closure may hold
        # the compiled function) would keep them alive forever (code objects are
        # invisible to the garbage collector). The local goes again: the body's
        # locals() must not show it.
        import weakref

        consts.update(ORIGINAL=weakref.ref(pyfunc), BOUND_ID=id(defaults), ID=id, GIVEN=_given, MISSING=MISSING)
        filling = ["__cb_d = @ORIGINAL().__defaults__", "if @ID(__cb_d) != @BOUND_ID:"]
        filling.append(f"    return @GENERIC(*@GIVEN({tuple(params)!r}, {args}, ()))")
        for k, p in enumerate(params[len(params) - len(defaults) :]):
            filling.append(f"if {p} is @MISSING:")
            filling.append(f"    {p} = __cb_d[{k}]")
        filling.append("del __cb_d")
        lines += ["try:"] + ["    " + f for f in filling] + ["except:", "    @UNLINK()", "    raise"]
    calls = [
        f"__cb_r = @ENTRY({', '.join(params)})",
        "if @TYPE(__cb_r) is not @UNFINISHED:",
        "    return __cb_r",
        "if __cb_r is @FALL:",
        f"    __cb_r = @GENERIC({args}, {{}}, @HERE)",
        "else:",
        f"    __cb_r = @DEOPT({args}, __cb_r[0], @HERE)",
        "if __cb_r is not @HERE:",
        "    return __cb_r",
        "del __cb_r",
    ]
    if params and known is not None:
        # (`not in`: a fallen-back call then goes straight on into the body; inside the
        # `try`, so that both ways into the body join before it: CPython would copy a
        # statement reached two ways, and the body replaces only the first copy)
        consts["KNOWN"] = known
        test = f"{params[0] if len(params) == 1 else args} not in @KNOWN"
        if sampler is not None:
            consts["SAMPLER"] = sampler
            test = "not @SAMPLER and " + test
        calls = [f"if {test}:"] + ["    " + c for c in calls]
    lines += ["try:"] + ["    " + c for c in calls] + ["except:", "    @UNLINK()", "    raise"]
    # The prefix's names are written @NAME: each becomes OWN_NAMES + NAME, which no local
    # of the function starts with (`can_generate`).
    source = "".join("    " + line + "\n" for line in lines).replace("@", OWN_NAMES)
    # (every call the prefix makes has a line: a signal handler or another thread that
    # reads the frame's line meanwhile finds one, as in CPython)
    calling = ("return", f"__cb_r = {OWN_NAMES}")
    return with_prefix(code, source, {OWN_NAMES + k: v for k, v in consts.items()}, call_line=calling)


def generic_code(pyfunc: pytypes.FunctionType, generic: Any) -> pytypes.CodeType:
    """Code, named as `pyfunc`, that passes every call to `generic(args, kwargs)`: for
    functions whose parameters the prefix cannot pass on (``*args``, ``**kwargs``,
    keyword-only ones), and generators and coroutines, whose code runs only once they
    are iterated or awaited."""
    from .decode.counting import with_prefix
    from .frames import OWN_FILENAME, unlink_own

    ns: dict[str, Any] = {}
    exec(compile("def _cb_entry(*args, **kwargs):\n    pass\n", OWN_FILENAME, "exec"), ns)
    source = "    try:\n        return GENERIC(args, kwargs)\n    except:\n        UNLINK()\n        raise\n"
    code = with_prefix(ns["_cb_entry"].__code__, source, {"GENERIC": generic, "UNLINK": unlink_own}, call_line="return")
    own = pyfunc.__code__
    return code.replace(co_name=own.co_name, co_qualname=own.co_qualname)


def _given(names: tuple[str, ...], values: tuple[Any, ...], more: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments actually passed, as (positional, keyword): values up to the first
    missing one count as positional, any after a gap were passed by keyword."""
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    gap = False
    for name, value in zip(names, values):
        if value is MISSING:
            gap = True
        elif gap:
            keywords[name] = value
        else:
            positional.append(value)
    return tuple(positional) + tuple(more), keywords
