/* See runtime.h. */
#include "runtime.h"

/* Thread-local: native code runs without the GIL, possibly on several threads. */
static _Thread_local int32_t deopt_line = 0;

void cb_set_deopt_line(int32_t line) { deopt_line = line; }

int32_t cb_take_deopt_line(void) {
    int32_t line = deopt_line;
    deopt_line = 0;
    return line;
}

int32_t cb_abi_version(void) { return 2; }
