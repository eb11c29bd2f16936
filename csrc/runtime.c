/* See runtime.h. */
#define _POSIX_C_SOURCE 200809L /* sigaction under -std=c11 */
#include "runtime.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CB_ALIGN 64

typedef struct {
    _Atomic int64_t refcount;
    void *block; /* what malloc returned */
} cb_header;

static _Atomic int64_t live_allocations = 0;

static int64_t alloc(int64_t nbytes, int zeroed) {
    if (nbytes < 0) return 0;
    size_t need = sizeof(cb_header) + CB_ALIGN + (size_t)nbytes;
    if ((uint64_t)nbytes > (uint64_t)INT64_MAX - need) return 0;
    /* calloc, like NumPy's zeros: a large block comes as fresh pages that the kernel
       zeroes only when touched, so an untouched np.zeros commits no memory. */
    void *block = zeroed ? calloc(1, need) : malloc(need);
    if (block == NULL) return 0;
    uintptr_t data = ((uintptr_t)block + sizeof(cb_header) + CB_ALIGN - 1) & ~(uintptr_t)(CB_ALIGN - 1);
    cb_header *h = (cb_header *)(data - sizeof(cb_header));
    h->block = block;
    atomic_init(&h->refcount, 1);
    atomic_fetch_add(&live_allocations, 1);
    return (int64_t)(uintptr_t)h;
}

int64_t cb_alloc(int64_t nbytes) { return alloc(nbytes, 0); }

int64_t cb_alloc_zeroed(int64_t nbytes) { return alloc(nbytes, 1); }

void *cb_data(int64_t meminfo) { return (char *)(uintptr_t)meminfo + sizeof(cb_header); }

void cb_incref(int64_t meminfo) {
    if (meminfo > 0) atomic_fetch_add(&((cb_header *)(uintptr_t)meminfo)->refcount, 1);
}

void cb_decref(int64_t meminfo) {
    if (meminfo <= 0) return;
    cb_header *h = (cb_header *)(uintptr_t)meminfo;
    if (atomic_fetch_sub(&h->refcount, 1) == 1) {
        free(h->block);
        atomic_fetch_sub(&live_allocations, 1);
    }
}

void cb_release(void *meminfo) { cb_decref((int64_t)(uintptr_t)meminfo); }

static int contiguous(int64_t ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize, int fortran) {
    int64_t expected = itemsize;
    for (int64_t k = 0; k < ndim; k++) {
        int64_t i = fortran ? k : ndim - 1 - k;
        if (shape[i] == 1) continue;
        if (strides[i] != expected) return 0;
        expected *= shape[i];
    }
    return 1;
}

void cb_new_strides(int64_t ndim, const int64_t *shape, const int64_t *like, int64_t itemsize, int64_t *out) {
    int64_t order[8];
    int64_t size = 1;
    for (int64_t i = 0; i < ndim; i++) {
        order[i] = i;
        size *= shape[i];
    }
    if (size == 0) {
        for (int64_t i = 0; i < ndim; i++) out[i] = 0;
        return;
    }
    if (like != NULL && !contiguous(ndim, shape, like, itemsize, 0)) {
        if (contiguous(ndim, shape, like, itemsize, 1)) {
            for (int64_t i = 0; i < ndim; i++) order[i] = ndim - 1 - i;
        } else { /* stable insertion sort by decreasing |stride| */
            for (int64_t i = 1; i < ndim; i++) {
                int64_t v = order[i], j = i;
                int64_t sv = like[v] < 0 ? -like[v] : like[v];
                while (j > 0) {
                    int64_t u = order[j - 1];
                    int64_t su = like[u] < 0 ? -like[u] : like[u];
                    if (su >= sv) break;
                    order[j] = u;
                    j--;
                }
                order[j] = v;
            }
        }
    }
    int64_t acc = itemsize;
    for (int64_t k = ndim - 1; k >= 0; k--) { /* order[k]: outermost first */
        out[order[k]] = acc;
        acc *= shape[order[k]];
    }
}

int64_t cb_live_allocations(void) { return atomic_load(&live_allocations); }

/* Thread-local: native code runs without the GIL, possibly on several threads. */
static _Thread_local int32_t deopt_line = 0;
static _Thread_local int32_t deopt_resume = 0;
static _Thread_local int32_t deopt_used = 0;
static _Thread_local cb_word deopt_slots[CB_RESUME_SLOTS];

void cb_set_deopt_line(int32_t line) {
    deopt_line = line;
    deopt_resume = 0; /* a precise deopt sets its point after this */
}

cb_word *cb_deopt_slots(void) { return deopt_slots; }

void cb_set_deopt_resume(int32_t point, int32_t used) {
    deopt_resume = point;
    deopt_used = used < 0 ? 0 : used > CB_RESUME_SLOTS ? CB_RESUME_SLOTS : used;
}

static int64_t parked_records = 0; /* read and written atomically only */

cb_word *cb_park_deopt(void) {
    int32_t used = deopt_resume ? deopt_used : 0;
    cb_word *record = malloc((size_t)(CB_RECORD_WORDS + used) * sizeof(cb_word));
    if (record != NULL) {
        __atomic_fetch_add(&parked_records, 1, __ATOMIC_RELAXED);
        record[0].i = deopt_line;
        record[1].i = deopt_resume;
        record[2].i = used;
        memcpy(record + CB_RECORD_WORDS, deopt_slots, (size_t)used * sizeof(cb_word));
    }
    deopt_line = 0;
    deopt_resume = 0;
    return record;
}

void cb_free_record(cb_word *record) {
    if (record != NULL)
        __atomic_fetch_sub(&parked_records, 1, __ATOMIC_RELAXED);
    free(record);
}

int64_t cb_parked_records(void) { return __atomic_load_n(&parked_records, __ATOMIC_RELAXED); }

/* Signals. CPython's own handler only records a signal; the interpreter runs the
 * Python handler (KeyboardInterrupt for SIGINT) at its next check, which a native
 * loop never reaches. So ours runs first and counts the signal; loops compare the
 * count with the one they started with, and deoptimise when it moved. The count is
 * never reset, so a signal seen by one thread's loop is seen by every loop running. */
int64_t cb_signal_generation = 0; /* read and written atomically only */
#define CB_NSIG 128 /* above any signal number Linux or macOS uses */
static struct sigaction chained[CB_NSIG];

static void on_signal(int sig, siginfo_t *info, void *context) {
    __atomic_fetch_add(&cb_signal_generation, 1, __ATOMIC_RELAXED);
    struct sigaction *next = &chained[sig];
    if (next->sa_flags & SA_SIGINFO) {
        if (next->sa_sigaction != NULL) next->sa_sigaction(sig, info, context);
    } else if (next->sa_handler != SIG_DFL && next->sa_handler != SIG_IGN) {
        next->sa_handler(sig);
    }
}

int32_t cb_watch_signal(int32_t sig) {
    struct sigaction now, ours;
    if (sig <= 0 || sig >= CB_NSIG || sigaction(sig, NULL, &now) != 0) return -1;
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_signal) return 0; /* already */
    if (!(now.sa_flags & SA_SIGINFO) && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN)) {
        return 0; /* the default action (or none): nothing for the interpreter to run */
    }
    chained[sig] = now; /* written while the handler in place is not ours */
    ours = now;
    ours.sa_flags |= SA_SIGINFO;
    ours.sa_sigaction = on_signal;
    return sigaction(sig, &ours, NULL) == 0 ? 1 : -1;
}

int32_t cb_abi_version(void) { return CB_ABI_VERSION; }
