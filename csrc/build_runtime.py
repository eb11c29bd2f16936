"""cffi build script for cuvil_bc's C runtime (`cuvil_bc._runtime`), run by setup.py.

It declares the C functions of runtime.c and entry.c that Python code or native code
calls; entry.c and counter.c also hold the runtime's Python types (pytypes.h).
"""

from __future__ import annotations

import ast
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ABI_SOURCE = os.path.join(HERE, os.pardir, "cuvil_bc", "abi.py")


def abi_constants(path: str = ABI_SOURCE) -> dict[str, int]:
    """The integer constants that cuvil_bc/abi.py lists in C_CONSTANTS, read from its
    source (the package cannot be imported before its runtime is built): each is
    compiled in as CB_<name>, so that it is said in one place."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    values: dict[str, int] = {}
    listed: tuple[str, ...] = ()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "C_CONSTANTS":
                listed = ast.literal_eval(node.value)
            elif name.isupper():
                value = _integer(node.value)
                if value is not None:
                    values[name] = value
    missing = [n for n in listed if n not in values]
    if not listed or missing:
        raise RuntimeError(f"{path}: C_CONSTANTS names no plain integer constants {missing}")
    return {n: values[n] for n in listed}


def _integer(node: ast.expr) -> int | None:
    """An integer literal, or a shift of two (``1 << 32``)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.LShift):
        a, b = _integer(node.left), _integer(node.right)
        return None if a is None or b is None else a << b
    return None


CDEF = """
typedef union { int64_t i; double d; } cb_word;
typedef struct { void *fn; int64_t calls; } cb_native_target;
void cb_set_deopt_line(int32_t line);
cb_word *cb_deopt_slots(void);
int64_t cb_alloc(int64_t nbytes);
int64_t cb_alloc_zeroed(int64_t nbytes);
void *cb_data(int64_t meminfo);
void cb_incref(int64_t meminfo);
void cb_decref(int64_t meminfo);
int64_t cb_live_allocations(void);
void cb_release(void *meminfo);
void cb_new_strides(int64_t ndim, const int64_t *shape, const int64_t *like, int64_t itemsize, int64_t *out);
void cb_set_deopt_resume(int32_t point, int32_t used);
cb_word *cb_park_deopt(void);
void cb_free_record(cb_word *record);
int64_t cb_parked_records(void);
int32_t cb_abi_version(void);
void cb_gil_work(int64_t units);
extern int64_t cb_signal_generation;
int32_t cb_watch_signal(int32_t sig);
int32_t cb_math_call(int32_t fn, int32_t n, const double *args, double *out);
int32_t cb_complex_prod(double ar, double ai, double br, double bi, double *out);
int32_t cb_complex_quot(double ar, double ai, double br, double bi, double *out);
int32_t cb_complex_abs(double re, double im, double *out);
double cb_tgamma(double x);
double cb_lgamma(double x);
double cb_remainder(double x, double y);
double cb_hypot(int64_t n, double *xs);
int32_t cb_hypot_uses_fma(void);
int cb_publish_types(void);
int64_t cb_monotonic_ns(void);
void cb_priority_claim(int64_t deadline_ns);
void cb_priority_release(void);
void cb_priority_after_fork(void);
int cb_priority_claimed(void);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "cuvil_bc._runtime",
    '#include "runtime.h"\n',
    sources=[os.path.relpath(os.path.join(HERE, name)) for name in ("runtime.c", "entry.c", "counter.c", "pymath.c")],
    # entry.c uses CPython's full C API (vectorcall, PyFloat_AS_DOUBLE): one build
    # per Python version, not the stable ABI.
    py_limited_api=False,
    include_dirs=[os.path.relpath(HERE)],
    define_macros=[(f"CB_{name}", f"{value}LL" if value > 2**31 - 1 else str(value)) for name, value in abi_constants().items()],
    # No fused multiply-adds where the C does not ask for one: pymath.c must round
    # each product and sum as CPython's own build does.
    extra_compile_args=["-O2", "-std=c11", "-ffp-contract=off"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
