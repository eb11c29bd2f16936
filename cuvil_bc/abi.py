"""What native code, the C runtime (`csrc/`), the bytecode cuvil_bc writes and the
call-time Python code agree on, each said once.

- The integer constants in `C_CONSTANTS` are compiled into the C runtime as
  ``CB_<name>`` (csrc/build_runtime.py reads them from this file's source), and
  native code and Python read them from here.
- The names and objects that counted code and prefixes refer to (`OWN_NAMES`, the
  placeholders of the hook's cache, `Unfinished`, `FALL`, `HERE`).
- `runtime_types`: the Python types that the C runtime makes.

This module is the bottom layer: it imports nothing of cuvil_bc but the C runtime.
"""

from __future__ import annotations

import types

TYPE_CHECKING = False  # (typing costs ~5 ms to import: the hook's startup does without it)

#: cuvil_bc's version (the package's ``__version__``; pyproject.toml says it too): part
#: of the fingerprint of everything cuvil_bc stores.
VERSION = "0.1.0"

# -- Compiled into the C runtime (plain integer assignments: build_runtime.py parses them)

#: The version of the C runtime's interface. Bump it with any change of a C function's
#: signature or of a constant below: an older build (an editable install not rebuilt)
#: is then refused instead of being called wrongly (lower/runtime.py).
ABI_VERSION = 33
#: Words of resume state native code may store for a deoptimisation (cuvil_bc/resume.py).
RESUME_SLOTS = 1024
#: Words of a deopt record before its resume words: the line, the resume point (0:
#: none) and the number of resume words (cb_park_deopt).
RECORD_WORDS = 3
#: Native calls between compiled functions nest at most this deep: past it the native
#: code hands the call back to CPython, which raises RecursionError where it would.
MAX_DEPTH = 2000
#: Frames of the thread's recursion budget that a native call leaves to CPython.
RECURSION_MARGIN = 50
#: A meminfo in ``(-VIEW_OF_ARGUMENT, 0)`` names an argument array (-(k + 1)); one below
#: that, a view of argument k (lower/access._view_meminfo).
VIEW_OF_ARGUMENT = 1 << 32
#: Set in a deopt's line when the failed guard belonged to a speculated op
#: (opt/speculate.py); the rest is the line.
SPECULATIVE_DEOPT = 1 << 30
#: A deopt's line also says which kind of guard failed, in its bits from this one on
#: (below SPECULATIVE_DEOPT's): the kinds whose assumption a recompile can drop (the
#: dispatcher's adaptive recompilation), 0 for every other guard.
DEOPT_KIND_SHIFT = 24
#: The loop-invariant bounds test of an index made on entry to a block
#: (opt/bounds.BoundsPlan.entry_tests): it may fail where no access would.
ENTRY_BOUNDS_DEOPT = 1
#: A float test that fails on any infinity or NaN (a read-only function's deferred
#: flag, a "conservative" test): an infinity or NaN among the arguments fails it.
FLOAT_SUSPICION_DEOPT = 2
#: What a recompile drops for each kind (`Compiler.drop`).
DROPPABLE = {ENTRY_BOUNDS_DEOPT: "entry-bounds", FLOAT_SUSPICION_DEOPT: "float-suspicion"}

C_CONSTANTS = ("ABI_VERSION", "RESUME_SLOTS", "RECORD_WORDS", "MAX_DEPTH", "RECURSION_MARGIN", "VIEW_OF_ARGUMENT", "SPECULATIVE_DEOPT")

# -- The names and objects that the bytecode cuvil_bc writes refers to --------------

#: How the names of the prefixes that cuvil_bc puts before a function's code start (its
#: locals and constants: decode/counting.trampoline, fastpath.prefixed_code). Functions
#: with a local named so are neither counted (hook/rewrite.cheap_reason) nor prefixed
#: (fastpath.can_generate).
OWN_NAMES = "__cb_"
#: First item of a counter's placeholder in the hook's cache, ``(MARK, key)``
#: (counters.live swaps in the counter).
MARK = "__cuvil_bc_counter__"


def placeholder(key: str) -> tuple[str, str]:
    return (MARK, key)


def is_placeholder(value: object) -> bool:
    return type(value) is tuple and len(value) == 2 and value[0] == MARK and type(value[1]) is str


class Unfinished(tuple):  # type: ignore[type-arg]
    """What a C entry returns for a call it did not finish, ``(record,)``: `FALL` (no
    signature takes it, or an int is beyond int64), or a call whose native code handed
    it back, with its deopt record (bytes). Callers test ``type(result) is
    Unfinished``: no native result is one. (A tuple: made and read without running
    Python code, where a pending signal's handler could raise.)"""

    __slots__ = ()


FALL = Unfinished((None,))
#: What the dispatcher's slow paths answer a prefix (or a trampoline) that passed it,
#: for a call to run interpreted from its start: the prefix then runs the body itself.
HERE = object()


# -- The C runtime's types ----------------------------------------------------------

_published: types.ModuleType | None = None


def runtime_types() -> types.ModuleType:
    """`cuvil_bc._runtime` with the types its C code makes (csrc/counter.c, entry.c)
    published in it: cffi cannot hand a C-made Python object over itself."""
    global _published
    if _published is None:
        from . import _runtime  # type: ignore[attr-defined]

        if _runtime.lib.cb_publish_types() != 0:
            raise ImportError("cuvil_bc._runtime could not make its Python types")
        _published = _runtime
    return _published
