/* See runtime.h. */
#include "runtime.h"

/* Thread-local: native code runs without the GIL, possibly on several threads. */
static _Thread_local int32_t deopt_line = 0;
static _Thread_local int32_t deopt_resume = 0;
static _Thread_local cb_word deopt_slots[CB_RESUME_SLOTS];

void cb_set_deopt_line(int32_t line) { deopt_line = line; }

int32_t cb_take_deopt_line(void) {
    int32_t line = deopt_line;
    deopt_line = 0;
    return line;
}

cb_word *cb_deopt_slots(void) { return deopt_slots; }

void cb_set_deopt_resume(int32_t point) { deopt_resume = point; }

int32_t cb_take_deopt_resume(void) {
    int32_t point = deopt_resume;
    deopt_resume = 0;
    return point;
}

int32_t cb_abi_version(void) { return 3; }
