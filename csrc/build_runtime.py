"""cffi build script for cuvil_bc's C runtime (`cuvil_bc._runtime`), run by setup.py.

Besides the C functions of runtime.c, it declares `cb_math_call`, an ``extern "Python"``
function: native code calls it to compute a `math` function with CPython's own
implementation (cffi takes the GIL around it).
"""

from __future__ import annotations

import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))

CDEF = """
typedef union { int64_t i; double d; } cb_word;
typedef struct { void *fn; int64_t calls; } cb_fast_target;
void cb_set_deopt_line(int32_t line);
int32_t cb_take_deopt_line(void);
cb_word *cb_deopt_slots(void);
int64_t cb_alloc(int64_t nbytes);
int64_t cb_alloc_zeroed(int64_t nbytes);
void *cb_data(int64_t meminfo);
void cb_incref(int64_t meminfo);
void cb_decref(int64_t meminfo);
int64_t cb_live_allocations(void);
void cb_release(void *meminfo);
void cb_new_strides(int64_t ndim, const int64_t *shape, const int64_t *like, int64_t itemsize, int64_t *out);
void cb_set_deopt_resume(int32_t point);
int32_t cb_take_deopt_resume(void);
#define CB_RESUME_SLOTS 1024
int32_t cb_abi_version(void);
extern int64_t cb_signal_generation;
int32_t cb_watch_signal(int32_t sig);
extern "Python" int32_t cb_math_call(int32_t fn, double x, double y, double *out);
int cb_publish_types(void);
"""

#: Trampolines for the dispatcher's fast path: ``cb_call_<params>_<ret>(target, ...)``
#: calls the native fast entry point ``target->fn`` with ``&target->calls`` and up to
#: MAX_FAST_PARAMS int64 ("i") or double ("d") parameters, for an int64 or double
#: result. The entry point counts its completed calls in ``target->calls`` (atomically:
#: the GIL is released), one target per dispatcher. cffi's direct calls of these cost
#: far less than a call through a cast function pointer.
MAX_FAST_PARAMS = 4
C_TYPES = {"i": "int64_t", "d": "double"}


def _param_codes(n: int) -> list[str]:
    codes = [""]
    for _ in range(n):
        codes = [c + t for c in codes for t in "id"]
    return codes


def trampolines() -> tuple[str, str]:
    """(cdef declarations, C definitions) of every trampoline, and of `cb_call_any`,
    which calls the trampoline of a native signature by its index (in this order: see
    trampoline_index in entry.c) with the arguments as words (the C entry's call)."""
    decls, defs, cases = [], [], []
    for n in range(MAX_FAST_PARAMS + 1):
        for params in _param_codes(n):
            for ret in "id":
                name = f"cb_call_{params or 'v'}_{ret}"
                args = "".join(f", {C_TYPES[c]} a{k}" for k, c in enumerate(params))
                proto = f"{C_TYPES[ret]} {name}(cb_fast_target *t{args})"
                ptypes = "".join(", " + C_TYPES[c] for c in params)
                call = "".join(f", a{k}" for k in range(n))
                decls.append(proto + ";")
                defs.append(f"{proto} {{ return (({C_TYPES[ret]} (*)(int64_t *{ptypes}))t->fn)(&t->calls{call}); }}")
                words = "".join(f", a[{k}].{c}" for k, c in enumerate(params))
                cases.append(f"    case {len(cases)}: r.{ret} = {name}(t{words}); break;")
    defs.append("cb_word cb_call_any(int index, cb_fast_target *t, const cb_word *a) {\n    cb_word r;\n    r.i = 0;\n"
                "    switch (index) {\n" + "\n".join(cases) + "\n    }\n    return r;\n}")
    return "\n".join(decls), "\n".join(defs)


_DECLS, _DEFS = trampolines()

ffibuilder = FFI()
ffibuilder.cdef(CDEF + _DECLS)
ffibuilder.set_source(
    "cuvil_bc._runtime",
    '#include "runtime.h"\n' + _DEFS,
    sources=[os.path.relpath(os.path.join(HERE, name)) for name in ("runtime.c", "entry.c", "counter.c")],
    # entry.c uses CPython's full C API (vectorcall, PyFloat_AS_DOUBLE): one build
    # per Python version, not the stable ABI.
    py_limited_api=False,
    include_dirs=[os.path.relpath(HERE)],
    extra_compile_args=["-O2", "-std=c11"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
