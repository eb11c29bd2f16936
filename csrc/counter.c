/* The import hook's counter (cuvil_bc/counters.py, hook/hot.py).
 *
 * Counted code ticks a counter with `not counter` (LOAD_CONST, UNARY_NOT, POP_TOP; 3.13
 * adds TO_BOOL): CPython calls the type's nb_bool slot directly, with no call
 * protocol, so a tick costs a few nanoseconds. That matters after the hook has decided
 * about a function: a frame that was already running (a `main()` loop, a method called
 * once) keeps its counted code until it returns, and ticks on every iteration.
 *
 * Counter(left, trigger): every tick adds one to `ticks`; the tick that brings `left`
 * to zero calls `trigger()` (on the counted function's thread, with its frame as the
 * caller), and an exception from it propagates from the tick. A tick's answer is True,
 * unless `enter` is set: a loop's counter sits before a conditional jump that, on
 * False, goes to its on-stack replacement stub (decode/counting.py, hook/osr.py).
 * Pickled, a counter is NoneType, whose truth is as harmless.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdatomic.h>
#include <time.h>
#include "pytypes.h"
#include "runtime.h"

/* Priority for the hook's background compile (cuvil_bc/priority.py, hook/hot.py).
 *
 * A compile's Python phases need the GIL, and the program's thread, running the very
 * function being compiled interpreted, wanted it too: they shared it by switch
 * intervals, so the compile took about half as long again as on an idle interpreter,
 * while the function ran at half its interpreted speed. While the compiling thread
 * claims priority (cb_priority_claim, until cb_priority_release), a tick of a counter
 * whose `waits` is set, on any other thread, waits for the claim to end without the
 * GIL, but never past the claim's deadline. The compiler lets go of its claim while
 * LLVM works without the GIL, so the program runs then. */
static PyThread_type_lock priority_lock;
static atomic_int priority_claimed;
static atomic_ulong priority_owner;
static _Atomic int64_t priority_deadline;

int64_t cb_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void cb_priority_claim(int64_t deadline_ns) {
    /* (called through cffi, without the GIL: a tick may hold the lock for a moment) */
    if (priority_lock == NULL)
        return; /* (before cb_publish_types made it: no counter exists yet) */
    PyThread_acquire_lock(priority_lock, WAIT_LOCK);
    atomic_store_explicit(&priority_owner, PyThread_get_thread_ident(), memory_order_relaxed);
    atomic_store_explicit(&priority_deadline, deadline_ns, memory_order_relaxed);
    atomic_store_explicit(&priority_claimed, 1, memory_order_release);
}

void cb_priority_release(void) {
    if (priority_lock == NULL)
        return;
    atomic_store_explicit(&priority_claimed, 0, memory_order_relaxed);
    PyThread_release_lock(priority_lock);
}

int cb_priority_claimed(void) { return atomic_load_explicit(&priority_claimed, memory_order_relaxed); }

/* In a child of fork(): a thread of the parent may have been between its acquire and
 * release of the lock in priority_wait, and does not exist here. */
void cb_priority_after_fork(void) {
    if (priority_lock != NULL)
        priority_lock = PyThread_allocate_lock(); /* (the old one is left as it is) */
    atomic_store_explicit(&priority_claimed, 0, memory_order_relaxed);
}

static void priority_wait(void) {
    if (PyThread_get_thread_ident() == atomic_load_explicit(&priority_owner, memory_order_relaxed))
        return; /* (the compiling thread ran counted code itself) */
    int64_t left = atomic_load_explicit(&priority_deadline, memory_order_relaxed) - cb_monotonic_ns();
    if (left <= 0) {
        /* Past the deadline, no tick waits: the next ones need not read the clock
         * (until the compiler claims priority again, after LLVM). */
        atomic_store_explicit(&priority_claimed, 0, memory_order_relaxed);
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    if (PyThread_acquire_lock_timed(priority_lock, left / 1000, 0) == PY_LOCK_ACQUIRED)
        PyThread_release_lock(priority_lock);
    Py_END_ALLOW_THREADS
}

typedef struct {
    PyObject_HEAD
    long long ticks;
    long long left;
    PyObject *trigger;
    char waits;
    char enter;
} cb_counter;

static PyObject *counter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    long long left;
    PyObject *trigger;
    if (cb_no_keywords(kwargs, "Counter") < 0)
        return NULL;
    if (!PyArg_ParseTuple(args, "LO:Counter", &left, &trigger))
        return NULL;
    cb_counter *self = (cb_counter *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->ticks = 0;
    self->left = left;
    Py_INCREF(trigger);
    self->trigger = trigger;
    self->waits = 0;
    self->enter = 0;
    return (PyObject *)self;
}

static int counter_bool(PyObject *op) {
    cb_counter *self = (cb_counter *)op;
    self->ticks++;
    if (self->waits && atomic_load_explicit(&priority_claimed, memory_order_acquire))
        priority_wait();
    if (self->left > 0 && --self->left == 0 && self->trigger != NULL) {
        /* A signal that arrived while the function ran has its handler run here, in
         * the counted function's frame, as at its next instruction: called with it
         * pending, the trigger (Python) would run it on entry, and the handler's
         * exception would show the trigger's frame. */
        if (PyErr_CheckSignals() < 0)
            return -1;
        PyObject *trigger = self->trigger;
        Py_INCREF(trigger);
        PyObject *result = PyObject_CallNoArgs(trigger);
        Py_DECREF(trigger);
        if (result == NULL)
            return -1;
        Py_DECREF(result);
    }
    return !self->enter;
}

static PyObject *counter_reduce(PyObject *op, PyObject *unused) {
    /* NoneType, as `type(None)` rebuilds it. */
    return Py_BuildValue("(O(O))", (PyObject *)&PyType_Type, Py_None);
}

static int counter_traverse(PyObject *op, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(((cb_counter *)op)->trigger);
    return 0;
}

static int counter_clear(PyObject *op) {
    Py_CLEAR(((cb_counter *)op)->trigger);
    return 0;
}

static void counter_dealloc(PyObject *op) { cb_gc_dealloc(op, counter_clear); }

static PyMethodDef counter_methods[] = {
    {"__reduce__", counter_reduce, METH_NOARGS, "Pickled as NoneType."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef counter_members[] = {
    {"ticks", T_LONGLONG, offsetof(cb_counter, ticks), READONLY, "Ticks so far."},
    {"left", T_LONGLONG, offsetof(cb_counter, left), 0, "Ticks until the trigger runs (none once it is 0 or less)."},
    {"waits", T_BOOL, offsetof(cb_counter, waits), 0, "Whether a tick waits for a compile's claim of priority (see above)."},
    {"enter", T_BOOL, offsetof(cb_counter, enter), 0, "Whether a tick answers False: a loop's counter then sends the frame to its on-stack replacement stub."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot counter_slots[] = {
    {Py_tp_new, counter_new},
    {Py_tp_dealloc, counter_dealloc},
    {Py_tp_traverse, counter_traverse},
    {Py_tp_clear, counter_clear},
    {Py_nb_bool, counter_bool},
    {Py_tp_methods, counter_methods},
    {Py_tp_members, counter_members},
    {Py_tp_doc, "Counter(left, trigger): the import hook's tick counter (csrc/counter.c)."},
    {0, NULL},
};

static PyType_Spec counter_spec = {
    .name = "cuvil_bc._runtime.Counter",
    .basicsize = sizeof(cb_counter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = counter_slots,
};

PyObject *cb_make_counter_type(void) { return PyType_FromSpec(&counter_spec); }

/* The decorator's test for calls known to fall back (cuvil_bc/fastpath.py).
 *
 * Known(nargs, keys): `args in known` is True when the types of the arguments (the
 * argument itself when nargs is 1, else a tuple of them) are exactly one of `keys`
 * (tuples of types), and then adds one to `ticks`. A compiled function's prefix asks
 * it with one CONTAINS_OP, which calls the sq_contains slot directly (no call
 * protocol, no operator dispatch), and runs its own body when it answers True: that
 * costs a fraction of testing `type(x) is K` in bytecode. Nothing of the argument is
 * called, so no Python code runs.
 */
typedef struct {
    PyObject_HEAD
    long long ticks;
    Py_ssize_t nargs;
    PyObject *keys; /* tuple of tuples of nargs types */
} cb_known;

/* The keys, checked: a tuple of tuples of `nargs` types. */
static int known_check(PyObject *keys, Py_ssize_t nargs) {
    if (!PyTuple_Check(keys)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple");
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(keys); k++) {
        PyObject *key = PyTuple_GET_ITEM(keys, k);
        int ok = PyTuple_Check(key) && PyTuple_GET_SIZE(key) == nargs;
        for (Py_ssize_t i = 0; ok && i < nargs; i++)
            ok = PyType_Check(PyTuple_GET_ITEM(key, i));
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "each key must be a tuple of nargs types");
            return -1;
        }
    }
    return 0;
}

static PyObject *known_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    Py_ssize_t nargs;
    PyObject *keys;
    if (cb_no_keywords(kwargs, "Known") < 0)
        return NULL;
    if (!PyArg_ParseTuple(args, "nO:Known", &nargs, &keys) || known_check(keys, nargs) < 0)
        return NULL;
    cb_known *self = (cb_known *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->ticks = 0;
    self->nargs = nargs;
    self->keys = Py_NewRef(keys);
    return (PyObject *)self;
}

/* known.set(keys): replace the keys (the prefix keeps the same object). */
static PyObject *known_set(PyObject *op, PyObject *keys) {
    cb_known *self = (cb_known *)op;
    if (known_check(keys, self->nargs) < 0)
        return NULL;
    Py_INCREF(keys);
    Py_SETREF(self->keys, keys);
    Py_RETURN_NONE;
}

static PyMethodDef known_methods[] = {
    {"set", known_set, METH_O, "Replace the keys."},
    {NULL, NULL, 0, NULL},
};

static int known_contains(PyObject *op, PyObject *other) {
    cb_known *self = (cb_known *)op;
    PyObject *const *args = &other;
    if (self->nargs != 1) {
        if (!PyTuple_CheckExact(other) || PyTuple_GET_SIZE(other) != self->nargs)
            return 0;
        args = &PyTuple_GET_ITEM(other, 0);
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(self->keys); k++) {
        PyObject *key = PyTuple_GET_ITEM(self->keys, k);
        Py_ssize_t i = 0;
        while (i < self->nargs && (PyObject *)Py_TYPE(args[i]) == PyTuple_GET_ITEM(key, i))
            i++;
        if (i == self->nargs) {
            self->ticks++;
            return 1;
        }
    }
    return 0;
}

static int known_traverse(PyObject *op, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(((cb_known *)op)->keys);
    return 0;
}

static int known_clear(PyObject *op) {
    Py_CLEAR(((cb_known *)op)->keys);
    return 0;
}

static void known_dealloc(PyObject *op) { cb_gc_dealloc(op, known_clear); }

static PyMemberDef known_members[] = {
    {"ticks", T_LONGLONG, offsetof(cb_known, ticks), READONLY, "Calls recognised so far."},
    {"keys", T_OBJECT, offsetof(cb_known, keys), READONLY, "The keys (tuples of types)."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot known_slots[] = {
    {Py_tp_new, known_new},
    {Py_tp_dealloc, known_dealloc},
    {Py_tp_traverse, known_traverse},
    {Py_tp_clear, known_clear},
    {Py_sq_contains, known_contains},
    {Py_tp_members, known_members},
    {Py_tp_methods, known_methods},
    {Py_tp_doc, "Known(nargs, keys): calls known to fall back, by their types (csrc/counter.c)."},
    {0, NULL},
};

static PyType_Spec known_spec = {
    .name = "cuvil_bc._runtime.Known",
    .basicsize = sizeof(cb_known),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = known_slots,
};

static PyObject *cb_make_known_type(void) { return PyType_FromSpec(&known_spec); }

/* The decorator's sampling of calls while nothing of a function is native
 * (cuvil_bc/fastpath.py).
 *
 * Sampler(cap): its truth is False on the calls it samples and True on the others, so
 * a prefix of `if not sampler and args not in known:` runs the body untested on most
 * calls, at the cost of one constant load and a C slot. The first call after a
 * reset() is sampled; then the mean gap between samples doubles up to `cap` calls.
 * Each gap is drawn at random (uniform in 1 .. 2 * mean - 1): with gaps of fixed
 * lengths every sample fell on the same phase of a caller's pattern (calls two by two
 * were sampled only at even positions), and a signature that comes only at the other
 * phase was never seen. So every call is sampled with a chance of about 1 / mean, a
 * new signature is seen after ~`cap` of its calls at most, on average, and the test
 * that the samples make costs its calls 1 / cap of itself. `skipped` counts the calls
 * let through untested.
 */
typedef struct {
    PyObject_HEAD
    long long skipped;
    long long left;
    long long gap; /* the mean gap */
    long long cap;
    uint32_t random; /* xorshift32 state, never 0 */
} cb_sampler;

static uint32_t sampler_seed = 0x9E3779B9u;

static PyObject *sampler_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    long long cap;
    if (cb_no_keywords(kwargs, "Sampler") < 0)
        return NULL;
    if (!PyArg_ParseTuple(args, "L:Sampler", &cap))
        return NULL;
    if (cap < 1 || cap > (1LL << 30)) {
        PyErr_SetString(PyExc_ValueError, "cap must be from 1 to 2**30");
        return NULL;
    }
    cb_sampler *self = (cb_sampler *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->skipped = 0;
    self->left = 1;
    self->gap = 1;
    self->cap = cap;
    sampler_seed = sampler_seed * 1664525u + 1013904223u; /* each sampler its own sequence */
    self->random = sampler_seed | 1u;
    return (PyObject *)self;
}

static int sampler_bool(PyObject *op) {
    cb_sampler *self = (cb_sampler *)op;
    if (--self->left > 0) {
        self->skipped++;
        return 1;
    }
    if (self->gap < self->cap)
        self->gap = self->gap * 2 < self->cap ? self->gap * 2 : self->cap;
    uint32_t x = self->random;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    self->random = x;
    self->left = 1 + (long long)(x % (uint32_t)(2 * self->gap - 1));
    return 0;
}

/* sampler.reset(): sample the next call, and double the mean gap from 1 again. */
static PyObject *sampler_reset(PyObject *op, PyObject *unused) {
    cb_sampler *self = (cb_sampler *)op;
    self->left = 1;
    self->gap = 1;
    Py_RETURN_NONE;
}

static PyMethodDef sampler_methods[] = {
    {"reset", sampler_reset, METH_NOARGS, "Sample the next call; the mean gap doubles from 1 again."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef sampler_members[] = {
    {"skipped", T_LONGLONG, offsetof(cb_sampler, skipped), READONLY, "Calls let through untested."},
    {"gap", T_LONGLONG, offsetof(cb_sampler, gap), READONLY, "The mean number of calls from one sample to the next."},
    {"cap", T_LONGLONG, offsetof(cb_sampler, cap), READONLY, "The largest gap."},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot sampler_slots[] = {
    {Py_tp_new, sampler_new},
    {Py_nb_bool, sampler_bool},
    {Py_tp_members, sampler_members},
    {Py_tp_methods, sampler_methods},
    {Py_tp_doc, "Sampler(cap): False on sampled calls, random gaps whose mean doubles up to cap (csrc/counter.c)."},
    {0, NULL},
};

static PyType_Spec sampler_spec = {
    .name = "cuvil_bc._runtime.Sampler",
    .basicsize = sizeof(cb_sampler),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = sampler_slots,
};

static PyObject *cb_make_sampler_type(void) { return PyType_FromSpec(&sampler_spec); }

/* function_changed(func): after the hook or a dispatcher gave `func` other code or
 * defaults. CPython 3.13 then sets the function's version to 0, for good: no call of
 * it is specialised again, and each takes the generic path (raytracer.py's methods:
 * 5% more instructions). 3.11 and 3.12 hand out a new version lazily. Here a function
 * gets the version a new function of its code gets (the code object's own, which
 * names that code alone; defaults are read at each call), unless another tool gave it
 * a vectorcall of its own. */
#if PY_VERSION_HEX >= 0x030D0000
PyAPI_FUNC(void) _PyFunction_SetVersion(PyFunctionObject *func, uint32_t version);
static vectorcallfunc plain_vectorcall = NULL;
#endif

static PyObject *function_changed(PyObject *module, PyObject *func) {
    (void)module;
    if (!PyFunction_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "function_changed() takes a function");
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030D0000
    if (plain_vectorcall == NULL) { /* what CPython gives every new function */
        PyObject *globals = PyFunction_GetGlobals(func);
        PyCodeObject *empty = PyCode_NewEmpty("<cuvil_bc>", "<cuvil_bc>", 0);
        PyObject *fresh = empty != NULL ? PyFunction_New((PyObject *)empty, globals) : NULL;
        Py_XDECREF(empty);
        if (fresh == NULL)
            return NULL;
        plain_vectorcall = ((PyFunctionObject *)fresh)->vectorcall;
        Py_DECREF(fresh);
    }
    PyFunctionObject *f = (PyFunctionObject *)func;
    if (f->func_version == 0 && f->vectorcall == plain_vectorcall)
        _PyFunction_SetVersion(f, ((PyCodeObject *)f->func_code)->co_version);
#endif
    Py_RETURN_NONE;
}

static PyMethodDef function_changed_def = {"function_changed", function_changed, METH_O, NULL};

/* Put the runtime's Python types (Entry, entry.c; Counter, Known, Sampler) and function_changed
 * into the module `cuvil_bc._runtime`, once. Returns 0, or -1 when that failed. cffi functions run
 * without the GIL: it is taken here. */
int cb_publish_types(void) {
    static int done = 0;
    static const struct {
        const char *name;
        PyObject *(*make)(void);
    } types[] = {{"Entry", cb_make_entry_type}, {"Counter", cb_make_counter_type}, {"Known", cb_make_known_type}, {"Sampler", cb_make_sampler_type}};
    int status = 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (!done && priority_lock == NULL && (priority_lock = PyThread_allocate_lock()) == NULL)
        status = -1;
    if (!done && status == 0) {
        PyObject *module = PyImport_ImportModule("cuvil_bc._runtime");
        for (size_t k = 0; module != NULL && status == 0 && k < sizeof types / sizeof types[0]; k++) {
            PyObject *type = types[k].make();
            if (type == NULL || PyObject_SetAttrString(module, types[k].name, type) < 0)
                status = -1;
            Py_XDECREF(type);
        }
        PyMethodDef *functions[] = {&function_changed_def, &cb_set_math_functions_def, &cb_set_numpy_errstate_def, &cb_numpy_underflow_ignored_def};
        for (size_t k = 0; module != NULL && status == 0 && k < sizeof functions / sizeof functions[0]; k++) {
            PyObject *function = PyCFunction_New(functions[k], NULL);
            if (function == NULL || PyObject_SetAttrString(module, functions[k]->ml_name, function) < 0)
                status = -1;
            Py_XDECREF(function);
        }
        if (module == NULL)
            status = -1;
        Py_XDECREF(module);
        if (status < 0)
            PyErr_Clear();
        else
            done = 1;
    }
    PyGILState_Release(gil);
    return status;
}
