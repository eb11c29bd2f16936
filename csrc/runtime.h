/* cuvil_bc's C runtime: what native code needs from the host process.
 *
 * Native code reports a status: CB_OK with the result, or CB_DEOPT when CPython must
 * finish the call (it then raises the exact exception, or computes the big-int
 * result). Before returning CB_DEOPT, native code records the source line of the
 * failing guard with cb_set_deopt_line, so that the dispatcher can explain the
 * fallback.
 *
 * A function that writes to memory must not be re-run from the start. Its native code
 * also stores the state at the failing guard's resume point (the values of its
 * locals and operand stack, as 64-bit words) in cb_deopt_slots() and records which
 * point with cb_set_deopt_resume, and the interpreter carries on from there (see
 * cuvil_bc/resume.py).
 */
#ifndef CUVIL_BC_RUNTIME_H
#define CUVIL_BC_RUNTIME_H
#include <stdint.h>

#define CB_OK 0
#define CB_DEOPT 1

/* One 64-bit word of a flattened argument or result. */
typedef union { int64_t i; double d; } cb_word;

/* What a fast-path trampoline calls: a native fast entry point, and the count of its
 * calls that completed natively (the entry point increments it atomically). */
typedef struct { void *fn; int64_t calls; } cb_fast_target;

/* Words of resume state a thread can hold: a resume point needing more is not compiled. */
#define CB_RESUME_SLOTS 1024

void cb_set_deopt_line(int32_t line);
cb_word *cb_deopt_slots(void);
void cb_set_deopt_resume(int32_t point);
int32_t cb_take_deopt_resume(void);
int32_t cb_take_deopt_line(void);
int32_t cb_abi_version(void);

#endif
