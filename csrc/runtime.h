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
 * cuvil_bc/resume.py). Whoever called the native code takes that record at once
 * (cb_park_deopt).
 */
#ifndef CUVIL_BC_RUNTIME_H
#define CUVIL_BC_RUNTIME_H
#include <stdint.h>

#define CB_OK 0
#define CB_DEOPT 1

/* One 64-bit word of a flattened argument or result. */
typedef union { int64_t i; double d; } cb_word;

/* What the C entry (entry.c) calls for one native signature: its words entry point
 * (lower/codegen.py, emit_words_entry), and the count of its calls that completed
 * natively (the entry point increments it atomically). */
typedef struct { void *fn; int64_t calls; } cb_native_target;

/* The constants cuvil_bc/abi.py lists in C_CONSTANTS come from there, as -D options
 * (csrc/build_runtime.py): CB_ABI_VERSION, CB_RESUME_SLOTS (words of resume state a
 * thread can hold), CB_RECORD_WORDS (words of a deopt record before its resume words),
 * CB_MAX_DEPTH, CB_RECURSION_MARGIN, CB_VIEW_OF_ARGUMENT, CB_SPECULATIVE_DEOPT. */
#if !defined(CB_ABI_VERSION) || !defined(CB_RESUME_SLOTS) || !defined(CB_RECORD_WORDS) || \
    !defined(CB_MAX_DEPTH) || !defined(CB_RECURSION_MARGIN) || !defined(CB_VIEW_OF_ARGUMENT)
#error "build the runtime with csrc/build_runtime.py: it defines the constants of cuvil_bc/abi.py"
#endif

/* Memory that native code allocates for arrays: a header (an atomic reference count)
 * followed by the data, 64-byte aligned. A "meminfo" is the header's address as an
 * int64; an array that native code did not allocate (a caller's argument) carries a
 * meminfo <= 0 instead, and the reference-count functions ignore it. They are atomic:
 * native code runs without the GIL. cb_alloc_zeroed's data is all zero bytes. */
int64_t cb_alloc(int64_t nbytes);
int64_t cb_alloc_zeroed(int64_t nbytes);
void *cb_data(int64_t meminfo);
void cb_incref(int64_t meminfo);
void cb_decref(int64_t meminfo);
int64_t cb_live_allocations(void);
/* cb_decref for a meminfo passed as a pointer: the destructor of the object that a
 * returned array keeps alive (see cuvil_bc/boxing.py). */
void cb_release(void *meminfo);
/* The strides, in bytes, that NumPy gives a new array of `shape` made "like" a
 * prototype with strides `like` (order 'K': C order if the prototype is C-contiguous,
 * else Fortran order if it is F-contiguous, else its axes sorted by decreasing |stride|;
 * all zero for a zero-size array). `like` NULL: C order. */
void cb_new_strides(int64_t ndim, const int64_t *shape, const int64_t *like, int64_t itemsize, int64_t *out);

void cb_set_deopt_line(int32_t line);
cb_word *cb_deopt_slots(void);
/* The resume point of a precise deopt, and how many words of cb_deopt_slots() it used. */
void cb_set_deopt_resume(int32_t point, int32_t used);
/* The thread's deopt record, moved into memory of its own (NULL: out of memory): the
 * line, the resume point (0: none) and the number of resume words, then those words.
 * A compiled function's cffi entry parks it as soon as its call fails (codegen.emit_entry:
 * its address in the entry's last argument),
 * before the interpreter can run any Python code (a signal handler) that makes another
 * native call fail and overwrite the thread's record. Freed by cb_free_record. */
cb_word *cb_park_deopt(void);
void cb_free_record(cb_word *record);
/* Records parked and not yet freed (what tests watch for leaks). */
int64_t cb_parked_records(void);
/* Puts the runtime's Python types (Entry, entry.c; the hook's Counter, counter.c) into
 * the module `cuvil_bc._runtime`; 0, or -1 when it could not. */
int cb_publish_types(void);
int32_t cb_abi_version(void);
/* CPython's own algorithms for math.gamma, lgamma, remainder and hypot (pymath.c):
 * the same bits as CPython's, without the GIL. They report no errors: CPython raises
 * where the result is a NaN from non-NaN arguments or an infinity from finite ones
 * (hypot never raises). cb_hypot overwrites xs[:n]. */
double cb_tgamma(double x);
double cb_lgamma(double x);
double cb_remainder(double x, double y);
double cb_hypot(int64_t n, double *xs);
int32_t cb_hypot_uses_fma(void);
/* CLOCK_MONOTONIC, in ns. */
int64_t cb_monotonic_ns(void);
/* The hook's compile claims priority over ticks of counters that wait (counter.c), until
 * it releases it or `deadline_ns` (cb_monotonic_ns) passes. Called without the GIL. */
void cb_priority_claim(int64_t deadline_ns);
void cb_priority_release(void);
void cb_priority_after_fork(void);
/* Whether ticks of counters that wait would wait now (1), or run on (0). */
int cb_priority_claimed(void);
/* Native loops report iterations to it: past about a thousand in a call, the GIL goes,
 * if the C entry that called them lets it (entry.c), and comes back when the call
 * returns. */
void cb_gil_work(int64_t units);
/* A `math` function computed by CPython's own code (entry.c): 0 with *out, or 1. */
int32_t cb_math_call(int32_t fn, int32_t n, const double *args, double *out);
/* Complex arithmetic by CPython's own functions (entry.c), for native code: no Python
 * object, no GIL. out[0] and out[1] get the real and imaginary parts; the status is
 * 1 where CPython raises (a zero divisor; an absolute value too large), else 0. */
int32_t cb_complex_prod(double ar, double ai, double br, double bi, double *out);
int32_t cb_complex_quot(double ar, double ai, double br, double bi, double *out);
int32_t cb_complex_abs(double re, double im, double *out);
/* Counts the signals that arrived while a handler of CPython's was installed for them
 * (see cb_watch_signal); native loops poll it. */
extern int64_t cb_signal_generation;
/* Run our counting handler before the one installed for `sig`, if that is a handler
 * (not SIG_DFL or SIG_IGN): 1 done, 0 nothing to do, -1 error. */
int32_t cb_watch_signal(int32_t sig);

#endif
