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
void cb_set_deopt_line(int32_t line);
int32_t cb_take_deopt_line(void);
int32_t cb_abi_version(void);
extern "Python" int32_t cb_math_call(int32_t fn, double x, double y, double *out);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "cuvil_bc._runtime",
    '#include "runtime.h"',
    sources=[os.path.relpath(os.path.join(HERE, "runtime.c"))],
    include_dirs=[os.path.relpath(HERE)],
    extra_compile_args=["-O2", "-std=c11"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
